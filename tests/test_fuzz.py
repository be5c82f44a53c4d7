"""Hostile input: every parser the adapter feeds from the CLI, the network or a stored file.

Each ``test_fuzz_*`` drives one target of :data:`fuzz.harness.TARGETS` (the oracles are there);
the same targets run coverage-guided under atheris (tests/fuzz/run_atheris.py). Outcomes allowed
for any input: an event or ``None``, an ignored line with a report, or the typed error the
parser documents (``MalformedMessage``, ``MalformedRecordError``, ``LifecycleError``); never
another exception, never a success or a recovery made up from garbage, and the ledger's belief
always equal to what the client received.

Profiles: the loaded hypothesis profile (``ci`` by default, ``HYPOTHESIS_PROFILE=long``) or
``FUZZ_PROFILE=nightly`` (randomised, >= 1,000,000 inputs in all; see README.md, "Guarantees under hostile input").
The counts are printed in the terminal summary and recorded as test properties.

The ``test_finding_*`` tests are minimal reproducers of defects this suite found in the core;
each names the change it needs. They fail until the core owner applies it.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from fuzz import harness as h
from fuzz.report import SECTIONS, install, record_delta
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lifecycle import (
    ApiRetry,
    Assistant,
    AuthStatus,
    ClientProjection,
    PromptStarted,
    Result,
    negotiate,
    read_record,
)
from lifecycle.claude import MalformedMessage, from_sdk_message, from_stream_json
from lifecycle.cli.replay import replay_lines, replay_transcript
from lifecycle.cli.trace import TraceDriver
from lifecycle.history import history_entry, load_history
from lifecycle.wire import MalformedRecordError

ROOT = Path(__file__).resolve().parent.parent
F = TypeVar("F", bound=Callable[..., Any])
T = h.TARGETS


@pytest.fixture(autouse=True)
def _counts(request: pytest.FixtureRequest, record_property: Callable[[str, object], None]) -> Iterator[None]:
    install(request.config)
    with record_delta(record_property):
        yield


def profile(name: str) -> Callable[[F], F]:
    """``name``'s budget: nightly size under FUZZ_PROFILE=nightly, CI size under the default
    ``ci`` profile (the suite's share of the ~60 s CI budget), else the loaded profile's."""
    if h.NIGHTLY:
        return settings(max_examples=T[name].nightly_examples, derandomize=False)
    if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci":
        return settings(max_examples=T[name].ci_examples)
    return lambda f: f


AIR_1 = {"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}}


def _air(version: object, capabilities: object = ("sessionFailure",)) -> dict[str, Any]:
    listed = list(capabilities) if isinstance(capabilities, tuple) else capabilities
    return {"_meta": {"jetbrains": {"air": {"version": version, "capabilities": listed}}}}


# ------------------------------------------------------------------ 1. capability negotiation


@profile("negotiate")
@given(caps=T["negotiate"].strategies["caps"])
@example(caps=_air(math.nan))
@example(caps=_air(math.inf))
@example(caps=_air(True))
@example(caps=_air(1.0))
@example(caps=_air(10**400))
@example(caps=_air(1, "sessionFailure"))
def test_fuzz_negotiate(caps: object) -> None:
    h.check_negotiation(caps)


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        (1, True),
        (2, True),
        (10**400, True),  # a huge finite integer is still a finite integer >= 1
        (1.0, True),
        (1e308, True),
        (0, False),
        (-1, False),
        (0.5, False),
        (1.5, False),
        (math.nan, False),
        (math.inf, False),
        (-math.inf, False),
        (True, False),
        (False, False),
        ("1", False),
        (None, False),
        ([1], False),
        ({"major": 1}, False),
    ],
)
def test_negotiation_versions(version: object, expected: bool) -> None:
    assert negotiate(_air(version)) is expected
    # the same document through JSON (NaN/Infinity are what json.loads accepts; 10**400 round-trips)
    assert negotiate(json.loads(json.dumps(_air(version)))) is expected


def test_negotiation_survives_depth_and_hostile_containers() -> None:
    assert negotiate({"_meta": h.deep(50_000)}) is False
    assert (
        negotiate({"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": h.deep(50_000)}}}}) is False
    )

    class Exploding(dict[str, Any]):
        def get(self, *a: object) -> Any:
            raise RuntimeError("hostile mapping")

    assert negotiate(Exploding()) is False
    big = {"version": 1, "capabilities": ["x"] * 1_000_000 + ["sessionFailure"]}
    assert negotiate({"_meta": {"jetbrains": {"air": big}}}) is True


# ------------------------------------------------------------------ 2. stream-json lines and the ledger


@profile("stream_json")
@given(**T["stream_json"].strategies)
@example(setup="open", negotiated=True, lines=[{"type": "result"}])
@example(
    setup="open", negotiated=False, lines=[{"type": "result", "is_error": "false", "subtype": "success"}]
)
@example(setup="open", negotiated=True, lines=[{"type": "result", "is_error": 0, "subtype": "success"}])
@example(
    setup="failing", negotiated=True, lines=[{"type": "result", "is_error": False, "subtype": "success"}]
)
@example(setup="open", negotiated=True, lines=[{"type": "assistant", "message": None}])
@example(
    setup="retrying", negotiated=True, lines=[{"type": "system", "subtype": "api_retry", "attempt": math.nan}]
)
def test_fuzz_stream_json(setup: str, negotiated: bool, lines: list[object]) -> None:
    h.check_stream_lines(setup, negotiated, lines)


def _key_paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path of a JSON value (a path to each field, nested ones included)."""
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else []
    out: list[tuple[Any, ...]] = []
    for k, v in items:
        out.append((*prefix, k))
        out.extend(_key_paths(v, (*prefix, k)))
    return out


def test_known_types_with_every_field_retyped() -> None:
    """Systematic, not random: each field of each template deleted or replaced by each odd value,
    fed (each in an open prompt turn) into sessions started in every setup, capable and legacy."""
    odd: list[object] = [None, True, 0, -1, 2**64, 1.5, math.nan, "", "x", [], [1], {}, {"a": 1}, "$delete"]
    lines: list[object] = []
    for template in h.STREAM_TEMPLATES.values():
        for path in _key_paths(template):
            for value in odd:
                line = json.loads(json.dumps(template))  # a fresh copy
                parent = line
                for k in path[:-1]:
                    parent = parent[k]
                if value == "$delete":
                    del parent[path[-1]]
                else:
                    parent[path[-1]] = value
                lines.append(line)
    # Short sessions (the per-line checks are O(ids seen)); chunk j takes every n-th line, so
    # each session mixes templates, and each chunk starts from a different setup.
    setups = sorted(h.SETUPS)
    chunks = len(lines) // 25 + 1
    for j in range(chunks):
        for negotiated in (True, False):
            part: list[object] = [x for line in lines[j::chunks] for x in (h.PROMPT, line)]
            h.check_stream_lines(setups[j % len(setups)], negotiated, part)
    SECTIONS.setdefault("fuzz: systematic retyping", []).append(
        f"stream-json fields deleted/retyped: {len(lines)} lines x capable/legacy"
    )
    assert len(lines) > 1000


def test_from_stream_json_on_deep_and_huge_lines() -> None:
    deep = h.deep(20_000)
    assert from_stream_json({"type": deep}) is None
    ev = from_stream_json({"type": "assistant", "message": {"model": "m", "content": [deep, {"text": "x"}]}})
    assert isinstance(ev, Assistant) and ev.text == "x"
    with pytest.raises(MalformedMessage):
        from_stream_json({"type": "assistant", "message": deep})
    huge = "x" * 10_000_000
    ev = from_stream_json({"type": "assistant", "message": {"model": "<synthetic>", "content": huge}})
    assert isinstance(ev, Assistant) and len(ev.text) == 10_000_000


# ------------------------------------------------------------------ 3. SDK objects and exceptions


@profile("sdk_objects")
@given(**T["sdk_objects"].strategies)
def test_fuzz_sdk_objects(setup: str, negotiated: bool, objects: list[object]) -> None:
    h.check_sdk_objects(setup, negotiated, objects)


def test_sdk_lookalikes_with_no_attributes_at_all() -> None:
    for name in ("AssistantMessage", "ResultMessage", "SystemMessage", "UserMessage", "StreamEvent"):
        ev = h.sdk_event(h._duck(name, {}))
        if name == "AssistantMessage":
            assert isinstance(ev, Assistant) and ev.text == "" and ev.model is None
        elif name == "ResultMessage":
            assert isinstance(ev, Result) and ev.is_error  # a result without is_error is a failure
        else:
            assert ev is None
    ev = h.sdk_event(h._duck("ResultError", {}, base=Exception))
    assert isinstance(ev, Result) and ev.is_error


# ------------------------------------------------------------------ 4. history entries


@profile("history_entry")
@given(**T["history_entry"].strategies)
def test_fuzz_history(negotiated: bool, stored: list[object], chunk: int) -> None:
    h.check_history(negotiated, stored, chunk)


def test_the_history_oracle_on_a_known_history() -> None:
    """The oracle of test_fuzz_history, on a history whose outcome the spec spells out."""
    stored = [h.HISTORY_TEMPLATES[k] for k in ("prompt", "limit", "tool_result", "sidechain", "answer")]
    entries = [e for e in map(history_entry, stored) if e is not None]
    assert h.expected_replay(entries, True) == [("user", "hi"), ("record", h.LIMIT), ("agent", "Recovered")]
    assert h.expected_replay(entries, False) == [("user", "hi"), ("agent", h.LIMIT), ("agent", "Recovered")]
    # a fuzzed text: trimmed or redacted titles keep the prefix; other titles do not pass
    odd = h.ReplayedTitle("You've reached your limit " + "x" * 600)
    assert odd == "You've reached your limit xxx…" and odd != "Reached" and odd != ""
    assert h.ReplayedTitle(h.LIMIT) != h.LIMIT + "."


def test_history_entry_on_deep_and_odd_values() -> None:
    assert history_entry(h.deep(20_000)) is None
    odd_values: list[object] = [
        None,
        0,
        "user",
        b"user",
        [],
        {"type": "user"},
        {"type": "user", "message": "x"},
    ]
    for odd in odd_values:
        assert history_entry(odd) is None
    e = history_entry({"type": "assistant", "message": {"content": h.deep(20_000)}})
    assert e is not None and e.text == ""


# ------------------------------------------------------------------ 5. transcript files


@profile("transcript")
@given(**T["transcript"].strategies)
def test_fuzz_transcript(blob: tuple[list[bytes], bytes, bool, bool], negotiated: bool, cut: int) -> None:
    h.check_transcript(blob, negotiated, cut)


def _line(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def _limit_transcript() -> list[bytes]:
    return [
        _line(h.HISTORY_TEMPLATES["prompt"]),
        _line(h.HISTORY_TEMPLATES["limit"]),
        _line({**h.HISTORY_TEMPLATES["prompt"], "uuid": "u9"}),
        _line({**h.HISTORY_TEMPLATES["limit"], "uuid": "m9"}),
    ]


def test_transcript_file_forms(tmp_path: Path) -> None:
    lines = _limit_transcript()
    lf = replay_lines(iter(lines), "s").to_json()
    assert [r["record"]["id"] for r in lf["records"]] == ["u1:error", "u9:error"]
    forms = {
        "crlf": b"\r\n".join(lines) + b"\r\n",
        "bom": b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n",
        "no-final-newline": b"\n".join(lines),
        "blank-lines": b"\n\n".join(lines) + b"\n\n\n",
    }
    for name, data in forms.items():
        path = tmp_path / "s.jsonl"
        path.write_bytes(data)
        view = replay_transcript(path).to_json()
        assert [r["record"] for r in view["records"]] == [r["record"] for r in lf["records"]], name
        assert view["active"] == lf["active"] and view["malformed"] == 0, name
    # truncated last line: the earlier records stand, the fragment is counted malformed
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines)[:-20])
    view = replay_transcript(path).to_json()
    assert [r["record"]["id"] for r in view["records"]] == ["u1:error"]
    assert view["malformed"] == 1 and view["active"] == [{"id": "u1:error", "recovery": "real_model_answer"}]
    # empty file
    path.write_bytes(b"")
    assert replay_transcript(path).to_json() == {
        "sessionId": "s",
        "lines": 0,
        "messages": 0,
        "malformed": 0,
        "records": [],
        "active": [],
    }


@pytest.mark.parametrize("kind", ["skipped", "malformed", "limit"])
def test_transcript_with_a_10_mb_single_line(tmp_path: Path, kind: str) -> None:
    ten_mb = 10 * 1024 * 1024
    if kind == "skipped":  # not a message: the byte pre-filter skips it unparsed
        big = _line({"type": "attachment", "content": "a" * ten_mb})
    elif kind == "malformed":  # a message marker, then garbage
        big = b'{"type":"assistant",' + b"\xff" * ten_mb
    else:  # a valid synthetic usage-limit message whose text is 10 MB
        text = h.LIMIT + " " + "word " * (ten_mb // 5)
        big = _line({**h.HISTORY_TEMPLATES["limit"], "message": {"model": "<synthetic>", "content": text}})
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        b"\n".join([_line(h.HISTORY_TEMPLATES["prompt"]), big, _line(h.HISTORY_TEMPLATES["answer"])])
    )
    view = replay_transcript(path).to_json()  # its speed is the benchmark's (workshop bench)
    assert view["lines"] == 3
    if kind == "limit":
        (rec,) = view["records"]
        assert rec["line"] == 2 and rec["record"]["title"].startswith(h.LIMIT)
        assert len(rec["record"]["title"]) <= 500 and len(rec["record"]["details"]) > ten_mb
    else:  # skipped or garbage: no record, nothing active (malformed counts only parsed lines)
        assert view["records"] == [] and view["active"] == []
    SECTIONS.setdefault("fuzz: 10 MB transcript lines", []).append(f"{kind}: {len(view['records'])} record(s)")


def test_replay_on_deeply_nested_json_line() -> None:
    deep_line = b'{"type":"user","message":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    view = replay_lines(iter([deep_line]), "s").to_json()
    assert view["lines"] == 1 and view["records"] == []


# ------------------------------------------------------------------ 6. trace files (and `lifecycle trace`)


@profile("trace")
@given(**T["trace"].strategies)
def test_fuzz_trace(lines: list[str]) -> None:
    h.check_trace(lines)


@profile("trace_bytes")
@given(**T["trace_bytes"].strategies)
@example(
    blob=b"\xef\xbb\xbf" + json.dumps({"type": "adapter", "event": "session", "sessionId": "s"}).encode()
)
@example(blob=b'{"type":"adapter"' + b"\xff\xfe" + b"}\r\n\x00\n[" * 3)
def test_fuzz_trace_bytes(blob: bytes) -> None:
    h.check_trace_bytes(blob)


def test_feed_text_on_depth_and_huge_numbers() -> None:
    reports: list[str] = []
    driver = TraceDriver(lambda m: None, reports.append)
    driver.feed_text(1, "[" * 200_000 + "]" * 200_000)
    driver.feed_text(2, '{"type":"adapter","event":"deliver_fails","count":' + "9" * 5000 + "}")
    driver.feed_text(3, '{"type":"system","subtype":"api_retry","attempt":1e999}')
    assert [r.split(":")[0] for r in reports] == ["line 1", "line 2", "line 3"]


def test_lifecycle_trace_command_on_binary_crlf_bom_and_truncated_input(tmp_path: Path) -> None:
    case = h.AIR
    good = [
        json.dumps({"type": "adapter", "event": "initialize", "clientCapabilities": case}),
        json.dumps({"type": "adapter", "event": "session", "sessionId": "s1"}),
        json.dumps({"type": "adapter", "event": "prompt", "turnId": "t1"}),
        json.dumps(h.STREAM_TEMPLATES["api_retry"]),
    ]
    data = (
        b"\xef\xbb\xbf"
        + b"\r\n".join(x.encode() for x in good)
        + b"\r\n\xff\xfe\x00garbage\r\n"
        + json.dumps(h.STREAM_TEMPLATES["result_error"]).encode()[:-9]  # truncated last line
    )
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    res = subprocess.run(
        [sys.executable, "-m", "lifecycle", "trace", str(path)], cwd=ROOT, capture_output=True, timeout=60
    )
    assert res.returncode == 0, res.stderr
    out = [json.loads(x) for x in res.stdout.decode().splitlines()]
    assert out[-1]["lifecycle"] == "active"
    assert out[-1]["sessions"] == {"s1": [{"id": "t1:error", "recovery": "confirmed_attempt"}]}
    (warning,) = [m for m in out if "method" in m]
    assert warning["params"]["update"]["_meta"]["jetbrains"]["air"]["sessionFailure"]["revision"] == 1
    err = res.stderr.decode().splitlines()
    assert [e.split(": ")[2] for e in err] == ["line 5", "line 6"], err


# ------------------------------------------------------------------ 7. client-side reading


@profile("stream_bytes")
@given(**T["stream_bytes"].strategies)
def test_fuzz_stream_bytes(blob: bytes) -> None:
    h.check_stream_bytes(blob)


@profile("transcript_bytes")
@given(**T["transcript_bytes"].strategies)
@example(blob=b"")
@example(blob=b"\xef\xbb\xbf\r\n\r\n")
def test_fuzz_transcript_bytes(blob: bytes) -> None:
    h.check_transcript_bytes(blob)


@profile("client_receive")
@given(**T["client_receive"].strategies)
def test_fuzz_client_receive(messages: list[dict[str, Any]]) -> None:
    h.check_client(messages)


@profile("read_record")
@given(**T["read_record"].strategies)
def test_fuzz_read_record(meta: object) -> None:
    h.check_read_record(meta)


@profile("json_bytes")
@given(**T["json_bytes"].strategies)
def test_fuzz_json_bytes(data: bytes) -> None:
    h.check_json_bytes(data)


def test_read_record_and_client_on_depth() -> None:
    deep = h.deep(20_000)
    assert read_record({"jetbrains": {"air": deep}}) is None
    with pytest.raises(MalformedRecordError):
        read_record({"jetbrains": {"air": {"version": 1, "sessionFailure": deep}}})
    client = ClientProjection()
    client.receive({"method": "session/update", "params": {"update": deep}})
    client.receive(
        {"result": {"_meta": {"jetbrains": {"air": {"version": 1, "sessionFailure": {"id": deep}}}}}}
    )
    assert client.records == [] and client.malformed == 1


# ------------------------------------------------------------------ findings: minimal reproducers


@given(setup=st.sampled_from(["auth", "auth_open"]), negotiated=st.booleans(), line=h.garbled_auth_lines)
@example(setup="auth", negotiated=True, line={"type": "auth_status", "isAuthenticating": False, "error": 0})
def test_finding_garbled_auth_status_never_recovers_auth(
    setup: str, negotiated: bool, line: dict[str, Any]
) -> None:
    """FINDING 1. ``{"type":"auth_status","isAuthenticating":false,"error":0}`` (or ``false``,
    ``[]``, ``{}``) recovers the auth incident: ``claude.from_stream_json`` tests ``not
    line.get("error")``. Change: ``ok = line.get("isAuthenticating") is False and
    line.get("error") in (None, "")``."""
    h.check_garbage_never_recovers(setup, negotiated, line)


@given(
    setup=st.sampled_from(["quota_open", "retrying"]),
    negotiated=st.booleans(),
    line=h.garbled_assistant_lines(),
)
@example(setup="quota_open", negotiated=True, line={"type": "assistant", "message": {"content": "Hello"}})
@example(
    setup="quota_open",
    negotiated=True,
    line={"type": "assistant", "message": {"model": "claude-opus-5-5", "content": "Hi"}, "error": {"t": 1}},
)
def test_finding_garbled_assistant_line_never_recovers(
    setup: str, negotiated: bool, line: dict[str, Any]
) -> None:
    """FINDING 2. An assistant line without a model name (absent, ``""``, not a string) or with
    an ``error`` that is not a string counts as a *real model answer* and recovers a restored
    quota (the SDK itself rejects a missing model with MessageParseError). Changes:
    ``ledger._on_assistant``: only ``ev.model`` truthy and not ``<synthetic>`` proves an answer
    (as ``lifecycle.history.is_real_answer`` already requires for history); ``claude``: a present non-string
    ``error`` becomes an unrecognised kind (e.g. ``"unknown"``), which degrades to ``service``."""
    h.check_garbage_never_recovers(setup, negotiated, line)


def test_finding_sdk_assistant_message_without_model_recovers_quota() -> None:
    """FINDING 2, through the SDK classes: ``AssistantMessage(model=None)``."""
    from claude_agent_sdk.types import AssistantMessage, TextBlock

    probe = h.start("quota_open", True)
    before = [a.id for a in probe.ledger.active]
    ev = from_sdk_message(AssistantMessage(content=[TextBlock(text="Hello")], model=None))  # type: ignore[arg-type]
    assert ev is not None
    probe.feed(ev)
    assert [a.id for a in probe.ledger.active] == before


def test_finding_huge_retry_attempt_crashes_the_ledger() -> None:
    """FINDING 3. ``ApiRetry(attempt=10**5000)`` (an SDK ``SystemMessage`` can carry any int)
    raises ``ValueError: Exceeds the limit (4300 digits)`` out of ``feed`` from
    ``titles.retry_title``'s f-string. Change: ``titles._int`` also requires ``value <
    10**9`` (a bigger attempt counter is not a count a user can read)."""
    probe = h.start("open", True)
    probe.feed(ApiRetry(attempt=10**5000, max_retries=10**5000, error_status=529, error="overloaded"))
    (record,) = probe.records
    assert record.severity.value == "warning"


def test_finding_client_projection_accepts_a_record_next_to_version_0() -> None:
    """FINDING 4. ``ClientProjection`` shows a record next to ``version: 0`` (or -3), which
    ``wire.read_record`` rejects as malformed. Change in ``client._raw_record``: require
    ``type(version) is int and version >= AIR_VERSION`` (and count it malformed otherwise)."""
    rec = {"id": "x", "revision": 1, "category": "limit", "severity": "error", "title": "t", "actions": []}
    h._client_props(
        [
            {
                "jsonrpc": "2.0",
                "id": "t",
                "result": {"_meta": {"jetbrains": {"air": {"version": 0, "sessionFailure": rec}}}},
            }
        ]
    )


def test_finding_lifecycle_trace_drops_a_message_with_a_lone_surrogate(tmp_path: Path) -> None:
    """FINDING 5. A JSON escape such as ``"\\ud800"`` is valid JSON and decodes to a lone
    surrogate; ``trace.dumps`` writes ``ensure_ascii=False`` to a UTF-8 stdout, the write raises
    UnicodeEncodeError inside ``deliver`` and the message is silently counted as a failed
    send: ``lifecycle trace`` prints nothing for it (the in-process ``run_trace`` does). Change:
    ``trace.dumps`` uses ``ensure_ascii=True`` when the text does not encode as UTF-8 (or the
    CLI reconfigures stdout with ``errors="backslashreplace"``)."""
    lines = [
        json.dumps({"type": "adapter", "event": "initialize", "clientCapabilities": {}}),
        json.dumps({"type": "adapter", "event": "session", "sessionId": "s1"}),
        json.dumps({"type": "adapter", "event": "prompt", "turnId": "t1"}),
        '{"type":"assistant","message":{"model":"claude-opus-5-5","content":"a \\ud800 b"}}',
        json.dumps(h.STREAM_TEMPLATES["result_success"]),
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    res = subprocess.run(
        [sys.executable, "-m", "lifecycle", "trace", str(path)], cwd=ROOT, capture_output=True, timeout=60
    )
    kinds = [
        json.loads(x).get("params", {}).get("update", {}).get("sessionUpdate")
        for x in res.stdout.splitlines()
    ]
    assert "agent_message_chunk" in kinds, res.stdout


@pytest.mark.parametrize("reuse", ["prompt", "assistant"])
def test_finding_duplicate_uuids_in_a_stored_history_reuse_an_id(reuse: str) -> None:
    """FINDING 6 (corrupt input). Two stored occurrences behind the same user uuid (a copied
    message, a botched merge), or two assistant limits with the same uuid and no user message,
    after a real answer recovered the first: the second occurrence gets the first one's id
    with revision 1 again, so the client ignores it while the ledger holds it active. Change:
    ``ledger._on_history`` remembers the replay ids it published (a set, as small as the
    number of replayed failures) and falls back to ``history-error:<seq>`` for a repeat."""
    stored = (
        ["prompt", "limit", "answer", "prompt", "limit"]
        if reuse == "prompt"
        else ["limit", "answer", "limit"]
    )
    probe = h.Probe(True)
    probe.feed(load_history([h.HISTORY_TEMPLATES[k] for k in stored]))
    probe.check()


@pytest.mark.parametrize("writer", sorted(h.OTHER_WRITERS))
def test_finding_replay_prefilter_misses_a_limit_written_by_another_json_writer(writer: str) -> None:
    """FINDING 8. ``lifecycle replay``'s byte pre-filter matches ``"type": ?"..."`` and ``"model":
    ?"<synthetic>"`` literally, so the same transcript written with other (valid) JSON spacing or
    with ``<``/``>`` escaped as ``\\u003c``/``\\u003e`` (Go's encoder, ``jq``-style rewriters)
    restores no record: ``u1:error`` is lost. Change in ``replay_cmd``: whitespace-tolerant
    patterns (``"type"\\s*:\\s*"``, ``"model"\\s*:\\s*"``, ``<synthetic>`` also as ``\\u003c...``),
    and parse any line with a ``\\u`` escape the patterns reject."""
    lines = [h.OTHER_WRITERS[writer](h.HISTORY_TEMPLATES[k]) for k in ("prompt", "limit")]
    expected = h.unfiltered_replay(lines, True)
    assert [r["record"]["id"] for r in expected[0]] == ["u1:error"]
    view = replay_lines(iter(lines), "s1").to_json()
    assert (view["records"], view["active"]) == expected


@pytest.mark.parametrize(
    "text",
    ["Fable 5 requires usage credits · /model to pick another model"],  # the CLI's (and SDK's) prefix array
)
def test_finding_replay_misses_the_clis_usage_credit_limits(text: str) -> None:
    """FINDING 10 (found by check_history's oracle, which keeps its own copy of the CLI's list).
    The Claude Code CLI 2.1.332 recognises a usage limit by 12 prefixes (``fuzz.harness.
    CLI_USAGE_LIMIT_PREFIXES``); ``conditions.USAGE_LIMIT_PREFIXES`` had 11 (not "Fable 5 requires
    usage credits"), so a stored limit with such a text was replayed as prose. Fixed in
    ``conditions``; tests/test_usage_prefixes.py reads the list back from the installed CLI."""
    probe = h.Probe(True)
    probe.feed(
        load_history(
            [
                {"type": "user", "uuid": "u1", "message": {"content": "hi"}},
                {"type": "assistant", "uuid": "m1", "message": {"model": "<synthetic>", "content": text}},
            ]
        )
    )
    probe.check()
    assert [(r.id, r.title, r.category.value) for r in probe.records] == [("u1:error", text, "limit")]
    assert [a.id for a in probe.ledger.active] == ["u1:error"]


@pytest.mark.parametrize(("uuid", "shown"), [("\ud800-0", "\ufffd-0"), ("m\udfff", "m\ufffd")])
def test_finding_a_lone_surrogate_in_a_stored_uuid_crashes_the_replay(uuid: str, shown: str) -> None:
    """FINDING 11 (the nightly-size run, test_fuzz_history and test_fuzz_trace). A stored assistant
    limit without a user message, whose uuid holds a lone surrogate (valid JSON: ``"\\ud800"``),
    built ``s1:history-error:\\ud800-0``: not encodable text, so ``SessionFailure`` raised
    pydantic's ValidationError out of ``feed``. Change: ``lifecycle.ids`` replaces a lone
    surrogate in any id part with U+FFFD."""
    probe = h.Probe(True)
    limit = dict(h.HISTORY_TEMPLATES["limit"], uuid=uuid)
    probe.feed(load_history([limit]))
    probe.check()
    assert [r.id for r in probe.records] == [f"s1:history-error:{shown}"]
    json.dumps([r.to_wire() for r in probe.records]).encode("utf-8")


def _compact(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


@pytest.mark.parametrize(
    "between",
    [
        _compact({"type": "user", "uuid": "u2", "message": {"content": "partial"}})[:30],  # truncated
        _compact(
            {"type": "user", "uuid": "u3", "parent_tool_use_id": "toolu_1", "message": {"content": "x"}}
        ),
        b'["type", {"type":"user"}]',  # not an object
    ],
    ids=["truncated-user-line", "subagent-user-line", "not-an-object"],
)
def test_finding_replay_loses_the_prompt_behind_a_non_prompt_user_line(between: bytes) -> None:
    """FINDING 9 (found by test_fuzz_transcript's differential oracle). ``replay_lines`` keeps only
    the *latest* user line that looks like a prompt, as bytes; when that line turns out not to
    be one (truncated, a subagent's, not an object), the real prompt before it is gone and the
    restored limit gets ``s1:history-error:m1`` instead of the live turn's ``u1:error`` (which
    ``session/load`` and the unfiltered feed give). Change in ``replay_cmd.replay_lines``: keep
    the candidates since the last fed message and, when a limit needs its prompt, feed them
    (or parse back from the latest) until one is a prompt entry."""
    lines = [_compact(h.HISTORY_TEMPLATES["prompt"]), between, _compact(h.HISTORY_TEMPLATES["limit"])]
    expected = h.unfiltered_replay(lines, True)
    assert [r["record"]["id"] for r in expected[0]] == ["u1:error"]
    view = replay_lines(iter(lines), "s1").to_json()
    assert (view["records"], view["active"]) == expected


#: Every defect this suite found: number -> what it was (where). Each has at least one
#: ``test_finding_*`` reproducer whose docstring starts with "FINDING <number>"; a reproducer
#: fails while its defect is in the core.
FINDINGS: dict[int, str] = {
    1: "garbled auth_status recovers auth (claude.from_stream_json)",
    2: "assistant without model / with non-string error counts as a real answer (ledger, claude)",
    3: "ApiRetry with a >4300-digit attempt raises ValueError from feed (titles.retry_title)",
    4: "ClientProjection shows a record next to version 0 (client._raw_record)",
    5: "lifecycle trace drops a message holding a lone surrogate (trace.dumps)",
    6: "duplicate uuids in a stored history reuse an incident id (ledger._on_history)",
    7: "lifecycle trace echoes an unknown adapter event name (a secret) on stderr (trace)",
    8: "replay pre-filter misses limits written with other JSON spacing or \\u003c escapes (cli.replay)",
    9: "replay loses the prompt uuid behind a truncated/subagent user line (cli.replay.replay_lines)",
    10: "replay misses the CLI's usage-credit limits: the Fable prefix lacking (conditions)",
    11: "a stored uuid with a lone surrogate builds an id the wire model rejects (ids)",
}
FINDING_FILES = ("test_fuzz.py", "test_secrets_everywhere.py")


def _finding_reproducers() -> dict[str, int | None]:
    """``file::test_finding_*`` -> the FINDING number its docstring starts with (None: none)."""
    out: dict[str, int | None] = {}
    for name in FINDING_FILES:
        tree = ast.parse((ROOT / "tests" / name).read_text())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_finding_"):
                m = re.match(r"FINDING (\d+)\b", ast.get_docstring(node) or "")
                out[f"{name}::{node.name}"] = int(m.group(1)) if m else None
    return out


def test_every_finding_has_a_reproducer_and_every_reproducer_a_finding() -> None:
    reproducers = _finding_reproducers()
    assert [t for t, n in reproducers.items() if n is None] == [], "a reproducer that names no FINDING"
    assert set(reproducers.values()) == set(FINDINGS)
    SECTIONS["fuzz: findings and their reproducers (they fail while the defect is in the core)"] = [
        f"{n} {FINDINGS[n]}: " + ", ".join(sorted(t for t, k in reproducers.items() if k == n)) for n in FINDINGS
    ]


def test_atheris_runner_lists_every_target() -> None:
    res = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "fuzz" / "run_atheris.py"), "--list"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert res.returncode == 0, res.stderr
    assert set(res.stdout.split()) == set(T)


def test_auth_status_success_shape_still_recovers() -> None:
    """Non-vacuity of finding 1's property: a well-formed login success does recover."""
    probe = h.start("auth", True)
    ev = from_stream_json(h.STREAM_TEMPLATES["auth_ok"])
    assert ev == AuthStatus(ok=True)
    probe.feed(ev)
    assert probe.ledger.active == ()
    probe.feed(PromptStarted(turn_id="t9"))
