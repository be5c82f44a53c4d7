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

The environment, the wrapper, the processes and :class:`AgentWorkspace` are in :mod:`.cli_env`;
this module re-exports every one of their names.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shutil
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

from .cli_env import (
    BUNDLED_CLI,
    HELLO_CONTENT,
    RECORDED_OPTIONS,
    REPO_ROOT,
    SYNTHETIC_MODEL,
    AgentWorkspace,
    _reap,
    _write_wrapper,
    cli_env,
    cli_pids,
    connect_log,
    sanitize_path,
    session_cli_pid,
)
from .fakeapi import READ_FILE_NAME, FakeAnthropicAPI, RequestRecord

#: what the tests import from here: the names of :mod:`.cli_env` too
__all__ = [
    "BUNDLED_CLI",
    "HELLO_CONTENT",
    "RECORDED_OPTIONS",
    "REPO_ROOT",
    "SYNTHETIC_MODEL",
    "AgentWorkspace",
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
    "session_cli_pid",
]



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
