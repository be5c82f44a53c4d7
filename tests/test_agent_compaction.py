"""lifecycle.agent.compaction: Claude Code's compaction frames as the reference adapter 0.101.0
shows them (expected values from its dist/tool-calls/reporters/compaction.js and
dist/context-compaction.js), for the cases the real CLI does not produce on demand: a failed
compaction, a terminal frame without its opening, a duplicate, the turn ending mid-compaction,
a cancelled turn. The live path (``/compact``, automatic compaction, ``compaction_update``) is
tests/e2e/test_compaction.py's."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from claude_agent_sdk import SystemMessage

from lifecycle.agent.compaction import ContextCompaction, boundary_facts, summary_text
from lifecycle.agent.messages import read
from lifecycle.negotiation import ClientState

META = {"claudeCode": {"toolName": "compact"}}


def status(uid: str, **data: Any) -> SystemMessage:
    return SystemMessage(subtype="status", data={"type": "system", "subtype": "status", "uuid": uid, **data})


def boundary(uid: str, **metadata: Any) -> SystemMessage:
    data = {"type": "system", "subtype": "compact_boundary", "uuid": uid, "compact_metadata": metadata}
    return SystemMessage(subtype="compact_boundary", data=data)


def compaction_of(caps: object) -> bool:
    return ClientState.parse(caps).compaction


def test_a_compaction_is_one_tool_call_opened_ended_then_given_its_facts() -> None:
    c = ContextCompaction()
    assert c.see(read(status("c1", status="compacting"))) == [
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "c1",
            "title": "Compact conversation",
            "kind": "think",
            "status": "in_progress",
            "_meta": META,
        }
    ]
    assert c.see(read(status("c1", status="compacting"))) == []  # the same compaction
    assert c.see(read(status("r1", status=None, compact_result="success"))) == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed", "_meta": META}
    ]
    assert c.see(read(status("r2", status=None, compact_result="success"))) == []  # a duplicate terminal
    assert c.see(read(boundary("b1", trigger="manual", pre_tokens=21, post_tokens=2609, duration_ms=19))) == [
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
    c.see(read(status("c1", status="compacting")))
    assert c.see(
        read(status("r1", status=None, compact_result="failed", compact_error="Not enough messages to compact."))
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
    assert c.see(read(boundary("b1", trigger="auto", pre_tokens=990_021))) == [
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
    plain.see(read(status("c1", status="compacting")))
    assert capable.see(read(status("c2", status="compacting"))) == [
        {"sessionUpdate": "compaction_update", "compactionId": "c2", "status": "in_progress"}
    ]
    # The tool call fails (this agent leaves no tool call running); the entity is cancelled.
    assert plain.end() == [{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "failed", "_meta": META}]
    assert capable.end() == [{"sessionUpdate": "compaction_update", "compactionId": "c2", "status": "cancelled"}]
    # The next compaction starts afresh.
    assert plain.see(read(status("c3", status="compacting")))[0]["toolCallId"] == "c3"


def test_compaction_updates_carry_the_status_once_and_the_error() -> None:
    c = ContextCompaction(updates=True)
    c.see(read(status("c1", status="compacting")))
    assert c.see(read(status("r1", status=None, compact_result="failed", compact_error="boom"))) == [
        {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "failed", "error": "boom"}
    ]
    assert c.see(read(boundary("b1", trigger="manual", pre_tokens=3))) == []


def test_a_quiet_turn_shows_nothing_but_the_state_follows() -> None:
    c = ContextCompaction()
    assert c.see(read(status("c1", status="compacting")), quiet=True) == []
    assert c.open
    assert c.end(quiet=True) == []
    assert not c.open


def test_facts_and_capability() -> None:
    assert boundary_facts({"trigger": "auto", "pre_tokens": -1, "post_tokens": True}) == {"trigger": "automatic"}
    assert compaction_of({"session": {"compaction": {}}})
    assert not compaction_of({"session": {"compaction": True}})
    assert not compaction_of({"session": None})
    assert not compaction_of(None)


#: Compaction outputs and what the reference's ``compactionSummaryText`` (dist/context-compaction.js)
#: makes of each: its results, obtained by running that function under node on these inputs.
SUMMARIES = [
    (
        "<analysis>\nthinking about <summary> here\n</analysis>\n\n"
        "<summary>\n1. The user asked for X.\n2. Done.\n</summary>",
        "1. The user asked for X.\n2. Done.",
    ),
    (
        "<summary>\nThe user asked to remember a word. Marker zq-summary-17.\n</summary>",
        "The user asked to remember a word. Marker zq-summary-17.",
    ),
    (
        "Intro <summary>inline body quoting </summary> and more</summary> tail",
        "inline body quoting </summary> and more",
    ),
    (
        "This session is being continued from a previous conversation that ran out of context. "
        "The summary below covers the earlier portion.\n\nSummary:\nThe work so far.\nMore.\n\n"
        "If you need specific details from before compaction (like exact code snippets), read the transcript.",
        "The work so far.\nMore.",
    ),
    ("This session is being continued from a previous conversation with no summary framing", None),
    ("   \n  ", None),
    ("<analysis>only analysis</analysis>", None),
    ("plain text summary with no tags", "plain text summary with no tags"),
    (
        "This session is being continued from a previous conversation that ran out of context.\n"
        "Summary:\nBody here.\nPlease continue the conversation from where it left off without asking.",
        "Body here.",
    ),
]


@pytest.mark.parametrize(("raw", "shown"), SUMMARIES)
def test_the_summary_is_what_the_reference_shows_of_claudes_output(raw: str, shown: str | None) -> None:
    assert summary_text(raw) == shown


def post_compact(summary: object, **extra: Any) -> dict[str, Any]:
    return {"hook_event_name": "PostCompact", "trigger": "manual", "compact_summary": summary, **extra}


def test_the_post_compact_summary_rides_on_the_completed_update_once() -> None:
    c = ContextCompaction(updates=True)
    c.see(read(status("c1", status="compacting")))
    assert asyncio.run(c.summary_hook(post_compact("<summary>\nKept: the plan.\n</summary>"), None, None)) == {}
    assert c.see(read(status("r1", status=None, compact_result="success"))) == [
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "c1",
            "status": "completed",
            "summary": [{"type": "text", "text": "Kept: the plan."}],
        }
    ]
    c.end()
    c.see(read(status("c2", status="compacting")))  # the next compaction has no summary of its own
    assert c.see(read(status("r2", status=None, compact_result="success"))) == [
        {"sessionUpdate": "compaction_update", "compactionId": "c2", "status": "completed"}
    ]


def test_a_summary_that_is_not_the_sessions_or_not_shown_is_dropped() -> None:
    c = ContextCompaction(updates=True)
    asyncio.run(c.summary_hook(post_compact("<summary>\nA subagent's.\n</summary>", agent_id="a1"), None, None))
    asyncio.run(c.summary_hook(post_compact(7), None, None))
    c.see(read(status("c1", status="compacting")))
    assert c.see(read(status("r1", status=None, compact_result="success")))[0].get("summary") is None
    # a compaction the turn's end cancels takes its summary with it
    c.end()
    c.see(read(status("c2", status="compacting")))
    asyncio.run(c.summary_hook(post_compact("<summary>\nLate.\n</summary>"), None, None))
    assert c.end() == [{"sessionUpdate": "compaction_update", "compactionId": "c2", "status": "cancelled"}]
    c.see(read(status("c3", status="compacting")))
    assert "summary" not in c.see(read(status("r3", status=None, compact_result="success")))[0]
    # the tool-call presentation never showed it (the reference's)
    t = ContextCompaction()
    t.see(read(status("c1", status="compacting")))
    asyncio.run(t.summary_hook(post_compact("<summary>\nKept.\n</summary>"), None, None))
    [update] = t.see(read(status("r1", status=None, compact_result="success")))
    assert "summary" not in update and "Kept." not in json.dumps(update)


def test_the_summary_goes_out_through_the_publisher_masked_and_checked() -> None:
    """The update with its summary passes the publisher's own check of ``compaction_update`` (a
    malformed one is counted and dropped, not sent), and a credential in it is masked like prose."""
    from acp_harness import FAKE_API_KEY as key

    from lifecycle import SessionLedger
    from lifecycle.acp import SessionPublisher

    sent: list[dict[str, Any]] = []

    class Conn:
        async def send_notification(self, method: str, params: dict[str, Any]) -> None:
            sent.append(params["update"])

    async def go() -> SessionPublisher:
        pub = SessionPublisher(Conn(), SessionLedger("s1", negotiated=False, epoch="e"))
        c = ContextCompaction(updates=True)
        await pub.show(c.see(read(status("c1", status="compacting"))))
        await c.summary_hook(post_compact(f"<summary>\nThe key {key} was rotated.\n</summary>"), None, None)
        await pub.show(c.see(read(status("r1", status=None, compact_result="success"))))
        await pub.show([{"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "completed",
                         "summary": [{"type": "image", "data": "x"}]}])  # fmt: skip
        return pub

    pub = asyncio.run(go())
    assert [u["status"] for u in sent] == ["in_progress", "completed"] and pub.failed_sends == 1
    [block] = sent[1]["summary"]
    assert block["type"] == "text" and key not in block["text"]
    assert block["text"].startswith("The key ") and block["text"].endswith(" was rotated.")
