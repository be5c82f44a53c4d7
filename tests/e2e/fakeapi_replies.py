"""Not a test: what the fake Anthropic API (:mod:`tests.e2e.fakeapi`, which re-exports all of it)
answers with, and what it logs: the texts and constants the e2e tests assert, the request log
(:class:`RequestRecord`), the replies (:class:`Reply` and its kinds, ``text_reply``, ``error_reply``,
``echo_reply``, ...) and the named scenarios (:data:`SCENARIOS`). Standard library only.
"""

from __future__ import annotations

import json
import re
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from .fakeapi import FakeAnthropicAPI

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
