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

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from fuzz.probe import (
    ERROR_KINDS,
    EVENT_TYPES,
    FALLBACK,
    HISTORY_TEMPLATES,
    KEYS,
    KNOWN_TYPES,
    LIMIT,
    LOGIN,
    NIGHTLY,
    PROMPT,
    RATE,
    SETUPS,
    STREAM_TEMPLATES,
    TRANSCRIPT_EXTRA,
    Probe,
    _open,
    assert_consistent,
    assistant_garbled,
    auth_may_recover,
    deep,
    is_success,
    json_objects,
    json_values,
    mutated,
    scalars,
    settlement,
    setups,
    start,
    stream_lines,
    wellformed_success_result,
)
from fuzz.targets_client import (
    AIR,
    _client_props,
    _meta_of,
    assert_legacy_clean,
    carrier_messages,
    check_client,
    check_json_bytes,
    check_read_record,
    check_stream_bytes,
    check_trace,
    check_trace_bytes,
    check_transcript_bytes,
    record_fields,
    secret_trace,
    trace_lines,
)
from fuzz.targets_events import (
    _duck,
    check_garbage_never_recovers,
    check_negotiation,
    check_sdk_objects,
    check_stream_lines,
    client_capabilities,
    feed_stream_line,
    garbled_assistant_lines,
    garbled_auth_lines,
    negotiation_oracle,
    sdk_event,
    sdk_objects,
)
from fuzz.targets_history import (
    CLI_USAGE_LIMIT_PREFIXES,
    KNOWN_LIMIT_TEXTS,
    OTHER_WRITERS,
    WRITERS,
    ReplayedTitle,
    check_history,
    check_transcript,
    cli_usage_limit_prefix,
    expected_replay,
    stored_messages,
    transcript_blobs,
    unfiltered_replay,
)

#: what the tests and the atheris runner read as ``h.<name>``: the names of the target modules too
__all__ = [
    "AIR", "CLI_USAGE_LIMIT_PREFIXES", "ERROR_KINDS", "EVENT_TYPES", "FALLBACK", "HISTORY_TEMPLATES", "KEYS",
    "KNOWN_LIMIT_TEXTS", "KNOWN_TYPES", "LIMIT", "LOGIN", "NIGHTLY", "OTHER_WRITERS", "PROMPT", "RATE", "SETUPS",
    "STREAM_TEMPLATES", "TARGETS", "TRANSCRIPT_EXTRA", "WRITERS", "Probe", "ReplayedTitle", "Target",
    "_client_props", "_duck", "_meta_of", "_open", "assert_consistent", "assert_legacy_clean", "assistant_garbled",
    "auth_may_recover", "carrier_messages", "check_client", "check_garbage_never_recovers", "check_history",
    "check_json_bytes", "check_negotiation", "check_read_record", "check_sdk_objects", "check_stream_bytes",
    "check_stream_lines", "check_trace", "check_trace_bytes", "check_transcript", "check_transcript_bytes",
    "cli_usage_limit_prefix", "client_capabilities", "deep", "expected_replay", "feed_stream_line",
    "garbled_assistant_lines", "garbled_auth_lines", "is_success", "json_objects", "json_texts", "json_values",
    "mutated", "negotiation_oracle", "record_fields", "scalars", "sdk_event", "sdk_objects", "secret_trace",
    "settlement", "setups", "start", "stored_messages", "stream_lines", "trace_lines", "transcript_blobs",
    "unfiltered_replay", "wellformed_success_result",
]


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
