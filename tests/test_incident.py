"""Spec: "Severity", "Identity, revisions, and history", "Internal recovery" -- one incident's machine."""

from __future__ import annotations

import itertools

import pytest
from statemachine.exceptions import TransitionNotAllowed

from lifecycle.conditions import Recovery
from lifecycle.incident import RECOVERY_EVENTS, Incident, IncidentMachine, TransitionListener

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
}
GUARDED = {
    ("failed", "real_model_answer"): Recovery.REAL_MODEL_ANSWER,
    ("failed", "confirmed_attempt"): Recovery.CONFIRMED_ATTEMPT,
    ("retrying", "confirmed_attempt"): Recovery.CONFIRMED_ATTEMPT,
    ("failed", "auth_succeeded"): Recovery.AUTH_STATUS,
    ("failed", "runtime_replaced"): Recovery.RUNTIME_REPLACED,
}


def machine_at(state: str, recovery: Recovery, replayed: bool = False) -> tuple[Incident, IncidentMachine]:
    inc = Incident("t1:error", "t1")
    inc.recovery = recovery
    inc.replayed = replayed
    sm = IncidentMachine(model=inc, state_field="state", start_value=state)
    inc.machine = sm
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
