"""A command's tool call as a terminal card (``lifecycle.agent.terminal``), through the session's
renderer, on the Claude SDK's own message classes. Expected values: the reference adapter
0.101.0's ``dist/tool-calls/renderer.js`` (``fieldsOfResult``, ``terminalExit``) and
``reporters/bash.js`` (``toolResult``, ``failureExitCode``); the frames of a real run are held by
tests/e2e/test_editor_cards.py."""

from __future__ import annotations

from typing import Any

import pytest
from claude_agent_sdk import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage

from lifecycle.agent.stream import StreamRenderer
from lifecycle.agent.terminal import MAX_BACKGROUND


def ran(
    renderer: StreamRenderer, content: Any, *, is_error: bool = False, structured: Any = None, name: str = "Bash"
) -> list[dict[str, Any]]:
    """The updates of one command, announced then ended with ``content``."""
    renderer.assistant(
        AssistantMessage(content=[ToolUseBlock(id="t1", name=name, input={"command": "make"})], model="m")
    )
    result = ToolResultBlock(tool_use_id="t1", content=content, is_error=is_error)
    return renderer.user(UserMessage(content=[result], tool_use_result=structured))


def exit_of(updates: list[dict[str, Any]]) -> Any:
    meta = updates[-1]["_meta"]
    return meta["terminal_exit"]["exit_code"] if "terminal_exit" in meta else "running"


@pytest.mark.parametrize(
    ("content", "is_error", "structured", "plain", "air"),
    [
        ("ok", False, {"stdout": "ok", "stderr": "", "interrupted": False}, 0, 0),  # a success exited 0
        ("Exit code 2\nno", True, None, 2, 1),  # the code the failure's text names; AIR reads 1
        ("boom", True, None, None, 1),  # a failure naming no code
        ("", False, {"stdout": "", "stderr": "", "interrupted": True}, None, 1),  # interrupted
        ("", False, {"stdout": "", "stderr": "", "returnCodeInterpretation": "No matches"}, None, 0),
        # a command sent to the background: its terminal runs on (no exit yet); AIR's ends at once, 0
        ("Command running in background with ID: b1.", False, {"backgroundTaskId": "b1"}, "running", 0),
    ],
)
def test_the_exit_code_as_the_reference_reads_it(
    content: str, is_error: bool, structured: Any, plain: Any, air: Any
) -> None:
    assert exit_of(ran(StreamRenderer("/p", terminal=True), content, is_error=is_error, structured=structured)) == plain
    renderer = StreamRenderer("/p", terminal=True, air=True)
    assert exit_of(ran(renderer, content, is_error=is_error, structured=structured)) == air


def test_an_interrupted_commands_output_says_so() -> None:
    structured = {"stdout": "half", "stderr": "", "interrupted": True}
    updates = ran(StreamRenderer("/p", terminal=True), "", structured=structured)
    assert updates[-2]["_meta"]["terminal_output"]["data"] == "half\n[Command was aborted before completion]"


def test_image_output_is_content_not_a_terminal() -> None:
    image = [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]
    updates = ran(StreamRenderer("/p", terminal=True), image)
    assert "terminal_exit" not in updates[-1].get("_meta", {})
    assert updates[-1]["content"][0]["content"]["type"] == "image"


def test_a_plain_client_and_another_tool_keep_their_rendering() -> None:
    plain = ran(StreamRenderer("/p"), "hi")
    assert plain[-1]["content"] == [{"type": "content", "content": {"type": "text", "text": "```console\nhi\n```"}}]
    read = ran(StreamRenderer("/p", terminal=True), "text", name="Read")
    assert "terminal_exit" not in read[-1].get("_meta", {})


def test_a_command_closed_without_its_result_ends_its_terminal() -> None:
    renderer = StreamRenderer("/p", terminal=True)
    (announced,) = renderer.assistant(
        AssistantMessage(content=[ToolUseBlock(id="t9", name="Bash", input={"command": "sleep 9"})], model="m")
    )[0]
    assert announced["_meta"]["terminal_info"] == {"terminal_id": "t9"}
    assert announced["content"] == [{"type": "terminal", "terminalId": "t9"}]
    (closed,) = renderer.close_open_tools()
    assert closed["status"] == "failed"
    assert closed["_meta"]["terminal_exit"] == {"terminal_id": "t9", "exit_code": None, "signal": None}


def _exit(tool_id: str, **meta: Any) -> dict[str, Any]:
    ended = {"terminal_id": tool_id, "exit_code": None, "signal": None}
    return {"toolCallId": tool_id, "sessionUpdate": "tool_call_update", "_meta": {**meta, "terminal_exit": ended}}


def test_a_background_commands_terminal_ends_with_its_task() -> None:
    """The reference's ``SessionBackgroundWork.taskEnded`` (``dist/background-work.js``): the
    terminal exits, with no exit code, at the task's end, once; by its notification, a terminal
    ``task_updated`` patch or a level that no longer lists it."""
    background = {"backgroundTaskId": "b1"}
    for subtype, data in (
        ("task_notification", {"task_id": "b1", "status": "completed"}),
        ("task_updated", {"task_id": "b1", "patch": {"status": "failed"}}),
        ("background_tasks_changed", {"tasks": [{"task_id": "other"}]}),
    ):
        renderer = StreamRenderer("/p", terminal=True)
        ran(renderer, "Command running in background with ID: b1.", structured=background)
        terminals = renderer.background_terminals
        assert terminals.task_message("task_updated", {"task_id": "b1", "patch": {"status": "running"}}) == []
        assert terminals.task_message("background_tasks_changed", {"tasks": [{"task_id": "b1"}]}) == []
        assert terminals.task_message(subtype, data) == [_exit("t1")]
        assert terminals.task_message("task_notification", {"task_id": "b1"}) == []  # once


def test_a_background_task_that_ended_before_the_result_leaves_the_exit_on_it() -> None:
    renderer = StreamRenderer("/p", terminal=True)
    assert renderer.background_terminals.task_message("task_notification", {"task_id": "b1"}) == []
    updates = ran(renderer, "Command running in background with ID: b1.", structured={"backgroundTaskId": "b1"})
    assert exit_of(updates) is None


def test_a_subagents_background_terminal_names_its_parent_and_the_terminals_are_bounded() -> None:
    renderer = StreamRenderer("/p", terminal=True)
    renderer.background_terminals.keep_running(
        [{"_meta": {"terminal_exit": {"terminal_id": "t2"}}}], {"backgroundTaskId": "b2"}, "toolu_agent"
    )
    exits = renderer.background_terminals.task_message("task_notification", {"task_id": "b2"})
    assert exits == [_exit("t2", claudeCode={"parentToolUseId": "toolu_agent"})]
    for i in range(MAX_BACKGROUND + 5):
        renderer.background_terminals.keep_running(
            [{"_meta": {"terminal_exit": {"terminal_id": f"t{i}"}}}], {"backgroundTaskId": f"b{i}"}, None
        )
    assert len(renderer.background_terminals.running) == MAX_BACKGROUND
    # malformed task messages change nothing
    assert renderer.background_terminals.task_message("background_tasks_changed", {"tasks": "x"}) == []
    assert renderer.background_terminals.task_message("task_notification", {"task_id": 7}) == []
