"""The reference ACP agent: an ACP client talks to Claude Code through ``claude-agent-sdk``, with
the incident ledger embedded (``lifecycle acp`` or ``python -m lifecycle.agent``).

Needs the ``acp`` and ``claude`` extras. Deliberately small: text prompts, Claude's text streamed
as ``agent_message_chunk``, no tool UI. Everything on stdout is the ACP protocol; every log line
goes to stderr (structlog, ids and states only).

Rules
-----
* One ``ClaudeSDKClient`` (one Claude Code process, a *runtime*) per ACP session, started at the
  session's first prompt. The ACP session id is the Claude session id (``session_id=`` for a new
  session, ``resume=`` once a transcript exists), so ``session/load`` finds the transcript.
* Every prompt is sent as a user message whose ``uuid`` is the turn id, so Claude stores it under
  that uuid and a replayed failure keeps its live id.
* The agent never decides how a prompt ends: it feeds events and returns what the ledger
  settles (:meth:`lifecycle.acp.SessionPublisher.outcome`).
* Runtime generations: every event of a runtime is tagged with its generation. A runtime that died
  is replaced at the next prompt (``RuntimeReplaced``), after which its stragglers are refused.
* ``authenticate`` (the ACP method behind a record's ``login`` action) feeds ``AuthStatus`` to
  every session.
* ``session/cancel`` answers every prompt received before it ``cancelled``, whatever it was doing
  (waiting for the prompt lock, for a cancelled turn to wind down, for Claude Code to start).
* The client is read and written through :mod:`lifecycle.agent.transport` (every bad line is
  answered, error replies are short and redacted, the output backlog is bounded); a handler's
  unexpected exception is a bare ``-32603``; log fields are redacted.

Theory of operation
-------------------
A runtime owns one task that connects the SDK client, consumes its message stream and disconnects
it again (the SDK requires connect and disconnect in one task). Messages become events through
:func:`lifecycle.claude.from_sdk_message`; an exception from the stream through
:func:`lifecycle.claude.from_sdk_exception`; the stream ending through ``QueryEnded``. The prompt
handler feeds ``PromptStarted``, writes the user message, and awaits the settlement. A cancelled
turn's remaining messages (until its result arrives) are dropped, and the next prompt waits for
that result, so nothing of the cancelled turn is attributed to the next one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import logging
import os
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ParamSpec, Protocol, TypeVar, cast

import acp
import structlog
from acp import RequestError
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthMethodAgent,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
)
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, get_session_info, get_session_messages

from .. import __version__
from ..acp import SessionPublisher, advertise, negotiate_client, new_epoch
from ..claude import from_sdk_exception, from_sdk_message
from ..errors import LifecycleError
from ..events import (
    ApiRetry,
    Assistant,
    AuthStatus,
    Cancelled,
    Event,
    InternalError,
    ModelFallback,
    PromptStarted,
    QueryEnded,
    QueryError,
    Result,
    RuntimeReplaced,
)
from ..history import load_history
from ..incident import MachineAnswers
from ..ledger import SessionLedger
from ..log import StructlogObserver, configure_logging
from ..redaction import redact
from .transport import StdioTransport, StreamSink, StreamSource, open_stdio, reserved_kwargs

__all__ = ["AUTH_METHOD_ID", "AgentConfig", "ClaudeAcpAgent", "ClientFactory", "SdkClient", "cli_main", "serve"]

log = structlog.get_logger("lifecycle.agent")

#: The one authentication method advertised (``authenticate`` with it feeds ``AuthStatus``).
AUTH_METHOD_ID = "claude-login"

# Events that belong to a turn: dropped while the runtime still works on a cancelled one.
_TURN_EVENTS = (Assistant, Result, ApiRetry, ModelFallback)

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _guarded(method: Callable[_P, Awaitable[_R]]) -> Callable[_P, Awaitable[_R]]:
    """An ACP handler whose unexpected exception becomes a bare ``-32603`` (the SDK would send the
    exception's text to the client); the log gets its type only."""

    @functools.wraps(method)
    async def handler(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return await method(*args, **kwargs)
        except RequestError:
            raise
        except Exception as exc:
            log.error("agent.handler_failed", method=method.__name__, error_type=type(exc).__name__)
            raise RequestError.internal_error({"details": "The agent hit an internal error."}) from None

    return handler


class SdkClient(Protocol):
    """What a runtime uses of ``claude_agent_sdk.ClaudeSDKClient`` (tests may pass a stand-in)."""

    async def connect(self) -> None: ...

    async def disconnect(self) -> None: ...

    def receive_messages(self) -> AsyncIterator[Any]: ...

    async def query(self, prompt: AsyncIterator[dict[str, Any]]) -> None: ...

    async def interrupt(self) -> None: ...


ClientFactory = Callable[[ClaudeAgentOptions], SdkClient]


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """How the agent runs Claude Code (``lifecycle acp --help``; environment variables in brackets).

    Attributes:
        model: Claude model for every session [``LIFECYCLE_ACP_MODEL``]; default: the CLI's.
        cwd: working directory for every session, overriding the client's
            [``LIFECYCLE_ACP_CWD``].
        max_turns: Claude's turn limit per prompt [``LIFECYCLE_ACP_MAX_TURNS``].
        cli_path: the Claude Code executable [``LIFECYCLE_ACP_CLI``]; default: the bundled one.
        permission_mode: Claude's permission mode [``LIFECYCLE_ACP_PERMISSION_MODE``].
        connect_timeout: seconds to wait for Claude Code to start.
        idle_timeout: seconds a prompt waits for a cancelled turn to wind down before the runtime
            is replaced.
        cli_stderr: forward Claude Code's stderr lines to this process's stderr.
    """

    model: str | None = None
    cwd: str | None = None
    max_turns: int | None = None
    cli_path: str | None = None
    permission_mode: str | None = None
    connect_timeout: float = 60.0
    idle_timeout: float = 30.0
    cli_stderr: bool = False


# ------------------------------------------------------------------ one Claude runtime


class _Runtime:
    """One ``ClaudeSDKClient`` of one session, in one task (connect, consume, disconnect)."""

    def __init__(self, session: _Session, generation: int, client: SdkClient) -> None:
        self.session = session
        self.generation = generation
        self._client = client
        self._connected: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._go = asyncio.Event()
        self._stop = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._inflight: str | None = None
        self._task: asyncio.Task[None] | None = None
        self.ended = False

    @property
    def alive(self) -> bool:
        return self._task is not None and not self.ended

    async def start(self, timeout: float) -> None:
        """Connect Claude Code; raises what ``connect`` raised (the runtime is then ended)."""
        self._task = asyncio.create_task(self._run(), name=f"claude-runtime-{self.generation}")
        try:
            await asyncio.wait_for(asyncio.shield(self._connected), timeout)
        except BaseException:
            await self.close()
            raise

    def begin(self) -> None:
        """Let events flow into the ledger (after the session tagged this generation current)."""
        self._go.set()

    async def _run(self) -> None:
        try:
            await self._client.connect()
        except BaseException as exc:
            self.ended = True
            if not self._connected.done():
                self._connected.set_exception(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
            return
        self._connected.set_result(None)
        reader = asyncio.create_task(self._consume())
        stopper = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait({reader, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (reader, stopper):
                task.cancel()
            await asyncio.gather(reader, stopper, return_exceptions=True)
            self.ended = True
            self._idle.set()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._client.disconnect(), 10)
            log.info("runtime.closed", session_id=self.session.id, generation=self.generation)

    async def _consume(self) -> None:
        await self._go.wait()
        try:
            async for message in self._client.receive_messages():
                try:
                    await self._on_message(message)
                except Exception as exc:  # an adapter bug, not a runtime failure
                    log.error("runtime.event_failed", session_id=self.session.id, error_type=type(exc).__name__)
                    with contextlib.suppress(Exception):
                        await self.session.feed(InternalError(), runtime=self.generation)
        except Exception as exc:
            self.ended = True
            log.info(
                "runtime.failed",
                session_id=self.session.id,
                generation=self.generation,
                error_type=type(exc).__name__,
            )
            await self.session.feed(from_sdk_exception(exc), runtime=self.generation)
            return
        self.ended = True
        log.info("runtime.ended", session_id=self.session.id, generation=self.generation)
        await self.session.feed(QueryEnded(), runtime=self.generation)

    async def _on_message(self, message: object) -> None:
        turn = self._inflight
        is_result = type(message).__name__ == "ResultMessage"
        try:
            event = from_sdk_message(message)
        except LifecycleError:
            log.warning("runtime.malformed_message", session_id=self.session.id, kind=type(message).__name__)
            event = None
        if event is not None:
            if turn is not None and turn in self.session.cancelled and isinstance(event, _TURN_EVENTS):
                log.info("runtime.cancelled_turn_event_dropped", session_id=self.session.id, turn_id=turn)
            else:
                await self.session.feed(event, runtime=self.generation)
        if is_result:
            # The turn Claude was working on is over; a cancelled one stops filtering here.
            if turn is not None:
                self.session.cancelled.discard(turn)
            self._inflight = None
            self._idle.set()

    async def send(self, turn_id: str, text: str) -> None:
        """Write the user message (``uuid`` = the turn id) to Claude Code."""
        self._inflight = turn_id
        self._idle.clear()

        async def one() -> AsyncIterator[dict[str, Any]]:
            yield {
                "type": "user",
                "message": {"role": "user", "content": text},
                "parent_tool_use_id": None,
                "uuid": turn_id,
            }

        try:
            await self._client.query(one())
        except BaseException:
            self._inflight = None
            self._idle.set()
            raise

    @property
    def idle(self) -> bool:
        """No turn in flight (the last prompt's result arrived)."""
        return self._idle.is_set()

    async def wait_idle(self, timeout: float) -> bool:
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def interrupt(self) -> None:
        await self._client.interrupt()

    async def close(self) -> None:
        self._stop.set()
        self._go.set()
        task = self._task
        if task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), 20)
        except Exception:  # a timeout too
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


# ------------------------------------------------------------------ one ACP session


class _Prompt:
    """One ``session/prompt`` request, from its arrival until it is answered."""

    __slots__ = ("cancelled", "turn_id")

    def __init__(self) -> None:
        self.turn_id: str | None = None  # set once ``PromptStarted`` was fed
        self.cancelled = asyncio.Event()


class _Session:
    """One ACP session: its ledger and publisher, its current runtime, its prompt lock.

    Cancellation: every prompt is registered (:class:`_Prompt`) the moment its handler runs,
    before it waits for the prompt lock, for a cancelled turn to wind down or for ``PromptStarted``
    to be fed. ``session/cancel`` marks every registered prompt: one already started is settled
    ``cancelled`` at once (and Claude interrupted), one not started yet notices the mark itself
    (after ``PromptStarted``, before anything is sent to Claude). So a cancel is never lost,
    whatever its timing (ACP: the pending prompt MUST be answered ``cancelled``).
    """

    def __init__(
        self,
        agent: ClaudeAcpAgent,
        session_id: str,
        cwd: str,
        publisher: SessionPublisher,
    ) -> None:
        self.agent = agent
        self.id = session_id
        self.cwd = cwd
        self.publisher = publisher
        self.runtime: _Runtime | None = None
        self.prompt_lock = asyncio.Lock()
        self.prompts: list[_Prompt] = []  # received and not answered yet, in arrival order
        self.current_turn: str | None = None
        self.cancelled: set[str] = set()  # turns sent to Claude whose remaining events are dropped
        self.closed = False
        self._started = False  # a runtime was started (or tried): the next one is a replacement

    async def feed(self, event: Event, *, runtime: int | None = None) -> bool:
        if self.closed:
            return False
        return await self.publisher.feed(event, runtime=runtime)

    async def ensure_runtime(self) -> _Runtime:
        """The live runtime, starting (or replacing) one when needed."""
        rt = self.runtime
        if rt is not None and rt.alive:
            if rt.idle:
                return rt
            log.warning("runtime.stuck", session_id=self.id, generation=rt.generation)
        replacing = self._started
        self._started = True
        if rt is not None:
            await rt.close()
            self.runtime = None
            self.cancelled.clear()  # whatever the old runtime still owed is refused as stale anyway
        ledger = self.publisher.ledger
        generation = ledger.runtime + 1 if replacing else ledger.runtime
        resume = await asyncio.to_thread(_has_transcript, self.id, self.cwd)
        options = self.agent.claude_options(self, resume=resume)
        new = _Runtime(self, generation, self.agent.client_factory(options))
        log.info("runtime.start", session_id=self.id, generation=generation, resume=resume)
        await new.start(self.agent.config.connect_timeout)
        if replacing:
            # Only now: the old runtime's loss stays active until a working replacement exists.
            await self.feed(RuntimeReplaced())
        # Tagged with the ledger's generation (no event of it has flowed yet: see ``begin``).
        new.generation = ledger.runtime
        self.runtime = new
        new.begin()
        return new

    async def run_prompt(self, text: str) -> PromptResponse:
        prompt = _Prompt()
        self.prompts.append(prompt)  # before the first await: a cancel from now on sees it
        try:
            return await self._run_prompt(prompt, text)
        finally:
            self.prompts.remove(prompt)

    async def _run_prompt(self, prompt: _Prompt, text: str) -> PromptResponse:
        await self.prompt_lock.acquire()
        drive: asyncio.Future[None] | None = None
        try:
            rt = self.runtime
            if rt is not None and rt.alive and not prompt.cancelled.is_set():
                # A cancelled turn may still be winding down: its result must arrive (and be
                # dropped) before this turn opens. A runtime stuck past the timeout is replaced.
                # A cancel of this prompt ends the wait (nothing will be sent).
                await _first(rt.wait_idle(self.agent.config.idle_timeout), prompt.cancelled.wait())
            if self.closed:  # replaced by session/load, or shutting down, while this prompt waited
                log.info("prompt.session_closed", session_id=self.id)
                return PromptResponse(stop_reason="cancelled")
            turn_id = str(uuid.uuid4())
            await self.feed(PromptStarted(turn_id=turn_id))
            # No await between here and the check: a cancel either saw ``turn_id`` (and settled
            # the turn) or left its mark for this check.
            prompt.turn_id = turn_id
            self.current_turn = turn_id
            log.info("prompt.start", session_id=self.id, turn_id=turn_id)
            try:
                if prompt.cancelled.is_set():
                    log.info("prompt.cancelled_before_start", session_id=self.id, turn_id=turn_id)
                    await self.feed(Cancelled())
                else:
                    drive = asyncio.ensure_future(self._drive(prompt, turn_id, text))
                response = await self._settled(turn_id, drive)
            except RequestError as err:
                log.info("prompt.end", session_id=self.id, turn_id=turn_id, error_code=err.code)
                raise
            finally:
                self.current_turn = None
            log.info("prompt.end", session_id=self.id, turn_id=turn_id, stop_reason=response.stop_reason)
            return response
        finally:
            if drive is None or drive.done():
                self.prompt_lock.release()
            else:  # answered (a cancel) while Claude Code still starts: the next prompt waits for it
                drive.add_done_callback(lambda _: self.prompt_lock.release())

    async def _settled(self, turn_id: str, drive: asyncio.Future[None] | None) -> PromptResponse:
        """The ledger's settlement of the turn, as soon as it exists (a cancel is answered even
        while the runtime is still starting)."""
        settled = asyncio.ensure_future(self.publisher.outcome(turn_id))
        try:
            if drive is not None:
                waiting: set[asyncio.Future[Any]] = {drive, settled}
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            return await settled
        finally:
            settled.cancel()

    async def _drive(self, prompt: _Prompt, turn_id: str, text: str) -> None:
        try:
            try:
                rt = await self.ensure_runtime()
            except Exception as exc:
                log.warning("runtime.start_failed", session_id=self.id, error_type=type(exc).__name__)
                await self.feed(QueryError(message=type(exc).__name__))
                return
            if prompt.cancelled.is_set():
                self.cancelled.discard(turn_id)
                return  # cancelled while the runtime was starting: nothing to send
            try:
                await rt.send(turn_id, text)
            except Exception as exc:
                await self.feed(from_sdk_exception(exc), runtime=rt.generation)
        except Exception as exc:  # an adapter bug: the ledger settles it as an internal error
            log.error("prompt.internal_error", session_id=self.id, error_type=type(exc).__name__)
            with contextlib.suppress(Exception):
                await self.feed(InternalError())

    async def cancel(self) -> None:
        if not self.prompts:
            log.info("cancel.no_running_prompt", session_id=self.id)
            return
        started = []
        for prompt in self.prompts:
            prompt.cancelled.set()
            if prompt.turn_id is not None:
                started.append(prompt.turn_id)
        # A prompt not started yet settles itself (see ``_run_prompt``); the running one is
        # settled here, and Claude interrupted.
        for turn in started:
            if turn != self.current_turn:
                continue
            self.cancelled.add(turn)
            await self.feed(Cancelled())
            rt = self.runtime
            if rt is not None and rt.alive:
                try:
                    await asyncio.wait_for(rt.interrupt(), 10)
                except Exception as exc:  # a timeout too
                    log.warning("runtime.interrupt_failed", session_id=self.id, error_type=type(exc).__name__)

    async def close(self) -> None:
        for prompt in self.prompts:
            prompt.cancelled.set()
        if self.current_turn is not None and not self.closed:
            # The session is going away (replaced by session/load, or shutdown): the running
            # prompt still gets its answer.
            with contextlib.suppress(Exception):
                await self.feed(Cancelled())
        self.closed = True
        if self.runtime is not None:
            await self.runtime.close()
            self.runtime = None


async def _first(*aws: Awaitable[Any]) -> None:
    """Wait until the first of ``aws`` is done; the others are cancelled."""
    tasks = [asyncio.ensure_future(a) for a in aws]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _has_transcript(session_id: str, cwd: str) -> bool:
    return get_session_info(session_id, directory=cwd) is not None


def _prompt_text(blocks: Sequence[Any]) -> str:
    """The prompt as Claude sees it: text blocks, resource links as ``@uri``, embedded text."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(f"@{block.uri}")
        elif kind == "resource":
            text = getattr(block.resource, "text", None)
            if isinstance(text, str):
                parts.append(f"<context uri={block.resource.uri!r}>\n{text}\n</context>")
    return "\n\n".join(p for p in parts if p)


def _credentials_available(env: Mapping[str, str]) -> bool:
    """Whether Claude Code has something to authenticate with (best effort; keychains unseen)."""
    if any(
        env.get(k)
        for k in (
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "CLAUDE_CODE_USE_BEDROCK",
            "CLAUDE_CODE_USE_VERTEX",
            "CLAUDE_CODE_USE_FOUNDRY",
        )
    ):
        return True
    if sys.platform == "darwin":
        return True  # the login lives in the macOS keychain, which is not inspected here
    root = Path(env.get("CLAUDE_CONFIG_DIR") or Path(env.get("HOME", "~")).expanduser() / ".claude")
    return (root / ".credentials.json").is_file()


# ------------------------------------------------------------------ the agent


class ClaudeAcpAgent:
    """The ACP agent (an ``acp.Agent``): one Claude Code runtime per ACP session.

    Args:
        config: how Claude Code is run.
        client_factory: builds the SDK client for a runtime (tests may pass their own).
        env: the environment used to judge ``authenticate`` (default: this process's).
    """

    def __init__(
        self,
        config: AgentConfig | None = None,
        *,
        client_factory: ClientFactory | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config or AgentConfig()
        self.client_factory: ClientFactory = client_factory or ClaudeSDKClient
        self._env = env if env is not None else os.environ
        self._conn: Any = None
        self._negotiated = False
        self._sessions: dict[str, _Session] = {}
        self._answers = MachineAnswers()  # one agent's sessions share their incident machine's answers

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    # -------------------------------------------------------------- session plumbing

    def claude_options(self, session: _Session, *, resume: bool) -> ClaudeAgentOptions:
        """The SDK options of a session's runtime (Claude's environment passes through)."""
        cfg = self.config
        kw: dict[str, Any] = {"cwd": session.cwd}
        if resume:
            kw["resume"] = session.id
        else:
            kw["session_id"] = session.id
        if cfg.model:
            kw["model"] = cfg.model
        if cfg.max_turns is not None:
            kw["max_turns"] = cfg.max_turns
        if cfg.cli_path:
            kw["cli_path"] = cfg.cli_path
        if cfg.permission_mode:
            kw["permission_mode"] = cfg.permission_mode
        kw["stderr"] = _forward_stderr if cfg.cli_stderr else _cli_stderr_logger(session.id)
        return ClaudeAgentOptions(**kw)

    def _open(self, session_id: str, cwd: str) -> _Session:
        epoch = new_epoch()
        observer = StructlogObserver(epoch=epoch)
        ledger = SessionLedger(
            session_id, negotiated=self._negotiated, epoch=epoch, observer=observer, answers=self._answers
        )
        session = _Session(self, session_id, cwd, SessionPublisher(self._conn, ledger))
        self._sessions[session_id] = session
        return session

    def _session(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": session_id, "details": "unknown session"})
        return session

    def _cwd(self, cwd: str) -> str:
        return self.config.cwd or cwd

    # -------------------------------------------------------------- ACP methods

    @_guarded
    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self._negotiated = negotiate_client(client_capabilities)
        name = getattr(client_info, "name", None)
        log.info(
            "agent.initialize",
            negotiated=self._negotiated,
            client=redact(name[:80]) if isinstance(name, str) else None,  # the client's own words
            protocol_version=protocol_version,
        )
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=advertise(AgentCapabilities(load_session=True), self._negotiated),
            auth_methods=[
                AuthMethodAgent(
                    id=AUTH_METHOD_ID,
                    name="Log in to Claude",
                    description="Run `claude /login` in a terminal (or set ANTHROPIC_API_KEY), then continue.",
                )
            ],
            agent_info=Implementation(name="lifecycle-claude-acp", title="Claude (lifecycle)", version=__version__),
        )

    @_guarded
    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        if method_id != AUTH_METHOD_ID:
            raise RequestError.invalid_params({"methodId": method_id, "details": "unknown auth method"})
        ok = _credentials_available(self._env)
        log.info("agent.authenticate", method_id=method_id, ok=ok)
        for session in list(self._sessions.values()):
            await session.feed(AuthStatus(ok=ok))
        if not ok:
            raise RequestError.auth_required({"details": "No Claude credentials found. Run `claude /login`."})
        return AuthenticateResponse()

    @_guarded
    async def new_session(
        self,
        cwd: str,
        additional_directories: Any = None,
        mcp_servers: Any = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        session = self._open(str(uuid.uuid4()), self._cwd(cwd))
        log.info("session.new", session_id=session.id, epoch=session.publisher.ledger.epoch)
        return NewSessionResponse(session_id=session.id)

    @_guarded
    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: Any = None,
        additional_directories: Any = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        cwd = self._cwd(cwd)
        stored = await asyncio.to_thread(get_session_messages, session_id, directory=cwd)
        if not stored:
            raise RequestError.invalid_params({"sessionId": session_id, "details": "no stored Claude session"})
        old = self._sessions.pop(session_id, None)
        if old is not None:
            await old.close()
        session = self._open(session_id, cwd)
        history = load_history(stored)
        log.info(
            "session.load",
            session_id=session_id,
            epoch=session.publisher.ledger.epoch,
            entries=len(history.entries),
        )
        # Replayed through the fresh ledger before the answer (spec: session/load).
        await session.feed(history)
        return LoadSessionResponse()

    @_guarded
    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        text = _prompt_text(prompt)
        if not text.strip():
            raise RequestError.invalid_params({"details": "the prompt has no text"})
        return await session.run_prompt(text)

    @_guarded
    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self._sessions.get(session_id)
        if session is not None:
            log.info("session.cancel", session_id=session_id)
            await session.cancel()

    async def shutdown(self) -> None:
        """Close every runtime (Claude Code processes exit)."""
        sessions = list(self._sessions.values())
        self._sessions.clear()
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)


def _forward_stderr(line: str) -> None:
    sys.stderr.write(line if line.endswith("\n") else line + "\n")


def _cli_stderr_logger(session_id: str) -> Callable[[str], None]:
    # Claude Code's stderr is not ours to print (it may hold anything); only its presence is
    # logged unless ``--cli-stderr`` asks for the lines themselves.
    def note(line: str) -> None:
        log.debug("runtime.cli_stderr", session_id=session_id, chars=len(line))

    return note


class _StdlibToStructlog(logging.Handler):
    """Routes the SDKs' stdlib logging through structlog, so every stderr line is one JSON object."""

    def emit(self, record: logging.LogRecord) -> None:
        fields: dict[str, Any] = {"logger": record.name, "message": record.getMessage()[:500]}
        if record.exc_info and record.exc_info[0] is not None:
            fields["error_type"] = record.exc_info[0].__name__
        try:
            structlog.get_logger(record.name).log(record.levelno, "stdlib.log", **fields)
        except Exception:  # logging must never take the agent down
            self.handleError(record)


# ------------------------------------------------------------------ process entry


def _redact_log_fields(logger: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """A structlog processor: no credential, path or long text reaches a log line, whatever a
    field holds (a client's name, an SDK's log message)."""
    for key, value in event.items():
        if isinstance(value, str) and key != "event":
            event[key] = redact(value if len(value) <= 500 else value[:500] + "…")
    return event


async def serve(config: AgentConfig, input_stream: Any = None, output_stream: Any = None) -> None:
    """Run the agent until the client disconnects (stdio by default), then close every runtime.

    ``input_stream`` / ``output_stream`` (the SDK's convention: the ``asyncio.StreamWriter`` to
    the client and the ``asyncio.StreamReader`` from it) replace stdio; either way the client is
    read and written through :class:`lifecycle.agent.transport.StdioTransport`.
    """
    agent = ClaudeAcpAgent(config)
    if input_stream is None and output_stream is None:
        source, sink = await open_stdio()
        # The protocol owns file descriptor 1 now; anything printed by accident goes to stderr.
        sys.stdout = sys.stderr
    else:
        source, sink = StreamSource(output_stream), StreamSink(input_stream)
    transport = StdioTransport(source, sink, reserved=reserved_kwargs(agent))
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        for sig in (signal.SIGTERM, signal.SIGINT):
            if main is not None:
                loop.add_signal_handler(sig, main.cancel)
    log.info("agent.start", version=__version__)
    try:
        # The SDK answers -32601 for the ``acp.Agent`` methods this agent leaves out.
        await acp.run_agent(cast(acp.Agent, agent), transport)
    finally:
        await agent.shutdown()
        log.info("agent.stop")


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    return int(value) if value else None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="lifecycle acp",
        description="Run the reference Claude ACP agent over stdio (sessionFailure extension embedded). "
        "Claude's environment (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, CLAUDE_CONFIG_DIR, ...) passes through.",
    )
    p.add_argument("--model", default=os.environ.get("LIFECYCLE_ACP_MODEL"), help="Claude model")
    p.add_argument("--cwd", default=os.environ.get("LIFECYCLE_ACP_CWD"), help="working directory for every session")
    p.add_argument("--max-turns", type=int, default=_env_int("LIFECYCLE_ACP_MAX_TURNS"), help="turn limit per prompt")
    p.add_argument("--cli-path", default=os.environ.get("LIFECYCLE_ACP_CLI"), help="Claude Code executable")
    p.add_argument(
        "--permission-mode",
        default=os.environ.get("LIFECYCLE_ACP_PERMISSION_MODE"),
        choices=["default", "acceptEdits", "plan", "bypassPermissions"],
        help="Claude's permission mode",
    )
    p.add_argument(
        "--log-level",
        default=os.environ.get("LIFECYCLE_ACP_LOG_LEVEL", "info"),
        choices=["debug", "info", "warning", "error"],
        help="stderr log level",
    )
    p.add_argument("--cli-stderr", action="store_true", help="forward Claude Code's stderr to stderr")
    return p


def config_from_args(args: argparse.Namespace) -> AgentConfig:
    return replace(
        AgentConfig(),
        model=args.model or None,
        cwd=args.cwd or None,
        max_turns=args.max_turns,
        cli_path=args.cli_path or None,
        permission_mode=args.permission_mode or None,
        cli_stderr=bool(args.cli_stderr),
    )


def cli_main(argv: list[str]) -> int:
    """``lifecycle acp [options]``: serve ACP on stdin/stdout until the client goes away."""
    args = build_parser().parse_args(argv)
    level = getattr(logging, str(args.log_level).upper())
    configure_logging(sys.stderr, level=level)
    structlog.configure(processors=[_redact_log_fields, *structlog.get_config()["processors"]])
    root = logging.getLogger()
    root.handlers[:] = [_StdlibToStructlog()]
    root.setLevel(max(level, logging.WARNING))
    try:
        asyncio.run(serve(config_from_args(args)))
    except (KeyboardInterrupt, asyncio.CancelledError):
        return 0
    return 0

