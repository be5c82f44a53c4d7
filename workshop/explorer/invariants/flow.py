"""Invariants on the prompt turn's machine: the ledger's turn moves only as
:class:`lifecycle.session_flow.SessionFlow` declares, from each action's declared flow event
(the explorer steps its own copy, :mod:`.steps`).
"""

from __future__ import annotations

from ..registry import REGISTRY
from ..steps import Step
from ..world import ledger_flow_state

__all__: list[str] = []

FAMILY = "flow"
invariant = REGISTRY.invariant(FAMILY)


@invariant
def session_flow_is_the_truth(s: Step) -> str | None:
    """The prompt turn moves only as ``lifecycle.session_flow.SessionFlow`` declares: each input
    is the flow event the spec makes of it (a stop-reason result ``result_stop``, a thrown query or
    a worker-shutdown EOF ``transport_lost``, any other EOF ``stream_ended``, a local-command
    answer no event at all), and the ledger's flow state after every step is the declared
    transition's target (unchanged when none is declared)."""
    actual = ledger_flow_state(s.after.ledger)
    if s.after.flow != actual:
        return f"SessionFlow says {s.after.flow!r} after {s.name}, the ledger's turn is {actual!r}"
    return None
