"""Usage-limit windows as data (issue 52.2): the provider-neutral ``rateLimits`` entry a client
reads beside the meter, and the reset a refused prompt's answer carries.

Rules
-----
* An entry (:func:`limit_entry`) always names its window (issue 52.5): ``window``, then
  ``status``, ``usedFraction`` (0 to 1) and ``resetsAt`` (ISO 8601 UTC) where known; a value not
  known is left out, never invented. The shape is the one ACP discussion #2235 proposes
  (docs/acp-agent.md, "Rate-limit windows").
* A limit failure (:data:`LIMIT_FAILURES`) of a turn is refused by the last window Claude Code
  reported ``rejected`` (a ``rate_limit_event``, read before Claude Code's own usage-limit
  message): a capable client's failed prompt carries that window's entry in
  ``_meta.rateLimits``, beside the record (whose fields stay exactly the spec's); a legacy
  client's JSON-RPC error carries :func:`refused_data` beside ``errorKind``: ``resetsAt`` and
  ``retryAfterSeconds`` (the seconds from the reading to the reset), each where known.

Theory of operation
-------------------
Pure functions of :class:`~lifecycle.events.RateLimitWindow` values; the core reads no clock: the
reading's own ``observed_at`` (the embedder's) is the only "now".
"""

from __future__ import annotations

from typing import Any, Final

from .events import RateLimitWindow

__all__ = [
    "EARLY_WARNINGS",
    "FARTHEST_RESET_S",
    "LIMIT_FAILURES",
    "civil_date",
    "ignored_reading",
    "iso_time",
    "limit_entry",
    "reading_status",
    "refused_after",
    "refused_data",
    "reset_passed",
]

#: The conditions of a turn refused by a usage-limit window (Claude Code's own usage-limit
#: message; an API 429 it reports as ``rate_limit``).
LIMIT_FAILURES: Final = frozenset({"usage_limit", "rate_limit"})

#: The farthest a window's reset may lie after its reading (issue 52.6): Claude Code's longest
#: window is a week, its extra usage a month; a reset past this is no reset time.
FARTHEST_RESET_S: Final = 35 * 86400


#: Claude Code's own early warning for a reading with no status (CLI 2.1.337's table, the one it
#: applies to a window the API sent no status for): a window warns once its use reaches a
#: threshold while no more than the paired share of its length has passed; (length in seconds,
#: ((used fraction, elapsed share), ...)).
EARLY_WARNINGS: Final = {
    "five_hour": (18000, ((0.9, 0.72),)),
    "seven_day": (604800, ((0.75, 0.6), (0.5, 0.35), (0.25, 0.15))),
}


def reading_status(window: str, used: float, resets_at: int | None, now: int) -> str:
    """The status of ``window`` from a reading that has none (``get_usage``, issue 52.1), as
    Claude Code derives it: ``rejected`` once all of it is used (the API's "at or past its
    limit"); ``allowed_warning`` when :data:`EARLY_WARNINGS` says so (its reset known); else
    ``allowed``."""
    if used >= 1:
        return "rejected"
    length, thresholds = EARLY_WARNINGS.get(window, (0, ()))
    if resets_at is None or not thresholds:
        return "allowed"
    elapsed = min(1.0, max(0.0, (now - (resets_at - length)) / length))
    return "allowed_warning" if any(used >= u and elapsed <= t for u, t in thresholds) else "allowed"


def ignored_reading(reading: RateLimitWindow, shown_reset: int | None) -> str | None:
    """Why the ledger ignores ``reading`` (the observer note that counts it), or None to judge it
    (issue 52.6): its reset lies more than :data:`FARTHEST_RESET_S` after it was read
    (``rate_limit_window_reset_implausible``), or is earlier than the reset of the warning shown
    for its window (``shown_reset``): a reading of a period already over, out of order
    (``rate_limit_window_out_of_order``)."""
    now, reset = reading.observed_at, reading.resets_at
    if now is not None and reset is not None and reset > now + FARTHEST_RESET_S:
        return "rate_limit_window_reset_implausible"
    if shown_reset is not None and reset is not None and reset < shown_reset:
        return "rate_limit_window_out_of_order"
    return None


def reset_passed(reading: RateLimitWindow) -> bool:
    """The reset ``reading`` names had already passed when it was read (issue 52.5)."""
    return (
        reading.observed_at is not None and reading.resets_at is not None and reading.resets_at <= reading.observed_at
    )


def refused_after(refused: RateLimitWindow | None, reading: RateLimitWindow) -> RateLimitWindow | None:
    """The window that refuses the session's turns after ``reading`` (``refused``: before it): a
    ``rejected`` reading whose reset is not past is it; its window's return to ``allowed``, a
    later reset of it, or a reading of it whose reset passed ends it (issue 52.2)."""
    if reading.status == "rejected" and not reset_passed(reading):
        return reading
    if refused is None or refused.window != reading.window:
        return refused
    ended = reading.status == "allowed" or reset_passed(reading)
    later = reading.resets_at is not None and refused.resets_at is not None and reading.resets_at > refused.resets_at
    return None if ended or later else refused


def civil_date(days: int) -> tuple[int, int, int]:
    """The (year, month, day) of ``days`` after 1970-01-01 (proleptic Gregorian: Howard Hinnant's
    ``civil_from_days``; calendar arithmetic, since the core imports no clock module)."""
    era, day_of_era = divmod(days + 719468, 146097)
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_index = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * month_index + 2) // 5 + 1
    month = month_index + 3 if month_index < 10 else month_index - 9
    return year_of_era + era * 400 + (month <= 2), month, day


def iso_time(seconds: int | None) -> str | None:
    """Unix ``seconds`` as ISO 8601 UTC (``2026-12-04T22:02:03Z``); None stays None."""
    if seconds is None:
        return None
    days, second = divmod(seconds, 86400)
    year, month, day = civil_date(days)
    hour, minute, sec = second // 3600, second % 3600 // 60, second % 60
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{sec:02d}Z"


def limit_entry(window: RateLimitWindow) -> dict[str, Any] | None:
    """The ``rateLimits`` entry of ``window`` (see the module); None when it names no window."""
    if window.window is None:
        return None
    entry = {
        "window": window.window,
        "status": window.status,
        "usedFraction": window.utilization,
        "resetsAt": iso_time(window.resets_at),
    }
    return {k: v for k, v in entry.items() if v is not None}


def refused_data(window: RateLimitWindow) -> dict[str, Any]:
    """What a legacy client's error carries of the window that refused the turn: ``resetsAt``
    (ISO 8601 UTC) and ``retryAfterSeconds`` (whole seconds from the reading to the reset, never
    negative), each only where known."""
    data: dict[str, Any] = {}
    if window.resets_at is not None:
        data["resetsAt"] = iso_time(window.resets_at)
        if window.observed_at is not None:
            data["retryAfterSeconds"] = max(0, window.resets_at - window.observed_at)
    return data
