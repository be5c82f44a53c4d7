"""The secret corpus in every place raw text can enter the core (guide: no title, details or log
line may carry a secret; Claude's own user-facing text stays intact).

Every example of every shape of tests/secrets_corpus.py is embedded (``embed``) and fed through a
real ledger, capable and legacy, with structlog configured the way ``lifecycle trace --log`` and
the ACP agent configure it (JSON lines). For each run the suite scans every delivered JSON-RPC
message and every log line for every escaped form of the shape's marker.

Scope decision (documented in README.md, "Guarantees under hostile input"): ``agent_message_chunk`` and
``user_message_chunk`` text is Claude's (or the user's) transcript prose, which the spec requires
to stay unchanged (legacy clients get "the original transcript"); it is checked to be forwarded
byte for byte and is excluded from the leak scan. Everything else is in scope: record titles and
details, ``_meta``, JSON-RPC error messages and data, update kinds, ids, and every log line.

CI runs, for every example and every place, one of the 15 embeddings, rotating so that across the
places every example meets every embedding (both contexts alternate); ``FUZZ_PROFILE=nightly``
runs the full product (every embedding, both contexts, every error kind in the error place).
"""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
import structlog
from fuzz import harness as h
from fuzz.report import SECTIONS, install
from secrets_corpus import CONTEXTS, EXTRA_LEGIT_TEXTS, LEGIT_TEXTS, SHAPES, SecretShape, embed, escaped_forms

from lifecycle import (
    ApiRetry,
    Assistant,
    AuthStatus,
    Category,
    ModelFallback,
    QueryEnded,
    QueryError,
    Result,
    SessionFailure,
    SessionUpdateOut,
    Severity,
    WorkerShuttingDown,
    attach_record,
)
from lifecycle.claude import from_sdk_exception, from_sdk_message
from lifecycle.cli.trace import run_trace
from lifecycle.conditions import USAGE_LIMIT_PREFIXES
from lifecycle.events import Outbound
from lifecycle.history import load_history
from lifecycle.log import StructlogObserver, configure_logging

KINDS: tuple[str, ...] = (*h.ERROR_KINDS, "brand_new_kind")
EMBEDDINGS = len(embed("x", CONTEXTS[0]))
CASES = [(s, i, ex) for s in SHAPES for i, ex in enumerate(s.examples)]
PROSE = ("agent_message_chunk", "user_message_chunk")
MATRIX: Counter[str] = Counter()


@pytest.fixture(scope="module")
def log_buffer() -> Iterator[io.StringIO]:
    buf = io.StringIO()
    configure_logging(buf)  # JSON: a StringIO is not a TTY
    yield buf
    structlog.reset_defaults()


@pytest.fixture(autouse=True)
def _report(request: pytest.FixtureRequest) -> Iterator[None]:
    install(request.config)
    yield
    nightly = len(CASES) * EMBEDDINGS * len(CONTEXTS) * (len(PLACES) - 1 + len(KINDS))
    SECTIONS["secrets: corpus in every place"] = [
        f"{len(SHAPES)} shapes, {len(CASES)} examples, {EMBEDDINGS} embeddings x {len(CONTEXTS)} contexts, "
        f"{len(PLACES)} places, 2 modes (capable, legacy)",
        f"this run: {'full product' if h.NIGHTLY else 'CI rotation'}; nightly size: {nightly} runs per mode",
        *(f"{k}: {v}" for k, v in sorted(MATRIX.items())),
    ]


# ------------------------------------------------------------------ places


@dataclass(frozen=True)
class Place:
    """A way raw text enters the core. ``shows`` says what Claude's text becomes in capable mode:
    ``title`` (redacted), ``nothing`` (an adapter-authored title, or no record at all)."""

    name: str
    shows: str
    feed: Callable[[h.Probe, str, int], None]


def _turn(p: h.Probe) -> None:
    p.prompt()


def _query_error(p: h.Probe, text: str, i: int) -> None:
    _turn(p)
    p.feed(QueryError(message=text))


def _query_error_idle(p: h.Probe, text: str, i: int) -> None:
    p.feed(QueryError(message=text))  # a session-scoped connection incident


def _result_text(p: h.Probe, text: str, i: int) -> None:
    _turn(p)
    p.feed(
        Result(
            subtype="success", is_error=True, result=text, api_error_status=500, terminal_reason="api_error"
        )
    )


def _result_errors(p: h.Probe, text: str, i: int) -> None:
    _turn(p)
    p.feed(Result(subtype="error_during_execution", is_error=True, errors=(text,)))


def _synthetic_error(p: h.Probe, text: str, i: int) -> None:
    _turn(p)
    p.feed(Assistant(text=text, model="<synthetic>", error=KINDS[i % len(KINDS)]))
    p.feed(Result(subtype="success", is_error=True, result=text))


# Inputs only: the core's own prefixes reach its usage-limit path with every rotation; which
# texts are usage limits is the oracle's business (fuzz.harness.CLI_USAGE_LIMIT_PREFIXES).
def _usage_limit_text(p: h.Probe, text: str, i: int) -> None:
    limit = f"{USAGE_LIMIT_PREFIXES[i % len(USAGE_LIMIT_PREFIXES)]} · {text}"
    _turn(p)
    p.feed(Assistant(text=limit, model="<synthetic>", error=("rate_limit", None)[i % 2]))
    p.feed(Result(subtype="success", is_error=True, result=limit))


def _api_retry_kind(p: h.Probe, text: str, i: int) -> None:
    _turn(p)
    p.feed(ApiRetry(attempt=1, max_retries=3, error_status=(429, None)[i % 2], error=text))


def _model_fallback(p: h.Probe, text: str, i: int) -> None:
    p.feed(ModelFallback(content=text))


def _worker_reason(p: h.Probe, text: str, i: int) -> None:
    _turn(p)
    p.feed(WorkerShuttingDown(reason=text))
    p.feed(QueryEnded())


def _history_limit(p: h.Probe, text: str, i: int) -> None:
    limit = f"{USAGE_LIMIT_PREFIXES[i % len(USAGE_LIMIT_PREFIXES)]} · {text}"
    stored = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}},
        {
            "type": "assistant",
            "uuid": "m1",
            "message": {"model": "<synthetic>", "content": [{"type": "text", "text": limit}]},
        },
    ]
    p.feed(load_history(stored))


def _history_prose(p: h.Probe, text: str, i: int) -> None:
    stored = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": text}},
        {
            "type": "assistant",
            "uuid": "m1",
            "message": {"model": ("claude-opus-5-5", "<synthetic>")[i % 2], "content": text},
        },
    ]
    p.feed(load_history(stored))


def _sdk_exception(p: h.Probe, text: str, i: int) -> None:
    from claude_agent_sdk import CLIConnectionError, CLIJSONDecodeError, ProcessError, ResultError

    excs: list[BaseException] = [
        ProcessError(text, exit_code=1, stderr=text),
        CLIConnectionError(text),
        CLIJSONDecodeError(text, ValueError(text)),
        RuntimeError(text),
        ResultError(
            text, data={"subtype": "success", "result": text, "errors": [text], "api_error_status": 429}
        ),
    ]
    _turn(p)
    p.feed(from_sdk_exception(excs[i % len(excs)]))


def _sdk_messages(p: h.Probe, text: str, i: int) -> None:
    from claude_agent_sdk.types import AssistantMessage, ResultMessage, SystemMessage, TextBlock

    _turn(p)
    msgs: list[object] = [
        SystemMessage(
            subtype="api_retry", data={"attempt": 1, "max_retries": 2, "error_status": 529, "error": text}
        ),
        AssistantMessage(content=[TextBlock(text=text)], model="<synthetic>", error=KINDS[i % len(KINDS)]),  # type: ignore[arg-type]
        ResultMessage(
            subtype="success",
            duration_ms=0,
            duration_api_ms=0,
            is_error=True,
            num_turns=1,
            session_id="s1",
            result=text,
            errors=[text],
        ),
    ]
    for m in msgs:
        ev = from_sdk_message(m)
        assert ev is not None
        p.feed(ev)


def _auth_error(p: h.Probe, text: str, i: int) -> None:
    # an auth failure, then an auth check that did not complete (its error text is raw)
    _turn(p)
    p.feed(Assistant(text=f"Invalid API key · Please run /login {text}", model="<synthetic>", error=None))
    p.feed(Result(subtype="success", is_error=True, result=text))
    p.feed(AuthStatus(ok=False))


PLACES: list[Place] = [
    Place("QueryError.message (turn)", "nothing", _query_error),
    Place("QueryError.message (idle)", "nothing", _query_error_idle),
    Place("Result.result", "title", _result_text),
    Place("Result.errors", "title", _result_errors),
    Place("Assistant.text synthetic error (each kind)", "title", _synthetic_error),
    Place("Assistant.text usage-limit prefixed", "title", _usage_limit_text),
    Place("Assistant.text login message", "title", _auth_error),
    Place("ApiRetry.error kind", "nothing", _api_retry_kind),
    Place("ModelFallback.content", "title", _model_fallback),
    Place("WorkerShuttingDown.reason", "nothing", _worker_reason),
    Place("history usage-limit text", "title", _history_limit),
    Place("history prose (user, assistant)", "nothing", _history_prose),
    Place("SDK exception messages", "nothing", _sdk_exception),
    Place("SDK message objects", "title", _sdk_messages),
]


@dataclass(frozen=True)
class Run:
    shape: SecretShape
    case: int  # index into CASES
    embedding: int
    text: str
    rotation: int  # picks the error kind, usage-limit prefix, exception class, ...


def runs_for(place_index: int) -> Iterator[Run]:
    """The runs of one place: nightly, the full product; CI, 2 rotating embeddings per example."""
    every_kind = PLACES[place_index].feed is _synthetic_error
    for k, (shape, _i, example) in enumerate(CASES):
        if h.NIGHTLY:
            for c, context in enumerate(CONTEXTS):
                for e, text in enumerate(embed(example, context)):
                    for rot in range(len(KINDS)) if every_kind else (e + c * EMBEDDINGS,):
                        yield Run(shape, k, e, text, rot)
        else:
            # place p runs embedding (k + p) mod 15 of example k, place 0 also (k + 14) mod 15:
            # over the 14 places, every example meets all 15 embeddings.
            texts = embed(example, CONTEXTS[(k + place_index) % len(CONTEXTS)])
            chosen = {(k + place_index) % EMBEDDINGS}
            if place_index == 0:
                chosen.add((k + EMBEDDINGS - 1) % EMBEDDINGS)
            for e in sorted(chosen):
                yield Run(shape, k, e, texts[e], k + e)


# ------------------------------------------------------------------ scanning


def _scan_message(m: Outbound, negotiated: bool) -> tuple[str, list[str]]:
    """The JSON a client receives with transcript prose cut out, and the prose texts."""
    wire = m.to_jsonrpc()
    prose: list[str] = []
    if isinstance(m, SessionUpdateOut) and m.update.get("sessionUpdate") in PROSE:
        wire = json.loads(json.dumps(wire))
        prose.append(wire["params"]["update"]["content"].pop("text"))
    return json.dumps(wire, ensure_ascii=False), prose


def leaks_in(shape: SecretShape, blobs: list[str]) -> list[str]:
    forms = escaped_forms(shape.marker)
    return [b for b in blobs if any(f in b for f in forms)]


def run_place(place: Place, negotiated: bool, log: io.StringIO) -> tuple[list[str], int]:
    leaks: list[str] = []
    runs = 0
    for run in runs_for(PLACES.index(place)):
        start = log.tell()
        probe = h.Probe(negotiated, observer=StructlogObserver())
        place.feed(probe, run.text, run.rotation)
        probe.check()
        blobs: list[str] = []
        for m in probe.sent:
            scanned, prose = _scan_message(m, negotiated)
            blobs.append(scanned)
            for p in prose:  # transcript prose is forwarded byte for byte, never altered
                assert run.text in p or p == "hi", p
        log.seek(start)
        blobs += log.read().splitlines()
        found = leaks_in(run.shape, blobs)
        leaks += [f"{place.name} / {run.shape.name} / {run.text!r}: {b[:300]}" for b in found]
        runs += 1
    return leaks, runs


@pytest.mark.parametrize("negotiated", [True, False], ids=["capable", "legacy"])
@pytest.mark.parametrize("place", PLACES, ids=[p.name for p in PLACES])
def test_no_secret_in_any_delivered_message_or_log_line(
    place: Place, negotiated: bool, log_buffer: io.StringIO
) -> None:
    leaks, runs = run_place(place, negotiated, log_buffer)
    MATRIX[f"runs ({'capable' if negotiated else 'legacy'})"] += runs
    MATRIX["leaks"] += len(leaks)
    assert runs >= len(CASES)
    assert not leaks, f"{len(leaks)} leak(s), first: " + "\n".join(leaks[:5])


def test_every_example_and_embedding_meets_some_place() -> None:
    """Non-vacuity of the CI rotation: every (example, embedding) pair is run, every example in
    every place."""
    pairs = {(r.case, r.embedding) for p in range(len(PLACES)) for r in runs_for(p)}
    assert pairs == {(k, e) for k in range(len(CASES)) for e in range(EMBEDDINGS)}
    for p in range(len(PLACES)):
        assert {r.case for r in runs_for(p)} == set(range(len(CASES)))


def test_the_scan_catches_an_unredacted_marker() -> None:
    """Non-vacuity of the scan: a title that still holds the marker (raw, or JSON-escaped) is found."""
    shape = next(s for s in SHAPES if s.name == "windows_user_path")
    probe = h.Probe(True)
    _turn(probe)
    raw = shape.examples[0]
    fake = SessionFailure(
        id="t1:error", revision=1, category=Category.LIMIT, severity=Severity.ERROR, title=raw, actions=()
    )
    m = SessionUpdateOut(
        session_id="s1", update={"sessionUpdate": "session_info_update", "_meta": attach_record(None, fake)}
    )
    scanned, _ = _scan_message(m, True)
    assert leaks_in(shape, [scanned]) == [scanned]  # "carol" survives JSON escaping of the backslashes


def test_mutant_without_redaction_is_caught(log_buffer: io.StringIO, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutation check of the whole harness: with ``titles.redact`` replaced by the identity, the
    same runs find leaks in titles (capable) and in the legacy error data."""
    import lifecycle.titles

    monkeypatch.setattr(lifecycle.titles, "redact", lambda text: text)
    place = next(p for p in PLACES if p.name == "Result.result")
    for negotiated in (True, False):
        leaks, runs = run_place(place, negotiated, log_buffer)
        assert len(leaks) > runs // 2, (negotiated, len(leaks), runs)


# ------------------------------------------------------------------ Claude's own text survives


def _title_of(place: Place, text: str) -> tuple[str, str | None] | None:
    probe = h.Probe(True)
    place.feed(probe, text, 0)
    recs = [r for r in probe.records if r.severity.value == "error" or place.feed is _model_fallback]
    return (recs[-1].title, recs[-1].details) if recs else None


@pytest.mark.parametrize("text", LEGIT_TEXTS + EXTRA_LEGIT_TEXTS)
def test_claude_text_is_the_title_byte_for_byte(text: str) -> None:
    for place in (
        p for p in PLACES if p.feed in (_result_text, _result_errors, _synthetic_error, _model_fallback)
    ):
        assert _title_of(place, text) == (text, None), place.name
    # the SDK forms as well
    probe = h.Probe(True)
    _sdk_messages(probe, text, 0)
    assert probe.records[-1].title == text
    MATRIX["legit texts intact in titles"] += 1


#: The legit texts that are usage limits, by the CLI's own prefixes (the oracle's copy, not the
#: code under test's): at least the recorded 5-hour limit and the spec's spend limit.
STORED_LIMITS = [t for t in LEGIT_TEXTS + EXTRA_LEGIT_TEXTS if h.cli_usage_limit_prefix(t) is not None]


def test_the_stored_limit_cases_did_not_shrink() -> None:
    assert len(STORED_LIMITS) >= 2


@pytest.mark.parametrize("text", STORED_LIMITS)
def test_stored_usage_limit_text_is_the_replayed_title(text: str) -> None:
    probe = h.Probe(True)
    probe.feed(
        load_history(
            [
                {"type": "user", "uuid": "u1", "message": {"content": "hi"}},
                {"type": "assistant", "uuid": "m1", "message": {"model": "<synthetic>", "content": text}},
            ]
        )
    )
    assert [(r.id, r.title, r.details) for r in probe.records] == [("u1:error", text, None)]


def test_status_url_survives() -> None:
    text = next(t for t in LEGIT_TEXTS if "status.claude.com" in t)
    assert text.endswith("check https://status.claude.com.")
    assert _title_of(PLACES[2], text) == (text, None)


# ------------------------------------------------------------------ trace lines


def run_trace_scanning(lines: list[str], log: io.StringIO) -> tuple[list[str], list[str]]:
    out: list[str] = []
    reports: list[str] = []
    start = log.tell()
    run_trace(lines, out.append, reports.append, StructlogObserver())
    log.seek(start)
    blobs = list(log.read().splitlines()) + reports
    for line in out:
        msg = json.loads(line)
        update = msg.get("params", {}).get("update", {})
        if update.get("sessionUpdate") in PROSE:
            update["content"].pop("text")
        blobs.append(json.dumps(msg, ensure_ascii=False))
    return blobs, reports


def test_trace_lines_with_secrets_leak_nothing(log_buffer: io.StringIO) -> None:
    leaks: list[str] = []
    runs = 0
    for k, (shape, _i, example) in enumerate(CASES):
        texts = embed(example, CONTEXTS[k % 2])
        for e in range(EMBEDDINGS) if h.NIGHTLY else (k % EMBEDDINGS,):
            blobs, _ = run_trace_scanning(h.secret_trace(texts[e]), log_buffer)
            leaks += [f"{shape.name}: {b[:200]}" for b in leaks_in(shape, blobs)]
            runs += 1
    MATRIX["trace runs (19 lines, every text field)"] += runs
    MATRIX["leaks"] += len(leaks)
    assert not leaks, f"{len(leaks)} leak(s): " + "\n".join(leaks[:5])


def test_finding_trace_report_echoes_an_unknown_adapter_event(log_buffer: io.StringIO) -> None:
    """FINDING 7. ``lifecycle trace`` reports an unknown adapter event with its raw name
    (``unknown adapter event 'sk-ant-...'``) on stderr: a diagnostic line carrying raw input.
    Change: ``TraceDriver.feed_text`` reports ``redact(str(exc))`` (lifecycle.redaction), or
    ``_adapter`` names only a known-safe event (``unknown adapter event`` + its length)."""
    shape = SHAPES[0]
    line = json.dumps({"type": "adapter", "event": shape.examples[0]})
    _, reports = run_trace_scanning([line], log_buffer)
    assert reports and not leaks_in(shape, reports), reports


def test_structlog_lines_were_really_captured(log_buffer: io.StringIO) -> None:
    """Non-vacuity: the log scan reads real JSON transition lines from the configured pipeline."""
    start = log_buffer.tell()
    probe = h.Probe(True, observer=StructlogObserver())
    _result_text(probe, "API Error: 500", 0)
    log_buffer.seek(start)
    lines = [json.loads(x) for x in log_buffer.read().splitlines()]
    assert any(x["event"] == "incident.transition" and x["incident_id"] == "t1:error" for x in lines)
