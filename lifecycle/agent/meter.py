"""A meter from the first second (issue 52.1, part): the account's usage-limit windows, read
from the running Claude Code (its ``get_usage`` reading) when a session's Claude Code starts, as
the ``usage_update`` the agent sends for every ``rate_limit_event``.

Rules
-----
* When a session's Claude Code has started (``session/new``, ``load``, ``resume``, ``fork``: the
  early start, and every new runtime), the agent asks it for its reading
  (:meth:`lifecycle.agent.runtime.ClaudeRuntime.get_usage`) and, when it names at least one
  window, sends one ``usage_update`` whose ``_meta.rateLimits`` lists them in the provider-neutral
  shape (:func:`lifecycle.limits.limit_entry`: ``window``, ``usedFraction``, ``resetsAt``; no
  ``status``: the reading has none, and none is invented), in Claude Code's order
  (``five_hour``, ``seven_day``, ``seven_day_oauth_apps``, ``seven_day_opus``,
  ``seven_day_sonnet``). ``used``/``size`` are the context's, ``0``/``0`` while unknown.
* Where the account reports no windows (an API key, a gateway token:
  ``rate_limits_available: false``), nothing is sent, unless an earlier session of the same agent
  read windows whose resets are still ahead (:class:`MeterMemory`, kept by the agent's
  :class:`~lifecycle.agent.runtime.Launcher`): those are shown, as they were read.
* Bad input (issue 52.6): a window whose reading is not an object, whose ``utilization`` is not
  a number from 0 to 100, whose ``resets_at`` is not an ISO 8601 time, is already past, or lies
  more than :data:`lifecycle.limits.FARTHEST_RESET_S` ahead, is left out and counted in the log
  (``meter.window_ignored``, with its name and why); never a guessed value.
* Sans-I/O: :func:`meter_update` takes the reading and the time it was read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import structlog

from ..events import RateLimitWindow
from ..limits import FARTHEST_RESET_S, limit_entry
from .usage import iso_epoch

__all__ = ["METER_WINDOWS", "MeterMemory", "meter_of", "meter_update", "meter_windows"]

log = structlog.get_logger("lifecycle.agent")

#: The windows of Claude Code's reading, in its order (the reference's ``usageResponseSchema``).
METER_WINDOWS: Final = ("five_hour", "seven_day", "seven_day_oauth_apps", "seven_day_opus", "seven_day_sonnet")


def _window(name: str, value: object, now: int) -> RateLimitWindow | None:
    if value is None:
        return None  # Claude Code has no such window for this account
    why = None
    share = value.get("utilization") if isinstance(value, Mapping) else None
    reset = iso_epoch(value.get("resets_at")) if isinstance(value, Mapping) else None
    if not isinstance(value, Mapping):
        why = "not_an_object"
    elif isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 100:
        why = "utilization"
    elif value.get("resets_at") is not None and reset is None:
        why = "resets_at"
    elif reset is not None and reset <= now:
        why = "reset_passed"
    elif reset is not None and reset > now + FARTHEST_RESET_S:
        why = "reset_implausible"
    if why is not None:
        log.info("meter.window_ignored", window=name, reason=why)
        return None
    assert isinstance(share, (int, float))
    return RateLimitWindow(window=name, status=None, utilization=share / 100, resets_at=reset, observed_at=now)


def meter_windows(reading: object, now: int) -> tuple[RateLimitWindow, ...]:
    """The windows of Claude Code's ``get_usage`` ``reading`` read at ``now`` (Unix seconds), in
    its order; none when it names none (see the module)."""
    if not isinstance(reading, Mapping) or reading.get("rate_limits_available") is not True:
        return ()
    limits = reading.get("rate_limits")
    if not isinstance(limits, Mapping):
        return ()
    return tuple(w for name in METER_WINDOWS if (w := _window(name, limits.get(name), now)) is not None)


def meter_of(windows: tuple[RateLimitWindow, ...], context: tuple[int, int] | None) -> dict[str, Any] | None:
    """The ``usage_update`` showing ``windows``, ``context`` the last known tokens in context and
    window (``0``/``0`` while unknown); None for no window."""
    entries = [e for e in map(limit_entry, windows) if e is not None]
    if not entries:
        return None
    used, size = context if context is not None else (0, 0)
    return {"sessionUpdate": "usage_update", "used": used, "size": size, "_meta": {"rateLimits": entries}}


def meter_update(reading: object, now: int, context: tuple[int, int] | None) -> dict[str, Any] | None:
    """:func:`meter_of` the :func:`meter_windows` of ``reading``."""
    return meter_of(meter_windows(reading, now), context)


@dataclass(slots=True)
class MeterMemory:
    """The last windows one agent's sessions read (issue 52.1: "a new session must not lose what
    an earlier session of the same agent knew"): a session whose Claude Code gives no window (its
    reading failed, or a new Claude Code process starts empty) shows these instead, each only
    while its reset is still ahead (a window of no known reset is not carried: when it expires is
    not known)."""

    windows: tuple[RateLimitWindow, ...] = ()

    def remember(self, windows: tuple[RateLimitWindow, ...]) -> None:
        if windows:
            self.windows = windows

    def recall(self, now: int) -> tuple[RateLimitWindow, ...]:
        return tuple(w for w in self.windows if w.resets_at is not None and w.resets_at > now)
