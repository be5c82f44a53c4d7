"""One Claude runtime: a ``ClaudeSDKClient`` of one session, in one task (connect, consume,
disconnect). See :mod:`lifecycle.agent` for the rules."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any, Protocol

import structlog
from claude_agent_sdk import ClaudeAgentOptions

from ..claude import from_sdk_exception, from_sdk_message
from ..errors import LifecycleError
from ..events import ApiRetry, Assistant, Event, InternalError, ModelFallback, QueryEnded, QueryError, Result
from .mcp import McpServers, report_startup_failures
from .prompt import PromptContent
from .stream import StreamRenderer


class _Owner(Protocol):
    """What a runtime uses of its session (:class:`lifecycle.agent.session._Session`)."""

    id: str
    cancelled: set[str]
    renderer: StreamRenderer
    mcp: McpServers

    @property
    def runtime_generation(self) -> int: ...

    async def feed(self, event: Event, *, runtime: int | None = None) -> bool: ...

    async def show(self, updates: list[dict[str, Any]]) -> None: ...


__all__ = ["ClientFactory", "SdkClient"]

log = structlog.get_logger("lifecycle.agent")

# Events that belong to a turn: dropped while the runtime still works on a cancelled one.
_TURN_EVENTS = (Assistant, Result, ApiRetry, ModelFallback)


class SdkClient(Protocol):
    """What a runtime uses of ``claude_agent_sdk.ClaudeSDKClient`` (tests may pass a stand-in)."""

    async def connect(self) -> None: ...

    async def disconnect(self) -> None: ...

    def receive_messages(self) -> AsyncIterator[Any]: ...

    async def query(self, prompt: AsyncIterator[dict[str, Any]]) -> None: ...

    async def interrupt(self) -> None: ...


ClientFactory = Callable[[ClaudeAgentOptions], SdkClient]


class _Runtime:
    """One ``ClaudeSDKClient`` of one session, in one task (connect, consume, disconnect)."""

    def __init__(self, session: _Owner, generation: int, client: SdkClient) -> None:
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
            await self._close_tools()
            event = from_sdk_exception(exc)
            await self.session.feed(event, runtime=self.generation)
            if not isinstance(event, QueryError):
                # The SDK's ResultError: Claude Code exited after an error result (the result
                # itself was seen). A long-lived runtime that exits is lost, whatever it said last.
                await self.session.feed(QueryError(message=type(exc).__name__), runtime=self.generation)
            return
        self.ended = True
        log.info("runtime.ended", session_id=self.session.id, generation=self.generation)
        await self._close_tools()
        await self.session.feed(QueryEnded(), runtime=self.generation)

    async def _close_tools(self) -> None:
        """Claude Code is gone: the tool calls it left open end ``failed`` (not in a cancelled turn,
        which shows nothing more, nor from a replaced runtime)."""
        turn = self._inflight
        if (turn is None or turn not in self.session.cancelled) and self.generation_current():
            with contextlib.suppress(Exception):
                await self.session.show(self.session.renderer.close_open_tools())

    async def _on_message(self, message: object) -> None:
        turn = self._inflight
        kind = type(message).__name__
        dropped = turn is not None and turn in self.session.cancelled
        renderer = self.session.renderer
        if kind == "StreamEvent":
            # The hot path of a streamed turn: chunks straight to the client, nothing to judge.
            if not dropped and self.generation_current():
                await self.session.show(renderer.stream_event(message))
            return
        if kind == "SystemMessage" and self.generation_current():
            await report_startup_failures(self.session, message)  # a client MCP server that failed to start
        is_result = kind == "ResultMessage"
        try:
            event = from_sdk_message(message)
        except LifecycleError:
            log.warning("runtime.malformed_message", session_id=self.session.id, kind=kind)
            event = None
        updates: list[dict[str, Any]] = []
        if kind == "AssistantMessage":
            updates, shown = renderer.assistant(message)
            if shown and isinstance(event, Assistant):
                event = replace(event, shown=True)
            if (
                isinstance(event, Assistant)
                and event.refusal is None
                and getattr(message, "stop_reason", None) == "refusal"
            ):
                event = replace(event, refusal=renderer.refusal())
        elif kind == "UserMessage":
            updates = renderer.user(message)
        elif is_result and not dropped:
            updates = renderer.close_open_tools() + renderer.result(message)
        if dropped:
            if event is not None and isinstance(event, _TURN_EVENTS):
                log.info("runtime.cancelled_turn_event_dropped", session_id=self.session.id, turn_id=turn)
                event = None
        elif updates and self.generation_current():
            await self.session.show(updates)
        if event is not None:
            await self.session.feed(event, runtime=self.generation)
        if is_result:
            # The turn Claude was working on is over; a cancelled one stops filtering here.
            if turn is not None:
                self.session.cancelled.discard(turn)
            self._inflight = None
            self._idle.set()

    def generation_current(self) -> bool:
        """Whether this runtime is the session's current one (a replaced runtime shows nothing)."""
        return self.session.runtime_generation == self.generation

    async def send(self, turn_id: str, content: PromptContent) -> None:
        """Write the user message (``uuid`` = the turn id; ``content`` a string or content blocks,
        :func:`lifecycle.agent.prompt.prompt_content`) to Claude Code."""
        self._inflight = turn_id
        self._idle.clear()

        async def one() -> AsyncIterator[dict[str, Any]]:
            yield {
                "type": "user",
                "message": {"role": "user", "content": content},
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

    async def server_info(self) -> dict[str, Any] | None:
        """Claude Code's answer to the SDK's ``initialize`` (models, commands), if it gave one."""
        getter = getattr(self._client, "get_server_info", None)
        if getter is None:
            return None
        info = await getter()
        return info if isinstance(info, dict) else None

    async def set_mode(self, mode: str) -> None:
        """Switch Claude Code's permission mode (no restart); raises what Claude Code answered."""
        await self._client.set_permission_mode(mode)  # type: ignore[attr-defined]

    async def set_model(self, model: str | None) -> None:
        """Switch Claude Code's model (None: its default)."""
        await self._client.set_model(model)  # type: ignore[attr-defined]

    async def set_effort(self, level: str | None) -> None:
        """Switch the effort level (None: the model's default) with the control request the
        reference adapter's SDK sends (``apply_flag_settings``); the Python SDK has no public call
        for it."""
        query: Any = getattr(self._client, "_query", None)
        send = getattr(query, "_send_control_request", None)
        if send is None:
            raise RuntimeError("this Claude SDK cannot change the effort of a running session")
        await send({"subtype": "apply_flag_settings", "settings": {"effortLevel": level}})

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
