"""Hardening of the reference agent (``lifecycle.agent``) and its edges, in process.

* Cancel is never lost: a randomized test over the interleavings of prompts, ``session/cancel``,
  runtime start, a turn still winding down and Claude's own answers, driving the real agent code
  over the ACP SDK's in-memory transport with a fake Claude runtime (the CLI is not the point
  here; tests/e2e/test_hostile_client.py runs the real one).
* The stdio transport (:mod:`lifecycle.agent.transport`): every bad line is answered (``-32700`` /
  ``-32600`` with ``id: null``) and the next request still is; error replies carry short excerpts
  only; the output backlog is bounded.
* Redaction: a secret found once is masked wherever it recurs; credentials are masked in prose
  with the rest byte for byte; header lines are never title material.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

import acp
import pytest
import structlog.testing
from acp.agent.connection import AgentSideConnection
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import ClientCapabilities
from acp_harness import AIR, run
from sdk_messages import result_message

# ------------------------------------------------------------------ cancel, over every interleaving


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


async def _yields(rnd: random.Random) -> None:
    for _ in range(rnd.choice([0, 0, 1, 2, 3, 5, 8, 13])):
        await asyncio.sleep(0)
    if rnd.random() < 0.2:  # now and then a long delay: many loop iterations, not wall-clock time
        for _ in range(rnd.randrange(8, 64)):
            await asyncio.sleep(0)


async def cancel_scenario(seed: int) -> dict[str, Any]:
    """One interleaving; returns what happened (asserted by the caller)."""
    from lifecycle.agent import AgentConfig, ClaudeAcpAgent

    rnd = random.Random(seed)
    world = World(rnd)

    def factory(options: Any) -> Any:
        world.clients.append(FakeClaude(options, world))
        return world.clients[-1]

    # An interrupt that reaches the fake before its turn stalled leaves that turn without a result
    # (Claude Code stuck): the next prompt waits ``idle_timeout`` for it, then replaces the runtime
    # (4 seeds in 50). A whole run takes about 10 ms of loop time, so 1 s is ample and keeps the
    # 200 seeds from spending a minute waiting.
    agent = ClaudeAcpAgent(AgentConfig(idle_timeout=1.0, connect_timeout=5.0), client_factory=factory)
    wire = Wire(agent)
    sid = await wire.open(capable=rnd.random() < 0.5)
    steps: list[str] = []
    if rnd.random() < 0.5:  # a runtime is already running (else the burst's prompt starts one)
        world.answer = True
        warm = await (await wire.prompt(sid, "warm up"))
        assert warm.stop_reason == "end_turn"
        steps.append("warm")
    world.answer = False
    if rnd.random() < 0.5:  # a cancelled turn is still winding down when the burst arrives
        first = await wire.prompt(sid, "winding down")
        await _yields(rnd)
        await wire.conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(first, 5)).stop_reason == "cancelled"
        steps.append("winding")
    # the burst: one or two prompts, then the cancel right behind them (or a little later)
    burst = [await wire.prompt(sid, "burst 1")]
    if rnd.random() < 0.3:
        await _yields(rnd)
        burst.append(await wire.prompt(sid, "burst 2"))
    await _yields(rnd)
    await wire.conn.cancel(session_id=sid)
    answers = [(await asyncio.wait_for(b, 5)).stop_reason for b in burst]
    steps.append(f"burst{len(burst)}")
    # afterwards, a prompt Claude answers gets its own answer and nothing of the cancelled turns
    world.answer = True
    start = len(wire.chunks)
    after = await asyncio.wait_for(await wire.prompt(sid, "after"), 5)
    session = agent._sessions[sid]
    result = {
        "steps": steps,
        "answers": answers,
        "after": after.stop_reason,
        "after_chunks": wire.chunks[start:],
        "last_sent": world.clients[-1].sent[-1] if world.clients else None,
        "pending": len(session.prompts),
    }
    await agent.shutdown()
    return result


@pytest.mark.parametrize("block", range(4))
def test_cancel_is_never_lost_whatever_the_interleaving(
    block: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))  # no transcript lookups in the real ~/.claude
    seen: set[tuple[str, ...]] = set()
    for seed in range(block * 50, block * 50 + 50):
        out = run(cancel_scenario(seed), 20)
        assert out["answers"] == ["cancelled"] * len(out["answers"]), (seed, out)
        assert out["after"] == "end_turn", (seed, out)
        # exactly the answer to the last turn Claude received: nothing of a cancelled one leaked
        assert out["after_chunks"] == [f"answer to {out['last_sent']}"], (seed, out)
        assert out["pending"] == 0, (seed, out)
        seen.add(tuple(out["steps"]))
    # the runs covered every shape of scenario
    assert len(seen) >= 6, seen


# ------------------------------------------------------------------ the stdio transport


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


INIT = {"protocolVersion": 1, "clientCapabilities": {"_meta": AIR}}
DEEP = b"[" * 50_000 + b"]" * 50_000

#: (line, the error code of its ``id: null`` reply, or None: no reply at all)
BAD_LINES: list[tuple[bytes, int | None]] = [
    (b"[1,2,3]", -32600),
    (b"5", -32600),
    (b'"hello"', -32600),
    (b"true", -32600),
    (b"null", -32600),
    (b"[]", -32600),
    (b'[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}]', -32600),
    (b"{}", -32600),
    (b'{"jsonrpc":"2.0","result":{}}', -32600),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"initialize","params":{}}', -32600),
    (b'{"jsonrpc":"2.0","id":true,"method":"initialize","params":{}}', -32600),
    (b'{"jsonrpc":"2.0","id":[1],"method":"initialize","params":{}}', -32600),
    (b'{"jsonrpc":"2.0","id":"' + b"i" * 300 + b'","method":"initialize","params":{}}', -32600),
    (b'{"jsonrpc":"2.0","method":["session/new"],"params":{}}', -32600),
    (b'{"jsonrpc":"2.0","method":"session/cancel","params":' + b'{"a":' * 200 + b"1" + b"}" * 201, -32600),
    (b'{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"\xff"}}', -32700),
    (b"\xc3\x28", -32700),
    (DEEP, -32700),
    (b'{"a":' * 50_000 + b"1" + b"}" * 50_000, -32700),
    (b'{"jsonrpc":"2.0","id":4,"method":"initialize","params":', -32700),
    (b'{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":Infinity}}', -32700),
    (b"not json at all", -32700),
    (b"1" * 5000, -32700),  # an integer too long to convert
    # responses to requests the agent never sent: never answered (no ping-pong)
    (b'{"jsonrpc":"2.0","id":[1],"result":{}}', None),
    (b'{"jsonrpc":"2.0","id":77,"error":"boom"}', None),
    (b'{"jsonrpc":"2.0","id":78,"result":{}}', None),
    # blank lines and a notification of an unknown method: nothing to answer
    (b"", None),
    (b"   \t", None),
    (b'{"jsonrpc":"2.0","method":"no/such/notification","params":{}}', None),
]


@pytest.mark.parametrize(
    ("line", "code"), BAD_LINES, ids=[f"{i}:{line[:30]!r}" for i, (line, _) in enumerate(BAD_LINES)]
)
def test_every_bad_line_is_answered_and_the_next_request_still_is(line: bytes, code: int | None) -> None:
    async def go() -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
        served = Served()
        first = await served.call("initialize", INIT)
        served.write(line)
        after = await served.call("initialize", INIT)  # answered: the agent is still reading
        await served.end()
        return served.null_errors(), after, [first]

    errors, after, _ = run(go(), 20)
    assert "result" in after
    if code is None:
        assert errors == []
    else:
        assert [e["code"] for e in errors] == [code]
        assert errors[0]["message"] == {-32600: "Invalid Request", -32700: "Parse error"}[code]


def test_a_request_with_an_id_but_a_bad_method_is_answered_under_its_id() -> None:
    async def go() -> list[dict[str, Any]]:
        served = Served()
        replies = [await served.call(method, {}) for method in (["session/new"], {"a": 1}, 7, None)]
        await served.end()
        return replies

    for reply in run(go(), 20):
        assert reply["error"]["code"] == -32600 and "unhashable" not in json.dumps(reply)


def test_an_over_long_line_is_skipped_and_answered() -> None:
    async def go() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        served = Served(max_line=10_000)
        long = b'{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"x":"' + b"a" * 50_000 + b'"}}'
        for i in range(0, len(long), 4096):  # arriving in pieces
            served.source.feed(long[i : i + 4096])
            await asyncio.sleep(0)
        served.source.feed(b"\n")
        after = await served.call("initialize", INIT)
        await served.end()
        return served.null_errors(), after

    errors, after = run(go(), 20)
    assert [e["code"] for e in errors] == [-32600] and "too long" in errors[0]["data"]["details"]
    assert "result" in after


def test_a_last_line_without_a_newline_is_read_and_a_bom_is_tolerated() -> None:
    async def go() -> dict[str, Any]:
        served = Served()
        served.source.feed(
            b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\r'
        )
        served.source.feed(b"")
        await asyncio.wait_for(served.task, 10)
        await served.agent.shutdown()
        return served.sink.frames()[0]

    assert "result" in run(go(), 20)


def test_error_replies_echo_short_redacted_excerpts_only() -> None:
    key = "sk-ant-api03-" + "Zq7xK2mP9vL4nR8tW1yB5cH3jF6dG0sA" + "-AbCdEf"

    async def go() -> list[dict[str, Any]]:
        served = Served()
        sid = (await served.call("session/new", {"cwd": "/tmp", "mcpServers": []}))["result"]["sessionId"]
        huge = await served.call("session/prompt", {"sessionId": sid, "prompt": "word " * 4_000_000})
        secret = await served.call("session/prompt", {"sessionId": sid, "prompt": f"key {key} at /home/bob/x"})
        method = await served.call("m" * 1_000_000, {})
        unknown = await served.call("session/load", {"sessionId": key, "cwd": "/tmp", "mcpServers": []})
        await served.end()
        return [huge, secret, method, unknown]

    replies = run(go(), 20)
    assert [r["error"]["code"] for r in replies] == [-32602, -32602, -32601, -32602]
    for reply in replies:
        text = json.dumps(reply)
        assert len(text) < 2_000, text[:300]
        assert "Zq7xK2mP9vL4nR8tW1yB5cH3jF6dG0sA" not in text and "/home/bob" not in text, text


def test_safe_error_bounds_strings_items_and_depth() -> None:
    from lifecycle.agent.transport import safe_error

    nested: Any = "leaf"
    for _ in range(50):
        nested = {"k": nested}
    data = {"big": "x " * 100_000, "many": list(range(1000)), "deep": nested, "keys": {str(i): i for i in range(100)}}
    out = safe_error({"code": -32602, "message": "m" * 10_000, "data": data})
    assert len(json.dumps(out)) < 4_000
    assert out["code"] == -32602 and len(out["message"]) < 200
    assert safe_error({"code": True, "message": 5}) == {"code": -32603, "message": "Error"}
    assert safe_error("boom") == {"code": -32603, "message": "Internal error"}
    legacy = {"code": -32603, "message": "Internal error", "data": {"details": "API Error · " + "a" * 480}}
    assert safe_error(legacy) == legacy  # a record title (at most 501 characters) is echoed whole


def test_meta_keys_that_name_handler_arguments_are_dropped() -> None:
    from lifecycle.agent import ClaudeAcpAgent
    from lifecycle.agent.transport import reserved_kwargs

    reserved = reserved_kwargs(ClaudeAcpAgent())
    assert {"self", "cwd", "session_id", "prompt", "method_id", "client_capabilities"} <= reserved

    async def go() -> tuple[dict[str, Any], str, Served]:
        served = Served()
        meta = {"cwd": "/etc", "self": 1, "mcp_servers": 5, "session_id": "x", "vendor.key": {"kept": True}}
        reply = await served.call("session/new", {"cwd": "/tmp/real", "mcpServers": [], "_meta": meta})
        sid = reply["result"]["sessionId"]
        cwd = served.agent._sessions[sid].cwd
        await served.end()
        return reply, cwd, served

    reply, cwd, _ = run(go(), 20)
    assert "result" in reply and cwd == "/tmp/real"


def test_outgoing_text_has_its_credentials_masked_and_structure_untouched() -> None:
    from lifecycle.agent.transport import StdioTransport

    key = "sk-ant-api03-" + "Zq7xK2mP9vL4nR8tW1yB5cH3jF6dG0sA" + "-AbCdEf"

    async def go() -> dict[str, Any]:
        sink = MemorySink()
        transport = StdioTransport(MemorySource(), sink)
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"key {key} in ~/x"}}
        await transport.send(
            {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": key, "update": update}}
        )
        await transport.close()
        return sink.frames()[0]

    frame = run(go(), 20)
    assert frame["params"]["sessionId"] == key  # an id is structure, echoed exactly
    assert frame["params"]["update"]["content"]["text"] == "key [redacted key] in ~/x"


def test_a_new_files_diff_goes_out_with_old_text_null_and_the_callers_message_is_untouched() -> None:
    """Issue 30, point 1: the ACP SDK dumps models without ``None`` fields, dropping a new file's
    ``oldText``; the wire carries ``"oldText": null`` (schema: ``string | null``), as the reference
    sends it, in a tool card and in a permission question. Nothing else gets a null."""
    from lifecycle.agent.transport import StdioTransport

    new = {"type": "diff", "path": "/p/new.txt", "newText": "hi\n"}
    edit = {"type": "diff", "path": "/p/e.txt", "oldText": "a", "newText": "b"}
    text = {"type": "content", "content": {"type": "text", "text": "t"}}
    card = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "content": [new, edit, text]}
    messages = [
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": card}},
        {"jsonrpc": "2.0", "id": 7, "method": "session/request_permission",
         "params": {"sessionId": "s", "toolCall": {"toolCallId": "t1", "content": [new]}, "options": []}},
        {"jsonrpc": "2.0", "id": 8, "result": {"content": [new]}},  # not a tool card: as it is
    ]  # fmt: skip
    before = json.dumps(messages)

    async def go() -> list[dict[str, Any]]:
        sink = MemorySink()
        transport = StdioTransport(MemorySource(), sink)
        for message in messages:
            await transport.send(message)
        await transport.close()
        return sink.frames()

    update, question, reply = run(go(), 20)
    assert update["params"]["update"]["content"] == [{**new, "oldText": None}, edit, text]
    assert question["params"]["toolCall"]["content"] == [{**new, "oldText": None}]
    assert reply["result"] == {"content": [new]}
    assert json.dumps(messages) == before


def test_reading_pauses_while_the_client_does_not_read() -> None:
    async def go() -> tuple[int, int, int]:
        served = Served(high_water=2_000)
        served.sink.gate.clear()  # the client stops reading
        with structlog.testing.capture_logs() as logs:
            for _ in range(200):  # one request a chunk, so what was taken is countable
                served.request("initialize", INIT)
            for _ in range(100_000):  # until the transport says it stopped reading
                if any(e["event"] == "transport.input_paused" for e in logs):
                    break
                await asyncio.sleep(0)
            else:
                raise AssertionError("reading never paused")
            paused_at = served.source.taken
            for _ in range(1_000):  # however long the loop runs meanwhile, nothing more is taken
                await asyncio.sleep(0)
            assert served.source.taken == paused_at
        taken_while_blocked, backlog = served.source.taken, served.transport.backlog
        served.sink.gate.set()  # the client reads again
        await served.reply(200)
        taken_after = served.source.taken
        await served.end()
        return taken_while_blocked, backlog, taken_after

    taken, backlog, after = run(go(), 20)
    assert taken < 20, taken  # replies above the high-water mark: no more input was taken
    assert 2_000 < backlog < 2_000 + 20 * 400
    assert after >= 200


def test_a_broken_stdout_ends_the_connection() -> None:
    async def go() -> None:
        served = Served()
        await served.call("initialize", INIT)
        served.sink.broken = True
        served.request("initialize", INIT)  # its reply cannot be written: the client is gone
        await asyncio.wait_for(served.task, 10)  # no end of input needed
        await served.agent.shutdown()

    run(go(), 20)


def test_close_gives_up_on_a_client_that_never_reads() -> None:
    from lifecycle.agent.transport import StdioTransport

    async def go() -> bool:
        sink = MemorySink()
        sink.gate.clear()  # the client never reads again
        transport = StdioTransport(MemorySource(), sink)
        sending = asyncio.ensure_future(transport.send({"jsonrpc": "2.0", "method": "x", "params": {}}))
        await asyncio.sleep(0)  # let the send start and block on the closed gate
        await transport.close(timeout=0.2)  # returns although the client never read (pytest-timeout guards)
        with pytest.raises(ConnectionError):
            await sending
        return sink.gate.is_set()

    assert run(go(), 20) is False  # nothing was read: close gave up on its own


def test_a_handler_failure_is_a_bare_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import lifecycle.agent as agent_module

    def boom(session_id: str, directory: str) -> Any:
        raise ValueError("cannot read /home/bob/.claude/projects with key sk-ant-api03-Zq7xK2mP9vL4nR8tW1yB5cH3jF6dG0")

    monkeypatch.setattr(agent_module, "get_session_messages", boom)

    async def go() -> dict[str, Any]:
        served = Served()
        reply = await served.call("session/load", {"sessionId": "s", "cwd": "/tmp", "mcpServers": []})
        await served.end()
        return reply

    reply = run(go(), 20)
    assert reply["error"] == {
        "code": -32603,
        "message": "Internal error",
        "data": {"details": "The agent hit an internal error."},
    }


def test_log_fields_are_redacted_and_bounded() -> None:
    import io

    import structlog

    from lifecycle.agent import _redact_log_fields
    from lifecycle.log import configure_logging

    out = io.StringIO()
    saved = structlog.get_config()
    try:
        configure_logging(out)
        structlog.configure(processors=[_redact_log_fields, *structlog.get_config()["processors"]])
        structlog.get_logger("t").info(
            "agent.initialize", client="curl -H 'Authorization: Bearer abcdef123456' /home/bob", big="x" * 5000
        )
    finally:
        structlog.configure(**saved)
    line = json.loads(out.getvalue())
    assert "abcdef123456" not in line["client"] and "/home/bob" not in line["client"]
    assert len(line["big"]) <= 501 and line["event"] == "agent.initialize"


# ------------------------------------------------------------------ redaction and titles


URL_PASSWORD_TEXT = (
    "upstream https://carol:hunter2pass@gw.internal/v1 refused; later: cookie hunter2pass, again hunter2pass."
)


#: (text, what redact() and mask_credentials() make of it): the credential wherever it recurs,
#: nothing else; an environment assignment is named as such by redact() (docs/security.md).
C = "[redacted credential]"
RECURRING = [
    (
        URL_PASSWORD_TEXT,
        f"upstream https://{C}@gw.internal/v1 refused; later: cookie {C}, again {C}.",
        f"upstream https://{C}@gw.internal/v1 refused; later: cookie {C}, again {C}.",
    ),
    (
        "Authorization: Bearer tok3nV4lue99 was sent; the gateway logged tok3nV4lue99",
        f"Authorization: Bearer {C} was sent; the gateway logged {C}",
        f"Authorization: Bearer {C} was sent; the gateway logged {C}",
    ),
    (
        '{"api_key": "s3cr3t-value"} ... retried with s3cr3t-value',
        f'{{"api_key": "{C}"}} ... retried with {C}',
        f'{{"api_key": "{C}"}} ... retried with {C}',
    ),
    (
        "ANTHROPIC_AUTH_TOKEN=abc-def-123456 and abc-def-123456 again",
        f"ANTHROPIC_AUTH_TOKEN=[redacted env] and {C} again",
        f"ANTHROPIC_AUTH_TOKEN={C} and {C} again",
    ),
    (
        "Authorization: Basic dXNlcjpwYXNz; the proxy saw dXNlcjpwYXNz",
        f"Authorization: Basic {C}; the proxy saw {C}",
        f"Authorization: Basic {C}; the proxy saw {C}",
    ),
    (
        "curl -u admin:Sw0rdfish! failed: Sw0rdfish! rejected",
        f"curl -u {C}! failed: {C}! rejected",
        f"curl -u {C}! failed: {C}! rejected",
    ),
]


@pytest.mark.parametrize(("text", "redacted", "masked"), RECURRING)
def test_a_secret_found_once_is_masked_at_every_occurrence(text: str, redacted: str, masked: str) -> None:
    from lifecycle.redaction import mask_credentials, redact

    assert (redact(text), mask_credentials(text)) == (redacted, masked)
    assert (redact(redacted), mask_credentials(masked)) == (redacted, masked)  # a second pass changes nothing


def test_recurrence_spares_placeholders_short_values_and_numbers() -> None:
    from lifecycle.redaction import redact

    assert redact("password=redacted, and redacted") == "password=[redacted credential], and [redacted credential]"
    assert redact("password=abc and abc") == "password=[redacted credential] and abc"  # too short to chase
    assert redact("otp=12345678 and 12345678 items") == "otp=[redacted credential] and 12345678 items"


def test_a_secret_recurs_across_the_texts_of_a_session() -> None:
    from lifecycle.redaction import SecretMemory

    memory = SecretMemory(limit=2)
    assert memory.mask("https://carol:hunter2pass@gw.internal/v1") == "https://[redacted credential]@gw.internal/v1"
    assert memory.redact("cookie hunter2pass") == "cookie [redacted credential]"
    assert memory.mask("plain text") == "plain text"
    memory.mask("password=first-secret1 password=second-secret2")
    assert "hunter2pass" in memory.mask("hunter2pass")  # the oldest was forgotten (limit 2)


def test_prose_keeps_everything_but_credentials() -> None:
    from lifecycle.redaction import mask_credentials

    prose = (
        "Traceback (most recent call last):\n"
        '  File "/home/bob/app.py", line 3, in f\n'
        "ValueError: bad\n"
        "token = get_token()\napi_key = os.environ['KEY']\npassword = None\nDEBUG=1 in ~/.config\n"
    )
    assert mask_credentials(prose) == prose
    assert mask_credentials('password = "hunter2"') == 'password = "[redacted credential]"'
    assert mask_credentials("x-api-key: abc123def456") == "x-api-key: [redacted credential]"


def test_header_lines_are_never_title_material() -> None:
    from lifecycle.titles import present, strip_headers

    text = (
        "API Error: 400 bad request\nPOST /v1/messages?beta=true HTTP/1.1\nHost: 127.0.0.1:4242\n"
        "User-Agent: claude-cli/2.1.332\nX-Stainless-Lang: js\nAuthorization: Bearer abc123def456ghi\n"
        "anthropic-version: 2023-06-01\nDate: Tue, 01 Dec 2026\nthe gateway refused abc123def456ghi"
    )
    assert present(text, "error_result") == (
        "API Error: 400 bad request\nthe gateway refused [redacted credential]",
        None,
    )
    # JSON-escaped line breaks, and header pairs quoted inside other text
    assert strip_headers("failed\\nHost: a:1\\nUser-Agent: b\\nreason") == "failed\\nreason"
    assert strip_headers('{"msg": "no", "headers": {"user-agent": "x/1", "X-Request-Id": "r1"}}') == (
        '{"msg": "no", "headers": {}}'
    )
    # Claude's own words that merely look like "Name: value" stay
    for kept in ("API Error: 529 Overloaded", "Warning: the thing", "Request ID: req_011", "Token: expired"):
        assert strip_headers(kept) == kept
    assert present("Host: a\nUser-Agent: b", "error_result")[0].startswith("Claude Code reported an error")


def test_the_connection_fallbacks_say_what_happens_next() -> None:
    from lifecycle.conditions import CONDITIONS
    from lifecycle.titles import FALLBACK_TITLES
    from lifecycle.wire import Action

    for key in ("query_error", "worker_shutdown"):
        assert "Send a message to restart it" in FALLBACK_TITLES[key]
        assert CONDITIONS[key].actions == (Action.NEW_SESSION,)  # the spec's action stays offered
        assert CONDITIONS[key].recovery.value == "runtime_replaced"


class SlowStart(FakeClaude):
    """Claude Code that starts only when the test says so (``release``); ``connecting`` is set once
    the agent is waiting for it."""

    connecting: asyncio.Event
    release: asyncio.Event

    async def connect(self) -> None:
        SlowStart.connecting.set()
        await SlowStart.release.wait()


def test_a_cancel_is_answered_at_once_while_claude_code_still_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lifecycle.agent import ClaudeAcpAgent

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    world = World(random.Random(1))
    world.answer = True

    def factory(options: Any) -> Any:
        world.clients.append(SlowStart(options, world))
        return world.clients[-1]

    async def go() -> tuple[str, bool, str, list[str]]:
        SlowStart.connecting, SlowStart.release = asyncio.Event(), asyncio.Event()
        wire = Wire(ClaudeAcpAgent(client_factory=factory))
        sid = await wire.open(capable=True)
        first = await wire.prompt(sid, "cancelled while starting")
        await asyncio.wait_for(SlowStart.connecting.wait(), 5)  # the runtime is starting
        await wire.conn.cancel(session_id=sid)
        cancelled = (await asyncio.wait_for(first, 5)).stop_reason
        started_before_answer = SlowStart.release.is_set()  # answered while Claude Code still starts
        SlowStart.release.set()
        after = await asyncio.wait_for(await wire.prompt(sid, "after"), 10)  # waits for the start
        await wire.agent.shutdown()
        return cancelled, started_before_answer, after.stop_reason, world.clients[-1].sent

    cancelled, started_before_answer, after, sent = run(go(), 20)
    assert cancelled == "cancelled" and not started_before_answer
    assert after == "end_turn" and len(sent) == 1  # the cancelled prompt never reached Claude


def test_prompts_of_a_closing_session_are_all_answered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lifecycle.agent import ClaudeAcpAgent

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    world = World(random.Random(2))  # Claude never answers (world.answer stays False)

    def factory(options: Any) -> Any:
        world.clients.append(FakeClaude(options, world))
        return world.clients[-1]

    async def go() -> list[str]:
        agent = ClaudeAcpAgent(client_factory=factory)
        wire = Wire(agent)
        sid = await wire.open(capable=False)
        running = await wire.prompt(sid, "running")
        while not world.clients or not world.clients[-1].sent:
            await asyncio.sleep(0.01)
        queued = await wire.prompt(sid, "queued behind it")
        session = agent._sessions[sid]
        while len(session.prompts) < 2:  # the agent has registered the queued prompt
            await asyncio.sleep(0)
        await agent.shutdown()  # the client goes away (or session/load replaces the session)
        return [(await asyncio.wait_for(p, 5)).stop_reason for p in (running, queued)]

    assert run(go(), 20) == ["cancelled", "cancelled"]
