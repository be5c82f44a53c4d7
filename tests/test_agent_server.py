"""The ACP agent itself (:mod:`lifecycle.agent.server`, :class:`ClaudeAcpAgent`) over a real connection, in process:
what it refuses (unknown sessions, empty prompts, unknown auth methods), authentication without
credentials, and a handler's failure answered as a bare internal error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import acp
import pytest
from acp import RequestError
from acp_harness import FakeClaude, Wire, recording_agent, run
from scripted_claude import Served


def test_a_handler_failure_is_a_bare_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import lifecycle.agent as agent_module

    def boom(session_id: str, directory: str) -> Any:
        raise ValueError("cannot read /home/bob/.claude/projects with key sk-ant-api03-Zq7xK2mP9vL4nR8tW1yB5cH3jF6dG0")

    monkeypatch.setattr(agent_module, "get_session_messages", boom)

    async def go() -> dict[str, Any]:
        served = Served()
        reply = await served.call("session/load", {"sessionId": "s", "cwd": "/tmp", "mcpServers": []})
        await served.end()
        return reply

    reply = run(go(), 20)
    assert reply["error"] == {
        "code": -32603,
        "message": "Internal error",
        "data": {"details": "The agent hit an internal error."},
    }


def test_agent_rejects_unknown_sessions_and_empty_prompts() -> None:
    from lifecycle.agent import ClaudeAcpAgent

    agent = ClaudeAcpAgent(client_factory=lambda options: FakeClaude(options))

    async def go() -> list[int]:
        wire = Wire(agent)  # type: ignore[arg-type]
        sid = await wire.open()
        codes = []
        for session_id, text in (("nope", "hi"), (sid, "  ")):
            with pytest.raises(RequestError) as info:
                await wire.conn.prompt(session_id=session_id, prompt=[acp.text_block(text)])
            codes.append(info.value.code)
        with pytest.raises(RequestError) as info:
            await wire.conn.authenticate(method_id="not-a-method")
        codes.append(info.value.code)
        return codes

    assert run(go()) == [-32602, -32602, -32602]


def test_agent_authenticate_without_credentials_is_auth_required(tmp_path: Path) -> None:
    from lifecycle.agent import ClaudeAcpAgent

    def agent_with(env: dict[str, str]) -> ClaudeAcpAgent:
        return ClaudeAcpAgent(client_factory=lambda options: FakeClaude(options), env=env)

    async def authenticate(agent: ClaudeAcpAgent) -> int:
        wire = Wire(agent)  # type: ignore[arg-type]
        await wire.open()
        try:
            await wire.conn.authenticate(method_id="claude-login")
        except RequestError as err:
            return err.code
        return 0

    empty = {"CLAUDE_CONFIG_DIR": str(tmp_path), "HOME": str(tmp_path)}
    expected = 0 if sys.platform == "darwin" else -32000  # macOS: the keychain is not inspected
    assert run(authenticate(agent_with(empty))) == expected
    assert run(authenticate(agent_with({**empty, "ANTHROPIC_API_KEY": "sk-test"}))) == 0
    (tmp_path / ".credentials.json").write_text("{}")
    assert run(authenticate(agent_with(empty))) == 0


class _Reporting(FakeClaude):
    """Claude Code whose ``initialize`` answer lists a model: the start shows it (a
    ``config_option_update``) after connecting, through the publisher ``session/new`` holds."""

    async def get_server_info(self) -> dict[str, Any]:
        return {"models": [{"value": "default", "displayName": "Default (recommended)"}], "commands": []}


def test_session_new_answers_once_claude_code_answered_initialize_not_when_the_start_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Commit 9b2c2a0: ``session/new`` waits for ``_Session.connected`` (set as the SDK's initialize
    # is answered), not for the start task, whose last step shows the models through the publisher
    # ``session/new`` holds until it answers. With both waits' bounds out of reach, an agent that
    # waited for the start's end would never answer: ``run``'s guard fails the test.
    import lifecycle.agent.server as server

    monkeypatch.setattr(server, "STARTUP_WAIT_S", 3600.0)
    monkeypatch.setattr(server, "MODELS_WAIT_S", 3600.0)
    agent, _ = recording_agent(tmp_path, monkeypatch, _Reporting)

    async def go() -> tuple[Wire, Any, bool]:
        wire = Wire(agent)  # type: ignore[arg-type]
        await wire.conn.initialize(protocol_version=1)
        sid = (await wire.conn.new_session(cwd=str(tmp_path))).session_id
        session = agent._sessions[sid]
        connected = session.connected.is_set()
        await session.starting  # the start ends after the answer, once the publisher is free
        return wire, session, connected

    wire, session, connected = run(go(), 60)
    assert connected and session.starting.done() and session.starting.exception() is None
    answer = next(i for i, f in enumerate(wire.frames) if "sessionId" in (f.get("result") or {}))
    shown = [i for i, f in enumerate(wire.frames) if f.get("method") == "session/update"
             and f["params"]["update"]["sessionUpdate"] == "config_option_update"]  # fmt: skip
    assert shown and answer < shown[0], (answer, shown)
