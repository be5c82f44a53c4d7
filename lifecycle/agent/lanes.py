"""The lanes every Claude message runs through, in order: the agent's data path as one table.

Rules
-----
* A message is read once (:func:`lifecycle.agent.messages.read`) and then run through
  :data:`LANES`, in that order; each lane has one signature, ``run(p: Pass) -> list[Step]``,
  and the steps are sent in lane order. The order is the rule, written here once:

  1. **own turns** (:class:`lifecycle.agent.background.OwnTurns`) tells a turn Claude Code
     started by itself from the prompt's (it sets :attr:`Pass.own`; it shows nothing itself);
  2. **steering** (:class:`lifecycle.agent.steering.Steering`) holds a result of the prompt's
     turn that a steer superseded, and releases it when Claude Code goes idle without answering
     the steer (it sets :attr:`Pass.held` and :attr:`Pass.released`; it shows nothing itself);
  3. **session state** (:class:`lifecycle.agent.following.SessionState`): what Claude Code
     reports of the session's settings (its mode, its slash commands) as the editor's
     ``current_mode_update``, ``config_option_update`` and ``available_commands_update``;
  4. **compaction** (:class:`lifecycle.agent.compaction.ContextCompaction`): a compaction's
     updates go before the message's own, and a turn's end (a result) closes one left open;
  5. **hold** (:class:`lifecycle.agent.hold.BackgroundHold`) keeps the prompt open while
     background subagents it started still work: it holds the prompt's result (it sets
     :attr:`Pass.hold`; translation shows the result's updates and leaves its event) and gives it
     back, as a step after every lane's (:attr:`Pass.after`), once they have answered;
  6. **child sessions** (:class:`lifecycle.agent.subagents.ChildSessions`): for a client that
     declared ``subagents``, a subagent's announcement and end (``subagent_update``) and its
     text, and the child session its messages' updates go to (it sets :attr:`Pass.child`);
     a no-op for other clients;
  7. **translation** (:class:`lifecycle.agent.translate.Translation`): the transcript updates
     and the event the ledger judges (an own message's turn events detached while a prompt is
     open; a held result not judged, a released one judged), on the child session when
     :attr:`Pass.child` names one;
  8. **suggestions** (:class:`lifecycle.agent.suggestions.PromptSuggestions`): the predicted
     next prompt, after the turn's end that opened its window.

* A lane reads the record and the pass, never the SDK's class; it may keep state of its own
  (one lane object per session, built from :class:`LaneParts`), and writes only its own part
  of the pass (own turns: :attr:`Pass.own`; hold: :attr:`Pass.hold` and :attr:`Pass.after`, the
  steps sent after every lane's; child sessions: :attr:`Pass.child`).
* Adding a way of handling messages is one module (a class with ``build`` and ``run``) and one
  row of :data:`LANES`.

Theory of operation
-------------------
:class:`Lanes` is one session's lane objects, built whole when the session is; the session's
:meth:`~lifecycle.agent.session._Session.receive` calls :meth:`Lanes.run` once per message and
sends the steps through its publisher. Sans-I/O: nothing here awaits.
"""

from __future__ import annotations

from typing import Final, Protocol, TypeVar, cast

from .background import OwnTurns
from .compaction import ContextCompaction
from .following import SessionState
from .hold import BackgroundHold
from .messages import ClaudeMessage, LaneParts, Pass, Step
from .steering import Steering
from .subagents import ChildSessions
from .suggestions import PromptSuggestions
from .translate import Translation

__all__ = ["LANES", "Lane", "LaneParts", "Lanes", "Pass"]


class Lane(Protocol):
    """One way of handling Claude messages (see the module)."""

    def run(self, p: Pass) -> list[Step]: ...


class _LaneClass(Protocol):
    def build(self, parts: LaneParts) -> Lane: ...


#: The lanes, in the order every message runs through them (see the module).
LANES: Final[tuple[_LaneClass, ...]] = (
    OwnTurns, Steering, SessionState, ContextCompaction, BackgroundHold, ChildSessions, Translation,
    PromptSuggestions,
)  # fmt: skip

_L = TypeVar("_L")


class Lanes:
    """One session's lanes, built whole (see the module)."""

    __slots__ = ("_by_class", "order")

    def __init__(self, parts: LaneParts) -> None:
        self.order: tuple[Lane, ...] = tuple(cls.build(parts) for cls in LANES)
        self._by_class: dict[type, Lane] = {type(lane): lane for lane in self.order}

    def get(self, cls: type[_L]) -> _L:
        """The session's lane of class ``cls``."""
        return cast(_L, self._by_class[cls])

    def run(
        self, message: ClaudeMessage, *, turn: str | None, quiet: bool, prompt_open: bool
    ) -> tuple[list[Step], bool]:
        """The steps ``message`` makes, in lane order, and whether it ends the turn in flight
        (a result, or a held result released: :mod:`lifecycle.agent.steering`)."""
        p = Pass(message, turn, quiet, prompt_open)
        steps: list[Step] = []
        for lane in self.order:
            steps += lane.run(p)
        return steps + p.after, p.ends
