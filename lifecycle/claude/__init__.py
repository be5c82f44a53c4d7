"""The Claude SDK edge: what an adapter receives from Claude Code -> lifecycle events.

Two input forms, one meaning:

* stream-json dicts exactly as the CLI prints them (``--output-format stream-json``; what
  ``lifecycle trace`` reads): :func:`from_stream_json`;
* ``claude_agent_sdk`` message objects and the exceptions its iterator raises:
  :func:`from_sdk_message`, :func:`from_sdk_exception`.

The SDK is optional: nothing here imports it; objects are recognised by their class name and read
by attribute, so the core works (and is tested) without the ``claude`` extra.

Unknown message types and subtypes are transcript traffic and translate to ``None``. A *known*
type with the wrong shape raises :class:`MalformedMessage`: it is reported and skipped, never
turned into a success.

Rate-limit windows (``rate_limit_event``, the SDK's ``RateLimitEvent``) have their own two
builders, :func:`rate_limit_from_stream_json` and :func:`sdk_rate_limit`, which give a
:class:`~lifecycle.events.RateLimitWindow`; the general dispatchers return that window too (the
ledger judges it, issue 32). The info object must be a mapping with a known ``status`` (else
:class:`MalformedMessage`); a ``rateLimitType`` that is not a short lowercase name, a
``utilization`` that is not a finite number in [0, 1] and a ``resetsAt`` that is not a whole
number of seconds between 1970 and 9999 read as unknown (``None``), never as a number.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from ..errors import MalformedMessage
from ..events import (
    MAX_WINDOWS,
    ApiRetry,
    Assistant,
    AuthStatus,
    Event,
    Informational,
    MessagesReplaced,
    ModelFallback,
    ModelRefusalFallback,
    ModelRefusalNoFallback,
    QueryError,
    RateLimitWindow,
    Result,
    WorkerShuttingDown,
)
from ..history import replaced_uuids, text_of

__all__ = [
    "MalformedMessage",
    "from_sdk_exception",
    "from_sdk_message",
    "from_stream_json",
    "rate_limit_from_stream_json",
    "replaced_uuids",
    "sdk_assistant",
    "sdk_rate_limit",
    "sdk_result",
    "sdk_system",
    "stream_events",
    "text_of",
    "unified_windows",
]


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _error_kind(value: object) -> str | None:
    """The SDK error kind; a present value that is not a string is still a failure (degrades)."""
    if value is None or isinstance(value, str):
        return value
    return "unrecognized"


def _system(subtype: object, data: Mapping[str, Any]) -> Event | None:
    if subtype == "api_retry":
        return ApiRetry(
            attempt=data.get("attempt"),
            max_retries=data.get("max_retries"),
            error_status=_int(data.get("error_status")),
            error=_str(data.get("error")),
        )
    if subtype == "model_fallback":
        return ModelFallback(content=_str(data.get("content")) or "")
    if subtype == "worker_shutting_down":
        return WorkerShuttingDown(reason=_str(data.get("reason")))
    if subtype == "model_refusal_fallback":
        return ModelRefusalFallback(
            original_model=_str(data.get("original_model")) or "the model",
            fallback_model=_str(data.get("fallback_model")) or "the fallback model",
            direction=_str(data.get("direction")),
            scope=_str(data.get("scope")),
            category=_str(data.get("api_refusal_category")) or None,
            explanation=_str(data.get("api_refusal_explanation")) or None,
        )
    if subtype == "informational":
        return Informational(
            content=_str(data.get("content")) or "",
            level=_str(data.get("level")),
            tool_use_id=_str(data.get("tool_use_id")),
        )
    if subtype == "model_refusal_no_fallback":
        # Only a banner about the user's own message explains a refusal (the reference adapter).
        if data.get("refused_user_message_uuid", "") is None:
            return ModelRefusalNoFallback()
        return ModelRefusalNoFallback(
            explanation=_str(data.get("api_refusal_explanation")) or _str(data.get("content")) or None
        )
    return None


#: An environment variable's value as Claude Code quotes it in a start-up failure's message
#: (``Invalid proxy URL in HTTPS_PROXY: "alice:pw@proxy:8080" cannot be parsed as a URL.``): the
#: value is the user's environment, shown nowhere (docs/security.md), so only the name stays.
_QUOTED_ENV_VALUE: Final = re.compile(r'\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+): "[^"\n]*"')
#: ``user:password@`` in a value without a scheme, quoted some other way (the redaction's URL rule
#: needs ``scheme://``).
_SCHEMELESS_USERINFO: Final = re.compile(r"(?<![\w.%+-])([\w.%+-]+):[^\s@/\"']+@(?=[\w.-])")


def _startup_text(text: str) -> str:
    """A start-up failure's message without the environment values it quotes."""
    text = _QUOTED_ENV_VALUE.sub(r'\1: "[redacted env]"', text)
    return _SCHEMELESS_USERINFO.sub(r"\1:[redacted credential]@", text)


def _result(
    subtype: object,
    is_error: object,
    result: object,
    errors: object,
    api_error_status: object,
    stop_reason: object,
    terminal_reason: object,
    startup_failure: object = None,
) -> Result:
    sub = _str(subtype)
    # Only an explicit ``is_error: false`` on a ``success`` result is a success; anything else
    # (a missing or garbled flag, an error subtype) is a failure, never an invented success.
    failed = not (is_error is False and sub == "success")
    errs: tuple[str, ...] = ()
    if errors is not None and isinstance(errors, Sequence) and not isinstance(errors, (str, bytes, bytearray)):
        errs = tuple(e for e in errors if isinstance(e, str))
    text = _str(result)
    if _str(startup_failure):  # its message quotes the environment as the user set it
        errs = tuple(_startup_text(e) for e in errs)
        text = _startup_text(text) if text is not None else None
    return Result(
        subtype=sub,
        is_error=failed,
        result=text,
        errors=errs,
        api_error_status=_int(api_error_status),
        stop_reason=_str(stop_reason),
        terminal_reason=_str(terminal_reason),
        startup_failure=_str(startup_failure) or None,
    )


def _stream_system(line: Mapping[str, Any]) -> Event | None:
    return _system(line.get("subtype"), line)


def _stream_assistant(line: Mapping[str, Any]) -> Event:
    message = line.get("message")
    if not isinstance(message, (dict, Mapping)):
        raise MalformedMessage("assistant message without a message object")
    error = line.get("error")
    model = message.get("model")
    uuid = line.get("uuid")
    refusal = None
    if message.get("stop_reason") == "refusal":
        details = message.get("stop_details")
        refusal = _str(details.get("explanation")) if isinstance(details, Mapping) else None
    return Assistant(
        text=text_of(message.get("content")),
        model=model if isinstance(model, str) else None,
        error=_error_kind(error),
        top_level=line.get("parent_tool_use_id") is None,
        uuid=uuid if isinstance(uuid, str) else None,
        refusal=refusal or None,
    )


def _stream_result(line: Mapping[str, Any]) -> Event:
    return _result(
        line.get("subtype"),
        line.get("is_error"),
        line.get("result"),
        line.get("errors"),
        line.get("api_error_status"),
        line.get("stop_reason"),
        line.get("terminal_reason"),
        line.get("startup_failure_reason"),
    )


def _stream_auth_status(line: Mapping[str, Any]) -> Event | None:
    authenticating = line.get("isAuthenticating")
    if authenticating is True:
        return None
    # Success is exactly "not authenticating and no error": a garbled error value is not success.
    return AuthStatus(ok=authenticating is False and line.get("error") in (None, ""))


#: The statuses Claude Code reports for a window (claude_agent_sdk ``RateLimitStatus``).
RATE_LIMIT_STATUSES: Final = frozenset({"allowed", "allowed_warning", "rejected"})
_WINDOW_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_LATEST_RESET = 253402300799  # 9999-12-31T23:59:59Z: anything later is not a reset time


def _window_name(value: object) -> str | None:
    return value if isinstance(value, str) and _WINDOW_NAME.fullmatch(value) else None


def _fraction(value: object) -> float | None:
    """A share used, 0 to 1; anything else (NaN, infinity, a string, a bool, out of range) is unknown."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    share = float(value)
    return share if math.isfinite(share) and 0.0 <= share <= 1.0 else None


def _epoch(value: object) -> int | None:
    """Unix seconds of a reset; anything else (a string, a bool, a fraction of a second, before
    1970 or after 9999) is unknown."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    seconds = int(value)
    return seconds if 0 < seconds <= _LATEST_RESET else None


def _rate_limit(info: object) -> RateLimitWindow:
    if not isinstance(info, Mapping):
        raise MalformedMessage("rate_limit_event without a rate_limit_info object")
    status = info.get("status")
    if not isinstance(status, str) or status not in RATE_LIMIT_STATUSES:
        raise MalformedMessage("rate_limit_event without a known status")
    window = _window_name(info.get("rateLimitType"))
    # Claude Code leaves the top-level share out when the window is back to allowed; its own
    # reading of that window (unifiedWindows) still has it.
    windows = info.get("unifiedWindows")
    own = windows.get(window) if window is not None and isinstance(windows, Mapping) else None
    own = own if isinstance(own, Mapping) else {}
    utilization = _fraction(info.get("utilization"))
    resets_at = _epoch(info.get("resetsAt"))
    return RateLimitWindow(
        window=window,
        status=status,
        utilization=_fraction(own.get("utilization")) if utilization is None else utilization,
        resets_at=_epoch(own.get("resetsAt")) if resets_at is None else resets_at,
        raw=dict(info),
    )


def rate_limit_from_stream_json(line: Mapping[str, Any]) -> RateLimitWindow | None:
    """A stream-json ``rate_limit_event`` line as its window; None for any other line.

    Raises:
        MalformedMessage: a ``rate_limit_event`` whose ``rate_limit_info`` is not an object with
            a known ``status``.
    """
    if line.get("type") != "rate_limit_event":
        return None
    return _rate_limit(line.get("rate_limit_info"))


def sdk_rate_limit(message: object) -> RateLimitWindow:
    """A ``RateLimitEvent`` as its window, read from ``rate_limit_info.raw`` (the line as Claude
    Code printed it; ``rate_limit_info`` may be a mapping of the same fields, or that object
    itself), else from the typed attributes.

    Raises:
        MalformedMessage: no ``rate_limit_info``, or one without a known ``status``.
    """
    info = getattr(message, "rate_limit_info", None)
    if info is None:
        raise MalformedMessage("RateLimitEvent without rate_limit_info")
    raw = info.get("raw", info) if isinstance(info, Mapping) else getattr(info, "raw", None)
    if isinstance(raw, Mapping) and raw:
        return _rate_limit(raw)
    typed = {
        "status": getattr(info, "status", None),
        "resetsAt": getattr(info, "resets_at", None),
        "rateLimitType": getattr(info, "rate_limit_type", None),
        "utilization": getattr(info, "utilization", None),
    }
    return _rate_limit({k: v for k, v in typed.items() if v is not None})


def unified_windows(event: RateLimitWindow) -> tuple[RateLimitWindow, ...]:
    """Every window ``event`` reports: its own first, then each other window of
    ``raw.unifiedWindows`` (the utilization and reset Claude Code read for it, and its
    ``status`` when Claude Code sent one, else None; read when ``event`` was), at most
    :data:`~lifecycle.events.MAX_WINDOWS` in all (the bound the ledger remembers: issue 52.5).
    Entries that are not objects, or whose names are not window names, are left out."""
    found = [event]
    others = event.raw.get("unifiedWindows")
    if not isinstance(others, Mapping):
        return tuple(found)
    for name, entry in others.items():
        if len(found) >= MAX_WINDOWS:
            break
        window = _window_name(name)
        if window is None or window == event.window or not isinstance(entry, Mapping):
            continue
        status = entry.get("status")
        found.append(
            RateLimitWindow(
                window=window,
                status=status if isinstance(status, str) and status in RATE_LIMIT_STATUSES else None,
                utilization=_fraction(entry.get("utilization")),
                resets_at=_epoch(entry.get("resetsAt")),
                raw=dict(entry),
                observed_at=event.observed_at,
            )
        )
    return tuple(found)


# Only these types can matter; every other line (stream_event, user, ...) is transcript traffic,
# dismissed by one dictionary miss on the hot path.
_STREAM_TYPES: dict[object, Callable[[Mapping[str, Any]], Event | None]] = {
    "system": _stream_system,
    "assistant": _stream_assistant,
    "result": _stream_result,
    "auth_status": _stream_auth_status,
    "rate_limit_event": rate_limit_from_stream_json,
}


def from_stream_json(line: Mapping[str, Any]) -> Event | None:
    """Translate one stream-json message (a parsed line) into an event, or None for traffic.

    Raises:
        MalformedMessage: a known type (``assistant``, ``result``, ``system``,
            ``rate_limit_event``) with a wrong shape.
    """
    kind = line.get("type")
    if kind == "stream_event":
        return None  # most lines of a streamed turn: dismissed before any other lookup
    try:
        translate = _STREAM_TYPES.get(kind)
    except TypeError:  # an unhashable "type" value: not a known message
        return None
    return None if translate is None else translate(line)


def stream_events(line: Mapping[str, Any]) -> tuple[Event, ...]:
    """Every event one stream-json line makes, in order: an assistant line that names messages it
    replaces (``supersedes``) is :class:`~lifecycle.events.MessagesReplaced` first, then its own
    event (:func:`from_stream_json`, which raises as it does)."""
    replaced = replaced_uuids(line.get("supersedes")) if line.get("type") == "assistant" else ()
    event = from_stream_json(line)
    head: tuple[Event, ...] = (MessagesReplaced(uuids=replaced),) if replaced else ()
    return head if event is None else (*head, event)


def from_sdk_message(message: object) -> Event | None:
    """Translate a ``claude_agent_sdk`` message object into an event, or None for traffic."""
    name = type(message).__name__
    if name == "AssistantMessage":
        return sdk_assistant(message)
    if name == "ResultMessage":
        return sdk_result(message)
    if name == "RateLimitEvent":
        return sdk_rate_limit(message)
    return sdk_system(message)


def sdk_assistant(message: object, *, shown: bool = False, refusal: str | None = None) -> Assistant:
    """An ``AssistantMessage`` as its event; ``shown`` and ``refusal`` are what the adapter
    already knows of it (its text reached the client as streamed deltas; the refusal explanation
    its stream carried)."""
    model = getattr(message, "model", None)
    return Assistant(
        text=text_of(getattr(message, "content", None)),
        model=_str(model),
        error=_error_kind(getattr(message, "error", None)),
        top_level=getattr(message, "parent_tool_use_id", None) is None,
        uuid=_str(getattr(message, "uuid", None)),
        refusal=refusal,
        shown=shown,
    )


def sdk_result(message: object) -> Event:
    """A ``ResultMessage`` as its event."""
    return _result(
        getattr(message, "subtype", None),
        getattr(message, "is_error", None),
        getattr(message, "result", None),
        getattr(message, "errors", None),
        getattr(message, "api_error_status", None),
        getattr(message, "stop_reason", None),
        getattr(message, "terminal_reason", None),
        getattr(message, "startup_failure_reason", None),  # set from the raw line (agent/adopt.py)
    )


def sdk_system(message: object) -> Event | None:
    """A ``SystemMessage`` (``subtype`` and ``data``) as its event, or None for traffic."""
    data = getattr(message, "data", None)
    subtype = getattr(message, "subtype", None)
    if isinstance(data, Mapping) and isinstance(subtype, str):
        return _system(subtype, data)
    return None


def from_sdk_exception(exc: BaseException) -> Event:
    """The event for an exception raised by the SDK's query iterator.

    A ``ResultError`` carries the error result it follows: it becomes that :class:`Result`, which
    the ledger ignores when the result was already seen (it is not a second incident). Anything
    else is a :class:`QueryError`; its text is kept only so the event is complete, and is never
    shown or logged.
    """
    if type(exc).__name__ == "ResultError":
        line = getattr(exc, "data", None)  # the raw result line (the SDK's ResultMessage drops the reason)
        return _result(
            getattr(exc, "subtype", None),
            True,
            getattr(exc, "result", None),
            getattr(exc, "errors", None),
            getattr(exc, "api_error_status", None),
            None,
            getattr(exc, "terminal_reason", None),
            line.get("startup_failure_reason") if isinstance(line, Mapping) else None,
        )
    return QueryError(message=type(exc).__name__)
