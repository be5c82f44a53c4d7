"""A tiny MCP server (standard library only): one tool, ``echo``, that answers its ``text``
argument back. The e2e tests pass it to ``session/new`` and check that Claude Code reached it (its
tool reaches the model as ``mcp__<server>__echo``, a call returns ``echo: <text>``).

Requests: ``initialize`` (answered with the protocol version the client asked for), ``tools/list``,
``tools/call``, ``ping``; anything else is answered -32601; notifications are ignored. Transports:

* stdio (``python tests/e2e/mcp_echo_server.py``): newline-delimited JSON-RPC 2.0;
* :class:`HttpEchoServer`, on 127.0.0.1 only: ``POST /mcp`` is MCP's streamable HTTP (each request
  answered with one JSON body, a notification with 202), and ``GET /sse`` the legacy HTTP+SSE
  transport (an ``endpoint`` event naming ``/messages?session=<n>``, whose POSTs are answered 202
  and the replies sent as ``message`` events on the stream). ``requests`` logs every method seen,
  ``authorizations`` the ``Authorization`` headers of the POSTs.
"""

from __future__ import annotations

import itertools
import json
import queue
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOOL = {
    "name": "echo",
    "description": "Echo the given text back.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "What to echo."}},
        "required": ["text"],
    },
}


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method, params = request.get("method"), request.get("params") or {}
    if "id" not in request:
        return None  # a notification
    result: Any
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "echo", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        text = str((params.get("arguments") or {}).get("text", ""))
        result = {"content": [{"type": "text", "text": f"echo: {text}"}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "Method not found"}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError:
            continue
        reply = answer(request) if isinstance(request, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


class HttpEchoServer:
    """The echo server over HTTP (``/mcp``) and HTTP+SSE (``/sse``), on 127.0.0.1, in a thread."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.authorizations: set[str] = set()  # the ``Authorization`` headers received
        self._streams: dict[str, queue.Queue[dict[str, Any] | None]] = {}
        self._ids = itertools.count(1)
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def _body(self) -> Any:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    return json.loads(raw)
                except ValueError:
                    return None

            def _reply(self, status: int, body: bytes = b"", kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                owner.authorizations.add(self.headers.get("Authorization") or "")
                request = self._body()
                if isinstance(request, dict):
                    owner.requests.append(str(request.get("method")))
                reply = answer(request) if isinstance(request, dict) else None
                if self.path.startswith("/messages"):  # HTTP+SSE: the answer goes on the stream
                    stream = owner._streams.get(self.path.partition("session=")[2])
                    if stream is None:
                        self._reply(404)
                        return
                    if reply is not None:
                        stream.put(reply)
                    self._reply(202)
                elif self.path == "/mcp":
                    self._reply(200, json.dumps(reply).encode()) if reply is not None else self._reply(202)
                else:
                    self._reply(404)

            def do_GET(self) -> None:
                if self.path != "/sse":
                    self._reply(405)
                    return
                session = str(next(owner._ids))
                stream: queue.Queue[dict[str, Any] | None] = queue.Queue()
                owner._streams[session] = stream
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    self.wfile.write(f"event: endpoint\ndata: /messages?session={session}\n\n".encode())
                    self.wfile.flush()
                    while (message := stream.get()) is not None:
                        self.wfile.write(f"event: message\ndata: {json.dumps(message)}\n\n".encode())
                        self.wfile.flush()
                except OSError:
                    pass
                finally:
                    owner._streams.pop(session, None)
                    self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> HttpEchoServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        for stream in list(self._streams.values()):
            stream.put(None)
        self._server.shutdown()
        self._server.server_close()


if __name__ == "__main__":
    main()
