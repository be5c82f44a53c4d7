"""The turn/prompt flow of one adapter session, as a python-statemachine class (for the diagram
and for the explorer; spec: "Delivery surfaces", "Severity").

Rules
-----
:class:`SessionFlow` *describes* what :class:`lifecycle.ledger.SessionLedger` does with a prompt
turn; it does not drive it. It is kept true by checking, not by trust: ``lifecycle check`` steps
this class's declared transitions in lockstep with the real ledger through every reachable
abstract state and fails when :func:`flow_state_of` (the ledger's own turn view) disagrees, and
``tests/test_diagrams.py`` does the same with hypothesis-chosen event sequences.

Theory of operation
-------------------
* ``idle``: no prompt is running (none yet, or the last one was settled).
* ``running``: a ``session/prompt`` is running and nothing decisive has happened yet. ``api_retry``
  warnings do not leave it: a warning never ends a turn.
* ``answered``: a real model answer arrived in this turn (``<synthetic>`` local-command answers
  prove nothing and change nothing).
* ``failing``: Claude's own failure text arrived; whatever ends the turn now settles it with that
  failure (a typed record on the ``PromptResponse``, or the legacy JSON-RPC error).

Every way out of a running turn leads to ``idle``: the result (success or error), cancellation,
the query iterator throwing or ending. Events that do not apply in a state (a result while idle, a
second prompt while running) are ignored or refused by the ledger and are not transitions here.
"""

from __future__ import annotations

from statemachine import State, StateMachine

__all__ = ["FLOW_EVENTS", "SessionFlow", "flow_state_of", "flow_transitions"]


class SessionFlow(StateMachine):
    """One session's prompt turns: idle -> running -> (answered | failing) -> idle."""

    # -- states
    idle = State(initial=True)
    running = State()
    answered = State()
    failing = State()

    # -- events (named after what the adapter receives)
    prompt = idle.to(running)
    api_retry = running.to(running) | answered.to(answered) | failing.to(failing)
    real_answer = running.to(answered) | answered.to(answered) | failing.to(failing)
    local_command = running.to(running) | answered.to(answered) | failing.to(failing)
    claude_failure = running.to(failing) | answered.to(failing) | failing.to(failing)
    result_success = running.to(idle) | answered.to(idle) | failing.to(idle)
    result_error = running.to(idle) | answered.to(idle) | failing.to(idle)
    cancel = running.to(idle) | answered.to(idle) | failing.to(idle)
    runtime_lost = running.to(idle) | answered.to(idle) | failing.to(idle)


#: Every event of :class:`SessionFlow`, in declaration order.
FLOW_EVENTS: tuple[str, ...] = tuple(
    dict.fromkeys(str(ev.id) for state in SessionFlow.states for t in state.transitions for ev in t.events)
)


def flow_transitions() -> dict[tuple[str, str], str]:
    """The declared transitions as ``(source, event) -> target`` (read from the class)."""
    table: dict[tuple[str, str], str] = {}
    for state in SessionFlow.states:
        for transition in state.transitions:
            for event in transition.events:
                table[(state.id, str(event.id))] = transition.target.id
    return table


def flow_state_of(running: bool, answered: bool, failing: bool) -> str:
    """The :class:`SessionFlow` state a ledger's turn is in.

    Args:
        running: a turn exists and is not settled (``SessionLedger.turn``).
        answered: the running turn saw a real model answer (``TurnView.answered``).
        failing: the running turn holds Claude's failure text, to be settled with it.
    """
    if not running:
        return "idle"
    if failing:
        return "failing"
    return "answered" if answered else "running"
