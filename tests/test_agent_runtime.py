"""The agent's Claude runtime (:mod:`lifecycle.agent.runtime`), in process: ``lifecycle.agent`` over the
ACP SDK's in-memory pair with a stand-in for ``ClaudeSDKClient`` (the SDK's real message classes, no
CLI process; the real CLI runs in tests/e2e/test_acp_e2e.py). A runtime that fails to start is
replaced; Claude Code exiting after an error result is the runtime's loss.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import (
    PromptResponse,
)
from acp_harness import FakeClaude, Wire, run

from lifecycle import (
    Action,
    Category,
    read_record,
)


def test_agent_replaces_a_runtime_that_failed_to_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lifecycle.agent import ClaudeAcpAgent

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))  # no transcript lookups in the real ~/.claude

    clients: list[FakeClaude] = []

    def factory(options: Any) -> Any:
        clients.append(FakeClaude(options, fail_connect=not clients))  # only the first one fails
        return clients[-1]

    agent = ClaudeAcpAgent(client_factory=factory)

    async def go() -> tuple[Wire, str, PromptResponse, PromptResponse]:
        wire = Wire(agent)  # type: ignore[arg-type]
        sid = await wire.open()
        first = await wire.conn.prompt(session_id=sid, prompt=[acp.text_block("one")])
        second = await wire.conn.prompt(session_id=sid, prompt=[acp.text_block("two")])
        return wire, sid, first, second

    wire, sid, first, second = run(go())
    assert first.field_meta is not None
    record = read_record(first.field_meta)
    assert record is not None and first.stop_reason == "end_turn"
    assert (record.category, record.actions) == (Category.CONNECTION, (Action.NEW_SESSION,))
    assert "nowhere" not in record.title  # raw exception text never becomes a title
    assert second.stop_reason == "end_turn" and second.field_meta is None
    # the first runtime asked for the new session id, the replacement for the same id again
    assert [c.options.session_id for c in clients] == [sid, sid]
    assert clients[1].sent[0]["uuid"] != record.id.removesuffix(":error")  # a fresh turn id
    ledger = agent._sessions[sid].publisher.ledger
    assert (ledger.runtime, ledger.active) == (1, ())  # replaced: the connection incident recovered
    assert [type(u).__name__ for _, u in wire.client.updates] == ["AgentMessageChunk"]


class ExitingClaude(FakeClaude):
    """Answers with an error result, then Claude Code exits non-zero: the SDK's ``ResultError``."""

    async def query(self, prompt: Any) -> None:
        from claude_agent_sdk import ResultMessage

        async for message in prompt:
            self.sent.append(message)
        result = dict(subtype="error_during_execution", duration_ms=1, duration_api_ms=1, is_error=True)
        self.queue.put_nowait(ResultMessage(**result, num_turns=1, session_id="x", errors=["boom"]))  # type: ignore[arg-type]
        self.queue.put_nowait("exit")

    async def receive_messages(self) -> Any:
        from claude_agent_sdk import ResultError

        while (message := await self.queue.get()) is not None:
            if message == "exit":
                raise ResultError("Claude Code returned an error result: boom", data={}, exit_code=1)
            yield message


def test_claude_code_exiting_after_an_error_result_is_the_runtimes_loss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the agent's streaming mode Claude Code stays up after an error result; the SDK raises
    ``ResultError`` only when it exited: the turn settles as its result, and the session then
    holds a connection incident (new_session) until a replacement runtime starts."""
    from lifecycle.agent import AgentConfig, ClaudeAcpAgent

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    agent = ClaudeAcpAgent(AgentConfig(start_early=False), client_factory=lambda options: ExitingClaude(options))

    async def go() -> tuple[Wire, str, PromptResponse]:
        wire = Wire(agent)  # type: ignore[arg-type]
        sid = await wire.open()
        first = await wire.conn.prompt(session_id=sid, prompt=[acp.text_block("one")])
        for _ in range(200):  # the runtime's loss follows the answer
            if any(a.category == Category.CONNECTION for a in agent._sessions[sid].publisher.ledger.active):
                break
            await asyncio.sleep(0.01)
        return wire, sid, first

    _wire, sid, first = run(go())
    record = read_record(first.field_meta)
    assert record is not None and first.stop_reason == "end_turn"  # the turn ends as its result
    ledger = agent._sessions[sid].publisher.ledger
    (lost,) = [a for a in ledger.active if a.category == Category.CONNECTION]
    assert lost.recovery.value == "runtime_replaced"  # spec: transport loss stays until replacement
    # the turn's own failure is the other active one: two incidents, the loss not swallowed
    assert len(ledger.active) == 2
