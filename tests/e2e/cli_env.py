"""Not a test: the environment and workspace the real Claude Code CLI runs in (:mod:`.claude_cli`
re-exports all of it): the checkout and the bundled CLI (``REPO_ROOT``, ``BUNDLED_CLI``), the
recorded options, the child environment built from scratch-ish (:func:`cli_env`, the ``env -u``
wrapper), what the CLI connected to (:func:`connect_log`), its processes (:func:`cli_pids`,
:func:`session_cli_pid`) and an agent's workspace (:class:`AgentWorkspace`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import stat
import time
from pathlib import Path
from typing import Any

import claude_agent_sdk

from .fakeapi import FakeAnthropicAPI, gateway_jwt

#: The checkout under test (its ``lifecycle`` package is what the agents import).
REPO_ROOT = Path(__file__).resolve().parents[2]

BUNDLED_CLI = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
SYNTHETIC_MODEL = "<synthetic>"
HELLO_CONTENT = "hello world\n"

#: ``run_query`` keyword arguments each recorded scenario was run with (README section A).
RECORDED_OPTIONS: dict[str, dict[str, Any]] = {
    "max_turns": {"max_turns": 2, "allowed_tools": ["Read"]},
    "max_budget": {"max_turns": 5, "max_budget_usd": 0.01, "allowed_tools": ["Read"]},
}

# Inherited variables removed from the CLI's environment.
_SCRUB_PREFIXES = (
    "ANTHROPIC_",
    "CLAUDE_",
    "CLAUDECODE",
    "OTEL_",
    "AWS_",
    "GOOGLE_",
    "VERTEX_",
    "BEDROCK_",
    "AZURE_",
    "MCP_",
    "DISABLE_",
    "NODE_",
    "BUN_",
    "NPM_CONFIG_",
)
_SCRUB_NAMES = {
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "TRACEPARENT",
    "TRACESTATE",
    "GITHUB_TOKEN",
    "GH_TOKEN",
}
# Set by the SDK itself when it spawns the CLI: never scrub those.
_SDK_SET = {
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_AGENT_SDK_VERSION",
    "CLAUDE_AGENT_SDK_CLIENT_APP",
    "CLAUDE_AGENT_SDK_DERIVED_CLIENT_APP",
    "CLAUDE_CODE_SDK_READS_SESSION_STATE",
}


def sanitize_path(path: str) -> str:
    """How the CLI names a project folder: every non-alphanumeric character becomes ``-``."""
    return re.sub(r"[^a-zA-Z0-9]", "-", path)


def cli_env(
    base_url: str | None,
    *,
    home: Path,
    config_dir: Path,
    tmpdir: Path,
    auth: str = "api_key",
    max_retries: int = 2,
    extra: dict[str, str] | None = None,
) -> dict[str, str]:
    """The ``ClaudeAgentOptions.env`` for one run.

    ``auth="api_key"``: ``ANTHROPIC_API_KEY=sk-test``.  ``auth="gateway"``: no API key, and
    ``ANTHROPIC_AUTH_TOKEN`` = unsigned JWT with ``aud=claude-gateway`` (usage-limit route).
    """
    env: dict[str, str] = {
        # as in the fixture README
        "CLAUDE_CODE_MAX_RETRIES": str(max_retries),
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        # what the SDK sets when it is not inherited (query() waits for the CLI's idle state)
        "CLAUDE_CODE_SDK_READS_SESSION_STATE": "1",
        # isolation
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(config_dir),
        "TMPDIR": str(tmpdir),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "TZ": "UTC",
        # stay offline / quiet (belt and braces on top of NONESSENTIAL_TRAFFIC)
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_BUG_COMMAND": "1",
        "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
        "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
        "CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL": "1",
        # the fake server is never reached through a proxy (inherited *_PROXY are scrubbed too)
        "NO_PROXY": "127.0.0.1,localhost",
    }
    if base_url is not None:
        env["ANTHROPIC_BASE_URL"] = base_url
    if auth == "api_key":
        env["ANTHROPIC_API_KEY"] = "sk-test"
    elif auth == "gateway":
        env["ANTHROPIC_AUTH_TOKEN"] = gateway_jwt()
    elif auth != "none":
        raise ValueError(f"auth must be 'api_key', 'gateway' or 'none', not {auth!r}")
    if extra:
        env.update(extra)
    return env


def _scrub_list(env: dict[str, str]) -> list[str]:
    out = []
    for k in os.environ:
        if k in env or k in _SDK_SET:
            continue
        if k in _SCRUB_NAMES or k.startswith(_SCRUB_PREFIXES):
            out.append(k)
    return sorted(out)


def _write_wrapper(path: Path, env: dict[str, str], trace_file: Path | None) -> Path:
    """``cli_path`` shim: ``exec env -u VAR... [strace ...] <bundled claude> "$@"``."""
    unset = " ".join(f"-u {shlex.quote(k)}" for k in _scrub_list(env))
    # unset the API key explicitly in gateway mode even if it was never inherited
    if "ANTHROPIC_API_KEY" not in env:
        unset += " -u ANTHROPIC_API_KEY"
    tracer = ""
    if trace_file is not None:
        strace = shutil.which("strace")
        if strace is None:
            raise RuntimeError("trace_connect=True needs strace")
        tracer = f"{shlex.quote(strace)} -f -qq -e trace=%network -o {shlex.quote(str(trace_file))} "
    path.write_text(f'#!/bin/sh\nexec env {unset} {tracer}{shlex.quote(str(BUNDLED_CLI))} "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


_CONNECT_RE = re.compile(r"(?:connect\(\d+, |sendto\(\d+, .*|sendmsg\(\d+, \{msg_name=)\{sa_family=(AF_\w+)(.*?)\}")


def connect_log(trace_file: Path) -> list[str]:
    """``connect()``/``sendto()`` peers in an strace log: ``"AF_INET 127.0.0.1:1234"``, ``"AF_UNIX /path"``."""
    out = []
    for line in trace_file.read_text(errors="replace").splitlines():
        m = _CONNECT_RE.search(line)
        if not m:
            continue
        fam, rest = m.groups()
        if fam == "AF_UNIX":
            p = re.search(r'sun_path="([^"]*)"', rest) or re.search(r"sun_path=@?\"?([^,}]*)", rest)
            out.append(f"AF_UNIX {p.group(1) if p else rest.strip(', ')}")
        elif fam == "AF_INET":
            port = re.search(r"htons\((\d+)\)", rest)
            addr = re.search(r'inet_addr\("([^"]+)"\)', rest)
            out.append(f"AF_INET {addr.group(1) if addr else '?'}:{port.group(1) if port else '?'}")
        elif fam == "AF_INET6":
            port = re.search(r"htons\((\d+)\)", rest)
            addr = re.search(r'inet_pton\(AF_INET6, "([^"]+)"', rest)
            out.append(f"AF_INET6 [{addr.group(1) if addr else '?'}]:{port.group(1) if port else '?'}")
        else:
            out.append(f"{fam} {rest.strip(', ')}")
    return out


#: The identity probe's arguments (issue 52.4, the reference's ``probeCliAuthStatus``): a short
#: ``claude auth status --json`` beside the sessions' Claude Codes, told apart by its argv.
PROBE_ARGS = (b"auth", b"status", b"--json")


def is_probe(pid: int) -> bool:
    """Whether ``pid`` runs the identity probe (``… auth status --json``, through a wrapper too)."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(tuple(args[i : i + 3]) == PROBE_ARGS for i in range(len(args)))


def cli_pids(config_dir: Path, *, probes: bool = True) -> list[int]:
    """Live processes started for one run: those whose environment has its CLAUDE_CONFIG_DIR
    (``probes=False``: not the identity probe, only the sessions' Claude Codes and their children)."""
    marker = f"CLAUDE_CONFIG_DIR={config_dir}".encode()
    me = os.getpid()
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == me:
            continue
        try:
            environ = (d / "environ").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0") and (probes or not is_probe(int(d.name))):
            pids.append(int(d.name))
    return pids


def session_cli_pid(config_dir: Path, sid: str) -> int:
    """The Claude Code process an agent started for session ``sid`` (``--session-id``/``--resume``)."""
    for pid in cli_pids(config_dir):
        with contextlib.suppress(OSError):
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if f"--session-id={sid}".encode() in args or f"--resume={sid}".encode() in args:
                return pid
    raise AssertionError("no Claude Code process for the session")


class AgentWorkspace:
    """One e2e agent's folders, environment, and what it and Claude Code left behind.

    Mixed into a test's agent handle: :meth:`_workspace` makes ``home``, ``config_dir`` (the run's
    CLAUDE_CONFIG_DIR), ``tmp`` and ``cwd`` (the sessions' working directory) under ``root``, and
    names ``stderr_path`` (the agent's JSON log); the handle provides ``api`` (its fake API).
    """

    home: Path
    config_dir: Path
    tmp: Path
    cwd: Path
    stderr_path: Path
    api: FakeAnthropicAPI

    def _workspace(self, root: Path) -> None:
        self.home, self.config_dir, self.tmp, self.cwd = (root / n for n in ("home", "config", "tmp", "project"))
        for d in (self.home, self.config_dir, self.tmp, self.cwd):
            d.mkdir(parents=True, exist_ok=True)
        self.stderr_path = root / "agent.stderr"

    def agent_env(self, max_retries: int) -> dict[str, str]:
        """:func:`cli_env` for the agent (gateway auth against ``api``), with this checkout first on
        the import path (the SDK trims a child's environment, so it is passed explicitly)."""
        env = cli_env(
            self.api.base_url,
            home=self.home,
            config_dir=self.config_dir,
            tmpdir=self.tmp,
            auth="gateway",
            max_retries=max_retries,
        )
        inherited = os.environ.get("PYTHONPATH", "").split(os.pathsep)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), *filter(None, inherited)])
        return env

    def transcript(self, sid: str) -> list[dict[str, Any]]:
        """Every entry of session ``sid``'s transcript file, in order."""
        path = self.config_dir / "projects" / sanitize_path(os.path.realpath(self.cwd)) / f"{sid}.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def claude_text(self, sid: str) -> str:
        """The text of the last synthetic (CLI-authored) assistant message Claude stored."""
        texts = [
            "".join(b.get("text", "") for b in e["message"]["content"])
            for e in self.transcript(sid)
            if e.get("type") == "assistant" and e["message"].get("model") == "<synthetic>"
        ]
        assert texts, "Claude stored no synthetic message"
        return texts[-1]

    def log(self) -> list[dict[str, Any]]:
        """The agent's structured log (its stderr), one object per JSON line."""
        out = []
        for line in self.stderr_path.read_text().splitlines():
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                if isinstance(entry, dict):
                    out.append(entry)
        return out


async def _reap(config_dir: Path, grace: float = 5.0) -> list[int]:
    """SIGTERM, then SIGKILL, whatever this run's CLI left running; returns the pids found."""
    found = cli_pids(config_dir)
    if not found:
        return []
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in cli_pids(config_dir):
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace
        while cli_pids(config_dir) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        if not cli_pids(config_dir):
            break
    return found
