"""A resumed session replays its tool history (issue 30, point 5), on the real bundled Claude Code
CLI through the real ACP SDK client, with the fake Anthropic API on 127.0.0.1 as the only fake.

One agent of ours runs three turns (thinking, a Write of a new file, an Edit of it, a Bash
command), and its session is closed with the agent. A new agent of ours then loads it
(``session/load``), and so does the reference adapter 0.101.0 (same Claude Code, same folders, so
the same transcript). Asserted: the replayed frames, in order, hold the user and agent text, the
thinking, and each tool call with its diff (``oldText: null`` for the new file, ``hello`` ->
``bye`` for the Edit) and its result, written out here; and they are the reference's, but for the
points of docs/parity/README.md, "Where a replayed session differs from the reference"
(:data:`REPLAY_DIFFERENCES`, checked in sync).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from acp.connection import StreamDirection

from .claude_cli import AgentWorkspace
from .fakeapi import MessageReply, text_reply
from .harness import (
    NOTIFICATION,
    ROOT,
    Lanes,
    Script,
    _fill_cwd,
    agent,
    run_async,
    select,
    tool_turn,
    tool_use,
)
from .oracle import reference_agent

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

#: docs/parity/README.md, "Where a replayed session differs from the reference": the first column.
REPLAY_DIFFERENCES: tuple[str, ...] = ("`name` on a replayed tool call", "`messageId` on replayed text")
#: What a replay shows (the rest, the session's state and usage, is not the history).
REPLAYED = ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan")


def _script() -> Script:
    return Script(
        MessageReply(
            [
                {"type": "thinking", "thinking": "Write it first.", "chunks": ["Write it first."]},
                {"type": "text", "text": "Writing."},
                tool_use("Write", "toolu_w", file_path="{cwd}/new.txt", content="hello\n"),
            ],
            stop_reason="tool_use",
        ),
        text_reply("Written."),
        tool_turn(tool_use("Edit", "toolu_e", file_path="{cwd}/new.txt", old_string="hello", new_string="bye")),
        text_reply("Edited."),
        tool_turn(tool_use("Bash", "toolu_b", command="echo hi", description="Say hi")),
        text_reply("Ran."),
    )


def _replayed(frames: list[tuple[Any, dict[str, Any]]], load_id: Any) -> list[dict[str, Any]]:
    """The history updates received before the ``session/load`` answer, in wire order."""
    out = []
    for direction, m in frames:
        if direction != StreamDirection.INCOMING:
            continue
        if m.get("id") == load_id and ("result" in m or "error" in m):
            assert "result" in m, m
            return out
        update = m.get("params", {}).get("update") if m.get("method") == "session/update" else None
        if isinstance(update, dict) and update.get("sessionUpdate") in REPLAYED:
            out.append(update)
    raise AssertionError("no session/load answer")


def _load_id(frames: list[tuple[Any, dict[str, Any]]]) -> Any:
    return next(m["id"] for d, m in frames if d == StreamDirection.OUTGOING and m.get("method") == "session/load")


async def _reference_load(ws: AgentWorkspace, sid: str) -> list[dict[str, Any]]:
    """The reference adapter's replay of ``sid``."""
    async with reference_agent(ws, Script()) as (conn, frames):
        await conn.load_session(cwd=str(ws.cwd), session_id=sid, mcp_servers=[])
    return _replayed(frames, _load_id(frames))


def _without_differences(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``updates`` without the points of :data:`REPLAY_DIFFERENCES` (``name``; ``messageId`` on
    text, user and agent: the ledger's chunks carry none), for comparing both agents."""
    out = []
    for u in updates:
        u = {k: v for k, v in u.items() if not (k == "name" and u["sessionUpdate"] == "tool_call")}
        if u["sessionUpdate"] in ("user_message_chunk", "agent_message_chunk"):
            u.pop("messageId", None)
        out.append(u)
    return out


def test_a_loaded_session_replays_its_tool_calls_with_their_diffs_as_the_reference_does(tmp_path: Path) -> None:
    async def go() -> None:
        script = _script()
        async with agent(tmp_path, script, select("allow-once")) as run:
            _fill_cwd(script, run)
            for text in ("write", "edit", "run"):
                assert (await run.prompt(text)).stop_reason == "end_turn"
            sid, cwd = run.sid, str(run.workspace.cwd)
        assert script.left == 0
        async with agent(tmp_path, Script(), select("reject"), capable=False) as run:
            await run.conn.load_session(cwd=cwd, session_id=sid, mcp_servers=[])
            ours = _replayed(run.frames, _load_id(run.frames))
            workspace = run.workspace
        path = f"{cwd}/new.txt"
        summary = [
            (
                u["sessionUpdate"],
                u.get("content", {}).get("text") if "chunk" in u["sessionUpdate"] else u.get("toolCallId"),
            )
            for u in ours
        ]
        assert summary == [
            ("user_message_chunk", "write"),
            ("agent_thought_chunk", "Write it first."),
            ("agent_message_chunk", "Writing."),
            ("tool_call", "toolu_w"),
            ("tool_call_update", "toolu_w"),
            ("agent_message_chunk", "Written."),
            ("user_message_chunk", "edit"),
            ("tool_call", "toolu_e"),
            ("tool_call_update", "toolu_e"),
            ("agent_message_chunk", "Edited."),
            ("user_message_chunk", "run"),
            ("tool_call", "toolu_b"),
            ("tool_call_update", "toolu_b"),
            ("agent_message_chunk", "Ran."),
        ]
        write, write_end, edit, edit_end, bash, bash_end = (u for u in ours if u["sessionUpdate"].startswith("tool"))
        assert (write["title"], write["kind"], write["status"]) == ("Write new.txt", "edit", "pending")
        assert write["content"] == [{"type": "diff", "path": path, "oldText": None, "newText": "hello\n"}]
        assert write_end["status"] == "completed" and write_end["rawOutput"].startswith("File created successfully")
        assert edit["title"] == "Edit new.txt"
        assert edit["content"] == [{"type": "diff", "path": path, "oldText": "hello", "newText": "bye"}]
        assert edit_end["status"] == "completed" and "updated successfully" in edit_end["rawOutput"]
        assert (bash["title"], bash["kind"]) == ("echo hi", "execute")
        assert bash_end["status"] == "completed"
        assert bash_end["content"] == [{"type": "content", "content": {"type": "text", "text": "```console\nhi\n```"}}]
        # The thinking carries the id of Claude's message, as the reference's.
        (thought,) = (u for u in ours if u["sessionUpdate"] == "agent_thought_chunk")
        assert thought["messageId"].startswith("msg_")
        # Side by side: the reference's replay of the same transcript.
        reference = await _reference_load(workspace, sid)
        assert _without_differences(ours) == _without_differences(reference)
        # ... and each documented difference is still observed.
        assert all(u.get("name") for u in reference if u["sessionUpdate"] == "tool_call")
        assert all("messageId" in u for u in reference if u["sessionUpdate"].endswith("message_chunk"))
        assert not any("messageId" in u for u in ours if u["sessionUpdate"].endswith("message_chunk"))

    run_async(go())


def test_the_differences_are_the_parity_table() -> None:
    page = (ROOT / "docs" / "parity" / "README.md").read_text()
    section = page.split("## Where a replayed session differs from the reference", 1)[1].split("\n## ", 1)[0]
    points = tuple(re.findall(r"^\| (.+?) \|", section, re.M)[2:])
    assert points == REPLAY_DIFFERENCES


def test_a_replay_shows_no_task_notification_as_the_reference_does(tmp_path: Path) -> None:
    """Issue 50.3: when a background job ends, Claude Code stores its ``<task-notification>`` (raw
    XML with the job's output file) as a user message, and a project's slash command with its
    markers; a replay shows the user's prompts only, the command as typed, as the reference's
    does (``TRANSCRIPT_MARKERS``, ``stripLocalCommandMetadata``, dist/acp-agent.js)."""

    async def go() -> None:
        main = Script(
            tool_turn(tool_use("Bash", "toolu_bg", command="echo bg-50", description="Echo", run_in_background=True)),
            text_reply("It runs in the background."),
        )
        api = Lanes(main, notified=text_reply("The job printed bg-50."))

        def project(cwd: Path) -> None:  # a command of the project's: stored with Claude Code's markers
            (cwd / ".claude" / "commands").mkdir(parents=True)
            (cwd / ".claude" / "commands" / "review.md").write_text("Review $ARGUMENTS briefly.\n")

        async with agent(tmp_path, api, select("allow-once"), project=project) as run:  # type: ignore[arg-type]
            assert (await run.prompt("run it in the background")).stop_reason == "end_turn"
            deadline = asyncio.get_running_loop().time() + 60
            while "The job printed bg-50." not in "".join(run.texts()):
                assert asyncio.get_running_loop().time() < deadline, run.texts()
                await asyncio.sleep(0.05)
            main.add(text_reply("Reviewed."))
            assert (await run.prompt("/review src/a.py")).stop_reason == "end_turn"
            sid, workspace = run.sid, run.workspace
            # The stored transcript holds the notification as a user message (the test's premise).
            stored = [e for e in workspace.transcript(sid) if e.get("type") == "user"]
            assert any(NOTIFICATION in json.dumps(e["message"]["content"]) for e in stored)
            assert any("<command-name>/review</command-name>" in json.dumps(e["message"]["content"]) for e in stored)
            start = len(run.frames)
            await run.conn.load_session(cwd=str(workspace.cwd), session_id=sid, mcp_servers=[])
            ours = _replayed(run.frames[start:], _load_id(run.frames[start:]))
        users = [u["content"]["text"] for u in ours if u["sessionUpdate"] == "user_message_chunk"]
        assert users == ["run it in the background", "/review src/a.py"]
        assert NOTIFICATION not in json.dumps(ours)
        reference = await _reference_load(workspace, sid)
        assert [u["content"]["text"] for u in reference if u["sessionUpdate"] == "user_message_chunk"] == users
        assert NOTIFICATION not in json.dumps(reference)

    run_async(go())
