"""The conformance kit (lifecycle/tools/conformance): case parsing and planning, the matcher
(its agreement with the vendored check.py on every public case is in
tests/test_conformance_inprocess.py, which traces each case once), id mapping, transcripts, the
fake Claude Code CLI, and the faults of a run (an agent that does not start, crashes or hangs).
The run of every public case through ``lifecycle acp`` is tests/e2e/test_conformance_agent.py."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import CONFORMANCE

from lifecycle.tools.conformance import cli_main, default_cases_dir, summary
from lifecycle.tools.conformance.cases import CLI, CLIENT, CaseError, find_cases, load_case
from lifecycle.tools.conformance.expect import check
from lifecycle.tools.conformance.runner import Outcome, RunOptions, map_ids, run_case, transcript_lines

CASES = sorted(p.name.removesuffix(".input.jsonl") for p in (CONFORMANCE / "cases").glob("*.input.jsonl"))
FAKE_CLI = Path(__file__).resolve().parent.parent / "lifecycle" / "tools" / "conformance" / "fake_cli.py"
INIT = '{"type": "adapter", "event": "initialize", "clientCapabilities": {}}'
SESSION = '{"type": "adapter", "event": "session", "sessionId": "s1"}'


def _case(tmp: Path, lines: list[str], expect: object | None = None, name: str = "c") -> tuple[str, Path, Path]:
    inp, exp = tmp / f"{name}.input.jsonl", tmp / f"{name}.expect.json"
    inp.write_text("\n".join(lines) + "\n")
    exp.write_text(json.dumps({"sequence": []} if expect is None else expect))
    return name, inp, exp


# ------------------------------------------------------------------ cases


def test_the_default_cases_are_the_public_ones() -> None:
    assert default_cases_dir() == (CONFORMANCE / "cases").resolve()
    assert len(find_cases(default_cases_dir())) == len(CASES) >= 8


@pytest.mark.parametrize("case", CASES)
def test_every_public_case_loads(case: str) -> None:
    folder = CONFORMANCE / "cases"
    loaded = load_case(case, folder / f"{case}.input.jsonl", folder / f"{case}.expect.json")
    assert loaded.plan.steps[0].kind == "initialize"


@pytest.mark.parametrize(
    ("lines", "line", "reason"),
    [
        ([INIT, SESSION, "{not json"], 3, "not JSON: Expecting property name enclosed in double quotes (column 2)"),
        ([INIT, SESSION, "[1, 2]"], 3, "a line must be a JSON object"),
        ([INIT, SESSION, '{"type": "adapter", "event": "prompt"}'], 3, "'prompt' needs 'turnId' (str)"),
        ([INIT, SESSION, '{"type": "adapter", "event": "explode"}'], 3, "unknown adapter event 'explode'"),
        ([INIT, '{"type": "result", "subtype": "success"}'], 2, "an SDK line before any session/load"),
        ([SESSION], 1, "'session' before initialize"),
        ([INIT, '{"type": "adapter", "event": "load", "sessionId": "s1", "history": [{"type": "user"}]}'], 2,
         "history[0] needs a string 'uuid'"),
    ],
)
def test_a_malformed_input_names_its_file_and_line(tmp_path: Path, lines: list[str], line: int, reason: str) -> None:
    name, inp, exp = _case(tmp_path, lines)
    with pytest.raises(CaseError) as err:
        load_case(name, inp, exp)
    assert str(err.value) == f"{inp}:{line}: {reason}"


def test_a_malformed_expectation_names_its_file_and_line(tmp_path: Path) -> None:
    name, inp, exp = _case(tmp_path, [INIT, SESSION])
    exp.write_text('{\n "sequence": [],\n "records": {"id": 1}\n}\n')
    with pytest.raises(CaseError) as err:
        load_case(name, inp, exp)
    assert str(err.value) == f"{exp}:3: 'records' must be a list"
    exp.write_text('{\n "sequence": [,]\n}\n')
    with pytest.raises(CaseError) as err:
        load_case(name, inp, exp)
    assert str(err.value).startswith(f"{exp}:2: not JSON")
    exp.unlink()
    with pytest.raises(CaseError, match="missing"):
        load_case(name, inp, exp)


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ('{"type": "adapter", "event": "deliver_fails"}', "deliver_fails: a client cannot make the agent's sends fail"),
        ('{"type": "adapter", "event": "authenticated", "ok": false}', "authenticated ok=false"),
        (INIT, "a second initialize"),
        ('{"type": "adapter", "event": "query_error", "message": "x"}', "'query_error' before any prompt"),
    ],
)
def test_what_the_agent_level_cannot_express_is_said(tmp_path: Path, extra: str, reason: str) -> None:
    plan = load_case(*_case(tmp_path, [INIT, SESSION, extra])).plan
    assert plan.not_expressible is not None and plan.not_expressible.startswith(reason)


def test_the_plan_splits_each_line_between_client_and_claude_code(tmp_path: Path) -> None:
    lines = [
        INIT, SESSION,
        '{"type": "adapter", "event": "prompt", "turnId": "t1"}',
        '{"type": "assistant", "message": {"content": []}}',
        '{"type": "adapter", "event": "cancel"}',
        '{"type": "adapter", "event": "query_error", "message": "gone"}',
        '{"type": "adapter", "event": "permission_answered", "toolUseId": "toolu_1"}',
        '{"type": "adapter", "event": "runtime_replaced"}',
        '{"type": "adapter", "event": "prompt", "turnId": "t2"}',
        '{"type": "adapter", "event": "runtime_replaced"}',
    ]
    plan = load_case(*_case(tmp_path, lines)).plan
    assert plan.not_expressible is None
    sides = [(s.kind, sorted(s.sides)) for s in plan.steps]
    assert sides == [
        ("initialize", [CLIENT]), ("session", [CLIENT]), ("prompt", [CLI, CLIENT]), ("sdk", [CLI]),
        ("cancel", [CLI, CLIENT]), ("query_error", [CLI]),
        ("permission_answered", [CLIENT]),  # Claude Code died: nobody waits for the answer
        ("runtime_replaced", []),  # ... and nobody has to stop: the next prompt starts a new one
        ("prompt", [CLI, CLIENT]), ("runtime_replaced", [CLI]),
    ]
    assert {s.session for s in plan.steps[1:]} == {"s1"}


# ------------------------------------------------------------------ the matcher


def test_the_matcher_semantics() -> None:
    msg = {"jsonrpc": "2.0", "id": "t1", "result": {"stopReason": "end_turn", "_meta": {"jetbrains": {"air": {
        "version": 1, "sessionFailure": {"id": "t1:error", "revision": 1, "title": "Line one\nline two"}}}}}}
    note = {"method": "session/update", "params": {"update": {"sessionUpdate": "agent_message_chunk",
                                                                "content": {"text": "hello"}}}}
    raw = json.dumps(note) + json.dumps(msg)
    assert check([note, msg], raw, {"sequence": [{"method": "session/update"}, {"id": "t1"}]}) == []
    assert check([msg, note], raw, {"sequence": [{"method": "session/update"}, {"id": "t1"}]}) != []
    assert check([note, msg], raw, {"records": [{"title": "re:Line.*two", "carrier": "prompt_response"}]}) == []
    assert check([note, msg], raw, {"records": []}) == [
        'expected 0 records, got 1: [{"id": "t1:error", "revision": 1, "severity": null, "carrier": "prompt_response"}]'
    ]
    assert check([note, msg], raw, {"sequence": [{"result": {"usage": "$absent"}}]}) == []
    assert check([note, msg], raw, {"forbid": ["hello"]}) == ["forbidden text present: 'hello'"]
    assert check([note, msg], raw, {"forbid_messages": [{"params": {"update": {"content": {"text": "hello"}}}}]})
    assert check([note, msg], raw, {"active": {"s1": ["t1:error"]}}) == []  # not observable through ACP


# ------------------------------------------------------------------ id mapping, transcripts


def test_ids_are_mapped_to_the_cases() -> None:
    agent_sid, turn1, turn2 = "0f0e-session", "aaaa-1111", "bbbb-2222"

    def rec(turn: str, rev: int) -> dict[str, Any]:
        return {"method": "session/update", "params": {"sessionId": agent_sid, "update": {
            "sessionUpdate": "session_info_update",
            "_meta": {"jetbrains": {"air": {"version": 1,
                                            "sessionFailure": {"id": f"{turn}:error", "revision": rev}}}}}}}

    frames = [
        ({"jsonrpc": "2.0", "id": 2, "result": {"sessionId": agent_sid}}, 0),  # not checked: session/new's answer
        (rec(turn1, 1), 1),
        ({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}, 1),
        (rec(turn2, 1), 2),  # the fake CLI never saw this turn: bound by first appearance
        ({"jsonrpc": "2.0", "id": 4, "error": {"code": -32603, "message": "x"}}, 2),
    ]
    out = map_ids(frames, {3: "t1", 4: "t2"}, {agent_sid: "s1", turn1: "t1"}, ["t1", "t2"])
    assert [m.get("id") for m in out] == [None, "t1", None, "t2"]
    assert out[0]["params"]["sessionId"] == "s1"
    ids = [m["params"]["update"]["_meta"]["jetbrains"]["air"]["sessionFailure"]["id"] for m in (out[0], out[2])]
    assert ids == ["t1:error", "t2:error"]


def test_a_load_history_is_a_transcript_the_sdk_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from claude_agent_sdk import get_session_messages

    case = json.loads((CONFORMANCE / "cases" / "replay-restores-usage-limit.input.jsonl").read_text().splitlines()[1])
    sid = "8a3b0c52-5f8e-4c11-9d0a-0c9e4a7f2b11"
    cwd = str(tmp_path / "project")
    folder = tmp_path / "config" / "projects" / cwd.replace("/", "-").replace("_", "-").replace(".", "-")
    folder.mkdir(parents=True)
    (folder / f"{sid}.jsonl").write_text("\n".join(transcript_lines(case["history"], sid, cwd)) + "\n")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    got = get_session_messages(sid, directory=cwd)
    assert [(m.type, m.uuid) for m in got] == [("user", "u1"), ("assistant", "m1")]
    assert got[1].message["content"][0]["text"].startswith("You've hit your individual spend limit")


# ------------------------------------------------------------------ the fake CLI


def _script(folder: Path, steps: list[dict[str, Any]]) -> None:
    (folder / "script.json").write_text(json.dumps({"steps": steps}))
    (folder / "client.step").write_text("99")
    (folder / "sessions.json").write_text("{}")


def _step(i: int, kind: str, data: dict[str, Any], sides: list[str]) -> dict[str, Any]:
    return {"index": i, "kind": kind, "data": data, "sides": sides, "session": "s1", "client_before": 0,
            "cli_before": 0}


def test_the_fake_cli_speaks_the_control_protocol_and_plays_its_turn(tmp_path: Path) -> None:
    line = {"type": "result", "subtype": "success", "is_error": False, "session_id": "s1", "result": "hi"}
    _script(tmp_path, [
        _step(0, "prompt", {"turnId": "t1"}, ["cli", "client"]),
        _step(1, "sdk", line, ["cli"]),
        _step(2, "query_error", {"message": "x"}, ["cli"]),
    ])
    stdin = "".join(json.dumps(m) + "\n" for m in [
        {"type": "control_request", "request_id": "r1", "request": {"subtype": "initialize", "hooks": None}},
        {"type": "control_request", "request_id": "r2",
         "request": {"subtype": "set_permission_mode", "mode": "default"}},
        {"type": "control_request", "request_id": "r3", "request": {"subtype": "mcp_status"}},
        {"type": "user", "uuid": "u-42", "message": {"role": "user", "content": "go"}},
    ])
    proc = subprocess.run(
        [sys.executable, str(FAKE_CLI), "--conformance-dir", str(tmp_path), "--session-id", "sess-9",
         "--output-format", "stream-json", "--input-format", "stream-json"],
        input=stdin, capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 1  # query_error: Claude Code died
    out = [json.loads(x) for x in proc.stdout.splitlines()]
    answers = {m["response"]["request_id"]: m["response"] for m in out if m["type"] == "control_response"}
    assert set(answers) == {"r1", "r2", "r3"} and {a["subtype"] for a in answers.values()} == {"success"}
    assert answers["r1"]["response"]["models"][0]["value"] == "default"
    assert answers["r3"]["response"] == {"mcpServers": []}
    (result,) = [m for m in out if m["type"] == "result"]
    assert result["session_id"] == "sess-9" and result["result"] == "hi" and result["usage"]["input_tokens"] == 0
    assert json.loads((tmp_path / "turns.jsonl").read_text()) == {"step": 0, "turnId": "t1", "uuid": "u-42"}
    assert (tmp_path / "cli.step").read_text() == "3"


def test_the_fake_cli_answers_auth_status_and_version(tmp_path: Path) -> None:
    argv = [sys.executable, str(FAKE_CLI), "--conformance-dir", str(tmp_path), "auth", "status", "--json"]
    auth = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(auth.stdout)["apiKeySource"] == "ANTHROPIC_API_KEY"
    version = subprocess.run([sys.executable, "-m", "lifecycle.tools.conformance.fake_cli", "-v"],
                             capture_output=True, text=True, timeout=60, check=True)
    assert version.stdout.startswith("2.1.999")


# ------------------------------------------------------------------ faults of a run


def _one_case(tmp_path: Path) -> Any:
    lines = [
        '{"type": "adapter", "event": "initialize", "clientCapabilities": {}}', SESSION,
        '{"type": "adapter", "event": "prompt", "turnId": "t1"}',
        '{"type": "result", "subtype": "success", "is_error": false, "result": "ok"}',
    ]
    cases = tmp_path / "cases"
    cases.mkdir()
    return load_case(*_case(cases, lines, {"sequence": [{"id": "t1", "result": {"stopReason": "end_turn"}}]}))


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def test_an_agent_that_does_not_start_fails_its_case(tmp_path: Path) -> None:
    opts = RunOptions(agent=[str(tmp_path / "no-such-agent")], step_timeout=2)
    out = asyncio.run(run_case(_one_case(tmp_path), opts, tmp_path / "run"))
    assert out == Outcome("c", "FAIL", "the agent did not start: No such file or directory", out.seconds)


def test_an_agent_that_crashes_fails_its_case_with_the_reason(tmp_path: Path) -> None:
    opts = RunOptions(agent=[sys.executable, "-c", "import sys; sys.exit(3)"], step_timeout=5)
    out = asyncio.run(run_case(_one_case(tmp_path), opts, tmp_path / "run"))
    assert out.status == "FAIL" and out.reason.startswith("the agent exited with status 3 (the agent ")


def test_an_agent_that_hangs_fails_after_the_timeout_and_leaves_no_process(tmp_path: Path) -> None:
    # The agent and a child in its process group both sleep; the child writes its pid first.
    pidfile = tmp_path / "child.pid"
    agent = ["sh", "-c", f"sleep 600 & echo $! > {pidfile}; sleep 600"]
    opts = RunOptions(agent=agent, step_timeout=1.5)
    started = time.monotonic()
    out = asyncio.run(run_case(_one_case(tmp_path), opts, tmp_path / "run"))
    assert (out.status, out.reason) == ("FAIL", "no answer to initialize within 1.5s")
    assert time.monotonic() - started < 15
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_a_case_that_outlives_its_budget_fails(tmp_path: Path) -> None:
    agent = ["sh", "-c", "sleep 600"]
    opts = RunOptions(agent=agent, step_timeout=30, case_timeout=1)
    out = asyncio.run(run_case(_one_case(tmp_path), opts, tmp_path / "run"))
    assert (out.status, out.reason) == ("FAIL", "the case did not finish within 1s")


def test_the_command_prints_a_line_per_case_and_the_totals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    _case(cases, [INIT, SESSION, "{oops"], name="a-malformed")
    _case(cases, [INIT, SESSION, '{"type": "adapter", "event": "deliver_fails"}'], name="b-not-expressible")
    _case(cases, [INIT, SESSION], {"sequence": [{"id": "t1"}]}, name="c-unmet")
    code = cli_main(["--agent", f"{sys.executable} -c 'import sys; sys.stdin.read()'", str(cases),
                     "--step-timeout", "2"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert lines == [
        f"FAIL a-malformed: malformed case: {cases / 'a-malformed.input.jsonl'}:3: not JSON: "
        "Expecting property name enclosed in double quotes (column 2)",
        "N/A b-not-expressible: deliver_fails: a client cannot make the agent's sends fail and stay connected",
        "FAIL c-unmet: no answer to initialize within 2s",
        "conformance: 0 passed, 2 failed, 1 not expressible",
    ]
    assert summary([Outcome("x", "PASS")]) == "conformance: 1 passed, 0 failed, 0 not expressible"


def test_an_unusable_cases_folder_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["--agent", "true", str(tmp_path / "none")]) == 2
    assert "not a folder of conformance cases" in capsys.readouterr().err
    assert os.path.isdir(tmp_path)


_STUB_AGENT = r"""
import json, sys
log = open(sys.argv[1], "a")
for line in sys.stdin:
    msg = json.loads(line)
    log.write(json.dumps(msg) + "\n"); log.flush()
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": 1, "authMethods": [{"id": "stub-login", "name": "Log in"}]}
    elif method == "session/new":
        result = {"sessionId": "stub-session"}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


def test_the_client_sends_what_the_case_says(tmp_path: Path) -> None:
    """initialize with the case's raw capabilities, session/new in the case's folder, and
    authenticate with the agent's first auth method; nothing needs Claude Code, so the case passes."""
    caps = {"_meta": {"jetbrains": {"air": {"version": "1", "capabilities": ["sessionFailure"]}}}}
    lines = [json.dumps({"type": "adapter", "event": "initialize", "clientCapabilities": caps}), SESSION,
             '{"type": "adapter", "event": "authenticated", "ok": true}']
    cases = tmp_path / "cases"
    cases.mkdir()
    case = load_case(*_case(cases, lines))
    agent = tmp_path / "agent.py"
    agent.write_text(_STUB_AGENT)
    log = tmp_path / "received.jsonl"
    opts = RunOptions(agent=[sys.executable, str(agent), str(log)], step_timeout=10)
    out = asyncio.run(run_case(case, opts, tmp_path / "run"))
    assert out.status == "PASS", out.line()
    got = [json.loads(x) for x in log.read_text().splitlines()]
    assert [m["method"] for m in got] == ["initialize", "session/new", "authenticate"]
    assert got[0]["params"]["clientCapabilities"] == caps
    assert got[1]["params"] == {"cwd": str(tmp_path / "run" / "project"), "mcpServers": []}
    assert got[2]["params"] == {"methodId": "stub-login"}
    assert json.loads((tmp_path / "run" / "sessions.json").read_text()) == {"stub-session": "s1"}
