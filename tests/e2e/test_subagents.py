"""A subagent's work, shown as the reference shows it: the real CLI runs a foreground ``Agent`` tool
use whose subagent reads a file; every update of the subagent's own tool call names the Agent call
(``_meta.claudeCode.parentToolUseId``), and the Agent call completes with the subagent's answer.
The fake API answers the parent's and the subagent's requests in the order Claude Code sends them."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from .fakeapi import text_reply
from .harness import Lanes, Script, agent, run_async, select, tool_turn, tool_use

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]


def test_a_subagents_tool_calls_are_children_of_its_agent_call(tmp_path: Path) -> None:
    async def go() -> None:
        cwd = tmp_path / "project"
        script = Script(
            tool_turn(
                tool_use(
                    "Agent",
                    "toolu_agent",
                    description="Read the note",
                    prompt="Read note.txt and say what it says.",
                    subagent_type="general-purpose",
                    run_in_background=False,  # Claude Code 2.1.332 runs an Agent in the background by default
                )
            ),
            tool_turn(tool_use("Read", "toolu_sub_read", file_path=f"{cwd}/note.txt")),
            text_reply("The note says hello."),
            text_reply("The subagent read it: hello."),
        )
        async with agent(
            tmp_path, script, select("allow-once"), project=lambda p: (p / "note.txt").write_text("hello\n")
        ) as run:
            assert (await run.prompt("have a subagent read the note")).stop_reason == "end_turn"
            child = run.tool("toolu_sub_read")
            assert child, "the subagent's Read was not shown"
            assert all(u["_meta"]["claudeCode"]["parentToolUseId"] == "toolu_agent" for u in child)
            assert run.tool_state("toolu_sub_read")["status"] == "completed"
            parent = run.tool_state("toolu_agent")
            assert parent["status"] == "completed"
            assert "parentToolUseId" not in parent.get("_meta", {}).get("claudeCode", {})
            assert "The note says hello." in str(parent.get("content"))
            # The subagent's text stays internal; the parent's answer reaches the editor.
            assert run.texts() == ["The subagent read it: hello."]

    run_async(go())


SUB_PROMPT = "Read note.txt and say what it says (background)."


def test_a_background_subagents_tool_calls_end_with_their_own_results(tmp_path: Path) -> None:
    """Claude Code runs an Agent in the background by default: the turn ends while the subagent
    still works. Its tool calls are not failed at the turn's end; they complete with their own
    results, after the turn, still naming the Agent call."""

    async def go() -> None:
        cwd = tmp_path / "project"
        main = Script(
            tool_turn(
                tool_use(
                    "Agent",
                    "toolu_bg_agent",
                    description="Read the note",
                    prompt=SUB_PROMPT,
                    subagent_type="general-purpose",
                )
            ),
            text_reply("A subagent is reading it."),
            then=text_reply("The subagent finished."),
        )
        sub = Script(tool_turn(tool_use("Read", "toolu_bg_read", file_path=f"{cwd}/note.txt")), text_reply("hello"))
        lanes = Lanes(main, sub=sub, sub_prompt=SUB_PROMPT)
        async with agent(
            tmp_path, lanes, select("allow-once"), project=lambda p: (p / "note.txt").write_text("hello\n")
        ) as run:
            assert (await run.prompt("have a background subagent read the note")).stop_reason == "end_turn"
            deadline = time.monotonic() + 60
            while run.tool_state("toolu_bg_read").get("status") != "completed":
                assert time.monotonic() < deadline, run.tool("toolu_bg_read")
                await asyncio.sleep(0.1)
            child = run.tool("toolu_bg_read")
            assert [u.get("status") for u in child if u.get("status")][-1] == "completed"
            assert "failed" not in [u.get("status") for u in child]
            assert all(u["_meta"]["claudeCode"]["parentToolUseId"] == "toolu_bg_agent" for u in child)

    run_async(go())
