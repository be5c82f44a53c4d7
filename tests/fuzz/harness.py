"""Strategies and oracles of the hostile-input suite, shared by pytest and the atheris runner.

Every ``check_*`` function takes one generated input, drives the real parser (and, where the
parser feeds the core, a real :class:`~lifecycle.ledger.SessionLedger` and a
:class:`~lifecycle.client.ClientProjection`), and raises ``AssertionError`` when a property breaks.
A parser's *documented* outcomes are: an event or ``None``, a ``None``/ignored line with a report,
or the typed error its docstring names (``MalformedMessage``, ``MalformedRecordError``,
``LifecycleError``). Anything else propagating out of a check is a crash.

tests/test_fuzz.py wraps each pair of :data:`TARGETS` in ``@given``; tests/fuzz/run_atheris.py
feeds the same pairs from libFuzzer through ``hypothesis``'s ``fuzz_one_input``.
"""

from __future__ import annotations

import atexit
import copy
import io
import json
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from hypothesis import strategies as st

from fuzz.report import crashed, tally
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
    negotiate,
    read_record,
)
from lifecycle.answers import TransitionObserver
from lifecycle.claude import MalformedMessage, from_sdk_exception, from_sdk_message, from_stream_json
from lifecycle.cli.replay import CHUNK_SIZE, replay_lines, replay_transcript
from lifecycle.cli.trace import TraceDriver, run_trace
from lifecycle.events import Event, HistoryEntry, Outbound
from lifecycle.history import history_entry, load_history
from lifecycle.wire import Action, MalformedRecordError, attach_record

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


# ------------------------------------------------------------------ 1. negotiation


def negotiation_oracle(caps: object) -> bool:
    """The spec's sentence, restated: a finite integer version >= 1 and "sessionFailure" listed."""
    meta = caps.get("_meta") if isinstance(caps, dict) else None
    jetbrains = meta.get("jetbrains") if isinstance(meta, dict) else None
    air = jetbrains.get("air") if isinstance(jetbrains, dict) else None
    if not isinstance(air, dict):
        return False
    v = air.get("version")
    version_ok = (type(v) is int and v >= 1) or (
        type(v) is float and math.isfinite(v) and v == int(v) and v >= 1
    )
    listed = air.get("capabilities")
    return (
        version_ok and type(listed) is list and any(type(c) is str and c == "sessionFailure" for c in listed)
    )


@st.composite
def client_capabilities(draw: st.DrawFn) -> object:
    if draw(st.integers(0, 4)) == 0:
        return draw(json_values)
    version = draw(st.one_of(st.sampled_from([*_INTERESTING_NUM, "1", None, [1], {"v": 1}]), json_values))
    listed = draw(
        st.one_of(
            st.just(["sessionFailure"]),
            st.just("sessionFailure"),
            st.lists(
                st.one_of(st.sampled_from(["sessionFailure", "SessionFailure", "x"]), json_values), max_size=4
            ),
            json_values,
        )
    )
    air: dict[str, Any] = {"version": version, "capabilities": listed}
    if draw(st.booleans()):
        air.update(draw(json_objects))
    caps: Any = {"_meta": {"jetbrains": {"air": air}}}
    # sometimes break one level of the path
    level = draw(st.integers(0, 5))
    if level == 1:
        caps = {"_meta": draw(json_values)}
    elif level == 2:
        caps = {"_meta": {"jetbrains": draw(json_values)}}
    elif level == 3:
        caps["_meta"]["jetbrains"]["air"] = draw(json_values)
    return caps


def _negotiation_props(caps: object) -> None:
    got = negotiate(caps)
    assert type(got) is bool
    assert got == negotiation_oracle(caps), (caps, got)
    if isinstance(caps, dict):  # the ACP SDK model keeps _meta as field_meta
        assert negotiate(SimpleNamespace(field_meta=caps.get("_meta"))) == got


def check_negotiation(caps: object) -> None:
    try:
        _negotiation_props(caps)
    except BaseException:
        crashed("negotiate")
        raise
    tally("negotiate")


# ------------------------------------------------------------------ 2. stream-json lines -> ledger


def feed_stream_line(probe: Probe, line: object) -> str:
    """Translate and feed one line; returns the documented outcome ("event", "ignored", "typed")."""
    if line == PROMPT:
        if _open(probe):
            return "ignored"
        probe.prompt()
        return "event"
    assert isinstance(line, dict)
    try:
        event = from_stream_json(line)
    except MalformedMessage:
        assert line.get("type") in KNOWN_TYPES, line
        return "typed"
    if event is None:
        return "ignored"
    assert isinstance(event, EVENT_TYPES), event
    before_open = _open(probe)
    sent = probe.feed(event)  # nothing but LifecycleError may come out (and none is expected here)
    if line.get("type") == "result" and before_open:
        settled = settlement(sent)
        assert settled is not None, "a result left the prompt unsettled"
        if not wellformed_success_result(line.get("is_error"), line.get("subtype")):
            assert not is_success(settled), f"garbled result settled the prompt as a success: {line}"
    return "event"


def check_stream_lines(setup: str, negotiated: bool, lines: list[object]) -> None:
    typed = ignored = 0
    try:
        probe = start(setup, negotiated)
        for line in lines:
            outcome = feed_stream_line(probe, line)
            typed += outcome == "typed"
            ignored += outcome == "ignored"
            probe.check()
    except BaseException:
        crashed("stream_json")
        raise
    tally("stream_json", inputs=len(lines), typed=typed, ignored=ignored)


def check_garbage_never_recovers(setup: str, negotiated: bool, line: dict[str, Any]) -> None:
    """A garbled auth_status or assistant line never ends an active incident."""
    probe = start(setup, negotiated)
    before = {a.id for a in probe.ledger.active}
    try:
        event = from_stream_json(line)
    except MalformedMessage:
        event = None
    if event is not None:
        probe.feed(event)
    after = {a.id for a in probe.ledger.active}
    kind = line.get("type")
    if kind == "auth_status" and not auth_may_recover(line):
        assert before <= after, f"garbled auth_status {line} recovered {before - after}"
    message = line.get("message")
    top_level = (
        kind == "assistant" and isinstance(message, Mapping) and line.get("parent_tool_use_id") is None
    )
    if top_level and assistant_garbled(message.get("model"), line.get("error")):  # type: ignore[union-attr]
        assert before <= after, f"garbled assistant line {line} recovered {before - after}"
    tally("garbage_never_recovers")


garbled_auth_lines = st.builds(
    lambda auth, error, extra: {"type": "auth_status", "isAuthenticating": auth, "error": error, **extra},
    st.one_of(st.just(False), json_values),
    json_values,
    st.dictionaries(st.sampled_from(["output", "uuid", "session_id"]), json_values, max_size=2),
)


@st.composite
def garbled_assistant_lines(draw: st.DrawFn) -> dict[str, Any]:
    """Assistant lines whose ``model`` or ``error`` has the wrong type (or whose model is absent)."""
    message: dict[str, Any] = {
        "content": [{"type": "text", "text": draw(st.sampled_from(["Hello", "Done."]))}]
    }
    model = draw(
        st.one_of(st.just("$absent"), st.just(""), json_values, st.sampled_from(["claude-opus-5-5"]))
    )
    if model != "$absent":
        message["model"] = model
    line: dict[str, Any] = {"type": "assistant", "parent_tool_use_id": None, "message": message}
    error = draw(st.one_of(st.just("$absent"), st.none(), st.sampled_from(ERROR_KINDS), json_values))
    if error != "$absent":
        line["error"] = error
    return line


# ------------------------------------------------------------------ 3. SDK objects and exceptions


def _duck(name: str, attrs: Mapping[str, Any], base: type = object) -> Any:
    """An object of a fresh class called ``name`` (as the edge recognises SDK classes by name)."""
    cls = type(name, (base,), {})
    obj = object.__new__(cls) if base is object else cls("duck")
    for k, v in attrs.items():
        setattr(obj, k, v)
    return obj


_ASSISTANT_FIELDS = ("content", "model", "error", "parent_tool_use_id", "uuid")
_RESULT_FIELDS = (
    "subtype",
    "is_error",
    "result",
    "errors",
    "api_error_status",
    "stop_reason",
    "terminal_reason",
)
_text_values = st.one_of(
    st.sampled_from([RATE, LIMIT, LOGIN, "Hello", "Prompt is too long", ""]), st.text(max_size=30)
)


@st.composite
def sdk_objects(draw: st.DrawFn) -> object:
    from claude_agent_sdk import CLIConnectionError, CLIJSONDecodeError, ProcessError, ResultError
    from claude_agent_sdk.types import (
        AssistantMessage,
        ResultMessage,
        SystemMessage,
        TextBlock,
        ThinkingBlock,
        ToolUseBlock,
        UserMessage,
    )

    block = st.one_of(
        st.builds(TextBlock, text=st.one_of(_text_values, json_values)),
        st.builds(ThinkingBlock, thinking=st.text(max_size=10), signature=st.text(max_size=4)),
        st.builds(ToolUseBlock, id=st.text(max_size=4), name=st.text(max_size=4), input=json_objects),
        st.builds(lambda t: {"type": "text", "text": t}, _text_values),
        json_values,
    )
    content = st.one_of(st.lists(block, max_size=3), _text_values, json_values)
    model = st.one_of(st.sampled_from(["<synthetic>", "claude-opus-5-5", ""]), json_values)
    error = st.one_of(st.none(), st.sampled_from([*ERROR_KINDS, "brand_new_kind"]), json_values)
    any_value = st.one_of(json_values, _text_values)
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return AssistantMessage(
            content=draw(content),
            model=draw(model),
            error=draw(error),  # type: ignore[arg-type]
            parent_tool_use_id=draw(st.one_of(st.none(), json_values)),
            uuid=draw(st.one_of(st.none(), json_values)),
        )
    if kind == 1:
        return ResultMessage(
            subtype=draw(
                st.one_of(
                    st.sampled_from(["success", "error_max_turns", "error_during_execution"]), any_value
                )
            ),
            duration_ms=0,
            duration_api_ms=0,
            is_error=draw(st.one_of(st.booleans(), json_values)),
            num_turns=1,
            session_id="s1",
            result=draw(any_value),
            errors=draw(st.one_of(st.lists(_text_values, max_size=2), json_values)),
            api_error_status=draw(json_values),
            stop_reason=draw(json_values),
            terminal_reason=draw(
                st.one_of(st.sampled_from(["prompt_too_long", "aborted_tools", "api_error"]), any_value)
            ),
        )
    if kind == 2:
        data = draw(st.one_of(mutated(STREAM_TEMPLATES), json_objects, json_values))
        sub = draw(
            st.one_of(
                st.sampled_from(["api_retry", "model_fallback", "worker_shutting_down", "init"]), json_values
            )
        )
        return SystemMessage(subtype=sub, data=data)
    if kind == 3:
        return UserMessage(content=draw(content), uuid=draw(st.one_of(st.none(), st.text(max_size=4))))
    if kind in (4, 5):
        name = draw(
            st.sampled_from(["AssistantMessage", "ResultMessage", "SystemMessage", "RateLimitEvent", "Other"])
        )
        fields = _ASSISTANT_FIELDS if name == "AssistantMessage" else (*_RESULT_FIELDS, "data")
        attrs = draw(
            st.dictionaries(st.sampled_from(fields), st.one_of(any_value, content), max_size=len(fields))
        )
        return _duck(name, attrs)
    if kind == 6:
        data = draw(st.one_of(json_objects, st.builds(lambda: dict(STREAM_TEMPLATES["result_error"]))))
        return ResultError(
            draw(_text_values), data=data, exit_code=draw(st.one_of(st.none(), st.integers(-2, 300)))
        )
    if kind == 7:
        message = draw(_text_values)
        return draw(
            st.sampled_from(
                [
                    ProcessError(message, exit_code=1, stderr=message),
                    CLIConnectionError(message),
                    CLIJSONDecodeError(message, ValueError(message)),
                    RuntimeError(message),
                    Exception(message),
                    KeyboardInterrupt(message),
                ]
            )
        )
    attrs = draw(st.dictionaries(st.sampled_from(_RESULT_FIELDS), any_value, max_size=len(_RESULT_FIELDS)))
    return _duck("ResultError", attrs, base=Exception)


def sdk_event(obj: object) -> Event | None:
    if isinstance(obj, BaseException):
        event = from_sdk_exception(obj)
        assert isinstance(event, (Result, QueryError)), event
        if isinstance(event, Result):
            assert event.is_error, "an SDK exception became a successful result"
        else:
            assert event.message == type(obj).__name__, "raw exception text kept in the event"
        return event
    name = type(obj).__name__
    try:
        ev = from_sdk_message(obj)
    except MalformedMessage:  # a known type with a wrong shape (the module's rule): a window only
        assert name == "RateLimitEvent", obj
        return None
    assert ev is None or isinstance(ev, EVENT_TYPES), ev
    if name == "AssistantMessage":
        assert isinstance(ev, Assistant)
    if name == "ResultMessage":
        assert isinstance(ev, Result)
        if not wellformed_success_result(getattr(obj, "is_error", None), getattr(obj, "subtype", None)):
            assert ev.is_error, f"garbled ResultMessage became a success: {obj!r}"
    return ev


def check_sdk_objects(setup: str, negotiated: bool, objects: list[object]) -> None:
    ignored = 0
    try:
        probe = start(setup, negotiated)
        for obj in objects:
            if isinstance(obj, str) and obj == PROMPT:
                if not _open(probe):
                    probe.prompt()
                continue
            ev = sdk_event(obj)
            if ev is None:
                ignored += 1
                continue
            before_open = _open(probe)
            sent = probe.feed(ev)
            if isinstance(ev, Result) and before_open:
                settled = settlement(sent)
                assert settled is not None, "a result left the prompt unsettled"
                if ev.is_error:
                    assert not is_success(settled), f"{obj!r} settled the prompt as a success"
            probe.check()
    except BaseException:
        crashed("sdk_objects")
        raise
    tally("sdk_objects", inputs=len(objects), ignored=ignored)


# ------------------------------------------------------------------ 4. history entries


@st.composite
def stored_messages(draw: st.DrawFn, objects: bool = True) -> list[object]:
    """A stored history: templates (mutated), raw JSON, and (``objects``) SessionMessage objects
    with odd fields and duck-typed look-alikes."""
    from claude_agent_sdk.types import SessionMessage

    out: list[object] = []
    for i in range(draw(st.integers(0, 12))):
        kind = draw(st.integers(0, 5 if objects else 3))
        if kind <= 2:
            item: Any = draw(mutated(HISTORY_TEMPLATES))
            if isinstance(item, dict) and isinstance(item.get("uuid"), str):
                item["uuid"] = f"{item['uuid']}-{i}"  # stored uuids are unique (see test_fuzz reproducer)
        elif kind == 3:
            item = draw(json_values)
        elif kind == 4:
            template = draw(mutated(HISTORY_TEMPLATES))
            item = SessionMessage(
                type=template.get("type", draw(json_values)),
                uuid=f"sm-{i}",
                session_id="s1",
                message=template.get("message", draw(json_values)),
                parent_tool_use_id=draw(st.one_of(st.none(), json_values)),
            )
        else:
            attrs = draw(
                st.dictionaries(st.sampled_from(["type", "uuid", "message", "isSidechain"]), json_values)
            )
            item = _duck("SessionMessage", attrs)
        out.append(item)
    return out


#: The usage-limit prefixes of the Claude Code CLI 2.1.332 bundled with claude-agent-sdk 0.2.189,
#: copied from the CLI binary itself (its prefix array; the TypeScript SDK exports the same array
#: as ``USAGE_LIMIT_ERROR_PREFIXES``). The spec ("History replay") recognises "only `<synthetic>`
#: messages beginning with SDK-owned stable prefixes", and the reference adapter matches exactly
#: this array: the CLI's own model-name pattern beside it ("Opus 5 requires usage credits.") is not
#: an SDK-owned prefix, so such a stored text is replayed as prose (docs/parity). The oracle keeps
#: its own copy so that it never reads ``lifecycle.conditions``, the code under test.
CLI_USAGE_LIMIT_PREFIXES: tuple[str, ...] = (
    "You've hit your",
    "You've reached your",
    "You're out of usage credits",
    "Your org is out of usage · add funds to continue",
    "Your org is out of usage · contact your admin",
    "Your seat type doesn't include usage credits",
    "Your seat type doesn't include usage",
    "Your usage allocation has been disabled by your admin",
    "Your group's usage limit is set to $0",
    "Fable 5 requires usage credits",
    "You're out of extra usage",
    "Your seat type doesn't include extra usage",
)
#: Usage-limit texts the CLI really wrote (the recordings) or the spec shows: replayed, each must
#: be the title exactly ("restores typed errors using the exact stored Claude text as `title`").
KNOWN_LIMIT_TEXTS = frozenset(
    {
        LIMIT,
        "You've hit your 5-hour limit · resets 4:06pm (UTC)",  # usage_limit_gateway recording
        "You've hit your individual spend limit · run /usage-credits to ask your admin for a higher limit",  # spec
    }
)
_TITLE_LIMIT = 500  # README, "Title and details": details only past 500 characters


def cli_usage_limit_prefix(text: str) -> str | None:
    """The CLI usage-limit prefix ``text`` starts with (None: not a usage-limit text)."""
    for prefix in CLI_USAGE_LIMIT_PREFIXES:
        if text.startswith(prefix):
            return prefix
    return None


@dataclass(frozen=True, eq=False)
class ReplayedTitle:
    """What the title of a replayed usage limit must be, compared with ``==`` against a str.

    A text the CLI really wrote is the title exactly. Any other text (fuzzed) may pass through
    redaction and trimming, which the oracle does not reimplement: the title is then non-empty,
    at most a title long, and keeps the usage-limit prefix the text starts with.
    """

    text: str

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, str):
            return NotImplemented
        if self.text in KNOWN_LIMIT_TEXTS:
            return other == self.text
        prefix = cli_usage_limit_prefix(self.text)
        return bool(other) and len(other) <= _TITLE_LIMIT + 1 and prefix is not None and other.startswith(prefix)

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"ReplayedTitle({self.text!r})"


def expected_replay(entries: list[HistoryEntry], negotiated: bool) -> list[tuple[str, object]]:
    """The spec's "History replay" restated without the core: what each entry becomes, in order.

    "It recognizes only `<synthetic>` messages beginning with SDK-owned stable prefixes" (top-level
    assistant history); "For a capable client, replay suppresses duplicate assistant prose and
    restores typed errors using the exact stored Claude text as `title`. Legacy clients receive
    the original transcript and no typed record."
    """
    out: list[tuple[str, object]] = []
    for e in entries:
        if not e.top_level:
            continue
        if e.role == "user":
            if e.prompt and e.text:
                out.append(("user", e.text))
        elif negotiated and e.model == "<synthetic>" and cli_usage_limit_prefix(e.text) is not None:
            out.append(("record", ReplayedTitle(e.text)))
        elif e.text:
            out.append(("agent", e.text))
    return out


def _shown(sent: list[Outbound]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for m in sent:
        if m.record is not None:
            out.append(("record", m.record.title))
        elif isinstance(m, SessionUpdateOut):
            kind = m.update["sessionUpdate"]
            out.append(("user" if kind == "user_message_chunk" else "agent", m.update["content"]["text"]))
    return out


def check_history(negotiated: bool, stored: list[object], chunk: int) -> None:
    try:
        entries: list[HistoryEntry] = []
        for s in stored:
            entry = history_entry(s)
            assert entry is None or isinstance(entry, HistoryEntry)
            if entry is not None:
                assert entry.role in ("user", "assistant") and isinstance(entry.text, str)
                assert entry.uuid is None or (isinstance(entry.uuid, str) and entry.uuid)
                assert not entry.prompt or entry.role == "user"
                entries.append(entry)
        whole = Probe(negotiated)
        whole.feed(load_history(stored))
        whole.check()
        assert _shown(whole.sent) == expected_replay(entries, negotiated)
        streamed = Probe(negotiated)
        for i in range(0, len(stored), chunk):
            streamed.feed(load_history(stored[i : i + chunk]))
        streamed.check()
        assert [m.to_jsonrpc() for m in streamed.sent] == [m.to_jsonrpc() for m in whole.sent]
        assert [a.id for a in streamed.ledger.active] == [a.id for a in whole.ledger.active]
    except BaseException:
        crashed("history_entry")
        raise
    tally("history_entry", inputs=len(stored), ignored=len(stored) - len(entries))


# ------------------------------------------------------------------ 5. transcripts (bytes)


def _type_last(obj: Any) -> Any:
    if isinstance(obj, dict) and "type" in obj:
        return {**{k: v for k, v in obj.items() if k != "type"}, "type": obj["type"]}
    return obj


#: Ways a JSON writer may put one transcript line (same value, different bytes). "cli" styles
#: are what Claude Code and common tools write; "other" styles are valid JSON too (finding 8).
WRITERS: dict[str, Callable[[Any], bytes]] = {
    "compact": lambda o: json.dumps(o, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8", "surrogatepass"
    ),
    "spaced": lambda o: json.dumps(o, ensure_ascii=False).encode("utf-8", "surrogatepass"),
    "ascii": lambda o: json.dumps(o, separators=(",", ":")).encode(),
    "type-last": lambda o: json.dumps(_type_last(o), separators=(",", ":")).encode(),
}
OTHER_WRITERS: dict[str, Callable[[Any], bytes]] = {
    "space-before-colon": lambda o: json.dumps(o, separators=(" , ", " : ")).encode(),
    "tab-after-colon": lambda o: json.dumps(o, separators=(",", ":\t")).encode(),
    "html-escaped": lambda o: (
        json.dumps(o, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e").encode()
    ),
}


@st.composite
def transcript_blobs(draw: st.DrawFn) -> tuple[list[bytes], bytes, bool, bool]:
    """(logical lines, separator, with BOM, with trailing separator) of a transcript file."""
    lines: list[bytes] = []
    for i in range(draw(st.integers(0, 10))):
        kind = draw(st.integers(0, 4))
        writer = WRITERS[draw(st.sampled_from(sorted(WRITERS)))]
        if kind <= 1:
            obj: Any = draw(mutated(HISTORY_TEMPLATES))
            if isinstance(obj, dict) and isinstance(obj.get("uuid"), str):
                obj["uuid"] = f"{obj['uuid']}-{i}"
            raw = writer(obj)
        elif kind == 2:
            raw = writer(draw(st.sampled_from(TRANSCRIPT_EXTRA)))
        elif kind == 3:
            good = writer(draw(st.sampled_from(sorted(HISTORY_TEMPLATES.values(), key=str))))
            raw = good[: draw(st.integers(0, len(good)))]  # truncated
        else:
            raw = draw(st.binary(max_size=40)) + draw(
                st.sampled_from([b"", b'"type":"user"', b'"type":"assistant"'])
            )
        lines.append(raw.replace(b"\r", b"").replace(b"\n", b""))
    if lines:
        lines[0] = lines[0].removeprefix(b"\xef\xbb\xbf")  # a BOM is only ever the file's first bytes
    return lines, draw(st.sampled_from([b"\n", b"\r\n"])), draw(st.booleans()), draw(st.booleans())


def unfiltered_replay(
    lines: list[bytes], negotiated: bool
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The same ledger fed *every* message of the transcript (no byte pre-filter).

    A differential check of ``replay_lines``' pre-filter only, which parses just the lines that
    can change a record: this shares the ledger, the history reader and the JSON parser with the
    code under test, so it cannot say what the records should be (:func:`expected_replay` does,
    for the history reader and the ledger, in :func:`check_history`)."""
    from lifecycle.cli.replay import _loads  # the same JSON parser (orjson) as the command

    ledger = SessionLedger("s1", negotiated=negotiated, epoch="replay")
    records: list[dict[str, Any]] = []
    for n, raw in enumerate(lines, start=1):
        try:
            obj = _loads(raw)
        except (ValueError, RecursionError):
            continue
        entry = history_entry(obj) if isinstance(obj, dict) else None
        if entry is not None:

            def keep(out: Outbound, n: int = n) -> None:
                if out.record is not None:
                    carrier = (
                        "prompt_response" if isinstance(out, PromptResponseOut) else "session_info_update"
                    )
                    records.append({"line": n, "carrier": carrier, "record": out.record.to_wire()})

            ledger.process(load_history([obj]), keep)
    return records, [{"id": a.id, "recovery": a.recovery.value} for a in ledger.active]


_TMP = Path(tempfile.mkdtemp(prefix="lifecycle-fuzz-"))
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)


def _view(lines: list[bytes], negotiated: bool) -> dict[str, Any]:
    return replay_lines(iter(lines), "s1", negotiated=negotiated).to_json()


def check_transcript(blob: tuple[list[bytes], bytes, bool, bool], negotiated: bool, cut: int) -> None:
    lines, sep, bom, trailing = blob
    try:
        full = _view(lines, negotiated)
        assert (
            full["lines"] == len(lines) and full["malformed"] <= len(lines) and full["messages"] <= len(lines)
        )
        per_id: dict[str, list[int]] = {}
        for r in full["records"]:
            assert 1 <= r["line"] <= len(lines)
            per_id.setdefault(r["record"]["id"], []).append(r["record"]["revision"])
        assert all(v == list(range(1, len(v) + 1)) for v in per_id.values()), per_id
        if not negotiated:
            assert full["records"] == []
        assert (full["records"], full["active"]) == unfiltered_replay(lines, negotiated), "pre-filter diverged"
        assert _view(lines, negotiated) == full  # deterministic
        # A truncated file shows exactly the records of its complete lines (streaming).
        k = min(cut, len(lines))
        prefix = _view(lines[:k], negotiated)
        assert prefix["records"] == [r for r in full["records"] if r["line"] <= k]
        # The file form: CRLF, BOM and a missing final newline change nothing.
        data = (b"\xef\xbb\xbf" if bom else b"") + sep.join(lines) + (sep if trailing and lines else b"")
        path = _TMP / "s1.jsonl"
        path.write_bytes(data)
        # Scanned in blocks (replay_stream), of the default size and of a tiny one so that lines and
        # the BOM straddle reads: the whole view (counts too) is replay_lines' over the file's lines
        # as a file object yields them (an empty last line without its newline is no line).
        as_read = replay_lines(io.BytesIO(data.removeprefix(b"\xef\xbb\xbf")), "s1", negotiated=negotiated)
        assert as_read.records == full["records"] and as_read.active == full["active"]
        for chunk_size in (CHUNK_SIZE, 1 + cut % 48):
            from_file = replay_transcript(path, negotiated=negotiated, chunk_size=chunk_size).to_json()
            assert from_file == as_read.to_json(), chunk_size
    except BaseException:
        crashed("transcript")
        raise
    tally("transcript", inputs=len(lines), typed=full["malformed"])


# ------------------------------------------------------------------ 6. trace files

AIR = {"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}}
_ADAPTER_EVENTS = (
    "cancel",
    "query_end",
    "runtime_replaced",
    "query_error",
    "authenticated",
    "deliver_fails",
    "nope",
)


@st.composite
def trace_lines(draw: st.DrawFn) -> list[str]:
    """A trace: adapter events (fresh turn ids; sometimes a reuse, which must be refused), SDK
    lines (mutated), truncated lines and text noise."""
    caps = draw(st.one_of(st.just(AIR), client_capabilities()))
    out = [json.dumps({"type": "adapter", "event": "initialize", "clientCapabilities": caps})]
    turns = 0
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.integers(0, 12))
        line: Any
        if kind == 0:
            sid = draw(st.one_of(st.sampled_from(["s1", "s2"]), json_values))
            line = {"type": "adapter", "event": "session", "sessionId": sid}
        elif kind == 1:
            history = draw(st.one_of(stored_messages(objects=False), json_values))
            line = {
                "type": "adapter",
                "event": "load",
                "sessionId": draw(st.sampled_from(["s1", "s3"])),
                "history": history,
            }
        elif kind in (2, 3):
            turns += 1
            turn: Any = f"t{turns}"
            if draw(st.integers(0, 5)) == 0:
                turn = draw(st.one_of(st.just(f"t{turns - 1}"), json_values))
            line = {"type": "adapter", "event": "prompt", "turnId": turn}
        elif kind == 4:
            line = {
                "type": "adapter",
                "event": draw(st.sampled_from(_ADAPTER_EVENTS)),
                "message": draw(_text_values),
                "ok": draw(json_values),
                "count": draw(st.one_of(st.integers(0, 3), json_values)),
            }
        elif kind == 5:
            out.append(draw(st.text(max_size=40)))
            continue
        elif kind == 6:
            good = json.dumps(draw(mutated(STREAM_TEMPLATES)))
            out.append(good[: draw(st.integers(0, len(good)))])
            continue
        else:
            line = draw(stream_lines)
        out.append(json.dumps(line, ensure_ascii=draw(st.booleans())))
    return out


def secret_trace(text: str, capable: bool = True) -> list[str]:
    """One trace with ``text`` in every text field a trace line can carry."""

    def j(obj: object) -> str:
        return json.dumps(obj, ensure_ascii=False)

    limit = f"You've hit your limit · {text}"
    return [
        j({"type": "adapter", "event": "initialize", "clientCapabilities": AIR if capable else {}}),
        j({"type": "adapter", "event": "session", "sessionId": "s1"}),
        j({"type": "system", "subtype": "model_fallback", "content": text}),
        j({"type": "adapter", "event": "prompt", "turnId": "t1"}),
        j(
            {
                "type": "system",
                "subtype": "api_retry",
                "attempt": 1,
                "max_retries": 2,
                "error_status": 529,
                "error": text,
            }
        ),
        j(
            {
                "type": "assistant",
                "parent_tool_use_id": None,
                "error": "server_error",
                "message": {"model": "<synthetic>", "content": [{"type": "text", "text": text}]},
            }
        ),
        j({"type": "result", "subtype": "success", "is_error": True, "result": text, "errors": [text]}),
        j({"type": "adapter", "event": "prompt", "turnId": "t2"}),
        j({"type": "adapter", "event": "query_error", "message": text}),
        j({"type": "auth_status", "isAuthenticating": False, "output": [text], "error": text}),
        j({"type": "adapter", "event": "runtime_replaced"}),
        j({"type": "system", "subtype": "worker_shutting_down", "reason": text}),
        j({"type": "adapter", "event": "query_end"}),
        j({"type": "user", "message": {"content": text}}),
        j({"type": text[:40], "payload": text}),
        j(
            {
                "type": "adapter",
                "event": "load",
                "sessionId": "s2",
                "history": [
                    {"type": "user", "uuid": "u1", "message": {"content": "hi"}},
                    {
                        "type": "assistant",
                        "uuid": "m1",
                        "message": {"model": "<synthetic>", "content": limit},
                    },
                ],
            }
        ),
        j({"type": "adapter", "event": "prompt", "turnId": "t3"}),
        j({"type": "result", "subtype": "error_max_turns", "is_error": True, "errors": [text]}),
        "{not json " + text,
    ]


def assert_legacy_clean(messages: list[dict[str, Any]]) -> None:
    """Legacy: no record and no ``_meta`` on any message (structurally, not by substring)."""
    for m in messages:
        result = m.get("result")
        assert not (isinstance(result, dict) and "_meta" in result), m
        update = m.get("params", {}).get("update", {})
        assert "_meta" not in update and update.get("sessionUpdate") != "session_info_update", m


def check_trace(lines: list[str]) -> None:
    try:
        seen: dict[int, tuple[SessionLedger, ClientProjection, list[dict[str, Any]]]] = {}
        reports: list[str] = []

        def emit(message: dict[str, Any]) -> None:
            json.dumps(message)  # serialisable
            ledger = driver._current  # the session the driver is delivering for (read-only use)
            assert ledger is not None
            _, client, messages = seen.setdefault(id(ledger), (ledger, ClientProjection(), []))
            client.receive(message)
            messages.append(message)

        driver = TraceDriver(emit, reports.append)
        for n, text in enumerate(lines, start=1):
            driver.feed_text(n, text)
        assert all(r.startswith("line ") for r in reports), reports
        for ledger in driver.sessions.values():
            seen.setdefault(id(ledger), (ledger, ClientProjection(), []))
        for ledger, client, messages in seen.values():
            assert_consistent(ledger, client, [])
            if not ledger.negotiated:
                assert_legacy_clean(messages)
            responses = [m["id"] for m in messages if "id" in m]
            assert len(responses) == len(set(responses)), f"a prompt was settled twice: {responses}"
        written: list[str] = []
        assert run_trace(lines, written.append, lambda _: None) == 0
        parsed = [json.loads(w) for w in written]
        trailer = parsed[-1]
        assert trailer["lifecycle"] == "active" and set(trailer["sessions"]) == set(driver.sessions)
        for sid, ledger in driver.sessions.items():
            assert [a["id"] for a in trailer["sessions"][sid]] == [a.id for a in ledger.active]
    except BaseException:
        crashed("trace")
        raise
    tally("trace", inputs=len(lines), typed=len(reports))


def check_trace_bytes(blob: bytes) -> None:
    """Raw bytes as ``lifecycle trace`` reads them (invalid UTF-8 -> U+FFFD, BOM, CRLF)."""
    try:
        lines = [
            raw.decode("utf-8", errors="replace").lstrip("\ufeff").rstrip("\r\n") for raw in blob.split(b"\n")
        ]
        reports: list[str] = []
        driver = TraceDriver(json.dumps, reports.append)
        for n, text in enumerate(lines, start=1):
            driver.feed_text(n, text)
        assert all(r.startswith(f"line {r.split()[1]}") for r in reports)
    except BaseException:
        crashed("trace_bytes")
        raise
    tally("trace_bytes", inputs=len(lines), typed=len(reports))


# ------------------------------------------------------------------ 7. client-side reading

record_fields = st.fixed_dictionaries(
    {
        "id": st.one_of(
            st.sampled_from(["t1:error", "s1:e1:1", "s1:notice:e1:2"]), st.text(min_size=1, max_size=8)
        ),
        "revision": st.integers(1, 5),
        "category": st.sampled_from(["connection", "access", "limit", "request", "service", "unknown"]),
        "severity": st.sampled_from(["warning", "error"]),
        "title": _text_values,
        "actions": st.lists(
            st.sampled_from(["retry", "login", "new_session", "reboot", "retry"]), max_size=4
        ),
    },
    optional={"details": st.text(max_size=20)},
)


@st.composite
def carrier_messages(draw: st.DrawFn) -> dict[str, Any]:
    """A prompt response or session/update carrying a (possibly broken) record, or noise."""
    rec: Any = draw(st.one_of(record_fields, record_fields.flatmap(lambda r: mutated({"r": r})), json_values))
    air: dict[str, Any] = {
        "version": draw(st.one_of(st.just(1), st.just(2), json_values)),
        "sessionFailure": rec,
    }
    meta: Any = draw(
        st.one_of(
            st.just({"jetbrains": {"air": air}}), st.just({"jetbrains": {"air": air}, "x": 1}), json_values
        )
    )
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return {"jsonrpc": "2.0", "id": "t1", "result": {"stopReason": "end_turn", "_meta": meta}}
    update = {"sessionUpdate": "session_info_update", "_meta": meta}
    message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": update}}
    if kind == 1:
        return message
    if kind == 2:
        return draw(mutated({"m": message}))
    return draw(json_objects)


def _meta_of(message: Mapping[str, Any]) -> object:
    """Where a client reads a record from (mirrors ``ClientProjection.receive``'s routing)."""
    if message.get("method") == "session/update":
        params = message.get("params")
        update = params.get("update") if isinstance(params, Mapping) else None
        if isinstance(update, Mapping) and update.get("sessionUpdate") == "session_info_update":
            return update.get("_meta")
        return None
    result = message.get("result")
    return result.get("_meta") if isinstance(result, Mapping) else None


def _filtered(meta: object) -> object:
    """``meta`` with the record's actions filtered as a client filters them (unknown, repeated)."""
    try:
        rec = meta["jetbrains"]["air"]["sessionFailure"]  # type: ignore[index]
    except (TypeError, KeyError, IndexError):
        return meta
    if not isinstance(rec, dict) or not isinstance(rec.get("actions"), list):
        return meta
    seen: list[str] = []
    for a in rec["actions"]:
        if isinstance(a, str) and a in {x.value for x in Action} and a not in seen:
            seen.append(a)
    out: Any = copy.deepcopy(meta)
    out["jetbrains"]["air"]["sessionFailure"]["actions"] = seen
    return out


def _client_props(messages: list[dict[str, Any]]) -> tuple[int, int]:
    typed = 0
    client = ClientProjection()
    for message in messages:
        before = {k: len(v) for k, v in client.received.items()}
        malformed = client.malformed
        client.receive(message)
        grew = [(k, v[-1]) for k, v in client.received.items() if len(v) > before.get(k, 0)]
        assert len(grew) <= 1 and client.malformed - malformed <= 1
        try:
            expected = read_record(_filtered(_meta_of(message)))
        except MalformedRecordError:
            typed += 1
            expected = None
        if grew:
            assert expected is not None, f"the client showed a record that read_record rejects: {message}"
            assert grew == [(expected.id, expected.revision)]
        else:
            assert expected is None, f"read_record reads {expected} but the client dropped it"
    ids = [e.record.id for e in client.entries if e.record is not None]
    assert len(ids) == len(set(ids)), "one id, two transcript entries"
    for e in client.entries:
        if e.record is not None:
            assert e.record.revision == max(client.received[e.record.id])
    return typed, client.ignored


def check_client(messages: list[dict[str, Any]]) -> None:
    try:
        typed, ignored = _client_props(messages)
    except BaseException:
        crashed("client_receive")
        raise
    tally("client_receive", inputs=len(messages), typed=typed, ignored=ignored)


def _read_record_props(meta: object) -> str:
    try:
        rec = read_record(meta)
    except MalformedRecordError:
        return "typed"
    if rec is None:
        return "ignored"
    assert isinstance(rec, SessionFailure)
    assert read_record(attach_record(None, rec)) == rec  # round trip
    assert SessionFailure.model_validate(rec.to_wire()) == rec
    return "record"


def check_read_record(meta: object) -> None:
    try:
        outcome = _read_record_props(meta)
    except BaseException:
        crashed("read_record")
        raise
    tally("read_record", typed=outcome == "typed", ignored=outcome == "ignored")


# ------------------------------------------------------------------ raw-bytes targets (fast under atheris)


def check_transcript_bytes(blob: bytes) -> None:
    """A transcript file's bytes, split as ``lifecycle replay`` splits them."""
    try:
        lines = [raw.rstrip(b"\r") for raw in blob.removeprefix(b"\xef\xbb\xbf").split(b"\n")]
        for negotiated in (True, False):
            view = replay_lines(iter(lines), "s1", negotiated=negotiated).to_json()
            assert view["lines"] == len(lines)
            per_id: dict[str, list[int]] = {}
            for r in view["records"]:
                per_id.setdefault(r["record"]["id"], []).append(r["record"]["revision"])
            assert all(v == list(range(1, len(v) + 1)) for v in per_id.values()), per_id
            assert negotiated or not view["records"]
    except BaseException:
        crashed("transcript_bytes")
        raise
    tally("transcript_bytes", inputs=len(lines), typed=view["malformed"])


def check_stream_bytes(blob: bytes) -> None:
    """Stream-json bytes, one line per message, into a session with a restored quota."""
    try:
        probe = start("quota_open", True)
        lines = blob.split(b"\n")
        for raw in lines:
            try:
                line = json.loads(raw.decode("utf-8", errors="replace"))
            except (ValueError, RecursionError):
                continue
            if isinstance(line, dict):
                feed_stream_line(probe, line)
                probe.check()
    except BaseException:
        crashed("stream_bytes")
        raise
    tally("stream_bytes", inputs=len(lines))


def check_json_bytes(data: bytes) -> None:
    """One byte string through every JSON-taking parser (what a peer or a file can send)."""
    try:
        try:
            value = json.loads(data.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            tally("json_bytes", ignored=1)
            return
        _negotiation_props(value)
        _read_record_props(value)
        if isinstance(value, dict):
            probe = start("open", True)
            feed_stream_line(probe, value)
            probe.check()
            _client_props([value])
            history_entry(value)
    except BaseException:
        crashed("json_bytes")
        raise
    tally("json_bytes")


# ------------------------------------------------------------------ the table both drivers use


@dataclass(frozen=True)
class Target:
    """One fuzz target: keyword strategies for ``check``, and its example budgets."""

    name: str
    strategies: dict[str, st.SearchStrategy[Any]]
    check: Callable[..., None]
    nightly_examples: int
    ci_examples: int = 100
    raw: bool = False  # check(data: bytes): atheris calls it directly (no hypothesis decoding)


@st.composite
def json_texts(draw: st.DrawFn) -> bytes:
    """JSON text of a parser-shaped value, sometimes cut, with a byte flipped or noise inserted."""
    value = draw(st.one_of(json_values, mutated(STREAM_TEMPLATES), carrier_messages(), client_capabilities()))
    raw = json.dumps(value, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    op = draw(st.integers(0, 4))
    at = draw(st.integers(0, len(raw)))
    if op == 1:
        raw = raw[:at]
    elif op == 2 and raw:
        at = min(at, len(raw) - 1)
        raw = raw[:at] + bytes([draw(st.integers(0, 255))]) + raw[at + 1 :]
    elif op == 3:
        raw = raw[:at] + draw(st.binary(max_size=8)) + raw[at:]
    return raw


_json_lines = st.lists(
    st.one_of(json_texts(), mutated(STREAM_TEMPLATES).map(lambda d: json.dumps(d).encode())), max_size=6
).map(b"\n".join)
_transcript_bytes = transcript_blobs().map(lambda b: (b"\xef\xbb\xbf" if b[2] else b"") + b[1].join(b[0]))

# nightly_examples: about 1.4 M inputs in all (examples x inputs per example), ~80 min on 2 cores
TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target("negotiate", {"caps": client_capabilities()}, check_negotiation, 100_000, 150),
        Target(
            "stream_json",
            {
                "setup": setups,
                "negotiated": st.booleans(),
                "lines": st.lists(st.one_of(stream_lines, st.just(PROMPT)), max_size=10),
            },
            check_stream_lines,
            60_000,
            120,
        ),
        Target(
            "sdk_objects",
            {
                "setup": setups,
                "negotiated": st.booleans(),
                "objects": st.lists(st.one_of(sdk_objects(), st.just(PROMPT)), max_size=8),
            },
            check_sdk_objects,
            40_000,
            100,
        ),
        Target(
            "history_entry",
            {"negotiated": st.booleans(), "stored": stored_messages(), "chunk": st.integers(1, 4)},
            check_history,
            40_000,
            100,
        ),
        Target(
            "transcript",
            {"blob": transcript_blobs(), "negotiated": st.booleans(), "cut": st.integers(0, 10)},
            check_transcript,
            30_000,
            100,
        ),
        Target("trace", {"lines": trace_lines()}, check_trace, 30_000, 100),
        Target(
            "client_receive",
            {"messages": st.lists(carrier_messages(), max_size=6)},
            check_client,
            30_000,
            100,
        ),
        Target(
            "read_record",
            {"meta": st.one_of(carrier_messages().map(_meta_of), json_values)},
            check_read_record,
            50_000,
            150,
        ),
        Target(
            "trace_bytes",
            {"blob": st.one_of(st.binary(max_size=400), _json_lines)},
            check_trace_bytes,
            50_000,
            100,
            raw=True,
        ),
        Target(
            "json_bytes",
            {"data": st.one_of(json_texts(), st.binary(max_size=200))},
            check_json_bytes,
            50_000,
            150,
            raw=True,
        ),
        Target("stream_bytes", {"blob": _json_lines}, check_stream_bytes, 30_000, 80, raw=True),
        Target(
            "transcript_bytes",
            {"blob": st.one_of(_transcript_bytes, st.binary(max_size=300))},
            check_transcript_bytes,
            30_000,
            80,
            raw=True,
        ),
    )
}
