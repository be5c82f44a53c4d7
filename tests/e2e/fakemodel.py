"""The scripted fake model API the proxy's e2e tests share: the replies, the request handler's
skeleton and the server (:mod:`.fakegemini` and :mod:`.fakeopenai` give each wire format).

Standard library only, 127.0.0.1 only (an ephemeral port), one daemon thread. Each model request
takes the next reply of the script (the last one repeats once the script is used up):

* ``Text("...")``: a streamed answer, in the wire format of the handler;
* ``Status(code, body)``: that HTTP status with that JSON body (and no ``retry-after``);
* ``Stall()``: no answer until the server stops (a request the model never answers);
  :attr:`FakeModelAPI.stalled` is set when one arrives.

Every request (method, path) is logged in :attr:`FakeModelAPI.requests`.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

__all__ = ["HOST", "FakeModelAPI", "Reply", "ScriptedHandler", "Stall", "Status", "Text"]

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


Reply = Text | Status | Stall


class ScriptedHandler(BaseHTTPRequestHandler):
    """One request: the log, the script's next reply; a wire format overrides the ``answer_*``."""

    server: _Server
    protocol_version = "HTTP/1.1"
    body: bytes = b""
    not_found: ClassVar[dict[str, Any]] = {"error": {"code": 404, "message": "not found"}}

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.api.requests.append(("GET", self.path))
        self.answer_get()

    def do_POST(self) -> None:
        self.body = self.rfile.read(int(self.headers.get("content-length") or 0))
        api = self.server.api
        api.requests.append(("POST", self.path))
        if self.answer_side_request():
            return
        reply = api.next_reply()
        if isinstance(reply, Stall):
            api.stalled.set()
            api.stopping.wait()
        elif isinstance(reply, Status):
            self.send_json(reply.code, reply.body)
        else:
            self.answer_text(reply.text)

    def answer_get(self) -> None:
        self.send_json(404, self.not_found)

    def answer_side_request(self) -> bool:
        """Answer a request that is not a model turn (True), or leave it to the script (False)."""
        return False

    def answer_text(self, text: str) -> None:
        raise NotImplementedError

    def send_json(self, status: int, obj: Any) -> None:
        self.send_body(status, "application/json", json.dumps(obj).encode())

    def send_body(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    api: FakeModelAPI


class FakeModelAPI:
    """The server; ``script`` is the list of replies (see the module docstring), ``prefix`` the
    path its :attr:`base_url` ends with."""

    def __init__(self, script: list[Reply], handler: type[ScriptedHandler], prefix: str = "") -> None:
        self.script = list(script)
        self.requests: list[tuple[str, str]] = []
        self.stalled = threading.Event()
        self.stopping = threading.Event()
        self._prefix = prefix
        self._lock = threading.Lock()
        self._server = _Server((HOST, 0), handler)
        self._server.api = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self._server.server_address[1]}{self._prefix}"

    def next_reply(self) -> Reply:
        with self._lock:
            return self.script.pop(0) if len(self.script) > 1 else self.script[0]

    def __enter__(self) -> FakeModelAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
