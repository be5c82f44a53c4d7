"""Events from a replaced runtime: a real answer the old runtime sent after its replacement.

Rules: possible once the runtime was replaced; fed tagged with the replaced runtime's
generation, it must be refused and change nothing.
"""

from __future__ import annotations

from ..alphabet import Action, adapter_line, assistant_line
from ..registry import REGISTRY
from ..world import ANSWER_TEXT, STALE_RUNTIME_NOTE

__all__: list[str] = []

FAMILY = "late"


REGISTRY.add_actions(
    FAMILY,
    Action(
        "late_event",
        lambda w: (adapter_line("late_event", runtime=w.ledger.runtime - 1, note=STALE_RUNTIME_NOTE,
                            line=assistant_line(ANSWER_TEXT, "claude-opus-4-5")),),
        lambda w, b: w.ledger.runtime >= 1,
        late=True,
        publishes_nothing=True,
    ),
)
