"""Claude Code's usage-limit window reports (issue 32): its 5-hour window at two shares, and back
to ``allowed``; and a reading of it made after its reset (issue 52.5).

Rules: only in a root that reports windows, from a live runtime not waiting for a permission
answer, and while no incident but a window warning is active (:func:`_window_allowed`).
"""

from __future__ import annotations

from typing import Any

from lifecycle.conditions import Recovery

from ..alphabet import Action, Line, adapter_line, alive, unless_waiting
from ..registry import REGISTRY
from ..world import SESSION_ID, WINDOW_RESETS_AT, Bounds, World

__all__: list[str] = []

FAMILY = "windows"

_WINDOW_RECOVERS = frozenset({Recovery.WINDOW_RESET})


def _window(status: str, utilization: float | None) -> Line:
    """Claude Code's ``rate_limit_event`` for its 5-hour window, as the CLI prints it (issue 32)."""
    info: dict[str, Any] = {"status": status, "resetsAt": WINDOW_RESETS_AT, "rateLimitType": "five_hour"}
    if utilization is not None:
        info["utilization"] = utilization
    return {"type": "rate_limit_event", "rate_limit_info": info, "uuid": "rl1", "session_id": SESSION_ID}


def _window_allowed(world: World, bounds: Bounds) -> bool:
    """A root that reports windows, a live runtime, not waiting for a permission answer, and no
    other incident active (a constraint, like the incident bound: other incidents still come and
    go beside an active window warning, and a window's report on top of them only multiplies the
    space; that it ends none of them is the same rule whatever they are)."""
    others = any(a.state != "warned" for a in world.active)
    return world.windows and not others and unless_waiting(alive)(world, bounds)


REGISTRY.add_actions(
    FAMILY,
    # Issue 32: Claude Code reports its 5-hour window (at two shares, and back to allowed) whenever
    # a live runtime's API answer changes it: in a turn, between turns, while a cancelled turn
    # drains (not while it waits for a permission answer: no API call then).
    Action("window_warning", lambda w: (_window("allowed_warning", 0.9),), _window_allowed,
           recovers=_WINDOW_RECOVERS, window=True),
    Action("window_warning_higher", lambda w: (_window("allowed_warning", 0.95),), _window_allowed,
           recovers=_WINDOW_RECOVERS, window=True),
    Action("window_allowed", lambda w: (_window("allowed", None),), _window_allowed,
           recovers=_WINDOW_RECOVERS, window=True),
    # Issue 52.5: the agent reads a report a minute after the window's reset (the trace's clock):
    # its period is over, whatever it says.
    Action("window_warning_past", lambda w: (
        adapter_line("clock", now=WINDOW_RESETS_AT + 60), _window("allowed_warning", 0.95),
        adapter_line("clock", now=None),
    ), _window_allowed, recovers=_WINDOW_RECOVERS, window=True),
)
