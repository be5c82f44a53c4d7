"""``session/load`` of a session whose subagents ran, for a client that declared ``subagents``
(issue 51.1): each child replayed on its own session from Claude Code's own subagent files
(``<session>/subagents/agent-*.jsonl``), as the reference adapter 0.101.0 replays them
(``subagent-replay.js``, ``subagent-history.js``).

Rules
-----
* Only for a client that declared ``subagents``
  (:attr:`lifecycle.negotiation.ClientState.subagents`); any other client's load is unchanged
  (a subagent's messages are not the top-level transcript: :mod:`lifecycle.agent.replay`).
* After the parent's replay, for each Agent/Task call of the parent's transcript, in order, whose
  subagent left a transcript (the SDK's ``list_subagents`` and ``get_subagent_messages``: each
  message names the call that launched it, from Claude Code's ``agent-<id>.meta.json``): a
  ``subagent_update`` on the parent announces the child (its agent id, the parent's labels for it:
  :func:`lifecycle.agent.subagents.labels`; ``state: running``, as the reference's ``announce``);
  then the child's tool calls, their results and its text on the child's session, rendered as
  live (:class:`lifecycle.agent.stream.StreamRenderer`; no ``in_progress``, a tool call the
  history never ends ``failed``, as the parent's replay); then its end: ``state: idle`` with the
  stop reason the launch's result gives (the reference's ``replaySubagentTerminalState``: a
  result that is no error ``end_turn``; an error naming a cancel, an interrupt, a stop or a kill
  ``cancelled``; any other error ``error``), or no stop reason when the launch ran in the
  background (its result says only that it was launched) or has no result. No ``capabilities``:
  a replayed child cannot be cancelled (no Claude Code of this connection runs it).
* A launch whose subagent left no transcript (or none this agent can read) is not announced (the
  replay would have to guess its id); when at least one is missing, one notice says how many
  (the reference's "The history of N subagent(s) of this session could not be restored.").
* Never raises on what a transcript holds: what is not what Claude Code writes renders nothing.

Theory of operation
-------------------
:func:`child_replay` is sans-I/O: it takes the parent's stored messages and each subagent's, and
returns the updates to send, each with the session it goes to (None: the parent), and the notice
text (None: nothing missing). ``session/load`` reads the files (:func:`read_children`) and sends
them before the load is answered.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import structlog

from ..events import Informational
from ..intents import text_update
from .replay import _blocks, _field, _Message, _running  # one reading of a stored message, as the parent's replay
from .stream import StreamRenderer
from .subagents import end_state, labels

if TYPE_CHECKING:
    from .session import _Session

__all__ = ["ChildReplay", "child_replay", "read_children", "replay_children"]

log = structlog.get_logger("lifecycle.agent")

_LAUNCHERS: Final = frozenset({"Agent", "Task"})
#: At most this many children are replayed (a hostile folder cannot grow the load without end).
MAX_REPLAYED: Final = 256
#: The notice's title line when a child's history is missing (the reference's words).
_MISSING: Final = "Some subagent history is not available"
_CANCELLED = re.compile(r"\b(?:cancelled|canceled|interrupted|stopped|killed)\b", re.IGNORECASE)


@dataclass(slots=True)
class ChildReplay:
    """What a load sends of the session's children: ``(session, update)`` in order (None: the
    parent), and the notice about the children whose history is missing (None: none)."""

    updates: list[tuple[str | None, dict[str, Any]]] = field(default_factory=list)
    notice: str | None = None


@dataclass(slots=True)
class _Launch:
    tool_use_id: str
    call: Mapping[str, Any]
    result: Mapping[str, Any] | None = None


def _launches(stored: Iterable[object]) -> list[_Launch]:
    """The parent's Agent/Task calls, in order, each with its result when the history has it."""
    launches: dict[str, _Launch] = {}
    for item in stored:
        message = _field(item, "message")
        if not isinstance(message, Mapping) or _field(item, "parent_tool_use_id") is not None:
            continue
        for block in _blocks(message):
            if block.get("type") == "tool_use" and block.get("name") in _LAUNCHERS and isinstance(block.get("id"), str):
                call = block.get("input")
                launches.setdefault(block["id"], _Launch(block["id"], call if isinstance(call, Mapping) else {}))
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in launches:
                launches[block["tool_use_id"]].result = block
    return list(launches.values())


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return " ".join(_text(v.get("text") if isinstance(v, Mapping) else v) for v in value)
    return ""


def _end(launch: _Launch) -> dict[str, Any]:
    """The child's replayed end (see the module)."""
    result = launch.result
    if result is None or launch.call.get("run_in_background") is True:
        return {"state": "idle"}
    text = _text(result.get("content"))
    if result.get("is_error") is not True:
        if text.startswith("Async agent launched"):  # Claude Code ran it in the background
            return {"state": "idle"}
        status = "completed"
    else:
        status = "killed" if _CANCELLED.search(text) else "failed"
    return end_state(status, text) or {"state": "idle"}


def _child_updates(messages: Sequence[object], launch: str, cwd: str) -> list[dict[str, Any]]:
    """A child's transcript as the live child session showed it: its tool calls and results,
    its thinking and text."""
    renderer = StreamRenderer(cwd)
    out: list[dict[str, Any]] = []
    for item in messages:
        message = _field(item, "message")
        if not isinstance(message, Mapping):
            continue
        try:
            blocks = _blocks(message)
            if _field(item, "type") == "assistant":
                stored_id = message.get("id")
                shown = _Message(
                    blocks, parent_tool_use_id=launch, message_id=stored_id if isinstance(stored_id, str) else None
                )
                updates, _ = renderer.assistant(shown)
                out += updates
                for block in blocks:
                    if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"]:
                        out.append(text_update("agent_message_chunk", block["text"]))
            elif _field(item, "type") == "user":
                out += [u for u in renderer.user(_Message(blocks, parent_tool_use_id=launch)) if not _running(u)]
        except Exception:  # a transcript the renderer cannot read: nothing of that message
            continue
    return out + renderer.close_open_tools()


def child_replay(stored: Iterable[object], children: Mapping[str, Sequence[object]], cwd: str) -> ChildReplay:
    """The replay of the children (see the module): ``stored`` is the parent's transcript,
    ``children`` each subagent's messages by its agent id."""
    by_launch: dict[str, tuple[str, Sequence[object]]] = {}
    for agent_id, messages in children.items():
        launched_by = next((p for m in messages if isinstance(p := _field(m, "parent_tool_use_id"), str)), None)
        if launched_by is not None and messages:
            by_launch.setdefault(launched_by, (agent_id, messages))
    out = ChildReplay()
    missing = 0
    for launch in _launches(stored)[:MAX_REPLAYED]:
        found = by_launch.get(launch.tool_use_id)
        if found is None:
            missing += 1
            continue
        agent_id, messages = found
        call = launch.call
        announce = {"sessionUpdate": "subagent_update", "sessionId": agent_id}
        announce |= labels(call.get("name"), call.get("subagent_type"), call.get("description"))
        out.updates.append((None, announce | {"state": {"state": "running"}}))
        out.updates += [(agent_id, u) for u in _child_updates(messages, launch.tool_use_id, cwd)]
        out.updates.append((None, {"sessionUpdate": "subagent_update", "sessionId": agent_id, "state": _end(launch)}))
    if missing:
        subagents = "1 subagent" if missing == 1 else f"{missing} subagents"
        out.notice = f"{_MISSING}\nThe history of {subagents} of this session could not be restored."
    return out


async def replay_children(session: _Session, stored: Sequence[object], cwd: str) -> None:
    """``session/load``'s replay of the children, for a client that declared ``subagents``
    (else nothing): sent after the parent's replay, before the load is answered."""
    if not session.client.subagents:
        return
    replayed = child_replay(stored, await read_children(session.id, cwd), cwd)
    for target, update in replayed.updates:
        await session.publisher.emit([update], session_id=target)
    if replayed.notice is not None:
        await session.feed(Informational(content=replayed.notice, level="notice"))  # an ACP notice, severity info
    log.info("session.children_replayed", session_id=session.id, updates=len(replayed.updates))


async def read_children(session_id: str, cwd: str) -> dict[str, list[object]]:
    """Each subagent's stored messages by its agent id (Claude Code's subagent files); an agent
    whose file cannot be read is left out (it counts as missing)."""
    from .session import sdk_function  # the SDK's session functions, as tests may replace them

    try:
        agents = await asyncio.to_thread(sdk_function("list_subagents"), session_id, directory=cwd)
    except Exception:
        return {}
    out: dict[str, list[object]] = {}
    for agent_id in agents[:MAX_REPLAYED]:
        try:
            read = sdk_function("get_subagent_messages")
            messages = await asyncio.to_thread(read, session_id, agent_id, directory=cwd)
        except Exception:
            continue
        out[agent_id] = list(messages)
    return out
