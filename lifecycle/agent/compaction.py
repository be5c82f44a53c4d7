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
  (:func:`compaction_capable`: ``clientCapabilities.session.compaction`` is an object, the
  reference's check):

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

Theory of operation
-------------------
Sans-I/O: :meth:`ContextCompaction.see` takes every SDK message and returns the updates to send
before the message's own (none for anything but the three system frames); the session sends them
through its publisher like the renderer's. The compacted history itself is Claude Code's: the next
request it sends carries the summary instead of the conversation (tests/e2e/test_compaction.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["TITLE", "ContextCompaction", "boundary_facts", "compaction_capable"]

#: The synthetic tool call's title (the reference's).
TITLE: Final = "Compact conversation"
_META: Final = {"claudeCode": {"toolName": "compact"}}
_MAX_ERROR: Final = 2_000


def compaction_capable(caps: object) -> bool:
    """Whether ``clientCapabilities`` (raw JSON) advertise ``session.compaction`` as an object."""
    session = caps.get("session") if isinstance(caps, Mapping) else None
    return isinstance(session, Mapping) and isinstance(session.get("compaction"), Mapping)


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

    @property
    def open(self) -> bool:
        """A compaction was shown and has not ended."""
        return self._id is not None and self._terminal is None

    def see(self, message: object, *, quiet: bool = False) -> list[dict[str, Any]]:
        """The updates a message makes (``quiet``: none, the state still follows)."""
        if type(message).__name__ != "SystemMessage":
            return []
        data = getattr(message, "data", None)
        if not isinstance(data, Mapping):
            return []
        subtype = getattr(message, "subtype", None)
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

    def end(self, *, quiet: bool = False) -> list[dict[str, Any]]:
        """The turn is over: a compaction still open is closed (see the module); the next one
        starts afresh."""
        compaction_id, was_open = self._id, self.open
        self._id = self._terminal = None
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
