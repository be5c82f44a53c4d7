"""Titles and details (spec: "Title and details").

A title is Claude's own user-facing text, chosen in the spec's order of precedence:

1. top-level assistant error text (including the synthetic usage-limit and login messages);
2. otherwise the terminal result text, or the result's ``errors``;
3. the exact model-fallback notice, for warning records.

Adapter-authored text is used only where Claude gave none (:data:`FALLBACK_TITLES`, and
:func:`retry_title` for ``api_retry`` progress). Raw exception text is never a title. Whatever the
source, :func:`present` passes the text through :func:`lifecycle.redaction.redact` as defence in
depth, so no secret, header, credentialed URL, environment value, stack frame or private path can
reach the transcript.

Headers are never title material (:func:`strip_headers`): when Claude's text quotes an HTTP
exchange (a gateway that echoes the request), its header lines (``Host: ...``,
``User-Agent: ...``, ``X-Stainless-...``, ``Authorization: Bearer [redacted credential]``), its
request or status line, and quoted header pairs (``"user-agent": "..."``) are left out of the
title and details; the rest of the text stays.

The connection fallbacks say what happens next: a lost or stopped Claude Code is restarted (the
same session resumed) by the next prompt, which is what ends the incident (recovery
``runtime_replaced``); the record's ``new_session`` action stays offered as the other way out.

``details`` carries the complete text only when it exceeds :data:`TITLE_LIMIT` characters; the
title is then the text cut at a sentence (or word) boundary. Otherwise ``details`` is absent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Final, TypeAlias

from .redaction import redact

__all__ = [
    "FALLBACK_TITLES",
    "NOTICE_TITLE_LIMIT",
    "TITLE_LIMIT",
    "ResetZone",
    "claude_text",
    "legacy_result_text",
    "present",
    "refusal_fallback_notice",
    "refusal_fallback_record",
    "refusal_fallback_texts",
    "refusal_fallback_transcript",
    "retry_title",
    "split_notice_text",
    "strip_headers",
    "utc_zone",
    "window_title",
]

#: Longest title shown as is. 500 characters holds every message the CLI 2.1.332 recordings show
#: (the longest, "Prompt is too long · ...", is 330) while keeping a transcript entry readable.
TITLE_LIMIT = 500

#: Adapter-authored titles, used only when Claude produced no user-facing text.
FALLBACK_TITLES: Mapping[str, str] = MappingProxyType(
    {
        "query_error": "The connection to Claude Code was lost. Send a message to restart it, or start a new session.",
        "worker_shutdown": "Claude Code shut down. Send a message to restart it, or start a new session.",
        "missing_result": "Claude Code ended the turn without a result. Try again.",
        "internal_error": "The adapter hit an internal error. Try again.",
        "error_result": "Claude Code reported an error without a message. Try again.",
        "model_fallback": "Claude switched to a fallback model.",
        "mcp_server_not_started": "An MCP server did not start; its tools are unavailable in this session.",
    }
)

_SENTENCE_ENDS = (". ", " · ", "! ", "? ", "; ")

# ------------------------------------------------------------------ headers

# Header names that are nothing else: any line ``Name: value`` with one of them is a header line.
_HEADER_NAMES: Final = frozenset(
    (
        "accept", "accept-charset", "accept-encoding", "accept-language", "accept-ranges", "alt-svc",
        "authorization", "cache-control", "connection", "content-disposition", "content-encoding",
        "content-language", "content-length", "content-location", "content-range", "content-security-policy",
        "content-type", "cookie", "dnt", "etag", "forwarded", "host", "if-match", "if-modified-since",
        "if-none-match", "if-range", "if-unmodified-since", "keep-alive", "last-modified", "origin", "pragma",
        "priority", "proxy-authenticate", "proxy-authorization", "proxy-connection", "referer", "request-id",
        "retry-after", "set-cookie", "strict-transport-security", "te", "traceparent", "tracestate",
        "transfer-encoding", "upgrade-insecure-requests", "user-agent", "vary", "www-authenticate",
    )
)  # fmt: skip
_HEADER_PREFIXES: Final = ("x-", "sec-", "cf-", "anthropic-", "access-control-", "content-", "accept-", "proxy-")
# Common words that are header names too: header lines only next to another header line.
_WEAK_HEADER_NAMES: Final = frozenset(
    ("age", "allow", "date", "expect", "expires", "from", "link", "location", "range", "server", "via", "warning")
)
# ``Name: value`` (real or JSON-escaped line breaks delimit lines), a request or a status line.
_LINE_BREAK_RE: Final = re.compile(r"(\r?\n|\\r\\n|\\n)")
_HEADER_LINE_RE: Final = re.compile(r"[ \t]*+(?P<name>[A-Za-z][A-Za-z0-9_-]{0,63}+)[ \t]*+:(?:[ \t].*+)?+")
_HTTP_LINE_RE: Final = re.compile(
    r"[ \t]*+(?:(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS|CONNECT|TRACE)[ ]\S++[ ]HTTP/\d(?:\.\d)?+"
    r"|HTTP/\d(?:\.\d)?+[ ]\d{3}\b.*+)[ \t]*+"
)
# A quoted header pair inside other text: ``"user-agent": "claude-cli/..."`` (JSON or a dict repr).
_QUOTED_PAIR_RE: Final = re.compile(
    r"""(?P<q>\\?["'])(?P<name>[A-Za-z][A-Za-z0-9_-]{0,63}+)(?P=q)[ \t]*+:[ \t]*+"""
    r"""(?:\\?"(?:[^"\\\n]|\\[^"\n])*+\\?"|'[^'\n]*+'|[\w./:;=+-]++)[ \t]*+,?[ \t]*+"""
)


def _header_name(name: str) -> int:
    """2: only a header name; 1: a header name that is also a common word; 0: no header name."""
    low = name.lower()
    if low in _HEADER_NAMES or low.startswith(_HEADER_PREFIXES):
        return 2
    return 1 if low in _WEAK_HEADER_NAMES else 0


def _line_kind(line: str) -> int:
    if _HTTP_LINE_RE.fullmatch(line):
        return 2
    m = _HEADER_LINE_RE.fullmatch(line)
    return _header_name(m["name"]) if m else 0


def _pair_repl(m: re.Match[str]) -> str:
    return "" if _header_name(m["name"]) == 2 else m.group()


def strip_headers(text: str) -> str:
    """``text`` without the HTTP header lines (and request/status lines, and quoted header
    pairs) it quotes; everything else byte for byte."""
    if ":" not in text and "HTTP/" not in text:
        return text
    parts = _LINE_BREAK_RE.split(text)  # [line, break, line, break, ...]
    lines = parts[0::2]
    kinds = [_line_kind(line) for line in lines]
    drop = [
        k == 2 or (k == 1 and any(kinds[j] == 2 for j in (i - 1, i + 1) if 0 <= j < len(kinds)))
        for i, k in enumerate(kinds)
    ]
    out: list[str] = []
    for i, line in enumerate(lines):
        if drop[i]:
            continue
        if out:
            out.append(parts[2 * i - 1])  # the break before this line
        out.append(_QUOTED_PAIR_RE.sub(_pair_repl, line) if "'" in line or '"' in line else line)
    return "".join(out)



def _cut(text: str, limit: int) -> str:
    """Cut at the last sentence boundary (else word boundary) within ``limit``."""
    head = text[:limit]
    at, sep = max((head.rfind(sep), sep) for sep in _SENTENCE_ENDS)
    if at >= limit // 3:
        if sep[0] in ".!?":
            return head[: at + 1]
        return head[:at].rstrip() + " …"
    space = head.rfind(" ")
    cut = head[:space] if space >= limit // 3 else head[: limit - 1]
    return cut.rstrip() + "…"


def present(text: str, fallback_key: str) -> tuple[str, str | None]:
    """``(title, details)`` for Claude's ``text``; redacted, without headers, trimmed, split only
    when too long.

    An empty text (after redaction, header removal and trimming) falls back to
    ``FALLBACK_TITLES[fallback_key]``. Redaction comes first, so a secret found in a header line
    is also masked where it recurs in the rest of the text.
    """
    clean = strip_headers(redact(text)).strip()
    if not clean:
        return FALLBACK_TITLES[fallback_key], None
    if len(clean) <= TITLE_LIMIT:
        return clean, None
    return _cut(clean, TITLE_LIMIT), clean


def claude_text(*candidates: object) -> str:
    """The first non-empty user-facing text among ``candidates`` (str, or a list of str, joined
    with ``", "`` as the reference adapter joins a result's ``errors`` for its title)."""
    for cand in candidates:
        if isinstance(cand, str) and cand.strip():
            return cand
        if isinstance(cand, (list, tuple)):
            parts = [c for c in cand if isinstance(c, str) and c.strip()]
            if parts:
                return ", ".join(parts)
    return ""


def legacy_result_text(subtype: str | None, result: str | None, errors: Sequence[str]) -> str:
    """The text a legacy client's ``"Internal error: <text>"`` carries for an error result,
    exactly as the reference adapter composes it (dist/acp-agent.js, the ``result`` switch):

    * a ``success`` result: its ``result`` text (``""``: the message is ``"Internal error"``);
    * any other subtype: its ``errors`` joined with ``", "``, or, when that is empty, the
      subtype's name (``message.errors.join(", ") || message.subtype``): an
      ``error_during_execution`` result without errors is ``"Internal error:
      error_during_execution"``;
    * no subtype at all (a garbled result the reference never sees): its ``result`` text, else its
      ``errors`` joined with ``", "``.

    Only the legacy error uses this; a record's title is :func:`claude_text`'s.
    """
    if subtype == "success":
        return result or ""
    if subtype is None:
        return result or ", ".join(errors)
    return ", ".join(errors) or subtype


def _int(value: object) -> int | None:
    # A counter a person can read: beyond 10**9 it is garbage (and a >4300-digit int cannot even
    # be formatted).
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**9:
        return value
    return None


def retry_title(attempt: object, max_retries: object, has_response: bool) -> str:
    """Adapter-authored retry progress (Claude supplies no text for ``api_retry``)."""
    verb = "Retrying Claude" if has_response else "Reconnecting to Claude"
    a, m = _int(attempt), _int(max_retries)
    if a is not None and m is not None:
        return f"{verb}, attempt {a} of {m}."
    if a is not None:
        return f"{verb}, attempt {a}."
    return f"{verb}."


# ------------------------------------------------------------------ usage-limit windows

#: The zone a reset time is shown in: Unix seconds -> (UTC offset in seconds at that instant, the
#: zone's name). The core reads no clock and no zone; the embedder gives one (the agent: the
#: machine's local zone; :func:`utc_zone` by default).
ResetZone: TypeAlias = Callable[[int], tuple[int, str]]

#: How a window is named in a title (Claude Code's ``rateLimitType``); another name is shown with
#: spaces for underscores, a window Claude Code did not name as "usage".
_WINDOW_LABELS: Final = MappingProxyType(
    {
        "five_hour": "5-hour",
        "seven_day": "weekly",
        "seven_day_opus": "weekly Opus",
        "seven_day_sonnet": "weekly Sonnet",
        "overage": "extra usage",
    }
)
_WEEKDAYS: Final = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def utc_zone(seconds: int) -> tuple[int, str]:
    """The default :data:`ResetZone`: UTC."""
    return 0, "UTC"


def _reset_time(resets_at: int, zone: ResetZone, *, weekday: bool) -> str:
    offset, name = zone(resets_at)
    local = resets_at + offset
    days, second = divmod(local, 86400)
    hour, minute = second // 3600, second % 3600 // 60
    clock = f"{hour % 12 or 12}:{minute:02d} {'am' if hour < 12 else 'pm'}"
    day = f"{_WEEKDAYS[(days + 3) % 7]} " if weekday else ""  # 1970-01-01 was a Thursday
    return f"{day}{clock} ({name})"


def window_title(
    window: str | None, status: str, utilization: float | None, resets_at: int | None, zone: ResetZone = utc_zone
) -> str:
    """The title of a usage-limit window's warning (Claude Code prints no text for it: the
    adapter's, docs/acp-agent.md "Rate-limit windows"): "You've used 90% of your 5-hour limit ·
    resets 3:40 pm (UTC)". The share is rounded to a whole percent; a window that resets in more
    than a few hours (any but ``five_hour``) names the weekday too ("resets Mon 3:40 pm (UTC)"). A
    ``rejected`` window is "You've used all of your … limit"; without a share "You're close to
    your … limit"; without a reset time the "· resets …" part is left out."""
    label = _WINDOW_LABELS.get(window or "") or (window.replace("_", " ") if window else "usage")
    if status == "rejected":
        head = f"You've used all of your {label} limit"
    elif utilization is not None:
        head = f"You've used {round(utilization * 100)}% of your {label} limit"
    else:
        head = f"You're close to your {label} limit"
    if resets_at is None:
        return head
    return f"{head} · resets {_reset_time(resets_at, zone, weekday=window != 'five_hour')}"


# ------------------------------------------------------------------ model refusal fallback

#: Longest notice title (the reference adapter's ``MAX_NOTICE_TITLE_LENGTH``): a longer notice keeps
#: its explanation in ``details`` (a record) or ``description`` (an ACP notice).
NOTICE_TITLE_LIMIT = 256


def refusal_fallback_texts(
    original_model: str,
    fallback_model: str,
    *,
    direction: str | None,
    scope: str | None,
    category: str | None,
    explanation: str | None,
) -> tuple[str, str | None]:
    """``(summary, explanation)`` of a model refusal fallback, composed as the reference adapter
    composes it: both model ids, the refusal category, and what happens next. Claude's own
    ``content`` for this banner is a long marketing-style paragraph; the reference, which the
    spec names as its executable contract, composes this summary instead (docs/parity).

    ``scope: local`` is one response from the fallback model; ``direction: revert`` (older CLIs)
    stays on the original model; otherwise the session continues on the fallback model.
    """
    local = scope == "local"
    persistent = direction != "revert" and not local
    refused = f" ({category})" if category else ""
    if persistent:
        outcome = f"The session will continue on {fallback_model}."
    elif local:
        outcome = f"Only that response came from {fallback_model}; the session stays on {original_model}."
    else:
        outcome = f"The session stays on {original_model}."
    summary = redact(f"{original_model} declined this request{refused}; retried with {fallback_model}. {outcome}")
    return summary, (redact(explanation) if explanation else None)


def refusal_fallback_record(summary: str, explanation: str | None) -> tuple[str, str | None]:
    """``(title, details)`` of the warning record: summary and explanation in the title unless
    together they pass :data:`NOTICE_TITLE_LIMIT`; then the explanation is the details."""
    if explanation is None:
        return summary, None
    if len(summary) + 2 + len(explanation) > NOTICE_TITLE_LIMIT:
        return summary, explanation
    return f"{summary}\n\n{explanation}", None


def refusal_fallback_notice(summary: str, explanation: str | None) -> tuple[str, str | None]:
    """``(title, description)`` of the ACP ``notice`` update (the reference's 256-character rule)."""
    if len(summary) > NOTICE_TITLE_LIMIT:
        return "Model fallback", f"{summary}\n\n{explanation}" if explanation else summary
    return summary, explanation


def refusal_fallback_transcript(summary: str, explanation: str | None) -> str:
    """The transcript line a legacy client gets instead of a record."""
    return f"**Model fallback:** {summary}\n\n{explanation}" if explanation else f"**Model fallback:** {summary}"


# ------------------------------------------------------------------ free-form notices

_MD_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+", re.MULTILINE)
_MD_BOLD = re.compile(r"(\*\*|__)(?=\S)([\s\S]*?\S)\1")
_MD_CODE = re.compile(r"(?<![\w`])`([^`\n]+)`(?![\w`])")


def split_notice_text(text: str, fallback_title: str) -> tuple[str, str | None]:
    """``(title, description)`` of an ACP ``notice`` made of free-form text, as the reference
    adapter shapes it: light markdown dropped; the first line is the title when it is at most
    :data:`NOTICE_TITLE_LIMIT` characters (the rest is the description), otherwise the whole text
    is the description under ``fallback_title``."""
    plain = _MD_CODE.sub(r"\1", _MD_BOLD.sub(r"\2", _MD_HEADING.sub("", text))).strip()
    if not plain:
        return fallback_title, None
    first, _, rest = plain.partition("\n")
    first = first.rstrip("\r").rstrip()
    if len(first) > NOTICE_TITLE_LIMIT:
        return fallback_title, plain
    return first, (rest.strip() or None)
