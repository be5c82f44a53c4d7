"""The agent's stdio transport (:mod:`lifecycle.agent.transport`), in process: every bad line is
answered (``-32700`` / ``-32600`` with ``id: null``) and the next request still is; error replies
carry short excerpts only; outgoing text has its credentials masked; the output backlog is bounded.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import structlog.testing
from acp_harness import AIR, run
from scripted_claude import MemorySink, MemorySource, Served

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


def test_meta_keys_that_name_handler_arguments_are_dropped(tmp_path: Path) -> None:
    from lifecycle.agent import ClaudeAcpAgent
    from lifecycle.agent.transport import reserved_kwargs

    reserved = reserved_kwargs(ClaudeAcpAgent())
    assert {"self", "cwd", "session_id", "prompt", "method_id", "client_capabilities"} <= reserved

    async def go() -> tuple[dict[str, Any], str, Served]:
        served = Served()
        meta = {"cwd": "/etc", "self": 1, "mcp_servers": 5, "session_id": "x", "vendor.key": {"kept": True}}
        # A folder that exists: the cwd is checked (issue 50.1).
        reply = await served.call("session/new", {"cwd": str(tmp_path), "mcpServers": [], "_meta": meta})
        sid = reply["result"]["sessionId"]
        cwd = served.agent._sessions[sid].cwd
        await served.end()
        return reply, cwd, served

    reply, cwd, _ = run(go(), 20)
    assert "result" in reply and cwd == str(tmp_path)


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
