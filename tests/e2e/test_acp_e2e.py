"""The reference ACP agent end to end: a real ACP client spawns ``python -m lifecycle.agent``,
which drives the real bundled Claude Code CLI against the fake Anthropic API on 127.0.0.1.

One agent process per client kind (a capable client that negotiated ``sessionFailure``, and a
legacy one) serves every scenario, each in a fresh ACP session (so a fresh Claude Code process).
No test depends on another having run: a failed session that two tests look at (the usage limit,
the rate limit) is made by whichever of them runs first (:func:`failed_session`), and the tests
that stop an agent start their own.
The agent runs with the gateway-token environment (``ANTHROPIC_BASE_URL`` + an
``ANTHROPIC_AUTH_TOKEN`` JWT, see ``claude_cli.cli_env``), the only route to the CLI's usage-limit
texts; the other faults behave as with an API key, with the gateway's wording.

Assertions are on what the client actually received: every incoming frame, in wire order, from
a connection observer (handlers finish out of order), read back with
:class:`lifecycle.client.ClientProjection`. Titles are compared with the text Claude Code itself
stored in its transcript, never with a copy of an earlier run's output.
"""

from __future__ import annotations

import asyncio
import calendar
import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.connection import StreamDirection

from lifecycle import ClientProjection

from .agent_under_test import (
    KINDS,
    OVERLOAD_MESSAGE,
    RATE_MESSAGE,
    AgentUnderTest,
    check_retried_failure,
    legacy_error,
    overloaded,
    rate_limited,
    unauthorized,
)
from .claude_cli import cli_pids, sanitize_path, session_cli_pid
from .fakeapi import (
    SUCCESS_CHUNKS,
    SUCCESS_TEXT,
    CloseReply,
    RequestRecord,
    StallReply,
)
from .harness import SUCCESS_KINDS, SUCCESS_RESULT, Outcome, turn_frame

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def loaded_state(result: dict[str, Any] | None) -> bool:
    """A session/load answer: the session's modes (in the default mode) and its config options,
    nothing else (no record: a load replays, it does not fail)."""
    assert result is not None and set(result) == {"modes", "configOptions"}, result
    assert result["modes"]["currentModeId"] == "default"
    assert [o["id"] for o in result["configOptions"]][:2] == ["mode", "model"]
    return True


# ------------------------------------------------------------------ scenarios


@pytest.mark.parametrize("kind", KINDS)
def test_initialize_negotiates_the_extension(kind: str, agents: Any) -> None:
    agent = agents(kind)
    caps = agent.init["result"]["agentCapabilities"]
    assert caps["loadSession"] is True
    assert [m["id"] for m in agent.init["result"]["authMethods"]] == ["claude-login"]
    if agent.capable:
        assert caps["_meta"]["jetbrains"]["air"] == {"version": 1, "capabilities": ["sessionFailure"]}
    else:  # nothing of the extension: the reference's prompt queueing (50.B), authStatus (52.4)
        assert caps["_meta"] == {"claudeCode": {"promptQueueing": True}, "authStatus": {}}
    (line,) = [e for e in agent.log() if e.get("event") == "agent.initialize"]
    assert line["negotiated"] is agent.capable


def failed_session(agent: AgentUnderTest, name: str) -> tuple[str, str, Outcome]:
    """A session whose one prompt failed (``name``: "usage_limit" or "rate_limit"): made once per
    agent, by whichever test asks first, and never prompted again by any test."""
    if name not in agent.state:
        sid = agent.new_session()
        text = f"{name.replace('_', ' ')} ({agent.kind})"
        if name == "usage_limit":
            out = agent.prompt(sid, text, "usage_limit_gateway")
        else:
            out = agent.prompt(sid, text, rate_limited(), rate_limited(), rate_limited())
        agent.state[name] = (sid, text, out)
    result: tuple[str, str, Outcome] = agent.state[name]
    return result


@pytest.mark.parametrize("kind", KINDS)
def test_rate_limit_retries_then_fails(kind: str, agents: Any) -> None:
    agent = agents(kind)
    sid, text, out = failed_session(agent, "rate_limit")
    assert RATE_MESSAGE in agent.claude_text(sid)
    check_retried_failure(agent, out, text, category="limit", warning_category="limit", actions=["retry"])


@pytest.mark.parametrize("kind", KINDS)
def test_overload(kind: str, agents: Any) -> None:
    agent = agents(kind)
    sid = agent.new_session()
    text = f"overload ({kind})"
    out = agent.prompt(sid, text, overloaded(), overloaded(), overloaded())
    assert OVERLOAD_MESSAGE in agent.claude_text(sid)
    check_retried_failure(agent, out, text, category="service", warning_category="service", actions=["retry"])


@pytest.mark.parametrize("kind", KINDS)
def test_connection_dropped(kind: str, agents: Any) -> None:
    agent = agents(kind)
    sid = agent.new_session()
    text = f"connection dropped ({kind})"
    out = agent.prompt(sid, text, CloseReply(), CloseReply(), CloseReply())
    # no HTTP response: the warnings are "connection"; the CLI ends the turn with server_error (no HTTP
    # status), which is "service" (issue 21 rule 3: "`server_error` … → `service`", as the reference says)
    check_retried_failure(
        agent, out, text, category="service", warning_category="connection", actions=["retry"], has_response=False
    )


@pytest.mark.parametrize("kind", KINDS)
def test_retry_then_success(kind: str, agents: Any) -> None:
    agent = agents(kind)
    sid = agent.new_session()
    text = f"retry then success ({kind})"
    out = agent.prompt(sid, text, overloaded(), "success")
    assert out.result == SUCCESS_RESULT  # no record on a success
    answer = [e for e in agent.transcript(sid) if e.get("type") == "assistant"][-1]["message"]
    real = "".join(b["text"] for b in answer["content"] if b.get("type") == "text")
    assert real and answer["model"] != "<synthetic>"
    # Claude's answer streamed chunk by chunk; joined, the text Claude stored
    assert out.texts() == ["Hello", " from the fake", " API."] and out.text() == real == SUCCESS_TEXT
    out.check_success_usage()
    if not agent.capable:
        assert out.kinds() == SUCCESS_KINDS
        return
    turn = agent.turn_id(sid, text)
    (warning,) = out.info_records()
    assert (warning.id, warning.revision, warning.severity.value) == (f"{turn}:error", 1, "warning")
    # the warning stays in the transcript, before the answer; recovery publishes nothing
    view = out.projection()
    assert [(e.kind, e.text) for e in view.entries] == [("record", ""), *(("agent", t) for t in SUCCESS_CHUNKS)]
    assert out.kinds() == ["session_info_update", *SUCCESS_KINDS]
    agent.wait_log(
        lambda e: (
            e.get("incident_id") == f"{turn}:error"
            and e.get("to_state") == "historical"
            and e.get("transition") == "confirmed_attempt"
        )
    )


@pytest.mark.parametrize("kind", KINDS)
def test_auth_failure_then_successful_auth(kind: str, agents: Any) -> None:
    agent = agents(kind)
    sid = agent.new_session()
    valid = threading.Event()

    def key(request: RequestRecord) -> Any:
        return "success" if valid.is_set() else unauthorized()

    text = f"auth ({kind})"
    out = agent.prompt(sid, text, key, key, key, then=key)
    check_retried_failure(
        agent, out, text, category="access", warning_category="access", actions=["login"], legacy_code=-32000
    )
    # the user fixes the credentials, the client runs the login action: ACP authenticate (with the
    # credentials check, or after the terminal login an editor ran)
    valid.set()
    method = "console-login" if agent.capable else "claude-login"
    assert agent.call(agent.conn.authenticate(method_id=method)) is not None
    again = agent.prompt(sid, f"after login ({kind})", then=key)
    assert again.result == SUCCESS_RESULT and again.info_records() == []
    assert again.kinds() == SUCCESS_KINDS and again.text() == SUCCESS_TEXT
    log = agent.log()
    auth_at = next(i for i, e in enumerate(log) if e.get("event") == "agent.authenticate")
    assert log[auth_at]["ok"] is True
    if agent.capable:
        turn = agent.turn_id(sid, text)
        recovered = [
            i
            for i, e in enumerate(log)
            if e.get("incident_id") == f"{turn}:error" and e.get("transition") == "auth_succeeded"
        ]
        assert len(recovered) == 1 and recovered[0] > auth_at
        assert log[recovered[0]]["to_state"] == "historical"


def _check_refused_reset(resets_at: str, retry_after: int | None) -> None:
    """The reset the fake API's ``rejected`` headers carried: on the hour, two to three hours
    ahead (``fakeapi_replies._usage_limit_headers``), as ISO 8601 UTC."""
    reset = calendar.timegm(time.strptime(resets_at, "%Y-%m-%dT%H:%M:%SZ"))
    assert reset % 3600 == 0, resets_at
    if retry_after is not None:
        assert isinstance(retry_after, int) and 0 < retry_after <= 3 * 3600, retry_after


@pytest.mark.parametrize("kind", KINDS)
def test_usage_limit_gateway_route(kind: str, agents: Any) -> None:
    agent = agents(kind)
    sid, text, out = failed_session(agent, "usage_limit")
    claude = agent.claude_text(sid)
    assert claude.startswith("You've hit your")  # the CLI's own usage-limit message
    if not agent.capable:
        assert out.error is not None
        data = out.error["data"]
        # issue 52.2: beside errorKind, the refused window's reset, machine-readable
        assert {**out.error, "data": {"errorKind": data["errorKind"]}} == legacy_error(
            -32603, claude, agent.claude_error_kind(sid)
        )
        assert sorted(data) == ["errorKind", "resetsAt", "retryAfterSeconds"]
        _check_refused_reset(data["resetsAt"], data["retryAfterSeconds"])
        assert out.texts() == [claude]
        return
    # issue 52.2: beside the record, the refused window with its reset
    assert out.result is not None
    (refused,) = out.result["_meta"]["rateLimits"]
    assert (refused["window"], refused["status"]) == ("five_hour", "rejected")
    _check_refused_reset(refused["resetsAt"], None)
    turn = agent.turn_id(sid, text)
    assert out.info_records() == []  # not retried: no warning
    record = out.response_record()
    assert record is not None
    assert (record.id, record.revision, record.category.value, record.severity.value) == (
        f"{turn}:error",
        1,
        "limit",
        "error",
    )
    assert record.title == claude and record.actions == ()
    assert out.texts() == []


@pytest.mark.parametrize("kind", KINDS)
def test_load_restores_the_failed_session(kind: str, agents: Any) -> None:
    agent = agents(kind)
    # a session of its own: this test prompts it again after the load
    sid = agent.new_session()
    text = f"usage limit to load ({kind})"
    live = agent.prompt(sid, text, "usage_limit_gateway")
    claude = agent.claude_text(sid)
    assert claude.startswith("You've hit your")
    out = agent.load(sid)
    assert loaded_state(out.result)
    restored_id = None
    if not agent.capable:
        # the original transcript, as prose, and no typed record
        assert out.kinds() == ["user_message_chunk", "agent_message_chunk"]
        assert out.texts("user_message_chunk") == [text] and out.texts() == [claude]
        assert "jetbrains" not in json.dumps(out.frames)
    else:
        live_record = live.response_record()
        assert live_record is not None
        # the typed record at its position (after the user's prompt), with the live id
        assert out.kinds() == ["user_message_chunk", "session_info_update"]
        (restored,) = out.info_records()
        assert (restored.id, restored.revision) == (live_record.id, 1)
        restored_id = restored.id
        assert (restored.title, restored.category, restored.severity, restored.actions) == (
            claude,
            live_record.category,
            live_record.severity,
            live_record.actions,
        )
        view = out.projection()
        assert [(e.kind, e.carrier) for e in view.entries] == [("user", None), ("record", "session_info_update")]
    # a fresh ledger: a new epoch for the loaded session
    epochs = [
        e["epoch"]
        for e in agent.log()
        if e.get("session_id") == sid and e.get("event") in ("session.new", "session.load")
    ]
    assert len(epochs) == 2 and epochs[0] != epochs[1]
    # later prompts resume the same Claude session (the history reaches the API)
    after = agent.prompt(sid, f"after load ({kind})", "success")
    assert after.result == SUCCESS_RESULT and after.kinds() == SUCCESS_KINDS
    assert text in json.dumps(agent.api.message_requests[-1].body["messages"])
    if restored_id is not None:  # the restored quota failure stays active until a real model answer
        agent.wait_log(lambda e: e.get("incident_id") == restored_id and e.get("transition") == "real_model_answer")


@pytest.mark.parametrize("kind", KINDS)
def test_load_gives_other_failures_back_as_prose(kind: str, agents: Any) -> None:
    """Only usage-limit messages are typed on replay (spec: "History replay"); other failures
    come back as the prose Claude stored, for either client."""
    agent = agents(kind)
    sid, text, _ = failed_session(agent, "rate_limit")
    other = agent.load(sid)
    assert loaded_state(other.result)
    assert other.kinds() == ["user_message_chunk", "agent_message_chunk"]
    assert other.texts("user_message_chunk") == [text]
    assert other.texts() == [agent.claude_text(sid)] and other.info_records() == []
    assert RATE_MESSAGE in agent.claude_text(sid)


@pytest.mark.parametrize("kind", KINDS)
def test_cancel_answers_cancelled(kind: str, agents: Any) -> None:
    agent = agents(kind)
    sid = agent.new_session()
    agent.script.load(StallReply(30), then="success")
    before = len(agent.api.message_requests)

    async def prompt_then_cancel() -> Any:
        task = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[acp.text_block("stall")]))
        await asyncio.to_thread(agent.api.wait_for_requests, before + 1, 30)
        await agent.conn.cancel(session_id=sid)
        return await asyncio.wait_for(task, 20)

    response = agent.call(prompt_then_cancel())
    assert response.stop_reason == "cancelled" and response.field_meta is None
    # the next prompt gets its own answer, nothing of the cancelled turn
    again = agent.prompt(sid, f"after cancel ({kind})", "success")
    assert again.result == SUCCESS_RESULT and again.info_records() == []
    assert again.kinds() == SUCCESS_KINDS and again.text() == SUCCESS_TEXT


def _session_frames(agent: AgentUnderTest, sid: str, start: int) -> list[dict[str, Any]]:
    return [
        m
        for d, m in agent.frames[start:]
        if d == StreamDirection.INCOMING and m.get("params", {}).get("sessionId") == sid and turn_frame(m)
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_runtime_replaced_after_claude_code_died(kind: str, agents: Any) -> None:
    agent = agents(kind)
    sid = agent.new_session()
    first = agent.prompt(sid, f"before the crash ({kind})", "success")
    assert first.result == SUCCESS_RESULT
    start = len(agent.frames)
    os.kill(session_cli_pid(agent.config_dir, sid), signal.SIGKILL)
    # the SDK's stream raises (ProcessError): the runtime is lost while idle
    lost = agent.wait_log(lambda e: e.get("session_id") == sid and e.get("event") == "runtime.failed")
    assert lost["generation"] == 0 and lost["error_type"] == "ProcessError"
    (epoch,) = [e["epoch"] for e in agent.log() if e.get("session_id") == sid and e.get("event") == "session.new"]
    incident = f"{sid}:{epoch}:1"  # a session-scoped incident: epoch + sequence
    if agent.capable:
        # the ledger logs the transition when it commits, after the send: then wait for the frame
        agent.wait_log(lambda e: e.get("incident_id") == incident and e.get("transition") == "fail")
        agent.wait_frames(lambda: bool(_session_frames(agent, sid, start)))
    else:
        agent.wait_log(
            lambda e: e.get("session_id") == sid and e.get("event") == "ledger.background_failure_legacy_not_shown"
        )
    after = agent.prompt(sid, f"after the crash ({kind})", "success")
    assert after.result == SUCCESS_RESULT and after.info_records() == []
    assert after.kinds() == SUCCESS_KINDS and after.text() == SUCCESS_TEXT
    # a new runtime (generation 1) resumed the same Claude session
    starts = [e for e in agent.log() if e.get("session_id") == sid and e.get("event") == "runtime.start"]
    assert [(e["generation"], e["resume"]) for e in starts] == [(0, False), (1, True)]
    assert "before the crash" in json.dumps(agent.api.message_requests[-1].body["messages"])
    # everything the client saw for the session since the kill, the next prompt's exchange included
    since_kill = _session_frames(agent, sid, start)
    before_prompt = [f for f in since_kill if f not in after.frames]
    if agent.capable:
        # the lost runtime is one record, sent at once, until the replacement recovers it silently
        view = ClientProjection()
        view.receive_all(since_kill)
        (record,) = view.records
        assert [e.carrier for e in view.entries if e.record is not None] == ["session_info_update"]
        sent_at_once = ClientProjection()
        sent_at_once.receive_all(before_prompt)
        assert sent_at_once.records == [record] and record.id == incident
        assert (record.category.value, record.severity.value, [a.value for a in record.actions]) == (
            "connection",
            "error",
            ["new_session"],
        )
        agent.wait_log(lambda e: e.get("incident_id") == incident and e.get("transition") == "runtime_replaced")
    else:
        assert before_prompt == []  # legacy: a background loss is not shown
        assert "jetbrains" not in json.dumps(since_kill)


def test_configuration_reaches_claude_code(tmp_path: Path) -> None:
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    agent = AgentUnderTest("capable", tmp_path, ("--model", "claude-e2e-model", "--cwd", str(workdir)))
    try:
        agent.start()
        sid = agent.new_session()  # the client's cwd (agent.cwd) is overridden by --cwd
        out = agent.prompt(sid, "configured", "success")
        assert out.result == SUCCESS_RESULT
        assert [r.model for r in agent.api.message_requests] == ["claude-e2e-model"]
        assert f"Primary working directory: {workdir}" in json.dumps(agent.api.message_requests[0].body)
        projects = agent.config_dir / "projects"
        assert (projects / sanitize_path(str(workdir)) / f"{sid}.jsonl").is_file()
    finally:
        agent.stop()
    assert agent.returncode == 0 and cli_pids(agent.config_dir) == []


@pytest.mark.parametrize("kind", KINDS)
def test_the_agent_exits_cleanly_and_kept_stdout_for_the_protocol(kind: str, tmp_path: Path) -> None:
    """An agent of its own (stopping the shared one would end the other tests' agent): one failed
    prompt, then the client goes away."""
    agent = AgentUnderTest(kind, tmp_path)
    try:
        agent.start()
        sid = agent.new_session()
        out = agent.prompt(sid, f"before the exit ({kind})", "usage_limit_gateway")
        assert (out.error is None) is agent.capable  # a record for the capable client, an error otherwise
    finally:
        agent.stop()
    assert agent.returncode == 0
    assert cli_pids(agent.config_dir) == [], "Claude Code processes left behind"
    assert agent.parse_errors.count == 0, "the agent wrote something other than JSON-RPC to stdout"
    log = agent.log()
    assert log and log[-1]["event"] == "agent.stop"
    # every line on stderr is a structured log line
    lines = [line for line in agent.stderr_path.read_text().splitlines() if line.strip()]
    assert len(lines) == len(log)
    assert any(e.get("event") == "incident.transition" for e in log) is agent.capable
