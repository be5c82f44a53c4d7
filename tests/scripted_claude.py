"""Not a test: the real agent (``lifecycle.agent``) with a scripted Claude, in process; the randomized
cancel tests (``test_agent_session.py``), the stdio transport's (``test_agent_transport.py``) and the
handler guard's (``test_agent_server.py``) share it.

* ``World``: the knobs of one randomized run (delays: a seeded number of yields to the event loop);
* ``FakeClaude``: a stand-in for ``ClaudeSDKClient`` whose every step takes a random number of loop
  iterations; a stalled turn ends (with its result) only when interrupted;
* ``Wire``: the real agent on one end of the SDK's in-memory transport, a real ACP client on the other;
* ``MemorySource``, ``MemorySink``, ``Served``: the real agent served through
  :class:`lifecycle.agent.transport.StdioTransport` over memory ends.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import acp
from acp.agent.connection import AgentSideConnection
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import ClientCapabilities
from acp_harness import AIR
from sdk_messages import result_message


class World:
    """The shared knobs of one randomized run: delays drawn from ``rnd`` (a number of yields to the
    event loop, never wall-clock time, so a seed is one interleaving on any machine), and whether
    Claude answers a prompt (``answer``) or works on it until interrupted."""

    def __init__(self, rnd: random.Random) -> None:
        self.rnd = rnd
        self.answer = False
        self.clients: list[FakeClaude] = []
        self.tasks: set[asyncio.Future[None]] = set()

    async def delay(self) -> None:
        kind = self.rnd.randrange(4)
        if kind == 1:
            await asyncio.sleep(0)
        elif kind == 2:
            for _ in range(self.rnd.randrange(1, 8)):
                await asyncio.sleep(0)
        elif kind == 3:  # a long delay: many loop iterations (other tasks run meanwhile)
            for _ in range(self.rnd.randrange(8, 64)):
                await asyncio.sleep(0)

    def later(self, coro: Awaitable[None]) -> None:
        async def go() -> None:
            await self.delay()
            await coro

        task = asyncio.ensure_future(go())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


class FakeClaude:
    """A stand-in for ``ClaudeSDKClient`` (the SDK's real message classes): every step takes a
    random number of loop iterations; a stalled turn ends (with its result) only when interrupted."""

    def __init__(self, options: Any, world: World) -> None:
        self.options = options
        self.world = world
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.sent: list[str] = []
        self.stalled: list[str] = []

    async def connect(self) -> None:
        await self.world.delay()

    async def disconnect(self) -> None:
        self.queue.put_nowait(None)

    async def receive_messages(self) -> AsyncIterator[Any]:
        while (message := await self.queue.get()) is not None:
            yield message

    async def query(self, prompt: AsyncIterator[dict[str, Any]]) -> None:
        async for message in prompt:
            self.sent.append(message["uuid"])
        await self.world.delay()
        turn = self.sent[-1]
        if self.world.answer:
            self.world.later(self._answer(turn))
        else:
            self.stalled.append(turn)

    async def _answer(self, turn: str) -> None:
        from claude_agent_sdk import AssistantMessage, TextBlock

        self.queue.put_nowait(AssistantMessage(content=[TextBlock(text=f"answer to {turn}")], model="claude-opus-5-5"))
        await self.world.delay()
        self.queue.put_nowait(_result())

    async def interrupt(self) -> None:
        await self.world.delay()
        stalled, self.stalled = self.stalled, []
        for _ in stalled:  # the interrupted turn winds down: its result comes, some time later
            self.world.later(self._result())

    async def _result(self) -> None:
        self.queue.put_nowait(_result())


def _result() -> Any:
    return result_message(session_id="x", result="", stop_reason="end_turn")


class Wire:
    """The real agent on one end of the SDK's in-memory transport, a real ACP client on the other."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.chunks: list[str] = []
        agent_end, client_end = acp._transport.memory_transport_pair()
        self.agent_conn = AgentSideConnection(agent, agent_end)
        self.conn = ClientSideConnection(lambda _: self, client_end, observers=[self._observe])  # type: ignore[arg-type,return-value]
        self.frames: list[dict[str, Any]] = []
        self.prompts_sent = 0

    def _observe(self, ev: StreamEvent) -> None:
        if ev.direction == StreamDirection.INCOMING:
            self.frames.append(ev.message)
        elif ev.message.get("method") == "session/prompt":
            self.prompts_sent += 1

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        if type(update).__name__ == "AgentMessageChunk":
            self.chunks.append(update.content.text)

    async def open(self, capable: bool) -> str:
        caps = ClientCapabilities(field_meta=AIR) if capable else ClientCapabilities()
        await self.conn.initialize(protocol_version=1, client_capabilities=caps)
        return str((await self.conn.new_session(cwd="/tmp")).session_id)

    async def prompt(self, sid: str, text: str) -> asyncio.Future[Any]:
        """Send a prompt; returns once the request is on the wire (its answer: the future)."""
        sent = self.prompts_sent
        task = asyncio.ensure_future(self.conn.prompt(session_id=sid, prompt=[acp.text_block(text)]))
        while self.prompts_sent == sent and not task.done():
            await asyncio.sleep(0)
        return task


class MemorySource:
    """Bytes for the transport, chunk by chunk (``b""``: end of input); counts what was taken."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()
        self.taken = 0

    def feed(self, data: bytes) -> None:
        self.queue.put_nowait(data)

    async def read(self) -> bytes:
        data = await self.queue.get()
        self.taken += 1
        return data

    def close(self) -> None:
        pass


class MemorySink:
    """Collects what the transport writes; ``gate`` cleared = the client stopped reading;
    ``broken`` = the client closed its end."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.gate = asyncio.Event()
        self.gate.set()
        self.broken = False

    async def write(self, data: bytes) -> None:
        await self.gate.wait()
        if self.broken:
            raise BrokenPipeError(32, "Broken pipe")
        self.data += data

    def close(self) -> None:
        pass

    def frames(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in bytes(self.data).splitlines()]


class Served:
    """The real agent (fake Claude) served through :class:`StdioTransport` over memory ends."""

    def __init__(self, **transport_kw: Any) -> None:
        from lifecycle.agent import ClaudeAcpAgent
        from lifecycle.agent.transport import StdioTransport, reserved_kwargs

        self.world = World(random.Random(0))
        self.world.answer = True

        def factory(options: Any) -> Any:
            self.world.clients.append(FakeClaude(options, self.world))
            return self.world.clients[-1]

        self.agent = ClaudeAcpAgent(client_factory=factory)
        self.source, self.sink = MemorySource(), MemorySink()
        self.transport = StdioTransport(self.source, self.sink, reserved=reserved_kwargs(self.agent), **transport_kw)
        self.task = asyncio.ensure_future(acp.run_agent(self.agent, self.transport))  # type: ignore[arg-type]
        self.next_id = 0

    def write(self, *lines: bytes) -> None:
        self.source.feed(b"".join(line + b"\n" for line in lines))

    def request(self, method: Any, params: Any) -> int:
        self.next_id += 1
        self.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode())
        return self.next_id

    async def reply(self, msg_id: Any, timeout: float = 5) -> dict[str, Any]:
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            for frame in self.sink.frames():
                if frame.get("id") == msg_id and "method" not in frame:
                    return frame
            await asyncio.sleep(0.005)
        raise AssertionError(f"no reply to {msg_id!r}: {self.sink.frames()[-3:]}")

    async def call(self, method: Any, params: Any) -> dict[str, Any]:
        return await self.reply(self.request(method, params))

    def null_errors(self) -> list[dict[str, Any]]:
        return [f["error"] for f in self.sink.frames() if "id" in f and f["id"] is None]

    async def end(self) -> None:
        self.source.feed(b"")
        await asyncio.wait_for(self.task, 10)
        await self.agent.shutdown()
