"""A child session's lifecycle (issue 51.2): a subagent's failures on its own session, never the
parent turn's.

Rules
-----
* A child (a subagent shown as an ACP child session, ``clientCapabilities.subagents``) has no
  ``PromptResponse`` of its own, so by the spec's "Delivery surfaces" its records are those of a
  failure with no prompt response: they ride ``session_info_update`` on the **child's** session
  (the ledger of a child is a :class:`~lifecycle.ledger.SessionLedger` whose session id is the
  child's). The parent's ledger never sees them: a child's failure never moves the parent's
  turn, and never makes a second record on the parent.
* The child's run is its one turn: its incident id is ``<childSessionId>:error``
  (:func:`lifecycle.ids.turn_error_id` of the child's session id, the spec's "live turn
  failures use ``<turnId>:error``"). A retry inside the child (:class:`~lifecycle.events.ChildRetry`)
  is a ``warning`` under that id, updated in place by the next retry (a higher revision), with
  the same title and category as a turn's retry (:func:`~lifecycle.titles.retry_title`,
  :func:`~lifecycle.conditions.retry_condition`); the child's terminal failure updates it to an
  ``error``, as a turn's terminal failure updates its retry warning.
* The child's end (:class:`~lifecycle.events.ChildEnded`): ``failed`` publishes the ``error``
  record with the condition :func:`child_failure` reads from Claude Code's text (its category,
  actions and recovery policy are the conditions table's); ``completed`` is the child's
  confirmed attempt: its retry warning recovers silently; ``cancelled`` and ``unexplained``
  (the child stopped with its runtime or its session) are no failure: nothing is published and
  the warning is let go silently. A second end, or a retry after the end, changes nothing (noted).
* Recovery follows the spec's "Internal recovery" in the child's ledger like in any other: the
  record stays in the child's transcript; an authentication failure stays active until a
  successful ``auth_status`` reaches that ledger, and so on.
* Legacy (no ``sessionFailure``): nothing is published. The child's end state carries the
  JSON-RPC error a legacy client would get for the same condition (:func:`child_error`): its
  code (-32603; -32000 for authentication) and data (``errorKind``), with Claude Code's own text
  as the message (the reference adapter's ``rfdEndState``).

Theory of operation
-------------------
:class:`ChildFlow` is the ledger's part for these two events; it reaches the ledger through the
same narrow port as the turn (plan a send, look an incident up, recover, note) and keeps one bit:
whether the child ended.
"""

from __future__ import annotations

import re
from typing import Any, Final, Protocol

from .answers import Incident
from .conditions import CONDITIONS, Condition, Recovery, classify_assistant_error, retry_condition
from .errors import LocalProtocolError
from .events import AgentRetrying, ApiRetry, ChildEnded, ChildRetry
from .ids import turn_error_id
from .intents import Publish, legacy_error
from .titles import present, retry_title

__all__ = ["CHILD_STATUSES", "ChildFlow", "child_error", "child_failure", "plan_retry"]

#: The statuses a child ends with (:class:`~lifecycle.events.ChildEnded`).
CHILD_STATUSES: Final = frozenset({"completed", "failed", "cancelled", "unexplained"})
#: Claude Code 2.1.337 ends a subagent whose API calls failed with "Agent terminated early due to
#: an API error: API Error: … (error type rate_limit, HTTP 429, request id …)": the SDK error kind
#: is the one after "error type".
_ERROR_TYPE: Final = re.compile(r"\(error type ([a-z_]+)\b")


class ChildPort(Protocol):
    """What the child's flow may ask of its ledger."""

    def incident(self, incident_id: str) -> Incident | None: ...

    def plan(self, intent: Publish) -> None: ...

    def recover(self, policy: Recovery, *, exclude_turn: str | None = None) -> None: ...

    def note(self, what: str, **fields: Any) -> None: ...


def plan_retry(port: ChildPort, turn_id: str, ev: ApiRetry | ChildRetry | AgentRetrying, *, negotiated: bool) -> None:
    """A retry's warning under ``<turnId>:error`` (a prompt's turn, or a child's run): the same id
    updated in place (spec: "SDK ``api_retry`` progress reuses the active turn failure id"); nothing
    after that id's terminal failure (noted), nothing for a legacy client. Another ACP agent's own
    report (:class:`AgentRetrying`, :mod:`lifecycle.neutral`) is its own title."""
    incident_id = turn_error_id(turn_id)
    current = port.incident(incident_id)
    if current is not None and current.state != "retrying":
        port.note("api_retry_after_terminal_failure", incident_id=incident_id)
        return
    if not negotiated:
        return  # legacy: retry progress was never shown
    if isinstance(ev, AgentRetrying):
        from .neutral import agent_title, retry_condition_of

        row, category, title = retry_condition_of(ev.category), ev.category, agent_title(ev.words, "")[0]
    else:
        row, category = retry_condition(ev.error_status, ev.error)
        title = retry_title(ev.attempt, ev.max_retries, has_response=ev.error_status is not None)
    port.plan(Publish(incident_id, turn_id, row, category, title, None, "warn"))


def child_failure(text: str | None) -> tuple[Condition, str | None]:
    """The condition of a child that failed with Claude Code's ``text``, and the SDK error kind it
    names (None: none). The text is classified as a top-level failure's (a usage limit, a login
    message, the kind); a text that names nothing is ``unrecognized_error`` (``service``), never
    success."""
    if not text:
        return CONDITIONS["unrecognized_error"], None
    match = _ERROR_TYPE.search(text)
    kind = match.group(1) if match is not None else None
    cond = classify_assistant_error(kind, text)
    return cond, kind if cond.key == kind else None


def child_error(text: str | None) -> dict[str, Any]:
    """The JSON-RPC ``error`` of a failed child's end state: the code and data a legacy client's
    prompt error has for the same condition (:func:`lifecycle.intents.legacy_error`), with Claude
    Code's text (redacted, trimmed) as the message, the reference adapter's."""
    cond, kind = child_failure(text)
    shown = present(text or "", "error_result")
    message = shown[1] or shown[0]
    legacy = legacy_error("child", cond, text or "", message, kind)
    error: dict[str, Any] = {"code": legacy.code, "message": message}
    if legacy.data:
        error["data"] = legacy.data
    return error


class ChildFlow:
    """A child ledger's part (see the module)."""

    __slots__ = ("_ended", "_negotiated", "_port", "_session_id")

    def __init__(self, port: ChildPort, session_id: str, *, negotiated: bool) -> None:
        self._port = port
        self._session_id = session_id
        self._negotiated = negotiated
        self._ended = False

    @property
    def ended(self) -> bool:
        return self._ended

    def on_retry(self, ev: ChildRetry) -> None:
        if self._ended:
            self._port.note("child_retry_after_end", incident_id=turn_error_id(self._session_id))
            return
        plan_retry(self._port, self._session_id, ev, negotiated=self._negotiated)

    def on_ended(self, ev: ChildEnded) -> None:
        if ev.status not in CHILD_STATUSES:  # refused before anything changes
            raise LocalProtocolError(f"a child cannot end {str(ev.status)[:40]!r}: not one of {sorted(CHILD_STATUSES)}")
        if self._ended:
            self._port.note("child_end_repeated", status=ev.status)
            return
        self._ended = True
        if ev.status != "failed":
            # the attempt is over and nothing failed: a retry warning stops being active, silently
            self._port.recover(Recovery.CONFIRMED_ATTEMPT)
            return
        if not self._negotiated:
            self._port.note("child_failure_legacy_in_end_state")
            return
        cond, _ = child_failure(ev.error)
        title, details = present(ev.error or "", "error_result")
        incident_id = turn_error_id(self._session_id)
        self._port.plan(Publish(incident_id, self._session_id, cond, cond.category, title, details, "fail"))
