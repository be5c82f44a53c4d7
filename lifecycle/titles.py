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

``details`` carries the complete text only when it exceeds :data:`TITLE_LIMIT` characters; the
title is then the text cut at a sentence (or word) boundary. Otherwise ``details`` is absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .redaction import redact

__all__ = ["FALLBACK_TITLES", "TITLE_LIMIT", "claude_text", "present", "retry_title"]

#: Longest title shown as is. 500 characters holds every message the CLI 2.1.332 recordings show
#: (the longest, "Prompt is too long · ...", is 330) while keeping a transcript entry readable.
TITLE_LIMIT = 500

#: Adapter-authored titles, used only when Claude produced no user-facing text.
FALLBACK_TITLES: Mapping[str, str] = MappingProxyType(
    {
        "query_error": "The connection to Claude Code was lost. Start a new session to continue.",
        "worker_shutdown": "Claude Code shut down. Start a new session to continue.",
        "missing_result": "Claude Code ended the turn without a result. Try again.",
        "internal_error": "The adapter hit an internal error. Try again.",
        "error_result": "Claude Code reported an error without a message. Try again.",
        "model_fallback": "Claude switched to a fallback model.",
    }
)

_SENTENCE_ENDS = (". ", " · ", "! ", "? ", "; ")


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
    """``(title, details)`` for Claude's ``text``; redacted, trimmed, split only when too long.

    An empty text (after redaction and trimming) falls back to ``FALLBACK_TITLES[fallback_key]``.
    """
    clean = redact(text).strip()
    if not clean:
        return FALLBACK_TITLES[fallback_key], None
    if len(clean) <= TITLE_LIMIT:
        return clean, None
    return _cut(clean, TITLE_LIMIT), clean


def claude_text(*candidates: object) -> str:
    """The first non-empty user-facing text among ``candidates`` (str, or a list of str)."""
    for cand in candidates:
        if isinstance(cand, str) and cand.strip():
            return cand
        if isinstance(cand, (list, tuple)):
            parts = [c for c in cand if isinstance(c, str) and c.strip()]
            if parts:
                return "; ".join(parts)
    return ""


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
