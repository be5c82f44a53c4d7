"""Processes read from ``/proc``: the tests' own walk of an agent's process tree (not the agent's),
for the checks that nothing Claude Code started outlives it (``test_no_orphans.py``,
``test_editor_fixes.py``, ``test_close_fast.py``).

Rules: not a test module (it imports no ``test_*`` module); a process is the same one only with
the same pid and start time, and a zombie is not alive (it runs nothing); every wait polls with
a deadline (:func:`until`), none sleeps a fixed time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .claude_cli import AgentWorkspace, cli_pids
from .harness import Run

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
