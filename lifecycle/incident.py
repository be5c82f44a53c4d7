"""One incident's lifecycle as an explicit state machine (spec: "Severity", "Identity, revisions,
and history", "Internal recovery").

Rules
-----
Everything that decides whether an incident may change lives in :class:`IncidentMachine`; the
ledger decides *when* to fire an event and what record to publish, never *whether* a state may
follow another. The machine sees no transport, clock or logger: structured logging is a listener
(:class:`TransitionListener`) that the caller attaches.

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

Machines are created only for incidents, never per SDK message: a python-statemachine transition
costs ~100 µs and creation ~200 µs, which is nothing per incident and too much per message.
"""

from __future__ import annotations

from typing import Any, Protocol

from statemachine import State, StateMachine

from .conditions import Condition, Recovery
from .wire import Category, SessionFailure

__all__ = [
    "RECOVERY_EVENTS",
    "Incident",
    "IncidentMachine",
    "TransitionListener",
    "TransitionObserver",
]


class Incident:
    """The machine's model: one incident's identity and latest delivered record.

    ``state`` is written by the machine (``state_field``); ``revision`` is the last revision the
    client received.
    """

    __slots__ = (
        "category",
        "condition",
        "id",
        "machine",
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
        self.state: str | None = None
        self.condition: Condition | None = None
        self.category: Category | None = None
        self.recovery = Recovery.CONFIRMED_ATTEMPT
        self.record: SessionFailure | None = None
        self.machine: IncidentMachine | None = None
        self.replayed = False

    @property
    def active(self) -> bool:
        return self.state in ("retrying", "failed", "noticed")

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
