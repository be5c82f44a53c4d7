"""A small fake Gemini API (``generativelanguage`` v1beta) for driving the real gemini-cli.

Standard library only, 127.0.0.1 only (an ephemeral port), one daemon thread. gemini-cli 0.61.0
with ``GOOGLE_GEMINI_BASE_URL`` pointed here sends ``POST /v1beta/models/M:streamGenerateContent?alt=sse``
for a turn (and may send ``:generateContent`` or ``:countTokens`` for its own checks). Each such
request takes the next reply of the script (the last one repeats once the script is used up):

* ``Text("...")``: a streamed answer (one SSE ``data:`` event, ``finishReason: STOP``);
* ``Status(code, body)``: that HTTP status with that JSON body, as Google's API answers errors;
* ``Stall()``: no answer until the server stops (a request the model never answers).

Every request is logged (method, path) in :attr:`FakeGeminiAPI.requests`.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeGeminiAPI", "Stall", "Status", "Text", "google_error"]

HOST = "127.0.0.1"


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Status:
    code: int
    body: dict[str, Any]


@dataclass(frozen=True)
class Stall:
    pass


def google_error(code: int, message: str, status: str) -> Status:
    """An error as Google's API writes it: ``{"error": {"code", "message", "status"}}``."""
    return Status(code, {"error": {"code": code, "message": message, "status": status}})


def _candidate(text: str) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 5, "totalTokenCount": 10},
        "modelVersion": "gemini-fake",
    }


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.api.requests.append(("GET", self.path))
        self._json(404, {"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        api = self.server.api
        api.requests.append(("POST", self.path))
        if ":countTokens" in self.path:
            self._json(200, {"totalTokens": 10})
            return
        reply = api.next_reply()
        if isinstance(reply, Stall):
            api.stalled.set()
            api.stopping.wait()
            return
        if isinstance(reply, Status):
            self._json(reply.code, reply.body)
        elif ":streamGenerateContent" in self.path:
            data = b"data: " + json.dumps(_candidate(reply.text)).encode() + b"\r\n\r\n"
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        else:
            self._json(200, _candidate(reply.text))

    def _json(self, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    api: FakeGeminiAPI


class FakeGeminiAPI:
    """The server; ``script`` is the list of replies (see the module docstring)."""

    def __init__(self, script: list[Text | Status | Stall]) -> None:
        self.script = list(script)
        self.requests: list[tuple[str, str]] = []
        self.stalled = threading.Event()
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._server = _Server((HOST, 0), _Handler)
        self._server.api = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self._server.server_address[1]}"

    def set_script(self, script: list[Text | Status | Stall]) -> None:
        with self._lock:
            self.script = list(script)

    def next_reply(self) -> Text | Status | Stall:
        with self._lock:
            return self.script.pop(0) if len(self.script) > 1 else self.script[0]

    def __enter__(self) -> FakeGeminiAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
