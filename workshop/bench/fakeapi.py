"""A minimal fake Anthropic Messages API for the ``peer`` section (standard library only).

Binds 127.0.0.1 on an ephemeral port and nothing else. ``POST /v1/messages`` (any query string)
is answered with a short streamed (SSE) success, or its JSON form when the request did not ask to
stream; every other path is ``404`` (the reference adapter also probes ``count_tokens`` and asks
for titles). Only message calls are counted. Every socket operation is bounded in time.

A tool turn: a streamed request that offers the ``Write`` tool and whose last message is the
user's prompt made by :func:`tool_turn_prompt` (the marker :data:`WRITE_MARKER` followed by the
tool input as JSON) is answered with one ``tool_use`` of ``Write`` with that input
(``stop_reason: tool_use``). The request that follows carries the tool result in its last message,
so it is an ordinary request and gets the short text answer.
"""

from __future__ import annotations

import json
import socketserver
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

__all__ = ["ANSWER", "WRITE_MARKER", "FakeMessagesAPI", "tool_turn_prompt", "write_request"]

ANSWER = "Hello from the fake API."
#: What marks a prompt that asks for a ``Write`` (see :func:`tool_turn_prompt`).
WRITE_MARKER = "BENCH_WRITE "


def tool_turn_prompt(file_path: str, content: str) -> str:
    """A prompt the fake API answers with one ``Write`` of ``content`` to ``file_path``."""
    return f"Write the file below.\n{WRITE_MARKER}{json.dumps({'file_path': file_path, 'content': content})}"


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def write_request(body: Any) -> dict[str, str] | None:
    """The ``Write`` input a request asks for (see the module), or None for an ordinary request."""
    if not isinstance(body, dict) or not body.get("stream"):
        return None
    tools = body.get("tools")
    if not isinstance(tools, list) or not any(isinstance(t, dict) and t.get("name") == "Write" for t in tools):
        return None
    messages = body.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else None
    if not isinstance(last, dict) or last.get("role") != "user":
        return None
    blocks = [b for b in _blocks(last.get("content")) if isinstance(b, dict)]
    if any(b.get("type") == "tool_result" for b in blocks):
        return None
    for block in blocks:
        text = block.get("text") if block.get("type") == "text" else None
        if not isinstance(text, str) or WRITE_MARKER not in text:
            continue
        try:
            tool_input, _ = json.JSONDecoder().raw_decode(text, text.index(WRITE_MARKER) + len(WRITE_MARKER))
        except ValueError:
            return None
        if (
            isinstance(tool_input, dict)
            and isinstance(tool_input.get("file_path"), str)
            and isinstance(tool_input.get("content"), str)
        ):
            return {"file_path": tool_input["file_path"], "content": tool_input["content"]}
    return None


def _message(model: str, output_tokens: int) -> dict[str, Any]:
    return {
        "id": f"msg_bench{uuid.uuid4().hex[:20]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 12,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
        },
    }


def _events(model: str, write: dict[str, str] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events of the short text answer, or of one ``tool_use`` of ``Write`` with ``write``."""
    if write is None:
        block: dict[str, Any] = {"type": "text", "text": ""}
        delta: dict[str, Any] = {"type": "text_delta", "text": ANSWER}
        stop_reason, output_tokens = "end_turn", 6
    else:
        block = {"type": "tool_use", "id": f"toolu_bench{uuid.uuid4().hex[:20]}", "name": "Write", "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(write)}
        stop_reason, output_tokens = "tool_use", 40
    return [
        ("message_start", {"type": "message_start", "message": _message(model, 1)}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"input_tokens": 12, "output_tokens": output_tokens},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(10)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _body(self) -> Any:
        size = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(min(size, 64 * 1024 * 1024)) if size else b""
        try:
            return json.loads(raw or b"null")
        except ValueError:
            return None

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response_only(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_bench{uuid.uuid4().hex[:16]}")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def do_GET(self) -> None:
        self._send(
            404, b'{"type":"error","error":{"type":"not_found_error","message":"not found"}}', "application/json"
        )

    do_HEAD = do_GET

    def do_POST(self) -> None:
        body = self._body()
        if urlsplit(self.path).path != "/v1/messages":
            self.do_GET()
            return
        write = write_request(body)
        self.server.count(write is not None)
        model = body.get("model") if isinstance(body, dict) else None
        model = model if isinstance(model, str) else "claude-bench"
        if isinstance(body, dict) and body.get("stream"):
            data = b"".join(
                f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode() for name, payload in _events(model, write)
            )
            self._send(200, data, "text/event-stream")
        else:
            msg = _message(model, 6)
            msg.update(content=[{"type": "text", "text": ANSWER}], stop_reason="end_turn")
            self._send(200, json.dumps(msg).encode(), "application/json")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self._lock = threading.Lock()
        self.messages = 0
        self.writes = 0

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)  # no reverse lookup
        self.server_name, self.server_port = str(self.server_address[0]), int(self.server_address[1])

    def count(self, write: bool) -> None:
        with self._lock:
            self.messages += 1
            self.writes += write

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that goes away mid-request (an agent killed at the end of its spawn) is not an
        # error of the benchmark; anything else is still printed by the base class.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


class FakeMessagesAPI:
    """``with FakeMessagesAPI() as api:`` serves on ``api.base_url`` until the block ends."""

    def __init__(self) -> None:
        self._server = _Server()
        self._thread = threading.Thread(target=self._server.serve_forever, name="bench-fakeapi", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    @property
    def messages(self) -> int:
        """``POST /v1/messages`` calls answered so far."""
        return self._server.messages

    @property
    def writes(self) -> int:
        """Of those, the ones answered with a ``tool_use`` of ``Write``."""
        return self._server.writes

    def __enter__(self) -> FakeMessagesAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
