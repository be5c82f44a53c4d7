"""lifecycle.agent.compaction: Claude Code's compaction frames as the reference adapter 0.101.0
shows them (expected values from its dist/tool-calls/reporters/compaction.js and
dist/context-compaction.js), for the cases the real CLI does not produce on demand: a failed
compaction, a terminal frame without its opening, a duplicate, the turn ending mid-compaction,
a cancelled turn. The live path (``/compact``, automatic compaction, ``compaction_update``) is
tests/e2e/test_compaction.py's."""

from __future__ import annotations

from typing import Any

from claude_agent_sdk import SystemMessage

from lifecycle.agent.compaction import ContextCompaction, boundary_facts, compaction_capable

META = {"claudeCode": {"toolName": "compact"}}


def status(uid: str, **data: Any) -> SystemMessage:
    return SystemMessage(subtype="status", data={"type": "system", "subtype": "status", "uuid": uid, **data})


def boundary(uid: str, **metadata: Any) -> SystemMessage:
    data = {"type": "system", "subtype": "compact_boundary", "uuid": uid, "compact_metadata": metadata}
    return SystemMessage(subtype="compact_boundary", data=data)


def test_a_compaction_is_one_tool_call_opened_ended_then_given_its_facts() -> None:
    c = ContextCompaction()
    assert c.see(status("c1", status="compacting")) == [
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "c1",
            "title": "Compact conversation",
            "kind": "think",
            "status": "in_progress",
            "_meta": META,
        }
    ]
    assert c.see(status("c1", status="compacting")) == []  # the same compaction
    assert c.see(status("r1", status=None, compact_result="success")) == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed", "_meta": META}
    ]
    assert c.see(status("r2", status=None, compact_result="success")) == []  # a duplicate terminal
    assert c.see(boundary("b1", trigger="manual", pre_tokens=21, post_tokens=2609, duration_ms=19)) == [
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "rawOutput": {"trigger": "manual", "preTokens": 21, "postTokens": 2609, "durationMs": 19},
            "_meta": META,
        }
    ]
    assert c.end() == []  # it ended: nothing to close


def test_a_failed_compaction_fails_its_tool_call_with_the_error() -> None:
    c = ContextCompaction()
    c.see(status("c1", status="compacting"))
    assert c.see(
        status("r1", status=None, compact_result="failed", compact_error="Not enough messages to compact.")
    ) == [
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "status": "failed",
            "content": [
                {
                    "type": "content",
                    "content": {"type": "text", "text": "Compaction failed: Not enough messages to compact."},
                }
            ],
            "rawOutput": {"error": "Not enough messages to compact."},
            "_meta": META,
        }
    ]


def test_a_terminal_frame_without_its_opening_opens_and_ends_the_tool_call_at_once() -> None:
    c = ContextCompaction()
    assert c.see(boundary("b1", trigger="auto", pre_tokens=990_021)) == [
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "b1",
            "title": "Compact conversation",
            "kind": "think",
            "status": "completed",
            "rawOutput": {"trigger": "automatic", "preTokens": 990_021},
            "_meta": META,
        }
    ]


def test_the_turns_end_closes_an_open_compaction() -> None:
    plain, capable = ContextCompaction(), ContextCompaction(updates=True)
    plain.see(status("c1", status="compacting"))
    assert capable.see(status("c2", status="compacting")) == [
        {"sessionUpdate": "compaction_update", "compactionId": "c2", "status": "in_progress"}
    ]
    # The tool call fails (this agent leaves no tool call running); the entity is cancelled.
    assert plain.end() == [{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "failed", "_meta": META}]
    assert capable.end() == [{"sessionUpdate": "compaction_update", "compactionId": "c2", "status": "cancelled"}]
    # The next compaction starts afresh.
    assert plain.see(status("c3", status="compacting"))[0]["toolCallId"] == "c3"


def test_compaction_updates_carry_the_status_once_and_the_error() -> None:
    c = ContextCompaction(updates=True)
    c.see(status("c1", status="compacting"))
    assert c.see(status("r1", status=None, compact_result="failed", compact_error="boom")) == [
        {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "failed", "error": "boom"}
    ]
    assert c.see(boundary("b1", trigger="manual", pre_tokens=3)) == []


def test_a_quiet_turn_shows_nothing_but_the_state_follows() -> None:
    c = ContextCompaction()
    assert c.see(status("c1", status="compacting"), quiet=True) == []
    assert c.open
    assert c.end(quiet=True) == []
    assert not c.open


def test_facts_and_capability() -> None:
    assert boundary_facts({"trigger": "auto", "pre_tokens": -1, "post_tokens": True}) == {"trigger": "automatic"}
    assert compaction_capable({"session": {"compaction": {}}})
    assert not compaction_capable({"session": {"compaction": True}})
    assert not compaction_capable({"session": None})
    assert not compaction_capable(None)
