"""Claude's notices during a query: a model fallback (consecutive ones with other text) and a
model refusal fallback.

Rules: both arrive only while a turn runs (not while it waits for a permission answer), within
the notice bound; a newer notice retires none (``recovers`` names only ``never``).
"""

from __future__ import annotations

from lifecycle.conditions import Recovery

from ..alphabet import Action, unless_waiting, while_running
from ..registry import REGISTRY
from ..world import FALLBACK_TEXTS, World

__all__: list[str] = []

FAMILY = "notices"


def _notice_revision(world: World) -> int:
    return max((a.revision for a in world.active if a.state == "noticed"), default=0)


REGISTRY.add_actions(
    FAMILY,
    Action(
        "model_fallback",
        lambda w: (
            {
                "type": "system",
                "subtype": "model_fallback",
                "content": FALLBACK_TEXTS[_notice_revision(w) % len(FALLBACK_TEXTS)],
                "original_model": "claude-opus-4-5",
                "fallback_model": "claude-sonnet-4-5",
                "trigger": "overloaded",
            },
        ),
        unless_waiting(lambda w, b: while_running(w, b) and _notice_revision(w) < b.notices),  # during a query
        # A newer notice retires none (issue 21 rule 2; lifecycle.ledger.MAX_ACTIVE_NOTICES is 4096).
        recovers=frozenset({Recovery.NEVER}),
    ),
    # Contract rule 1: the model declined and Claude retried with another model: a warning notice
    # (a record for a capable client, the reference's transcript line for a legacy one).
    Action(
        "refusal_fallback",
        lambda w: (
            {
                "type": "system",
                "subtype": "model_refusal_fallback",
                "trigger": "refusal",
                "direction": "retry",
                "scope": "session",
                "original_model": "claude-opus-5-5",
                "fallback_model": "claude-opus-4-8",
                "api_refusal_category": "cyber",
                "api_refusal_explanation": "This request was declined.",
            },
        ),
        unless_waiting(lambda w, b: while_running(w, b) and sum(a.state == "noticed" for a in w.active) < b.notices),
        recovers=frozenset({Recovery.NEVER}),
    ),
)
