"""The agent's coding-turn pieces without processes: :class:`lifecycle.agent.stream.StreamRenderer`
(streamed chunks, nothing shown twice, tool calls announced once, results, plan, usage), on the
real ``claude_agent_sdk`` message classes and a real :class:`lifecycle.ledger.SessionLedger`.
"""

from __future__ import annotations

from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from claude_agent_sdk.types import StreamEvent
from sdk_messages import result_message

from lifecycle.agent.stream import MAX_TOOLS, StreamRenderer

MODEL = "claude-sonnet-4-5"


def delta(kind: str, text: str, index: int = 0, parent: str | None = None) -> StreamEvent:
    key = "text" if kind == "text_delta" else "thinking"
    event = {"type": "content_block_delta", "index": index, "delta": {"type": kind, key: text}}
    return StreamEvent(uuid="u", session_id="s", event=event, parent_tool_use_id=parent)


def start_tool(tool_id: str, name: str) -> StreamEvent:
    event = {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "tool_use", "id": tool_id, "name": name},
    }
    return StreamEvent(uuid="u", session_id="s", event=event)


def assistant(*blocks: Any, parent: str | None = None, model: str = MODEL) -> AssistantMessage:
    return AssistantMessage(content=list(blocks), model=model, parent_tool_use_id=parent)


# ------------------------------------------------------------------ the renderer


def test_deltas_are_chunks_and_the_consolidated_text_is_not_shown_again() -> None:
    r = StreamRenderer("/p")
    out = [u for d in ("Hel", "lo") for u in r.stream_event(delta("text_delta", d))]
    assert out == [
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hel"}},
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "lo"}},
    ]
    updates, shown = r.assistant(assistant(TextBlock("Hello")))
    assert (updates, shown) == ([], True)


def test_a_remainder_that_did_not_stream_is_sent_once() -> None:
    r = StreamRenderer("/p")
    r.stream_event(delta("text_delta", "Hel"))
    updates, shown = r.assistant(assistant(TextBlock("Hello")))
    assert shown is True
    assert updates == [{"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "lo"}}]


def test_a_message_that_never_streamed_goes_to_the_ledger_untouched() -> None:
    r = StreamRenderer("/p")
    updates, shown = r.assistant(assistant(TextBlock("API Error: 500"), model="<synthetic>"))
    assert (updates, shown) == ([], False)


def test_streamed_text_that_does_not_match_is_not_taken_for_the_message() -> None:
    r = StreamRenderer("/p")
    r.stream_event(delta("text_delta", "Something else"))
    assert r.assistant(assistant(TextBlock("Hello"))) == ([], False)


def test_thinking_streams_as_thought_chunks_and_is_never_repeated() -> None:
    r = StreamRenderer("/p")
    assert r.stream_event(delta("thinking_delta", "Let me")) == [
        {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "Let me"}}
    ]
    updates, _ = r.assistant(assistant(ThinkingBlock("Let me think", "sig")))
    assert updates == [{"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": " think"}}]


def test_subagent_text_stays_internal_but_a_new_message_resets_the_top_level_only() -> None:
    r = StreamRenderer("/p")
    assert r.stream_event(delta("text_delta", "inner", parent="toolu_task")) == []
    assert r.assistant(assistant(TextBlock("inner"), parent="toolu_task")) == ([], False)


def test_a_tool_use_is_announced_at_its_start_and_refined_once_by_the_whole_input() -> None:
    r = StreamRenderer("/p")
    (start,) = r.stream_event(start_tool("toolu_1", "Write"))
    assert start["sessionUpdate"] == "tool_call"
    assert (start["toolCallId"], start["status"], start["kind"]) == ("toolu_1", "pending", "edit")
    block = ToolUseBlock("toolu_1", "Write", {"file_path": "/p/new.txt", "content": "hi"})
    (refined,), _ = r.assistant(assistant(block))
    assert refined["sessionUpdate"] == "tool_call_update"
    assert "status" not in refined
    assert refined["title"] == "Write new.txt"
    assert refined["content"] == [{"type": "diff", "path": "/p/new.txt", "oldText": None, "newText": "hi"}]
    assert r.assistant(assistant(block)) == ([], False)  # the same block again announces nothing


def test_todowrite_is_the_plan_and_its_result_shows_nothing() -> None:
    r = StreamRenderer("/p")
    todos = {"todos": [{"content": "Do it", "status": "pending", "activeForm": "Doing it"}]}
    (plan,), _ = r.assistant(assistant(ToolUseBlock("toolu_t", "TodoWrite", todos)))
    assert plan == {
        "sessionUpdate": "plan",
        "entries": [{"content": "Do it", "status": "pending", "priority": "medium"}],
    }
    assert r.user(UserMessage(content=[ToolResultBlock("toolu_t", "ok")])) == []


def test_a_result_ends_its_tool_call_in_progress_then_completed_or_failed() -> None:
    r = StreamRenderer("/p")
    r.assistant(assistant(ToolUseBlock("toolu_b", "Bash", {"command": "echo hi"})))
    running, done = r.user(UserMessage(content=[ToolResultBlock("toolu_b", "hi")]))
    assert running == {"sessionUpdate": "tool_call_update", "toolCallId": "toolu_b", "status": "in_progress"}
    assert (done["status"], done["content"][0]["content"]["text"]) == ("completed", "```console\nhi\n```")
    r.assistant(assistant(ToolUseBlock("toolu_w", "Write", {"file_path": "/p/x", "content": "x"})))
    r.mark_refused("toolu_w")
    (failed,) = r.user(UserMessage(content=[ToolResultBlock("toolu_w", "User refused permission", is_error=True)]))
    assert failed["status"] == "failed"


def test_an_allowed_tool_says_in_progress_once() -> None:
    r = StreamRenderer("/p")
    r.assistant(assistant(ToolUseBlock("toolu_b", "Bash", {"command": "ls"})))
    assert r.mark_running("toolu_b") == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "toolu_b",
        "status": "in_progress",
    }
    assert r.mark_running("toolu_b") is None
    (done,) = r.user(UserMessage(content=[ToolResultBlock("toolu_b", "a")]))
    assert done["status"] == "completed"


def test_remembered_tool_uses_are_bounded() -> None:
    r = StreamRenderer("/p")
    for i in range(MAX_TOOLS + 50):
        r.assistant(assistant(ToolUseBlock(f"toolu_{i}", "Bash", {"command": "ls"})))
    assert r.tools_remembered == MAX_TOOLS
    # A forgotten tool use's result is still rendered (generically), never dropped.
    updates = r.user(UserMessage(content=[ToolResultBlock("toolu_0", "out")]))
    assert [u["status"] for u in updates] == ["in_progress", "completed"]


def test_usage_of_the_turn_and_the_context_after_the_last_answer() -> None:
    r = StreamRenderer("/p")
    r.start_turn()
    message = assistant(TextBlock("x"))
    message.usage = {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 5}
    r.assistant(message)
    result = result_message(
        total_cost_usd=0.25,
        usage={"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 5},
        model_usage={MODEL: {"contextWindow": 200000}},
    )
    assert r.result(result) == [
        {
            "sessionUpdate": "usage_update", "used": 125, "size": 200000, "cost": {"amount": 0.25, "currency": "USD"},
            "_meta": {"_claude/model": "claude-sonnet-4-5"},  # the answer's model (the reference's attachUsageModel)
        }
    ]  # fmt: skip
    assert r.turn_usage.to_wire() == {
        "totalTokens": 125,
        "inputTokens": 100,
        "outputTokens": 20,
        "cachedReadTokens": 5,
        "cachedWriteTokens": 0,
    }


def test_a_compact_boundary_shows_the_context_claude_code_kept_at_once() -> None:
    """The reference's ``compact_boundary`` case: ``used`` is the boundary's ``post_tokens`` (0
    when it has none), ``size`` the window already known; none before a window is known."""
    from claude_agent_sdk import SystemMessage

    def boundary(**metadata: Any) -> SystemMessage:
        data = {"type": "system", "subtype": "compact_boundary", "compact_metadata": metadata}
        return SystemMessage(subtype="compact_boundary", data=data)

    r = StreamRenderer("/p")
    assert r.compacted(boundary(trigger="manual", pre_tokens=900, post_tokens=40)) == []  # no window yet
    message = assistant(TextBlock("x"))
    message.usage = {"input_tokens": 900, "output_tokens": 20}
    r.assistant(message)
    r.result(result_message(model_usage={MODEL: {"contextWindow": 200000}}))
    assert r.compacted(boundary(trigger="manual", pre_tokens=920, post_tokens=2609)) == [
        {"sessionUpdate": "usage_update", "used": 2609, "size": 200000, "_meta": {"_claude/model": "claude-sonnet-4-5"}}
    ]
    assert r.context() == (2609, 200000)
    assert r.compacted(boundary(trigger="auto", pre_tokens=920)) == [
        {"sessionUpdate": "usage_update", "used": 0, "size": 200000, "_meta": {"_claude/model": "claude-sonnet-4-5"}}
    ]
    assert r.compacted(SystemMessage(subtype="init", data={"type": "system", "subtype": "init"})) == []


# ------------------------------------------------------------------ the broker




def test_tool_calls_left_open_at_the_end_of_the_turn_fail_and_are_forgotten() -> None:
    r = StreamRenderer("/p")
    r.stream_event(start_tool("toolu_cut", "Write"))
    r.assistant(assistant(ToolUseBlock("toolu_done", "Bash", {"command": "ls"})))
    r.user(UserMessage(content=[ToolResultBlock("toolu_done", "a")]))
    r.assistant(assistant(ToolUseBlock("toolu_t", "TodoWrite", {"todos": []})))
    assert r.close_open_tools() == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "toolu_cut", "status": "failed"}
    ]
    assert r.close_open_tools() == []
    assert r.tools_remembered == 0


def test_the_context_used_is_the_streamed_messages_final_count() -> None:
    r = StreamRenderer("/p")
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 12, "output_tokens": 1}}}
    final = {"type": "message_delta", "usage": {"input_tokens": 12, "output_tokens": 9}}
    r.stream_event(StreamEvent(uuid="u", session_id="s", event=start))
    r.stream_event(StreamEvent(uuid="u", session_id="s", event=final))
    message = assistant(TextBlock("x"))
    message.usage = {"input_tokens": 12, "output_tokens": 1}  # what the consolidated message repeats
    r.assistant(message)
    result = result_message(model_usage={MODEL: {"contextWindow": 1000}})
    model = {"_claude/model": "claude-sonnet-4-5"}  # the streamed answer's model (the reference's attachUsageModel)
    assert r.result(result) == [{"sessionUpdate": "usage_update", "used": 21, "size": 1000, "_meta": model}]


def test_a_tool_claude_code_refused_to_run_never_says_in_progress() -> None:
    r = StreamRenderer("/p")
    r.assistant(assistant(ToolUseBlock("toolu_nb", "NotebookEdit", {"notebook_path": "/p/n.ipynb", "new_source": "x"})))
    error = "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"
    (failed,) = r.user(UserMessage(content=[ToolResultBlock("toolu_nb", error, is_error=True)]))
    assert failed["status"] == "failed"
    r.assistant(assistant(ToolUseBlock("toolu_x", "Bash", {"command": "exit 3"})))
    running, failed = r.user(UserMessage(content=[ToolResultBlock("toolu_x", "Exit code 3", is_error=True)]))
    assert (running["status"], failed["status"]) == ("in_progress", "failed")


def test_a_refusal_explanation_comes_from_the_streams_message_delta() -> None:
    """The SDK's consolidated message drops ``stop_details``; the stream's ``message_delta`` has
    the refusal's explanation, kept for that message only (and given once)."""
    r = StreamRenderer("/w")
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 3}}}
    r.stream_event(StreamEvent(uuid="u", session_id="s", event=start))
    details = {"type": "refusal", "category": "cyber", "explanation": "Declined: unsafe."}
    event = {"type": "message_delta", "delta": {"stop_reason": "refusal", "stop_details": details}, "usage": {}}
    assert r.stream_event(StreamEvent(uuid="u", session_id="s", event=event)) == []
    assert r.refusal() == "Declined: unsafe."
    assert r.refusal() is None
    # A new message forgets an explanation nobody took; another stop reason sets none.
    r.stream_event(StreamEvent(uuid="u", session_id="s", event=event))
    r.stream_event(StreamEvent(uuid="u", session_id="s", event=start))
    assert r.refusal() is None
    other = {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_details": details}}
    r.stream_event(StreamEvent(uuid="u", session_id="s", event=other))
    assert r.refusal() is None




def _exit_plan(renderer: StreamRenderer, structured: Any, *, is_error: bool = False) -> list[dict[str, Any]]:
    plan_use = ToolUseBlock(id="toolu_plan", name="ExitPlanMode", input={"plan": " 1. from the input \n"})
    renderer.assistant(AssistantMessage(content=[plan_use], model=MODEL))
    done = ToolResultBlock(tool_use_id="toolu_plan", content="User has approved your plan.", is_error=is_error)
    return [u for u in renderer.user(UserMessage(content=[done], tool_use_result=structured)) if "plan" in u]


def test_an_approved_plan_is_a_markdown_plan_update_for_a_plan_client() -> None:
    """exit-plan.js ``approvedPlan`` and ``planModeUpdate``: the structured result's plan, else the
    input's, trimmed; id ``plan-mode`` (AIR: joined to the review's tool call id)."""
    markdown = {"type": "markdown", "planId": "plan-mode", "content": "1. edited"}
    assert _exit_plan(StreamRenderer("/p", plan=True), {"plan": "1. edited"}) == [
        {"sessionUpdate": "plan_update", "plan": markdown}
    ]
    (from_input,) = _exit_plan(StreamRenderer("/p", plan=True, air=True), None)
    assert from_input["plan"] == {"type": "markdown", "planId": "plan-mode:toolu_plan", "content": "1. from the input"}
    assert _exit_plan(StreamRenderer("/p"), {"plan": "1. edited"}) == []  # the client declared no plan operations
    assert _exit_plan(StreamRenderer("/p", plan=True), {"plan": "x"}, is_error=True) == []  # not approved
    assert _exit_plan(StreamRenderer("/p", plan=True), {"plan": "x", "isAgent": True}) == []  # a subagent's
    assert _exit_plan(StreamRenderer("/p", plan=True), {"plan": "   "}) == []  # empty


def test_a_plain_client_gets_the_tools_structured_result_before_the_result() -> None:
    """The reference's ``PostToolUse`` report to a plain client (``renderer.js`` ``hookResult``):
    ``_meta.claudeCode.toolResponse`` and ``toolName`` on an update of its own; AIR gets none here
    (a Bash result has no ``status``/``isAsync`` marker: the next test)."""
    response = {"stdout": "hi", "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}

    def updates(renderer: StreamRenderer, structured: Any) -> list[dict[str, Any]]:
        use = ToolUseBlock(id="t1", name="Bash", input={"command": "x"})
        renderer.assistant(AssistantMessage(content=[use], model=MODEL))
        done = ToolResultBlock(tool_use_id="t1", content="hi", is_error=False)
        return renderer.user(UserMessage(content=[done], tool_use_result=structured))

    plain = updates(StreamRenderer("/p"), response)
    assert plain[1] == {
        "_meta": {"claudeCode": {"toolResponse": response, "toolName": "Bash"}},
        "toolCallId": "t1",
        "sessionUpdate": "tool_call_update",
    }
    assert plain[2]["status"] == "completed"
    assert not any("toolResponse" in str(u) for u in updates(StreamRenderer("/p", air=True), response))
    assert not any("toolResponse" in str(u) for u in updates(StreamRenderer("/p"), None))


def test_air_gets_only_the_status_and_async_markers_of_the_structured_result() -> None:
    """The reference's ``hookResult`` for a client that keeps ``_meta`` (AIR; ``content.js``
    ``toolResponseMarkers``): ``status`` and ``isAsync`` only, which AIR reads to tell a background
    subagent's launch. The response is the shape of Claude Code 2.1.337's async ``Agent`` result."""
    launched = {
        "isAsync": True, "status": "async_launched", "agentId": "a1", "description": "Read the note",
        "prompt": "Read note.txt", "outputFile": "/tmp/out", "canReadOutputFile": True,
    }  # fmt: skip

    def updates(renderer: StreamRenderer, structured: Any) -> list[dict[str, Any]]:
        use = ToolUseBlock(id="t1", name="Agent", input={"prompt": "x", "description": "d"})
        renderer.assistant(AssistantMessage(content=[use], model=MODEL))
        done = ToolResultBlock(tool_use_id="t1", content="launched", is_error=False)
        return renderer.user(UserMessage(content=[done], tool_use_result=structured))

    air = updates(StreamRenderer("/p", air=True), launched)
    assert air[1] == {
        "_meta": {"claudeCode": {"toolResponse": {"status": "async_launched", "isAsync": True}, "toolName": "Agent"}},
        "toolCallId": "t1",
        "sessionUpdate": "tool_call_update",
    }
    # wrong types are no markers; with neither, no update
    odd = updates(StreamRenderer("/p", air=True), {"status": 3, "isAsync": "yes"})
    assert not any("toolResponse" in str(u) for u in odd)
    only = updates(StreamRenderer("/p", air=True), {"isAsync": False})
    assert only[1]["_meta"]["claudeCode"]["toolResponse"] == {"isAsync": False}
