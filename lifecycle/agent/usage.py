"""``/usage`` as the reference adapter shows it (issue 52.3): Claude Code's usage reading (its
``get_usage`` control request, :meth:`lifecycle.agent.runtime.ClaudeRuntime.get_usage`) as a
Markdown table of the windows with their use and reset, and the session's cost.

Rules
-----
* A prompt that is exactly ``/usage`` (:func:`is_usage_command`, the reference's
  ``isUsageCommandText``: the text, trimmed) is answered with :func:`usage_markdown` of Claude
  Code's reading, as one ``agent_message_chunk``, and ends ``end_turn``. Where Claude Code gives
  no reading, or one this module cannot read (:func:`parse_usage` is None: a field it renders is
  missing or of the wrong type), the prompt goes to Claude Code as before, whose own output is
  shown: nothing is invented.
* The Markdown is the reference's ``formatUsageResponse`` (``dist/usage-markdown.js`` of
  claude-agent-acp 0.101.0), line for line: "## Usage", the subscription, "### Limits" (each
  window with a use and its 20-cell bar, its reset in the agent machine's local time), "### This
  session" (cost, API time, active time, tokens by kind) and "What's using your limits?". Every
  text Claude Code sent is escaped (Markdown syntax characters, line breaks folded). One
  difference: a zone's name is the machine's (``CET``) where Node's ``Intl`` writes ``GMT+1``.
* Sans-I/O: the functions take the reading and a zone, and return text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Final

from ..limits import civil_date

__all__ = ["is_usage_command", "iso_epoch", "parse_usage", "usage_markdown"]

#: A zone: Unix seconds -> (its UTC offset in seconds, its short name).
Zone = Callable[[int], tuple[int, str]]

_MONTHS: Final = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MARKDOWN: Final = re.compile(r"([\\`*_\[\]<>|])")
_BREAKS: Final = re.compile(r"[\r\n]+")
_ISO: Final = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(Z|[+-]\d{2}:\d{2})")
_WINDOWS: Final = ("five_hour", "seven_day", "seven_day_oauth_apps", "seven_day_opus", "seven_day_sonnet")


def is_usage_command(content: object) -> bool:
    """The prompt is exactly ``/usage`` (one text, trimmed; the reference's test)."""
    return isinstance(content, str) and content.strip() == "/usage"


def _count(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _percent(value: object) -> bool:
    return value is None or (_count(value) and value <= 100)  # type: ignore[operator]


def _window(value: object) -> bool:
    return value is None or (
        isinstance(value, Mapping)
        and _percent(value.get("utilization"))
        and isinstance(value.get("resets_at"), (str, type(None)))
    )


def _period(value: object) -> bool:
    if not isinstance(value, Mapping) or not all(_count(value.get(k)) for k in ("request_count", "session_count")):
        return False
    servers, tips = value.get("mcp_servers"), value.get("recommendations", [])
    return (
        isinstance(servers, list)
        and all(isinstance(s, Mapping) and isinstance(s.get("name"), str) and _percent(s.get("pct")) for s in servers)
        and all(s.get("pct") is not None for s in servers)
        and isinstance(tips, list)
        and all(
            isinstance(t, Mapping)
            and isinstance(t.get("title"), str)
            and t.get("pct") is not None
            and _percent(t.get("pct"))
            and isinstance(t.get("detail", ""), str)
            for t in tips
        )
    )


def parse_usage(value: object) -> Mapping[str, Any] | None:
    """Claude Code's usage reading when every field the Markdown renders is of its type (the
    reference's ``parseUsageResponse``), else None; the reading is kept whole."""
    if not isinstance(value, Mapping):
        return None
    session = value.get("session")
    if not isinstance(session, Mapping):
        return None
    models = session.get("model_usage")
    keys = ("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens")
    ok = (
        all(_count(session.get(k)) for k in ("total_cost_usd", "total_api_duration_ms", "total_duration_ms"))
        and isinstance(models, Mapping)
        and all(isinstance(m, Mapping) and all(_count(m.get(k)) for k in keys) for m in models.values())
        and isinstance(value.get("subscription_type"), (str, type(None)))
        and isinstance(value.get("rate_limits_available"), bool)
    )
    limits = value.get("rate_limits")
    if limits is not None:
        scoped = limits.get("model_scoped", []) if isinstance(limits, Mapping) else None
        ok = ok and isinstance(limits, Mapping) and all(_window(limits.get(w)) for w in _WINDOWS)
        ok = ok and isinstance(scoped, list) and all(_window(m) and isinstance(m, Mapping) for m in scoped)
        ok = ok and all(isinstance(m.get("display_name"), str) for m in scoped or [])
    behaviors = value.get("behaviors")
    if behaviors is not None:
        ok = ok and isinstance(behaviors, Mapping) and _period(behaviors.get("day")) and _period(behaviors.get("week"))
    return value if ok else None


def _escape(value: str) -> str:
    return _BREAKS.sub(" ", _MARKDOWN.sub(r"\\\1", value))


def _number(value: float) -> str:
    """A number as JavaScript prints it in a template (``37``, ``12.5``)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _bar(percent: float) -> str:
    clamped = max(0.0, min(100.0, float(percent)))
    filled = 0 if clamped == 0 else max(1, _round(clamped / 100 * 20))
    return "█" * filled + "░" * (20 - filled)


def _round(value: float) -> int:
    return int(Decimal(repr(value)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _duration(milliseconds: float) -> str:
    seconds = max(0, _round(milliseconds / 1000))
    if seconds < 60:
        return f"{seconds}s"
    minutes, rest = divmod(seconds, 60)
    return f"{minutes}m" if rest == 0 else f"{minutes}m {rest}s"


def _compact(value: float) -> str:
    """Node's ``Intl.NumberFormat("en", {notation: "compact", maximumFractionDigits: 1})``."""
    for scale, suffix in ((10**12, "T"), (10**9, "B"), (10**6, "M"), (10**3, "K")):
        if value >= scale * 0.99995:
            shown = Decimal(repr(value / scale)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
            if shown >= 1000 and suffix != "T":
                continue
            return f"{shown.normalize():f}{suffix}"
    shown = Decimal(repr(float(value))).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
    return f"{shown.normalize():f}"


def iso_epoch(text: object) -> int | None:
    """The Unix seconds of an ISO 8601 time with a zone (``2026-12-04T22:02:03Z``); None for
    anything else."""
    found = _ISO.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        return None
    year, month, day, hour, minute, second = (int(found.group(i)) for i in range(1, 7))
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second < 60):
        return None
    y = year - (month <= 2)
    era, yoe = divmod(y, 400)
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    zone = found.group(7)
    offset = 0 if zone == "Z" else (1 if zone[0] == "+" else -1) * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    return days * 86400 + hour * 3600 + minute * 60 + second - offset


def _reset(value: object, zone: Zone) -> str:
    if not value or not isinstance(value, str):
        return ""
    seconds = iso_epoch(value)
    if seconds is None:
        return f" · Resets {_escape(value)}"
    offset, name = zone(seconds)
    days, second = divmod(seconds + offset, 86400)
    _, month, day = civil_date(days)
    hour, minute = second // 3600, second % 3600 // 60
    return f" · Resets {_MONTHS[month - 1]} {day}, {hour % 12 or 12}:{minute:02d} {'AM' if hour < 12 else 'PM'} {name}"


def _limit(lines: list[str], label: str, window: object, zone: Zone) -> None:
    if not isinstance(window, Mapping) or window.get("utilization") is None:
        return
    use = window["utilization"]
    head = f"**{_escape(label)}** — **{_number(use)}%**{_reset(window.get('resets_at'), zone)}"
    lines.extend([head, "", f"`{_bar(use)}`", ""])


def _contributions(lines: list[str], label: str, period: Mapping[str, Any]) -> None:
    lines.extend(["", f"**{label}** · {_number(period['request_count'])} requests · "
                  f"{_number(period['session_count'])} sessions"])  # fmt: skip
    tips = period.get("recommendations") or []
    if tips:
        lines.append("")
        for tip in tips:
            detail = f" · {_escape(tip['detail'])}" if tip.get("detail") else ""
            lines.append(f"- **{_number(tip['pct'])}%** {_escape(tip['title'])}{detail}")
    servers = period["mcp_servers"]
    if not servers:
        return
    lines.extend(["", "| MCP server | Usage |", "|:--|--:|"])
    for server in sorted(servers, key=lambda s: -s["pct"])[:3]:
        lines.append(f"| {_escape(server['name'])} | `{_bar(server['pct'])}` {_number(server['pct'])}% |")


def usage_markdown(usage: Mapping[str, Any], zone: Zone) -> str:
    """The Markdown of a reading :func:`parse_usage` accepted (the reference's
    ``formatUsageResponse``; ``zone`` gives a reset's local time)."""
    lines = ["## Usage"]
    if usage.get("subscription_type"):
        lines.extend(["", f"> Claude {_escape(usage['subscription_type'])} subscription usage"])
    limits = usage.get("rate_limits")
    if usage.get("rate_limits_available") and isinstance(limits, Mapping):
        shown: list[str] = []
        _limit(shown, "5-hour limit", limits.get("five_hour"), zone)
        _limit(shown, "Weekly · all models", limits.get("seven_day"), zone)
        scoped = limits.get("model_scoped") or []
        for model in scoped:
            _limit(shown, f"Weekly · {model['display_name']}", model, zone)
        if not scoped:
            _limit(shown, "Weekly · Opus", limits.get("seven_day_opus"), zone)
            _limit(shown, "Weekly · Sonnet", limits.get("seven_day_sonnet"), zone)
        if shown:
            if shown[-1] == "":
                shown.pop()
            lines.extend(["", "### Limits", "", *shown])
    session = usage["session"]
    totals = [0.0, 0.0, 0.0, 0.0]
    for model in session["model_usage"].values():
        for i, key in enumerate(("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens")):
            totals[i] += model[key]
    cost = Decimal(repr(float(session["total_cost_usd"]))).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    lines.extend([
        "", "---", "", "### This session", "", "| Cost | API time | Active |", "|:--|:--|:--|",
        f"| ${cost} | {_duration(session['total_api_duration_ms'])} | {_duration(session['total_duration_ms'])} |",
        "", "| Breakdown | Tokens |", "|:--|--:|",
        f"| Input | {_compact(totals[0])} |", f"| Output | {_compact(totals[1])} |",
        f"| Cache read | {_compact(totals[2])} |", f"| Cache write | {_compact(totals[3])} |",
    ])  # fmt: skip
    behaviors = usage.get("behaviors")
    if isinstance(behaviors, Mapping):
        lines.extend(["", "---", "", "### What’s using your limits?", "",
                      "> Approximate, overlapping measures · this machine only · excludes claude.ai"])  # fmt: skip
        _contributions(lines, "Last 24h", behaviors["day"])
        _contributions(lines, "Last 7d", behaviors["week"])
    return "\n".join(lines)
