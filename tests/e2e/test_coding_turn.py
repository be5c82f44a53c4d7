"""A coding turn end to end: the real ACP SDK client spawns ``python -m lifecycle.agent``, which
drives the real bundled Claude Code CLI against the fake Anthropic API on 127.0.0.1, whose model
answers with thinking, chunked text and tool uses (Write, Edit, Bash, Read, TodoWrite).

Asserted on what the client received (every frame, in wire order), on the files on disk, on the
permission flows (allow once, allow always, reject, a ``cancelled`` answer, an error answer,
``session/cancel`` during a question, Claude Code dying during a question) and on what the fake
API received (Claude Code's own system prompt, the tool results Claude was given).

Expected values are written out here: tool names, titles and kinds as the reference adapter shows
them (docs/acp-agent.md), the reference's option ids and its denial text.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.connection import StreamDirection
from acp.schema import TextContentBlock

from lifecycle import read_record

from .claude_cli import session_cli_pid
from .fakeapi import MessageReply, RawSSEReply, error_reply, text_reply
from .harness import (
    Run,
    Script,
    _fill_cwd,
    agent,
    body_of,
    never,
    result_text,
    run_async,
    select,
    system_text,
    tool_results,
    tool_turn,
    tool_use,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

DENIAL = "User refused permission to run tool"
OPTION_IDS = ["allow-once", "allow-with-updates", "reject"]
OPTION_KINDS = ["allow_once", "allow_always", "reject_once"]


# ------------------------------------------------------------------ the tests


def test_write_allowed_once_streams_thinks_asks_and_writes(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(
            MessageReply(
                [
                    {
                        "type": "thinking",
                        "thinking": "The user wants a file.",
                        "chunks": ["The user ", "wants a file."],
                    },
                    {"type": "text", "text": "I'll write it."},
                    tool_use("Write", "toolu_write1", file_path="{cwd}/new.txt", content="hello\n"),
                ],
                stop_reason="tool_use",
                text_chunks=["I'll ", "write it."],
            ),
            text_reply("Done.", chunks=["Do", "ne."]),
        )
        async with agent(tmp_path, script, select("allow-once")) as run:
            _fill_cwd(script, run)
            response = await run.prompt("write hello to new.txt")
            assert response.stop_reason == "end_turn"
            cwd = Path(run.workspace.cwd)
            assert (cwd / "new.txt").read_text() == "hello\n"
            # Streaming: every delta once, as it came; the consolidated message repeats nothing.
            assert run.texts("agent_thought_chunk") == ["The user ", "wants a file."]
            assert run.texts() == ["I'll ", "write it.", "Do", "ne."]
            # The tool call: announced, asked about, running, completed with its diff.
            frames = run.tool("toolu_write1")
            assert frames[0]["sessionUpdate"] == "tool_call"
            assert frames[0]["status"] == "pending"
            assert all(f["sessionUpdate"] == "tool_call_update" for f in frames[1:])
            state = run.tool_state("toolu_write1")
            assert state["kind"] == "edit"
            assert state["rawInput"] == {"file_path": str(cwd / "new.txt"), "content": "hello\n"}
            assert state["locations"][0]["path"] == str(cwd / "new.txt")
            assert state["title"] == "Write new.txt"
            statuses = [f.get("status") for f in frames[1:] if f.get("status")]
            assert statuses == ["in_progress", "completed"]
            diffs = [c for f in frames for c in f.get("content") or [] if c.get("type") == "diff"]
            assert diffs, frames
            assert diffs[-1]["path"] == str(cwd / "new.txt")
            assert diffs[-1]["newText"] == "hello\n"
            assert not diffs[-1].get("oldText")
            # The question: the tool call and the reference's three options.
            assert len(run.client.questions) == 1
            question = run.client.questions[0]
            assert question["toolCall"]["toolCallId"] == "toolu_write1"
            assert [o["optionId"] for o in question["options"]] == OPTION_IDS
            assert [o["kind"] for o in question["options"]] == OPTION_KINDS
            assert any(c.get("type") == "diff" for c in question["toolCall"].get("content", []))
            # The question came after the tool call was announced, and before it ran.
            order = [
                (
                    "tool_call"
                    if m.get("method") == "session/update"
                    and m["params"]["update"].get("toolCallId") == "toolu_write1"
                    and m["params"]["update"]["sessionUpdate"] == "tool_call"
                    else "question"
                    if m.get("method") == "session/request_permission"
                    else None
                )
                for m in run.incoming()
            ]
            assert [o for o in order if o] == ["tool_call", "question"]
            # Claude Code's own system prompt reached the API, and the tool result was a success.
            first, second = run.api.message_requests[:2]
            assert len(system_text(first)) > 3000
            assert "Claude Code" in system_text(first)
            (result,) = tool_results(second)
            assert result["tool_use_id"] == "toolu_write1"
            assert not result.get("is_error")
            assert run.records() == []

    run_async(go())


def test_rejected_write_is_a_denial_claude_reacts_to_and_no_incident(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(
            tool_turn(tool_use("Write", "toolu_w", file_path="{cwd}/no.txt", content="x")),
            text_reply("Understood, I will not write it."),
        )
        async with agent(tmp_path, script, select("reject")) as run:
            _fill_cwd(script, run)
            response = await run.prompt("write x")
            assert response.stop_reason == "end_turn"
            assert not (Path(run.workspace.cwd) / "no.txt").exists()
            (result,) = tool_results(run.api.message_requests[1])
            assert result.get("is_error") is True
            assert DENIAL in result_text(result)
            statuses = [f.get("status") for f in run.tool("toolu_w") if f.get("status")]
            assert statuses[-1] == "failed"
            assert "in_progress" not in statuses
            assert run.texts() == ["Understood, I will not write it."]
            assert run.records() == []  # a denied permission is no incident
            assert (response.field_meta or {}).get("jetbrains") is None

    run_async(go())


def test_allow_always_gives_claude_code_its_accept_edits_for_the_session(tmp_path: Path) -> None:
    """"Yes, allow all edits during this session" hands Claude Code its own suggestion (edits
    accepted for the session): the next project edit is Claude Code's to allow, so it is not asked.
    (What it still asks about: tests/e2e/test_permissions.py.)"""

    async def go() -> None:
        script = Script(
            tool_turn(tool_use("Write", "toolu_a", file_path="{cwd}/a.txt", content="a")),
            tool_turn(tool_use("Write", "toolu_b", file_path="{cwd}/b.txt", content="b")),
            text_reply("Both written."),
        )
        async with agent(tmp_path, script, select("allow-with-updates")) as run:
            _fill_cwd(script, run)
            assert (await run.prompt("write a and b")).stop_reason == "end_turn"
            cwd = Path(run.workspace.cwd)
            assert (cwd / "a.txt").read_text() == "a"
            assert (cwd / "b.txt").read_text() == "b"
            assert [q["toolCall"]["toolCallId"] for q in run.client.questions] == ["toolu_a"]
            for tool_id in ("toolu_a", "toolu_b"):
                assert [f.get("status") for f in run.tool(tool_id) if f.get("status")][-1] == "completed"

    run_async(go())


def test_cancelled_answer_cancels_the_turn(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(tool_turn(tool_use("Write", "toolu_c", file_path="{cwd}/c.txt", content="c")))
        answer = lambda params: {"outcome": {"outcome": "cancelled"}}  # noqa: E731
        async with agent(tmp_path, script, answer) as run:
            _fill_cwd(script, run)
            response = await run.prompt("write c")
            assert response.stop_reason == "cancelled"
            assert not (Path(run.workspace.cwd) / "c.txt").exists()
            assert run.records() == []

    run_async(go())


@pytest.mark.parametrize("capable", [True, False], ids=["capable", "legacy"])
def test_session_cancel_during_a_question_ends_the_turn_cancelled_with_no_late_frames(
    tmp_path: Path, capable: bool
) -> None:
    async def go() -> None:
        script = Script(tool_turn(tool_use("Write", "toolu_q", file_path="{cwd}/q.txt", content="q")))
        async with agent(tmp_path, script, never, capable=capable) as run:
            _fill_cwd(script, run)
            prompt = asyncio.ensure_future(run.prompt("write q"))
            await asyncio.wait_for(run.client.asked.wait(), 60)
            await run.conn.cancel(session_id=run.sid)
            response = await asyncio.wait_for(prompt, 30)
            assert response.stop_reason == "cancelled"
            seen = len(run.incoming())
            await asyncio.sleep(2.0)  # a window for late frames (none may come)
            late = [m for m in run.incoming()[seen:] if m.get("method") == "session/update"]
            assert late == []
            assert run.records() == []
            assert not (Path(run.workspace.cwd) / "q.txt").exists()
            # The open question was withdrawn on the wire.
            cancels = [m for m in run.incoming() if m.get("method") == "$/cancel_request"]
            question_ids = [m["id"] for m in run.incoming() if m.get("method") == "session/request_permission"]
            assert [c["params"]["requestId"] for c in cancels] == question_ids

    run_async(go())


def test_client_error_answer_denies_the_tool_and_the_turn_goes_on(tmp_path: Path) -> None:
    def fail(params: dict[str, Any]) -> Any:
        raise RequestError.internal_error({"details": "the editor crashed"})

    async def go() -> None:
        script = Script(
            tool_turn(tool_use("Write", "toolu_e", file_path="{cwd}/e.txt", content="e")),
            text_reply("I could not write it."),
        )
        async with agent(tmp_path, script, fail) as run:
            _fill_cwd(script, run)
            response = await run.prompt("write e")
            assert response.stop_reason == "end_turn"
            assert not (Path(run.workspace.cwd) / "e.txt").exists()
            (result,) = tool_results(run.api.message_requests[1])
            assert result.get("is_error") is True
            assert run.records() == []

    run_async(go())


def test_unknown_option_denies_the_tool(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(
            tool_turn(tool_use("Write", "toolu_u", file_path="{cwd}/u.txt", content="u")),
            text_reply("Not written."),
        )
        async with agent(tmp_path, script, select("allow-everything-forever")) as run:
            _fill_cwd(script, run)
            assert (await run.prompt("write u")).stop_reason == "end_turn"
            assert not (Path(run.workspace.cwd) / "u.txt").exists()

    run_async(go())


def test_claude_code_dying_during_a_question_settles_with_the_connection_failure(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(tool_turn(tool_use("Write", "toolu_d", file_path="{cwd}/d.txt", content="d")))
        async with agent(tmp_path, script, never) as run:
            _fill_cwd(script, run)
            prompt = asyncio.ensure_future(run.prompt("write d"))
            await asyncio.wait_for(run.client.asked.wait(), 60)
            os.kill(session_cli_pid(run.workspace.config_dir, run.sid), signal.SIGKILL)
            response = await asyncio.wait_for(prompt, 60)
            assert response.stop_reason == "end_turn"
            record = read_record(response.field_meta)
            assert record is not None
            assert record.category == "connection"
            assert record.severity == "error"
            cancels = [m for m in run.incoming() if m.get("method") == "$/cancel_request"]
            question_ids = [m["id"] for m in run.incoming() if m.get("method") == "session/request_permission"]
            assert [c["params"]["requestId"] for c in cancels] == question_ids
            assert not (Path(run.workspace.cwd) / "d.txt").exists()

    run_async(go())


def test_edit_bash_read_and_todo_render_as_the_reference_does(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(
            tool_turn(
                tool_use(
                    "TodoWrite",
                    "toolu_todo",
                    todos=[
                        {"content": "Edit the file", "status": "in_progress", "activeForm": "Editing the file"},
                        {"content": "Run it", "status": "pending", "activeForm": "Running it"},
                    ],
                )
            ),
            tool_turn(tool_use("Read", "toolu_read", file_path="{cwd}/code.py")),
            tool_turn(tool_use("Edit", "toolu_edit", file_path="{cwd}/code.py", old_string="old", new_string="new")),
            tool_turn(tool_use("Bash", "toolu_bash", command="echo hi", description="Say hi")),
            text_reply("All done."),
        )
        async with agent(tmp_path, script, select("allow-once")) as run:
            cwd = Path(run.workspace.cwd)
            (cwd / "code.py").write_text("x = 'old'\n")
            _fill_cwd(script, run)
            assert (await run.prompt("do it")).stop_reason == "end_turn"
            assert (cwd / "code.py").read_text() == "x = 'new'\n"
            # TodoWrite is the plan, not a tool call.
            (plan,) = run.of("plan")
            assert [(e["content"], e["status"]) for e in plan["entries"]] == [
                ("Editing the file", "in_progress"),  # the reference shows activeForm while in progress
                ("Run it", "pending"),
            ]
            assert run.tool("toolu_todo") == []
            read = run.tool("toolu_read")
            assert read[0]["kind"] == "read"
            assert read[-1]["status"] == "completed"
            assert "x = 'old'" in json.dumps(read[-1].get("content"))
            edit = run.tool("toolu_edit")
            assert edit[0]["kind"] == "edit"
            diffs = [c for f in edit for c in f.get("content") or [] if c.get("type") == "diff"]
            assert diffs[-1]["path"] == str(cwd / "code.py")
            assert "old" in diffs[-1]["oldText"] and "new" in diffs[-1]["newText"]
            bash = run.tool("toolu_bash")
            assert bash[0]["kind"] == "execute"
            assert run.tool_state("toolu_bash")["title"] == "echo hi"  # the reference's: the command itself
            assert bash[-1]["status"] == "completed"
            assert "hi" in json.dumps(bash[-1].get("content"))
            (result,) = tool_results(run.api.message_requests[4])
            assert "hi" in result_text(result)
            # Usage: one usage_update per result and the turn's tokens on the response.
            assert run.of("usage_update")

    run_async(go())


# ------------------------------------------------------------------ failures inside tool turns


def rate_limited() -> Any:
    return error_reply(429, "rate_limit_error", "e2e: this key sent too many requests", {"retry-after": "0"})


def cut_tool_stream(tool_id: str) -> RawSSEReply:
    """A tool use whose stream breaks after half its input (the connection dropped)."""
    start = {
        "id": "msg_cut",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 1},
    }
    block = {"type": "tool_use", "id": tool_id, "name": "Write", "input": {}}
    partial = {"type": "input_json_delta", "partial_json": '{"file_path": "/tmp/x'}
    return RawSSEReply(
        [
            ("message_start", {"type": "message_start", "message": start}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": partial}),
        ],
        ending="close",
    )


def cut_text_stream() -> RawSSEReply:
    """The same break in a plain text answer."""
    reply = cut_tool_stream("unused")
    text_block = {"type": "text", "text": ""}
    delta = {"type": "text_delta", "text": "Partial ans"}
    reply.events[1] = ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": text_block})
    reply.events[2] = ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
    return reply


def essentials(record: Any) -> tuple[Any, ...]:
    return (record.category, record.severity, record.title, tuple(record.actions))


async def failing_turn(run: Run, sid: str, text: str) -> tuple[Any, list[Any]]:
    """Prompt ``sid``; the turn's response, its retry warnings' (id-free) essentials and titles."""
    start = len(run.frames)
    response = await run.conn.prompt(session_id=sid, prompt=[TextContentBlock(type="text", text=text)])
    warnings = []
    for d, m in run.frames[start:]:
        if d == StreamDirection.INCOMING and m.get("method") == "session/update":
            record = read_record(m["params"]["update"].get("_meta"))
            if record is not None:
                warnings.append(essentials(record))
    return response, warnings


@pytest.mark.parametrize("where", ["between-tool-rounds", "mid-tool-stream"])
def test_an_api_failure_inside_a_tool_turn_settles_as_it_does_without_tools(tmp_path: Path, where: str) -> None:
    """The same failure, once in a plain turn and once inside a tool turn (in two sessions of one
    agent): the same warnings and the same terminal record."""

    async def go() -> None:
        if where == "between-tool-rounds":
            # A plain turn that hits three 429s; then a tool round (allowed) whose follow-up hits them.
            plain: list[Any] = [rate_limited(), rate_limited(), rate_limited()]
            tooled: list[Any] = [
                tool_turn(tool_use("Write", "toolu_f", file_path="{cwd}/f.txt", content="f")),
                rate_limited(),
                rate_limited(),
                rate_limited(),
            ]
        else:
            # Three streamed attempts, then Claude Code's non-streaming fallback request: all cut.
            plain = [cut_text_stream() for _ in range(4)]
            tooled = [cut_tool_stream(f"toolu_m{i}") for i in range(1, 5)]
        script = Script(*plain, *tooled)
        async with agent(tmp_path, script, select("allow-once")) as run:
            _fill_cwd(script, run)
            first, first_warnings = await failing_turn(run, run.sid, "say hi")
            other = (await run.conn.new_session(cwd=str(run.workspace.cwd), mcp_servers=[])).session_id
            second, second_warnings = await failing_turn(run, other, "write f")
            assert script.left == 0  # every scripted reply was used: both turns really failed
            first_record, second_record = read_record(first.field_meta), read_record(second.field_meta)
            assert first_record is not None and second_record is not None
            assert first.stop_reason == second.stop_reason == "end_turn"
            assert essentials(second_record) == essentials(first_record)
            assert second_warnings == first_warnings
            assert first_warnings  # the retries were shown
            if where == "between-tool-rounds":
                assert (Path(run.workspace.cwd) / "f.txt").read_text() == "f"
                assert [f.get("status") for f in run.tool("toolu_f") if f.get("status")][-1] == "completed"
            else:
                # A tool call whose stream broke is not left running. (Claude Code 2.1.332 forwards
                # no stream event of an attempt that broke, so none is announced here today; the
                # renderer's own test covers a broken stream that was.)
                announced = [t for t in ("toolu_m1", "toolu_m2", "toolu_m3", "toolu_m4") if run.tool(t)]
                for tool_id in announced:
                    assert run.tool(tool_id)[-1].get("status") == "failed", run.tool(tool_id)

    run_async(go())


def test_project_settings_and_claude_md_reach_claude_code(tmp_path: Path) -> None:
    """Setting sources user, project and local: the project's CLAUDE.md reaches the model, and a
    project permission rule allowing a command means Claude Code runs it without a question."""

    async def go() -> None:
        script = Script(
            tool_turn(tool_use("Bash", "toolu_allowed", command="echo allowed-by-rule")),
            text_reply("Ran it."),
        )
        def project(cwd: Path) -> None:
            (cwd / "CLAUDE.md").write_text("Project rule: answer in haiku. Marker zq-claude-md-7.\n")
            (cwd / ".claude").mkdir()
            settings = {"permissions": {"allow": ["Bash(echo allowed-by-rule)"]}}
            (cwd / ".claude" / "settings.json").write_text(json.dumps(settings))

        async with agent(tmp_path, script, select("reject"), project=project) as run:
            assert (await run.prompt("run it")).stop_reason == "end_turn"
            assert "zq-claude-md-7" in json.dumps(body_of(run.api.message_requests[0]))
            assert run.client.questions == []  # the project's rule allowed it
            (result,) = tool_results(run.api.message_requests[1])
            assert "allowed-by-rule" in result_text(result)
            assert [f.get("status") for f in run.tool("toolu_allowed") if f.get("status")][-1] == "completed"

    run_async(go())


def test_a_failing_tool_is_no_incident(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(
            tool_turn(tool_use("Bash", "toolu_false", command="exit 3")),
            text_reply("The command failed; moving on."),
        )
        async with agent(tmp_path, script, select("allow-once")) as run:
            response = await run.prompt("run exit 3")
            assert response.stop_reason == "end_turn"
            (result,) = tool_results(run.api.message_requests[1])
            assert result.get("is_error") is True
            statuses = [f.get("status") for f in run.tool("toolu_false") if f.get("status")]
            assert statuses == ["pending", "in_progress", "failed"]
            assert run.records() == []
            assert read_record(response.field_meta) is None

    run_async(go())
