"""One incident's lifecycle as an explicit state machine (spec: "Severity", "Identity, revisions,
and history", "Internal recovery").

Rules
-----
Everything that decides whether an incident may change lives in :class:`IncidentMachine`; the
ledger decides *when* to fire an event and what record to publish, never *whether* a state may
follow another. The machine sees no transport, clock or logger: the ledger reports every transition
the machine answered to its :class:`~lifecycle.answers.TransitionObserver` (structlog in :mod:`lifecycle.log`), and
:class:`~lifecycle.answers.TransitionListener` forwards a real instance's transitions to the same observer.

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
* ``window_warn``: a usage-limit window's warning is published (``warned``); a new status of the
  same window (a higher or lower share, the limit reached) updates it; ``window_reset`` (the
  window back to ``allowed``, or a later reset time) is its recovery event.
* ``historical`` is final: a recovered incident never comes back; its record stays in the
  transcript untouched. Recovery publishes nothing (there is no tombstone).

How the machine is run
----------------------
The machine is pure (its guards read only :data:`~lifecycle.answers.GUARD_INPUTS`, it has no
actions), so the ledger does not hold an instance per incident:
:class:`~lifecycle.answers.MachineAnswers` asks a real instance once per distinct question and
keeps the answer, and :class:`~lifecycle.answers.Incident` (the machine's model) is what the ledger
holds. This module, and python-statemachine with it, is imported when the first question is asked.
"""

from __future__ import annotations

from statemachine import State, StateMachine

from .conditions import Recovery

__all__ = ["IncidentMachine"]


class IncidentMachine(StateMachine):
    """warning/retrying -> terminal error -> historical, guarded by the recovery policy."""

    # -- states
    pending = State(initial=True)
    retrying = State()
    failed = State()
    noticed = State()
    warned = State()
    historical = State(final=True)

    # -- publishing events (fired after the record was delivered)
    warn = pending.to(retrying) | retrying.to(retrying)
    fail = pending.to(failed) | retrying.to(failed)
    notify = pending.to(noticed) | noticed.to(noticed)
    restore = pending.to(failed)
    window_warn = pending.to(warned) | warned.to(warned)

    # -- recovery events (publish nothing)
    real_model_answer = failed.to(historical, cond="recovers_on_real_model_answer")
    confirmed_attempt = retrying.to(historical, cond="recovers_on_confirmed_attempt") | failed.to(
        historical, cond="recovers_on_confirmed_attempt"
    )
    auth_succeeded = failed.to(historical, cond="recovers_on_auth")
    runtime_replaced = failed.to(historical, cond="recovers_on_runtime_replacement")
    window_reset = warned.to(historical, cond="recovers_when_the_window_resets")
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

    def recovers_when_the_window_resets(self) -> bool:
        """A usage-limit window's warning ends when the window resets (issue 32)."""
        return bool(self.model.recovery is Recovery.WINDOW_RESET)

    def superseded_by_later_history(self) -> bool:
        """The latest replayed occurrence stays active; older ones remain historical entries."""
        return bool(self.model.replayed)
