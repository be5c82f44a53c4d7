"""History replay (spec: "History replay"): stored messages -> :class:`HistoryEntry` values.

``session/load`` replays a session's history. Two stored forms are read:

* ``claude_agent_sdk.get_session_messages()`` entries (``SessionMessage`` objects, or dicts with
  ``type``/``uuid``/``message``) -- these have lost the transcript's ``error``,
  ``isApiErrorMessage`` and ``apiErrorStatus`` fields;
* raw transcript lines of ``~/.claude/projects/<encoded cwd>/<session>.jsonl``.

Recognition therefore works from ``message.model == "<synthetic>"`` plus the SDK's stable
usage-limit prefixes alone (:data:`lifecycle.conditions.USAGE_LIMIT_PREFIXES`), never from
arbitrary model prose. The ledger decides ids, positions and which occurrence stays active.

A message that a later one names as replaced (Claude Code 2.1.337's ``supersedes``, after a
refusal fallback or a tool call it could not parse: "Remove the named messages when this one
arrives") is left out of the history, so its text is not replayed a second time and a failure it
carried is superseded there too (issue 49.3). Claude Code leaves such messages out of the
transcript it stores; this only keeps a history that still holds one as Claude Code meant it.

A transcript's bytes the SDK cannot read (it decodes the whole file as strict UTF-8) are read by
:func:`read_transcript`, line by line, losing nothing readable: a line with bytes that are not
UTF-8 is read with U+FFFD in their place (as Node's UTF-8 reader of the reference adapter reads
it; dropping it would cut the ``parentUuid`` chain, and every message before it with it); a line
that is then not a JSON object (torn by a crash, garbage) is skipped. Both are counted, by line
number, and :func:`unreadable_notice` says so without naming the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .conditions import is_usage_limit_text
from .events import HistoryEntry, HistoryLoaded

__all__ = [
    "TranscriptRead",
    "history_entry",
    "is_real_answer",
    "is_replayed_limit",
    "load_history",
    "read_transcript",
    "replaced_uuids",
    "replayed_prompt",
    "strip_markers",
    "text_of",
    "unreadable_notice",
]


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


#: What Claude Code wraps a stored user message in that nobody typed, as the reference adapter
#: strips it on replay (``TRANSCRIPT_MARKERS``, ``dist/acp-agent.js``): a local slash command's
#: markers and output, and the context it injects (a background task's ``<task-notification>``,
#: raw XML with its output file's path, and a ``<system-reminder>``).
MARKER_TAGS: tuple[str, ...] = (
    "command-name", "command-message", "command-args", "local-command-stdout", "local-command-stderr",
    "system-reminder", "task-notification",
)  # fmt: skip
#: Slash commands whose marker-only message is not replayed (the reference's ``REPLAY_HIDDEN_COMMANDS``).
HIDDEN_COMMANDS: frozenset[str] = frozenset(
    {"/context", "/heapdump", "/extra-usage", "/compact", "/model", "/mcp", "/status", "/usage"}
)


def strip_markers(text: str) -> str:
    """``text`` without its :data:`MARKER_TAGS` ``<tag>…</tag>`` spans, each to the nearest closing
    tag of its name (the reference's ``stripMarkerTags``); an opening tag never closed is left."""
    if "<" not in text:
        return text
    out: list[str] = []
    copied = i = 0
    dead: set[str] = set()
    while True:
        i = text.find("<", i)
        if i < 0:
            break
        for tag in MARKER_TAGS:
            opener = f"<{tag}>"
            if tag in dead or not text.startswith(opener, i):
                continue
            end = text.find(f"</{tag}>", i + len(opener))
            if end < 0:
                dead.add(tag)  # never closed ahead: not an opener from here on
                continue
            out.append(text[copied:i])
            copied = end + len(tag) + 3
            i = copied - 1
            break
        i += 1
    out.append(text[copied:])
    return "".join(out)


def _marker_text(text: str, tag: str) -> str | None:
    start = text.find(f"<{tag}>")
    end = text.find(f"</{tag}>", start + len(tag) + 2) if start >= 0 else -1
    return text[start + len(tag) + 2 : end] if end >= 0 else None


def replayed_prompt(text: str) -> str | None:
    """The user's words of a stored prompt's ``text`` (the reference's
    ``stripLocalCommandMetadataText``): without :data:`MARKER_TAGS`; a message that was only
    markers is its slash command as typed (``/name args``), or None (not replayed) for output, a
    :data:`HIDDEN_COMMANDS` one, or injected context."""
    stripped = strip_markers(text)
    if stripped.strip() or stripped == text:
        return stripped
    if _marker_text(text, "local-command-stdout") is not None or _marker_text(text, "local-command-stderr") is not None:
        return None
    name = (_marker_text(text, "command-name") or "").strip()
    if not name.startswith("/") or name.split(" ", 1)[0] in HIDDEN_COMMANDS:
        return None
    args = (_marker_text(text, "command-args") or "").strip()
    return f"{name} {args}" if args else name


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
        if prompt and "<" in text:  # what Claude Code wrapped or injected is not the user's
            words = replayed_prompt(text)
            prompt, text = words is not None, words or ""
        return HistoryEntry(role="user", uuid=uuid, text=text if prompt else "", top_level=top_level, prompt=prompt)
    model = message.get("model")
    return HistoryEntry(
        role="assistant",
        uuid=uuid,
        text=text,
        model=model if isinstance(model, str) else None,
        top_level=top_level,
    )


#: The most message uuids one message may name as replaced (Claude Code names one response's).
MAX_REPLACED = 64


def replaced_uuids(value: object) -> tuple[str, ...]:
    """The uuids an assistant message's ``supersedes`` names (CLI 2.1.337: "Uuids of earlier
    messages that this message replaces"): at most :data:`MAX_REPLACED`, each a string of 1 to 100
    characters; a value that is no list, and an entry that is no such string, name nothing."""
    if not isinstance(value, list):
        return ()
    return tuple(u for u in value[:MAX_REPLACED] if isinstance(u, str) and 0 < len(u) <= 100)


def load_history(stored: Iterable[object]) -> HistoryLoaded:
    """The :class:`HistoryLoaded` event for a stored history, oldest first, without the messages a
    later one replaced (see the module)."""
    stored = list(stored)
    replaced = {u for s in stored if _field(s, "type") == "assistant" for u in replaced_uuids(_field(s, "supersedes"))}
    entries = tuple(e for e in (history_entry(s) for s in stored) if e is not None and e.uuid not in replaced)
    return HistoryLoaded(entries=entries)


def is_replayed_limit(entry: HistoryEntry) -> bool:
    """A stored SDK synthetic usage-limit message of the top-level transcript (replayed as a record)."""
    return entry.role == "assistant" and entry.top_level and entry.synthetic and is_usage_limit_text(entry.text)


def is_real_answer(entry: HistoryEntry) -> bool:
    """A stored real model answer of the top-level transcript (it proves recovery from a quota)."""
    return entry.role == "assistant" and entry.top_level and not entry.synthetic and entry.model is not None


# ------------------------------------------------------------------ unreadable transcripts


@dataclass(frozen=True, slots=True)
class TranscriptRead:
    """A transcript read line by line: ``entries`` the JSON objects of its lines, in file order;
    ``skipped`` the (1-based) numbers of the lines that are no JSON object; ``repaired`` those read
    with U+FFFD for bytes that are not UTF-8."""

    entries: tuple[dict[str, Any], ...]
    skipped: tuple[int, ...] = ()
    repaired: tuple[int, ...] = ()


def read_transcript(data: bytes) -> TranscriptRead:
    """The lines of a transcript's bytes (JSON objects, one a line), whatever they hold."""
    entries: list[dict[str, Any]] = []
    skipped: list[int] = []
    repaired: list[int] = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            line, bad = raw.decode("utf-8"), False
        except UnicodeDecodeError:
            line, bad = raw.decode("utf-8", errors="replace"), True
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):  # not JSON; JSON nested too deep to parse
            entry = None
        if not isinstance(entry, dict):
            skipped.append(number)
            continue
        entries.append(entry)
        if bad:
            repaired.append(number)
    return TranscriptRead(tuple(entries), tuple(skipped), tuple(repaired))


def _lines(numbers: tuple[int, ...]) -> str:
    shown = ", ".join(str(n) for n in numbers[:5])
    more = f" and {len(numbers) - 5} more" if len(numbers) > 5 else ""
    return f"line{'s' if len(numbers) > 1 else ''} {shown}{more}"


def unreadable_notice(read: TranscriptRead) -> str | None:
    """What the user is told about a transcript's unreadable lines (None: every line was read):
    a title line, then what was skipped and what was repaired."""
    parts: list[str] = []
    if read.skipped:
        parts.append(f"Skipped {_lines(read.skipped)} of the stored transcript: cut off or not JSON.")
    if read.repaired:
        parts.append(f"Bytes that are not UTF-8 in {_lines(read.repaired)} are shown as \ufffd.")
    if not parts:
        return None
    return "Part of this session's history could not be read\n" + " ".join(parts)
