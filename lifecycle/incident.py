"""One incident's lifecycle as an explicit state machine (spec: "Severity", "Identity, revisions,
and history", "Internal recovery").

Rules
-----
Everything that decides whether an incident may change lives in :class:`IncidentMachine`; the
ledger decides *when* to fire an event and what record to publish, never *whether* a state may
follow another. The machine sees no transport, clock or logger: the ledger reports every transition
the machine answered to its :class:`TransitionObserver` (structlog in :mod:`lifecycle.log`), and
:class:`TransitionListener` forwards a real instance's transitions to the same observer.

Theory of operation
-------------------
An incident is allocated ``pending`` (nothing published yet) and is only ever advanced after the
record that shows the new state was delivered to the client, so the machine's state is always what
the client saw.

* ``warn``: an ``api_retry`` warning is published (``retrying``); repeated retries update it.
* ``fail``: a terminal error is published (``failed``); a warning becomes an error in place.
* ``notify``: a notice is published (``noticed``); consecutive updates may reuse it.
* ``restore``: ``session/load`` replays a stored failure as a typed record; a later replayed
  occurrence ``supersedes`` it (only the latest stays active) unless a real answer ended it first.
* ``real_model_answer``, ``confirmed_attempt``, ``auth_succeeded``, ``runtime_replaced``: the
  recovery events. Each is guarded by the incident's recovery policy, so an incident leaves the
  active set only through the event its policy names. ``superseded`` retires a notice when a newer
  one takes its place (notices are never cleared by generic success), and an older replayed failure
  when history holds a later occurrence.
* ``historical`` is final: a recovered incident never comes back; its record stays in the
  transcript untouched. Recovery publishes nothing (there is no tombstone).

How the machine is run (:class:`MachineAnswers`)
------------------------------------------------
python-statemachine runs the full SCXML micro/macro-step algorithm: creating an instance costs
~0.4-0.8 ms and each transition ~0.1-0.3 ms on a 2-core machine, so one incident life with real
per-incident instances cost ~1-2 ms, the larger part of an adapter session's whole lifecycle cost
(``lifecycle bench``: hot path 0.16-0.20 x ``json.loads`` against a target of 0.10).

The machine is *pure*: its guards read only the model fields named in :data:`GUARD_INPUTS`, and it
has no actions (no ``on``/``before``/``after``/``enter``/``exit`` callbacks). Its answer to an
event is therefore a function of ``(state, event, *GUARD_INPUTS)``, a space of 450 points. The
first time a point is met, :class:`MachineAnswers` asks a real :class:`IncidentMachine` instance
(resumed at the incident's state, on a copy of the incident) and keeps the answer: the target
state, or the ``TransitionNotAllowed`` it raised. Every later incident at that point gets the same
answer in a dictionary lookup. Nothing is restated: no transition table is written anywhere but in
the class. There is no process-wide cache: a :class:`MachineAnswers` belongs to whoever owns the
ledgers that use it (each :class:`~lifecycle.ledger.SessionLedger` makes its own unless it is given
one), so two ledgers, a test and a mutated machine class never see each other's answers. Asking also
checks purity (nothing but ``state`` changed on the copy, at most one transition reported), and
``tests/test_incident.py`` proves the answers equal a fresh machine's on every point, whatever the
other fields hold. :meth:`Incident.as_machine` materialises a real instance at the incident's
state for inspection (``allowed_events``, a diagram with the active state).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Protocol

from statemachine import State, StateMachine
from statemachine.exceptions import InvalidDefinition, TransitionNotAllowed

from .conditions import Condition, Recovery
from .session_flow import SessionFlow
from .wire import Category, SessionFailure

__all__ = [
    "GUARD_INPUTS",
    "RECOVERY_EVENTS",
    "Incident",
    "IncidentMachine",
    "MachineAnswers",
    "TransitionListener",
    "TransitionObserver",
]


class Incident:
    """The machine's model: one incident's identity and latest delivered record.

    ``state`` is the machine's state (its ``state_field``), set only from the machine's answers;
    ``revision`` is the last revision the client received.
    """

    __slots__ = (
        "category",
        "condition",
        "id",
        "record",
        "recovery",
        "replayed",
        "revision",
        "state",
        "turn_id",
    )

    def __init__(self, incident_id: str, turn_id: str | None) -> None:
        self.id = incident_id
        self.turn_id = turn_id
        self.revision = 0
        self.state: str = _INITIAL
        self.condition: Condition | None = None
        self.category: Category | None = None
        self.recovery = Recovery.CONFIRMED_ATTEMPT
        self.record: SessionFailure | None = None
        self.replayed = False

    @property
    def active(self) -> bool:
        return self.state in ("retrying", "failed", "noticed")

    def as_machine(self, listeners: list[object] | None = None) -> IncidentMachine:
        """A real :class:`IncidentMachine` resumed at this incident's state, bound to a copy of it.

        For inspection (``allowed_events``, ``format(m, "mermaid")`` with the active state): events
        sent to it change the copy, never the ledger's incident.
        """
        return IncidentMachine(model=self.copy(), state_field="state", listeners=listeners)

    def copy(self) -> Incident:
        out = Incident.__new__(Incident)
        for name in Incident.__slots__:
            setattr(out, name, getattr(self, name))
        return out

    def __repr__(self) -> str:
        return f"Incident({self.id!r}, state={self.state!r}, revision={self.revision}, recovery={self.recovery.value})"


class IncidentMachine(StateMachine):
    """warning/retrying -> terminal error -> historical, guarded by the recovery policy."""

    # -- states
    pending = State(initial=True)
    retrying = State()
    failed = State()
    noticed = State()
    historical = State(final=True)

    # -- publishing events (fired after the record was delivered)
    warn = pending.to(retrying) | retrying.to(retrying)
    fail = pending.to(failed) | retrying.to(failed)
    notify = pending.to(noticed) | noticed.to(noticed)
    restore = pending.to(failed)

    # -- recovery events (publish nothing)
    real_model_answer = failed.to(historical, cond="recovers_on_real_model_answer")
    confirmed_attempt = retrying.to(historical, cond="recovers_on_confirmed_attempt") | failed.to(
        historical, cond="recovers_on_confirmed_attempt"
    )
    auth_succeeded = failed.to(historical, cond="recovers_on_auth")
    runtime_replaced = failed.to(historical, cond="recovers_on_runtime_replacement")
    superseded = noticed.to(historical) | failed.to(historical, cond="superseded_by_later_history")

    # -- guards, named after the spec's recovery policies
    def recovers_on_real_model_answer(self) -> bool:
        """Restored quota remains active until a real model answer."""
        return bool(self.model.recovery is Recovery.REAL_MODEL_ANSWER)

    def recovers_on_confirmed_attempt(self) -> bool:
        """Other turn-scoped failures stop being active at a later confirmed attempt boundary."""
        return bool(self.model.recovery is Recovery.CONFIRMED_ATTEMPT)

    def recovers_on_auth(self) -> bool:
        """Authentication remains active until a successful ``auth_status``."""
        return bool(self.model.recovery is Recovery.AUTH_STATUS)

    def recovers_on_runtime_replacement(self) -> bool:
        """Transport loss and worker shutdown remain active until runtime replacement."""
        return bool(self.model.recovery is Recovery.RUNTIME_REPLACED)

    def superseded_by_later_history(self) -> bool:
        """The latest replayed occurrence stays active; older ones remain historical entries."""
        return bool(self.model.replayed)


_INITIAL: str = IncidentMachine.initial_state.value

#: The model fields :class:`IncidentMachine`'s guards read. With the state and the event they decide
#: every answer of the machine (``tests/test_incident.py`` varies every other field to prove it).
GUARD_INPUTS: tuple[str, ...] = ("recovery", "replayed")


class MachineAnswers:
    """Runs incidents and turns on pure machine classes: each distinct question is asked of a real
    instance once.

    ``fire(incident, event)`` moves ``incident.state`` exactly as ``machine.send(event)`` on a real
    :class:`IncidentMachine` instance bound to the incident would, and raises the same
    ``TransitionNotAllowed`` when the machine refuses. Answers are kept per
    ``(state, event, *GUARD_INPUTS)``: at most ``states x events x 5 policies x 2`` entries (450).
    ``turn(state, event)`` answers for the prompt turn's :class:`~lifecycle.session_flow.SessionFlow`
    (target leaf state and the effects its actions name), kept per ``(state, event)`` (55 points).
    Answers are never dropped: a changed machine class gets a new ``MachineAnswers``.
    """

    __slots__ = ("_answers", "_turns", "flow_class", "machine_class")

    def __init__(
        self,
        machine_class: type[IncidentMachine] = IncidentMachine,
        flow_class: type[SessionFlow] = SessionFlow,
    ) -> None:
        self.machine_class = machine_class
        self.flow_class = flow_class
        self._answers: dict[Hashable, tuple[str, TransitionNotAllowed | None]] = {}
        self._turns: dict[tuple[str, str], tuple[str, tuple[str, ...]] | TransitionNotAllowed] = {}

    def __len__(self) -> int:
        return len(self._answers) + len(self._turns)

    @property
    def incident_questions(self) -> int:
        """How many distinct questions were asked of a real :class:`IncidentMachine`."""
        return len(self._answers)

    @property
    def turn_questions(self) -> int:
        """How many distinct questions were asked of a real :class:`SessionFlow`."""
        return len(self._turns)

    def turn(self, state: str, event: str) -> tuple[str, tuple[str, ...]]:
        """The turn machine's answer to ``event`` in leaf ``state``: ``(target leaf, effects)``.

        Raises:
            TransitionNotAllowed: the machine refuses ``event`` in ``state``.
        """
        answer = self.turn_or_none(state, event)
        if answer is None:
            refused = self._turns[(state, event)]
            assert isinstance(refused, TransitionNotAllowed)
            raise TransitionNotAllowed(refused.event, refused.configuration)
        return answer

    def turn_or_none(self, state: str, event: str) -> tuple[str, tuple[str, ...]] | None:
        """:meth:`turn`, with ``None`` for a refusal (the ledger's hot path: no exception)."""
        answer = self._turns.get((state, event))
        if answer is None:
            answer = self._turns[(state, event)] = self._ask_turn(state, event)
        return None if answer.__class__ is TransitionNotAllowed else answer  # type: ignore[return-value]

    def _ask_turn(self, state: str, event: str) -> tuple[str, tuple[str, ...]] | TransitionNotAllowed:
        probe = _TurnProbe(state)
        machine = self.flow_class(model=probe, state_field="state")
        try:
            machine.send(event)
        except TransitionNotAllowed as exc:
            return exc
        leaves = [s.id for s in machine.configuration if not s.states]
        if len(leaves) != 1 or set(vars(probe)) != {"state", "effects"}:
            raise InvalidDefinition(
                f"{self.flow_class.__name__} is not pure on {event!r} from {state!r}: "
                f"it reached {leaves} and changed {sorted(vars(probe))}; its answers cannot be reused"
            )
        return leaves[0], tuple(probe.effects)

    def fire(self, incident: Incident, event: str) -> tuple[str, str]:
        """Apply ``event`` to ``incident``: ``(source, target)``, or ``TransitionNotAllowed``."""
        source = incident.state
        key = (source, event, incident.recovery, incident.replayed)
        answer = self._answers.get(key)
        if answer is None:
            answer = self._answers[key] = self._ask(incident, event)
        target, refused = answer
        if refused is not None:
            raise TransitionNotAllowed(refused.event, refused.configuration)
        incident.state = target
        return source, target

    def _ask(self, incident: Incident, event: str) -> tuple[str, TransitionNotAllowed | None]:
        probe = incident.copy()
        before = {n: getattr(probe, n) for n in Incident.__slots__}
        seen: list[tuple[str, str]] = []
        machine = self.machine_class(model=probe, state_field="state", listeners=[_Probe(seen)])
        refused: TransitionNotAllowed | None = None
        try:
            machine.send(event)
        except TransitionNotAllowed as exc:
            refused = exc
        changed = sorted(n for n in Incident.__slots__ if n != "state" and getattr(probe, n) is not before[n])
        expected = [] if refused is not None else [(incident.state, probe.state)]
        if changed or seen != expected or (refused is not None and probe.state != incident.state):
            raise InvalidDefinition(
                f"{self.machine_class.__name__} is not pure on {event!r} from {incident.state!r}: "
                f"it changed {changed or 'nothing else'} and reported {seen}; its answers cannot be reused"
            )
        return probe.state, refused


class _TurnProbe:
    """The model of an asking :class:`SessionFlow` instance: its state and the effects named."""

    def __init__(self, state: str) -> None:
        self.state: object = state
        self.effects: list[str] = []


class _Probe:
    """The listener of an asking instance: what the machine itself reports."""

    __slots__ = ("_seen",)

    def __init__(self, seen: list[tuple[str, str]]) -> None:
        self._seen = seen

    def after_transition(self, event: Any, source: Any, target: Any) -> None:
        if str(event) != "__initial__":
            self._seen.append((source.id, target.id))


#: Recovery policy -> the machine event that ends an incident under it.
RECOVERY_EVENTS: dict[Recovery, str] = {
    Recovery.REAL_MODEL_ANSWER: "real_model_answer",
    Recovery.CONFIRMED_ATTEMPT: "confirmed_attempt",
    Recovery.AUTH_STATUS: "auth_succeeded",
    Recovery.RUNTIME_REPLACED: "runtime_replaced",
    Recovery.NEVER: "superseded",
}


class TransitionObserver(Protocol):
    """What the ledger tells an observer (structlog, a test, a metrics sink)."""

    def transition(
        self, *, session_id: str, incident_id: str, source: str, target: str, event: str, revision: int
    ) -> None: ...

    def note(self, what: str, **fields: Any) -> None: ...


class TransitionListener:
    """A python-statemachine listener forwarding every transition to a :class:`TransitionObserver`."""

    __slots__ = ("_observer", "_session_id")

    def __init__(self, observer: TransitionObserver, session_id: str) -> None:
        self._observer = observer
        self._session_id = session_id

    def after_transition(self, event: Any, source: Any, target: Any, model: Any) -> None:
        name = str(event)
        if name == "__initial__":
            return
        self._observer.transition(
            session_id=self._session_id,
            incident_id=model.id, source=source.id, target=target.id, event=name, revision=model.revision
        )
