"""The conformance kit (lifecycle/conformance): case parsing and planning, the matcher
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

from lifecycle.conformance import cli_main, default_cases_dir, run_suite, summary
from lifecycle.conformance.cases import CLI, CLIENT, CaseError, find_cases, load_case
from lifecycle.conformance.expect import check
from lifecycle.conformance.fake_cli import dumps_raw
from lifecycle.conformance.runner import Outcome, RunOptions, map_ids, run_case, transcript_files

CASES = sorted(p.name.removesuffix(".input.jsonl") for p in (CONFORMANCE / "cases").glob("*.input.jsonl"))
FAKE_CLI = Path(__file__).resolve().parent.parent / "lifecycle" / "conformance" / "fake_cli.py"
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
        ("prompt", [CLI, CLIENT]), ("runtime_replaced", []),  # a live Claude Code goes on
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
    files = transcript_files(case["history"], sid, cwd)
    assert list(files) == [f"{sid}.jsonl"]
    (folder / f"{sid}.jsonl").write_text(files[f"{sid}.jsonl"])
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    got = get_session_messages(sid, directory=cwd)
    assert [(m.type, m.uuid) for m in got] == [("user", "u1"), ("assistant", "m1")]
    assert got[1].message["content"][0]["text"].startswith("You've hit your individual spend limit")


def test_a_subagents_messages_are_kept_where_claude_code_keeps_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code 2.1.332 keeps a subagent's messages in ``<session>/subagents/agent-<id>.jsonl``
    (tests/e2e/test_subagents.py sees it): the SDK's session reader returns only the top-level
    messages, and its subagent reader the subagent's, naming the Agent call that ran it."""
    from claude_agent_sdk import get_session_messages, get_subagent_messages, list_subagents

    name = "replay-subagent-usage-limit-is-not-the-turns-failure"
    case = json.loads((CONFORMANCE / "cases" / f"{name}.input.jsonl").read_text().splitlines()[1])
    sid = "8a3b0c52-5f8e-4c11-9d0a-0c9e4a7f2b11"
    cwd = str(tmp_path / "project")
    folder = tmp_path / "config" / "projects" / cwd.replace("/", "-").replace("_", "-").replace(".", "-")
    for rel, text in transcript_files(case["history"], sid, cwd).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    top = get_session_messages(sid, directory=cwd)
    assert [m.uuid for m in top] == ["u1", "m1", "u2", "m2"]
    (agent_id,) = list_subagents(sid, directory=cwd)
    sub = get_subagent_messages(sid, agent_id, directory=cwd)
    assert [(m.uuid, m.parent_tool_use_id) for m in sub] == [("s1u", "toolu_sub"), ("s1m", "toolu_sub")]
    assert sub[1].message["content"][0]["text"] == "You've hit your 5-hour limit · resets 12am (UTC)"
    lines = [json.loads(line) for line in (folder / sid / "subagents" / f"agent-{agent_id}.jsonl").open()]
    assert [(r["isSidechain"], r["agentId"], r["parentUuid"]) for r in lines] == [
        (True, agent_id, None),
        (True, agent_id, "s1u"),
    ]


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
    version = subprocess.run([sys.executable, "-m", "lifecycle.conformance.fake_cli", "-v"],
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



# ------------------------------------------------------------------ kit gaps (issue 34.1)
# Every case runs to PASS, FAIL with a reason, or N/A with a reason: a kit gap is never a FAIL.

PROMPT = '{"type": "adapter", "event": "prompt", "turnId": "t%d"}'
QUERY_ERROR = '{"type": "adapter", "event": "query_error", "message": "gone"}'
REPLACED = '{"type": "adapter", "event": "runtime_replaced"}'
AUTH_OK = '{"type": "auth_status", "isAuthenticating": false, "output": ["Login successful"], "session_id": "s1"}'
ANSWER = (
    '{"type": "assistant", "uuid": "a%d", "session_id": "s1", "parent_tool_use_id": null, "message": '
    '{"id": "api-a%d", "model": "claude-sonnet-4-6", "role": "assistant", "type": "message", '
    '"stop_reason": "end_turn", "content": [{"type": "text", "text": "%s"}]}}'
)
SUCCESS = (
    '{"type": "result", "subtype": "success", "is_error": false, "result": "%s", "stop_reason": "end_turn", '
    '"session_id": "s1", "uuid": "r%d"}'
)
BIG_INIT = (
    '{"type": "adapter", "event": "initialize", "clientCapabilities": '
    '{"_meta": {"jetbrains": {"air": {"version": 1e400, "capabilities": ["sessionFailure"]}}}}}'
)


def test_a_number_is_kept_as_the_case_wrote_it(tmp_path: Path) -> None:
    """``1e400`` is too big for a float: ``json`` reads it as ``inf`` and writes the non-JSON
    ``Infinity``. The plan keeps the token, and the kit writes it back as written."""
    plan = load_case(*_case(tmp_path, [BIG_INIT.replace("1e400", '1e400, "ratio": 1.0E2'), SESSION])).plan
    caps = plan.steps[0].data["clientCapabilities"]
    assert (
        json.dumps(caps) == '{"_meta": {"jetbrains": {"air": {"version": Infinity, "ratio": 100.0, '
        '"capabilities": ["sessionFailure"]}}}}'
    )
    assert (
        dumps_raw(caps) == '{"_meta": {"jetbrains": {"air": {"version": 1e400, "ratio": 1.0E2, '
        '"capabilities": ["sessionFailure"]}}}}'
    )


_RAW_STUB = r"""
import json, sys
log = open(sys.argv[1], "a")
for line in sys.stdin:
    log.write(line); log.flush()
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg.get("method") == "initialize" and sys.argv[2] == "parse-error":
        # what an agent whose JSON reader refuses the line answers: JSON-RPC's parse error, id null
        error = {"code": -32700, "message": "Parse error"}
        print(json.dumps({"jsonrpc": "2.0", "id": None, "error": error}), flush=True)
        continue
    result = {"sessionId": "stub-session"} if msg.get("method") == "session/new" else {}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


def _stub_run(tmp_path: Path, mode: str, expect: object) -> tuple[Outcome, list[str]]:
    cases = tmp_path / "cases"
    cases.mkdir(parents=True)
    case = load_case(*_case(cases, [BIG_INIT, SESSION], expect))
    agent = tmp_path / "agent.py"
    agent.write_text(_RAW_STUB)
    log = tmp_path / "received.jsonl"
    opts = RunOptions(agent=[sys.executable, str(agent), str(log), mode], step_timeout=10)
    out = asyncio.run(run_case(case, opts, tmp_path / "run"))
    return out, log.read_text().splitlines()


def test_the_client_sends_a_number_as_the_case_wrote_it(tmp_path: Path) -> None:
    out, received = _stub_run(tmp_path, "answer", {"sequence": []})
    assert out.status == "PASS", out.line()
    assert '"air": {"version": 1e400, "capabilities": ["sessionFailure"]}' in received[0]
    assert "Infinity" not in received[0]


def test_an_error_answer_with_id_null_answers_the_request_waiting(tmp_path: Path) -> None:
    """The agent could not read ``initialize`` (-32700, id null): that is its answer, noted, and the
    case's expectations give the verdict at once, not a wait of the step timeout (10 s here)."""
    out, received = _stub_run(tmp_path, "parse-error", {"sequence": []})
    assert (out.status, out.reason) == ("PASS", "")
    assert out.seconds < 8
    assert [json.loads(x)["method"] for x in received] == ["initialize", "session/new"]
    out, _ = _stub_run(tmp_path / "again", "parse-error", {"sequence": [{"id": "t1"}]})
    assert out.line() == (
        'FAIL c: sequence[0] not found in order: {"id": "t1"}; '
        'initialize answered {"code": -32700, "message": "Parse error"}'
    )


def test_deliver_fails_before_any_session_is_not_expressible(tmp_path: Path) -> None:
    for lines in (
        [INIT, '{"type": "adapter", "event": "deliver_fails", "count": 2}', SESSION],
        ['{"type": "adapter", "event": "deliver_fails"}', INIT, SESSION],
    ):
        plan = load_case(*_case(tmp_path, lines)).plan
        assert plan.not_expressible == "deliver_fails: a client cannot make the agent's sends fail and stay connected"


def test_sdk_lines_while_no_claude_code_runs(tmp_path: Path) -> None:
    """After Claude Code ended, an agent starts the next one only for a prompt: an ``auth_status``
    in between is printed by that next process (the client does not wait for it), or by none when
    no prompt follows; another SDK line there cannot be expressed."""
    deferred = [INIT, SESSION, PROMPT % 1, QUERY_ERROR, AUTH_OK, REPLACED, PROMPT % 2, SUCCESS % ("ok", 2)]
    plan = load_case(*_case(tmp_path, deferred)).plan
    assert plan.not_expressible is None
    assert [(s.kind, sorted(s.sides), s.deferred) for s in plan.steps[3:]] == [
        ("query_error", [CLI], False),
        ("sdk", [CLI], True),
        ("runtime_replaced", [], False),
        ("prompt", [CLI, CLIENT], False),
        ("sdk", [CLI], False),
    ]
    plan = load_case(*_case(tmp_path, [INIT, SESSION, PROMPT % 1, QUERY_ERROR, AUTH_OK])).plan
    assert (plan.not_expressible, plan.steps[-1].sides, plan.steps[-1].deferred) == (None, frozenset(), False)
    lines = [INIT, SESSION, PROMPT % 1, QUERY_ERROR, REPLACED, ANSWER % (2, 2, "late"), SUCCESS % ("late", 2)]
    assert load_case(*_case(tmp_path, lines)).plan.not_expressible == (
        "an SDK line (assistant, line 6) while no Claude Code process runs (after query_error or query_end, "
        "before the next prompt: an agent starts the next one only for a prompt)"
    )


def test_a_live_claude_code_goes_on_after_runtime_replaced(tmp_path: Path) -> None:
    """An agent replaces Claude Code only once it ended: a live one goes on (the replacement has no
    Claude Code part), unless it announced its shutdown and then ends, which an agent sees as a loss."""
    lines = [INIT, SESSION, PROMPT % 1, SUCCESS % ("hi", 1), REPLACED, ANSWER % (2, 2, "on"), PROMPT % 2]
    plan = load_case(*_case(tmp_path, lines)).plan
    assert plan.not_expressible is None
    assert [(s.kind, sorted(s.sides)) for s in plan.steps[4:]] == [
        ("runtime_replaced", []),
        ("sdk", [CLI]),
        ("prompt", [CLI, CLIENT]),
    ]
    shutdown = '{"type": "system", "subtype": "worker_shutting_down", "reason": "host_exit", "session_id": "s1"}'
    lines = [
        INIT,
        SESSION,
        PROMPT % 1,
        SUCCESS % ("hi", 1),
        shutdown,
        REPLACED,
        '{"type": "adapter", "event": "query_end"}',
    ]
    assert load_case(*_case(tmp_path, lines)).plan.not_expressible == (
        "'query_end' of a Claude Code that announced worker_shutting_down and was replaced while it still ran: "
        "an agent replaces a live Claude Code only once it ended, and that end is the loss"
    )


@pytest.mark.e2e
def test_the_gap_shapes_run_to_a_verdict_through_lifecycle_acp(tmp_path: Path) -> None:
    """The shapes that stalled (or sent ``Infinity``) run through the real agent to PASS, each with
    the verdict of ``lifecycle trace`` on the same case."""
    cases = tmp_path / "cases"
    cases.mkdir()
    public = CONFORMANCE / "cases"
    # a non-finite version is legacy behaviour, as a string version is
    big = (public / "malformed-capability-string-version.input.jsonl").read_text().splitlines()
    assert '"version": "1"' in big[0]
    _case(
        cases,
        [big[0].replace('"version": "1"', '"version": 1e400'), *big[1:]],
        json.loads((public / "malformed-capability-string-version.expect.json").read_text()),
        name="big-version",
    )
    # a live Claude Code replaced between turns: the second prompt's lines follow
    _case(
        cases,
        [
            INIT,
            SESSION,
            PROMPT % 1,
            ANSWER % (1, 1, "hi"),
            SUCCESS % ("hi", 1),
            REPLACED,
            PROMPT % 2,
            ANSWER % (2, 2, "again"),
            SUCCESS % ("again", 2),
        ],
        {
            "sequence": [
                {"id": "t1", "result": {"stopReason": "end_turn"}},
                {"params": {"update": {"content": {"text": "again"}}}},
                {"id": "t2", "result": {"stopReason": "end_turn"}},
            ],
            "records": [],
        },
        name="live-replaced",
    )
    # an access failure, Claude Code lost between turns, auth_status, the next prompt
    auth = (public / "auth-failure-until-auth-status.input.jsonl").read_text().splitlines()
    after = (public / "transport-loss-needs-new-runtime.input.jsonl").read_text().splitlines()[-3:]
    _case(
        cases,
        [*auth[:5], QUERY_ERROR, auth[5], REPLACED, *after],
        {
            "sequence": [{"id": "t2", "result": {"stopReason": "end_turn"}}],
            "records": [
                {"id": "t1:error", "revision": 1, "category": "access", "carrier": "prompt_response"},
                {
                    "id": "re:s1:.+",
                    "revision": 1,
                    "category": "connection",
                    "actions": ["new_session"],
                    "carrier": "session_info_update",
                },
            ],
        },
        name="loss-then-auth-status",
    )
    # Claude Code's stream ends between turns (nothing to show): the next prompt starts a new one
    _case(
        cases,
        [
            INIT,
            SESSION,
            PROMPT % 1,
            SUCCESS % ("hi", 1),
            '{"type": "adapter", "event": "query_end"}',
            PROMPT % 2,
            SUCCESS % ("ok", 2),
        ],
        {
            "sequence": [
                {"id": "t1", "result": {"stopReason": "end_turn"}},
                {"id": "t2", "result": {"stopReason": "end_turn"}},
            ],
            "records": [],
        },
        name="stream-end-between-turns",
    )
    opts = RunOptions(agent=[sys.executable, "-m", "lifecycle", "acp"], step_timeout=20, case_timeout=120)
    results = asyncio.run(run_suite(cases, opts, jobs=2, work=tmp_path / "work", show=False))
    assert [r.line() for r in results] == [
        "PASS big-version",
        "PASS live-replaced",
        "PASS loss-then-auth-status",
        "PASS stream-end-between-turns",
    ]
    sent = json.loads((tmp_path / "work" / "big-version" / "frames.jsonl").read_text().splitlines()[0])
    assert sent["id"] == 1 and "error" not in sent  # initialize was answered
    log = (tmp_path / "work" / "live-replaced" / "cli.log").read_text()
    assert log.count(" start argv=") == 1  # one Claude Code served both turns
    log = (tmp_path / "work" / "loss-then-auth-status" / "cli.log").read_text().splitlines()
    first = next(x.split()[0] for x in log if x.endswith("step 5 query_error done"))
    second = next(x.split()[0] for x in log if x.endswith("step 6 sdk done"))
    assert first != second  # the auth_status was printed by the Claude Code started for t2
