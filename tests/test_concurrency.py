"""Stale runtimes and concurrency.

* An event from a replaced runtime is refused (``feed(..., runtime=old)`` returns False),
  changes nothing, plans nothing, and is reported (``stale_runtime_event_refused``), for every
  event type; and a random mix of tagged events behaves exactly like feeding only the events of
  the current runtime.
* Several asyncio tasks feed one session through ``lifecycle.acp.SessionPublisher`` (the
  per-session lock around plan -> deliver -> commit) over a real ACP connection on an in-memory
  transport pair: a prompt handler consuming recorded SDK runs, an auth watcher, a notice task
  and a replay task. They interleave by yielding to the event loop a seeded number of times (no
  wall-clock sleep), so each seed is one reproducible interleaving. In wire order the client
  receives every id's revisions exactly as 1..n. With the lock removed (a mutant) the same run
  fails with the ledger's PendingDeliveryError.
* Sessions share nothing mutable: ledgers fed interleaved (in one task, or in threads) produce
  exactly what each produces alone.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import random
import re
import sys
import threading
from collections.abc import Iterator
from typing import Any

import acp
import pytest
import structlog
from acp import RequestError
from acp.agent.connection import AgentSideConnection
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import ClientCapabilities, InitializeResponse, NewSessionResponse, PromptResponse
from fuzz import harness as h
from fuzz.recorded import recorded_events
from fuzz.report import install
from hypothesis import given, settings
from hypothesis import strategies as st

from lifecycle import (
    ApiRetry,
    Assistant,
    AuthStatus,
    Cancelled,
    ChildEnded,
    ChildRetry,
    ClientProjection,
    HistoryEntry,
    HistoryLoaded,
    Informational,
    InternalError,
    LocalProtocolError,
    McpServerNotStarted,
    MessagesReplaced,
    ModelFallback,
    ModelRefusalFallback,
    ModelRefusalNoFallback,
    PendingDeliveryError,
    PermissionAnswered,
    PermissionAsked,
    PromptStarted,
    QueryEnded,
    QueryError,
    RateLimitWindow,
    Result,
    RuntimeReplaced,
    SessionLedger,
    WorkerShuttingDown,
)
from lifecycle.acp import SessionPublisher, negotiate_client
from lifecycle.events import AgentAnswered, AgentExited, AgentFailure, AgentRetrying, AgentTurnEnded, Event
from lifecycle.history import load_history
from lifecycle.log import StructlogObserver, configure_logging
from lifecycle.wire import Action, Category

AIR = {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}


@pytest.fixture(autouse=True)
def _report(request: pytest.FixtureRequest) -> None:
    install(request.config)


# ------------------------------------------------------------------ stale runtimes

#: another ACP agent's 429, as the proxy's family table gives it (lifecycle/families.py)
AGENT_FAILURE = AgentFailure(
    key="rate_limit", category=Category.LIMIT, actions=(Action.RETRY,), fallback="Try again later."
)
ONE_OF_EACH: list[Event] = [
    PromptStarted(turn_id="late"),
    ApiRetry(attempt=1, max_retries=2, error_status=529, error="overloaded"),
    Assistant(text="old answer", model="claude-opus-5-5"),
    Assistant(text=h.LIMIT, model="<synthetic>", error="rate_limit"),
    Result(subtype="success", is_error=True, result=h.RATE),
    Result(subtype="success", is_error=False, result="ok"),
    ModelFallback(content=h.FALLBACK),
    McpServerNotStarted(content='MCP server "old" failed to start. Its tools are unavailable in this session.'),
    ModelRefusalFallback(original_model="claude-opus-5-5", fallback_model="claude-opus-4-8", category="cyber"),
    ModelRefusalNoFallback(explanation="declined"),
    Informational(content="a hook blocked the turn", level="warning"),
    WorkerShuttingDown(reason="idle"),
    AuthStatus(ok=True),
    QueryError(message="old runtime died"),
    QueryEnded(),
    Cancelled(),
    RuntimeReplaced(),
    InternalError(),
    HistoryLoaded(entries=(HistoryEntry(role="assistant", uuid="m", text=h.LIMIT, model="<synthetic>"),)),
    PermissionAsked(tool_use_id="toolu_late"),
    PermissionAnswered(tool_use_id="toolu_late"),
    RateLimitWindow(window="five_hour", status="allowed_warning", utilization=0.9, resets_at=1_900_000_000),
    MessagesReplaced(uuids=("a1",)),
    ChildRetry(attempt=1, max_retries=2, error_status=429, error="rate_limit"),
    ChildEnded(status="failed", error="Agent terminated early due to an API error"),
    AgentAnswered(),
    AgentRetrying(words="Retrying after a 503"),
    AgentTurnEnded(stop_reason="end_turn", failure=AGENT_FAILURE),
    AgentExited(failure=AGENT_FAILURE),
]


def test_every_event_type_is_covered() -> None:
    assert {type(e) for e in ONE_OF_EACH} == set(h.EVENT_TYPES)


def _snapshot(ledger: SessionLedger) -> tuple[Any, ...]:
    return (ledger.active, ledger.turn, ledger.runtime, ledger.pending, ledger.next_outbound())


@pytest.mark.parametrize("event", ONE_OF_EACH, ids=[type(e).__name__ for e in ONE_OF_EACH])
@pytest.mark.parametrize("setup", ["auth_open", "quota_open", "runtime_lost", "retrying"])
def test_an_event_from_a_replaced_runtime_is_refused_and_reported(event: Event, setup: str) -> None:
    notes: list[tuple[str, dict[str, Any]]] = []

    class Notes:
        armed = False

        def transition(self, **f: Any) -> None:
            assert not self.armed, f"a stale event caused a transition: {f}"

        def note(self, what: str, **f: Any) -> None:
            notes.append((what, f))

    spy = Notes()
    probe = h.start(setup, True, observer=spy)
    probe.feed(RuntimeReplaced())
    probe.feed(RuntimeReplaced())
    ledger = probe.ledger
    before = _snapshot(ledger)
    spy.armed = True
    notes.clear()
    for stale in (0, 1):
        assert ledger.feed(event, runtime=stale) is False
    assert _snapshot(ledger) == before
    assert notes == [
        (
            "stale_runtime_event_refused",
            {"session_id": "s1", "event_type": type(event).__name__, "runtime": 0},
        ),
        (
            "stale_runtime_event_refused",
            {"session_id": "s1", "event_type": type(event).__name__, "runtime": 1},
        ),
    ]
    assert ledger.feed(AuthStatus(ok=False), runtime=2) is True  # the current runtime is heard


def test_a_refused_event_is_logged_as_json() -> None:
    buf = io.StringIO()
    configure_logging(buf)
    try:
        ledger = SessionLedger("s9", negotiated=True, epoch="e", observer=StructlogObserver())
        ledger.feed(RuntimeReplaced())
        assert ledger.feed(Assistant(text="hi", model="claude-opus-5-5"), runtime=0) is False
    finally:
        structlog.reset_defaults()
    (line,) = [json.loads(x) for x in buf.getvalue().splitlines()]
    assert line["event"] == "ledger.stale_runtime_event_refused"
    assert (line["session_id"], line["event_type"], line["runtime"], line["level"]) == (
        "s9",
        "Assistant",
        0,
        "info",
    )


TAGGABLE = st.sampled_from(
    [
        ApiRetry(attempt=1, max_retries=2, error_status=429, error="rate_limit"),
        Assistant(text="answer", model="claude-opus-5-5"),
        Assistant(text=h.LIMIT, model="<synthetic>", error="rate_limit"),
        Assistant(text=h.LOGIN, model="<synthetic>", error="authentication_failed"),
        Result(subtype="success", is_error=True, result=h.RATE),
        Result(subtype="success", is_error=False, result="ok"),
        ModelFallback(content=h.FALLBACK),
        WorkerShuttingDown(reason="idle"),
        AuthStatus(ok=True),
        QueryError(message="gone"),
        QueryEnded(),
    ]
)
STEPS = st.lists(
    st.one_of(
        st.tuples(TAGGABLE, st.one_of(st.none(), st.integers(0, 3))),
        st.sampled_from([("prompt", None), ("replace", None), ("cancel", None)]),
    ),
    max_size=25,
)


@given(steps=STEPS, negotiated=st.booleans())
@settings(max_examples=60 if not h.NIGHTLY else 20_000)
def test_tagged_events_behave_like_the_current_runtimes_events_alone(steps: list[Any], negotiated: bool) -> None:
    """Reference model: an event tagged with the current runtime (or untagged) applies, any other
    is a no-op. The tagged ledger and a ledger fed only the applying events send the same."""
    tagged, reference = h.Probe(negotiated), h.Probe(negotiated)
    turns = 0
    for what, runtime in steps:
        if what == "prompt":
            if h._open(tagged):
                continue
            turns += 1
            what = PromptStarted(turn_id=f"t{turns}")
        elif what == "replace":
            what = RuntimeReplaced()
        elif what == "cancel":
            what = Cancelled()
        current = tagged.ledger.runtime
        accepted = tagged.ledger.process(what, tagged._deliver, runtime=runtime)
        assert accepted is (runtime is None or runtime == current)
        if accepted:
            reference.feed(what)
        tagged.check()
    assert [m.to_jsonrpc() for m in tagged.sent] == [m.to_jsonrpc() for m in reference.sent]
    assert tagged.ledger.active == reference.ledger.active


# ------------------------------------------------------------------ several feeders, one session, real ACP


class Agent:
    """A minimal ACP agent whose prompt handler plays recorded SDK runs through the publisher."""

    def __init__(self, rng: random.Random, *, lock: bool = True) -> None:
        self.rng = rng
        self.lock = lock
        self.sinks: list[Jitter] = []
        self.publishers: dict[str, SessionPublisher] = {}
        self.scripts: list[list[Event]] = []
        self.conn: AgentSideConnection | None = None

    def on_connect(self, conn: AgentSideConnection) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, **kw: Any) -> Any:
        self.negotiated = negotiate_client(client_capabilities)
        return InitializeResponse(protocol_version=acp.PROTOCOL_VERSION)

    async def new_session(self, cwd: str, **kw: Any) -> NewSessionResponse:
        assert self.conn is not None
        sid = f"s{len(self.publishers) + 1}"
        sink = Jitter(self.conn, self.rng)
        self.sinks.append(sink)
        pub = SessionPublisher(sink, SessionLedger(sid, negotiated=self.negotiated, epoch="e"))
        if not self.lock:
            pub._lock = NoLock()  # type: ignore[assignment]  # the mutant
        self.publishers[sid] = pub
        return NewSessionResponse(session_id=sid)

    async def prompt(self, session_id: str, prompt: list[Any], **kw: Any) -> PromptResponse:
        pub = self.publishers[session_id]
        events = self.scripts.pop(0)
        turn = events[0].turn_id  # type: ignore[union-attr]
        for ev in events:  # the SDK consumer
            await pub.feed(ev)
            await yield_to_others(self.rng, 3)
        return await pub.outcome(turn)


async def yield_to_others(rng: random.Random, most: int) -> None:
    """Let the other ready tasks run 0..most times: a seeded interleaving, no clock involved."""
    for _ in range(rng.randint(0, most)):
        await asyncio.sleep(0)


class Jitter:
    """Sends through the real connection after yielding a seeded number of times, so feeders
    interleave; counts the notifications it sent."""

    def __init__(self, conn: AgentSideConnection, rng: random.Random) -> None:
        self.conn, self.rng = conn, rng
        self.sent = 0

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        await yield_to_others(self.rng, 6)
        await self.conn.session_update(session_id, update, **kw)
        self.sent += 1


class NoLock:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None


class Recorder:
    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        return None


def _stored_history(n: int) -> list[object]:
    out: list[object] = []
    for i in range(n):
        out.append({"type": "user", "uuid": f"h{i}", "message": {"content": f"try {i}"}})
        model, text = ("<synthetic>", h.LIMIT) if i % 3 != 2 else ("claude-opus-5-5", "Recovered")
        out.append({"type": "assistant", "uuid": f"hm{i}", "message": {"model": model, "content": text}})
    return out


async def _session_with_concurrent_feeders(seed: int, *, lock: bool = True) -> tuple[list[dict[str, Any]], Agent]:
    rng = random.Random(seed)
    agent = Agent(rng, lock=lock)
    frames: list[dict[str, Any]] = []
    arrived = asyncio.Event()

    def observe(ev: StreamEvent) -> None:
        if ev.direction == StreamDirection.INCOMING:
            frames.append(ev.message)
            arrived.set()

    agent_end, client_end = acp._transport.memory_transport_pair()
    AgentSideConnection(agent, agent_end)  # type: ignore[arg-type]
    conn = ClientSideConnection(lambda _: Recorder(), client_end, observers=[observe])  # type: ignore[arg-type,return-value]
    await conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities(field_meta=AIR))
    sid = (await conn.new_session(cwd="/")).session_id
    pub = agent.publishers[sid]
    fixtures = ["http429", "retry_then_success", "usage_limit_gateway", "http529", "http401", "sse_truncated"]
    agent.scripts = [recorded_events(name, f"p{i}") for i, name in enumerate(fixtures)]

    async def sdk_consumer() -> None:
        for _ in fixtures:
            await conn.prompt(session_id=sid, prompt=[acp.text_block("hi")])

    async def auth_watcher() -> None:
        for i in range(12):
            await yield_to_others(rng, 12)
            await pub.feed(AuthStatus(ok=i % 3 == 2))

    async def notices() -> None:
        for i in range(10):
            await yield_to_others(rng, 12)
            await pub.feed(ModelFallback(content=(h.FALLBACK, "Switched to Sonnet 5")[i % 2]))

    async def replay() -> None:
        stored = _stored_history(9)
        for i in range(0, len(stored), 2):
            await yield_to_others(rng, 12)
            await pub.feed(load_history(stored[i : i + 2]))

    async def everything_sent_was_received() -> None:
        (sink,) = agent.sinks
        while sum(f.get("method") == "session/update" for f in frames) < sink.sent:
            arrived.clear()
            await arrived.wait()

    await asyncio.wait_for(asyncio.gather(sdk_consumer(), auth_watcher(), notices(), replay()), 30)
    # the prompt responses are in (gather waited for them); the last notifications may still be
    # on their way to the client's reader: wait until it has seen every one the agent sent
    await asyncio.wait_for(everything_sent_was_received(), 30)
    return frames, agent


@pytest.mark.parametrize("seed", range(4))
def test_concurrent_feeders_keep_every_ids_revisions_in_order_on_the_wire(seed: int) -> None:
    frames, agent = asyncio.run(_session_with_concurrent_feeders(seed))
    (pub,) = agent.publishers.values()
    client = ClientProjection()
    client.receive_all(frames)
    assert client.received, "no record reached the client"
    for incident_id, revisions in client.received.items():
        assert revisions == list(range(1, len(revisions) + 1)), (incident_id, revisions)
    assert client.ignored == 0 and client.malformed == 0 and pub.failed_sends == 0
    h.assert_consistent(pub.ledger, client, [])
    updated_in_place = [i for i, r in client.received.items() if len(r) > 1]
    carriers = {e.carrier for e in client.entries if e.record is not None}
    assert updated_in_place and carriers == {"prompt_response", "session_info_update"}
    # non-vacuity: the feeders really interleaved on the wire
    sources = [_source(r.id) for r in _wire_records(frames)]
    switches = sum(a != b for a, b in itertools.pairwise(sources))
    assert len(set(sources)) >= 3 and switches >= 6, sources


def _source(incident_id: str) -> str:
    if ":notice:" in incident_id:
        return "notices"
    if incident_id.startswith("h"):
        return "replay"
    return "sdk" if incident_id.startswith("p") else "session"


def _wire_records(frames: list[dict[str, Any]]) -> list[Any]:
    out = []
    for f in frames:
        c = ClientProjection()
        c.receive(f)
        out += c.records
    return out


PENDING_DELIVERY = re.compile(r"\w+ fed while \d+ planned send\(s\) await their outcome")


def is_the_lock_mutants_failure(exc: BaseException) -> bool:
    """The ledger refusing a feed while another feeder's sends are in flight: PendingDeliveryError
    in a feeder task, or that error from the prompt handler as the client receives it (-32603)."""
    if isinstance(exc, PendingDeliveryError):
        return PENDING_DELIVERY.fullmatch(str(exc)) is not None
    if isinstance(exc, RequestError):
        details = exc.data.get("details") if isinstance(exc.data, dict) else None
        return exc.code == -32603 and PENDING_DELIVERY.fullmatch(str(details)) is not None
    return False


@pytest.mark.parametrize("seed", range(4))
def test_the_lock_is_what_keeps_them_in_order(seed: int) -> None:
    """Mutant: with the session lock replaced by a no-op, the same feeders overlap between plan
    and commit and the ledger refuses them: PendingDeliveryError, nothing else."""
    with pytest.raises((PendingDeliveryError, RequestError)) as info:
        asyncio.run(_session_with_concurrent_feeders(seed, lock=False))
    assert is_the_lock_mutants_failure(info.value), repr(info.value)


def test_the_mutant_check_rejects_other_failures() -> None:
    assert is_the_lock_mutants_failure(PendingDeliveryError("ApiRetry fed while 1 planned send(s) await their outcome"))
    assert not is_the_lock_mutants_failure(RuntimeError("ApiRetry fed while 1 planned send(s) await their outcome"))
    assert not is_the_lock_mutants_failure(RequestError(-32603, "Internal error", {"details": "KeyError: 'p1'"}))
    assert not is_the_lock_mutants_failure(LocalProtocolError("no planned send is waiting for its outcome"))


# ------------------------------------------------------------------ sessions share nothing mutable


def _event_vocabulary() -> list[Event | str]:
    return [
        "prompt",
        ApiRetry(attempt=1, max_retries=3, error_status=429, error="rate_limit"),
        ApiRetry(attempt=2, max_retries=3, error_status=None, error="unknown"),
        Assistant(text="Hello", model="claude-opus-5-5"),
        Assistant(text=h.RATE, model="<synthetic>", error="rate_limit"),
        Assistant(text=h.LIMIT, model="<synthetic>", error="rate_limit"),
        Assistant(text=h.LOGIN, model="<synthetic>", error="authentication_failed"),
        Result(subtype="success", is_error=True, result=h.RATE, api_error_status=429),
        Result(subtype="success", is_error=False, result="Hello"),
        Result(subtype="error_max_turns", is_error=True, errors=("Reached maximum number of turns (2)",)),
        ModelFallback(content=h.FALLBACK),
        AuthStatus(ok=True),
        QueryError(message="x"),
        QueryEnded(),
        WorkerShuttingDown(),
        RuntimeReplaced(),
        Cancelled(),
        InternalError(),
        load_history(_stored_history(2)),
    ]


VOCAB = _event_vocabulary()


def _play(ledger: SessionLedger, script: list[int], out: list[Any], turns: Iterator[int]) -> Iterator[None]:
    """Feed ``script`` (indices into VOCAB) one event per ``next()``; record everything seen."""
    for i in script:
        ev = VOCAB[i]
        if ev == "prompt":
            ev = PromptStarted(turn_id=f"t{next(turns)}")
        try:
            ledger.process(ev, lambda m: out.append(m.to_jsonrpc()))  # type: ignore[arg-type]
        except LocalProtocolError as exc:
            out.append(("refused", type(exc).__name__))
        out.append([(a.id, a.state, a.revision) for a in ledger.active])
        yield


def _solo(script: list[int], sid: str, negotiated: bool) -> list[Any]:
    out: list[Any] = []
    ledger = SessionLedger(sid, negotiated=negotiated, epoch="e1")
    for _ in _play(ledger, script, out, iter(range(1, 10**6))):
        pass
    return out


@given(
    a=st.lists(st.integers(0, len(VOCAB) - 1), max_size=30),
    b=st.lists(st.integers(0, len(VOCAB) - 1), max_size=30),
    order=st.lists(st.booleans(), max_size=60),
    negotiated=st.tuples(st.booleans(), st.booleans()),
)
@settings(max_examples=60 if not h.NIGHTLY else 20_000)
def test_two_sessions_fed_interleaved_equal_each_fed_alone(
    a: list[int], b: list[int], order: list[bool], negotiated: tuple[bool, bool]
) -> None:
    out_a: list[Any] = []
    out_b: list[Any] = []
    # the same turn ids in both sessions: nothing keyed by turn id may be shared between them
    play_a = _play(SessionLedger("s1", negotiated=negotiated[0], epoch="e1"), a, out_a, iter(range(1, 10**6)))
    play_b = _play(SessionLedger("s2", negotiated=negotiated[1], epoch="e1"), b, out_b, iter(range(1, 10**6)))
    pending = [play_a, play_b]
    for pick_a in [*order, *([True] * len(a)), *([False] * len(b))]:
        gen = play_a if pick_a else play_b
        if gen in pending and next(gen, StopIteration) is StopIteration:
            pending.remove(gen)
    assert out_a == _solo(a, "s1", negotiated[0])
    assert out_b == _solo(b, "s2", negotiated[1])


def test_sessions_in_threads_equal_each_alone() -> None:
    """Eight sessions in eight threads, switching every microsecond: each equals its solo run."""
    rng = random.Random(7)
    scripts = [[rng.randrange(len(VOCAB)) for _ in range(150)] for _ in range(8)]
    results: dict[int, list[Any]] = {}
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            results[k] = _solo(scripts[k], f"s{k}", k % 2 == 0)
        except BaseException as exc:
            errors.append(exc)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    for k in range(8):
        assert results[k] == _solo(scripts[k], f"s{k}", k % 2 == 0), k
