"""Subagents as ACP child sessions, for a client that declared ``clientCapabilities.subagents``
(issue 51, its first slice): the child-sessions lane.

Rules
-----
* A client that did not declare ``subagents`` (:attr:`lifecycle.negotiation.ClientState.subagents`)
  sees what it always saw: a subagent's tool calls flat in the parent session, each naming its
  Agent/Task call (``_meta.claudeCode.parentToolUseId``), its text internal. This lane is then a
  no-op.
* For a client that declared it, each subagent Claude Code starts (a ``task_started`` system
  message with a ``tool_use_id`` and a ``subagent_type``: an Agent/Task tool use; a background
  Bash has no ``subagent_type``) is a child session whose id is Claude Code's agent id (the
  message's ``task_id``, as the reference adapter 0.101.0's ``NativeSubagentRuntime`` names it).
  It is announced on the parent session by a ``subagent_update`` (ACP's ``SubagentUpdate``: the
  shape of ``schema/v1/schema.unstable.json`` in the ACP TypeScript SDK 2.4.0 the reference
  bundles) with the parent's labels for it (the reference's ``rfdLabels``: the title is the
  Agent call's ``name``, else its ``description``, else its ``subagent_type``; the description is
  the ``subagent_type`` unless it is the title), ``capabilities: {cancel: {}}`` and
  ``state: {state: "running"}``.
* Every later message of that subagent (its ``parent_tool_use_id`` is the Agent/Task call) goes
  to the child's session (:attr:`lifecycle.agent.messages.Pass.child`): the translation lane
  renders it as for the parent, on the child's id; its text (which stays internal for other
  clients) is shown there as ``agent_message_chunk`` with Claude's ``messageId``. A message of a
  subagent not announced yet stays flat in the parent, as for other clients.
* The child's end is the first ``task_updated`` whose ``patch.status`` is ``completed``,
  ``failed`` or ``killed``, or ``task_notification`` (``completed``, ``failed``, ``stopped``,
  ``killed``): one ``subagent_update`` with ``state: idle`` and the stop reason (the reference's
  ``rfdEndState``): ``end_turn`` for completed, ``cancelled`` for killed/stopped, ``error`` for
  failed, with the JSON-RPC ``error`` when Claude Code gave the error's text: the code and data a
  legacy client's prompt error has for the same condition, Claude Code's text as the message
  (:func:`lifecycle.children.child_error`; a child has no prompt response of its own). A status
  nobody knows ends nothing; a second end is ignored. Just before that update, the end goes to the
  child's own ledger (a :class:`~lifecycle.events.ChildEnded` step on the child's session:
  :mod:`lifecycle.agent.child_records`), which publishes a failed child's record on the child's
  session for a client that negotiated ``sessionFailure`` (issue 51.2).
* A child still running when its runtime ends (Claude Code killed, or replaced) ends
  ``{state: idle}`` with no stop reason (nothing says it failed or was cancelled: the reference's
  ``rfdEndState`` for an orphaned task); one still running when its session closes (the client's
  ``session/close``, a load over it, the client's EOF) ends ``cancelled``
  (:meth:`ChildSessions.end_all`; issue 51.6).
* A ``session/cancel`` naming a child announced and not ended (:meth:`ChildSessions.running`)
  stops that subagent only (:meth:`lifecycle.agent.session._Session.cancel_child`: Claude Code's
  ``stop_task``); its end comes as any other, ``cancelled``. Any other id changes nothing.
* A child's failure is not the parent turn's: nothing here feeds the parent's ledger (the parent's
  prompt ends as it would have; docs/acp-agent.md, "Subagents as child sessions").

Theory of operation
-------------------
Sans-I/O: the lane keeps, per session, the children by the Agent/Task tool use that launched them
(at most :data:`MAX_CHILDREN`, the oldest forgotten first); the Agent/Task call's input (its
``name``) is the renderer's (:meth:`lifecycle.agent.stream.StreamRenderer.tool_input`), and so is
the child's text (:meth:`~lifecycle.agent.stream.StreamRenderer.subagent_text`). Nothing here
awaits.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..children import child_error
from ..events import ChildEnded
from .messages import Kind, LaneParts, Pass, Step
from .stream import StreamRenderer

__all__ = ["CHILD_ERROR_CODE", "MAX_CHILDREN", "ChildSessions", "end_state", "labels"]

#: Children remembered per session.
MAX_CHILDREN: Final = 256
#: The JSON-RPC code of a failed child's ``error`` whose condition is not an authentication one:
#: an internal error, as the reference sends it (:func:`lifecycle.children.child_error`).
CHILD_ERROR_CODE: Final = -32603
_LAUNCHERS: Final = frozenset({"Agent", "Task"})
#: Claude Code's terminal task statuses and the stop reason of each (the reference's
#: ``nativeSubagentState`` then ``rfdEndState``).
_STOP_REASONS: Final[Mapping[str, str]] = {
    "completed": "end_turn",
    "failed": "error",
    "killed": "cancelled",
    "stopped": "cancelled",
    "cancelled": "cancelled",
}
#: The stop reason -> the status a child's ledger is told (:class:`~lifecycle.events.ChildEnded`).
_ENDED: Final[Mapping[str, Literal["completed", "failed", "cancelled"]]] = {
    "end_turn": "completed",
    "error": "failed",
    "cancelled": "cancelled",
}


@dataclass(slots=True)
class _Child:
    session_id: str
    ended: bool = False


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def labels(name: object, role: object, description: object) -> dict[str, str]:
    """The parent's labels for a child (the reference's ``rfdLabels``): ``title`` is the agent's
    ``name``, else the task's ``description``, else its role (``subagent_type``);
    ``description`` is the role unless it is the title. A label with no text is left out."""
    agent_role = _text(role)
    title = _text(name) or _text(description) or agent_role
    out: dict[str, str] = {}
    if title:
        out["title"] = title
    if agent_role and agent_role != title:
        out["description"] = agent_role
    return out


def end_state(status: object, error: object = None) -> dict[str, Any] | None:
    """The ``state`` of a child whose task ended with ``status`` (None: not an end); a failed one
    carries ``error`` (Claude Code's text) as the JSON-RPC error object when it has text."""
    reason = _STOP_REASONS.get(status) if isinstance(status, str) else None
    if reason is None:
        return None
    state: dict[str, Any] = {"state": "idle", "stopReason": reason}
    text = _text(error)
    if reason == "error" and text:
        state["error"] = child_error(text)
    return state


class ChildSessions:
    """The child-sessions lane (see the module)."""

    __slots__ = ("_children", "enabled", "renderer")

    def __init__(self, renderer: StreamRenderer, enabled: bool) -> None:
        self.renderer = renderer
        self.enabled = enabled
        self._children: OrderedDict[str, _Child] = OrderedDict()  # by the launching tool use id

    @classmethod
    def build(cls, parts: LaneParts) -> ChildSessions:
        return cls(parts.renderer, parts.client.subagents)

    def child_of(self, tool_use_id: str) -> str | None:
        """The child session launched by the Agent/Task call ``tool_use_id``, if announced."""
        child = self._children.get(tool_use_id)
        return child.session_id if child is not None else None

    def running(self, session_id: str) -> bool:
        """Whether ``session_id`` is a child of this session announced and not ended."""
        return self.known(session_id) == "running"

    def known(self, session_id: str) -> Literal["running", "ended"] | None:
        """Whether ``session_id`` is a child of this session: ``running``, ``ended``, or None
        (never announced here, or forgotten past :data:`MAX_CHILDREN`)."""
        child = next((c for c in self._children.values() if c.session_id == session_id), None)
        if child is None:
            return None
        return "ended" if child.ended else "running"

    def end_all(self, status: Literal["cancelled", "unexplained"]) -> list[Step]:
        """The end of every child still running (its session closes: ``cancelled``; its runtime
        ended: ``unexplained``, ``{state: idle}`` with no stop reason), each on its own ledger
        first, then its last ``subagent_update``."""
        steps: list[Step] = []
        for child in self._children.values():
            if child.ended:
                continue
            child.ended = True
            state: dict[str, Any] = {"state": "idle"}
            if status == "cancelled":
                state["stopReason"] = "cancelled"
            steps.append(Step(event=ChildEnded(status=status), session=child.session_id))
            steps.append(Step([{"sessionUpdate": "subagent_update", "sessionId": child.session_id, "state": state}]))
        return steps

    def run(self, p: Pass) -> list[Step]:
        if not self.enabled:
            return []
        message = p.message
        steps: list[Step] = []
        if message.kind in (Kind.SYSTEM, Kind.OTHER):
            data = message.data
            if message.subtype == "task_started":
                steps += self._started(data)
            elif message.subtype == "task_updated":
                patch = data.get("patch")
                if isinstance(patch, Mapping):
                    steps += self._ended(data.get("task_id"), patch.get("status"), patch.get("error"))
            elif message.subtype == "task_notification":
                steps += self._ended(data.get("task_id"), data.get("status"), None)
        parent = message.parent_tool_use_id
        child = self._children.get(parent) if parent is not None else None
        if child is not None:
            p.child = child.session_id
            if message.kind is Kind.ASSISTANT and not p.quiet:
                text = self.renderer.subagent_text(message.sdk)
                steps += [Step(text, session=child.session_id)] if text else []
        return steps

    def _started(self, data: Mapping[str, Any]) -> list[Step]:
        task_id, tool_use_id = data.get("task_id"), data.get("tool_use_id")
        if not (_text(task_id) and _text(tool_use_id) and _text(data.get("subagent_type"))):
            return []  # no subagent (a background Bash), or nothing to name it by
        assert isinstance(task_id, str) and isinstance(tool_use_id, str)
        if tool_use_id in self._children:
            return []  # announced once
        self._children[tool_use_id] = _Child(task_id)
        while len(self._children) > MAX_CHILDREN:
            self._children.popitem(last=False)
        known = self.renderer.tool_input(tool_use_id)
        call: Mapping[str, Any] = known[1] if known is not None and known[0] in _LAUNCHERS else {}
        update: dict[str, Any] = {"sessionUpdate": "subagent_update", "sessionId": task_id}
        update |= labels(call.get("name"), data.get("subagent_type"), data.get("description"))
        update |= {"capabilities": {"cancel": {}}, "state": {"state": "running"}}
        return [Step([update])]

    def _ended(self, task_id: object, status: object, error: object) -> list[Step]:
        child = next((c for c in self._children.values() if c.session_id == task_id), None)
        state = end_state(status, error)
        if child is None or child.ended or state is None:
            return []
        child.ended = True
        text = _text(error) if state["stopReason"] == "error" else None
        ended = ChildEnded(status=_ENDED[state["stopReason"]], error=text)
        update = {"sessionUpdate": "subagent_update", "sessionId": child.session_id, "state": state}
        return [Step(event=ended, session=child.session_id), Step([update])]
