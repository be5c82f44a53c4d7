"""Planned sends: what the ledger decides to send, before it is a message (spec: "Delivery
surfaces"; the reference adapter's legacy errors).

Rules
-----
An event fed to :class:`~lifecycle.ledger.SessionLedger` plans zero or more *intents*, kept in order
in its outbox. An intent is data only: it is turned into an
:class:`~lifecycle.events.Outbound` message when it reaches the head of the outbox (so a record's
revision is the one the client will see next), and what it shows is committed only when that
message was delivered. Nothing here reads or changes a ledger.

Theory of operation
-------------------
:class:`Publish` becomes a record (on a ``PromptResponse`` or a ``session_info_update``),
:class:`Forward` a ``session/update`` as it is, :class:`Settle` a ``PromptResponse`` without a
record, :class:`Reject` the legacy JSON-RPC error (:func:`legacy_error` builds it exactly as the
reference adapter does; :func:`legacy_answer` says whether a legacy client gets it at all),
:class:`Recover` a recovery event fired in stream order (it publishes nothing). Intents are
mutable, slotted and small: one is made for every forwarded message chunk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .conditions import (
    AUTH_REQUIRED,
    INTERNAL_ERROR,
    LEGACY_ADAPTER_ERRORS,
    LEGACY_END_TURN,
    Condition,
    Recovery,
    startup_failure_code,
)
from .wire import Category

__all__ = [
    "Forward",
    "Intent",
    "Publish",
    "Recover",
    "Reject",
    "Settle",
    "Transition",
    "legacy_answer",
    "legacy_error",
    "notice_update",
    "text_update",
]

#: The incident machine's publishing events (what a delivered :class:`Publish` fires).
Transition = Literal["warn", "fail", "notify", "restore", "window_warn"]


@dataclass(slots=True)
class Publish:
    """Publish a record of ``incident_id`` (its revision is computed when it is materialised)."""

    incident_id: str
    turn_id: str | None
    condition: Condition
    category: Category
    title: str
    details: str | None
    transition: Transition
    prompt_turn: str | None = None  # set: the record rides this turn's PromptResponse
    window: tuple[str, int | None] | None = None  # a usage-limit window's: (its name, its reset time)
    limits: tuple[dict[str, Any], ...] = ()  # ``rateLimits`` entries beside the record (issue 52.2)
    stop_reason: str = "end_turn"  # the PromptResponse's (an agent's turn cut short keeps its own)


@dataclass(slots=True)
class Forward:
    """Forward a ``session/update`` unchanged (a message chunk, a notice update)."""

    update: dict[str, Any]


@dataclass(slots=True)
class Settle:
    """Answer the turn's ``session/prompt`` with a stop reason and no record."""

    turn_id: str
    stop_reason: str


@dataclass(slots=True)
class Reject:
    """Answer the turn's ``session/prompt`` with a legacy JSON-RPC error."""

    turn_id: str
    code: int
    message: str
    data: dict[str, Any] | None


@dataclass(slots=True)
class Recover:
    """Fire a recovery event in stream order (publishes nothing; applied when reached)."""

    policy: Recovery


#: Every kind of planned send.
Intent = Publish | Forward | Settle | Reject | Recover


def text_update(kind: str, text: str) -> dict[str, Any]:
    """A ``session/update`` text chunk (``agent_message_chunk``, ``user_message_chunk``)."""
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def notice_update(severity: str, title: str, description: str | None) -> dict[str, Any]:
    """An ACP ``notice`` update (for a client that declared notices); no empty ``description``."""
    update: dict[str, Any] = {"sessionUpdate": "notice", "severity": severity, "title": title}
    if description:
        update["description"] = description
    return update


def legacy_error(
    turn_id: str, cond: Condition, text: str, shown: str, kind: str | None, startup: str | None = None, **refused: Any
) -> Reject:
    """The JSON-RPC error a legacy client gets, exactly as the reference adapter sends it.

    Authentication: ``-32000 "Authentication required"`` with no data. Anything else: ``-32603``
    with ``"Internal error: <Claude's text>"`` (redacted: ``shown``; an error result's text is
    :func:`~lifecycle.titles.legacy_result_text`'s) and ``data: {"errorKind": K}``
    when Claude's failure came with an SDK error kind ``K``; the adapter's own conditions carry the
    reference's ``errorKind`` and, where it has one, its text (:data:`LEGACY_ADAPTER_ERRORS`).
    ``refused``: what is known of the usage-limit window that refused the turn
    (:func:`lifecycle.limits.refused_data`: ``resetsAt``, ``retryAfterSeconds``), beside
    ``errorKind`` (issue 52.2). A start-up failure (``startup``: Claude Code's
    ``startup_failure_reason``) is the reference's ``startupFailureError``: Claude Code's own message
    (redacted) under the reason's code
    (:func:`~lifecycle.conditions.startup_failure_code`), ``data: {"startupFailureReason": R}``.
    """
    if startup:
        return Reject(turn_id, startup_failure_code(startup), shown, {"startupFailureReason": startup})
    if cond.legacy_code == AUTH_REQUIRED:
        return Reject(turn_id, AUTH_REQUIRED, "Authentication required", None)
    adapter = LEGACY_ADAPTER_ERRORS.get(cond.key)
    if adapter is not None and not text:
        kind, with_text = adapter
        message = f"Internal error: {shown}" if with_text else "Internal error"
    else:
        message = f"Internal error: {shown}" if text else "Internal error"
    data = {**({"errorKind": kind} if kind else {}), **refused}
    return Reject(turn_id, INTERNAL_ERROR, message, data or None)


def legacy_answer(
    turn_id: str, cond: Condition, text: str, shown: str, kind: str | None, startup: str | None = None, **refused: Any
) -> Reject | Settle:
    """How a legacy client's prompt is answered when its turn fails with ``cond``: the reference
    adapter's JSON-RPC error (:func:`legacy_error`), or, for the adapter's own conditions it never
    reports (:data:`~lifecycle.conditions.LEGACY_END_TURN`: a stream that ended without a
    result), ``stopReason: end_turn``."""
    if cond.key in LEGACY_END_TURN:
        return Settle(turn_id, "end_turn")
    return legacy_error(turn_id, cond, text, shown, kind, startup, **refused)
