"""A prompt held open for the background subagents it started, as the reference adapter 0.101.0
holds it (``Turn.deferredSettle``): the user sees a background subagent's answer inside the turn.

Claude Code (2.1.332 and later) runs a subagent in the background unless told otherwise: the
``Agent`` call completes "launched", the prompt's result comes at once, and the subagent works on;
when it ends, Claude Code starts a turn of its own (the task notification) in which the model
reports what the subagent found. A client that stops listening at the prompt's answer (acpx's
``exec`` stops the agent then) would never show that report, and a subagent's permission
question would be asked out of any turn.

Rules
-----
* A background subagent is a task Claude Code reports with ``system``/``task_started`` whose
  ``subagent_type`` is a non-empty string; it is live until its ``task_notification`` or a
  ``task_updated`` whose ``patch.status`` is ``completed``, ``failed`` or ``killed`` (the
  reference's ``liveBackgroundTasks``; a background Bash is a task too, but never holds a prompt:
  the reference's "shells never defer"). The live tasks are bounded (:data:`MAX_LIVE`: past it the
  oldest is forgotten).
* A subagent started while a prompt is in flight (and its turn shows on: not cancelled) is that
  prompt's, also one started during the hold (an agent chain extends it); a prompt waits only for
  its own.
* The prompt's result (not an own turn's, not a cancelled turn's) that comes while a subagent of
  the prompt is live is **held**: its updates are shown (translation), its event is kept here and
  not fed to the ledger, so the prompt's turn stays open (the ledger's flow stays in ``in_turn``:
  a subagent's permission question is asked inside it, a cancel settles it ``cancelled``).
* The hold ends, and the kept result is fed (after every lane's steps for the message:
  :attr:`lifecycle.agent.messages.Pass.after`), at the result of an own turn (the follow-up that
  reports the subagent: ``origin`` ``task-notification``) that made a request (``num_turns > 0``;
  Claude Code 2.1.274+ answers batched notifications with placeholders of ``num_turns: 0``), or
  that failed (``is_error``: its request met an error, no report will come), once
  none of the prompt's subagents is live. The session ends it earlier: a new prompt hands off
  (the held result is fed first, as the reference's echo hand-off), Claude Code going away (the
  held result, then the loss), and ``session/cancel`` or the session's close (the turn is answered
  ``cancelled``: the held result is dropped).
* A client that declared AIR's ``backgroundSubagents``
  (:attr:`lifecycle.negotiation.ClientState.background_subagents`) keeps listening after the
  answer: its prompts are never held (the reference's ``endsTurnsWithLiveSubagents``).

Theory of operation
-------------------
:class:`BackgroundHold` is the fifth lane (:data:`lifecycle.agent.lanes.LANES`), after the
own-turns lane (which tells the prompt's result from an own turn's) and before translation (which
reads :attr:`~lifecycle.agent.messages.Pass.hold`). Sans-I/O: the session asks :meth:`take` for
the kept result when it ends the hold itself, and :meth:`drop` when the prompt was answered
otherwise. Claude Code 2.1.337 sends no ``idle`` state to this agent, so a subagent that ends
without waking the model keeps the prompt open until one of the session's ends (the reference's
accepted residual, without its idle fallback).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import structlog

from ..claude import sdk_result
from ..errors import LifecycleError
from ..events import Event
from .messages import ClaudeMessage, Kind, LaneParts, Pass, Step

__all__ = ["MAX_LIVE", "BackgroundHold"]

log = structlog.get_logger("lifecycle.agent")

#: How many live background tasks a session remembers (a hostile stream cannot grow the set).
MAX_LIVE: Final = 256
#: A ``task_updated`` patch status that ends the task.
_ENDED: Final = frozenset({"completed", "failed", "killed"})


class BackgroundHold:
    """Holds the prompt's result while background subagents it started work (see the module)."""

    __slots__ = ("enabled", "held", "live", "spawned", "turn")

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled  # the client stops listening at the answer (not backgroundSubagents)
        self.live: dict[str, bool] = {}  # live background tasks -> is a subagent (insertion order)
        self.turn: str | None = None  # the prompt the spawned subagents belong to
        self.spawned: set[str] = set()  # the subagents that prompt started
        self.held: Event | None = None  # the prompt's result, kept while they work

    @classmethod
    def build(cls, parts: LaneParts) -> BackgroundHold:
        return cls(enabled=not parts.client.background_subagents)

    @property
    def waiting(self) -> bool:
        """A subagent the prompt started is still live."""
        return any(self.live.get(task, False) for task in self.spawned)

    def run(self, p: Pass) -> list[Step]:
        """The lane (:mod:`lifecycle.agent.lanes`): tracks the tasks, holds and gives back the
        prompt's result; shows nothing itself."""
        message = p.message
        if p.turn != self.turn:  # a new prompt (or none): its subagents are its own
            self.turn, self.spawned = p.turn, set()
        if message.kind in (Kind.SYSTEM, Kind.OTHER):
            self._task(message, p)
        elif message.kind is Kind.RESULT:
            self._result(message, p)
        return []

    def _task(self, message: ClaudeMessage, p: Pass) -> None:
        data = message.data
        task = data.get("task_id")
        if not isinstance(task, str):
            return
        if message.subtype == "task_started":
            kind = data.get("subagent_type")
            subagent = isinstance(kind, str) and bool(kind)
            self.live.pop(task, None)
            self.live[task] = subagent
            if len(self.live) > MAX_LIVE:
                del self.live[next(iter(self.live))]
            if subagent and p.turn is not None and not p.quiet:
                self.spawned.add(task)
        elif message.subtype == "task_notification":
            self.live.pop(task, None)
        elif message.subtype == "task_updated":
            patch = data.get("patch")
            if isinstance(patch, Mapping) and patch.get("status") in _ENDED:
                self.live.pop(task, None)

    def _result(self, message: ClaudeMessage, p: Pass) -> None:
        if p.ends:  # the prompt's result (or a cancelled turn's)
            steered = p.released is not None  # the steering lane ends the turn with a result it held
            open_turn = p.turn is not None and not p.quiet and not steered
            if self.enabled and open_turn and self.held is None and self.waiting:
                try:
                    self.held = sdk_result(message.sdk)
                except LifecycleError:
                    return  # translation judges it as it is (logged there)
                p.hold = True
                log.info("prompt.held_for_subagents", subagents=len(self.spawned))
            return
        turns = getattr(message.sdk, "num_turns", 0)
        ran = (isinstance(turns, int) and turns > 0) or getattr(message.sdk, "is_error", False) is True
        if self.held is not None and ran and not self.waiting:
            held = self.take()
            if held is not None:
                log.info("prompt.hold_released", reason="subagents_answered")
                p.after.append(Step(event=held))

    def take(self) -> Event | None:
        """The kept result, once (None when nothing is held); the hold ends."""
        held, self.held = self.held, None
        return held

    def drop(self) -> None:
        """The prompt was answered otherwise (cancelled, closed, lost): the kept result is dropped."""
        if self.held is not None:
            log.info("prompt.hold_dropped")
        self.held = None
