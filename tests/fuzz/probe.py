"""Not a test: the ground every fuzz target stands on (:mod:`fuzz.harness` re-exports it): Claude
Code's texts and error kinds, hostile JSON values, the stream-json and history templates and their
mutation, the probe (a real :class:`~lifecycle.ledger.SessionLedger` beside a
:class:`~lifecycle.client.ClientProjection`, checked after every send), the ledger states targets
start from (``SETUPS``) and the oracles that garbage never succeeds."""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from hypothesis import strategies as st

from lifecycle import (
    ApiRetry,
    Assistant,
    ClientProjection,
    ModelFallback,
    PromptErrorOut,
    PromptResponseOut,
    PromptStarted,
    QueryError,
    Result,
    SessionFailure,
    SessionLedger,
    SessionUpdateOut,
)
from lifecycle.answers import TransitionObserver
from lifecycle.events import Event, Outbound

NIGHTLY = os.environ.get("FUZZ_PROFILE", "") == "nightly"

RATE = "API Error: Request rejected (429) · Number of requests has exceeded your rate limit"
LIMIT = "You've hit your 5-hour limit · resets 4:06pm (UTC)"
LOGIN = "Invalid API key · Please run /login"
FALLBACK = "Switched to Opus 5 because Opus 5.5 is not available"
ERROR_KINDS = (
    "authentication_failed",
    "oauth_org_not_allowed",
    "account_on_hold",
    "verification_required",
    "billing_error",
    "rate_limit",
    "overloaded",
    "invalid_request",
    "model_not_found",
    "server_error",
    "unknown",
    "max_output_tokens",
    "cloud_credential_error",
)
KNOWN_TYPES = frozenset({"assistant", "result", "system", "auth_status", "rate_limit_event"})
EVENT_TYPES = tuple(t for t in Event.__args__)

# ------------------------------------------------------------------ JSON values

_INTERESTING_STR = [
    "",
    "sessionFailure",
    "success",
    "error",
    "<synthetic>",
    "claude-opus-5-5",
    "api_retry",
    "model_fallback",
    "worker_shutting_down",
    "assistant",
    "result",
    "system",
    "auth_status",
    "user",
    "text",
    "tool_result",
    "prompt_too_long",
    "aborted_streaming",
    "end_turn",
    "max_tokens",
    "session_info_update",
    "agent_message_chunk",
    "retry",
    "login",
    "new_session",
    "limit",
    "warning",
    LIMIT,
    LOGIN,
    RATE,
    "Prompt is too long",
    "\x00",
    "\ud800",
    "\udfff",
    "\u2028",
    "\ufeff",
    "é",
    "1",
    "true",
    "null",
    "NaN",
    *ERROR_KINDS,
]
_INTERESTING_NUM: list[object] = [
    0,
    1,
    -1,
    2,
    2**31,
    2**63,
    2**64,
    -(2**63),
    10**30,
    1.0,
    2.0,
    1.5,
    -0.0,
    0.5,
    1e308,
    -1e308,
    5e-324,
    math.nan,
    math.inf,
    -math.inf,
    True,
    False,
]
KEYS = [
    "type",
    "subtype",
    "message",
    "model",
    "content",
    "text",
    "error",
    "is_error",
    "result",
    "errors",
    "uuid",
    "parent_tool_use_id",
    "isAuthenticating",
    "isSidechain",
    "isMeta",
    "attempt",
    "max_retries",
    "error_status",
    "reason",
    "terminal_reason",
    "stop_reason",
    "api_error_status",
    "_meta",
    "jetbrains",
    "air",
    "version",
    "capabilities",
    "sessionFailure",
    "id",
    "revision",
    "category",
    "severity",
    "title",
    "details",
    "actions",
    "method",
    "params",
    "update",
    "sessionUpdate",
    "event",
    "sessionId",
    "turnId",
    "history",
    "count",
    "ok",
]

scalars: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=24),
    st.sampled_from(_INTERESTING_STR),
    st.sampled_from(_INTERESTING_NUM),
)
json_values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=8)), children, max_size=4),
    ),
    max_leaves=8,
)
json_objects: st.SearchStrategy[dict[str, Any]] = st.dictionaries(
    st.one_of(st.sampled_from(KEYS), st.text(max_size=8)), json_values, max_size=6
)


def deep(depth: int, leaf: object = 1) -> object:
    """A value nested ``depth`` levels deep (alternating list and object)."""
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"type": value}
    return value


# ------------------------------------------------------------------ templates and mutation

STREAM_TEMPLATES: dict[str, dict[str, Any]] = {
    "assistant_error": {
        "type": "assistant",
        "uuid": "a1",
        "session_id": "s1",
        "parent_tool_use_id": None,
        "message": {
            "id": "m1",
            "model": "<synthetic>",
            "role": "assistant",
            "type": "message",
            "content": [{"type": "text", "text": RATE}],
        },
        "error": "rate_limit",
    },
    "assistant_answer": {
        "type": "assistant",
        "uuid": "a2",
        "parent_tool_use_id": None,
        "message": {"model": "claude-opus-5-5", "content": [{"type": "text", "text": "Hello"}]},
    },
    "assistant_limit": {
        "type": "assistant",
        "uuid": "a3",
        "parent_tool_use_id": None,
        "message": {"model": "<synthetic>", "content": [{"type": "text", "text": LIMIT}]},
        "error": "rate_limit",
    },
    "result_error": {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "result": RATE,
        "stop_reason": "stop_sequence",
        "errors": [],
        "api_error_status": 429,
        "terminal_reason": "api_error",
    },
    "result_success": {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "Hello",
        "stop_reason": "end_turn",
        "errors": [],
    },
    "result_max_turns": {
        "type": "result",
        "subtype": "error_max_turns",
        "is_error": True,
        "errors": ["Reached maximum"],
    },
    "api_retry": {
        "type": "system",
        "subtype": "api_retry",
        "attempt": 1,
        "max_retries": 10,
        "retry_delay_ms": 500,
        "error_status": 529,
        "error": "overloaded",
    },
    "model_fallback": {
        "type": "system",
        "subtype": "model_fallback",
        "content": FALLBACK,
        "trigger": "overloaded",
    },
    "worker_shutting_down": {"type": "system", "subtype": "worker_shutting_down", "reason": "idle"},
    "auth_ok": {"type": "auth_status", "isAuthenticating": False, "output": ["Login successful"]},
    "auth_progress": {"type": "auth_status", "isAuthenticating": True, "output": []},
    "user": {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "tool_result", "content": "x"}]},
    },
    "init": {"type": "system", "subtype": "init", "model": "claude-opus-5-5", "tools": []},
    "rate_limit_event": {"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}},
    "stream_event": {"type": "stream_event", "event": {"type": "content_block_delta"}},
}

HISTORY_TEMPLATES: dict[str, dict[str, Any]] = {
    "prompt": {
        "type": "user",
        "uuid": "u1",
        "parent_tool_use_id": None,
        "message": {"role": "user", "content": "hi"},
    },
    "tool_result": {
        "type": "user",
        "uuid": "u2",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "x", "content": "ok"}],
        },
    },
    "meta": {
        "type": "user",
        "uuid": "u3",
        "isMeta": True,
        "message": {"role": "user", "content": "<command>"},
    },
    "limit": {
        "type": "assistant",
        "uuid": "m1",
        "parent_tool_use_id": None,
        "message": {
            "model": "<synthetic>",
            "role": "assistant",
            "content": [{"type": "text", "text": LIMIT}],
        },
    },
    "login": {
        "type": "assistant",
        "uuid": "m2",
        "message": {"model": "<synthetic>", "content": [{"type": "text", "text": LOGIN}]},
    },
    "answer": {
        "type": "assistant",
        "uuid": "m3",
        "message": {"model": "claude-opus-5-5", "content": [{"type": "text", "text": "Recovered"}]},
    },
    "sidechain": {
        "type": "assistant",
        "uuid": "m4",
        "isSidechain": True,
        "message": {"model": "<synthetic>", "content": [{"type": "text", "text": LIMIT}]},
    },
}

# Transcript-only lines (what a ~/.claude/projects/*.jsonl holds besides messages).
TRANSCRIPT_EXTRA: list[dict[str, Any]] = [
    {"type": "queue-operation", "operation": "enqueue", "content": "hi"},
    {"type": "summary", "summary": "A chat", "leafUuid": "m1"},
    {"type": "system", "subtype": "api_error", "content": "retrying", "level": "error"},
    {"type": "attachment", "attachment": {"type": "text", "content": "x" * 64}},
]


def _slots(obj: Any) -> Iterator[tuple[Any, Any]]:
    """Every (container, key) of a JSON value, parents before children."""
    if isinstance(obj, dict):
        for k in list(obj):
            yield obj, k
            yield from _slots(obj[k])
    elif isinstance(obj, list):
        for i in range(len(obj)):
            yield obj, i
            yield from _slots(obj[i])


@st.composite
def mutated(draw: st.DrawFn, templates: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """A template with 0-3 fields deleted, retyped, or replaced by an interesting value."""
    obj = copy.deepcopy(templates[draw(st.sampled_from(sorted(templates)))])
    for _ in range(draw(st.integers(0, 3))):
        slots = list(_slots(obj))
        if not slots:
            break
        container, key = draw(st.sampled_from(slots))
        op = draw(st.sampled_from(("delete", "replace", "interesting", "add")))
        if op == "delete":
            del container[key]
        elif op == "add" and isinstance(container, dict):
            container[draw(st.sampled_from(KEYS))] = draw(json_values)
        elif op == "interesting":
            container[key] = draw(st.sampled_from(_INTERESTING_STR + _INTERESTING_NUM))
        else:
            container[key] = draw(json_values)
    return obj


stream_lines: st.SearchStrategy[dict[str, Any]] = st.one_of(
    mutated(STREAM_TEMPLATES),
    mutated(STREAM_TEMPLATES),
    json_objects,
    st.builds(lambda t: {"type": t}, json_values),
)
PROMPT = "__prompt__"  # a pseudo-line: the adapter starts a new prompt turn here

# ------------------------------------------------------------------ the probe: ledger + client


class Probe:
    """One real ledger, the client projection of every message it delivered, and every attempt.

    ``fail(n)`` decides whether the n-th send attempt (0-based) fails; a failed send is never
    shown to the client (plan -> deliver -> commit).
    """

    def __init__(
        self,
        negotiated: bool,
        *,
        session_id: str = "s1",
        epoch: str = "e1",
        observer: TransitionObserver | None = None,
        fail: Callable[[int], bool] | None = None,
    ) -> None:
        self.negotiated = negotiated
        self.ledger = SessionLedger(session_id, negotiated=negotiated, epoch=epoch, observer=observer)
        self.client = ClientProjection()
        self.sent: list[Outbound] = []
        self.attempted: list[tuple[Outbound, bool]] = []
        self.fail = fail
        self.turns = 0

    def _deliver(self, out: Outbound) -> None:
        failing = self.fail is not None and self.fail(len(self.attempted))
        self.attempted.append((out, not failing))
        if failing:
            raise ConnectionError("client gone")
        self.sent.append(out)
        self.client.receive(out.to_jsonrpc())

    def feed(self, event: Event, *, runtime: int | None = None) -> list[Outbound]:
        """Process ``event``; the messages that reached the client."""
        start = len(self.sent)
        self.ledger.process(event, self._deliver, runtime=runtime)
        return self.sent[start:]

    def prompt(self) -> str:
        self.turns += 1
        turn = f"t{self.turns}"
        self.feed(PromptStarted(turn_id=turn))
        return turn

    @property
    def records(self) -> list[SessionFailure]:
        return [m.record for m in self.sent if m.record is not None]

    def check(self) -> None:
        assert_consistent(self.ledger, self.client, self.sent)


def assert_consistent(ledger: SessionLedger, client: ClientProjection, sent: list[Outbound]) -> None:
    """The ledger's belief is exactly what the client received, with no revision gap."""
    for incident_id, revisions in client.received.items():
        assert revisions == list(range(1, len(revisions) + 1)), f"{incident_id}: revisions {revisions}"
    assert client.ignored == 0, f"the client ignored {client.ignored} stale record(s): an id was reused"
    assert client.malformed == 0
    for a in ledger.active:
        shown = client.record(a.id)
        assert shown is not None, f"active {a.id} was never shown to the client"
        assert shown.revision == a.revision == ledger.revision_of(a.id), (a, shown)
    assert not ledger.pending
    if not ledger.negotiated:
        for m in sent:
            assert m.record is None
            if isinstance(m, PromptResponseOut):
                assert "_meta" not in m.to_jsonrpc()["result"]
            if isinstance(m, SessionUpdateOut):
                assert "_meta" not in m.update and m.update.get("sessionUpdate") != "session_info_update"


def settlement(sent: list[Outbound]) -> Outbound | None:
    found = [m for m in sent if isinstance(m, (PromptResponseOut, PromptErrorOut))]
    assert len(found) <= 1, f"settled {len(found)} times"
    return found[0] if found else None


def is_success(m: Outbound) -> bool:
    return isinstance(m, PromptResponseOut) and m.record is None


# ------------------------------------------------------------------ ledger states to start from

SETUPS: dict[str, list[Event | str]] = {
    "idle": [],
    "open": [PROMPT],
    "retrying": [PROMPT, ApiRetry(attempt=1, max_retries=3, error_status=429, error="rate_limit")],
    "failing": [PROMPT, Assistant(text=RATE, model="<synthetic>", error="rate_limit")],
    "quota_open": [
        PROMPT,
        Assistant(text=LIMIT, model="<synthetic>", error="rate_limit"),
        Result(subtype="success", is_error=True, result=LIMIT),
        PROMPT,
    ],
    "auth": [
        PROMPT,
        Assistant(text=LOGIN, model="<synthetic>", error="authentication_failed"),
        Result(subtype="success", is_error=True, result=LOGIN),
    ],
    "auth_open": [
        PROMPT,
        Assistant(text=LOGIN, model="<synthetic>", error="authentication_failed"),
        Result(subtype="success", is_error=True, result=LOGIN),
        PROMPT,
    ],
    "runtime_lost": [PROMPT, QueryError(message="ProcessTransport is not ready"), PROMPT],
    "notice_open": [ModelFallback(content=FALLBACK), PROMPT],
}
setups = st.sampled_from(sorted(SETUPS))


def start(setup: str, negotiated: bool, observer: TransitionObserver | None = None) -> Probe:
    """A probe whose ledger went through ``SETUPS[setup]`` (every send delivered)."""
    probe = Probe(negotiated, observer=observer)
    for step in SETUPS[setup]:
        if step == PROMPT:
            probe.prompt()
        else:
            assert not isinstance(step, str)
            probe.feed(step)
    probe.check()
    return probe


def _open(probe: Probe) -> bool:
    t = probe.ledger.turn
    return t is not None and not t.settled


# ------------------------------------------------------------------ oracles: garbage never succeeds


def wellformed_success_result(is_error: object, subtype: object) -> bool:
    return is_error is False and subtype == "success"


def auth_may_recover(line: Mapping[str, Any]) -> bool:
    """Only ``isAuthenticating: false`` with no error (absent, null or "") is a successful login."""
    error = line.get("error")
    return line.get("isAuthenticating") is False and (error is None or error == "")


def assistant_garbled(model: object, error: object) -> bool:
    """A model that is not a model name, or an ``error`` that is neither absent nor a kind string."""
    return not isinstance(model, str) or not model or (error is not None and not isinstance(error, str))
