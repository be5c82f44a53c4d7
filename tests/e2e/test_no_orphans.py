"""Nothing Claude Code started outlives it (issue 29, point 6): the real ACP SDK client spawns
``python -m lifecycle.agent``, which runs the real bundled Claude Code against the fake API; the
model runs a Bash command that starts ``sleep 300`` and a ``setsid sleep 301`` in the background
(a session of its own), beside a stdio MCP server (``mcp_echo_server.py``). Claude Code is then
killed with SIGKILL in the middle of the command, or left running, and the session closed
(``session/close``) or the agent made to exit (its stdin closed).

Asserted: within a deadline, not one of the processes recorded while the command ran (every
descendant of the agent, and every process carrying the run's ``CLAUDE_CONFIG_DIR``: the harness's
:func:`cli_pids`) is alive (a zombie is not alive: it runs nothing); every line the agent wrote to
stderr is one JSON object (docs/acp-agent.md: "Every log line goes to stderr as one JSON object").
The processes are read from ``/proc`` by ``processes.py`` (the tests' own walk, not the agent's).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp.schema import McpServerStdio

from .claude_cli import session_cli_pid
from .harness import Run, Script, echo_server, select, tool_turn, tool_use
from .harness import agent as shared_agent
from .processes import COMMAND, GONE_WITHIN_S, alive, assert_stderr_is_json, running_command, survivors, until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

# ------------------------------------------------------------------ the agent


def agent(
    tmp_path: Path, *, with_mcp: bool, args: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> contextlib.AbstractAsyncContextManager[Run]:
    """One agent and one session whose first prompt runs :data:`COMMAND` (allowed once when asked)."""
    script = Script(tool_turn(tool_use("Bash", "toolu_sleep", command=COMMAND, description="Wait")))
    servers: list[McpServerStdio] = [echo_server()] if with_mcp else []
    return shared_agent(
        tmp_path,
        script,
        select("allow-once"),
        mcp_servers=servers,
        args=args,
        prepare=lambda ws, agent_env: agent_env.update(env or {}),
    )


def run_async(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 150))


# ------------------------------------------------------------------ the tests


@pytest.mark.parametrize("with_mcp", [False, True], ids=["early-launch", "mcp-server"])
@pytest.mark.parametrize("killed", [True, False], ids=["cli-killed", "cli-running"])
def test_nothing_claude_code_started_outlives_session_close(tmp_path: Path, with_mcp: bool, killed: bool) -> None:
    async def go() -> None:
        async with agent(tmp_path, with_mcp=with_mcp) as run:
            prompt = asyncio.ensure_future(run.prompt("wait"))
            recorded = await running_command(run, with_mcp)
            cli = session_cli_pid(run.workspace.config_dir, run.sid)
            assert cli in recorded
            if killed:
                os.kill(cli, signal.SIGKILL)
                await asyncio.wait_for(prompt, 60)  # answered: the connection to Claude Code was lost
            await asyncio.wait_for(run.conn.close_session(session_id=run.sid), 30)
            await until(lambda: not alive(recorded), GONE_WITHIN_S, lambda: survivors(recorded))
            await asyncio.wait_for(prompt, 30)  # a prompt of a closed session is answered too
            assert run.proc.returncode is None  # the agent itself runs on
        assert_stderr_is_json(run.workspace)

    run_async(go())


@pytest.mark.parametrize("killed", [True, False], ids=["cli-killed", "cli-running"])
def test_nothing_claude_code_started_outlives_the_agent(tmp_path: Path, killed: bool) -> None:
    """The agent exits when its stdin closes. Run in bypassPermissions (allowed for root with
    ``IS_SANDBOX=1``), where the Claude SDK warns (``CanUseToolShadowedWarning``): that warning
    too is a JSON log line."""

    async def go() -> None:
        sandbox = {"IS_SANDBOX": "1"}
        async with agent(tmp_path, with_mcp=True, args=("--permission-mode", "bypassPermissions"), env=sandbox) as run:
            prompt = asyncio.ensure_future(run.prompt("wait"))
            recorded = await running_command(run, with_mcp=True)
            if killed:
                os.kill(session_cli_pid(run.workspace.config_dir, run.sid), signal.SIGKILL)
                await asyncio.wait_for(prompt, 60)
            assert run.proc.stdin is not None
            run.proc.stdin.close()
            assert await asyncio.wait_for(run.proc.wait(), 30) == 0
            await until(lambda: not alive(recorded), GONE_WITHIN_S, lambda: survivors(recorded))
            prompt.cancel()
            with contextlib.suppress(BaseException):
                await prompt
        assert_stderr_is_json(run.workspace)
        warned = [e for e in run.workspace.log() if e.get("event") == "python.warning"]
        assert [e.get("category") for e in warned] == ["CanUseToolShadowedWarning"]

    run_async(go())


# What asyncio and Python's warnings would print on their own, in the agent's real process entry
# (``cli_main``), its ``serve`` replaced by one that leaves a task's exception unretrieved (as a
# Claude SDK task does after Claude Code was killed) and warns (as the Claude SDK does).
PROBE = """
import asyncio, gc, sys, warnings
from lifecycle.agent import startup

async def serve(config, *args, **kwargs):
    async def fail():
        raise ConnectionError("Cannot write to terminated process sk-ant-api03-abcdefghijklmnop0123")
    task = asyncio.ensure_future(fail())
    while not task.done():
        await asyncio.sleep(0)
    del task
    gc.collect()
    warnings.warn("can_use_tool will not be invoked sk-ant-api03-abcdefghijklmnop0123", UserWarning)

startup.serve = serve
sys.exit(startup.cli_main([]))
"""


def test_unretrieved_task_errors_and_warnings_are_json_log_lines(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", PROBE], stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    entries = [json.loads(line) for line in done.stderr.splitlines()]
    assert all(isinstance(e, dict) for e in entries), done.stderr
    assert [e["error_type"] for e in entries if e["event"] == "asyncio.unhandled"] == ["ConnectionError"]
    assert [e["category"] for e in entries if e["event"] == "python.warning"] == ["UserWarning"]
    assert "sk-ant" not in done.stderr and "Traceback" not in done.stderr
