"""Not a test: fuzz targets 6-7 and the raw-bytes targets (:mod:`fuzz.harness` re-exports them):
trace files and ``lifecycle trace``, the client-side reading of records, and the bytes targets fast
under atheris."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from fuzz.probe import STREAM_TEMPLATES, assert_consistent, json_objects, json_values, mutated, start, stream_lines
from fuzz.report import crashed, tally
from fuzz.targets_events import _negotiation_props, _text_values, client_capabilities, feed_stream_line
from fuzz.targets_history import stored_messages
from lifecycle import (
    ClientProjection,
    SessionFailure,
    SessionLedger,
    read_record,
)
from lifecycle.cli.replay import replay_lines
from lifecycle.cli.trace import TraceDriver, run_trace
from lifecycle.history import history_entry
from lifecycle.wire import Action, MalformedRecordError, attach_record

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
