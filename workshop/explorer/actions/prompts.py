"""The client's prompts: a new turn, a second one while a turn runs, one that reuses a turn id.

Rules: a prompt runs only on a live runtime while no turn runs, within the turn bound (a root
may set a tighter one); the other two are refused, whatever the turn is doing.
"""

from __future__ import annotations

from ..alphabet import Action, adapter_line, while_running
from ..registry import REGISTRY
from ..world import Bounds, World

__all__: list[str] = []

FAMILY = "prompts"


def _turn_bound(world: World, bounds: Bounds) -> int:
    return bounds.turns if world.max_turns is None else min(bounds.turns, world.max_turns)


def _prompt_allowed(world: World, bounds: Bounds) -> bool:
    return not world.running and not world.dead and world.turns < _turn_bound(world, bounds)


def _turn_id(world: World) -> str:
    return f"t{world.turns + 1}"


REGISTRY.add_actions(
    FAMILY,
    Action("prompt", lambda w: (adapter_line("prompt", turnId=_turn_id(w)),), _prompt_allowed, "prompt"),
    Action(
        "prompt_while_running",
        lambda w: (adapter_line("prompt", turnId=_turn_id(w)),),
        lambda w, b: while_running(w, b) and w.turns < _turn_bound(w, b),
    ),
    # A client re-sends a prompt with the last turn's id (a retried request): refused.
    Action(
        "prompt_reusing_turn_id",
        lambda w: (adapter_line("prompt", turnId=w.ledger.turn.turn_id if w.ledger.turn else "t0"),),
        lambda w, b: w.ledger.turn is not None and not w.running,
    ),
)
