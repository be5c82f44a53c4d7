"""A 401 with an API key, as an editor shows it (issue 30, point 3): the real ACP SDK client spawns
``python -m lifecycle.agent``, which drives the real bundled Claude Code CLI with
``ANTHROPIC_API_KEY`` against the fake Anthropic API on 127.0.0.1, which answers every request
``401 authentication_error``.

Claude Code's own text for it is ``Invalid API key · Fix external API key`` (a ``<synthetic>``
assistant message with ``error: authentication_failed``; no "run /login" in it). Expected, written
out: a legacy client gets that text as one ``agent_message_chunk``, then the reference adapter's
``-32000 "Authentication required"`` (spec: "If no capable client negotiated the extension,
existing JSON-RPC errors and transcript text remain unchanged"); a capable client gets no text and
the typed record on an ``end_turn`` answer, its title Claude's text (spec: "Title and details"),
category ``access``, action ``login`` (spec: "Actions", authentication). The reference adapter
0.101.0 shows a legacy client the same, on the same CLI (``test_editor_replay.reference_agent``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import RequestError
from acp.connection import StreamDirection
from acp.schema import TextContentBlock

from lifecycle import read_record

from .claude_cli import AgentWorkspace
from .fakeapi import error_reply
from .harness import Run, Script, agent, run_async, select
from .oracle import reference_agent

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

CLAUDE_TEXT = "Invalid API key · Fix external API key"


def api_key(ws: AgentWorkspace, env: dict[str, str]) -> None:
    """Claude Code authenticates with an API key (the harness's default is a gateway token)."""
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    env["ANTHROPIC_API_KEY"] = "sk-test"


def _turn_updates(run: Run, start: int) -> list[dict[str, object]]:
    return [
        m["params"]["update"]
        for d, m in run.frames[start:]
        if d == StreamDirection.INCOMING
        and m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] in ("agent_message_chunk", "agent_thought_chunk")
    ]


def test_a_legacy_client_sees_claudes_401_text_then_authentication_required(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(then=error_reply(401, "authentication_error", "invalid x-api-key"))
        async with agent(tmp_path, script, select("allow-once"), capable=False, prepare=api_key) as run:
            start = len(run.frames)
            with pytest.raises(RequestError) as caught:
                await run.prompt("hi")
            assert caught.value.code == -32000
            assert str(caught.value) == "Authentication required"
            assert run.api.message_requests, "the fake API was never asked"
            assert [u["content"] for u in _turn_updates(run, start)] == [{"type": "text", "text": CLAUDE_TEXT}]
            # The text came before the error answer, on the wire.
            order = [
                "text"
                if m.get("method") == "session/update"
                and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
                else "error"
                if "error" in m
                else None
                for d, m in run.frames[start:]
                if d == StreamDirection.INCOMING
            ]
            assert [o for o in order if o] == ["text", "error"]
            assert run.records() == []

    run_async(go())


def test_the_reference_shows_a_legacy_client_the_same(tmp_path: Path) -> None:
    """The reference adapter 0.101.0, same CLI, same 401: the same text, then the same error."""

    async def go() -> None:
        ws = AgentWorkspace()
        ws._workspace(tmp_path)
        script = Script(then=error_reply(401, "authentication_error", "invalid x-api-key"))
        async with reference_agent(ws, script, api_key) as (conn, frames):
            sid = (await conn.new_session(cwd=str(ws.cwd), mcp_servers=[])).session_id
            start = len(frames)
            with pytest.raises(RequestError) as caught:
                await conn.prompt(session_id=sid, prompt=[TextContentBlock(type="text", text="hi")])
            assert (caught.value.code, str(caught.value)) == (-32000, "Authentication required")
            chunks = [
                m["params"]["update"]["content"]
                for d, m in frames[start:]
                if d == StreamDirection.INCOMING
                and m.get("method") == "session/update"
                and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
            ]
            assert chunks == [{"type": "text", "text": CLAUDE_TEXT}]

    run_async(go())


def test_a_capable_client_gets_the_typed_record_and_no_text(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(then=error_reply(401, "authentication_error", "invalid x-api-key"))
        async with agent(tmp_path, script, select("allow-once"), capable=True, prepare=api_key) as run:
            start = len(run.frames)
            response = await run.prompt("hi")
            assert response.stop_reason == "end_turn"
            assert _turn_updates(run, start) == []
            record = read_record(response.field_meta)
            assert record is not None
            assert (record.category, record.severity, record.title, tuple(record.actions)) == (
                "access",
                "error",
                CLAUDE_TEXT,
                ("login",),
            )

    run_async(go())
