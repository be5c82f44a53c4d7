"""Claude Code's stored sessions as the agent reads them: a transcript's messages for
``session/load`` (also when the SDK cannot decode the file), and one stored session as ACP
``SessionInfo`` for ``session/list``.

Rules
-----
* The messages are the SDK's (``get_session_messages``, its ``parentUuid`` chain); a transcript
  the SDK cannot decode is read line by line (:func:`lifecycle.history.read_transcript`), and the
  SDK's chain is built over what could be read, with what could not be read reported.
* The mode a stored session last ran in (:func:`stored_mode`) is the ``permissionMode`` Claude Code
  writes on each prompt's entry, the last one in the transcript's last 16 MiB (as the reference's
  ``readResumedTail`` reads the tail): ``plan`` only if no ``plan_mode_exit`` came after it; a mode
  that is no permission mode is none.
* ``updatedAt`` is written as JavaScript's ``Date.toISOString`` writes it (the reference's):
  milliseconds and ``Z``; a title is at most 200 characters.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import structlog
from acp.schema import SessionInfo

from ..history import TranscriptRead, read_transcript
from .modes import MODE_IDS
from .sdk import stored_session_path
from .session import sdk_function

__all__ = ["session_info", "stored_messages", "stored_mode"]

log = structlog.get_logger("lifecycle.agent")


async def stored_messages(session_id: str, cwd: str) -> tuple[list[Any], TranscriptRead | None]:
    """A stored session's messages, from ``get_session_messages``; when the SDK cannot decode the
    transcript (it reads the whole file as strict UTF-8: a line torn inside a character, a stray
    byte), from what :func:`lifecycle.history.read_transcript` reads of it, line by line, with what
    it could not read. The messages are then built by the SDK's own chain (``parentUuid``) over an
    in-memory store of the lines read, as ``get_session_messages`` builds them."""
    try:
        return await asyncio.to_thread(sdk_function("get_session_messages"), session_id, directory=cwd), None
    except UnicodeDecodeError:
        log.warning("session.load_undecodable", session_id=session_id)
    from claude_agent_sdk import InMemorySessionStore, get_session_messages_from_store, project_key_for_directory

    read = await asyncio.to_thread(_read_transcript_file, session_id, cwd)
    if read is None:
        return [], None
    store = InMemorySessionStore()
    entries: list[Any] = list(read.entries)  # the SDK's ``SessionStoreEntry``: a transcript line's object
    await store.append({"project_key": project_key_for_directory(cwd), "session_id": session_id}, entries)
    return await get_session_messages_from_store(store, session_id, directory=cwd), read


def _read_transcript_file(session_id: str, cwd: str) -> TranscriptRead | None:
    """The transcript file ``get_session_messages`` could not decode, read line by line (None: gone)."""
    path = stored_session_path(session_id, cwd)  # the SDK's own lookup: no public function names it
    try:
        return None if path is None else read_transcript(path.read_bytes())
    except OSError:
        return None


async def stored_mode(session_id: str, cwd: str) -> str | None:
    """The permission mode the stored session last ran in (see the module), or None."""
    return await asyncio.to_thread(_last_mode, session_id, cwd)


#: How much of a transcript's end :func:`stored_mode` reads (each prompt's entry names the mode).
_MODE_TAIL_BYTES = 16 * 1024 * 1024


def _last_mode(session_id: str, cwd: str) -> str | None:
    path = stored_session_path(session_id, cwd)
    try:
        if path is None:
            return None
        with path.open("rb") as f:
            f.seek(max(0, f.seek(0, 2) - _MODE_TAIL_BYTES))
            data = f.read()  # a line cut at the start is no JSON: skipped
    except OSError:
        return None
    plan_exited = False
    for line in reversed(data.split(b"\n")):
        if b'"plan_mode_exit"' in line:
            entry = _entry(line)
            attachment = entry.get("attachment") if entry else None
            plan_exited = plan_exited or (isinstance(attachment, dict) and attachment.get("type") == "plan_mode_exit")
            continue
        if b'"permissionMode"' not in line:
            continue
        entry = _entry(line)
        mode = entry.get("permissionMode") if entry and entry.get("type") == "user" else None
        if isinstance(mode, str) and mode.strip():
            mode = mode.strip()
            if mode == "plan" and plan_exited:
                return None
            return mode if mode in MODE_IDS else None
    return None


def _entry(line: bytes) -> dict[str, Any] | None:
    """One transcript line's object (None: not JSON, or a subagent's)."""
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) and not entry.get("isSidechain") else None


def session_info(info: Any, directory: str | None) -> SessionInfo:
    """One stored Claude session as ACP ``SessionInfo`` (title: its summary or first prompt)."""
    title = getattr(info, "custom_title", None) or getattr(info, "summary", None) or getattr(info, "first_prompt", None)
    modified = getattr(info, "last_modified", None)
    updated = None
    if isinstance(modified, (int, float)) and modified > 0:
        # As JavaScript's ``Date.toISOString`` (the reference's): milliseconds, ``Z``.
        ms = int(modified)  # whole milliseconds, no float rounding
        stamp = datetime.fromtimestamp(ms // 1000, UTC).replace(microsecond=ms % 1000 * 1000)
        updated = stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return SessionInfo(
        session_id=str(getattr(info, "session_id", "")),
        cwd=str(getattr(info, "cwd", None) or directory or ""),
        title=title[:200] if isinstance(title, str) and title else None,
        updated_at=updated,
    )
