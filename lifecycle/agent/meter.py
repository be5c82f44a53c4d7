"""A meter from the first second (issue 52.1): the account's usage-limit windows, read from the
running Claude Code (its ``get_usage`` reading) when a session's Claude Code starts, shown and
judged as a ``rate_limit_event`` of Claude Code is.

Rules
-----
* When a session's Claude Code has started (``session/new``, ``load``, ``resume``, ``fork``: the
  early start, and every new runtime), the agent asks it for its reading
  (:meth:`lifecycle.agent.runtime.ClaudeRuntime.get_usage`). The reading has no status: each
  window's is the one Claude Code derives from the same numbers
  (:func:`lifecycle.limits.reading_status`: ``rejected`` when all is used, its early-warning table,
  else ``allowed``). When it names at least one window, :func:`meter_steps` is what the session
  emits: the ``usage_update`` of a ``rate_limit_event`` (:func:`lifecycle.agent.translate.rate_limit_update`)
  whose ``_claude/rateLimit`` is the reference's info object for the most pressing window
  (``rejected``, then ``allowed_warning``, then ``allowed``; Claude Code's order among equals:
  ``five_hour``, ``seven_day``, ``seven_day_oauth_apps``, ``seven_day_opus``, ``seven_day_sonnet``)
  with every window in ``unifiedWindows``, and ``rateLimits`` that window first then the others;
  then each window to the ledger, so a window warning starts before any prompt.
* Where the account reports no windows (an API key, a gateway token:
  ``rate_limits_available: false``) or the reading fails, nothing is sent, unless an earlier
  session of the same agent saw windows whose resets are still ahead (:class:`MeterMemory`, kept
  by the agent's :class:`~lifecycle.agent.runtime.Launcher`: every reading, the meter's and each
  turn's ``rate_limit_event``): those are shown, read again at the new session's time.
* Bad input (issue 52.6): a window whose reading is not an object, whose ``utilization`` is not
  a number from 0 to 100, whose ``resets_at`` is not an ISO 8601 time, is already past, or lies
  more than :data:`lifecycle.limits.FARTHEST_RESET_S` ahead, is left out and counted in the log
  (``meter.window_ignored``, with its name and why); never a guessed value. The memory ignores a
  reading of a window older than the one it holds (an earlier reset) and one of no reset.
* Sans-I/O: :func:`meter_windows` takes the reading and the time it was read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

import structlog

from ..claude import unified_windows
from ..events import MAX_WINDOWS, RateLimitWindow
from ..limits import FARTHEST_RESET_S, ignored_reading, reading_status
from .messages import Step
from .translate import rate_limit_update
from .usage import iso_epoch

__all__ = ["METER_WINDOWS", "MeterMemory", "meter_info", "meter_steps", "meter_windows"]

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
    status = reading_status(name, share / 100, reset, now)
    return RateLimitWindow(window=name, status=status, utilization=share / 100, resets_at=reset, observed_at=now)


def meter_windows(reading: object, now: int) -> tuple[RateLimitWindow, ...]:
    """The windows of Claude Code's ``get_usage`` ``reading`` read at ``now`` (Unix seconds), in
    its order; none when it names none (see the module)."""
    if not isinstance(reading, Mapping) or reading.get("rate_limits_available") is not True:
        return ()
    limits = reading.get("rate_limits")
    if not isinstance(limits, Mapping):
        return ()
    return tuple(w for name in METER_WINDOWS if (w := _window(name, limits.get(name), now)) is not None)


#: How pressing a status is: the window ``_claude/rateLimit`` names is the most pressing one.
_PRESSING: Final = {"rejected": 0, "allowed_warning": 1, "allowed": 2}


def _known(window: RateLimitWindow) -> dict[str, Any]:
    values = {"status": window.status, "resetsAt": window.resets_at, "utilization": window.utilization}
    return {k: v for k, v in values.items() if v is not None}


def meter_info(windows: tuple[RateLimitWindow, ...]) -> RateLimitWindow | None:
    """``windows`` (each with a status) as one reading: the most pressing window (see the module)
    whose ``raw`` is the reference's ``_claude/rateLimit`` object (``status``, ``resetsAt``,
    ``rateLimitType``, ``utilization``, each where known, and ``unifiedWindows`` with every
    window); None for no window."""
    named = [w for w in windows if w.window is not None and w.status in _PRESSING][:MAX_WINDOWS]
    if not named:
        return None
    first = min(named, key=lambda w: _PRESSING[w.status or "allowed"])  # min keeps the first of equals
    own = _known(first)
    raw = {"status": first.status, **{k: v for k, v in own.items() if k == "resetsAt"}, "rateLimitType": first.window}
    raw |= {k: v for k, v in own.items() if k == "utilization"}
    raw["unifiedWindows"] = {w.window: _known(w) for w in named}
    return replace(first, raw=raw)


def meter_steps(windows: tuple[RateLimitWindow, ...], context: tuple[int, int] | None) -> list[Step]:
    """What the session emits for ``windows``, ``context`` the last known tokens in context and
    window (``0``/``0`` while unknown): the ``usage_update`` of :func:`meter_info` with its window,
    then each other window for the ledger (as :mod:`lifecycle.agent.translate` emits a
    ``rate_limit_event``); none for no window."""
    info = meter_info(windows)
    if info is None:
        return []
    first, *others = unified_windows(info)
    return [Step([rate_limit_update(info, context)], first), *(Step(event=o) for o in others)]


@dataclass(slots=True)
class MeterMemory:
    """The last windows one agent's sessions saw (issue 52.1: "a new session must not lose what
    an earlier session of the same agent knew"): every window the meter read and every window of
    a turn's ``rate_limit_event``, the last reading of each window, at most
    :data:`~lifecycle.events.MAX_WINDOWS`. A session whose Claude Code gives no window (its reading
    failed, or a new Claude Code process starts empty) shows these instead, each only while its
    reset is still ahead (a window of no known reset is not kept: when it expires is not known)."""

    windows: dict[str, RateLimitWindow] = field(default_factory=dict)

    def saw(self, window: RateLimitWindow) -> None:
        """Keep ``window``'s reading, unless it names no window or reset, or is ignored as the
        ledger ignores it (issue 52.6: an implausible reset, an older period than the one kept)."""
        name, kept = window.window, self.windows.get(window.window or "")
        if name is None or window.resets_at is None:
            return
        if ignored_reading(window, kept.resets_at if kept is not None else None) is not None:
            return
        self.windows.pop(name, None)
        self.windows[name] = window
        while len(self.windows) > MAX_WINDOWS:
            del self.windows[next(iter(self.windows))]

    def remember(self, windows: tuple[RateLimitWindow, ...]) -> None:
        for window in windows:
            self.saw(window)

    def recall(self, now: int) -> tuple[RateLimitWindow, ...]:
        """The windows kept whose resets are after ``now``, read again at ``now`` (a window kept
        with no status of its own gets the one its use gives, or is left out without a use)."""
        found = []
        for w in self.windows.values():
            if w.resets_at is None or not now < w.resets_at <= now + FARTHEST_RESET_S:
                continue
            status = w.status
            if status is None and w.utilization is not None:
                status = reading_status(w.window or "", w.utilization, w.resets_at, now)
            if status is not None:
                found.append(replace(w, status=status, observed_at=now))
        return tuple(found)
