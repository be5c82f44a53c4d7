"""Delivery faults: the client connection failing at every possible send.

Scenarios are the public conformance cases (driven through the real ``TraceDriver``), the
recorded CLI runs (real ``claude_agent_sdk`` objects through ``lifecycle.claude``), the recorded
``get_session_messages`` histories (replay), and a long composite session (several turns,
notices, auth, transport loss, cancellation, replay). For every scenario the sends that fail
are: each single position, every suffix (the client goes away for good), every prefix, every
window of two or three, and every subset when there are at most 8 sends (seeded random subsets
beyond). Each run is followed by a tail of qualifying events (two notices, a retried and failed
turn) delivered normally.

After every event of every run:

* the ledger's belief (its active ids and ``revision_of``) is exactly what the client shows;
* the revisions the client received per id are exactly 1..n (no gap, no repeat, none ignored);
* an id never starts a second incident (one ``pending -> *`` transition per id);

and at the end, every id whose last send was delivered shows the same content (title, details,
severity, category, actions) as in the fault-free run.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from conftest import CONFORMANCE, documented_count
from fuzz import harness as h
from fuzz.recorded import HERE, history_events, recorded_events
from fuzz.report import SECTIONS, install

from lifecycle import (
    ApiRetry,
    Assistant,
    AuthStatus,
    Cancelled,
    ClientProjection,
    ModelFallback,
    PromptStarted,
    QueryError,
    Result,
    RuntimeReplaced,
    SessionLedger,
)
from lifecycle.cli.trace import TraceDriver
from lifecycle.events import Event
from lifecycle.history import load_history

CASES = sorted(p.name.removesuffix(".input.jsonl") for p in (CONFORMANCE / "cases").glob("*.input.jsonl"))
RECORDED = sorted(p.name.removesuffix(".sdk.jsonl") for p in HERE.glob("*.sdk.jsonl"))
HISTORIES = sorted(
    p.name.removesuffix(".session_messages.jsonl") for p in HERE.glob("*.session_messages.jsonl")
)
TOTALS: Counter[str] = Counter()
FALLBACK_2 = "Switched to Sonnet 5 because Opus 5 is not available"


@pytest.fixture(autouse=True)
def _report(request: pytest.FixtureRequest) -> Iterator[None]:
    install(request.config)
    yield
    SECTIONS["delivery faults: runs and divergences"] = [f"{k}: {v}" for k, v in sorted(TOTALS.items())]


# ------------------------------------------------------------------ observing one run


class Transitions:
    """A TransitionObserver that remembers, per id, every transition (for the identity check)."""

    def __init__(self) -> None:
        self.starts: Counter[str] = Counter()
        self.notes: list[str] = []

    def transition(self, **f: Any) -> None:
        if f["source"] == "pending":
            self.starts[f["incident_id"]] += 1

    def note(self, what: str, **fields: Any) -> None:
        self.notes.append(what)


@dataclass
class Run:
    """One run of a scenario with the failing send positions ``fails``."""

    fails: frozenset[int]
    never_back_from: int | None = None  # from this send on every send fails (tail included)
    attempts: int = 0
    tail_start: int = -1  # the attempt count when the tail of qualifying events began
    # ledger -> (client view, messages delivered for it, the last attempt index per record id)
    sessions: dict[int, tuple[SessionLedger, ClientProjection]] = field(default_factory=dict)
    last_attempt: dict[str, tuple[int, bool]] = field(default_factory=dict)
    observed: Transitions = field(default_factory=Transitions)

    def failing(self, n: int) -> bool:
        return n in self.fails or (self.never_back_from is not None and n >= self.never_back_from)

    def client_for(self, ledger: SessionLedger) -> ClientProjection:
        return self.sessions.setdefault(id(ledger), (ledger, ClientProjection()))[1]

    def deliver(self, ledger: SessionLedger, message: dict[str, Any]) -> None:
        n, self.attempts = self.attempts, self.attempts + 1
        rec = _record_of(message)
        if rec is not None:
            self.last_attempt[rec["id"]] = (n, not self.failing(n))
        if self.failing(n):
            raise ConnectionError("client gone")
        self.client_for(ledger).receive(message)

    def check(self) -> None:
        for ledger, client in self.sessions.values():
            h.assert_consistent(ledger, client, [])
        reused = [i for i, n in self.observed.starts.items() if n > 1]
        assert not reused, f"ids reused for independent occurrences: {reused}"

    def final_records(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for _, client in self.sessions.values():
            for rec in client.records:
                out[rec.id] = {k: v for k, v in rec.to_wire().items() if k != "revision"}
        return out


def _record_of(message: dict[str, Any]) -> dict[str, Any] | None:
    meta = message.get("result", {}).get("_meta") if "result" in message else None
    if meta is None:
        meta = message.get("params", {}).get("update", {}).get("_meta")
    try:
        rec: dict[str, Any] = meta["jetbrains"]["air"]["sessionFailure"]
        return rec
    except (TypeError, KeyError):
        return None


# ------------------------------------------------------------------ scenarios


@dataclass(frozen=True)
class Scenario:
    name: str
    run: Callable[[Run], None]


def _tail_lines() -> list[str]:
    j = json.dumps
    return [
        j({"type": "system", "subtype": "model_fallback", "content": h.FALLBACK}),
        j({"type": "system", "subtype": "model_fallback", "content": FALLBACK_2}),
        j({"type": "adapter", "event": "prompt", "turnId": "tail"}),
        j(h.STREAM_TEMPLATES["api_retry"]),
        j({**h.STREAM_TEMPLATES["api_retry"], "attempt": 2}),
        j(h.STREAM_TEMPLATES["assistant_error"]),
        j(h.STREAM_TEMPLATES["result_error"]),
    ]


def _tail_events() -> list[Event]:
    return [
        ModelFallback(content=h.FALLBACK),
        ModelFallback(content=FALLBACK_2),
        PromptStarted(turn_id="tail"),
        ApiRetry(attempt=1, max_retries=3, error_status=529, error="overloaded"),
        ApiRetry(attempt=2, max_retries=3, error_status=529, error="overloaded"),
        Assistant(text=h.RATE, model="<synthetic>", error="rate_limit"),
        Result(subtype="success", is_error=True, result=h.RATE, api_error_status=429),
    ]


def trace_scenario(name: str, lines: list[str]) -> Scenario:
    def run(r: Run) -> None:
        reports: list[str] = []

        def emit(message: dict[str, Any]) -> None:
            ledger = driver._current  # the session being delivered for (read only)
            assert ledger is not None
            r.deliver(ledger, message)

        driver = TraceDriver(emit, reports.append, r.observed)
        for n, text in enumerate([*lines, *_tail_lines()], start=1):
            if n == len(lines) + 1:
                r.tail_start = r.attempts
            driver.feed_text(n, text)
            for ledger in driver.sessions.values():
                r.client_for(ledger)
            r.check()
        assert not reports, reports

    return Scenario(name, run)


def event_scenario(name: str, events: list[Event], negotiated: bool = True) -> Scenario:
    def run(r: Run) -> None:
        ledger = SessionLedger("s1", negotiated=negotiated, epoch="e1", observer=r.observed)
        r.client_for(ledger)
        for i, ev in enumerate([*events, *_tail_events()]):
            if i == len(events):
                r.tail_start = r.attempts
            ledger.process(ev, lambda out: r.deliver(ledger, out.to_jsonrpc()))
            r.check()

    return Scenario(name, run)


LIMIT_2 = "You've hit your individual spend limit · run /usage-credits to ask your admin for a higher limit"


def composite_events() -> list[Event]:
    """A long session: replay with two limits, then live turns of every kind."""
    stored: list[object] = [
        {"type": "user", "uuid": "u1", "message": {"content": "hi"}},
        {"type": "assistant", "uuid": "m1", "message": {"model": "<synthetic>", "content": h.LIMIT}},
        {"type": "user", "uuid": "u2", "message": {"content": "again"}},
        {"type": "assistant", "uuid": "m2", "message": {"model": "<synthetic>", "content": LIMIT_2}},
    ]
    events: list[Event] = [load_history(stored)]
    events += [ModelFallback(content=h.FALLBACK), ModelFallback(content=FALLBACK_2)]
    events += recorded_events("http429", "c1")
    events += recorded_events("retry_then_success", "c2")  # a real answer: the restored limit recovers
    events += [
        PromptStarted(turn_id="c3"),
        Assistant(text=h.LOGIN, model="<synthetic>", error="authentication_failed"),
        Result(subtype="success", is_error=True, result=h.LOGIN),
        AuthStatus(ok=False),
        AuthStatus(ok=True),
        PromptStarted(turn_id="c4"),
        ApiRetry(attempt=1, max_retries=2, error_status=None, error="unknown"),
        QueryError(message="ProcessTransport is not ready for writing"),
        QueryError(message="again"),  # the runtime is already lost: not a second incident
        RuntimeReplaced(),
        PromptStarted(turn_id="c5"),
        ApiRetry(attempt=1, max_retries=2, error_status=529, error="overloaded"),
        Cancelled(),
        ModelFallback(content=h.FALLBACK),
    ]
    events += recorded_events("usage_limit_gateway", "c6")
    return events


def scenarios() -> list[Scenario]:
    out = [
        trace_scenario(f"case:{c}", (CONFORMANCE / "cases" / f"{c}.input.jsonl").read_text().splitlines())
        for c in CASES
    ]
    out += [event_scenario(f"recorded:{r}", recorded_events(r, "t1")) for r in RECORDED]
    out += [
        event_scenario(f"recorded-legacy:{r}", recorded_events(r, "t1"), negotiated=False)
        for r in ("http429", "usage_limit_gateway", "http401")
    ]
    out += [event_scenario(f"replay:{n}", history_events(n)) for n in HISTORIES]
    out.append(event_scenario("composite", composite_events()))
    return out


SCENARIOS = scenarios()


# ------------------------------------------------------------------ fault sets


Faults = tuple[frozenset[int], int | None]  # failing positions, and "never back from"


def fault_sets(n: int, seed: int) -> Iterator[Faults]:
    """Over a scenario's ``n`` sends: single positions, suffixes (the client comes back for the
    tail, or never), prefixes, windows of 2-3, and all subsets (n <= 8) or 60 random ones."""
    seen: set[Faults] = set()

    def new(positions: set[int] | range, never_back_from: int | None = None) -> Iterator[Faults]:
        f = (frozenset(positions), never_back_from)
        if f not in seen:
            seen.add(f)
            yield f

    for k in range(n):
        yield from new({k})
        yield from new(set(), never_back_from=k)  # the tail's sends fail too
        yield from new(range(k, n))  # the client comes back for the tail
        yield from new(range(0, k + 1))
        for w in (2, 3):
            yield from new(range(k, min(k + w, n)))
    if n <= 8:
        for size in range(2, n + 1):
            for combo in itertools.combinations(range(n), size):
                yield from new(set(combo))
    else:
        rng = random.Random(seed)
        for _ in range(60):
            yield from new({i for i in range(n) if rng.random() < 0.3})


def same_occurrence_in_every_run(incident_id: str) -> bool:
    """Turn and replay ids name the same occurrence in every run; a sequence-numbered id (a
    notice, a session-scoped incident) may name another one when an earlier send failed (the
    failed notice's successor starts a new id instead of updating it), so it is not compared."""
    return ":notice:" not in incident_id and re.fullmatch(r".*:e\d+:\d+", incident_id) is None


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_every_failing_send_leaves_the_ledger_equal_to_the_client(scenario: Scenario) -> None:
    baseline = Run(frozenset())
    scenario.run(baseline)
    n = baseline.tail_start  # the scenario's own sends (the tail's come after)
    assert n > 0 and baseline.attempts > n
    expected = baseline.final_records()
    runs = compared = 0
    divergences: list[str] = []
    for fails, never_back_from in fault_sets(n, seed=len(scenario.name)):
        r = Run(fails, never_back_from)
        scenario.run(r)  # the per-event invariants (Run.check) fail the test on the spot
        divergences += diverging_records(r, expected)
        compared += sum(1 for rid in r.last_attempt if comparable(r, rid, expected))
        runs += 1
    TOTALS["scenarios"] += 1
    TOTALS["sends in fault-free runs"] += n
    TOTALS["runs with failing sends"] += runs
    TOTALS["records compared with the fault-free run"] += compared
    TOTALS["divergences"] += len(divergences)  # counted over every run, then asserted
    assert runs > 0 and (compared > 0 or not expected)  # legacy runs deliver no record
    assert divergences == [], f"{scenario.name}: {len(divergences)} divergence(s), first: {divergences[:3]}"


def comparable(r: Run, rid: str, expected: dict[str, dict[str, Any]]) -> bool:
    """The record's last send was delivered and it names the same occurrence as in the fault-free run."""
    return r.last_attempt[rid][1] and rid in expected and same_occurrence_in_every_run(rid)


def diverging_records(r: Run, expected: dict[str, dict[str, Any]]) -> list[str]:
    """Every comparable record whose final content differs from the fault-free run's."""
    final = r.final_records()
    return [
        f"fails={sorted(r.fails)}+{r.never_back_from}: {rid}: {final.get(rid)} != {expected[rid]}"
        for rid in r.last_attempt
        if comparable(r, rid, expected) and final.get(rid) != expected[rid]
    ]


def test_the_scenario_lists_did_not_shrink() -> None:
    """Exactly the conformance cases, recorded runs and recorded histories tests/README.md counts:
    a missing file or a broken glob must not quietly make the fault runs smaller."""
    assert len(CASES) == documented_count("conformance cases")
    assert len(RECORDED) == documented_count("recordings")
    assert len(HISTORIES) == documented_count("histories")
    kinds = Counter(s.name.split(":")[0] for s in SCENARIOS)
    assert kinds == {
        "case": len(CASES),
        "recorded": len(RECORDED),
        "recorded-legacy": 3,
        "replay": len(HISTORIES),
        "composite": 1,
    }
    assert len(SCENARIOS) >= 41


def test_the_divergence_count_sees_a_divergence() -> None:
    """Non-vacuity of the count: a record whose content differs from the expectation is counted."""
    case = next(s for s in SCENARIOS if s.name == "case:rate-limit-retries-then-fails")
    r = Run(frozenset())
    case.run(r)
    expected = r.final_records()
    assert diverging_records(r, expected) == []
    expected["t1:error"] = {**expected["t1:error"], "title": "another title"}
    (divergence,) = diverging_records(r, expected)
    assert "t1:error" in divergence


def test_fault_sets_cover_singles_and_suffixes() -> None:
    sets = set(fault_sets(5, 0))
    assert all((frozenset({k}), None) in sets for k in range(5))
    assert all((frozenset(range(k, 5)), None) in sets for k in range(5))
    assert all((frozenset(), k) in sets for k in range(5))
    assert len(sets) == 2**5 - 1 + 5  # every non-empty subset, plus 5 "never comes back" suffixes
    big = list(fault_sets(40, 0))
    assert all((frozenset({k}), None) in big and (frozenset(range(k, 40)), None) in big for k in range(40))


def test_scenarios_exercise_both_carriers_and_replay() -> None:
    """Non-vacuity: the fault-free runs deliver records on both carriers, in replay too."""
    carriers: Counter[str] = Counter()
    for s in SCENARIOS:
        r = Run(frozenset())
        s.run(r)
        for _, client in r.sessions.values():
            carriers.update(e.carrier for e in client.entries if e.record is not None and e.carrier)
    assert carriers["prompt_response"] > 10 and carriers["session_info_update"] > 10


def test_a_republished_record_has_no_gap_and_the_latest_content() -> None:
    """The rate-limit case, first warning lost: the client sees revisions 1, 2 only, and the
    error as revision 2 (what ``test_every_failing_send...`` checks for every case, spelled out)."""
    case = next(s for s in SCENARIOS if s.name == "case:rate-limit-retries-then-fails")
    r = Run(frozenset({0}))
    case.run(r)
    ((ledger, client),) = [v for v in r.sessions.values() if v[0].session_id == "s1"]
    assert client.received["t1:error"] == [1, 2]
    rec = client.record("t1:error")
    assert rec is not None and (rec.severity.value, rec.revision) == ("error", 2)
    assert ledger.revision_of("t1:error") == 2


def test_a_check_that_would_catch_a_divergence() -> None:
    """Non-vacuity of the invariant: a client that silently drops one delivered record is caught."""
    case = next(s for s in SCENARIOS if s.name == "case:rate-limit-retries-then-fails")
    r = Run(frozenset())
    original = r.deliver
    dropped: list[dict[str, Any]] = []

    def lossy(ledger: SessionLedger, message: dict[str, Any]) -> None:
        if _record_of(message) is not None and not dropped:
            dropped.append(message)
            r.attempts += 1
            return  # reported as delivered, never shown
        original(ledger, message)

    r.deliver = lossy  # type: ignore[method-assign]
    with pytest.raises(AssertionError):
        case.run(r)
