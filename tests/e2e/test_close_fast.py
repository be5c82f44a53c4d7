"""``session/close`` while a prompt waits returns at once (issue 29, point 7): the real ACP SDK client
spawns ``python -m lifecycle.agent``, which runs the real bundled Claude Code against the fake API;
the prompt waits for the client's answer to a permission question, or for the model (the fake
API holds the request), and the client closes the session.

Asserted: the ``session/close`` answer arrives within :data:`CLOSE_WITHIN_S` of the request (a
correctness bound, as the reference adapter closes at once, not a benchmark: the Claude SDK's own
close waits 5 s for Claude Code after closing its stdin); the waiting prompt is answered
``cancelled`` (ACP: a prompt of a session going away is answered); Claude Code and everything it
started are gone; every stderr line of the agent is one JSON object.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from .claude_cli import session_cli_pid
from .fakeapi import StallReply
from .harness import Answer, Script, _fill_cwd, agent, never, run_async, select, tool_turn, tool_use
from .processes import GONE_WITHIN_S, alive, assert_stderr_is_json, descendants, survivors, until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

#: Seconds a ``session/close`` may take while a prompt waits.
CLOSE_WITHIN_S = 1.0


def waiting_for(what: str) -> tuple[Script, Answer]:
    if what == "permission":  # a Write: Claude Code asks, the client never answers
        return Script(tool_turn(tool_use("Write", "toolu_w", file_path="{cwd}/w.txt", content="w"))), never
    return Script(StallReply(120)), select("allow-once")  # the model never answers


@pytest.mark.parametrize("what", ["permission", "model"])
def test_close_while_a_prompt_waits_is_immediate(tmp_path: Path, what: str) -> None:
    async def go() -> None:
        script, answer = waiting_for(what)
        async with agent(tmp_path, script, answer) as run:
            _fill_cwd(script, run)
            prompt = asyncio.ensure_future(run.prompt("go"))
            if what == "permission":
                await asyncio.wait_for(run.client.asked.wait(), 60)
            else:
                await until(lambda: run.api.message_requests, 60, lambda: "the model was asked")
            cli = session_cli_pid(run.workspace.config_dir, run.sid)
            recorded: dict[int, Any] = {**descendants(cli), cli: _start(cli)}
            started = time.monotonic()
            await asyncio.wait_for(run.conn.close_session(session_id=run.sid), 30)
            took = time.monotonic() - started
            assert took < CLOSE_WITHIN_S, f"session/close took {took:.2f} s"
            response = await asyncio.wait_for(prompt, 30)
            assert response.stop_reason == "cancelled"
            await until(lambda: not alive(recorded), GONE_WITHIN_S, lambda: survivors(recorded))
            assert not (Path(run.workspace.cwd) / "w.txt").exists()
        assert_stderr_is_json(run.workspace)

    run_async(go())


def _start(pid: int) -> int:
    raw = Path(f"/proc/{pid}/stat").read_bytes()
    return int(raw[raw.rindex(b")") + 2 :].split()[19])
