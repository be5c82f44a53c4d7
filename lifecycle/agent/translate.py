"""One Claude message, translated once: the transcript updates it shows and the event the ledger
judges, in the order they are sent.

Rules
-----
* The translation lane (:class:`Translation`, the sixth of :data:`lifecycle.agent.lanes.LANES`):
  every message record (:class:`lifecycle.agent.messages.ClaudeMessage`) is dispatched here, once,
  by its kind. The renderer (:class:`lifecycle.agent.stream.StreamRenderer`) turns it into updates and tells what
  only it knows (the text already streamed: ``shown``; the refusal explanation the stream
  carried); the event is built with those facts (:mod:`lifecycle.claude`'s ``sdk_*``), never
  patched afterwards.
* A result the hold lane holds (:attr:`lifecycle.agent.messages.Pass.hold`,
  :mod:`lifecycle.agent.hold`) shows its updates; its event is the hold lane's.
* ``quiet`` is the one predicate for "this turn shows nothing more": the ledger's flow is
  ``cancelled`` (its single owner, :attr:`lifecycle.ledger.SessionLedger.flow`). A quiet message
  shows nothing, and its turn's events (:data:`TURN_EVENTS`) are not judged; the renderer still
  sees it, so tool calls and streamed text stay consistent for the next turn. Other events
  (authentication, system notices) are judged whatever the turn.
* A ``system``/``init`` message also reports the client's MCP servers that failed to start
  (:meth:`lifecycle.agent.mcp.McpServers.startup_notices`): each is a step of its own, whatever
  the turn (they are the session's, not the turn's).
* A ``system``/``compact_boundary`` shows at once the context Claude Code kept
  (:meth:`lifecycle.agent.stream.StreamRenderer.compacted`: a ``usage_update``, the reference's).
* A prompt's failed result that an interrupt ended, after Claude Code's ``Interrupt`` hook
  reported it, is the turn's stop: its event is ``Cancelled``, not the failed ``Result``
  (:mod:`lifecycle.agent.interrupts`); any result takes the report.
* An assistant message that names messages Claude Code replaced (CLI 2.1.337's ``supersedes``:
  after a refusal fallback, or after a response whose tool call could not be parsed) ends first
  the tool calls those messages left open (``failed``: they will never run), on a step whose
  event is :class:`lifecycle.events.MessagesReplaced` (the uuids it names), judged before the
  message's own event: if one of them carried the failure the turn holds, that failure is
  superseded (the ledger's turn keeps the uuid of the message its held failure came in, from
  :attr:`lifecycle.events.Assistant.uuid`, and decides; this lane remembers nothing). Their text
  was shown as Claude Code printed it; ACP has no way to take a shown chunk back, and Claude Code
  leaves them out of the stored transcript, so a replay (``session/load``) shows the conversation
  it kept.
* A result the steering lane holds (:attr:`Pass.held`: a cycle a steer interrupted) shows
  nothing and is not judged, its tokens counted in the turn's usage; one it releases
  (:attr:`Pass.released`) is judged before the message that released it
  (:mod:`lifecycle.agent.steering`).
* A message the edge cannot read (:class:`lifecycle.claude.MalformedMessage`) is logged and
  judged as nothing; its updates are still shown.
* A ``RateLimitEvent`` (a usage-limit window changed state) is the session's, whatever the
  turn: one ``usage_update`` step, sent at once (before the turn's first usage too), with the
  renderer's last known ``used``/``size`` (``0``/``0`` while none is known: ACP requires both)
  and the windows in ``_meta`` (:func:`rate_limit_update`; docs/acp-agent.md, "Rate-limit
  windows"); each window it reports (:func:`lifecycle.claude.unified_windows`, its own first)
  is then judged as an event of its own, the first on the same step as the update (issue 32),
  stamped with the time it was read (``observed_at``: the ledger ends a warning whose reset is
  past, issue 52.5). A ``rateLimits`` entry always names its window: a reading of no named window
  (Claude Code's bare ``{"status": "allowed"}`` of a claude.ai login) adds no entry, and with no
  entry at all the key is left out.

Theory of operation
-------------------
:func:`translate` is sans-I/O: it returns the :class:`Step` list and whether the message ends the
turn in flight (a result); :func:`own_steps` is the same for a message of Claude Code's own turn
(:mod:`lifecycle.agent.background`). The session sends each step with
:meth:`lifecycle.acp.SessionPublisher.emit`: the updates, then the event, under one lock.
:func:`runtime_end` is the same for Claude Code going away: the tool calls left open fail, then
the loss is judged.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

import structlog

from ..claude import from_sdk_exception, sdk_assistant, sdk_rate_limit, sdk_result, sdk_system, unified_windows
from ..errors import LifecycleError
from ..events import (
    ApiRetry,
    Assistant,
    Cancelled,
    ChildRetry,
    Event,
    MessagesReplaced,
    ModelFallback,
    QueryEnded,
    QueryError,
    RateLimitWindow,
    Result,
)
from ..intents import text_update
from ..limits import limit_entry
from .interrupts import Interruptions
from .messages import ClaudeMessage, Kind, LaneParts, Pass, Step
from .stream import StreamRenderer, TurnUsage

if TYPE_CHECKING:
    from .mcp import McpServers

__all__ = [
    "RATE_LIMIT_META",
    "TURN_EVENTS",
    "Step",
    "Translation",
    "local_zone",
    "own_steps",
    "rate_limit_update",
    "runtime_end",
    "translate",
]

log = structlog.get_logger("lifecycle.agent")

#: Events that belong to the turn in flight: not judged while the turn shows nothing more.
TURN_EVENTS: Final = (Assistant, Result, ApiRetry, ModelFallback, MessagesReplaced)
#: The reference adapter's ``_meta`` key for the info object as Claude Code sent it.
RATE_LIMIT_META: Final = "_claude/rateLimit"


class Translation:
    """The translation lane (see the module): a prompt's message is translated, an own one's
    turn events detached."""

    __slots__ = ("interrupts", "mcp", "renderer")

    def __init__(self, renderer: StreamRenderer, mcp: McpServers, interrupts: Interruptions | None = None) -> None:
        self.renderer = renderer
        self.mcp = mcp
        self.interrupts = interrupts if interrupts is not None else Interruptions("")

    @classmethod
    def build(cls, parts: LaneParts) -> Translation:
        return cls(parts.renderer, parts.mcp, parts.interrupts)

    def run(self, p: Pass) -> list[Step]:
        steps = self._run(p)
        if p.child is None:
            return steps
        # a subagent's message, for a client that has child sessions (subagents.py); a retry in it
        # is the child's warning (children.py, issue 51.2), never the parent turn's
        return [Step(step.updates, _child_event(step.event), session=p.child) for step in steps]

    def _run(self, p: Pass) -> list[Step]:
        if p.own:
            if p.message.kind is Kind.RESULT:
                self.interrupts.take()  # an own turn's interrupt is no prompt's
            return own_steps(p.message, self.renderer, self.mcp, prompt_open=p.prompt_open)
        if p.held:  # a cycle a steer interrupted: its tokens are the turn's, the turn goes on
            self.interrupts.take()  # the steer's interrupt is no stop of the turn
            self.renderer.result(p.message.sdk)
            return []
        steps = translate(p.message, self.renderer, self.mcp, quiet=p.quiet)[0]
        if p.released is not None:  # the held result ends the turn after all (steering.py)
            event = None if p.quiet else _event(sdk_result, p.released)
            closing = [] if p.quiet else self.renderer.close_open_tools(background=False)
            if closing or event is not None:
                steps.insert(0, Step(closing, event))
        if p.message.kind is Kind.RESULT:
            steps = _interrupted(steps, self.interrupts)
        if p.hold:  # the prompt's result is held (hold.py): its updates show, its event waits there
            # (an interrupt that stopped the turn still answers it ``cancelled``)
            kept = [Step(s.updates, s.event if isinstance(s.event, Cancelled) else None) for s in steps]
            steps = [s for s in kept if s.updates or s.event is not None]
        return steps


def _child_event(event: Event | None) -> Event | None:
    if isinstance(event, ApiRetry):
        return ChildRetry(
            attempt=event.attempt, max_retries=event.max_retries, error_status=event.error_status, error=event.error
        )
    return event


def _interrupted(steps: list[Step], interrupts: Interruptions) -> list[Step]:
    """A prompt's result: a failed one that an interrupt ended (the ``Interrupt`` hook reported it)
    settles the turn ``cancelled``, not as a failure (:mod:`lifecycle.agent.interrupts`)."""
    last = steps[-1] if steps else None
    report = interrupts.settles(last.event if last is not None else None)
    if report is None or last is None:
        return steps
    log.info("turn.interrupted_settled", session_id=interrupts.session_id, source=report.source,
             reason=report.reason)  # fmt: skip
    return [*steps[:-1], Step(last.updates, Cancelled())]


def _event(build: Any, message: ClaudeMessage, **facts: Any) -> Event | None:
    try:
        event: Event | None = build(message.sdk, **facts)
    except LifecycleError:
        log.warning("runtime.malformed_message", kind=message.kind.value)
        return None
    return event


def translate(
    message: ClaudeMessage, renderer: StreamRenderer, mcp: McpServers, *, quiet: bool
) -> tuple[list[Step], bool]:
    """The steps ``message`` makes, and whether it ends the turn in flight (see the module)."""
    kind, sdk = message.kind, message.sdk
    if kind is Kind.STREAM:  # the hot path of a streamed turn: chunks, nothing to judge
        updates = renderer.stream_event(sdk)
        return ([] if quiet or not updates else [Step(updates)]), False
    if kind is Kind.RATE_LIMIT:  # the session's, whatever the turn (see the module)
        try:
            # The reading's time (the one clock the ledger sees: issue 52.5, a past reset).
            window = replace(sdk_rate_limit(sdk), observed_at=reading_time())
        except LifecycleError:
            log.warning("runtime.malformed_message", kind=kind.value)
            return [], False
        first, *others = unified_windows(window)
        update = Step([rate_limit_update(window, renderer.context(), model=renderer.model)], first)
        return [update, *(Step(event=other) for other in others)], False
    steps: list[Step] = []
    event: Event | None = None
    updates = []
    if kind is Kind.ASSISTANT:
        if message.replaces:  # CLI 2.1.337: Claude Code dropped these messages (see the module)
            log.info("runtime.messages_replaced", count=len(message.replaces))
            ended = renderer.replaced(message.replaces)
            if not quiet:  # the replacement is judged first: it may supersede the turn's held failure
                steps.append(Step(ended, MessagesReplaced(uuids=message.replaces)))
        updates, shown = renderer.assistant(sdk)
        refusal = renderer.refusal() if getattr(sdk, "stop_reason", None) == "refusal" else None
        event = _event(sdk_assistant, message, shown=shown, refusal=refusal)
    elif kind is Kind.USER:
        updates = renderer.user(sdk)
    elif kind is Kind.RESULT:
        if not quiet:
            updates = renderer.close_open_tools(background=False) + renderer.result(sdk)
        event = _event(sdk_result, message)
    elif kind is not Kind.SUGGESTION:  # a prediction is the suggestions lane's alone
        if kind is Kind.SYSTEM:
            steps.extend(_startup_failures(mcp, message))
            updates = renderer.compacted(sdk)
        event = _event(sdk_system, message)
    # a background command's terminal ends with its task, also in a cancelled turn (terminal.py)
    exits = [] if kind is Kind.SUGGESTION else renderer.background_terminals.task_message(message.subtype, message.data)
    if quiet:
        updates = []
        if isinstance(event, TURN_EVENTS):
            log.info("runtime.cancelled_turn_event_dropped", kind=kind.value)
            event = None
    updates = updates + exits
    if updates or event is not None:
        steps.append(Step(updates, event))
    return steps, kind is Kind.RESULT


def own_steps(message: ClaudeMessage, renderer: StreamRenderer, mcp: McpServers, *, prompt_open: bool) -> list[Step]:
    """The steps of an own message (see the module); ``prompt_open``: the ledger's flow is not
    ``idle``, so its turn events are not fed."""
    if message.kind is Kind.RESULT:
        log.info("runtime.own_turn_ended", origin=(message.origin or "")[:40])
        closing = renderer.close_open_tools(background=False)
        prompts, renderer.turn_usage = renderer.turn_usage, TurnUsage()  # its tokens are no prompt's
        try:
            closing += renderer.result(message.sdk)
        finally:
            renderer.turn_usage = prompts
        return [Step(closing)] if closing else []
    steps, _ = translate(message, renderer, mcp, quiet=False)
    if not prompt_open:
        return steps
    out = []
    for step in steps:
        event = step.event
        if not isinstance(event, TURN_EVENTS):
            out.append(step)
            continue
        log.info("runtime.own_turn_event_not_judged", kind=type(event).__name__)
        updates: list[dict[str, Any]] = list(step.updates)
        if isinstance(event, Assistant) and event.top_level and event.text and not event.shown:
            updates.append(text_update("agent_message_chunk", event.text))
        if updates:
            out.append(Step(updates))
    return out


#: The clock of a replayed conformance case (Unix seconds), which the conformance kit gives every
#: adapter it runs (``LIFECYCLE_CONFORMANCE_NOW``): a recorded case's windows are read at the time
#: it was written, so its resets do not pass with the calendar. Any other value is not a clock.
_PINNED_NOW: Final = os.environ.get("LIFECYCLE_CONFORMANCE_NOW", "")


def reading_time() -> int:
    """When a usage-limit reading is read, Unix seconds: now, or the conformance kit's pinned
    clock (:data:`_PINNED_NOW`)."""
    return int(_PINNED_NOW) if _PINNED_NOW.isdigit() and len(_PINNED_NOW) <= 11 else int(time.time())


def local_zone(seconds: int) -> tuple[int, str]:
    """The machine's local zone at ``seconds`` (its UTC offset then, and its name): the
    :data:`lifecycle.titles.ResetZone` the agent gives its ledgers, so a window's reset time reads
    in the agent machine's local time (DST included)."""
    local = datetime.fromtimestamp(seconds, UTC).astimezone()
    offset = local.utcoffset()
    return (int(offset.total_seconds()) if offset is not None else 0), local.tzname() or "local time"


def rate_limit_update(
    window: RateLimitWindow, context: tuple[int, int] | None, *, model: str | None = None
) -> dict[str, Any]:
    """The ``usage_update`` showing ``window``: ``used``/``size`` from ``context`` (``0``/``0``
    when unknown), and in ``_meta`` the info object as Claude Code sent it
    (:data:`RATE_LIMIT_META`, the reference's key) and ``rateLimits``, one provider-neutral entry
    per window it reports (``window``, ``status``, ``usedFraction``, ``resetsAt`` as ISO 8601
    UTC; a value Claude Code did not send, or sent unreadable, is left out) and ``model`` (the
    turn's last answer's) as ``_claude/model``, as the reference attaches it."""
    used, size = context if context is not None else (0, 0)
    # issue 52.5: an entry always names its window (limit_entry: None for one that names none)
    limits = [entry for entry in map(limit_entry, unified_windows(window)) if entry is not None]
    return {
        "sessionUpdate": "usage_update",
        "used": used,
        "size": size,
        "_meta": {RATE_LIMIT_META: dict(window.raw), **({"rateLimits": limits} if limits else {})}
        | ({"_claude/model": model} if model is not None else {}),
    }


def _startup_failures(mcp: McpServers, message: ClaudeMessage) -> list[Step]:
    """The steps reporting the client's MCP servers that a ``system``/``init`` message says did
    not start."""
    if message.subtype != "init" or not mcp.config:
        return []
    statuses = message.data.get("mcp_servers")
    return [Step([item]) if isinstance(item, dict) else Step(event=item) for item in mcp.startup_notices(statuses)]


def runtime_end(renderer: StreamRenderer, exc: BaseException | None, *, quiet: bool) -> list[Step]:
    """Claude Code went away (``exc``: how its stream failed; None: it ended): the tool calls it
    left open fail (unless the turn shows nothing more), then the loss is judged. An SDK
    ``ResultError`` (Claude Code exited after an error result, which was seen) is that result,
    then a loss: a long-lived runtime that exits is lost, whatever it said last."""
    closing = [] if quiet else renderer.close_open_tools()
    if exc is None:
        return [Step(closing, QueryEnded())]
    event = from_sdk_exception(exc)
    steps = [Step(closing, event)]
    if not isinstance(event, QueryError):
        steps.append(Step(event=QueryError(message=type(exc).__name__)))
    return steps
