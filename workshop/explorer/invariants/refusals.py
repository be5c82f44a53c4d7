"""Invariants on what any step may do at all: raise nothing but the core's documented errors, and
change nothing when its event is refused.

Rules: as in every family of :mod:`.invariants`, each invariant restates one spec sentence (its
docstring) and reads one :class:`~workshop.explorer.steps.Step`.
"""

from __future__ import annotations

from ..registry import REGISTRY
from ..steps import Step
from ..world import ledger_fingerprint

__all__: list[str] = []

FAMILY = "refusals"
invariant = REGISTRY.invariant(FAMILY)


@invariant
def no_crash(s: Step) -> str | None:
    """The core raises only its documented errors (``LocalProtocolError`` for an event that cannot
    apply now); anything else is a bug."""
    if s.error is not None:
        return f"{s.name} raised {type(s.error).__name__}: {s.error}"
    return None


@invariant
def refusals_change_nothing(s: Step) -> str | None:
    """An event from a replaced runtime is refused, never applied; an event that cannot apply now
    (a second concurrent prompt, a turn id already used) leaves the session unchanged
    (``SessionLedger.feed``: "The ledger is unchanged")."""
    if s.before is None or s.action is None:
        return None
    if s.action.late and s.accepted:
        return "an event from the replaced runtime was accepted"
    if s.action.name == "prompt_while_running" and s.refused is None:
        return "a second concurrent prompt was accepted"
    if s.action.name == "prompt_reusing_turn_id" and s.refused is None:
        return "a prompt reusing a turn id was accepted"
    if (not s.accepted or s.refused is not None) and (
        s.sent or ledger_fingerprint(s.after.ledger) != ledger_fingerprint(s.before.ledger)
    ):
        return "a refused event changed the session or sent something"
    return None
