"""One Claude runtime: a ``ClaudeSDKClient`` of one session, in one task: a pump.

Rules
-----
* The runtime connects Claude Code, hands each SDK message with its generation to one call (the
  session's :meth:`lifecycle.agent.session._Session.receive`, given as ``deliver``), and reports
  once how the stream ended (``end``: the exception, or None); then it disconnects. It reads no
  message itself: what a message shows and means is :mod:`lifecycle.agent.translate`'s.
* ``deliver`` answers whether the message ended the turn in flight (a result): the runtime is
  then idle, so the next prompt may be sent.
* Nothing flows before :meth:`_Runtime.begin` (the session has tagged this generation current).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient

from . import sdk
from .config import AgentConfig
from .launch import EarlyCli
from .meter import MeterMemory
from .modes import Offered
from .prompt import PromptContent

__all__ = ["ClientFactory", "Deliver", "End", "Launcher", "SdkClient"]

log = structlog.get_logger("lifecycle.agent")

#: A message of the runtime and its generation -> whether it ended the turn in flight.
Deliver = Callable[[object, int], Awaitable[bool]]
#: The runtime's generation and how its stream ended (None: it ended; else what it raised).
End = Callable[[int, BaseException | None], Awaitable[None]]


class SdkClient(Protocol):
    """What a runtime uses of ``claude_agent_sdk.ClaudeSDKClient`` (tests may pass a stand-in)."""

    async def connect(self) -> None: ...

    async def disconnect(self) -> None: ...

    def receive_messages(self) -> AsyncIterator[Any]: ...

    async def query(self, prompt: AsyncIterator[dict[str, Any]]) -> None: ...

    async def interrupt(self) -> None: ...


ClientFactory = Callable[[ClaudeAgentOptions], SdkClient]


@dataclass(frozen=True, slots=True)
class Launcher:
    """How the agent's sessions start their Claude Code: the agent's settings, the SDK client
    factory (the SDK's, or a test's stand-in) and what Claude Code offered on this machine. The
    agent makes one and gives it to each session (nothing calls back up to the agent)."""

    config: AgentConfig
    client_factory: ClientFactory
    offered: Offered
    meter: MeterMemory = field(default_factory=MeterMemory)  # the windows last read (meter.py)
    route: dict[str, str] = field(default_factory=dict)  # a client's provider route (providers.py)

    def client(
        self,
        options: ClaudeAgentOptions,
        early: EarlyCli | None,
        on_permission_request: Callable[[Mapping[str, Any]], None] | None = None,
        *,
        prompt_suggestions: bool = False,
    ) -> SdkClient:
        """The SDK client of a runtime, on our transport (:mod:`lifecycle.agent.adopt`): it adopts
        ``early`` when that is the Claude Code these options start, reports each raw
        ``can_use_tool`` request to ``on_permission_request`` (the flags the SDK drops), and asks
        Claude Code for prompt suggestions when ``prompt_suggestions`` (the client shows them)."""
        if self.client_factory is not ClaudeSDKClient:  # a test's stand-in: the early one is not used
            if early is not None:
                early.discard("client_factory")
            return self.client_factory(options)
        from .adopt import AdoptingTransport, SuggestingClient

        transport = AdoptingTransport(
            options, early, on_permission_request=on_permission_request, prompt_suggestions=prompt_suggestions
        )
        return SuggestingClient(options, transport=transport)


class _Runtime:
    """One ``ClaudeSDKClient`` of one session, in one task (connect, pump, disconnect)."""

    def __init__(self, session_id: str, generation: int, client: SdkClient, deliver: Deliver, end: End) -> None:
        self.session_id = session_id
        self.generation = generation
        self._client = client
        self._deliver = deliver
        self._end = end
        self._connected: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._go = asyncio.Event()
        self._stop = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
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
        """Let messages flow (after the session tagged this generation current)."""
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
        reader = asyncio.create_task(self._pump())
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
            log.info("runtime.closed", session_id=self.session_id, generation=self.generation)

    async def _pump(self) -> None:
        await self._go.wait()
        try:
            async for message in self._client.receive_messages():
                if await self._deliver(message, self.generation):
                    self._idle.set()  # the turn Claude was working on is over
        except Exception as exc:
            self.ended = True
            log.info("runtime.failed", session_id=self.session_id, generation=self.generation,
                     error_type=type(exc).__name__)  # fmt: skip
            await self._end(self.generation, exc)
            return
        self.ended = True
        log.info("runtime.ended", session_id=self.session_id, generation=self.generation)
        await self._end(self.generation, None)

    async def send(self, turn_id: str, content: PromptContent, *, priority: str | None = None) -> None:
        """Write the user message (``uuid`` = the turn id, or a steer's id; ``content`` a string or
        content blocks, :func:`lifecycle.agent.prompt.prompt_content`) to Claude Code; ``priority``
        (a steer's: ``now`` or ``later``) tells Claude Code how to deliver it into a running turn."""
        self._idle.clear()
        message: dict[str, Any] = {
            "type": "user",
            "message": {"role": "user", "content": content},
            "parent_tool_use_id": None,
            "uuid": turn_id,
        }
        if priority is not None:
            message["priority"] = priority

        async def one() -> AsyncIterator[dict[str, Any]]:
            yield message

        try:
            await self._client.query(one())
        except BaseException:
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

    async def stop_task(self, task_id: str) -> None:
        """Stop Claude Code's task ``task_id`` (a subagent: its agent id), not the turn."""
        await self._client.stop_task(task_id)  # type: ignore[attr-defined]

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
        send = sdk.control_request_sender(self._client)
        if send is None:
            raise RuntimeError("this Claude SDK cannot change the effort of a running session")
        await send({"subtype": "apply_flag_settings", "settings": {"effortLevel": level}})

    async def generate_title(self, description: str) -> str | None:
        """Claude Code's title for a session about ``description``, stored in its transcript
        (``generate_session_title``, the control request the reference adapter's SDK sends; the
        Python SDK has no call for it). None when it gives none."""
        send = sdk.control_request_sender(self._client)
        if send is None:
            return None
        answer = await asyncio.wait_for(
            send({"subtype": "generate_session_title", "description": description, "persist": True}), 120
        )
        title = answer.get("title") if isinstance(answer, dict) else None
        return title if isinstance(title, str) else None

    async def get_usage(self) -> object:
        """Claude Code's usage reading (``get_usage``, the control request of the reference
        adapter's SDK's experimental usage call; the Python SDK has no call for it): the session's
        cost and, on a claude.ai login, the account's windows. None when it gives none in 10 s."""
        send = sdk.control_request_sender(self._client)
        if send is None:
            return None
        try:
            return await asyncio.wait_for(send({"subtype": "get_usage"}), 10)
        except Exception as exc:  # a timeout, an error answer, Claude Code gone
            log.info("runtime.usage_unavailable", error_type=type(exc).__name__)
            return None

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
