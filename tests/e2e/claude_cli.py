"""Run the REAL bundled Claude Code CLI (via ``claude_agent_sdk``) against :mod:`fakeapi`.

Every run is isolated: a fresh temporary ``HOME``, ``CLAUDE_CONFIG_DIR`` (``<root>/config``),
``TMPDIR`` and working directory (``<root>/project``, which holds ``hello.txt`` for the
tool-using scenarios).  The CLI writes its transcript to
``$CLAUDE_CONFIG_DIR/projects/<sanitized realpath of cwd>/<session_id>.jsonl`` (not to
``$HOME/.claude`` once ``CLAUDE_CONFIG_DIR`` is set); :attr:`CliRun.transcript_path` is that file.

The child environment is built from scratch-ish: inherited variables that would steer the CLI
(``ANTHROPIC_*``, ``CLAUDE_*``, proxies, ``NODE_OPTIONS`` ...) are removed by a tiny ``env -u``
wrapper used as ``cli_path`` (``ClaudeAgentOptions.env`` can only add/override, never unset),
then :func:`cli_env` adds what the fixture README used plus the switches that keep the CLI
offline.

Entry points:

* :func:`run_query` / :func:`run_query_async`: one ``claude_agent_sdk.query()`` run -> :class:`CliRun`.
* :func:`cli_client`: async context manager yielding a :class:`CliClient` that drives a
  ``ClaudeSDKClient`` over several prompts (multi-turn).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import re
import shlex
import shutil
import signal
import stat
import tempfile
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path
from typing import Any

import claude_agent_sdk
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultMessage,
    SystemMessage,
)

from .fakeapi import READ_FILE_NAME, FakeAnthropicAPI, RequestRecord, gateway_jwt

#: The checkout under test (its ``lifecycle`` package is what the agents import).
REPO_ROOT = Path(__file__).resolve().parents[2]

__all__ = [
    "BUNDLED_CLI",
    "RECORDED_OPTIONS",
    "CliClient",
    "CliRun",
    "CliTurn",
    "cli_client",
    "cli_env",
    "cli_pids",
    "connect_log",
    "run_query",
    "run_query_async",
    "sanitize_path",
]

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


def cli_pids(config_dir: Path) -> list[int]:
    """Live processes started for one run: those whose environment has its CLAUDE_CONFIG_DIR."""
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
        if marker in environ.split(b"\0"):
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


# --------------------------------------------------------------------------------------
# Result object
# --------------------------------------------------------------------------------------


@dataclasses.dataclass
class CliRun:
    """Everything one CLI run produced."""

    scenario: str
    messages: list[Any]
    exception: BaseException | None
    session_id: str | None
    transcript_path: Path | None
    root: Path
    home: Path
    config_dir: Path
    cwd: Path
    port: int
    requests: list[RequestRecord]
    stderr: list[str]
    elapsed: float
    timed_out: bool = False
    trace_file: Path | None = None
    leftover_pids: list[int] = dataclasses.field(default_factory=list)

    # --- views ---------------------------------------------------------------------

    def of_type(self, cls: type) -> list[Any]:
        return [m for m in self.messages if isinstance(m, cls)]

    @property
    def classes(self) -> list[str]:
        """Message class names in order, without the ``init`` SystemMessage."""
        return [type(m).__name__ for m in self.messages if not _is_init(m)]

    @property
    def init(self) -> SystemMessage | None:
        return next((m for m in self.messages if _is_init(m)), None)

    @property
    def result(self) -> ResultMessage | None:
        res = self.of_type(ResultMessage)
        return res[-1] if res else None

    @property
    def api_retries(self) -> list[dict[str, Any]]:
        """``data`` of every ``api_retry`` SystemMessage."""
        return [m.data for m in self.of_type(SystemMessage) if m.subtype == "api_retry"]

    @property
    def assistant_messages(self) -> list[AssistantMessage]:
        return self.of_type(AssistantMessage)

    @property
    def synthetic(self) -> AssistantMessage | None:
        """The CLI-made error AssistantMessage (``model == "<synthetic>"``), if any."""
        syn = [m for m in self.assistant_messages if m.model == SYNTHETIC_MODEL]
        return syn[-1] if syn else None

    @property
    def message_requests(self) -> list[RequestRecord]:
        return [r for r in self.requests if r.is_messages]

    def text_of(self, msg: Any) -> str:
        return "".join(getattr(b, "text", "") for b in getattr(msg, "content", []) or [])

    def transcript(self) -> list[dict[str, Any]]:
        """The transcript's JSON lines (``[]`` if there is none)."""
        import json

        if self.transcript_path is None or not self.transcript_path.exists():
            return []
        return [json.loads(line) for line in self.transcript_path.read_text().splitlines() if line.strip()]

    def connects(self) -> list[str]:
        """``connect()`` targets of the CLI process tree (only with ``trace_connect=True``)."""
        if self.trace_file is None:
            raise RuntimeError("run with trace_connect=True")
        return connect_log(self.trace_file)

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _is_init(m: Any) -> bool:
    return isinstance(m, SystemMessage) and m.subtype == "init"


def find_transcript(session_id: str | None, config_dir: Path, home: Path, cwd: Path) -> Path | None:
    """Locate ``<session_id>.jsonl``: expected under ``$CLAUDE_CONFIG_DIR/projects/<sanitized cwd>/``."""
    if not session_id:
        return None
    expected = config_dir / "projects" / sanitize_path(os.path.realpath(cwd)) / f"{session_id}.jsonl"
    if expected.exists():
        return expected
    for base in (config_dir, home / ".claude", home):
        hits = sorted(base.glob(f"**/{session_id}.jsonl"))
        if hits:
            return hits[0]
    return None


# --------------------------------------------------------------------------------------
# Workspace
# --------------------------------------------------------------------------------------


@dataclasses.dataclass
class _Workspace:
    root: Path
    home: Path
    config_dir: Path
    tmpdir: Path
    cwd: Path

    @classmethod
    def make(cls, workdir: Path | str | None) -> _Workspace:
        root = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="cc-e2e-"))
        root.mkdir(parents=True, exist_ok=True)
        root = Path(os.path.realpath(root))
        ws = cls(root, root / "home", root / "config", root / "tmp", root / "project")
        for d in (ws.home, ws.config_dir, ws.tmpdir, ws.cwd):
            d.mkdir(parents=True, exist_ok=True)
        (ws.cwd / READ_FILE_NAME).write_text(HELLO_CONTENT)
        return ws


def _options(
    ws: _Workspace,
    env: dict[str, str],
    *,
    max_turns: int | None,
    max_budget_usd: float | None,
    allowed_tools: Sequence[str] | None,
    stderr: list[str],
    trace_file: Path | None,
    options_extra: dict[str, Any] | None,
) -> ClaudeAgentOptions:
    wrapper = _write_wrapper(ws.root / "claude-wrapper.sh", env, trace_file)
    kw: dict[str, Any] = dict(
        env=env,
        cwd=str(ws.cwd),
        cli_path=str(wrapper),
        max_turns=max_turns,
        max_budget_usd=max_budget_usd,
        allowed_tools=list(allowed_tools or []),
        stderr=stderr.append,
    )
    kw.update(options_extra or {})
    return ClaudeAgentOptions(**kw)


def _default_auth(name: str) -> str:
    return "gateway" if name.startswith("usage_limit_gateway") else "api_key"


# --------------------------------------------------------------------------------------
# query()
# --------------------------------------------------------------------------------------


async def run_query_async(
    scenario_or_server: str | FakeAnthropicAPI,
    prompt: str = "hi",
    *,
    max_turns: int | None = 1,
    max_budget_usd: float | None = None,
    allowed_tools: Sequence[str] | None = None,
    env_extra: dict[str, str] | None = None,
    timeout: float = 90,
    auth: str | None = None,
    workdir: Path | str | None = None,
    trace_connect: bool = False,
    options_extra: dict[str, Any] | None = None,
) -> CliRun:
    """Run ``claude_agent_sdk.query(prompt)`` with the real CLI against the fake API.

    ``scenario_or_server``: a scenario name (a fresh :class:`FakeAnthropicAPI` is started and
    stopped around the run) or a server you manage (started if it is not yet).  ``auth``
    defaults to ``"gateway"`` for ``usage_limit_gateway*`` and ``"api_key"`` otherwise.
    ``workdir`` is the run's root folder (default: a new temp dir, kept for inspection; call
    :meth:`CliRun.cleanup`).  Never raises for CLI/SDK failures: the exception is in
    :attr:`CliRun.exception`; a run exceeding ``timeout`` s is cancelled (the CLI killed) and
    gets ``timed_out=True`` and a ``TimeoutError``.
    """
    own = isinstance(scenario_or_server, str)
    server = FakeAnthropicAPI(scenario_or_server) if own else scenario_or_server
    name = server.name
    ws = _Workspace.make(workdir)
    stderr: list[str] = []
    trace_file = ws.root / "strace.log" if trace_connect else None
    messages: list[Any] = []
    exc: BaseException | None = None
    timed_out = False
    t0 = time.monotonic()
    server.start()
    try:
        env = cli_env(
            server.base_url,
            home=ws.home,
            config_dir=ws.config_dir,
            tmpdir=ws.tmpdir,
            auth=auth or _default_auth(name),
            extra=env_extra,
        )
        opts = _options(
            ws,
            env,
            max_turns=max_turns,
            max_budget_usd=max_budget_usd,
            allowed_tools=allowed_tools,
            stderr=stderr,
            trace_file=trace_file,
            options_extra=options_extra,
        )

        async def collect() -> None:
            agen = claude_agent_sdk.query(prompt=prompt, options=opts)
            try:
                async for msg in agen:
                    messages.append(msg)
            finally:
                await agen.aclose()

        try:
            await asyncio.wait_for(collect(), timeout)
        except TimeoutError as e:
            timed_out, exc = True, e
        except Exception as e:
            exc = e
    finally:
        leftover = await _reap(ws.config_dir)
        if own:
            server.stop()
    sid = _session_id(messages, exc)
    return CliRun(
        scenario=name,
        messages=messages,
        exception=exc,
        session_id=sid,
        transcript_path=find_transcript(sid, ws.config_dir, ws.home, ws.cwd),
        root=ws.root,
        home=ws.home,
        config_dir=ws.config_dir,
        cwd=ws.cwd,
        port=server.port,
        requests=list(server.requests),
        stderr=stderr,
        elapsed=time.monotonic() - t0,
        timed_out=timed_out,
        trace_file=trace_file,
        leftover_pids=leftover,
    )


def run_query(scenario_or_server: str | FakeAnthropicAPI, prompt: str = "hi", **kw: Any) -> CliRun:
    """Synchronous :func:`run_query_async` (same arguments)."""
    return asyncio.run(run_query_async(scenario_or_server, prompt, **kw))


def _session_id(messages: Iterable[Any], exc: BaseException | None) -> str | None:
    for m in messages:
        if _is_init(m):
            sid = m.data.get("session_id")
            if sid:
                return sid
    for m in messages:
        sid = getattr(m, "session_id", None)
        if sid:
            return sid
    return getattr(exc, "session_id", None)


# --------------------------------------------------------------------------------------
# ClaudeSDKClient (multi-turn)
# --------------------------------------------------------------------------------------


@dataclasses.dataclass
class CliTurn:
    """One prompt on a :class:`CliClient`: the messages up to its ResultMessage."""

    prompt: str
    messages: list[Any]
    exception: BaseException | None = None
    timed_out: bool = False

    @property
    def result(self) -> ResultMessage | None:
        res = [m for m in self.messages if isinstance(m, ResultMessage)]
        return res[-1] if res else None

    @property
    def classes(self) -> list[str]:
        return [type(m).__name__ for m in self.messages if not _is_init(m)]


class CliClient:
    """A connected ``ClaudeSDKClient`` on the real CLI; see :func:`cli_client`."""

    def __init__(
        self, client: ClaudeSDKClient, server: FakeAnthropicAPI, ws: _Workspace, stderr: list[str], turn_timeout: float
    ) -> None:
        self.client = client
        self.server = server
        self.root, self.home, self.config_dir, self.cwd = ws.root, ws.home, ws.config_dir, ws.cwd
        self.stderr = stderr
        self.turn_timeout = turn_timeout
        self.turns: list[CliTurn] = []

    async def ask(self, prompt: str, *, timeout: float | None = None) -> CliTurn:
        """Send ``prompt`` and collect messages until its ResultMessage (bounded by ``timeout``)."""
        turn = CliTurn(prompt, [])
        self.turns.append(turn)

        async def go() -> None:
            await self.client.query(prompt)
            async for msg in self.client.receive_response():
                turn.messages.append(msg)

        try:
            await asyncio.wait_for(go(), timeout or self.turn_timeout)
        except TimeoutError as e:
            turn.timed_out, turn.exception = True, e
        except Exception as e:
            turn.exception = e
        return turn

    @property
    def session_id(self) -> str | None:
        return _session_id((m for t in self.turns for m in t.messages), None)

    @property
    def transcript_path(self) -> Path | None:
        return find_transcript(self.session_id, self.config_dir, self.home, self.cwd)


@contextlib.asynccontextmanager
async def cli_client(
    scenario_or_server: str | FakeAnthropicAPI = "success",
    *,
    max_turns: int | None = None,
    max_budget_usd: float | None = None,
    allowed_tools: Sequence[str] | None = None,
    env_extra: dict[str, str] | None = None,
    auth: str | None = None,
    workdir: Path | str | None = None,
    turn_timeout: float = 90,
    connect_timeout: float = 60,
    options_extra: dict[str, Any] | None = None,
) -> AsyncIterator[CliClient]:
    """``async with cli_client("success") as c: t1 = await c.ask("hi"); t2 = await c.ask("again")``.

    Same isolation and environment as :func:`run_query_async`; connect and disconnect are
    bounded by ``connect_timeout``.
    """
    own = isinstance(scenario_or_server, str)
    server = FakeAnthropicAPI(scenario_or_server) if own else scenario_or_server
    ws = _Workspace.make(workdir)
    stderr: list[str] = []
    server.start()
    try:
        env = cli_env(
            server.base_url,
            home=ws.home,
            config_dir=ws.config_dir,
            tmpdir=ws.tmpdir,
            auth=auth or _default_auth(server.name),
            extra=env_extra,
        )
        opts = _options(
            ws,
            env,
            max_turns=max_turns,
            max_budget_usd=max_budget_usd,
            allowed_tools=allowed_tools,
            stderr=stderr,
            trace_file=None,
            options_extra=options_extra,
        )
        client = ClaudeSDKClient(options=opts)
        await asyncio.wait_for(client.connect(), connect_timeout)
        try:
            yield CliClient(client, server, ws, stderr, turn_timeout)
        finally:
            with contextlib.suppress(Exception, asyncio.TimeoutError):
                await asyncio.wait_for(client.disconnect(), connect_timeout)
    finally:
        await _reap(ws.config_dir)
        if own:
            server.stop()
