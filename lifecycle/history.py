"""History replay (spec: "History replay"): stored messages -> :class:`HistoryEntry` values.

``session/load`` replays a session's history. Two stored forms are read:

* ``claude_agent_sdk.get_session_messages()`` entries (``SessionMessage`` objects, or dicts with
  ``type``/``uuid``/``message``) -- these have lost the transcript's ``error``,
  ``isApiErrorMessage`` and ``apiErrorStatus`` fields;
* raw transcript lines of ``~/.claude/projects/<encoded cwd>/<session>.jsonl``.

Recognition therefore works from ``message.model == "<synthetic>"`` plus the SDK's stable
usage-limit prefixes alone (:data:`lifecycle.conditions.USAGE_LIMIT_PREFIXES`), never from
arbitrary model prose. The ledger decides ids, positions and which occurrence stays active.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .conditions import is_usage_limit_text
from .events import HistoryEntry, HistoryLoaded

__all__ = ["history_entry", "is_real_answer", "is_replayed_limit", "load_history", "text_of"]


def text_of(content: object) -> str:
    """The text of a message's ``content`` (a string, or a list of blocks with ``text``)."""
    if isinstance(content, str):
        return content
    # ``list``/``dict`` first: the common case, and far cheaper than the ABC checks.
    if not isinstance(content, (list, tuple)) and (
        not isinstance(content, Sequence) or isinstance(content, (bytes, bytearray))
    ):
        return ""
    if len(content) == 1:
        block = content[0]
        if isinstance(block, dict) and block.get("type", "text") == "text":
            text = block.get("text")
            return text if isinstance(text, str) else ""
    parts: list[str] = []
    for block in content:
        if isinstance(block, (dict, Mapping)):
            if block.get("type", "text") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
        else:
            text = getattr(block, "text", None)
            if isinstance(text, str) and not hasattr(block, "thinking"):
                parts.append(text)
    return "".join(parts)


def _field(obj: object, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _has_tool_result(content: object) -> bool:
    if not isinstance(content, Sequence) or isinstance(content, (str, bytes, bytearray)):
        return False
    return any(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content)


def history_entry(stored: object) -> HistoryEntry | None:
    """One stored message (dict or ``SessionMessage``) as a history entry; None if not a message."""
    kind = _field(stored, "type")
    if kind not in ("user", "assistant"):
        return None
    message = _field(stored, "message")
    if not isinstance(message, Mapping):
        return None
    uuid = _field(stored, "uuid")
    uuid = uuid if isinstance(uuid, str) and uuid else None
    sidechain = _field(stored, "isSidechain") is True
    top_level = _field(stored, "parent_tool_use_id") is None and not sidechain
    content = message.get("content")
    text = text_of(content)
    if kind == "user":
        meta = _field(stored, "isMeta") is True
        prompt = top_level and not meta and not _has_tool_result(content)
        return HistoryEntry(role="user", uuid=uuid, text=text if prompt else "", top_level=top_level, prompt=prompt)
    model = message.get("model")
    return HistoryEntry(
        role="assistant",
        uuid=uuid,
        text=text,
        model=model if isinstance(model, str) else None,
        top_level=top_level,
    )


def load_history(stored: Iterable[object]) -> HistoryLoaded:
    """The :class:`HistoryLoaded` event for a stored history, oldest first."""
    entries = tuple(e for e in (history_entry(s) for s in stored) if e is not None)
    return HistoryLoaded(entries=entries)


def is_replayed_limit(entry: HistoryEntry) -> bool:
    """A stored SDK synthetic usage-limit message of the top-level transcript (replayed as a record)."""
    return entry.role == "assistant" and entry.top_level and entry.synthetic and is_usage_limit_text(entry.text)


def is_real_answer(entry: HistoryEntry) -> bool:
    """A stored real model answer of the top-level transcript (it proves recovery from a quota)."""
    return entry.role == "assistant" and entry.top_level and not entry.synthetic and entry.model is not None
