"""A session's title, as Claude Code names it (issue 31 "Titles", issue 30 point 7).

Rules
-----
* Claude Code names a session with a small model call, asked for by the control request
  ``generate_session_title`` (``description``: the prompt's text; ``persist: true``, so the title
  is stored in the transcript as its ``ai-title`` and ``session/list`` shows it). The reference
  adapter asks the same way, as soon as a prompt is sent to Claude Code; the CLI answers while
  the turn runs, with the title it stored or is generating (no second model call).
* It is asked in the background once a prompt with at least :data:`MIN_DESCRIPTION` characters
  of text has been sent: no prompt waits for it. Below that the CLI returns no title without a
  model call, so the next prompt tries.
* One title per session: a stored one (a loaded, resumed or forked session's, or a user's
  ``/rename``; the SDK's ``custom_title``) is published as it is and never titled over; a
  generation that yields nothing lets the next prompt try again.
* Published as a ``session_info_update`` with ``title`` and ``updatedAt`` (milliseconds, ``Z``),
  the title's whitespace collapsed and cut to :data:`MAX_TITLE` characters with ``…`` (the
  reference's ``sanitizeTitle``), and only when it differs from the title last published.
* A request Claude Code refuses, a runtime that ends meanwhile, a session closed meanwhile:
  nothing is published; the failure is logged by its type only.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

import structlog

from .prompt import PromptContent

__all__ = ["MAX_TITLE", "MIN_DESCRIPTION", "SessionTitle", "sanitize_title"]

log = structlog.get_logger("lifecycle.agent")

#: The longest title published (the reference's ``MAX_TITLE_LENGTH``).
MAX_TITLE: Final = 256
#: Below this many characters of prompt text Claude Code generates no title.
MIN_DESCRIPTION: Final = 10

Generate = Callable[[str], Awaitable[str | None]]
Publish = Callable[[Mapping[str, Any]], Awaitable[object]]
StoredTitle = Callable[[], Awaitable[str | None]]


def sanitize_title(text: str) -> str:
    """``text`` on one line, whitespace collapsed, at most :data:`MAX_TITLE` characters."""
    one_line = re.sub(r"\s+", " ", text).strip()
    return one_line if len(one_line) <= MAX_TITLE else one_line[: MAX_TITLE - 1] + "…"


def prompt_text(content: PromptContent) -> str:
    """The prompt's own text, its text blocks one a line (what Claude Code titles from)."""
    if isinstance(content, str):
        return content.strip()
    texts = [b["text"] for b in content if b.get("type") == "text" and isinstance(b.get("text"), str)]
    return "\n".join(texts).strip()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class SessionTitle:
    """One session's title: settled once named (or asked), the title last published, and the
    background request in flight (cancelled with the session)."""

    def __init__(self, session_id: str, publish: Publish, stored: StoredTitle) -> None:
        self._session_id = session_id
        self._publish = publish
        self._stored = stored
        self.settled = False
        self.shown: str | None = None
        self._task: asyncio.Task[None] | None = None

    def prompt_sent(self, content: PromptContent, generate: Generate) -> None:
        """A prompt reached Claude Code: ask for the session's title unless it has one."""
        if self.settled:
            return
        description = prompt_text(content)
        if len(description) < MIN_DESCRIPTION:
            return
        self.settled = True
        self._task = asyncio.ensure_future(self._name(description, generate))

    async def _name(self, description: str, generate: Generate) -> None:
        try:
            title = await self._stored()
            if not title:
                title = await generate(description)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.info("session.title_failed", session_id=self._session_id, error_type=type(exc).__name__)
            title = None
        if not title:
            self.settled = False  # the next prompt tries again
            return
        shown = sanitize_title(title)
        if shown and shown != self.shown:
            self.shown = shown
            await self._publish({"sessionUpdate": "session_info_update", "title": shown, "updatedAt": _now()})
            log.info("session.titled", session_id=self._session_id, chars=len(shown))

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
