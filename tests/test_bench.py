"""``workshop bench``: the shape of what ``--quick`` reports (never its timings), and the inputs it builds.

The benchmark's figures are measured, not asserted: these tests run ``--quick`` once and check that
every figure is present and a positive finite number (or says why it could not be measured), and
that the inputs it times are what it claims they are (stream-json lines that the Claude SDK parses
back into exactly the recorded messages, a transcript with the usage limits it says it holds), and
that the inputs shipped with the package are exactly what the recordings in ``tests/fixtures`` derive.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import io
import json
import math
import tomllib
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, ROOT

from lifecycle.claude import from_sdk_message, from_stream_json
from lifecycle.events import PromptStarted
from lifecycle.ledger import SessionLedger
from workshop import bench

#: Figures that may be missing only while the module they measure does not exist yet.
OPTIONAL_MODULES = {
    "replay.": "lifecycle.cli.replay",
    "explorer.": "workshop.explorer",
    "imports.agent_sdks": "acp",  # the agent's extras
}
#: The full ``workshop check`` takes minutes: ``--quick`` measures only its rate.
NOT_RUN_WITH_QUICK = {"explorer.total_s"}


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    """One ``workshop bench --quick --json --check`` run, in process."""
    tmp = tmp_path_factory.mktemp("bench")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = bench.cli_main(["--quick", "--json", "--check", "--quiet", "--tmpdir", str(tmp)])
    return code, json.loads(out.getvalue())


def _positive(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def _finite(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


#: Figures that are a difference of two timings of the same round (proxied minus direct): any
#: finite number, negative when the noise of a run is larger than what the relay adds.
DIFFERENCES = ("proxy.latency_added", "proxy.burst_added")


@pytest.mark.timeout(300)
def test_quick_run_reports_every_figure_as_a_positive_number(quick: tuple[int, dict[str, Any]]) -> None:
    code, result = quick
    # --quick enforces no targets: it exits 0 even when one is missed.
    assert code == 0
    assert result["mode"] == "quick"
    assert result["targets"]["enforced"] is False
    ids = [f["id"] for f in result["figures"]]
    assert len(ids) == len(set(ids)), "figure ids are unique"
    for section in ("hot_path.", "incident.", "replay.", "memory.", "explorer.", "imports.", "proxy."):
        assert any(i.startswith(section) for i in ids), f"no {section} figure"
    for f in result["figures"]:
        assert isinstance(f["label"], str) and f["label"] and isinstance(f["unit"], str) and f["unit"]
        if f["available"]:
            number = _finite if f["id"].startswith(DIFFERENCES) else _positive
            assert number(f["value"]), f
            assert f["repetitions"] >= 1
            if "spread" in f:
                s = f["spread"]
                assert all(number(s[k]) for k in ("min", "q1", "q3", "max")), f
                assert s["min"] <= s["q1"] <= f["value"] <= s["q3"] <= s["max"], f
        else:
            assert isinstance(f["reason"], str) and f["reason"]
            if f["id"] in NOT_RUN_WITH_QUICK:
                continue
            if f["id"].startswith("peer."):
                _assert_peer_really_unavailable(f["reason"])
                continue
            prefix = next((p for p in OPTIONAL_MODULES if f["id"].startswith(p)), None)
            assert prefix is not None, f"{f['id']} must always be measured"
            # Honest "not available": only while the module really does not exist.
            assert importlib.util.find_spec(OPTIONAL_MODULES[prefix]) is None, f


def _assert_peer_really_unavailable(reason: str) -> None:
    """A peer figure may be missing only for a reason that holds on this machine: no node, no npm,
    no bundled CLI, no /proc, or an install from npm that failed while the reference is not in the
    cache (then the registry was unreachable). Anything else is a bug hiding as "not available"."""
    import shutil

    from workshop.bench import peer

    if "node is not installed" in reason:
        assert shutil.which("node") is None, reason
    elif "npm is not installed" in reason:
        assert shutil.which("npm") is None, reason
    elif "claude-agent-sdk (bundled CLI) is not installed" in reason:
        assert importlib.util.find_spec("claude_agent_sdk") is None, reason
    elif "needs Linux /proc" in reason:
        assert not Path("/proc/self/status").exists(), reason
    elif reason.startswith("reference unavailable: "):
        assert peer.reference_entry(install=False)[0] is None, reason  # not installed, and it could not be
    else:
        raise AssertionError(f"a peer figure is missing for an unexpected reason: {reason}")


def test_quick_run_targets_are_consistent(quick: tuple[int, dict[str, Any]]) -> None:
    _, result = quick
    with_target = [f for f in result["figures"] if "target" in f]
    expected = {
        "hot_path.ratio",
        "replay.ratio",
        "memory.ledger_ratio",
        "memory.idle_session_bytes",
        "imports.core_s",
    }
    assert expected <= {f["id"] for f in with_target}
    for f in with_target:
        t = f["target"]
        assert t["op"] == "<=" and _positive(t["limit"])
        assert t["met"] is (f["available"] and f["value"] <= t["limit"])
    assert result["targets"]["missed"] == [f["id"] for f in with_target if not f["target"]["met"]]
    assert result["targets"]["all_met"] is (not result["targets"]["missed"])


def test_quick_run_details_describe_the_measured_inputs(quick: tuple[int, dict[str, Any]]) -> None:
    _, result = quick
    hot = result["details"]["hot_path"]
    assert hot["lines"] >= 5_000 and sum(hot["lines_by_type"].values()) == hot["lines"]
    # Mostly stream traffic, a few failures: as the realistic mix claims.
    assert hot["lines_by_type"]["stream_event"] > hot["lines"] * 0.8
    assert hot["failing_turns"] >= 1 and hot["retry_turns"] >= 1
    assert hot["failing_turns"] + hot["retry_turns"] < hot["turns"] / 5
    # Every failing and every retrying turn is exactly one incident, and the report counts them.
    assert hot["incidents"] == hot["failing_turns"] + hot["retry_turns"]
    assert hot["records"] >= hot["incidents"] and hot["sends"] > hot["records"]
    # The failure-dense mix is what its label says: one failing turn in ~20.
    dense = result["details"]["hot_path"]["failure_dense"]
    assert dense["failing_turns"] == dense["retry_turns"] and 18 <= dense["turns"] / dense["failing_turns"] <= 22
    labels = {f["id"]: f["label"] for f in result["figures"]}
    assert f"{hot['incidents']} incidents" in labels["hot_path.ratio"]
    assert f"{dense['incidents']} incidents" in labels["hot_path.ratio_failure_dense"]
    replay = result["details"]["replay"]
    assert replay["large"]["lines"] >= 10 * replay["small"]["lines"] * 0.9
    assert replay["large"]["usage_limits"] >= 1
    # Built from the inputs shipped with the package (no --fixtures).
    assert "package data" in result["inputs"]
    # The import breakdown is read back from -X importtime: its parts add up to the total, and the
    # errors are in it (the record with pydantic, the ledger and python-statemachine are not: since
    # issue 49.3, import lifecycle loads the errors, the rest at first use).
    parts = result["details"]["imports"]["breakdown_ms"]
    total = parts.pop("total")
    assert abs(sum(parts.values()) - total) < 1.0 and "lifecycle.errors" in parts
    assert "lifecycle.wire" not in parts and "pydantic" not in parts
    assert "lifecycle.ledger" not in parts
    assert "statemachine" not in parts
    # The agent's SDK import, both ways, in as many fresh interpreters each (--quick: 3).
    figures = {f["id"]: f for f in result["figures"]}
    assert figures["imports.agent_sdks_s"]["repetitions"] == figures["imports.agent_sdks_fast_s"]["repetitions"] == 3
    prof = result["details"]["incident"]["profile"]
    assert set(prof["seconds"]) >= {"machine_creation", "transitions_send", "machine_answers_fire"}
    # The profile starts cold: the questions its lives need were asked of real machines, and only once.
    assert 3 <= prof["questions_asked_of_real_machines"] <= 6


def test_peer_fake_api_answers_messages_and_404s_the_rest() -> None:
    import urllib.error
    import urllib.request

    from workshop.bench.fakeapi import FakeMessagesAPI

    with FakeMessagesAPI() as api:
        assert api.base_url.startswith("http://127.0.0.1:")
        body = json.dumps({"model": "m", "stream": True}).encode()
        with urllib.request.urlopen(urllib.request.Request(api.base_url + "/v1/messages", body), timeout=10) as r:
            text = r.read().decode()
        assert r.headers["content-type"] == "text/event-stream"
        assert text.startswith("event: message_start") and "event: message_stop" in text
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(urllib.request.Request(api.base_url + "/v1/messages/count_tokens", body), timeout=10)
        assert err.value.code == 404
        assert api.messages == 1


def _sse(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: ")]


def test_peer_fake_api_answers_a_write_prompt_with_one_write_then_text() -> None:
    """The tool turn: the prompt made by tool_turn_prompt, in a streamed request that offers Write,
    gets one tool_use of Write with that input; the request carrying its tool result gets text."""
    import urllib.request

    from workshop.bench.fakeapi import ANSWER, FakeMessagesAPI, tool_turn_prompt

    prompt = tool_turn_prompt("/p/bench-1.txt", "hello\n")
    tools = [{"name": "Read"}, {"name": "Write"}]
    user = {"role": "user", "content": [{"type": "text", "text": "<system-reminder>x</system-reminder>"}]}
    user["content"].append({"type": "text", "text": prompt})
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}
    bodies = {
        "write": {"model": "m", "stream": True, "tools": tools, "messages": [user]},
        "after": {"model": "m", "stream": True, "tools": tools, "messages": [user, {"role": "assistant"}, result]},
        "no_tools": {"model": "m", "stream": True, "messages": [{"role": "user", "content": prompt}]},
    }
    with FakeMessagesAPI() as api:
        got = {}
        for name, body in bodies.items():
            req = urllib.request.Request(api.base_url + "/v1/messages?beta=true", json.dumps(body).encode())
            with urllib.request.urlopen(req, timeout=10) as r:
                got[name] = _sse(r.read().decode())
        assert api.messages == 3 and api.writes == 1
    events = got["write"]
    (start,) = [e for e in events if e["type"] == "content_block_start"]
    assert start["content_block"]["type"] == "tool_use" and start["content_block"]["name"] == "Write"
    (delta,) = [e["delta"] for e in events if e["type"] == "content_block_delta"]
    assert delta["type"] == "input_json_delta"
    assert json.loads(delta["partial_json"]) == {"file_path": "/p/bench-1.txt", "content": "hello\n"}
    assert next(e for e in events if e["type"] == "message_delta")["delta"]["stop_reason"] == "tool_use"
    for name in ("after", "no_tools"):
        texts = [e["delta"].get("text") for e in got[name] if e["type"] == "content_block_delta"]
        assert texts == [ANSWER], name


#: A scripted ACP agent for the bench's client: it answers ``initialize``; at ``session/prompt`` it
#: asks ``fs/read_text_file`` (which the client does not serve) and ``session/request_permission``
#: (allow_once last among the options), writes what the prompt asks once allowed (argv[1] "write"),
#: or not ("skip"), or asks nothing ("no-ask"), and notes every answer it got in answers.json.
FAKE_AGENT = r"""
import json, sys
mode = sys.argv[1]
answers = {}
def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()
while True:
    line = sys.stdin.readline()
    if not line:
        break
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": 1}})
    elif msg.get("method") == "session/prompt":
        text = msg["params"]["prompt"][0]["text"]
        ask = json.loads(text.split("BENCH_WRITE ", 1)[1])
        if mode != "no-ask":
            send({"jsonrpc": "2.0", "id": 100, "method": "fs/read_text_file", "params": {"path": "x"}})
            options = [
                {"optionId": "reject", "name": "No", "kind": "reject_once"},
                {"optionId": "allow-with-updates", "name": "Always", "kind": "allow_always"},
                {"optionId": "allow-once", "name": "Yes", "kind": "allow_once"},
            ]
            tool_call = {"toolCallId": "t1", "title": "Write bench-1.txt"}
            params = {"sessionId": "s1", "toolCall": tool_call, "options": options}
            send({"jsonrpc": "2.0", "id": 101, "method": "session/request_permission", "params": params})
            while len(answers) < 2:
                reply = json.loads(sys.stdin.readline())
                answers[str(reply["id"])] = reply
            allowed = answers["101"].get("result", {}).get("outcome", {}).get("optionId") == "allow-once"
            if allowed and mode == "write":
                with open(ask["file_path"], "w") as fh:
                    fh.write(ask["content"])
        with open("answers.json", "w") as fh:
            json.dump(answers, fh)
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"stopReason": "end_turn"}})
"""


@pytest.mark.parametrize("mode", ["write", "skip", "no-ask"])
def test_peer_client_allows_once_refuses_other_requests_and_checks_the_write(tmp_path: Path, mode: str) -> None:
    import os
    import sys

    from workshop.bench import peer

    script = tmp_path / "agent.py"
    script.write_text(FAKE_AGENT)
    target = tmp_path / "bench-1.txt"
    with (tmp_path / "agent.stderr").open("wb") as err:
        agent = peer._Agent([sys.executable, str(script), mode], dict(os.environ), tmp_path, err)
        try:
            agent.call(0, "initialize", {}, 10)
            if mode == "write":
                assert peer._tool_turn(agent, "s1", target) > 0
            else:
                with pytest.raises(peer.ToolTurnFailed) as failed:
                    peer._tool_turn(agent, "s1", target)
                why = "no session/request_permission" if mode == "no-ask" else "bench-1.txt was not written"
                assert why in str(failed.value)
        finally:
            agent.close()
    answers = json.loads((tmp_path / "answers.json").read_text())
    if mode == "no-ask":
        assert answers == {} and agent.permission_requests == []
        return
    assert answers["100"]["error"]["code"] == -32601
    assert answers["101"]["result"] == {"outcome": {"outcome": "selected", "optionId": "allow-once"}}
    assert agent.permission_requests == [
        ("Write bench-1.txt", ["reject (reject_once)", "allow-with-updates (allow_always)", "allow-once (allow_once)"])
    ]


def test_peer_ratios_pair_the_spawns_of_one_round_and_gate_the_tool_turn() -> None:
    from workshop.bench import peer

    ours = [{"init_s": 1.0, "tool_turn_s": 1.0}, {"init_s": 2.0}, {"init_s": 1.0, "tool_turn_s": 3.0}]
    ref = [
        {"init_s": 2.0, "tool_turn_s": 2.0},
        {"init_s": 2.0, "tool_turn_s": 9.0},
        {"init_s": 4.0, "tool_turn_s": 3.0},
    ]
    figs = {f.id: f for f in peer._figures(ours, ref, quick=False, why_missing="ours (spawn 2): failed")}
    # Round 2's reference tool turn has no partner: it is a reference sample, not a ratio.
    assert figs["peer.tool_turn_s_ratio"].samples == [0.5, 1.0]
    assert figs["peer.reference_tool_turn_s"].samples == [2.0, 9.0, 3.0]
    assert figs["peer.init_s_ratio"].samples == [0.5, 1.0, 0.25]
    for gated in ("init_s", "first_prompt_s", "tool_turn_s", "rss_mb"):
        assert figs[f"peer.{gated}_ratio"].target == ("<=", 1.0)
    # A gated figure no pair measured misses its target, and says why.
    missing = figs["peer.rss_mb_ratio"]
    assert not missing.available and missing.met is False and missing.reason == "ours (spawn 2): failed"
    assert "peer.prompt_s_ratio" not in figs  # not gated, not measured: not reported
    quick = {f.id: f for f in peer._figures(ours, ref, quick=True)}
    assert all(f.target is None for f in quick.values()) and "peer.rss_mb_ratio" not in quick


def test_exit_code_with_check_follows_the_targets() -> None:
    missed = {"targets": {"missed": ["hot_path.ratio"]}}
    met: dict[str, Any] = {"targets": {"missed": []}}
    assert bench.exit_code(missed, check=True, quick=False) == 1
    assert bench.exit_code(missed, check=True, quick=True) == 0
    assert bench.exit_code(missed, check=False, quick=False) == 0
    assert bench.exit_code(met, check=True, quick=False) == 0


def test_figure_without_a_measurement_misses_its_target() -> None:
    missing = bench.Figure("x", "x", "ratio", None, target=("<=", 1.0), reason="not there")
    assert missing.met is False and not missing.available
    f = bench.Figure("y", "y", "ratio", 0.5, [0.4, 0.5, 0.9], target=("<=", 0.5))
    assert f.met is True
    assert f.spread() == {"min": 0.4, "q1": 0.45, "q3": 0.7, "max": 0.9}


def test_missing_fixtures_folder_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.cli_main(["--quick", "--fixtures", str(tmp_path / "nowhere")]) == 2
    assert "not found" in capsys.readouterr().err


# ------------------------------------------------------------------ the shipped inputs

REDERIVE = f"python -m workshop bench --derive-inputs tests/fixtures/{bench.FIXTURE_SET}"


def test_shipped_inputs_are_derived_from_the_recordings() -> None:
    """One source of truth: the copy shipped in workshop/bench/data/ is what the derivation makes
    of the recordings today, byte for byte, and nothing else (so it cannot go stale)."""
    derived = bench.derive_data(FIXTURES)
    shipped = bench.shipped_data()
    assert sorted(shipped) == sorted(derived), f"the shipped inputs are stale: run {REDERIVE}"
    for name, data in derived.items():
        assert shipped[name] == data, f"the shipped {name} is stale: run {REDERIVE}"
    # What the benchmark builds by default is then what the recordings build.
    assert bench.shipped_recordings().scenarios == bench.Recordings.from_folder(FIXTURES).scenarios


def test_shipped_inputs_stay_in_the_source_tree() -> None:
    """The benchmark is a developer tool (issue 33): its inputs are in the workshop (``workshop/``,
    beside ``lifecycle/``), which no package of the build includes, and no
    [tool.setuptools.package-data] pattern matches them, so no wheel carries them
    (tests/test_packaging.py checks the built wheel)."""
    with (ROOT / "pyproject.toml").open("rb") as fh:
        setuptools = tomllib.load(fh)["tool"]["setuptools"]
    patterns = [pattern for found in setuptools["package-data"].values() for pattern in found]
    assert not any(fnmatch("workshop", pattern) for pattern in setuptools["packages"]["find"]["include"])
    data = ROOT / "workshop" / "bench" / "data"
    files = [p.relative_to(ROOT / "workshop").as_posix() for p in data.rglob("*") if p.is_file()]
    assert files
    for name in files:
        assert not any(fnmatch(name, pattern) for pattern in patterns), f"{name} is declared as package data"


def test_shipped_inputs_hold_what_the_benchmark_reads() -> None:
    recordings = bench.shipped_recordings()
    assert {"success", "max_turns", "retry_then_success", "max_tokens_once"} <= set(recordings.scenarios)
    assert len(recordings.failing) >= 10
    pools = recordings.pools
    assert pools.header and pools.turns and pools.limit_turns
    # Only the per-process header lines are in the header; the turns hold none of them.
    header_kinds = {d["type"] for d in pools.header}
    assert "api-request-shape" in header_kinds
    assert not any(d.get("type") == "api-request-shape" for turn in pools.turns for d in turn)


# ------------------------------------------------------------------ the inputs


def _records() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted(FIXTURES.glob("*.sdk.jsonl")):
        out.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return [r for r in out if "class" in r]


def test_rebuilt_stream_json_parses_back_to_the_recorded_sdk_messages() -> None:
    parser = importlib.import_module("claude_agent_sdk._internal.message_parser")
    records = _records()
    assert len(records) > 50
    for rec in records:
        line = bench.sdk_record_to_stream_json(rec, "sid")
        assert line is not None, rec["class"]
        obj = parser.parse_message(line)
        assert type(obj).__name__ == rec["class"]
        assert dataclasses.asdict(obj) == rec["fields"]
        assert from_stream_json(line) == from_sdk_message(obj)


@pytest.mark.parametrize("build", [bench.build_realistic_session, bench.build_failure_dense_session])
def test_hot_path_sessions_are_valid_stream_json_in_turns(build: Any) -> None:
    parser = importlib.import_module("claude_agent_sdk._internal.message_parser")
    session = build(FIXTURES, 3_000)
    assert len(session.lines) >= 3_000
    assert [json.loads(s) for s in session.lines] == session.dicts
    kinds = {type(parser.parse_message(d)).__name__ for d in session.dicts}
    assert {"StreamEvent", "AssistantMessage", "ResultMessage", "SystemMessage", "UserMessage"} <= kinds
    assert session.failing_turns > 0 and session.retry_turns > 0
    prompts = [i for i in session.items if isinstance(i, PromptStarted)]
    assert len(prompts) == session.turns == sum(1 for d in session.dicts if d["type"] == "result")


def _messages(session: bench.HotPathSession) -> dict[str, list[dict[str, Any]]]:
    """The lines of each streamed API response (stream events and assistant lines), by message id."""
    out: dict[str, list[dict[str, Any]]] = {}
    for d in session.dicts:
        if d["type"] == "stream_event":
            out.setdefault(d["api_message_id"], []).append(d)
        elif d["type"] == "assistant" and d["message"]["model"] != "<synthetic>" and d["message"]["id"] in out:
            out[d["message"]["id"]].append(d)
    return out


def test_realistic_session_streams_exactly_what_its_assistant_lines_hold() -> None:
    mix = bench.REALISTIC_MIX
    session = bench.build_realistic_session(FIXTURES, 8_000)
    messages = _messages(session)
    answer_deltas: list[int] = []
    tool_ids: list[str] = []
    for lines in messages.values():
        events = [d["event"] for d in lines if d["type"] == "stream_event"]
        assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
        assert events[-2]["type"] == "message_delta"
        deltas: dict[int, list[dict[str, Any]]] = {}
        for e in events:
            if e["type"] == "content_block_delta":
                deltas.setdefault(e["index"], []).append(e["delta"])
        # One assistant line per completed block, printed just before that block's stop event.
        for i, d in enumerate(lines):
            if d["type"] != "assistant":
                continue
            (block,) = d["message"]["content"]
            stop = lines[i + 1]["event"]
            assert stop["type"] == "content_block_stop"
            parts = deltas[stop["index"]]
            if block["type"] == "text":
                assert "".join(p["text"] for p in parts) == block["text"]
                assert all(p["type"] == "text_delta" and p["text"] for p in parts)
                if events[-2]["delta"]["stop_reason"] == "end_turn":
                    answer_deltas.append(len(parts))
                else:
                    assert mix.preamble_deltas[0] <= len(parts) <= mix.preamble_deltas[1]
            else:
                assert block["type"] == "tool_use" and events[-2]["delta"]["stop_reason"] == "tool_use"
                assert json.loads("".join(p["partial_json"] for p in parts)) == block["input"]
                assert all(p["type"] == "input_json_delta" for p in parts)
                tool_ids.append(block["id"])
    assert answer_deltas and all(mix.answer_deltas[0] <= n <= mix.answer_deltas[1] for n in answer_deltas)
    assert max(answer_deltas) > 3 * min(answer_deltas), "the answer lengths are drawn, not fixed"
    # Every tool call gets exactly one tool-result user line, after its message.
    results = [
        b["tool_use_id"]
        for d in session.dicts
        if d["type"] == "user"
        for b in d["message"]["content"]
        if b["type"] == "tool_result"
    ]
    assert tool_ids and sorted(results) == sorted(tool_ids)
    assert session.stats["tool_calls"] == len(tool_ids)


def _incidents(session: bench.HotPathSession) -> set[str]:
    ledger = SessionLedger("s", negotiated=True, epoch="e")
    ids: set[str] = set()

    def deliver(msg: Any) -> None:
        if msg.record is not None:
            ids.add(msg.record.id)

    for item in session.items:
        ev = from_stream_json(item) if isinstance(item, dict) else item
        if ev is not None:
            ledger.process(ev, deliver)
    return ids


def test_realistic_session_has_the_documented_incident_rate_and_init_lines() -> None:
    mix = bench.REALISTIC_MIX
    session = bench.build_realistic_session(FIXTURES, 20_000)
    assert session.failing_turns == 2 * mix.failures_per_10k
    assert session.retry_turns == 2 * mix.retries_per_10k
    assert len(_incidents(session)) == session.failing_turns + session.retry_turns
    # The CLI prints system/init at every turn, and system/status before every API request.
    assert session.by_type["system/init"] == session.turns
    assert session.by_type["system/status"] == session.stats["api_requests"] > session.turns
    once = bench.build_realistic_session(FIXTURES, 20_000, mix=dataclasses.replace(mix, init_per_turn=False))
    assert once.by_type["system/init"] == 1
    quiet = bench.build_realistic_session(
        FIXTURES, 20_000, mix=dataclasses.replace(mix, failures_per_10k=0, retries_per_10k=0)
    )
    assert quiet.failing_turns == quiet.retry_turns == 0
    assert "system/api_retry" not in quiet.by_type and "assistant/synthetic" not in quiet.by_type
    assert not _incidents(quiet)


def test_transcript_generator_writes_what_it_reports(tmp_path: Path) -> None:
    from lifecycle.conditions import is_usage_limit_text
    from lifecycle.history import history_entry

    info = bench.write_transcript(tmp_path / "t.jsonl", 3_000, FIXTURES)
    rows = [json.loads(line) for line in (tmp_path / "t.jsonl").read_bytes().splitlines()]
    assert len(rows) == info.lines >= 3_000
    assert sum(len(line) + 1 for line in (tmp_path / "t.jsonl").read_bytes().splitlines()) == info.bytes
    entries = [history_entry(row) for row in rows]
    limits = [
        i
        for i, e in enumerate(entries)
        if e is not None and e.role == "assistant" and e.synthetic and is_usage_limit_text(e.text)
    ]
    assert len(limits) == info.usage_limits >= 1
    # The last usage limit ends the transcript: no real answer after it, so a replay keeps it active.
    assert not any(e is not None and e.role == "assistant" and not e.synthetic for e in entries[limits[-1] :])
    assert any(e is not None and e.role == "assistant" and not e.synthetic for e in entries[: limits[-1]])
    uuids = [r["uuid"] for r in rows if "uuid" in r]
    assert len(uuids) == len(set(uuids)), "every line has a fresh uuid"
    assert len({r["sessionId"] for r in rows if "sessionId" in r}) == 1
