"""Not a test: what the proxy's e2e tests share (issue 53.4).

* :func:`ensure_npm_agent`: another ACP agent from npm, pinned (:data:`GEMINI`), installed once per
  machine into the tests' cache (``~/.cache/lifecycle-tests/<name>-<version>``) as acpx is, with a
  file lock; ``.ci/run`` installs the same versions there first.
* :class:`LineClient`: a raw ACP client over stdio, one JSON line per message, that keeps every
  line it received, in order, as bytes (the proxy's passthrough is compared byte for byte and as
  JSON values), answers nothing it is asked (the tests' agents ask nothing), and waits for events
  with deadlines (never a fixed sleep).
* :func:`proxy_command`: ``lifecycle proxy -- <agent command>`` run from this checkout.
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cli_env import REPO_ROOT
from .processes import alive
from .reference import cache_dir, node_binary

__all__ = [
    "CAPABLE",
    "CODEX",
    "GEMINI",
    "LineClient",
    "NpmAgent",
    "checkout_env",
    "ensure_npm_agent",
    "gone_within",
    "proxy_command",
]

CAPABLE: dict[str, Any] = {"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}}


@dataclass(frozen=True)
class NpmAgent:
    package: str
    version: str
    binary: str
    folder: str


#: gemini-cli 0.61.0 (issue 53; ``.ci/run`` installs the same versions)
GEMINI = NpmAgent("@google/gemini-cli", "0.61.0", "gemini", "gemini-cli-0.61.0")
#: codex-acp 0.16.0 (its native binary comes in a platform package of the same version)
CODEX = NpmAgent("@zed-industries/codex-acp", "0.16.0", "codex-acp", "codex-acp-0.16.0")
#: opencode 1.18.33 (its native binary comes in a platform package of the same version)
OPENCODE = NpmAgent("opencode-ai", "1.18.33", "opencode", "opencode-ai-1.18.33")


def ensure_npm_agent(agent: NpmAgent, timeout: float = 600) -> Path:
    """The agent's executable, installed with npm into the tests' cache if needed."""
    node_binary()  # Node.js >= 20 (AssertionError with an install hint otherwise)
    root = cache_dir().parent / agent.folder
    binary = root / "node_modules" / ".bin" / agent.binary
    manifest = root / "node_modules" / Path(agent.package) / "package.json"
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if binary.exists() and manifest.is_file() and json.loads(manifest.read_text())["version"] == agent.version:
            return binary
        npm = shutil.which("npm")
        assert npm is not None, f"npm not found: the proxy's e2e tests install {agent.package} with it"
        args = [npm, "install", "--no-save", "--no-audit", "--no-fund", "--loglevel=error"]
        proc = subprocess.run(
            [*args, f"{agent.package}@{agent.version}", "--prefix", str(root)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert proc.returncode == 0, f"npm install {agent.package} failed:\n{proc.stderr[-2000:]}"
        assert binary.exists(), f"npm installed no {agent.binary} in {root}"
        return binary


def gone_within(recorded: dict[int, int], timeout: float) -> list[int]:
    """Wait until none of ``recorded`` (pid -> start time, :func:`.processes.descendants`) runs;
    the ones still running after ``timeout`` seconds (polled, never a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while (left := alive(recorded)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def proxy_command(*agent: str) -> list[str]:
    """``lifecycle proxy -- AGENT...`` with this checkout's interpreter and package."""
    return [sys.executable, "-m", "lifecycle", "proxy", "--", *agent]


def checkout_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` with this checkout first on the import path (for ``python -m lifecycle``)."""
    inherited = env.get("PYTHONPATH", os.environ.get("PYTHONPATH", "")).split(os.pathsep)
    return {**env, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), *filter(None, inherited)])}


class LineClient:
    """A raw ACP client on a child process's stdio (see the module docstring)."""

    def __init__(self, command: list[str], *, env: dict[str, str], cwd: Path, stderr: Path) -> None:
        self._stderr = stderr.open("wb")
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env, cwd=cwd
        )
        self.lines: list[bytes] = []
        self._queue: queue.Queue[bytes | None] = queue.Queue()
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self._queue.put(raw.rstrip(b"\n"))
        self._queue.put(None)

    def send_line(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        """Send one request and wait for its answer (every line before it is kept too)."""
        self._next_id += 1
        rid = self._next_id
        self.send_line(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode())
        while True:
            msg = self.next_message(timeout)
            if msg.get("id") == rid and "method" not in msg:
                return msg

    def next_message(self, timeout: float = 60) -> dict[str, Any]:
        line = self._queue.get(timeout=timeout)
        assert line is not None, "the agent's output ended"
        self.lines.append(line)
        msg: dict[str, Any] = json.loads(line)
        return msg

    def wait_eof(self, timeout: float = 30) -> None:
        while (line := self._queue.get(timeout=timeout)) is not None:
            self.lines.append(line)

    def close(self, timeout: float = 30) -> int:
        """Close stdin (the client goes away) and wait for the process to exit; its exit code."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        finally:
            self._stderr.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._stderr.close()
