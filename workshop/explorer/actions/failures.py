"""Claude's failures as Claude Code reports them: API retries, an assistant message with an error
(rate limit, authentication, usage limit, provider error), a cancelled turn's late failure, a
subagent's failure, and a failure with no prompt running (a background record).

Rules: Claude Code reports them only from a live runtime, and a running turn's ones only while
it is not waiting for a permission answer; each failure letter names the failure text it
injects (:mod:`.world`), never how the ledger classifies it.
"""

from __future__ import annotations

from lifecycle.ids import turn_error_id

from ..alphabet import (
    Action,
    Line,
    alive,
    assistant_line,
    background_allowed,
    unless_waiting,
    while_cancelled,
    while_running,
)
from ..registry import REGISTRY
from ..world import AUTH_TEXT, LIMIT_TEXT, RATE_TEXT, SERVER_ERROR_TEXT, SESSION_ID, Bounds, World

__all__: list[str] = []

FAMILY = "failures"


def _retry_line(world: World) -> Line:
    if _retry_revision(world) == 0:
        return _retry(world, 429, "rate_limit")
    return _retry(world, None, "unknown")


def _retry(world: World, status: int | None, kind: str) -> Line:
    return {
        "type": "system",
        "subtype": "api_retry",
        "attempt": _retry_revision(world) + 1,
        "max_retries": 10,
        "retry_delay_ms": 500,
        "error_status": status,
        "error": kind,
        "session_id": SESSION_ID,
    }


def _retry_revision(world: World) -> int:
    turn = world.ledger.turn
    return world.ledger.revision_of(turn_error_id(turn.turn_id)) if turn else 0


def _retry_allowed(world: World, bounds: Bounds) -> bool:
    return while_running(world, bounds) and _retry_revision(world) < bounds.retries


def _idle_background(world: World, bounds: Bounds) -> bool:
    """No prompt runs and no cancelled turn drains (a live runtime), and a background record may
    appear (:func:`background_allowed`)."""
    return world.flow == "idle" and not world.dead and background_allowed(world)


REGISTRY.add_actions(
    FAMILY,
    # The first retry of a turn got an HTTP response (429), the next one none (a connection
    # error): both kinds, one letter (the VIEW would merge their successors anyway).
    Action("api_retry", lambda w: (_retry_line(w),), unless_waiting(_retry_allowed), "api_retry", turn_frame=True),
    Action(
        "rate_limit_error",
        lambda w: (assistant_line(RATE_TEXT, "<synthetic>", "rate_limit"),),
        unless_waiting(while_running),
        "claude_failure",
        failure_kind="rate_limit",
        turn_frame=True,
    ),
    Action(
        "auth_error",
        lambda w: (assistant_line(AUTH_TEXT, "<synthetic>", "authentication_failed"),),
        unless_waiting(while_running),
        "claude_failure",
        failure_kind="auth",
        turn_frame=True,
    ),
    Action(
        "usage_limit_error",
        lambda w: (assistant_line(LIMIT_TEXT, "<synthetic>", "rate_limit"),),
        unless_waiting(while_running),
        "claude_failure",
        failure_kind="usage_limit",
        turn_frame=True,
    ),
    # Issue 21 rule 3: Claude's provider error (after the turn's retries, the second of which got
    # no HTTP response): a service failure, never connection.
    Action(
        "server_error",
        lambda w: (assistant_line(SERVER_ERROR_TEXT, "<synthetic>", "server_error"),),
        unless_waiting(while_running),
        "claude_failure",
        failure_kind="server_error",
        turn_frame=True,
    ),
    # Rule 7: the cancelled turn's stream drains; its failure arrives after ``cancel``.
    Action(
        "cancelled_turn_failure",
        lambda w: (assistant_line(RATE_TEXT, "<synthetic>", "rate_limit"),),
        while_cancelled,
        "claude_failure",
        turn_frame=True,
    ),
    # A subagent's failure, in a turn or in the background (issue 31): its message names the Agent
    # call that ran it; not the top-level transcript, so it changes nothing (.subagents).
    Action(
        "subagent_failure",
        lambda w: ({**assistant_line(LIMIT_TEXT, "<synthetic>", "rate_limit"), "parent_tool_use_id": "toolu_agent"},),
        unless_waiting(alive),
        publishes_nothing=True,
    ),
    # Claude's failure with no prompt running: a session-scoped (background) record.
    Action(
        "background_failure",
        lambda w: (assistant_line(AUTH_TEXT, "<synthetic>", "authentication_failed"),),
        _idle_background,
        "claude_failure",
    ),
)
