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

import json
import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from fuzz import harness as h
from fuzz.report import SECTIONS, install, record_delta
from hypothesis import example, given, settings

from lifecycle import (
    Assistant,
    ClientProjection,
    Result,
    negotiate,
    read_record,
)
from lifecycle.claude import MalformedMessage, from_stream_json
from lifecycle.cli.replay import replay_lines, replay_transcript
from lifecycle.cli.trace import TraceDriver
from lifecycle.history import history_entry
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


