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

Usage::

    with FakeAnthropicAPI("http429") as api:
        ...  # point ANTHROPIC_BASE_URL at api.base_url
        assert len(api.message_requests) == 3
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import socketserver
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "SCENARIOS",
    "CloseReply",
    "ErrorReply",
    "FakeAnthropicAPI",
    "MessageReply",
    "RawSSEReply",
    "Reply",
    "RequestRecord",
    "StallReply",
    "echo_reply",
    "error_reply",
    "free_port",
    "gateway_jwt",
    "refusal_reply",
    "success_reply",
    "text_reply",
    "tool_use_reply",
]

HOST = "127.0.0.1"
SUCCESS_TEXT = "Hello from the fake API."
SUCCESS_CHUNKS = ("Hello", " from the fake", " API.")
MAX_TOKENS_TEXT = "This answer was cut off because it hit the max"
REST_TEXT = " ...and here is the rest of the answer."
PARTIAL_TEXT = "Partial ans"
TOOL_TEXT = "Let me read the file."
READ_FILE_NAME = "hello.txt"
#: The prefix of the Anthropic API's unified rate-limit response headers.
UNIFIED_PREFIX = "anthropic-ratelimit-unified-"

#: What Claude Code's session-title request says (CLI 2.1.332's system prompt for it).
TITLE_SYSTEM = "You are naming a coding session"
#: How many words of the session's text the fake API's title keeps.
TITLE_WORDS = 4


def fake_title(rec: RequestRecord) -> str:
    """The fake API's title for a session-title request: the first :data:`TITLE_WORDS` words
    of the ``<session>`` text Claude Code sent, so a test knows it from its own prompt."""
    text = json.dumps((rec.body or {}).get("messages"))
    found = re.search(r"<session>\\n(.*?)\\n</session>", text)
    words = (json.loads(f'"{found.group(1)}"') if found else "").split()
    return " ".join(words[:TITLE_WORDS]) or "Untitled"


CREDIT_MSG = (
    "Your credit balance is too low to access the Anthropic API. "
    "Please go to Plans & Billing to upgrade or purchase credits."
)


def _hex(n: int) -> str:
    return uuid.uuid4().hex[:n]


def free_port() -> int:
    """A 127.0.0.1 port that was bound and closed again (so nothing listens on it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def gateway_jwt(aud: str = "claude-gateway", sub: str = "fake-user") -> str:
    """Unsigned JWT ``base64url(header).base64url(payload).sig`` (the CLI reads ``aud`` unverified)."""
    import base64

    def b64(obj: dict[str, Any]) -> str:
        raw = json.dumps(obj, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    return f"{b64({'alg': 'none', 'typ': 'JWT'})}.{b64({'aud': aud, 'sub': sub})}.sig"


# --------------------------------------------------------------------------------------
# Request log
# --------------------------------------------------------------------------------------


@dataclass
class RequestRecord:
    """One HTTP request the fake server received."""

    n: int  # 1-based index over all requests
    method: str
    path: str  # including the query string
    headers: dict[str, str]
    body_bytes: int
    body: Any  # parsed JSON body, or None
    t: float
    model: str | None = None
    stream: bool | None = None
    max_tokens: int | None = None
    reply: str = ""  # short description of what was answered
    reply_status: int | None = None  # HTTP status sent (None: connection dropped/stalled)
    reply_headers: dict[str, str] = field(default_factory=dict)

    @property
    def route(self) -> str:
        """The path without the query string."""
        return urlsplit(self.path).path

    @property
    def is_messages(self) -> bool:
        return self.method == "POST" and self.route == "/v1/messages"

    @property
    def is_prompt_suggestion(self) -> bool:
        """Claude Code's prompt-suggestion side request (its last user message starts
        ``[SUGGESTION MODE``), which it sends on its own after a turn when the SDK's initialize
        asked for ``promptSuggestions``."""
        body = self.body if isinstance(self.body, dict) else {}
        messages = body.get("messages")
        if not self.is_messages or not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
            return False
        content = messages[-1].get("content")
        if isinstance(content, list):
            texts = [b.get("text") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
            content = texts[-1] if texts else None
        return isinstance(content, str) and content.lstrip().startswith("[SUGGESTION MODE")

    @property
    def is_side_request(self) -> bool:
        """A request Claude Code makes on its own, beside the conversation: a session title or a
        prompt suggestion. The fake API answers these itself; a scenario never sees them."""
        return self.is_title or self.is_prompt_suggestion

    @property
    def is_title(self) -> bool:
        """Claude Code's session-title side request (its system prompt names the session; the
        answer is a JSON object with one ``title``), asked for by ``generate_session_title``."""
        body = self.body if isinstance(self.body, dict) else {}
        schema = ((body.get("output_config") or {}).get("format") or {}).get("schema") or {}
        return (
            self.is_messages
            and list(schema.get("properties") or {}) == ["title"]
            and TITLE_SYSTEM in json.dumps(body.get("system"))
        )


# --------------------------------------------------------------------------------------
# Replies
# --------------------------------------------------------------------------------------


class Reply:
    """Base class of what the server does with one request."""

    def describe(self) -> str:
        return type(self).__name__


@dataclass
class MessageReply(Reply):
    """A normal model answer: SSE stream if the request asked for ``stream``, else JSON.

    ``blocks`` are content blocks: ``{"type": "text", "text": ...}`` or
    ``{"type": "tool_use", "name": ..., "input": {...}}`` (``id`` is generated if missing), or
    ``{"type": "thinking", "thinking": ..., "chunks": [...]?}`` (streamed as ``thinking_delta`` events,
    then a ``signature_delta``).
    ``text_chunks`` optionally splits the *first* text block into several deltas.
    ``headers`` are extra HTTP response headers sent with the answer (SSE or JSON), e.g. the
    unified rate-limit headers (``tests/e2e/test_rate_limits.py``, ``rate_limit_headers``).
    """

    blocks: list[dict[str, Any]]
    stop_reason: str = "end_turn"
    input_tokens: int = 12
    output_tokens: int = 9
    text_chunks: Sequence[str] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    ping: bool = True
    #: ``message_delta.delta.stop_details`` (e.g. a refusal's category and explanation); None: absent
    stop_details: dict[str, Any] | None = None

    def describe(self) -> str:
        kinds = "+".join(b["type"] for b in self.blocks)
        return f"message[{kinds}] stop_reason={self.stop_reason}"


@dataclass
class ErrorReply(Reply):
    """An HTTP error with the Anthropic error envelope as JSON body.

    ``echo`` (off by default) makes a hostile body: the error ``message`` is followed by what a
    misbehaving gateway echoes back (:func:`echo_text`): the request line and every request
    header (the API key, the ``Authorization`` token), a ``user:password@host`` URL, an upstream
    API key, the password again in prose, a home path and a Python stack trace.
    """

    status: int
    error_type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)
    echo: bool = False

    def describe(self) -> str:
        return f"{self.status} {self.error_type}" + (" echo" if self.echo else "")


@dataclass
class CloseReply(Reply):
    """Read the request, then shut the TCP connection down without sending a byte."""

    def describe(self) -> str:
        return "close"


@dataclass
class RawSSEReply(Reply):
    """A 200 SSE response made of raw ``(event, data)`` pairs.

    ``ending="close"`` drops the TCP connection after the events without the terminating
    zero-length chunk (a truncated stream); ``ending="end"`` terminates it properly.
    """

    events: list[tuple[str, dict[str, Any]]]
    ending: str = "end"

    def describe(self) -> str:
        return f"sse[{','.join(e for e, _ in self.events)}] ending={self.ending}"


@dataclass
class StallReply(Reply):
    """Read the request, send nothing for ``seconds`` (or until the server stops), then drop it."""

    seconds: float = 60.0

    def describe(self) -> str:
        return f"stall {self.seconds}s"


ReplySpec = Reply | str | Callable[["RequestRecord"], Any]


def text_reply(
    text: str = SUCCESS_TEXT,
    *,
    stop_reason: str = "end_turn",
    chunks: Sequence[str] | None = None,
    **kw: Any,
) -> MessageReply:
    return MessageReply([{"type": "text", "text": text}], stop_reason=stop_reason, text_chunks=chunks, **kw)


def success_reply() -> MessageReply:
    return text_reply(SUCCESS_TEXT, chunks=SUCCESS_CHUNKS)


def tool_use_reply(
    file_path: str,
    *,
    text: str = TOOL_TEXT,
    input_tokens: int = 12,
    output_tokens: int = 9,
) -> MessageReply:
    return MessageReply(
        [
            {"type": "text", "text": text},
            {"type": "tool_use", "name": "Read", "input": {"file_path": file_path}},
        ],
        stop_reason="tool_use",
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )


REFUSAL_EXPLANATION = "This request was declined by the fake safety classifier."


def refusal_reply(category: str | None = "cyber", explanation: str | None = REFUSAL_EXPLANATION) -> MessageReply:
    """A refused answer: no content, ``stop_reason: refusal`` and the API's ``stop_details`` (as
    docs/parity/tools/fakeapi.py's ``refusal`` scenario sent them to the CLI)."""
    details = {"type": "refusal", "category": category, "explanation": explanation}
    return MessageReply([], stop_reason="refusal", output_tokens=1, stop_details=details)


def error_reply(status: int, error_type: str, message: str, headers: dict[str, str] | None = None) -> ErrorReply:
    return ErrorReply(status, error_type, message, dict(headers or {}))


#: What :func:`echo_text` puts in a hostile error body besides the request's own headers.
ECHO_URL_PASSWORD = "hunter2pass"
ECHO_API_KEY = "sk-ant-api03-" + "Ec7hoK2mP9vL4nR8tW1yB5cH3jF6dG0sA" + "-FAKEfakeFAKE"
ECHO_URL = f"https://alice:{ECHO_URL_PASSWORD}@gateway.internal:8443/v1/messages"
ECHO_HOME_PATH = "/home/alice/.config/gateway/settings.json"
ECHO_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/srv/gateway/app.py", line 42, in forward\n'
    "    response = upstream.post(url, headers=headers)\n"
    "UpstreamError: upstream refused the request"
)


def echo_reply(status: int, error_type: str, message: str, headers: dict[str, str] | None = None) -> ErrorReply:
    """An error whose body echoes the request back (see :class:`ErrorReply` ``echo``)."""
    return ErrorReply(status, error_type, message, dict(headers or {}), echo=True)


def echo_text(rec: RequestRecord) -> str:
    """The request as a misbehaving gateway echoes it: request line and headers (one a line),
    a credentialed upstream URL, the gateway's own upstream API key, the URL's password once
    more in prose, a home path and a Python stack trace."""
    lines = [f"{rec.method} {rec.path} HTTP/1.1"]
    lines += [f"{name}: {value}" for name, value in rec.headers.items()]
    lines += [
        f"upstream {ECHO_URL} with key {ECHO_API_KEY} rejected the request (cookie {ECHO_URL_PASSWORD})",
        f"config {ECHO_HOME_PATH}",
        ECHO_TRACEBACK,
    ]
    return "\n".join(lines)


def _usage_limit_headers() -> dict[str, str]:
    # On the hour, two to three hours ahead: two agents asked within the same test see the same
    # reset time (Claude Code prints it to the minute), whatever minute the test runs in.
    reset = str((int(time.time()) // 3600 + 3) * 3600)
    return {
        "anthropic-ratelimit-unified-status": "rejected",
        "anthropic-ratelimit-unified-reset": reset,
        "anthropic-ratelimit-unified-5h-reset": reset,
        "anthropic-ratelimit-unified-representative-claim": "five_hour",
        "anthropic-ratelimit-unified-overage-status": "rejected",
        "anthropic-ratelimit-unified-overage-disabled-reason": "org_level_disabled",
        "x-should-retry": "false",
    }


def _partial_events() -> list[tuple[str, dict[str, Any]]]:
    return [
        ("message_start", {"type": "message_start", "message": _message_obj("claude-opus-5-5", 12, 1)}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": PARTIAL_TEXT}},
        ),
    ]


# --------------------------------------------------------------------------------------
# Scenarios: name -> responder(server, request, k) where k is the 1-based index among
# POST /v1/messages requests.
# --------------------------------------------------------------------------------------

Responder = Callable[["FakeAnthropicAPI", RequestRecord, int], ReplySpec]


def _read_path(server: FakeAnthropicAPI, req: RequestRecord) -> str:
    if server.read_file:
        return server.read_file
    cwd = _cwd_from_body(req.body)
    return f"{cwd}/{READ_FILE_NAME}" if cwd else READ_FILE_NAME


_CWD_RE = re.compile(r"Primary working directory: ([^\n]+)")


def _cwd_from_body(body: Any) -> str | None:
    if body is None:
        return None
    m = _CWD_RE.search(json.dumps(body, ensure_ascii=False))
    if not m:
        return None
    # json.dumps escapes "\n" as the two characters "\" "n"; cut there.
    return m.group(1).split("\\n", 1)[0].strip()


def _const(reply_factory: Callable[[], Reply]) -> Responder:
    return lambda server, req, k: reply_factory()


SCENARIOS: dict[str, Responder] = {
    "success": _const(success_reply),
    "max_tokens": _const(lambda: text_reply(MAX_TOKENS_TEXT, stop_reason="max_tokens")),
    "max_tokens_once": lambda s, r, k: (
        text_reply(MAX_TOKENS_TEXT, stop_reason="max_tokens") if k == 1 else text_reply(REST_TEXT)
    ),
    "retry_then_success": lambda s, r, k: (
        error_reply(529, "overloaded_error", "Overloaded") if k == 1 else success_reply()
    ),
    "http429": _const(
        lambda: error_reply(
            429, "rate_limit_error", "Number of requests has exceeded your rate limit", {"retry-after": "0"}
        )
    ),
    "http529": _const(lambda: error_reply(529, "overloaded_error", "Overloaded")),
    "http500": _const(lambda: error_reply(500, "api_error", "Internal server error")),
    "http401": _const(lambda: error_reply(401, "authentication_error", "invalid x-api-key")),
    "http403": _const(
        lambda: error_reply(
            403, "permission_error", "Your API key does not have permission to use the specified resource."
        )
    ),
    "http400": _const(
        lambda: error_reply(400, "invalid_request_error", "messages: text content blocks must be non-empty")
    ),
    "http404_model": _const(lambda: error_reply(404, "not_found_error", "model: claude-nonexistent-model-x")),
    "http400_credit": _const(lambda: error_reply(400, "invalid_request_error", CREDIT_MSG)),
    "http402_credit": _const(lambda: error_reply(402, "billing_error", CREDIT_MSG)),
    "http402_billing": _const(lambda: error_reply(402, "billing_error", "Your account has a billing problem.")),
    "http400_org_disabled": _const(
        lambda: error_reply(400, "invalid_request_error", "This organization has been disabled.")
    ),
    "http413": _const(
        lambda: error_reply(413, "request_too_large", "Request exceeds the maximum allowed number of bytes.")
    ),
    "http400_prompt_too_long": _const(
        lambda: error_reply(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum")
    ),
    # conn_refused: nothing listens (handled in FakeAnthropicAPI.__enter__); never called.
    "conn_refused": _const(CloseReply),
    "conn_closed": _const(CloseReply),
    "sse_truncated": lambda s, r, k: RawSSEReply(_partial_events(), ending="close") if r.stream else CloseReply(),
    "sse_midstream_overloaded": lambda s, r, k: (
        RawSSEReply(
            [
                *_partial_events(),
                ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            ],
            ending="end",
        )
        if r.stream
        else error_reply(529, "overloaded_error", "Overloaded")
    ),
    "usage_limit_apikey": _const(
        lambda: error_reply(
            429,
            "rate_limit_error",
            "This request would exceed your account's rate limit. Please try again later.",
            _usage_limit_headers(),
        )
    ),
    "max_turns": lambda s, r, k: tool_use_reply(_read_path(s, r)),
    "refusal": _const(refusal_reply),
    "max_budget": lambda s, r, k: tool_use_reply(_read_path(s, r), input_tokens=2_000_000, output_tokens=200_000),
}
# Same server behaviour; the difference (ANTHROPIC_AUTH_TOKEN gateway JWT) is on the client side.
SCENARIOS["usage_limit_gateway"] = SCENARIOS["usage_limit_apikey"]


# --------------------------------------------------------------------------------------
# Wire format
# --------------------------------------------------------------------------------------


def _message_obj(model: str, input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {
        "id": f"msg_fake{_hex(20)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
        },
    }


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
