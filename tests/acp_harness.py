"""The in-process ACP harness: an agent and a client joined by the ACP SDK's in-memory transport.

* :class:`Wire`: both ends of one in-memory connection, with every frame the client received;
* :class:`GlueAgent`: a small ACP agent that embeds the ledger through ``lifecycle.acp`` and plays
  a script of :data:`Step` per prompt; :func:`run`: a coroutine bounded to 10 s;
* :class:`FakeClaude`: a stand-in for ``ClaudeSDKClient`` (the SDK's real message classes, no CLI
  process); :func:`recording_agent`: the real ``ClaudeAcpAgent`` over such stand-ins;
* :data:`AIR`: a client's capability ``_meta`` that negotiates ``sessionFailure``.

Rules: this is not a test module (no tests here, and none imports a ``test_*`` module); it asserts
nothing about the code under test; the real CLI runs in tests/e2e/ instead.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.agent.connection import AgentSideConnection
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import AgentCapabilities, ClientCapabilities, InitializeResponse, NewSessionResponse, PromptResponse
from sdk_messages import result_message

from lifecycle import ClientProjection, PromptStarted, SessionLedger
from lifecycle.acp import SessionPublisher, advertise, negotiate_client, new_epoch
from lifecycle.events import Event

AIR = {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}

Step = Event | Callable[[SessionPublisher, str], Awaitable[None]]


# ------------------------------------------------------------------ a small agent on the glue


class GlueAgent:
    """An ACP agent that embeds the ledger through the glue and plays a script per prompt."""

    def __init__(
        self,
        *,
        caps_meta: dict[str, Any] | None = None,
        response_meta: dict[str, Any] | None = None,
        sink: Callable[[Any], Any] | None = None,
    ) -> None:
        self.caps_meta = caps_meta
        self.response_meta = response_meta
        self.sink = sink
        self.negotiated: bool | None = None
        self.publishers: dict[str, SessionPublisher] = {}
        self.scripts: list[list[Step]] = []
        self.turns: list[str] = []

    def on_connect(self, conn: AgentSideConnection) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, **kw: Any) -> Any:
        self.negotiated = negotiate_client(client_capabilities)
        caps = advertise(AgentCapabilities(load_session=True, field_meta=self.caps_meta), self.negotiated)
        return InitializeResponse(protocol_version=acp.PROTOCOL_VERSION, agent_capabilities=caps)

    async def new_session(self, cwd: str, **kw: Any) -> NewSessionResponse:
        assert self.negotiated is not None
        sid = str(uuid.uuid4())
        ledger = SessionLedger(sid, negotiated=self.negotiated, epoch=new_epoch())
        sink = self.sink(self.conn) if self.sink else self.conn
        self.publishers[sid] = SessionPublisher(sink, ledger, response_meta=self.response_meta)
        return NewSessionResponse(session_id=sid)

    async def prompt(self, session_id: str, prompt: list[Any], **kw: Any) -> PromptResponse:
        pub = self.publishers[session_id]
        turn_id = str(uuid.uuid4())
        self.turns.append(turn_id)
        await pub.feed(PromptStarted(turn_id=turn_id))
        for step in self.scripts.pop(0):
            if callable(step):
                await step(pub, turn_id)
            else:
                await pub.feed(step)
        return await pub.outcome(turn_id)


class RecordingClient:
    """An ACP client that records every update its handler is called with."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        self.updates.append((session_id, update))


#: An Anthropic API key in the shape the masking recognises (made up; never a real one).
FAKE_API_KEY = "sk-ant-api03-" + "Nq7hoK2mP9vL4nR8tW1yB5cH3jF6dG0sA" + "-FAKEfakeFAKE"


def published(updates: list[dict[str, Any]], *, session_id: str = "s1") -> list[dict[str, Any]]:
    """What a client receives of ``updates`` sent through a real :class:`SessionPublisher`'s
    ``show`` (checked by the SDK's models, texts masked), as wire dicts."""
    client = RecordingClient()

    async def go() -> None:
        await SessionPublisher(client, SessionLedger(session_id, negotiated=True, epoch="e")).show(updates)

    asyncio.run(go())
    assert {sid for sid, _ in client.updates} <= {session_id}
    return [update.model_dump(by_alias=True, exclude_none=True) for _, update in client.updates]


class Wire:
    """Both ends of one in-memory ACP connection, with every frame the client received."""

    def __init__(self, agent: GlueAgent) -> None:
        self.agent = agent
        self.client = RecordingClient()
        self.frames: list[dict[str, Any]] = []
        agent_end, client_end = acp._transport.memory_transport_pair()
        self.agent_conn = AgentSideConnection(agent, agent_end)  # type: ignore[arg-type]
        self.conn = ClientSideConnection(
            lambda _: self.client,  # type: ignore[arg-type,return-value]
            client_end,
            observers=[self._observe],
        )

    def _observe(self, ev: StreamEvent) -> None:
        if ev.direction == StreamDirection.INCOMING:
            self.frames.append(ev.message)

    async def open(self, meta: dict[str, Any] | None = AIR) -> str:
        caps = ClientCapabilities(field_meta=meta) if meta is not None else None
        await self.conn.initialize(protocol_version=1, client_capabilities=caps)
        return (await self.conn.new_session(cwd="/tmp")).session_id

    async def prompt(self, sid: str, *script: Step) -> PromptResponse:
        self.agent.scripts.append(list(script))
        return await self.conn.prompt(session_id=sid, prompt=[acp.text_block("hi")])

    def projection(self) -> ClientProjection:
        seen = ClientProjection()
        seen.receive_all(self.frames)
        return seen

    def results(self) -> list[dict[str, Any]]:
        return [f for f in self.frames if "id" in f and "method" not in f]


def run(coro: Awaitable[Any], timeout: float = 10) -> Any:
    """Run ``coro`` to its end in a new event loop, failing after ``timeout`` seconds."""

    async def bounded() -> Any:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


# ------------------------------------------------------------------ the reference agent, fast
#
# ``lifecycle.agent`` over the same in-memory pair, with a stand-in for ``ClaudeSDKClient``.


class FakeClaude:
    """Answers every prompt with one real-model text; ``connect`` can be made to fail."""

    def __init__(self, options: Any, *, fail_connect: bool = False) -> None:
        self.options = options
        self.fail_connect = fail_connect
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.sent: list[dict[str, Any]] = []

    async def connect(self) -> None:
        if self.fail_connect:
            from claude_agent_sdk import CLIConnectionError

            raise CLIConnectionError("Claude Code not found at /nowhere/claude")

    async def disconnect(self) -> None:
        self.queue.put_nowait(None)

    async def receive_messages(self) -> Any:
        while (message := await self.queue.get()) is not None:
            yield message

    async def query(self, prompt: Any) -> None:
        from claude_agent_sdk import AssistantMessage, TextBlock

        async for message in prompt:
            self.sent.append(message)
        self.queue.put_nowait(AssistantMessage(content=[TextBlock(text="hello")], model="claude-opus-5-5"))
        self.queue.put_nowait(result_message(session_id="x", result="hello", stop_reason="end_turn"))

    async def interrupt(self) -> None:
        return None


def recording_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, claude: type[FakeClaude] = FakeClaude
) -> tuple[Any, list[Any]]:
    """A :class:`ClaudeAcpAgent` whose runtimes are ``claude`` stand-ins, and the list of them."""
    from lifecycle.agent import ClaudeAcpAgent

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))  # no transcript lookups in the real ~/.claude
    clients: list[FakeClaude] = []

    def factory(options: Any) -> Any:
        clients.append(claude(options))
        return clients[-1]

    return ClaudeAcpAgent(client_factory=factory), clients
