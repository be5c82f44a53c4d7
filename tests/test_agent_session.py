"""The agent's session (:mod:`lifecycle.agent.session`): how prompts and cancels run, in process.

Cancel is never lost: a randomized test over the interleavings of prompts, ``session/cancel``,
runtime start, a turn still winding down and Claude's own answers, driving the real agent code over
the ACP SDK's in-memory transport with a fake Claude runtime (the CLI is not the point here;
tests/e2e/test_hostile_client.py runs the real one); a cancel while Claude Code still starts; every
prompt of a closing session is answered.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest
from acp_harness import run
from scripted_claude import FakeClaude, Wire, World


async def _yields(rnd: random.Random) -> None:
    for _ in range(rnd.choice([0, 0, 1, 2, 3, 5, 8, 13])):
        await asyncio.sleep(0)
    if rnd.random() < 0.2:  # now and then a long delay: many loop iterations, not wall-clock time
        for _ in range(rnd.randrange(8, 64)):
            await asyncio.sleep(0)


async def cancel_scenario(seed: int) -> dict[str, Any]:
    """One interleaving; returns what happened (asserted by the caller)."""
    from lifecycle.agent import AgentConfig, ClaudeAcpAgent

    rnd = random.Random(seed)
    world = World(rnd)

    def factory(options: Any) -> Any:
        world.clients.append(FakeClaude(options, world))
        return world.clients[-1]

    # An interrupt that reaches the fake before its turn stalled leaves that turn without a result
    # (Claude Code stuck): the next prompt waits ``idle_timeout`` for it, then replaces the runtime
    # (4 seeds in 50). A whole run takes about 10 ms of loop time, so 1 s is ample and keeps the
    # 200 seeds from spending a minute waiting.
    agent = ClaudeAcpAgent(AgentConfig(idle_timeout=1.0, connect_timeout=5.0), client_factory=factory)
    wire = Wire(agent)
    sid = await wire.open(capable=rnd.random() < 0.5)
    steps: list[str] = []
    if rnd.random() < 0.5:  # a runtime is already running (else the burst's prompt starts one)
        world.answer = True
        warm = await (await wire.prompt(sid, "warm up"))
        assert warm.stop_reason == "end_turn"
        steps.append("warm")
    world.answer = False
    if rnd.random() < 0.5:  # a cancelled turn is still winding down when the burst arrives
        first = await wire.prompt(sid, "winding down")
        await _yields(rnd)
        await wire.conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(first, 5)).stop_reason == "cancelled"
        steps.append("winding")
    # the burst: one or two prompts, then the cancel right behind them (or a little later)
    burst = [await wire.prompt(sid, "burst 1")]
    if rnd.random() < 0.3:
        await _yields(rnd)
        burst.append(await wire.prompt(sid, "burst 2"))
    await _yields(rnd)
    await wire.conn.cancel(session_id=sid)
    answers = [(await asyncio.wait_for(b, 5)).stop_reason for b in burst]
    steps.append(f"burst{len(burst)}")
    # afterwards, a prompt Claude answers gets its own answer and nothing of the cancelled turns
    world.answer = True
    start = len(wire.chunks)
    after = await asyncio.wait_for(await wire.prompt(sid, "after"), 5)
    session = agent._sessions[sid]
    result = {
        "steps": steps,
        "answers": answers,
        "after": after.stop_reason,
        "after_chunks": wire.chunks[start:],
        "last_sent": world.clients[-1].sent[-1] if world.clients else None,
        "pending": len(session.prompts),
    }
    await agent.shutdown()
    return result


@pytest.mark.parametrize("block", range(4))
def test_cancel_is_never_lost_whatever_the_interleaving(
    block: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))  # no transcript lookups in the real ~/.claude
    seen: set[tuple[str, ...]] = set()
    for seed in range(block * 50, block * 50 + 50):
        out = run(cancel_scenario(seed), 20)
        assert out["answers"] == ["cancelled"] * len(out["answers"]), (seed, out)
        assert out["after"] == "end_turn", (seed, out)
        # exactly the answer to the last turn Claude received: nothing of a cancelled one leaked
        assert out["after_chunks"] == [f"answer to {out['last_sent']}"], (seed, out)
        assert out["pending"] == 0, (seed, out)
        seen.add(tuple(out["steps"]))
    # the runs covered every shape of scenario
    assert len(seen) >= 6, seen


class SlowStart(FakeClaude):
    """Claude Code that starts only when the test says so (``release``); ``connecting`` is set once
    the agent is waiting for it."""

    connecting: asyncio.Event
    release: asyncio.Event

    async def connect(self) -> None:
        SlowStart.connecting.set()
        await SlowStart.release.wait()


def test_a_cancel_is_answered_at_once_while_claude_code_still_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lifecycle.agent import ClaudeAcpAgent

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    world = World(random.Random(1))
    world.answer = True

    def factory(options: Any) -> Any:
        world.clients.append(SlowStart(options, world))
        return world.clients[-1]

    async def go() -> tuple[str, bool, str, list[str]]:
        SlowStart.connecting, SlowStart.release = asyncio.Event(), asyncio.Event()
        wire = Wire(ClaudeAcpAgent(client_factory=factory))
        sid = await wire.open(capable=True)
        first = await wire.prompt(sid, "cancelled while starting")
        await asyncio.wait_for(SlowStart.connecting.wait(), 5)  # the runtime is starting
        await wire.conn.cancel(session_id=sid)
        cancelled = (await asyncio.wait_for(first, 5)).stop_reason
        started_before_answer = SlowStart.release.is_set()  # answered while Claude Code still starts
        SlowStart.release.set()
        after = await asyncio.wait_for(await wire.prompt(sid, "after"), 10)  # waits for the start
        await wire.agent.shutdown()
        return cancelled, started_before_answer, after.stop_reason, world.clients[-1].sent

    cancelled, started_before_answer, after, sent = run(go(), 20)
    assert cancelled == "cancelled" and not started_before_answer
    assert after == "end_turn" and len(sent) == 1  # the cancelled prompt never reached Claude


def test_prompts_of_a_closing_session_are_all_answered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lifecycle.agent import ClaudeAcpAgent

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    world = World(random.Random(2))  # Claude never answers (world.answer stays False)

    def factory(options: Any) -> Any:
        world.clients.append(FakeClaude(options, world))
        return world.clients[-1]

    async def go() -> list[str]:
        agent = ClaudeAcpAgent(client_factory=factory)
        wire = Wire(agent)
        sid = await wire.open(capable=False)
        running = await wire.prompt(sid, "running")
        while not world.clients or not world.clients[-1].sent:
            await asyncio.sleep(0.01)
        queued = await wire.prompt(sid, "queued behind it")
        session = agent._sessions[sid]
        while len(session.prompts) < 2:  # the agent has registered the queued prompt
            await asyncio.sleep(0)
        await agent.shutdown()  # the client goes away (or session/load replaces the session)
        return [(await asyncio.wait_for(p, 5)).stop_reason for p in (running, queued)]

    assert run(go(), 20) == ["cancelled", "cancelled"]
