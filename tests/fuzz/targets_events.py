"""Not a test: fuzz targets 1-3 (:mod:`fuzz.harness` re-exports them): capability negotiation,
stream-json lines into the ledger, and the SDK's objects and exceptions; each ``check_*`` takes one
generated input and raises ``AssertionError`` when a property breaks."""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from hypothesis import strategies as st

from fuzz.probe import (
    _INTERESTING_NUM,
    ERROR_KINDS,
    EVENT_TYPES,
    KNOWN_TYPES,
    LIMIT,
    LOGIN,
    PROMPT,
    RATE,
    STREAM_TEMPLATES,
    Probe,
    _open,
    assistant_garbled,
    auth_may_recover,
    is_success,
    json_objects,
    json_values,
    mutated,
    settlement,
    start,
    wellformed_success_result,
)
from fuzz.report import crashed, tally
from lifecycle import (
    Assistant,
    QueryError,
    Result,
    negotiate,
)
from lifecycle.claude import MalformedMessage, from_sdk_exception, from_sdk_message, from_stream_json
from lifecycle.events import Event

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
