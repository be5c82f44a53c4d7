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
The processes are read from ``/proc`` here (this file's own walk, not the agent's).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp.schema import McpServerStdio

from .claude_cli import AgentWorkspace, cli_pids, session_cli_pid
from .test_coding_turn import Run, Script, select, tool_turn, tool_use
from .test_coding_turn import agent as shared_agent
from .test_mcp import echo_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

#: The Bash command: one process in the command's own session, one in a session of its own.
COMMAND = "setsid sleep 301 >/dev/null 2>&1 </dev/null & sleep 300"
SLEEPS = (b"sleep\x00300\x00", b"sleep\x00301\x00")
#: Seconds the processes may take to be gone (a correctness bound: the agent stops them at once).
GONE_WITHIN_S = 10.0


# ------------------------------------------------------------------ processes, read from /proc


def stat(pid: int) -> tuple[str, int, int] | None:
    """State, parent and start time of ``pid`` (``/proc/<pid>/stat``), None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = raw[raw.rindex(b")") + 2 :].split()
    return fields[0].decode(), int(fields[1]), int(fields[19])


def descendants(root: int) -> dict[int, int]:
    """Every live process below ``root`` (pid -> start time)."""
    children: dict[int, list[int]] = {}
    starts: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (st := stat(int(entry.name))) is not None and st[0] != "Z":
            children.setdefault(st[1], []).append(int(entry.name))
            starts[int(entry.name)] = st[2]
    found: dict[int, int] = {}
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found[child] = starts[child]
            stack.append(child)
    return found


def cmdline(pid: int) -> bytes:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    return b""


def alive(recorded: dict[int, int]) -> list[int]:
    """Those of ``recorded`` still running: same pid, same start time, not a zombie."""
    out = []
    for pid, start in recorded.items():
        st = stat(pid)
        if st is not None and st[2] == start and st[0] != "Z":
            out.append(pid)
    return out


def survivors(recorded: dict[int, int]) -> str:
    return "still running: " + ", ".join(f"{pid} {cmdline(pid)[:120]!r}" for pid in alive(recorded))


async def until(check: Callable[[], Any], timeout: float, what: Callable[[], str]) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"not in time: {what()}")
        await asyncio.sleep(0.05)
    return value


async def running_command(run: Run, with_mcp: bool) -> dict[int, int]:
    """Wait until both sleeps (and the MCP server) run; every process the agent's tree and the
    run's environment hold then (pid -> start time), the agent itself excepted."""

    def ready() -> dict[int, int] | None:
        tree = descendants(run.proc.pid)
        lines = [cmdline(pid) for pid in tree]
        if not all(any(line.startswith(s) for line in lines) for s in SLEEPS):
            return None
        if with_mcp and not any(b"mcp_echo_server.py" in line for line in lines):
            return None
        for pid in cli_pids(run.workspace.config_dir):  # the agent's environment has it too
            st = stat(pid)
            if st is not None and pid != run.proc.pid:
                tree[pid] = st[2]
        return tree

    recorded: dict[int, int] = await until(ready, 60, lambda: "the Bash command runs")
    return recorded


def assert_stderr_is_json(workspace: AgentWorkspace) -> None:
    lines = workspace.stderr_path.read_text().splitlines()
    assert lines, "the agent logged nothing"
    for line in lines:
        assert isinstance(json.loads(line), dict), line


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
