"""A small fake Anthropic Messages API for driving the real Claude Code CLI.

Standard library only.  The server binds 127.0.0.1 on an ephemeral port (never any other
address), runs ``ThreadingHTTPServer.serve_forever`` in a daemon thread and answers
``POST /v1/messages`` (any query string) according to a *scenario*:

* a scenario name from :data:`SCENARIOS` (the names of section A of
  ``tests/fixtures/claude-cli-2.1.332/README.md``, "A. Custom-base-URL runs"),
* a list of per-request replies (``scripted`` mode): request *i* gets ``replies[i]``; once the
  list is used up the ``then`` reply (default: the last list element) answers every later request,
* or a callable ``responder(request) -> reply``.

A *reply* is a :class:`Reply` instance, a scenario name (answered as that scenario answers its
first request), or a callable ``(RequestRecord) -> reply`` (evaluated per request, so
``lambda r: "success" if flag.is_set() else "http401"`` gives "401 until a flag flips").

Every request (any method and path) is logged as a :class:`RequestRecord` in
:attr:`FakeAnthropicAPI.requests`.

The texts, the request log, the replies and the scenarios are in :mod:`.fakeapi_replies`; this
module re-exports every one of their names, and holds the wire format and the server.

Usage::

    with FakeAnthropicAPI("http429") as api:
        ...  # point ANTHROPIC_BASE_URL at api.base_url
        assert len(api.message_requests) == 3
"""

from __future__ import annotations

import contextlib
import json
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .fakeapi_replies import (
    CREDIT_MSG,
    ECHO_API_KEY,
    ECHO_HOME_PATH,
    ECHO_TRACEBACK,
    ECHO_URL,
    ECHO_URL_PASSWORD,
    HOST,
    MAX_TOKENS_TEXT,
    PARTIAL_TEXT,
    READ_FILE_NAME,
    REFUSAL_EXPLANATION,
    REST_TEXT,
    SCENARIOS,
    SUCCESS_CHUNKS,
    SUCCESS_TEXT,
    TITLE_SYSTEM,
    TITLE_WORDS,
    TOOL_TEXT,
    UNIFIED_PREFIX,
    CloseReply,
    ErrorReply,
    MessageReply,
    RawSSEReply,
    Reply,
    ReplySpec,
    RequestRecord,
    Responder,
    StallReply,
    _hex,
    _message_obj,
    echo_reply,
    echo_text,
    error_reply,
    fake_title,
    free_port,
    gateway_jwt,
    refusal_reply,
    success_reply,
    text_reply,
    tool_use_reply,
)

#: every public name, those of :mod:`.fakeapi_replies` too (the tests import them from here)
__all__ = [
    "CREDIT_MSG", "ECHO_API_KEY", "ECHO_HOME_PATH", "ECHO_TRACEBACK", "ECHO_URL", "ECHO_URL_PASSWORD", "HOST",
    "MAX_TOKENS_TEXT", "PARTIAL_TEXT", "READ_FILE_NAME", "REFUSAL_EXPLANATION", "REST_TEXT", "SCENARIOS",
    "SUCCESS_CHUNKS", "SUCCESS_TEXT", "TITLE_SYSTEM", "TITLE_WORDS", "TOOL_TEXT", "UNIFIED_PREFIX", "CloseReply",
    "ErrorReply", "FakeAnthropicAPI", "MessageReply", "RawSSEReply", "Reply", "ReplySpec", "RequestRecord",
    "Responder", "StallReply", "echo_reply", "echo_text", "error_reply", "fake_title", "free_port", "gateway_jwt",
    "refusal_reply", "success_reply", "text_reply", "tool_use_reply",
]

# --------------------------------------------------------------------------------------
# Wire format
# --------------------------------------------------------------------------------------


def _materialize_blocks(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for b in blocks:
        b = dict(b)
        if b["type"] == "thinking":
            b.pop("chunks", None)
            b.setdefault("signature", "fakesig")
        if b["type"] == "tool_use":
            b.setdefault("id", f"toolu_fake{_hex(16)}")
            b.setdefault("input", {})
        out.append(b)
    return out


def _sse_events(reply: MessageReply, model: str) -> list[tuple[str, dict[str, Any]]]:
    msg = _message_obj(model, reply.input_tokens, 1)
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": msg})]
    if reply.ping:
        events.append(("ping", {"type": "ping"}))
    first_text = True
    for i, b in enumerate(_materialize_blocks(reply.blocks)):
        if b["type"] == "text":
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
                )
            )
            chunks = list(reply.text_chunks) if (first_text and reply.text_chunks) else [b["text"]]
            first_text = False
            for c in chunks:
                events.append(
                    (
                        "content_block_delta",
                        {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": c}},
                    )
                )
        elif b["type"] == "tool_use":
            events.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}},
                    },
                )
            )
            events.append(
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])},
                    },
                )
            )
        elif b["type"] == "thinking":
            events.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                    },
                )
            )
            for c in reply.blocks[i].get("chunks") or [b["thinking"]]:
                events.append(
                    (
                        "content_block_delta",
                        {"type": "content_block_delta", "index": i, "delta": {"type": "thinking_delta", "thinking": c}},
                    )
                )
            events.append(
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {"type": "signature_delta", "signature": b.get("signature", "fakesig")},
                    },
                )
            )
        else:  # pragma: no cover - other block types are passed through whole
            events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": b}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    delta: dict[str, Any] = {"stop_reason": reply.stop_reason, "stop_sequence": None}
    if reply.stop_details is not None:
        delta["stop_details"] = reply.stop_details
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": delta,
                "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _json_message(reply: MessageReply, model: str) -> dict[str, Any]:
    msg = _message_obj(model, reply.input_tokens, reply.output_tokens)
    msg["content"] = _materialize_blocks(reply.blocks)
    msg["stop_reason"] = reply.stop_reason
    if reply.stop_details is not None:
        msg["stop_details"] = reply.stop_details
    return msg


# --------------------------------------------------------------------------------------
# HTTP plumbing
# --------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.api.request_timeout)
        self.server.api._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.api._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # every method goes through one place
    def do_POST(self) -> None:
        self._dispatch()

    do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_POST

    def _dispatch(self) -> None:
        api = self.server.api
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        rec = api._record(self.command, self.path, dict(self.headers.items()), raw, body)
        try:
            if rec.is_side_request:  # answered here, the scenario's replies untouched
                answer = json.dumps({"title": fake_title(rec)}) if rec.is_title else api.suggestion
                reply = text_reply(answer, headers=api._side_request_headers())
            elif rec.is_messages:
                reply = api._reply_for(rec)
            elif self.command == "POST" and rec.route == "/v1/messages/count_tokens":
                reply = _JSONReply(200, {"input_tokens": 12})
            else:
                reply = error_reply(404, "not_found_error", f"Not found: {self.command} {rec.route}")
        except Exception as e:  # a broken scenario must not hang the CLI
            reply = error_reply(500, "api_error", f"fake server scenario failed: {e!r}")
        rec.reply = reply.describe()
        self._rec = rec
        self._send(reply, rec)

    # --- senders -------------------------------------------------------------------

    def _headers(self, status: int, headers: dict[str, str]) -> None:
        self.send_response_only(status)
        rec = getattr(self, "_rec", None)
        if rec is not None:
            rec.reply_status, rec.reply_headers = status, dict(headers)
            if rec.is_messages and not rec.is_side_request:
                self.server.api._note_unified(headers)
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()

    def _send_json(self, status: int, obj: Any, extra: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        headers = {
            "content-type": "application/json",
            "request-id": f"req_fake{_hex(16)}",
            "content-length": str(len(data)),
            **(extra or {}),
        }
        self._headers(status, headers)
        if self.command != "HEAD":
            self.wfile.write(data)
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _start_sse(self, extra: dict[str, str] | None = None) -> None:
        self._headers(
            200,
            {
                "content-type": "text/event-stream",
                "cache-control": "no-cache",
                "request-id": f"req_fake{_hex(16)}",
                "transfer-encoding": "chunked",
                **(extra or {}),
            },
        )

    def _event(self, name: str, data: dict[str, Any]) -> None:
        self._chunk(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.wfile.flush()
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _send(self, reply: Reply, rec: RequestRecord) -> None:
        model = rec.model or "claude-opus-5-5"
        if isinstance(reply, CloseReply):
            self._drop()
        elif isinstance(reply, StallReply):
            self.server.api._stopping.wait(reply.seconds)
            self._drop()
        elif isinstance(reply, ErrorReply):
            message = f"{reply.message}\n{echo_text(rec)}" if reply.echo else reply.message
            self._send_json(
                reply.status,
                {
                    "type": "error",
                    "error": {"type": reply.error_type, "message": message},
                    "request_id": f"req_fake{_hex(16)}",
                },
                reply.headers,
            )
        elif isinstance(reply, _JSONReply):
            self._send_json(reply.status, reply.obj)
        elif isinstance(reply, MessageReply):
            if rec.stream:
                self._start_sse(reply.headers)
                for name, data in _sse_events(reply, model):
                    self._event(name, data)
                self._chunk(b"")
            else:
                self._send_json(200, _json_message(reply, model), reply.headers)
        elif isinstance(reply, RawSSEReply):
            self._start_sse()
            for name, data in reply.events:
                if name == "message_start":
                    data = json.loads(json.dumps(data))
                    data["message"]["model"] = model
                self._event(name, data)
            if reply.ending == "close":
                self._drop()
            else:
                self._chunk(b"")
        else:  # pragma: no cover
            raise TypeError(f"unknown reply {reply!r}")


@dataclass
class _JSONReply(Reply):
    status: int
    obj: Any


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False
    api: FakeAnthropicAPI

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away before its answer (Claude Code stopped while a side request
        waited, a connection a test dropped) is not the server's error; anything else is printed."""
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn() (a reverse lookup); skip it.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


# --------------------------------------------------------------------------------------
# The public server object
# --------------------------------------------------------------------------------------


class FakeAnthropicAPI:
    """Fake Messages API on ``127.0.0.1:<ephemeral port>``; a context manager.

    ``scenario`` is a scenario name, a list of replies (scripted mode) or a callable
    ``responder(request) -> reply``.  ``then`` is what answers requests after a scripted list
    is used up (default: its last element).  ``read_file`` is the ``file_path`` the
    tool-using scenarios ask ``Read`` for (default: ``hello.txt`` in the working directory
    the CLI reports in its request).  ``request_timeout`` bounds every socket operation.
    """

    def __init__(
        self,
        scenario: str | Sequence[ReplySpec] | Callable[[RequestRecord], Any] = "success",
        *,
        then: ReplySpec | None = None,
        read_file: str | None = None,
        request_timeout: float = 30.0,
    ) -> None:
        self.scenario = scenario
        self.read_file = read_file
        self.request_timeout = request_timeout
        self.requests: list[RequestRecord] = []
        self._lock = threading.Condition()
        self._conns: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None
        self._n_messages = 0
        #: The answer to Claude Code's prompt-suggestion requests ("": it predicts nothing).
        self.suggestion = ""
        #: The unified rate-limit headers of the last ``/v1/messages`` answer sent (None: none yet).
        self._unified: dict[str, str] | None = None

        if isinstance(scenario, str):
            if scenario not in SCENARIOS:
                raise ValueError(f"unknown scenario {scenario!r}; known: {sorted(SCENARIOS)}")
            self.name = scenario
            self._responder: Responder = SCENARIOS[scenario]
        elif callable(scenario):
            self.name = "callable"
            fn = scenario
            self._responder = lambda s, r, k: fn(r)
        else:
            script = list(scenario)
            if not script and then is None:
                raise ValueError("scripted mode needs at least one reply or `then`")
            tail = then if then is not None else script[-1]
            self.name = "scripted"
            self._responder = lambda s, r, k: script[k - 1] if k <= len(script) else tail

    # --- lifecycle -----------------------------------------------------------------

    @property
    def listening(self) -> bool:
        return self._server is not None

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("server not started (use it as a context manager)")
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> FakeAnthropicAPI:
        if self._port is not None:
            return self
        if self.scenario == "conn_refused":
            self._port = free_port()  # bound and closed: nothing listens there
            return self
        srv = _Server((HOST, 0), _Handler, bind_and_activate=True)
        srv.api = self
        self._server = srv
        self._port = srv.server_address[1]
        self._thread = threading.Thread(
            target=srv.serve_forever, kwargs={"poll_interval": 0.1}, name=f"fakeapi-{self._port}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        srv, self._server = self._server, None
        if srv is None:
            return
        self._stopping.set()
        srv.shutdown()
        srv.server_close()
        with self._lock:
            conns = list(self._conns)
        for c in conns:  # unblock handler threads waiting on keep-alive connections
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropicAPI:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # --- request log ---------------------------------------------------------------

    @property
    def message_requests(self) -> list[RequestRecord]:
        """The ``POST /v1/messages`` requests, in order (not Claude Code's side requests:
        :attr:`title_requests`, :attr:`suggestion_requests`)."""
        with self._lock:
            return [r for r in self.requests if r.is_messages and not r.is_side_request]

    @property
    def suggestion_requests(self) -> list[RequestRecord]:
        """Claude Code's prompt-suggestion side requests, in order (each answered with
        :attr:`suggestion`)."""
        with self._lock:
            return [r for r in self.requests if r.is_prompt_suggestion]

    @property
    def title_requests(self) -> list[RequestRecord]:
        """Claude Code's session-title side requests, in order."""
        with self._lock:
            return [r for r in self.requests if r.is_title]

    def wait_for_requests(self, n: int, timeout: float = 10.0) -> bool:
        """Block until at least ``n`` ``POST /v1/messages`` requests arrived."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._n_messages < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
            return True

    def summary(self) -> list[str]:
        """``"POST /v1/messages?beta=true stream=True model=... -> reply"`` lines."""
        return [f"{r.method} {r.path} stream={r.stream} model={r.model} -> {r.reply}" for r in list(self.requests)]

    # --- internals -----------------------------------------------------------------

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            (self._conns.add if add else self._conns.discard)(conn)

    def _record(self, method: str, path: str, headers: dict[str, str], raw: bytes, body: Any) -> RequestRecord:
        with self._lock:
            rec = RequestRecord(
                n=len(self.requests) + 1,
                method=method,
                path=path,
                headers=headers,
                body_bytes=len(raw),
                body=body,
                t=time.time(),
            )
            if isinstance(body, dict):
                rec.model = body.get("model")
                rec.stream = bool(body.get("stream", False))
                rec.max_tokens = body.get("max_tokens")
            self.requests.append(rec)
            return rec

    def _note_unified(self, headers: dict[str, str]) -> None:
        with self._lock:
            self._unified = {k: v for k, v in headers.items() if k.lower().startswith(UNIFIED_PREFIX)}
            self._lock.notify_all()

    def _side_request_headers(self, timeout: float = 5.0) -> dict[str, str]:
        """The rate-limit headers a side request's answer carries: those of the last answer to
        the scenario's requests, as the real API reports one account's state on every answer. A
        side request that comes before any such answer waits for the first (at most ``timeout``
        seconds), so an answer without them never reads to Claude Code as a window's change
        between two scripted readings (it emits a ``rate_limit_event`` on every change)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._unified is None and not self._stopping.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    return {}
                self._lock.wait(min(left, 0.1))
            return dict(self._unified or {})

    def _reply_for(self, rec: RequestRecord) -> Reply:
        with self._lock:
            self._n_messages += 1
            k = self._n_messages
            self._lock.notify_all()
        spec: Any = self._responder(self, rec, k)
        return self._resolve(spec, rec, k)

    def _resolve(self, spec: Any, rec: RequestRecord, k: int, depth: int = 0) -> Reply:
        if depth > 10:
            raise RuntimeError("reply spec recursion too deep")
        if isinstance(spec, Reply):
            return spec
        if isinstance(spec, str):
            if spec not in SCENARIOS:
                raise ValueError(f"unknown scenario {spec!r}")
            return self._resolve(SCENARIOS[spec](self, rec, 1), rec, k, depth + 1)
        if callable(spec):
            return self._resolve(spec(rec), rec, k, depth + 1)
        raise TypeError(f"bad reply spec {spec!r}")
