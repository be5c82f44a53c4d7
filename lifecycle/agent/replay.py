"""What ``session/load`` replays besides the text: the thinking, tool calls and tool results of a
stored session, rendered as they were live (issue 30, point 5).

Rules
-----
* The ledger keeps what it owns: the user's and Claude's text and the replayed usage-limit records
  (spec: "History replay"), from a :class:`~lifecycle.events.HistoryLoaded` of each stored message,
  fed one message at a time in stored order (the ledger takes a history in several events with
  the same result). Nothing here decides what a failure shows.
* Around each message's history event, this module adds what the live turn showed besides its
  text, rendered by the live renderer (:class:`lifecycle.agent.stream.StreamRenderer`, so by
  :mod:`lifecycle.agent.tool_calls`): before it, the message's thinking (one
  ``agent_thought_chunk`` with the stored message's ``messageId``, as live); after it, its tool
  uses (a ``tool_call`` each, a ``Write``'s creation diff and an ``Edit``'s diff included;
  ``TodoWrite`` a ``plan``) and, for a user message, its tool results (a ``tool_call_update``,
  ``completed`` or ``failed``, with the result's content). This is the reference adapter's replay
  order for a message (thinking, text, tool uses).
* As the reference replays them: no ``in_progress`` between a tool call and its result (the
  replay says what happened, not that it runs); a result's structured form (the SDK's
  ``tool_use_result``: an ``Edit``'s per-hunk diff) is not in what ``get_session_messages``
  returns, so a result shows its ``tool_result`` content and the diff stays the tool call's.
* A client that draws terminal cards (``_meta.terminal_output``) gets a command's replayed tool
  call as its terminal card, as live (:mod:`lifecycle.agent.terminal`; the reference replays with
  the client's tool-call capabilities): its output as ``terminal_output``, its end as
  ``terminal_exit`` with the exit code its result text gives (no structured result is stored),
  the end with the terminal marker as its content again (the reference's replay has no field
  tracker to leave it out).
* Only the top-level transcript: a subagent's or sidechain message adds nothing (as the ledger).
* A tool call the history never ends (Claude Code stopped during it) is ``failed`` at the end of
  the replay: no tool call is left running, as live.
* Never raises on what a transcript holds: a message or block that is not what Claude Code writes
  renders nothing.

Theory of operation
-------------------
:func:`replay` is sans-I/O: it walks the stored messages once, with a renderer of its own (the
session's live renderer keeps nothing of the replay), and yields one :class:`Replayed` per stored
message; ``session/load`` sends its ``before`` updates, feeds its ``history`` to the ledger and
sends its ``after`` updates, in order, before the load is answered.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..events import HistoryLoaded
from ..history import history_entry
from .stream import StreamRenderer
from .terminal import terminal_content

__all__ = ["Replayed", "replay"]

_THOUGHT: Final = "agent_thought_chunk"
_STATUS_ONLY: Final = frozenset({"sessionUpdate", "toolCallId", "status", "_meta"})


@dataclass(frozen=True, slots=True)
class Replayed:
    """One stored message: updates to send, its history for the ledger, then more updates."""

    before: list[dict[str, Any]] = field(default_factory=list)
    history: HistoryLoaded = field(default_factory=HistoryLoaded)
    after: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Message:
    """A stored message as the renderer reads an SDK message (by attribute)."""

    content: list[Any]
    model: str | None = None
    parent_tool_use_id: str | None = None
    usage: Any = None
    tool_use_result: Any = None
    message_id: str | None = None


def _field(obj: object, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _replayed_end(update: dict[str, Any]) -> dict[str, Any]:
    """A terminal's end replayed carries the terminal marker again, as the reference's replay
    does (it renders with no field tracker to leave the unchanged content out)."""
    meta = update.get("_meta")
    return terminal_content(update) if isinstance(meta, Mapping) and "terminal_exit" in meta else update


def _running(update: Mapping[str, Any]) -> bool:
    """A status-only ``in_progress`` update (not replayed)."""
    return update.get("status") == "in_progress" and set(update) <= _STATUS_ONLY


def replay(stored: Iterable[object], cwd: str, *, terminal: bool = False, air: bool = False) -> Iterator[Replayed]:
    """The replay of ``stored`` (``get_session_messages`` entries, oldest first), message by
    message (see the module); ``cwd``: the session's folder (titles name paths relative to it);
    ``terminal``, ``air``: the client's, as for the live renderer (a command is a terminal card)."""
    renderer = StreamRenderer(cwd, terminal=terminal, air=air)
    for item in stored:
        entry = history_entry(item)
        history = HistoryLoaded(entries=(entry,) if entry is not None else ())
        message = _field(item, "message")
        if entry is None or not entry.top_level or not isinstance(message, Mapping):
            yield Replayed(history=history)
            continue
        before: list[dict[str, Any]] = []
        after: list[dict[str, Any]] = []
        try:
            if entry.role == "assistant":
                stored_id = message.get("id")
                shown = _Message(
                    _blocks(message), model=entry.model, message_id=stored_id if isinstance(stored_id, str) else None
                )
                updates, _ = renderer.assistant(shown)
                before = [u for u in updates if u.get("sessionUpdate") == _THOUGHT]
                after = [u for u in updates if u.get("sessionUpdate") != _THOUGHT]
            else:
                after = [_replayed_end(u) for u in renderer.user(_Message(_blocks(message))) if not _running(u)]
        except Exception:  # a transcript the renderer cannot read: its text still replays
            before, after = [], []
        yield Replayed(before, history, after)
    closing = renderer.close_open_tools()
    if closing:
        yield Replayed(after=closing)
