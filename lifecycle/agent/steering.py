"""Steering: a follow-up message a client injects into the turn that is running (the reference
adapter 0.101.0's ``_session/steering``), answered inside that turn.

Rules
-----
* ``_session/steering`` takes ``{sessionId, prompt, _meta?}`` (:func:`parse_steer`): a non-empty
  ``sessionId`` string, a non-empty ``prompt`` array of content blocks (the blocks of
  ``session/prompt``, converted the same way: an empty steer, text of nothing but whitespace, is
  ``-32602`` as an empty prompt is), at most :data:`MAX_STEER_BYTES` of content as sent to Claude
  Code, and ``_meta.steering.idleBehavior`` absent or ``"promptRequired"``. Anything else is
  ``-32602`` with the reason; nothing is sent, and the running turn goes on untouched.
* While a prompt's turn runs, the steer is written to Claude Code as a user message of its own
  (a fresh ``uuid``), at priority ``now`` (it pre-empts the generation in progress) or ``later``
  while a permission question or a form is open (interrupting the callback would withdraw the
  client's question, as the reference notes, IJAI-1191); the answer is ``{"outcome":
  "injected"}``. Its text is answered inside the same turn: the turn's ``session/prompt`` is
  answered only once a result answers the steer.
* With no turn running, the reference's answers: ``{"outcome": "promptRequired", "reason":
  "noRunningTurn"}`` for a client that asked for it (``idleBehavior: "promptRequired"``: the text
  stays the client's, to send as a ``session/prompt``), else ``{"outcome": "startedNewTurn"}``
  and the text runs as a prompt whose answer nobody awaits (the reference's default). Its
  failure is reported as the reference reports it: an error line in the agent's log
  (``steer.new_turn_failed``, with the JSON-RPC code, or ``record`` for the answer's failure
  record that no client receives), never in a ``PromptResponse``.
* The lane (:class:`Steering`, after own turns in :data:`lifecycle.agent.lanes.LANES`): Claude
  Code answers a steer by ending the cycle it interrupts with a result of its own (an
  ``error_during_execution`` result, ``terminal_reason`` ``aborted_streaming``, naming the
  prompt only) and running the steered message as a new cycle whose result names the steer's
  ``uuid`` (``user_message_uuids``; CLI 2.1.337, seen on the wire). A result of the prompt's turn
  that names no steer still unanswered is therefore **held** (:attr:`Pass.held`): it ends
  nothing and is not judged (the turn goes on), its tokens count in the turn's usage. The
  result that names the last unanswered steer ends the turn as any result does. Should Claude
  Code go idle (``session_state_changed``: ``idle``, its "the turn is over" signal) with a steer
  unanswered (it dropped it: an interrupt cancels what is queued), the last held result is
  **released** (:attr:`Pass.released`): the turn ends with it.
* A steer Claude Code cannot take (it stopped) is ``-32603`` "Internal error: Claude Code stopped;
  the steer was not sent": the running turn ends with Claude Code's loss, as it would without it.
* A steer is not a prompt: it opens no turn in the ledger, has no ``PromptStarted``, no answer
  of its own and no record of its own; whatever its cycle shows or fails with is the running
  turn's.

Theory of operation
-------------------
The session asks :meth:`Steering.running` whether a steer can be injected, marks it
(:meth:`Steering.inject`) before it writes it, and tells the lane when a turn opens
(:meth:`Steering.open`) and when its runtime is gone (:meth:`Steering.reset`). The lane itself is
sans-I/O: :meth:`Steering.run` reads the record and sets the pass's ``held`` or ``released``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

import structlog

from .messages import ClaudeMessage, Kind, LaneParts, Pass, Step
from .prompt import PromptContent, PromptRefused, prompt_content

__all__ = [
    "MAX_STEER_BYTES", "STEER_METHOD", "SteerInvalid", "SteerNotSent", "SteerRequest", "Steered", "Steering",
    "parse_steer", "steer", "steer_size",
]  # fmt: skip

log = structlog.get_logger("lifecycle.agent")

#: The extension method (the ACP SDK hands it to ``ext_method`` without its leading ``_``).
STEER_METHOD: Final = "session/steering"
#: The most content a steer may carry, as the JSON Claude Code receives (text, images, context).
MAX_STEER_BYTES: Final = 1024 * 1024
_IDLE_BEHAVIORS: Final = (None, "promptRequired")


class SteerInvalid(ValueError):
    """A steer the agent refuses (``-32602``); ``str(error)`` is the client's message."""


class SteerNotSent(RuntimeError):
    """Claude Code could not take the steer (it stopped; the running turn ends with that loss)."""


@dataclass(frozen=True, slots=True)
class SteerRequest:
    """A checked ``_session/steering`` request: its session, its content blocks (raw JSON) and
    whether the client handles "no running turn" itself."""

    session_id: str
    prompt: list[Any]
    prompt_required: bool


def parse_steer(params: object) -> SteerRequest:
    """The request's params checked (see the module); raises :class:`SteerInvalid`."""
    if not isinstance(params, Mapping):
        raise SteerInvalid("steer params must be an object")
    session_id, prompt, meta = params.get("sessionId"), params.get("prompt"), params.get("_meta")
    if not isinstance(session_id, str) or not session_id:
        raise SteerInvalid("steer params require a non-empty sessionId")
    if not isinstance(prompt, list) or not prompt:
        raise SteerInvalid("steer params require a non-empty prompt array")
    steering = meta.get("steering") if isinstance(meta, Mapping) else None
    idle = steering.get("idleBehavior") if isinstance(steering, Mapping) else None
    if idle not in _IDLE_BEHAVIORS:
        raise SteerInvalid("unsupported steering idleBehavior")
    return SteerRequest(session_id, prompt, idle == "promptRequired")


def steer_size(content: object) -> int:
    """The size of a steer's content as Claude Code receives it (UTF-8 JSON bytes)."""
    return len(json.dumps(content, ensure_ascii=False).encode())


class Steering:
    """The steering lane and the session's steers in flight (see the module)."""

    __slots__ = ("_held", "_open", "_pending")

    def __init__(self) -> None:
        self._pending: set[str] = set()  # steers of the running turn no result answered yet
        self._held: ClaudeMessage | None = None  # the last result held for them
        self._open = False  # a prompt's turn runs and its ending result has not come

    @classmethod
    def build(cls, parts: LaneParts) -> Steering:
        return cls()

    # -------------------------------------------------------------- the session's side

    def open(self) -> None:
        """A prompt's turn starts (its user message is about to be written)."""
        self._open = True

    def running(self) -> bool:
        """Whether a prompt's turn runs that a steer can join (its ending result has not come)."""
        return self._open

    def inject(self, steer_id: str) -> None:
        """A steer (its user message ``uuid``) is about to be written into the running turn."""
        self._pending.add(steer_id)

    def withdraw(self, steer_id: str) -> None:
        """The steer could not be written: no result will answer it."""
        self._pending.discard(steer_id)

    def dropped(self, steer_id: str) -> bool:
        """Claude Code dropped the queued steer (a cancel): no result will answer it. Whether that
        leaves a held result waiting for nothing (it is forgotten: the cancelled turn is over)."""
        self._pending.discard(steer_id)
        if self._pending or self._held is None:
            return False
        self._held, self._open = None, False
        return True

    @property
    def pending(self) -> frozenset[str]:
        """The steers no result answered yet."""
        return frozenset(self._pending)

    def reset(self) -> None:
        """The runtime is gone (or replaced): nothing it was doing will answer."""
        self._pending.clear()
        self._held = None
        self._open = False

    # -------------------------------------------------------------- the lane

    def run(self, p: Pass) -> list[Step]:
        """Sets ``p.held`` or ``p.released`` (see the module); shows nothing itself."""
        message = p.message
        if message.kind is Kind.RESULT and not p.own:
            self._pending.difference_update(message.names)
            if self._pending:
                p.held, self._held = True, message
                return []
            self._held, self._open = None, False
            return []
        if (
            self._held is not None
            and message.kind is Kind.SYSTEM
            and message.subtype == "session_state_changed"
            and message.data.get("state") == "idle"
        ):
            p.released, self._held, self._open = self._held, None, False
            self._pending.clear()
        return []


# ------------------------------------------------------------------ the request


class Steered(Protocol):
    """What a steer needs of a session (:class:`lifecycle.agent.session._Session`)."""

    @property
    def id(self) -> str: ...

    async def steer(self, content: PromptContent) -> str | None: ...

    async def run_prompt(self, content: PromptContent) -> Any: ...


async def steer(
    params: object, session_of: Callable[[str], Steered], detached: set[asyncio.Future[Any]]
) -> dict[str, Any]:
    """Answer a ``_session/steering`` request (see the module): the text joins the running turn
    (``injected``), or, with none running, the reference's ``promptRequired`` (the client asked for
    it) or ``startedNewTurn`` (a prompt nobody awaits, kept in ``detached`` while it runs). Bad
    input is ``-32602`` (``session_of`` raises it for an unknown or closed session); nothing runs.
    """
    from acp import RequestError

    try:
        request = parse_steer(params)
    except SteerInvalid as exc:
        raise RequestError.invalid_params({"details": str(exc)}) from None
    session = session_of(request.session_id)
    try:
        content = prompt_content(request.prompt)
    except PromptRefused as refused:
        raise RequestError(-32602, f"Invalid params: {refused.message}", refused.data) from None
    size = steer_size(content)
    if size > MAX_STEER_BYTES:
        details = f"the steer is too large: {size} bytes of content; at most {MAX_STEER_BYTES}"
        raise RequestError.invalid_params({"details": details, "maxBytes": MAX_STEER_BYTES})
    try:
        injected = await session.steer(content)
    except SteerNotSent:
        message = "Internal error: Claude Code stopped; the steer was not sent"
        raise RequestError(-32603, message, {"details": "the running turn ends with Claude Code's loss"}) from None
    if injected is not None:
        return {"outcome": "injected"}
    if request.prompt_required:
        log.info("steer.prompt_required", session_id=session.id)
        return {"outcome": "promptRequired", "reason": "noRunningTurn"}
    task = asyncio.ensure_future(session.run_prompt(content))
    detached.add(task)
    task.add_done_callback(lambda done: _detached_done(done, detached, session.id))
    log.info("steer.started_new_turn", session_id=session.id)
    return {"outcome": "startedNewTurn"}


def _detached_done(task: asyncio.Future[Any], detached: set[asyncio.Future[Any]], session_id: str) -> None:
    """A prompt a steer started (nobody awaits its answer): its end is logged, a failure as an
    error, as the reference reports it ("steered new turn failed", ``logger.error`` of the
    detached prompt's rejection): its JSON-RPC code, or, for a client that takes records, that
    the answer carried one (its ``_meta``); never the text."""
    detached.discard(task)
    if task.cancelled():
        return
    exc = task.exception()
    if exc is None:
        response = task.result()
        stop_reason = getattr(response, "stop_reason", None)
        if getattr(response, "field_meta", None):  # the turn's failure record: nobody receives it
            log.error("steer.new_turn_failed", session_id=session_id, stop_reason=stop_reason, record=True)
        log.info("steer.new_turn_end", session_id=session_id, stop_reason=stop_reason)
    else:
        code = getattr(exc, "code", None)
        log.error("steer.new_turn_failed", session_id=session_id, error_type=type(exc).__name__,
                  error_code=code if isinstance(code, int) else None)  # fmt: skip
        log.info("steer.new_turn_end", session_id=session_id, error_type=type(exc).__name__)
