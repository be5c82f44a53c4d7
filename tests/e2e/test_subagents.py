"""A subagent's work, shown as the reference shows it: the real CLI runs a foreground ``Agent`` tool
use whose subagent reads a file; every update of the subagent's own tool call names the Agent call
(``_meta.claudeCode.parentToolUseId``), and the Agent call completes with the subagent's answer.
The fake API answers the parent's and the subagent's requests in the order Claude Code sends them."""

from __future__ import annotations

import asyncio
import json
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


LIMITED_PROMPT = "Look around the project (a subagent that meets the usage limit)."
#: What Claude Code says for the fake API's 5-hour usage limit (its reset time follows).
LIMIT = "You've hit your 5-hour limit · resets "


def test_a_subagents_usage_limit_is_not_the_turns_failure_live_or_replayed(tmp_path: Path) -> None:
    """Spec, "History replay" and the background-incident rules: a subagent's usage-limit message
    is not the parent turn's failure. Live, every request of the subagent gets the 5-hour usage
    limit (429, ``rejected``); the parent goes on and answers. Claude Code 2.1.332 writes the
    subagent's lines to ``<session>/subagents/agent-<agentId>.jsonl`` (``isSidechain``,
    ``agentId``) with a ``.meta.json`` naming the Agent call, and only top-level lines to the
    session's transcript; a ``session/load`` of it in a new agent makes no record."""

    async def go() -> None:
        main = Script(
            tool_turn(
                tool_use(
                    "Agent",
                    "toolu_limited",
                    description="Look around",
                    prompt=LIMITED_PROMPT,
                    subagent_type="general-purpose",
                    run_in_background=False,
                )
            ),
            text_reply("The subagent could not look."),
        )
        lanes = Lanes(main, sub=Script(then="usage_limit_apikey"), sub_prompt=LIMITED_PROMPT)
        async with agent(tmp_path, lanes, select("allow-once")) as run:
            assert (await run.prompt("have a subagent look around")).stop_reason == "end_turn"
            sid, cwd, config = run.sid, str(run.workspace.cwd), run.workspace.config_dir
            # Live: the Agent call fails with the subagent's error; the turn is not failed.
            assert run.records() == []
            task = run.tool_state("toolu_limited")
            assert task["status"] == "failed"
            assert LIMIT in str(task["content"])
            assert run.texts() == ["The subagent could not look."]
        # Claude Code's layout: the subagent's lines in their own file, beside the session's.
        (main_file,) = (config / "projects").glob(f"*/{sid}.jsonl")
        (sub_file,) = main_file.parent.glob(f"{sid}/subagents/agent-*.jsonl")
        agent_id = sub_file.stem.removeprefix("agent-")
        meta = json.loads(sub_file.with_suffix(".meta.json").read_text())
        assert meta["toolUseId"] == "toolu_limited"
        sub_lines = [json.loads(line) for line in sub_file.open()]
        assert all(r["isSidechain"] is True and r["agentId"] == agent_id for r in sub_lines if "uuid" in r)
        assert any(
            r.get("type") == "assistant" and LIMIT in json.dumps(r["message"], ensure_ascii=False) for r in sub_lines
        )
        main_lines = [json.loads(line) for line in main_file.open()]
        assert not any(r.get("isSidechain") for r in main_lines)
        assert not any(
            r.get("type") == "assistant" and LIMIT in json.dumps(r["message"], ensure_ascii=False) for r in main_lines
        )
        # Replayed in a new agent: the same, and no record.
        async with agent(tmp_path, Script(), select("reject")) as again:
            await again.conn.load_session(cwd=cwd, session_id=sid, mcp_servers=[])
            assert again.records() == []
            assert again.tool_state("toolu_limited")["status"] == "failed"
            assert again.texts() == ["The subagent could not look."]

    run_async(go())
