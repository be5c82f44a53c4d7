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
  oldest is forgotten). Claude Code's level signal (``system``/``background_tasks_changed``: every
  live background task, on each change) ends a task it no longer lists, should its own end be
  lost (the reference's ``endedPerLevel``); a later level that lists it again makes it live again
  (a racing level).
* A subagent started while a prompt is in flight (and its turn shows on: not cancelled) is that
  prompt's, also one started during the hold (an agent chain extends it); a prompt waits only for
  its own. One that ran in the background (``is_backgrounded`` at its start or in a
  ``task_updated`` patch) and ended is **owed** a report: Claude Code wakes the model for it.
* The prompt's result (not an own turn's, not a cancelled turn's) that comes while a subagent of
  the prompt is live, or owed a report (it ended before the result: the report comes in a turn
  of Claude Code's own after it; the reference answers at once here, and the user never sees the
  report inside the turn), is **held**: its updates are shown (translation), its event is kept
  here and not fed to the ledger, so the prompt's turn stays open (the ledger's flow stays in
  ``in_turn``: a subagent's permission question is asked inside it, a cancel settles it
  ``cancelled``).
* The hold ends, and the kept result is fed (after every lane's steps for the message:
  :attr:`lifecycle.agent.messages.Pass.after`), once none of the prompt's subagents is live:
  at the result of an own turn (the follow-up that reports the subagent: ``origin``
  ``task-notification``) that made a request (``num_turns > 0``; Claude Code 2.1.274+ answers
  batched notifications with placeholders of ``num_turns: 0``), or that failed (``is_error``: its
  request met an error, no report will come); or when Claude Code goes idle
  (``session_state_changed`` ``idle``, which it withholds while background agents run: the
  reference's idle fallback, ``settleDeferredIfDrained``), for a report the model got inside the
  prompt's own turn or one that never came. The session ends it earlier: a new prompt hands off
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
otherwise. Claude Code sends its session states to this agent as to the reference
(``CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS``, :func:`lifecycle.agent.launch.cli_env`). A subagent
whose end Claude Code never reports, neither as its own end nor in a level, keeps the prompt open
until one of the session's ends (the reference's accepted residual: it has no timer either).
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

    __slots__ = ("background", "enabled", "held", "lapsed", "live", "owed", "spawned", "turn")

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled  # the client stops listening at the answer (not backgroundSubagents)
        self.live: dict[str, bool] = {}  # live background tasks -> is a subagent (insertion order)
        self.lapsed: dict[str, bool] = {}  # tasks a level ended (their own end was never seen)
        self.background: set[str] = set()  # live subagents that run in the background
        self.turn: str | None = None  # the prompt the spawned subagents belong to
        self.spawned: set[str] = set()  # the subagents that prompt started
        self.owed: set[str] = set()  # its background subagents that ended: a report is to come
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
            self.turn, self.spawned, self.owed = p.turn, set(), set()
        if message.kind in (Kind.SYSTEM, Kind.OTHER):
            self._task(message, p)
            if message.subtype == "session_state_changed" and message.data.get("state") == "idle":
                self._idle(p)
        elif message.kind is Kind.RESULT:
            self._result(message, p)
        return []

    def _task(self, message: ClaudeMessage, p: Pass) -> None:
        data = message.data
        if message.subtype == "background_tasks_changed":
            self._level(data.get("tasks"))
            return
        task = data.get("task_id")
        if not isinstance(task, str):
            return
        if message.subtype == "task_started":
            kind = data.get("subagent_type")
            subagent = isinstance(kind, str) and bool(kind)
            self.live.pop(task, None)
            self.lapsed.pop(task, None)
            self.live[task] = subagent
            if data.get("is_backgrounded") is True:
                self.background.add(task)
            if len(self.live) > MAX_LIVE:
                self._forget(next(iter(self.live)))
            if subagent and p.turn is not None and not p.quiet:
                self.spawned.add(task)
        elif message.subtype == "task_notification":
            self._ended(task)
        elif message.subtype == "task_updated":
            patch = data.get("patch")
            if not isinstance(patch, Mapping):
                return
            if patch.get("is_backgrounded") is True and task in self.live:
                self.background.add(task)
            if patch.get("status") in _ENDED:
                self._ended(task)

    def _ended(self, task: str) -> None:
        """The task ended (its own end): a background subagent of the prompt is owed a report."""
        if task in self.spawned and task in self.live:  # (its first end: a patch, then its notification)
            if task in self.background:
                self.owed.add(task)
            log.info("prompt.subagent_ended", task_id=task, background=task in self.background)
        self._forget(task)
        self.lapsed.pop(task, None)

    def _forget(self, task: str) -> None:
        self.live.pop(task, None)
        self.background.discard(task)

    def _level(self, tasks: object) -> None:
        """Claude Code's level signal: the live background tasks, all of them (see the module)."""
        if not isinstance(tasks, list):
            return
        listed = {t.get("task_id") for t in tasks if isinstance(t, Mapping)}
        for task, subagent in list(self.lapsed.items()):
            if task in listed:  # a level raced its start: it is live after all
                del self.lapsed[task]
                self.live[task] = subagent
        for task, subagent in list(self.live.items()):
            if task not in listed:
                self.live.pop(task)
                self.lapsed[task] = subagent
                if len(self.lapsed) > MAX_LIVE:
                    del self.lapsed[next(iter(self.lapsed))]

    def _result(self, message: ClaudeMessage, p: Pass) -> None:
        if p.ends:  # the prompt's result (or a cancelled turn's)
            steered = p.released is not None  # the steering lane ends the turn with a result it held
            open_turn = p.turn is not None and not p.quiet and not steered
            if self.enabled and open_turn and self.held is None and (self.waiting or self.owed):
                try:
                    self.held = sdk_result(message.sdk)
                except LifecycleError:
                    return  # translation judges it as it is (logged there)
                p.hold = True
                log.info("prompt.held_for_subagents", subagents=len(self.spawned), ended=len(self.owed))
            return
        turns = getattr(message.sdk, "num_turns", 0)
        ran = (isinstance(turns, int) and turns > 0) or getattr(message.sdk, "is_error", False) is True
        if ran and not self.waiting:
            self._release(p, "subagents_answered")

    def _idle(self, p: Pass) -> None:
        """Claude Code is idle: whatever report was to come came (see the module)."""
        if p.released is None and not self.waiting:
            self._release(p, "idle")

    def _release(self, p: Pass, reason: str) -> None:
        held = self.take()
        if held is not None:
            log.info("prompt.hold_released", reason=reason)
            p.after.append(Step(event=held))

    def take(self) -> Event | None:
        """The kept result, once (None when nothing is held); the hold ends."""
        held, self.held = self.held, None
        if held is not None:
            self.owed = set()
        return held

    def drop(self) -> None:
        """The prompt was answered otherwise (cancelled, closed, lost): the kept result is dropped."""
        if self.held is not None:
            log.info("prompt.hold_dropped")
        self.held = None
