"""What interrupts a running turn: the client's ``cancel``, and Claude Code's permission question
(its ``can_use_tool`` callback) with the client's answer, also outside a running turn and after
the turn left ``in_turn``.

Rules: one question per turn (:func:`~.alphabet.question_id`), so at most one is open at once;
a question asked outside a running turn and an answer after its turn are letters of their own,
so the explorer reaches them.
"""

from __future__ import annotations

from ..alphabet import Action, adapter_line, question_id, question_open, while_running
from ..registry import REGISTRY
from ..world import Bounds, World

__all__: list[str] = []

FAMILY = "interruptions"


def _question_allowed(world: World, bounds: Bounds) -> bool:
    """Claude Code asks while the turn runs (a live runtime), while its question is not open."""
    return while_running(world, bounds) and not world.ledger.question_open(question_id(world))


def _outside_turn(world: World, bounds: Bounds) -> bool:
    """No turn runs (idle, or a cancelled turn draining): a live runtime may still ask."""
    return not world.running and not world.dead


def _after_turn(world: World, bounds: Bounds) -> bool:
    """The client may answer the last turn's question at any time after the turn left in_turn
    (cancel, runtime loss, any settlement), whether or not it was open then."""
    return not world.running and world.ledger.turn is not None


REGISTRY.add_actions(
    FAMILY,
    Action("cancel", lambda w: (adapter_line("cancel"),), while_running, "cancel"),
    # Claude Code's permission questions (its can_use_tool callback) and the client's answers.
    Action(
        "permission_asked",
        lambda w: (adapter_line("permission_asked", toolUseId=question_id(w)),),
        _question_allowed,
        "permission_asked",
        permission=True,
    ),
    Action(
        "permission_answered",
        lambda w: (adapter_line("permission_answered", toolUseId=question_id(w)),),
        question_open,
        "permission_answered",
        permission=True,
    ),
    # Asked outside a running turn: idle, or the cancelled turn's tool while its stream drains.
    Action(
        "permission_asked_outside_turn",
        lambda w: (adapter_line("permission_asked", toolUseId=question_id(w)),),
        _outside_turn,
        "permission_asked",
        permission=True,
        turn_frame=True,
    ),
    # The client's answer arrives after the question's turn left in_turn: never honoured.
    Action(
        "permission_answered_late",
        lambda w: (adapter_line("permission_answered", toolUseId=question_id(w)),),
        _after_turn,
        "permission_answered",
        permission=True,
    ),
)
