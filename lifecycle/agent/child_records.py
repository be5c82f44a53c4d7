"""The records of child sessions (issue 51.2): one ledger per child, its records on the child's
session.

Rules
-----
* Each child session (:mod:`lifecycle.agent.subagents`) gets its own
  :class:`~lifecycle.ledger.SessionLedger` (the child's session id, the parent's negotiation and
  epoch, so its ids are the child's and never collide with the parent's) and its own
  :class:`~lifecycle.acp.SessionPublisher` on the agent's connection: a child's retries
  (:class:`~lifecycle.events.ChildRetry`) and its end (:class:`~lifecycle.events.ChildEnded`)
  are fed there, and their records go out as ``session_info_update`` on the child's session id
  (:mod:`lifecycle.children`). The parent's ledger never takes them.
* At most :data:`~lifecycle.agent.subagents.MAX_CHILDREN` children are kept per session, the
  oldest let go first, as the lane keeps them.
* Each child's end is logged (``subagent.end``: the parent's and the child's ids, the status), also
  when the client is gone (its stdin closed: nothing can reach it any more) and the end is sent to
  no one.
* Recovery events of the session (a successful ``auth_status``, a runtime replaced) reach every
  child's ledger too (:meth:`ChildRecords.session_event`): a child's active failure recovers by the
  same rules as the parent's.

Theory of operation
-------------------
A plain dict of publishers; each publisher holds its own lock, so a child's record is sent whole
(its revision committed on delivery) whatever the parent sends meanwhile.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

import structlog

from ..acp import SessionPublisher
from ..events import AuthStatus, ChildEnded, ChildRetry, Event, RuntimeReplaced
from ..ledger import SessionLedger
from ..log import StructlogObserver
from .subagents import MAX_CHILDREN

__all__ = ["CHILD_EVENTS", "ChildRecords", "cancel_child", "not_a_session"]

log = structlog.get_logger("lifecycle.agent")

#: The events a child's own ledger takes.
CHILD_EVENTS = (ChildRetry, ChildEnded)
#: The session's events that may recover a child's failure too.
_SHARED = (AuthStatus, RuntimeReplaced)


class ChildRecords:
    """One session's children's ledgers (see the module)."""

    __slots__ = ("_children", "_conn", "_parent")

    def __init__(self, conn: Any, parent: SessionPublisher) -> None:
        self._conn = conn
        self._parent = parent
        self._children: OrderedDict[str, SessionPublisher] = OrderedDict()

    def ledger(self, child_id: str) -> SessionLedger | None:
        """The ledger of child ``child_id`` (None: no event of it was fed)."""
        publisher = self._children.get(child_id)
        return publisher.ledger if publisher is not None else None

    async def feed(self, child_id: str, event: Event) -> None:
        """Feed a child's ``event`` to its ledger and send what it plans, on the child's session."""
        publisher = self._children.get(child_id)
        if publisher is None:
            parent = self._parent.ledger
            epoch = parent.epoch
            ledger = SessionLedger(
                child_id, negotiated=parent.negotiated, epoch=epoch, observer=StructlogObserver(epoch=epoch)
            )
            publisher = self._children[child_id] = SessionPublisher(self._conn, ledger)
            while len(self._children) > MAX_CHILDREN:
                self._children.popitem(last=False)
        if isinstance(event, ChildEnded):  # ids and states only
            log.info("subagent.end", session_id=self._parent.session_id, child_id=child_id, status=event.status)
        try:
            await publisher.feed(event)
        except Exception as exc:  # a refused event changes nothing; the child's end state still shows
            log.warning("subagent.event_refused", session_id=self._parent.session_id, child_id=child_id,
                        event_type=type(event).__name__, error_type=type(exc).__name__)  # fmt: skip

    async def session_event(self, event: Event) -> None:
        """A session event that may recover a child's failure (:data:`_SHARED`): every child's
        ledger takes it too."""
        if not isinstance(event, _SHARED):
            return
        for child_id in list(self._children):
            await self.feed(child_id, event)


def _child(sessions: Iterable[Any], session_id: str) -> tuple[Any, str] | None:
    """The session whose child ``session_id`` is, and whether that child is ``running`` or ``ended``."""
    for parent in sessions:
        state = parent.children.known(session_id)
        if state is not None:
            return parent, state
    return None


def not_a_session(sessions: Mapping[str, Any], session_id: str) -> str:
    """The ``details`` of the ``-32602`` a request naming ``session_id`` gets when no session of
    the agent has that id (issue 51.6): what it is, if it is a child session."""
    child = _child(sessions.values(), session_id)
    if child is None:
        return "unknown session"
    parent, state = child
    if state == "running":
        return f"a child session (a subagent of session {parent.id[:200]}): only session/cancel applies to it"
    return f"a child session (a subagent of session {parent.id[:200]}) that ended: it takes no request"


async def cancel_child(sessions: list[Any], session_id: str) -> None:
    """``session/cancel`` naming no session of the agent: a running child stops (its parent's
    ``cancel_child``); an ended child or an unknown id changes nothing. A notification has no
    answer, so that is logged (ids only)."""
    child = _child(sessions, session_id)
    if child is not None and child[1] == "running":
        await child[0].cancel_child(session_id)
        return
    reason = "child_ended" if child is not None else "unknown_session"
    log.info("session.cancel_ignored", session_id=session_id[:200], reason=reason)
