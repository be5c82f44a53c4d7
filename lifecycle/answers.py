"""How the machines are run: each distinct question asked of a real instance once, the answer kept.

Rules
-----
The machines decide (:class:`~lifecycle.incident.IncidentMachine` for an incident,
:class:`~lifecycle.session_flow.SessionFlow` for the prompt turn); this module only asks them and
remembers what they said. Nothing here restates a transition: the answers come from real instances
of the classes. The incidents' model (:class:`Incident`) lives here, not beside the machine, so
that a ledger can hold incidents without python-statemachine being imported: the machine modules
are imported when the first question is asked, not when :mod:`lifecycle` is (``import lifecycle``
stays small; ``workshop bench`` reports its import time and what the first turn adds).

Theory of operation
-------------------
python-statemachine runs the full SCXML micro/macro-step algorithm: creating an instance costs
~0.4-0.8 ms and each transition ~0.1-0.3 ms on a 2-core machine, so one incident life with real
per-incident instances cost ~1-2 ms, the larger part of an adapter session's whole lifecycle cost
(``workshop bench``: hot path 0.16-0.20 x ``json.loads`` against a target of 0.10).

The incident machine is *pure*: its guards read only the model fields named in
:data:`GUARD_INPUTS`, and it has no actions (no ``on``/``before``/``after``/``enter``/``exit``
callbacks). Its answer to an event is therefore a function of ``(state, event, *GUARD_INPUTS)``, a
space of 792 points. The first time a point is met, :class:`MachineAnswers` asks a real
:class:`~lifecycle.incident.IncidentMachine` instance (resumed at the incident's state, on a copy
of the incident) and keeps the answer: the target state, or the ``TransitionNotAllowed`` it
raised. Every later incident at that point gets the same answer in a dictionary lookup. The turn
machine is pure the same way (its actions only name effects), so its answers are kept per
``(state, event)``.

There is no process-wide cache: a :class:`MachineAnswers` belongs to whoever owns the ledgers that
use it (each :class:`~lifecycle.ledger.SessionLedger` makes its own unless it is given one), so two
ledgers, a test and a mutated machine class never see each other's answers. Asking also checks
purity (nothing but ``state`` changed on the copy, at most one transition reported), and
``tests/test_incident.py`` proves the answers equal a fresh machine's on every point, whatever the
other fields hold. :meth:`Incident.as_machine` materialises a real instance at the incident's state
for inspection (``allowed_events``, a diagram with the active state).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, Protocol

from .conditions import Recovery
from .wire import Category

if TYPE_CHECKING:
    from statemachine.exceptions import TransitionNotAllowed

    from .incident import IncidentMachine
    from .session_flow import SessionFlow

__all__ = [
    "GUARD_INPUTS",
    "INITIAL_STATE",
    "RECOVERY_EVENTS",
    "Incident",
    "MachineAnswers",
    "TransitionListener",
    "TransitionObserver",
]

#: :class:`~lifecycle.incident.IncidentMachine`'s initial state, where every incident starts
#: (``tests/test_incident.py`` checks it against the class).
INITIAL_STATE = "pending"

#: The model fields :class:`~lifecycle.incident.IncidentMachine`'s guards read. With the state and
#: the event they decide every answer of the machine (``tests/test_incident.py`` varies every other
#: field to prove it).
GUARD_INPUTS: tuple[str, ...] = ("recovery", "replayed")

#: Recovery policy -> the machine event that ends an incident under it.
RECOVERY_EVENTS: dict[Recovery, str] = {
    Recovery.REAL_MODEL_ANSWER: "real_model_answer",
    Recovery.CONFIRMED_ATTEMPT: "confirmed_attempt",
    Recovery.AUTH_STATUS: "auth_succeeded",
    Recovery.RUNTIME_REPLACED: "runtime_replaced",
    Recovery.NEVER: "superseded",
    Recovery.WINDOW_RESET: "window_reset",
}


class Incident:
    """The incident machine's model: one incident's identity and what its latest delivered record
    said.

    ``state`` is the machine's state (its ``state_field``), set only from the machine's answers;
    ``revision`` is the last revision the client received, ``category`` that record's category;
    ``recovery`` and ``replayed`` are the guards' inputs (:data:`GUARD_INPUTS`). A new incident has
    delivered nothing: revision 0, category unknown, the default recovery policy, not replayed.
    """

    __slots__ = ("category", "id", "recovery", "replayed", "revision", "state", "turn_id")

    def __init__(self, incident_id: str, turn_id: str | None) -> None:
        self.id = incident_id
        self.turn_id = turn_id
        self.revision = 0
        self.state: str = INITIAL_STATE
        self.category = Category.UNKNOWN
        self.recovery = Recovery.CONFIRMED_ATTEMPT
        self.replayed = False

    @property
    def active(self) -> bool:
        return self.state in ("retrying", "failed", "noticed", "warned")

    def as_machine(self, listeners: list[object] | None = None) -> IncidentMachine:
        """A real :class:`~lifecycle.incident.IncidentMachine` resumed at this incident's state,
        bound to a copy of it.

        For inspection (``allowed_events``, ``format(m, "mermaid")`` with the active state): events
        sent to it change the copy, never the ledger's incident.
        """
        from .incident import IncidentMachine

        return IncidentMachine(model=self.copy(), state_field="state", listeners=listeners)

    def copy(self) -> Incident:
        out = Incident.__new__(Incident)
        for name in Incident.__slots__:
            setattr(out, name, getattr(self, name))
        return out

    def __repr__(self) -> str:
        return f"Incident({self.id!r}, state={self.state!r}, revision={self.revision}, recovery={self.recovery.value})"


class MachineAnswers:
    """Runs incidents and turns on pure machine classes: each distinct question is asked of a real
    instance once.

    ``fire(incident, event)`` moves ``incident.state`` exactly as ``machine.send(event)`` on a real
    :class:`~lifecycle.incident.IncidentMachine` instance bound to the incident would, and raises
    the same ``TransitionNotAllowed`` when the machine refuses. Answers are kept per
    ``(state, event, *GUARD_INPUTS)``: at most ``states x events x 6 policies x 2`` entries (792).
    ``turn(state, event)`` answers for the prompt turn's :class:`~lifecycle.session_flow.SessionFlow`
    (target leaf state and the effects its actions name), kept per ``(state, event)`` (70 points).
    Answers are never dropped: a changed machine class gets a new ``MachineAnswers``.

    ``machine_class`` and ``flow_class`` default to the package's machines, imported when first
    needed (the first question), not when this object is made.
    """

    __slots__ = ("_answers", "_flow_class", "_machine_class", "_turns")

    def __init__(
        self,
        machine_class: type[IncidentMachine] | None = None,
        flow_class: type[SessionFlow] | None = None,
    ) -> None:
        self._machine_class = machine_class
        self._flow_class = flow_class
        self._answers: dict[Hashable, tuple[str, TransitionNotAllowed | None]] = {}
        self._turns: dict[tuple[str, str], tuple[str, tuple[str, ...]] | TransitionNotAllowed] = {}

    @property
    def machine_class(self) -> type[IncidentMachine]:
        """The incident machine asked (default :class:`lifecycle.incident.IncidentMachine`)."""
        if self._machine_class is None:
            from .incident import IncidentMachine

            self._machine_class = IncidentMachine
        return self._machine_class

    @property
    def flow_class(self) -> type[SessionFlow]:
        """The turn machine asked (default :class:`lifecycle.session_flow.SessionFlow`)."""
        if self._flow_class is None:
            from .session_flow import SessionFlow

            self._flow_class = SessionFlow
        return self._flow_class

    def __len__(self) -> int:
        return len(self._answers) + len(self._turns)

    @property
    def incident_questions(self) -> int:
        """How many distinct questions were asked of a real incident machine."""
        return len(self._answers)

    @property
    def turn_questions(self) -> int:
        """How many distinct questions were asked of a real turn machine."""
        return len(self._turns)

    def turn(self, state: str, event: str) -> tuple[str, tuple[str, ...]]:
        """The turn machine's answer to ``event`` in leaf ``state``: ``(target leaf, effects)``.

        Raises:
            TransitionNotAllowed: the machine refuses ``event`` in ``state``.
        """
        answer = self.turn_or_none(state, event)
        if answer is None:
            refused = self._turns[(state, event)]
            assert not isinstance(refused, tuple)
            raise type(refused)(refused.event, refused.configuration)
        return answer

    def turn_or_none(self, state: str, event: str) -> tuple[str, tuple[str, ...]] | None:
        """:meth:`turn`, with ``None`` for a refusal (the ledger's hot path: no exception)."""
        answer = self._turns.get((state, event))
        if answer is None:
            answer = self._turns[(state, event)] = self._ask_turn(state, event)
        return answer if answer.__class__ is tuple else None

    def _ask_turn(self, state: str, event: str) -> tuple[str, tuple[str, ...]] | TransitionNotAllowed:
        from statemachine.exceptions import InvalidDefinition, TransitionNotAllowed

        flow_class = self.flow_class
        probe = _TurnProbe(state)
        machine = flow_class(model=probe)  # the model's ``state`` field, the machines' default
        try:
            machine.send(event)
        except TransitionNotAllowed as exc:
            return exc
        leaves = [s.id for s in machine.configuration if not s.states]
        if len(leaves) != 1 or set(vars(probe)) != {"state", "effects"}:
            raise InvalidDefinition(
                f"{flow_class.__name__} is not pure on {event!r} from {state!r}: "
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
            raise type(refused)(refused.event, refused.configuration)
        incident.state = target
        return source, target

    def _ask(self, incident: Incident, event: str) -> tuple[str, TransitionNotAllowed | None]:
        from statemachine.exceptions import InvalidDefinition, TransitionNotAllowed

        machine_class = self.machine_class
        probe = incident.copy()
        before = {n: getattr(probe, n) for n in Incident.__slots__}
        seen: list[tuple[str, str]] = []
        machine = machine_class(model=probe, listeners=[_Probe(seen)])  # resumed at ``probe.state``
        refused: TransitionNotAllowed | None = None
        try:
            machine.send(event)
        except TransitionNotAllowed as exc:
            refused = exc
        changed = sorted(n for n in Incident.__slots__ if n != "state" and getattr(probe, n) is not before[n])
        expected = [] if refused is not None else [(incident.state, probe.state)]
        if changed or seen != expected or (refused is not None and probe.state != incident.state):
            raise InvalidDefinition(
                f"{machine_class.__name__} is not pure on {event!r} from {incident.state!r}: "
                f"it changed {changed or 'nothing else'} and reported {seen}; its answers cannot be reused"
            )
        return probe.state, refused


class _TurnProbe:
    """The model of an asking turn machine instance: its state and the effects named."""

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


class TransitionObserver(Protocol):
    """What the ledger tells an observer (structlog, a test, a metrics sink)."""

    def transition(
        self, *, session_id: str, incident_id: str, source: str, target: str, event: str, revision: int
    ) -> None: ...

    def note(self, what: str, **fields: Any) -> None: ...


class TransitionListener:
    """A python-statemachine listener forwarding a real instance's transitions to a :class:`TransitionObserver`."""

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
