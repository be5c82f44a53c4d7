"""Where a permission question is asked, and under which rule (issue 51.1 and 51.5): a
subagent's question on its child session, with the child ``requires_action`` while it waits; a
question that comes after the prompt that launched its subagent has ended asked all the same.

Rules
-----
* A question is **the turn's** when a prompt's turn is open in the ledger (its flow is
  ``in_turn``): the turn machine opens it and withdraws it as it always did
  (:mod:`lifecycle.agent.permissions`). A question that comes while no prompt's turn is open (the
  flow is ``idle``: a background subagent asking after the turn that launched it ended), or that a
  live background subagent of an earlier prompt asks while a later prompt runs (a prompt held for
  its subagents was handed off to the next one: :mod:`lifecycle.agent.hold`; that prompt's end
  must not withdraw it), is **late**: it is asked all the same, as the reference adapter 0.101.0
  asks it (its ``canUseTool`` asks the client whatever the turn), under the same rules as any
  question: the tool runs only if the user allowed that call or an approved rule covers it (Claude
  Code's own engine decides the rules before asking), the question shows exactly what would run,
  and nothing but the client's allow answers it. A late question is open until the client answers
  it, Claude Code withdraws it, or the session withdraws it: a ``session/cancel`` of the session
  or of the child that asks, or the session's close (each answers it denied, as
  :data:`LATE_WITHDRAWN_MESSAGE`). A new prompt's turn does not own it, and its end withdraws
  nothing of it. A question while a cancelled turn still winds down (the flow is ``cancelled``) is
  the cancelled work's: refused unasked, as before.
* A client's ``cancelled`` outcome to a late question is the user's refusal
  (:data:`lifecycle.agent.permissions.DENIED_MESSAGE`): there is no turn for it to cancel (the
  reference answers a background subagent's ``cancelled`` request the same way).
* The session the question is asked on: for a client that declared ``subagents``
  (:attr:`lifecycle.negotiation.ClientState.subagents`), a subagent's question (Claude Code's
  ``agent_id``, which is its child session's id: :mod:`lifecycle.agent.subagents`) goes to its
  child session when the child is announced and not ended (the reference's ``toolUseOwner``);
  every other question goes to the parent session, as before. The tool call it names is
  announced on that session first.
* While a child's question is open the child is ``requires_action``: one ``subagent_update``
  on the parent session when its first open question starts, and ``running`` again when its
  last one ends, unless the child ended meanwhile or the client cancelled it (then its end
  follows; the reference's ``awaitingUser``). ``session/load`` never sees it: a question is
  never replayed.

Theory of operation
-------------------
Sans-I/O: :class:`QuestionRoutes` is one session's; the broker asks :meth:`QuestionRoutes.route`
when a question comes, then :meth:`~QuestionRoutes.opened` and :meth:`~QuestionRoutes.closed`
around the client's request, and sends the updates they return on the parent session. The
children are the child-sessions lane's (:class:`lifecycle.agent.subagents.ChildSessions`); the
ledger's flow is read through ``flow``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from .hold import BackgroundHold
from .subagents import ChildSessions

__all__ = ["LATE_WITHDRAWN_MESSAGE", "QuestionRoutes", "Route"]

#: What Claude is told of a late question the session withdrew (a cancel, the session's close).
LATE_WITHDRAWN_MESSAGE: Final = "The user did not allow this tool use: the question was withdrawn"


@dataclass(frozen=True, slots=True)
class Route:
    """Where and how one question is asked."""

    #: The session the question (and its tool call) goes to: the child's or the parent's.
    session_id: str
    #: The child session that waits on it (``requires_action``), None: the parent's question.
    child: str | None
    #: Asked while no prompt's turn is open: not the turn machine's (see the module).
    late: bool


class QuestionRoutes:
    """One session's question routes and its children's ``requires_action`` (see the module)."""

    __slots__ = ("_children", "_flow", "_hold", "_open", "_parent", "_stopping")

    def __init__(
        self, parent_id: str, children: ChildSessions, flow: Callable[[], str], hold: BackgroundHold | None = None
    ) -> None:
        self._parent = parent_id
        self._children = children
        self._hold = hold  # the live background tasks, and the ones the running prompt started
        self._flow = flow  # the ledger's flow state (``idle``, ``running``, ..., ``cancelled``)
        self._open: dict[str, int] = {}  # child session -> its open questions
        self._stopping: set[str] = set()  # children the client cancelled

    def route(self, agent_id: object) -> Route | None:
        """The route of a question Claude Code asks for ``agent_id`` (None: the main agent), or
        None when it is not to be asked: a cancelled turn still winds down."""
        flow = self._flow()
        if flow == "cancelled":
            return None
        child = agent_id if isinstance(agent_id, str) and self._children.running(agent_id) else None
        if child is not None and not self._children.enabled:
            child = None
        return Route(child or self._parent, child, late=flow == "idle" or self._earlier(agent_id))

    def _earlier(self, agent_id: object) -> bool:
        """``agent_id`` is a live background subagent the running prompt did not start."""
        hold = self._hold
        if hold is None or not isinstance(agent_id, str):
            return False
        return hold.live.get(agent_id, False) and agent_id not in hold.spawned

    def opened(self, route: Route) -> list[dict[str, Any]]:
        """A question of ``route`` is being asked: the child's ``requires_action``, once."""
        child = route.child
        if child is None:
            return []
        self._open[child] = self._open.get(child, 0) + 1
        if self._open[child] == 1 and self._children.running(child) and child not in self._stopping:
            return [_state(child, "requires_action")]
        return []

    def closed(self, route: Route) -> list[dict[str, Any]]:
        """A question of ``route`` ended (answered or withdrawn): the child ``running`` again once
        its last open question ended, unless it ended or is being stopped."""
        child = route.child
        if child is None or child not in self._open:
            return []
        self._open[child] -= 1
        if self._open[child] > 0:
            return []
        del self._open[child]
        if self._children.running(child) and child not in self._stopping:
            return [_state(child, "running")]
        return []

    def stopping(self, child: str) -> None:
        """The client cancelled ``child``: its end comes next, no ``running`` before it."""
        if self._children.running(child):
            self._stopping.add(child)
            if len(self._stopping) > 256:  # bounded: a child's end is its task's, not tracked here
                self._stopping.pop()


def _state(child: str, state: str) -> dict[str, Any]:
    return {"sessionUpdate": "subagent_update", "sessionId": child, "state": {"state": state}}
