"""Claude Code compacting its context (``/compact``, or on its own when the context fills up),
shown as the reference adapter 0.101.0 shows it (``dist/context-compaction.js``,
``dist/tool-calls/reporters/compaction.js``).

Rules
-----
* One compaction is one entity, named by the ``uuid`` of Claude Code's ``status: compacting``
  system message (the reference's id). ``compacting`` opens it; ``compact_result`` ``success`` /
  ``failed`` ends it (``completed`` / ``failed``, with the ``compact_error``); the
  ``compact_boundary`` that follows adds the facts (``trigger``, ``preTokens``, ``postTokens``,
  ``durationMs`` when Claude Code sent them), without repeating the status. A terminal frame
  whose opening never came (a runtime that reports only the end) opens and ends it at once.
  A second ``compacting`` while one is open is the same compaction.
* Presentation, chosen once per session from the client's capabilities
  (:attr:`lifecycle.negotiation.ClientState.compaction`: ``clientCapabilities.session.compaction``
  is an object, the reference's check):

  - a plain client gets the synthetic tool call "Compact conversation", kind ``think``,
    ``in_progress`` -> ``completed`` / ``failed`` (the error as ``Compaction failed: …`` content),
    the facts in ``rawOutput`` and ``_meta.claudeCode.toolName`` ``compact``;
  - a client that advertises compaction gets ``compaction_update`` (``compactionId``,
    ``status``, ``error`` when it failed) instead, once per status (the reference repeats the
    terminal one at the boundary, which adds nothing for a client without its AIR ``_meta``).

* ``trigger`` is Claude Code's: ``manual`` for ``/compact``, ``automatic`` for its own (the
  reference's ``compactionTrigger``; this agent never sends ``/compact`` by itself, so never
  ``idle``).
* The turn's end (its result, or Claude Code gone: :meth:`ContextCompaction.end`) closes a
  compaction that never ended: a ``compaction_update`` is ``cancelled`` (the reference), the tool
  call ``failed`` (the reference leaves it ``in_progress``; this agent never leaves a tool call
  running: docs/parity.md).
* A compaction of a turn that shows nothing more (cancelled) updates this state but shows
  nothing (the session passes ``quiet``).
* The summary, for a ``compaction_update`` client only (the reference's; the tool call never
  showed it): Claude Code reports the model's compaction output to a ``PostCompact`` hook
  (:meth:`ContextCompaction.summary_hook`, registered by the session for such a client) and
  awaits it before it sends the compaction's terminal frames. The output is cut to what a user
  reads (:func:`summary_text`, the reference's ``compactionSummaryText``: the ``<summary>`` span,
  no ``<analysis>``, no continuation framing; nothing when the framing is not recognized) and
  rides on the first ``completed`` update as ``summary: [{type: text, text}]``. A summary that
  comes before its compaction's opening waits for it; a subagent's compaction (``agent_id``)
  is not the session's.

Theory of operation
-------------------
Sans-I/O: the compaction lane, the second of :data:`lifecycle.agent.lanes.LANES`
(:meth:`ContextCompaction.run`). :meth:`ContextCompaction.see` takes every message record and
returns the updates to send before the message's own (none for anything but the three system
frames), and a result (a turn's end, the prompt's or an own turn's) closes a compaction left
open (:meth:`ContextCompaction.end`); the session sends them through its publisher like the
renderer's. The compacted history itself is Claude Code's: the next
request it sends carries the summary instead of the conversation (tests/e2e/test_compaction.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from .messages import ClaudeMessage, Kind, LaneParts, Pass, Step

__all__ = ["TITLE", "ContextCompaction", "boundary_facts", "summary_text"]

#: The synthetic tool call's title (the reference's).
TITLE: Final = "Compact conversation"
_META: Final = {"claudeCode": {"toolName": "compact"}}
_MAX_ERROR: Final = 2_000


#: Tags on their own line, as the model emits them (a summary that quotes ``<summary>``
#: mid-sentence is not cut at the mention).
_SUMMARY_OPEN_LINE: Final = re.compile(r"^[ \t]*<summary>[ \t]*\r?\n", re.I | re.M)
_SUMMARY_CLOSE_LINE: Final = re.compile(r"^[ \t]*</summary>[ \t]*$", re.I | re.M)
#: The model's reasoning before the summary: own-line tags anywhere, inline tags only leading.
_ANALYSIS_LINES: Final = re.compile(r"^[ \t]*<analysis>[ \t]*\r?\n[\s\S]*?\n[ \t]*</analysis>[ \t]*$", re.I | re.M)
_ANALYSIS_LEADING: Final = re.compile(r"^\s*<analysis>[\s\S]*?</analysis>", re.I)
#: The framing Claude Code wraps around the summary it keeps as the next user message.
_CONTINUATION: Final = re.compile(r"^\s*This session is being continued from a previous conversation", re.I)
_PERSISTED_PREAMBLE: Final = re.compile(
    r"^\s*This session is being continued from a previous conversation[^\n]*\n+Summary:[ \t]*\r?\n"
)
_PERSISTED_TRAILERS: Final = (
    re.compile(r"\n+If you need specific details from before compaction[\s\S]*\Z"),
    re.compile(r"\n+(?:Please )?[Cc]ontinue the conversation from where it left (?:it )?off[\s\S]*\Z"),
)


def summary_text(raw: str) -> str | None:
    """The user-displayable summary of Claude's compaction output (the reference's
    ``compactionSummaryText``): the ``<analysis>`` block dropped, the ``<summary>`` span kept, or
    Claude Code's continuation framing taken off; None when nothing is left or the framing is not
    recognized (never model-facing instructions)."""
    text = _ANALYSIS_LEADING.sub("", _ANALYSIS_LINES.sub("", raw), count=1)
    tagged = _tagged(text)
    if tagged is not None:
        text = tagged
    elif _CONTINUATION.match(text):
        body = _PERSISTED_PREAMBLE.sub("", text, count=1)
        if body == text:
            return None
        text = body
        for trailer in _PERSISTED_TRAILERS:
            text = trailer.sub("", text, count=1)
    text = text.strip()
    return text or None


def _tagged(raw: str) -> str | None:
    closes = list(_SUMMARY_CLOSE_LINE.finditer(raw))
    if closes:
        close = closes[-1].start()
        opens = list(_SUMMARY_OPEN_LINE.finditer(raw, 0, close))
        if opens:
            return raw[opens[-1].end() : close]
    lower = raw.lower()
    start, end = lower.find("<summary>"), lower.rfind("</summary>")
    if start >= 0 and end > start:
        return raw[start + len("<summary>") : end]
    return None


def boundary_facts(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The facts of a ``compact_boundary``'s ``compact_metadata``, as the reference's
    ``contextCompactionMetadataFromBoundary`` builds them (an unreadable count is left out)."""
    facts: dict[str, Any] = {"trigger": "automatic" if metadata.get("trigger") == "auto" else "manual"}
    for key, name in (("pre_tokens", "preTokens"), ("post_tokens", "postTokens"), ("duration_ms", "durationMs")):
        value = metadata.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            facts[name] = value
    return facts


class ContextCompaction:
    """One session's compaction lifecycle (see the module)."""

    def __init__(self, *, updates: bool = False) -> None:
        self.updates = updates  # the client gets ``compaction_update`` instead of the tool call
        self._id: str | None = None  # the compaction shown last (open or ended) in this turn
        self._terminal: str | None = None  # its terminal status, once sent
        self._summary: str | None = None  # the summary Claude Code reported, for the next terminal

    @classmethod
    def build(cls, parts: LaneParts) -> ContextCompaction:
        return cls(updates=parts.client.compaction)

    def run(self, p: Pass) -> list[Step]:
        """The lane (:mod:`lifecycle.agent.lanes`): what :meth:`see` shows, and a turn's end (a
        result) closes a compaction left open; one step, before the message's own."""
        shown = self.see(p.message, quiet=p.quiet)
        if p.message.kind is Kind.RESULT:
            shown += self.end(quiet=p.quiet)
        return [Step(shown)] if shown else []

    @property
    def open(self) -> bool:
        """A compaction was shown and has not ended."""
        return self._id is not None and self._terminal is None

    def see(self, message: ClaudeMessage, *, quiet: bool = False) -> list[dict[str, Any]]:
        """The updates a message makes (``quiet``: none, the state still follows)."""
        if message.kind is not Kind.SYSTEM:
            return []
        data, subtype = message.data, message.subtype
        uid = data.get("uuid")
        uid = uid[:200] if isinstance(uid, str) and uid else "compaction"
        updates: list[dict[str, Any]] = []
        if subtype == "status":
            if data.get("status") == "compacting":
                updates = self._start(uid)
            elif data.get("compact_result") == "success":
                updates = self._finish(uid, "completed", {})
            elif data.get("compact_result") == "failed":
                error = data.get("compact_error")
                updates = self._finish(uid, "failed", {"error": error[:_MAX_ERROR]} if isinstance(error, str) else {})
        elif subtype == "compact_boundary":
            metadata = data.get("compact_metadata")
            updates = self._finish(uid, "completed", boundary_facts(metadata) if isinstance(metadata, Mapping) else {},
                                   enrich=True)  # fmt: skip
        return [] if quiet else updates

    async def summary_hook(self, data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        """The ``PostCompact`` hook (the Claude SDK's hook callback): keeps the summary of the
        session's own compaction for its terminal update. Never raises; never changes what Claude
        Code does (an empty answer)."""
        if not self.updates or not isinstance(data, Mapping):
            return {}
        if data.get("hook_event_name") == "PostCompact" and not data.get("agent_id"):
            raw = data.get("compact_summary")
            if isinstance(raw, str):
                self._summary = summary_text(raw)
        return {}

    def end(self, *, quiet: bool = False) -> list[dict[str, Any]]:
        """The turn is over: a compaction still open is closed (see the module); the next one
        starts afresh."""
        compaction_id, was_open = self._id, self.open
        self._id = self._terminal = None
        if quiet or was_open:
            self._summary = None  # a cancelled compaction's, or a cancelled turn's: never a later one's
        if compaction_id is None or not was_open or quiet:
            return []
        if self.updates:
            return [{"sessionUpdate": "compaction_update", "compactionId": compaction_id, "status": "cancelled"}]
        closed = {"sessionUpdate": "tool_call_update", "toolCallId": compaction_id, "status": "failed"}
        return [{**closed, "_meta": _meta()}]

    # -------------------------------------------------------------- internals

    def _start(self, compaction_id: str) -> list[dict[str, Any]]:
        if self.open:
            return []
        self._id, self._terminal = compaction_id, None
        if self.updates:
            return [{"sessionUpdate": "compaction_update", "compactionId": compaction_id, "status": "in_progress"}]
        return [
            {
                "sessionUpdate": "tool_call",
                "toolCallId": compaction_id,
                "title": TITLE,
                "kind": "think",
                "status": "in_progress",
                "_meta": _meta(),
            }
        ]

    def _finish(
        self, compaction_id: str, status: str, facts: dict[str, Any], *, enrich: bool = False
    ) -> list[dict[str, Any]]:
        opened = self._id is None
        first = self._terminal is None
        if opened:
            self._id = compaction_id
        if first:
            self._terminal = status
        elif not enrich:
            return []  # a duplicate terminal frame
        shown_id, terminal = self._id or compaction_id, self._terminal or status
        error = facts.get("error") if terminal == "failed" else None
        if self.updates:
            if not first:
                return []  # the boundary's facts: the reference repeats the status only for AIR
            update: dict[str, Any] = {"sessionUpdate": "compaction_update", "compactionId": shown_id}
            update["status"] = terminal
            summary, self._summary = self._summary, None
            if summary and terminal == "completed":
                update["summary"] = [{"type": "text", "text": summary}]
            if isinstance(error, str) and error:
                update["error"] = error
            return [update]
        out: dict[str, Any] = {"sessionUpdate": "tool_call" if opened else "tool_call_update", "toolCallId": shown_id}
        if opened:
            out.update(title=TITLE, kind="think")
        if opened or first:
            out["status"] = status
        if isinstance(error, str) and error:
            out["content"] = [{"type": "content", "content": {"type": "text", "text": f"Compaction failed: {error}"}}]
        if facts:
            out["rawOutput"] = dict(facts)
        out["_meta"] = _meta()
        return [out]


def _meta() -> dict[str, Any]:
    return {"claudeCode": dict(_META["claudeCode"])}
