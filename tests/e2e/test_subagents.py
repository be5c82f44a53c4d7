"""A subagent's work, shown as the reference shows it: the real CLI runs a foreground ``Agent`` tool
use whose subagent reads a file; every update of the subagent's own tool call names the Agent call
(``_meta.claudeCode.parentToolUseId``), and the Agent call completes with the subagent's answer.
The fake API answers the parent's and the subagent's requests in the order Claude Code sends them."""

from __future__ import annotations

from pathlib import Path

import pytest

from .fakeapi import text_reply
from .test_coding_turn import Script, agent, run_async, select, tool_turn, tool_use

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
