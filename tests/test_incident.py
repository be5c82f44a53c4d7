"""Spec: "Severity", "Identity, revisions, and history", "Internal recovery" -- one incident's machine."""

from __future__ import annotations

import contextlib
import itertools

import pytest
from session_harness import Session
from statemachine.exceptions import InvalidDefinition, TransitionNotAllowed

from lifecycle import ApiRetry, PromptStarted, Result
from lifecycle.answers import GUARD_INPUTS, INITIAL_STATE, RECOVERY_EVENTS, Incident, MachineAnswers, TransitionListener
from lifecycle.conditions import Recovery
from lifecycle.incident import IncidentMachine
from lifecycle.wire import Category

STATES = [s.id for s in IncidentMachine.states]
EVENTS = sorted({e.id for e in IncidentMachine.events})

# The declared table, written out independently of the class: (state, event, recovery) -> target.
# ``None`` recovery means the transition does not depend on the policy.
EXPECTED = {
    ("pending", "warn"): "retrying",
    ("retrying", "warn"): "retrying",
    ("pending", "fail"): "failed",
    ("retrying", "fail"): "failed",
    ("pending", "notify"): "noticed",
    ("noticed", "notify"): "noticed",
    ("pending", "restore"): "failed",
    ("noticed", "superseded"): "historical",
    ("pending", "window_warn"): "warned",
    ("warned", "window_warn"): "warned",
}
GUARDED = {
    ("failed", "real_model_answer"): Recovery.REAL_MODEL_ANSWER,
    ("failed", "confirmed_attempt"): Recovery.CONFIRMED_ATTEMPT,
    ("retrying", "confirmed_attempt"): Recovery.CONFIRMED_ATTEMPT,
    ("failed", "auth_succeeded"): Recovery.AUTH_STATUS,
    ("failed", "runtime_replaced"): Recovery.RUNTIME_REPLACED,
    ("warned", "window_reset"): Recovery.WINDOW_RESET,
}


def machine_at(state: str, recovery: Recovery, replayed: bool = False) -> tuple[Incident, IncidentMachine]:
    inc = Incident("t1:error", "t1")
    inc.recovery = recovery
    inc.replayed = replayed
    inc.state = state  # a model whose state is set resumes the machine there
    sm = IncidentMachine(model=inc, state_field="state")
    return inc, sm


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str, str, int]] = []

    def transition(
        self, *, session_id: str, incident_id: str, source: str, target: str, event: str, revision: int
    ) -> None:
        self.seen.append((incident_id, source, target, event, revision))

    def note(self, what: str, **fields: object) -> None:  # pragma: no cover - unused here
        pass


def test_a_retry_warning_becomes_the_terminal_error_and_recovers_on_its_policy() -> None:
    """api_retry progress reuses the turn failure; the terminal failure updates it; recovery ends it."""
    rec = Recorder()
    inc = Incident("t1:error", "t1")
    sm = IncidentMachine(model=inc, state_field="state", listeners=[TransitionListener(rec, "s1")])
    assert (inc.state, inc.active) == ("pending", False)
    inc.revision = 1
    sm.send("warn")
    assert (inc.state, inc.active) == ("retrying", True)
    inc.revision = 2
    sm.send("warn")
    inc.revision, inc.recovery = 3, Recovery.AUTH_STATUS
    sm.send("fail")
    assert (inc.state, inc.active) == ("failed", True)
    # Not its policy's event: refused, state unchanged.
    with pytest.raises(TransitionNotAllowed):
        sm.send("confirmed_attempt")
    assert inc.state == "failed"
    sm.send("auth_succeeded")
    assert (inc.state, inc.active, sm.is_terminated) == ("historical", False, True)
    assert rec.seen == [
        ("t1:error", "pending", "retrying", "warn", 1),
        ("t1:error", "retrying", "retrying", "warn", 2),
        ("t1:error", "retrying", "failed", "fail", 3),
        ("t1:error", "failed", "historical", "auth_succeeded", 3),
    ]


def test_a_window_warning_is_updated_in_place_and_ends_only_when_the_window_resets() -> None:
    """Issue 32: a usage-limit window's warning (``warned``) is updated by a new status of the
    window and ends at ``window_reset`` alone; no turn recovery ends it."""
    rec = Recorder()
    inc = Incident("s1:e1:1", None)
    sm = IncidentMachine(model=inc, state_field="state", listeners=[TransitionListener(rec, "s1")])
    inc.revision, inc.recovery = 1, Recovery.WINDOW_RESET
    sm.send("window_warn")
    assert (inc.state, inc.active) == ("warned", True)
    inc.revision = 2
    sm.send("window_warn")
    for event in ("real_model_answer", "confirmed_attempt", "auth_succeeded", "runtime_replaced", "superseded"):
        with pytest.raises(TransitionNotAllowed):
            sm.send(event)
        assert inc.state == "warned"
    sm.send("window_reset")
    assert (inc.state, inc.active, sm.is_terminated) == ("historical", False, True)
    assert rec.seen == [
        ("s1:e1:1", "pending", "warned", "window_warn", 1),
        ("s1:e1:1", "warned", "warned", "window_warn", 2),
        ("s1:e1:1", "warned", "historical", "window_reset", 2),
    ]


def test_historical_incidents_never_come_back() -> None:
    for event in EVENTS:
        inc, sm = machine_at("historical", Recovery.CONFIRMED_ATTEMPT)
        with pytest.raises(TransitionNotAllowed):
            sm.send(event)
        assert inc.state == "historical"


@pytest.mark.parametrize(("state", "event", "recovery"), list(itertools.product(STATES, EVENTS, list(Recovery))))
def test_totality_every_state_event_pair(state: str, event: str, recovery: Recovery) -> None:
    """Every (state, event, policy): either the declared target, or TransitionNotAllowed and no change."""
    inc, sm = machine_at(state, recovery)
    if (state, event) == ("failed", "superseded"):
        target: str | None = None  # only for replayed failures: see the test below
    elif (state, event) in EXPECTED:
        target = EXPECTED[(state, event)]
    elif (state, event) in GUARDED:
        target = "historical" if GUARDED[(state, event)] is recovery else None
    else:
        target = None
    if target is None:
        with pytest.raises(TransitionNotAllowed):
            sm.send(event)
        assert inc.state == state
    else:
        sm.send(event)
        assert inc.state == target


def test_every_recovery_policy_has_exactly_one_ending_event() -> None:
    assert set(RECOVERY_EVENTS) == set(Recovery)
    assert len(set(RECOVERY_EVENTS.values())) == len(Recovery)
    assert set(RECOVERY_EVENTS.values()) <= set(EVENTS)


def test_the_declared_table_is_the_whole_machine() -> None:
    pairs = set()
    for state in IncidentMachine.states:
        for t in state.transitions:
            for ev in t.events:
                pairs.add((state.id, str(ev)))
    assert pairs == set(EXPECTED) | set(GUARDED) | {("failed", "superseded")}


@pytest.mark.parametrize("replayed", [True, False])
def test_only_a_replayed_failure_is_superseded_by_a_later_occurrence(replayed: bool) -> None:
    """The latest matching message stays active; older records remain historical typed entries."""
    inc, sm = machine_at("failed", Recovery.REAL_MODEL_ANSWER, replayed=replayed)
    if replayed:
        sm.send("superseded")
        assert inc.state == "historical"
    else:
        with pytest.raises(TransitionNotAllowed):
            sm.send("superseded")
        assert inc.state == "failed"


def test_a_new_incident_is_no_replayed_occurrence() -> None:
    """A failure published for a new incident stays active when a later occurrence is replayed:
    only a restored (replayed) one is superseded."""
    inc = Incident("t1:error", "t1")
    sm = IncidentMachine(model=inc, state_field="state")
    sm.send("fail")
    with pytest.raises(TransitionNotAllowed):
        sm.send("superseded")
    assert inc.state == "failed"


# ---------------------------------------------------------------------------- how the machine is run
# (lifecycle.incident, "How the machine is run"): the ledger moves incidents by MachineAnswers,
# which asks a real instance once per (state, event, *GUARD_INPUTS) and reuses the answer.


def _fresh_machine_outcome(inc: Incident, event: str) -> tuple[str, str]:
    """What a real instance bound to (a copy of) ``inc`` does with ``event``."""
    copy = inc.copy()
    sm = IncidentMachine(model=copy, state_field="state")
    try:
        sm.send(event)
    except TransitionNotAllowed:
        return "refused", copy.state
    return "moved", copy.state


def _answers_outcome(answers: MachineAnswers, inc: Incident, event: str) -> tuple[str, str]:
    try:
        answers.fire(inc, event)
    except TransitionNotAllowed:
        return "refused", inc.state
    return "moved", inc.state


_OTHER_FIELDS = [
    {"id": "t1:error", "turn_id": "t1", "revision": 1, "category": Category.UNKNOWN},
    {"id": "s1:e:7", "turn_id": None, "revision": 9, "category": Category.ACCESS},
]


@pytest.mark.parametrize(
    ("state", "event", "recovery", "replayed"),
    list(itertools.product(STATES, EVENTS, list(Recovery), [False, True])),
)
def test_every_kept_answer_is_what_a_fresh_machine_does_whatever_the_other_fields(
    state: str, event: str, recovery: Recovery, replayed: bool
) -> None:
    """All 792 points, each asked first and then answered from memory, with other fields varied."""
    answers = MachineAnswers()
    for fields in _OTHER_FIELDS * 2:  # the second round is answered from memory
        inc = Incident(fields["id"], fields["turn_id"])
        inc.state, inc.recovery, inc.replayed = state, recovery, replayed
        inc.revision, inc.category = fields["revision"], fields["category"]
        expected = _fresh_machine_outcome(inc, event)
        assert _answers_outcome(answers, inc, event) == expected
    assert len(answers) == 1


def test_a_refusal_from_memory_is_a_fresh_transition_not_allowed() -> None:
    answers = MachineAnswers()
    raised = []
    for _ in range(2):
        inc = Incident("t1:error", "t1")
        inc.state = "failed"
        with pytest.raises(TransitionNotAllowed) as info:
            answers.fire(inc, "auth_succeeded")
        raised.append(info.value)
        assert inc.state == "failed"
    assert raised[0] is not raised[1] and str(raised[0]) == str(raised[1]) == "Can't Auth succeeded when in Failed."


def test_answers_belong_to_their_owner_a_patched_machine_gets_new_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = MachineAnswers()
    inc = Incident("t1:error", "t1")
    inc.state, inc.recovery = "failed", Recovery.AUTH_STATUS
    assert _answers_outcome(answers, inc.copy(), "auth_succeeded") == ("moved", "historical")
    monkeypatch.setattr(IncidentMachine, "recovers_on_auth", lambda self: False)
    assert _answers_outcome(answers, inc.copy(), "auth_succeeded") == ("moved", "historical")  # remembered
    # New answers ask the class as it is now; the old ones are not affected and affect nothing.
    assert _answers_outcome(MachineAnswers(), inc.copy(), "auth_succeeded") == ("refused", "failed")


def test_two_ledgers_never_share_answers_unless_given_the_same_object(monkeypatch: pytest.MonkeyPatch) -> None:
    from lifecycle import AuthStatus, SessionLedger
    from lifecycle.events import Assistant, PromptStarted, Result

    def auth_failure(ledger: SessionLedger) -> None:
        ledger.process(PromptStarted(turn_id="t1"), lambda _out: None)
        ledger.process(
            Assistant(text="Invalid API key · Please run /login", error="authentication_failed", model="<synthetic>"),
            lambda _out: None,
        )
        ledger.process(Result(subtype="success", is_error=True, result="Invalid API key · Please run /login"),
                       lambda _out: None)

    first = SessionLedger("s1", negotiated=True, epoch="e1")
    auth_failure(first)
    first.process(AuthStatus(ok=True), lambda _out: None)  # asks the real machine: recovers
    assert not first.has_active
    monkeypatch.setattr(IncidentMachine, "recovers_on_auth", lambda self: False)
    second = SessionLedger("s2", negotiated=True, epoch="e1")
    auth_failure(second)
    with pytest.raises(TransitionNotAllowed):  # asked afresh of the patched class, not first's answers
        second.process(AuthStatus(ok=True), lambda _out: None)
    shared = MachineAnswers()
    third = SessionLedger("s3", negotiated=True, epoch="e1", answers=shared)
    fourth = SessionLedger("s4", negotiated=True, epoch="e1", answers=shared)
    auth_failure(third)
    asked = len(shared)
    auth_failure(fourth)  # the same questions: answered from what third's ledger asked
    assert asked > 0 and len(shared) == asked


class _ImpureMachine(IncidentMachine):
    """A machine with an action: its answers would depend on more than its state and guards."""

    def on_enter_failed(self) -> None:
        self.model.revision += 100


def test_an_impure_machine_is_refused_rather_than_remembered() -> None:
    answers = MachineAnswers(_ImpureMachine)
    inc = Incident("t1:error", "t1")
    with pytest.raises(InvalidDefinition, match="not pure on 'fail' from 'pending'"):
        answers.fire(inc, "fail")
    assert inc.state == "pending" and inc.revision == 0


def test_the_guards_read_only_the_guard_inputs() -> None:
    """Every attribute the machine reads from its model while answering is a guard input or the state."""
    read: set[str] = set()

    class Spy(Incident):
        __slots__ = ()

        def __getattribute__(self, name: str) -> object:
            value = object.__getattribute__(self, name)
            if name in Incident.__slots__:
                read.add(name)
            return value

    for state, event, recovery, replayed in itertools.product(STATES, EVENTS, list(Recovery), [False, True]):
        spy = Spy("t1:error", "t1")
        spy.state, spy.recovery, spy.replayed = state, recovery, replayed
        sm = IncidentMachine(model=spy, state_field="state")
        read.clear()
        with contextlib.suppress(TransitionNotAllowed):
            sm.send(event)
        assert read <= {"state", *GUARD_INPUTS}, (state, event, read)


def test_as_machine_is_a_real_instance_that_leaves_the_incident_alone() -> None:
    inc = Incident("t1:error", "t1")
    inc.state, inc.recovery = "failed", Recovery.RUNTIME_REPLACED
    sm = inc.as_machine()
    assert {str(e.id) for e in sm.allowed_events} >= {"runtime_replaced"}
    sm.send("runtime_replaced")
    assert sm.is_terminated and inc.state == "failed"


# ---------------------------------------------------------------- exact values


def test_a_new_incident_publishes_nothing_until_its_first_event_which_is_revision_1() -> None:
    """Spec, "Wire record": ``revision`` is a "positive integer" ("Monotonically increasing version
    of that incident"), so a turn's failure is not shown before it happens: a started turn publishes
    no record and holds nothing active; its first event (an ``api_retry``) is revision 1, a warning,
    and the terminal failure revision 2 of the same id."""
    s = Session()
    out = s.feed(PromptStarted(turn_id="t1"))
    assert [m.record for m in out if m.record is not None] == []
    assert (s.active_ids, s.ledger.revision_of("t1:error")) == ([], 0)
    s.feed(ApiRetry(attempt=1, max_retries=10, error_status=429, error="rate_limit"))
    assert [(r.id, r.revision, r.severity.value) for r in s.records] == [("t1:error", 1, "warning")]
    assert s.active_ids == ["t1:error"]
    s.feed(Result(subtype="success", is_error=True, result="API Error: 429 rate limited", api_error_status=429))
    assert [(r.id, r.revision, r.severity.value) for r in s.records][1:] == [("t1:error", 2, "error")]


def test_a_copy_has_every_field_and_is_another_object() -> None:
    inc = Incident("s1:e1:3", None)
    inc.state, inc.revision, inc.recovery, inc.replayed = "failed", 4, Recovery.AUTH_STATUS, True
    inc.category = Category.ACCESS
    copy = inc.copy()
    assert copy is not inc
    assert {n: getattr(copy, n) for n in Incident.__slots__} == {n: getattr(inc, n) for n in Incident.__slots__}


def test_fire_returns_source_and_target() -> None:
    answers = MachineAnswers()
    inc = Incident("t1:error", "t1")
    assert answers.fire(inc, "warn") == ("pending", "retrying")
    assert answers.fire(inc, "fail") == ("retrying", "failed")
    assert answers.fire(inc, "confirmed_attempt") == ("failed", "historical")
    assert len(answers) == 3


def test_as_machine_forwards_transitions_to_its_listeners() -> None:
    rec = Recorder()
    inc = Incident("t1:error", "t1")
    inc.state, inc.recovery, inc.revision = "failed", Recovery.AUTH_STATUS, 2
    sm = inc.as_machine(listeners=[TransitionListener(rec, "s1")])
    sm.send("auth_succeeded")
    assert rec.seen == [("t1:error", "failed", "historical", "auth_succeeded", 2)]
    assert inc.state == "failed"


class _SessionRecorder:
    def __init__(self) -> None:
        self.seen: list[dict[str, object]] = []

    def transition(self, **fields: object) -> None:
        self.seen.append(fields)

    def note(self, what: str, **fields: object) -> None:  # pragma: no cover - unused here
        pass


def test_the_transition_listener_reports_every_field_and_never_the_initial_activation() -> None:
    rec = _SessionRecorder()
    inc = Incident("t1:error", "t1")
    inc.state = None  # type: ignore[assignment]  # a fresh model: the machine activates its initial state
    sm = IncidentMachine(model=inc, state_field="state", listeners=[TransitionListener(rec, "session-7")])
    assert inc.state == "pending" and rec.seen == []
    inc.revision = 1
    sm.send("notify")
    assert rec.seen == [
        {"session_id": "session-7", "incident_id": "t1:error", "source": "pending", "target": "noticed",
         "event": "notify", "revision": 1}
    ]


class _Lenient(IncidentMachine):
    """A machine that ignores events it has no transition for, instead of refusing them."""

    allow_event_without_transition = True


def test_a_machine_that_neither_moves_nor_refuses_is_not_pure() -> None:
    answers = MachineAnswers(_Lenient)
    inc = Incident("t1:error", "t1")
    with pytest.raises(InvalidDefinition) as info:
        answers.fire(inc, "auth_succeeded")
    assert str(info.value) == (
        "_Lenient is not pure on 'auth_succeeded' from 'pending': it changed nothing else and reported []; "
        "its answers cannot be reused"
    )
    assert inc.state == "pending" and len(answers) == 0


def test_an_impure_machine_names_what_it_changed() -> None:
    answers = MachineAnswers(_ImpureMachine)
    with pytest.raises(InvalidDefinition) as info:
        answers.fire(Incident("t1:error", "t1"), "fail")
    assert "it changed ['revision'] and reported [('pending', 'failed')]" in str(info.value)


def test_a_new_incident_starts_in_the_machines_initial_state() -> None:
    # answers.py names the initial state so that a ledger holds incidents without importing the machine.
    assert INITIAL_STATE == IncidentMachine.initial_state.id == Incident("t1:error", "t1").state


def test_a_new_incident_has_delivered_nothing() -> None:
    """answers.py, ``Incident``: "A new incident has delivered nothing: revision 0, category unknown,
    the default recovery policy, not replayed" (the default policy: spec, "Internal recovery", a
    turn-scoped failure stops being active "at a later confirmed attempt boundary")."""
    inc = Incident("t1:error", "t1")
    assert (inc.id, inc.turn_id, inc.state, inc.revision) == ("t1:error", "t1", "pending", 0)
    assert inc.category is Category.UNKNOWN
    assert inc.recovery is Recovery.CONFIRMED_ATTEMPT
    assert inc.replayed is False
    assert Incident("s1:e1:1", None).turn_id is None
