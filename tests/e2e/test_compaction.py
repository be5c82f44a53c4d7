"""Claude Code compacting its context, end to end (issue 31): ``/compact`` (a prompt whose text is
``/compact``) shows as the reference adapter 0.101.0 shows it to a plain client: a tool call
"Compact conversation", kind ``think``, ``in_progress`` then ``completed``, whose ``rawOutput``
holds the facts of Claude Code's ``compact_boundary`` (``trigger``, ``preTokens``, ``postTokens``,
``durationMs``); the prompt is answered ``end_turn`` after it, and the next request Claude Code
sends carries the summary the fake API wrote instead of the history. Claude Code's automatic
compaction (trigger ``auto``: the context is nearly full) shows the same way inside a turn.

The fake API answers the compaction's summary request like any other (its reply is the summary,
in ``<summary>`` tags as Claude Code asks for it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .fakeapi import RequestRecord, text_reply
from .harness import Run, Script, agent, run_async, select

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

TITLE = "Compact conversation"  # the reference's tool-calls/reporters/compaction.js
FIRST = "Remember the word zq-history-41."
SUMMARY = "<summary>\nThe user asked to remember a word. Marker zq-summary-17.\n</summary>"


def compactions(run: Run) -> list[dict[str, Any]]:
    """The updates of the compaction tool calls, in wire order."""
    ids = [u["toolCallId"] for u in run.of("tool_call") if u.get("title") == TITLE]
    return [u for u in run.updates() if u.get("toolCallId") in ids]


def request_text(request: RequestRecord) -> str:
    body = request.body if isinstance(request.body, dict) else {}
    return json.dumps(body.get("messages") or [])


def test_slash_compact_shows_a_compaction_tool_call_and_the_next_turn_gets_the_summary(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(text_reply("Noted."), text_reply(SUMMARY), text_reply("The word was in the summary."))
        async with agent(tmp_path, script, select("allow-once"), capable=False) as run:
            assert (await run.prompt(FIRST)).stop_reason == "end_turn"
            assert (await run.prompt("/compact")).stop_reason == "end_turn"
            updates = compactions(run)
            assert updates, run.updates()
            (opened,) = [u for u in updates if u["sessionUpdate"] == "tool_call"]
            assert (opened["title"], opened["kind"], opened["status"]) == (TITLE, "think", "in_progress")
            assert [u.get("status") for u in updates if u.get("status")] == ["in_progress", "completed"]
            assert all(u["_meta"] == {"claudeCode": {"toolName": "compact"}} for u in updates)
            (facts,) = [u["rawOutput"] for u in updates if "rawOutput" in u]
            assert set(facts) == {"trigger", "preTokens", "postTokens", "durationMs"}
            assert facts["trigger"] == "manual"  # Claude Code's trigger of /compact
            assert facts["preTokens"] == 12 + 9  # the tokens of the last answer (the fake API's usage)
            assert isinstance(facts["postTokens"], int) and isinstance(facts["durationMs"], int)
            # The context meter drops at once: a usage_update with what Claude Code kept follows
            # the boundary (the reference's), in the window the first turn reported.
            shown = run.updates()
            at = next(
                i for i, u in enumerate(shown) if "rawOutput" in u and u.get("toolCallId") == opened["toolCallId"]
            )
            window = next(u["size"] for u in shown if u["sessionUpdate"] == "usage_update")
            assert shown[at + 1] == {"sessionUpdate": "usage_update", "used": facts["postTokens"], "size": window}
            # The summary request was Claude Code's second request; the prompt was answered after it.
            assert len(run.api.message_requests) == 2
            assert run.records() == []
            # The next turn: the model gets the summary instead of the history.
            assert (await run.prompt("What was the word?")).stop_reason == "end_turn"
            after = request_text(run.api.message_requests[2])
            assert "zq-summary-17" in after
            assert FIRST not in after
            assert FIRST in request_text(run.api.message_requests[1])  # the summary request still had it

    run_async(go())


def test_an_automatic_compaction_shows_inside_the_turn(tmp_path: Path) -> None:
    """The first answer reports a nearly full context (the fake API's usage): before the next
    prompt's request, Claude Code compacts on its own (trigger ``auto``), then answers the prompt;
    the compaction shows inside that turn, before its answer."""

    async def go() -> None:
        script = Script(
            text_reply("Noted.", input_tokens=990_000),
            text_reply(SUMMARY),
            text_reply("Answered after compacting."),
        )
        async with agent(tmp_path, script, select("allow-once"), capable=False) as run:
            assert (await run.prompt(FIRST)).stop_reason == "end_turn"
            start = len(run.updates())
            assert (await run.prompt("Go on.")).stop_reason == "end_turn"
            updates = compactions(run)
            assert [u.get("status") for u in updates if u.get("status")] == ["in_progress", "completed"], (
                run.api.summary()
            )
            (facts,) = [u["rawOutput"] for u in updates if "rawOutput" in u]
            assert facts["trigger"] == "automatic"  # the reference's name for Claude Code's "auto"
            assert facts["preTokens"] >= 990_000
            turn = run.updates()[start:]
            opened = next(i for i, u in enumerate(turn) if u.get("title") == TITLE)
            answer = next(i for i, u in enumerate(turn) if u["sessionUpdate"] == "agent_message_chunk")
            assert opened < answer
            assert "zq-summary-17" in request_text(run.api.message_requests[-1])

    run_async(go())


def test_a_client_that_advertises_compaction_gets_compaction_updates(tmp_path: Path) -> None:
    """``clientCapabilities.session.compaction`` (an object, the reference's check): the client
    gets ``compaction_update`` (``in_progress``, then ``completed`` with the summary, one
    compaction id) and no "Compact conversation" tool call."""

    async def go() -> None:
        script = Script(text_reply("Noted."), text_reply(SUMMARY))
        async with agent(tmp_path, script, select("allow-once"), raw_caps={"session": {"compaction": {}}}) as run:
            assert (await run.prompt(FIRST)).stop_reason == "end_turn"
            assert (await run.prompt("/compact")).stop_reason == "end_turn"
            updates = run.of("compaction_update")
            assert [u["status"] for u in updates] == ["in_progress", "completed"], run.updates()
            assert len({u["compactionId"] for u in updates}) == 1
            assert set(updates[0]) == {"sessionUpdate", "compactionId", "status"}
            # the summary a user reads: the <summary> span of the model's output, from the
            # PostCompact hook Claude Code awaits before its terminal frames
            assert updates[1]["summary"] == [
                {"type": "text", "text": "The user asked to remember a word. Marker zq-summary-17."}
            ]
            assert compactions(run) == []

    run_async(go())
