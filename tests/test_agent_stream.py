"""The agent's coding-turn pieces without processes: :class:`lifecycle.agent.stream.StreamRenderer`
(streamed chunks, nothing shown twice, tool calls announced once, results, plan, usage) and
:class:`lifecycle.agent.permissions.PermissionBroker` (every answer a client can give, withdrawal),
on the real ``claude_agent_sdk`` message classes and a real :class:`lifecycle.ledger.SessionLedger`.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp import RequestError
from acp.schema import RequestPermissionResponse
from claude_agent_sdk import (
    AssistantMessage,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    TextBlock,
    ThinkingBlock,
    ToolPermissionContext,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from claude_agent_sdk.types import PermissionRuleValue, StreamEvent
from sdk_messages import result_message

from lifecycle.agent.modes import SessionSettings
from lifecycle.agent.permissions import DENIED_MESSAGE, WITHDRAWN_MESSAGE, PermissionBroker
from lifecycle.agent.stream import MAX_TOOLS, StreamRenderer
from lifecycle.events import Cancelled, Event, PromptStarted, QueryError
from lifecycle.ledger import SessionLedger

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
        {"sessionUpdate": "usage_update", "used": 125, "size": 200000, "cost": {"amount": 0.25, "currency": "USD"}}
    ]
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
        {"sessionUpdate": "usage_update", "used": 2609, "size": 200000}
    ]
    assert r.context() == (2609, 200000)
    assert r.compacted(boundary(trigger="auto", pre_tokens=920)) == [
        {"sessionUpdate": "usage_update", "used": 0, "size": 200000}
    ]
    assert r.compacted(SystemMessage(subtype="init", data={"type": "system", "subtype": "init"})) == []


# ------------------------------------------------------------------ the broker


class FakeSession:
    """What a broker is given of its session: a publisher around a real ledger (capable client)
    whose ``show`` records, the session's renderer and settings (in plan mode, as a session whose
    Claude asks to leave it), and a ``cancel`` that is counted."""

    def __init__(self) -> None:
        self.session_id = "s1"
        self.ledger = SessionLedger("s1", negotiated=True, epoch="e")
        self.renderer = StreamRenderer("/p")
        self.settings = SessionSettings(mode="plan")
        self.shown: list[dict[str, Any]] = []
        self.cancels = 0

    async def feed(self, event: Event, *, runtime: int | None = None) -> bool:
        accepted = self.ledger.process(event, lambda out: None)
        return accepted

    async def show(self, updates: list[dict[str, Any]]) -> int:
        self.shown.extend(updates)
        return len(updates)

    async def cancel(self) -> None:
        self.cancels += 1
        await self.feed(Cancelled())

    @property
    def modes(self) -> list[str]:
        """The modes the editor was told of (``current_mode_update``)."""
        return [u["currentModeId"] for u in self.shown if u.get("sessionUpdate") == "current_mode_update"]

    def broker(self, conn: Any) -> PermissionBroker:
        return PermissionBroker(
            self,  # type: ignore[arg-type]
            self.renderer,
            self.settings,
            conn,
            cwd="/p",
            on_cancelled=self.cancel,
        )


class FakeConn:
    """The client: answers each question with the next of ``answers`` (a dict, an exception, or
    ``"hang"``)."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, Any, list[Any]]] = []
        self.notifications: list[tuple[str, Any]] = []

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kw: Any) -> Any:
        self.asked.append((session_id, tool_call, options))
        answer = self.answers.pop(0)
        if answer == "hang":
            await asyncio.sleep(3600)
        if isinstance(answer, Exception):
            raise answer
        return RequestPermissionResponse.model_validate(answer)

    @property
    def _conn(self) -> FakeConn:  # the ACP SDK's raw JSON-RPC connection, as the broker reaches it
        return self

    async def send_notification(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))


def selected(option: str) -> dict[str, Any]:
    return {"outcome": {"outcome": "selected", "optionId": option}}


def context(tool_id: str, suggestions: list[PermissionUpdate] | None = None) -> ToolPermissionContext:
    return ToolPermissionContext(tool_use_id=tool_id, suggestions=suggestions or [])


def in_turn(*answers: Any) -> tuple[FakeSession, FakeConn, PermissionBroker]:
    session = FakeSession()
    session.ledger.process(PromptStarted(turn_id="t1"), lambda out: None)
    conn = FakeConn(*answers)
    return session, conn, session.broker(conn)


WRITE = {"file_path": "/p/a.txt", "content": "a"}


#: Claude Code's suggestion for a Write in the working directory (CLI 2.1.332, default mode).
ACCEPT_EDITS = PermissionUpdate(type="setMode", mode="acceptEdits", destination="session")


def ask(
    broker: PermissionBroker,
    tool_id: str = "toolu_1",
    name: str = "Write",
    inp: Any = None,
    *,
    raw: dict[str, Any] | None = None,
    **kw: Any,
) -> Any:
    """Claude Code asks about ``name``: its raw request is seen first (``raw``: extra fields), as
    the transport reports it."""
    broker.saw_permission_request({"subtype": "can_use_tool", "tool_use_id": tool_id, **(raw or {})})
    kw.setdefault("suggestions", [ACCEPT_EDITS])
    return broker.can_use_tool(name, dict(inp or WRITE), context(tool_id, **kw))


def test_allow_once_allows_this_use_only_and_says_the_tool_runs() -> None:
    async def go() -> None:
        session, conn, broker = in_turn(selected("allow-once"), selected("reject"))
        result = await ask(broker)
        assert isinstance(result, PermissionResultAllow)
        assert result.updated_input == WRITE
        assert {"sessionUpdate": "tool_call_update", "toolCallId": "toolu_1", "status": "in_progress"} in session.shown
        _, tool_call, options = conn.asked[0]
        assert tool_call.tool_call_id == "toolu_1"
        assert [(o.option_id, o.kind) for o in options] == [
            ("allow-once", "allow_once"),
            ("allow-with-updates", "allow_always"),
            ("reject", "reject_once"),
        ]
        # The tool call was announced before the question.
        assert session.shown[0]["sessionUpdate"] == "tool_call"
        again = await ask(broker, "toolu_2")
        assert isinstance(again, PermissionResultDeny)
        assert len(conn.asked) == 2
        assert not session.ledger.question_open("toolu_1")

    asyncio.run(go())


def test_allow_always_hands_claude_code_its_own_suggestions_for_the_session_and_asks_again() -> None:
    """ "Always" is Claude Code's suggested update, kept to the session; nothing is remembered by
    the adapter: the next call Claude Code asks about is asked of the client again."""

    async def go() -> None:
        suggestion = PermissionUpdate(
            type="addRules",
            rules=[PermissionRuleValue(tool_name="Edit", rule_content="/p/src/**")],
            behavior="allow",
            destination="localSettings",
        )
        _, conn, broker = in_turn(selected("allow-with-updates"), selected("reject"))
        result = await ask(broker, inp={"file_path": "/p/src/a.txt", "content": "a"}, suggestions=[suggestion])
        assert isinstance(result, PermissionResultAllow)
        assert result.updated_permissions is not None
        assert [u.to_dict() for u in result.updated_permissions] == [
            {
                "type": "addRules",
                "destination": "session",
                "rules": [{"toolName": "Edit", "ruleContent": "/p/src/**"}],
                "behavior": "allow",
            }
        ]
        assert [o.name for o in conn.asked[0][2]] == ["Yes", "Yes, allow all edits during this session", "No"]
        second = await ask(broker, "toolu_2", inp={"file_path": "/p/src/b.txt", "content": "b"})
        assert isinstance(second, PermissionResultDeny)
        assert len(conn.asked) == 2

    asyncio.run(go())


@pytest.mark.parametrize(
    "raw",
    [
        {"matched_ask_rule": {"source": "userSettings", "tool_name": "Write"}},
        {"suppress_always_allow_rule": True},
    ],
    ids=["ask-rule", "suppressed"],
)
def test_no_always_option_when_an_ask_rule_or_safety_check_forced_the_question(raw: dict[str, Any]) -> None:
    async def go() -> None:
        _, conn, broker = in_turn(selected("allow-with-updates"))
        result = await ask(broker, raw=raw)
        assert isinstance(result, PermissionResultDeny)  # "always" was not offered
        assert [o.option_id for o in conn.asked[0][2]] == ["allow-once", "reject"]

    asyncio.run(go())


def test_no_always_option_for_a_request_the_transport_did_not_report() -> None:
    async def go() -> None:
        _, conn, broker = in_turn(selected("allow-once"))
        result = await broker.can_use_tool("Write", dict(WRITE), context("toolu_9", [ACCEPT_EDITS]))
        assert isinstance(result, PermissionResultAllow)
        assert [o.option_id for o in conn.asked[0][2]] == ["allow-once", "reject"]

    asyncio.run(go())


@pytest.mark.parametrize(
    "answer",
    [
        selected("reject"),
        selected("allow-everything"),
        {"outcome": {"outcome": "selected"}},
        {"outcome": "yes"},
        RequestError.internal_error({"details": "boom"}),
        ConnectionError("the client is gone"),
    ],
    ids=["reject", "unknown-option", "no-option", "malformed", "error-reply", "client-gone"],
)
def test_every_other_answer_denies_and_the_turn_goes_on(answer: Any) -> None:
    async def go() -> None:
        session, _, broker = in_turn(answer)
        result = await ask(broker)
        assert isinstance(result, PermissionResultDeny)
        assert result.interrupt is False
        if answer == selected("reject"):
            assert result.message == DENIED_MESSAGE
        assert session.cancels == 0
        assert session.ledger.flow == "running"
        assert not any(u.get("status") == "in_progress" for u in session.shown)

    asyncio.run(go())


def test_a_cancelled_answer_cancels_the_turn() -> None:
    async def go() -> None:
        session, _, broker = in_turn({"outcome": {"outcome": "cancelled"}})
        result = await ask(broker)
        assert isinstance(result, PermissionResultDeny)
        assert (result.message, result.interrupt) == (WITHDRAWN_MESSAGE, True)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert session.cancels == 1
        assert session.ledger.flow == "cancelled"

    asyncio.run(go())


@pytest.mark.parametrize("ending", [Cancelled(), QueryError(message="boom")], ids=["cancel", "runtime-lost"])
def test_a_question_open_when_the_turn_ends_is_withdrawn_and_never_allowed(ending: Event) -> None:
    async def go() -> None:
        session, conn, broker = in_turn("hang")
        task = asyncio.ensure_future(ask(broker))
        while not conn.asked:
            await asyncio.sleep(0)
        broker.saw_request(7, "toolu_1")
        await session.feed(ending)
        assert not session.ledger.question_open("toolu_1")
        await broker.withdraw()
        result = await asyncio.wait_for(task, 5)
        assert isinstance(result, PermissionResultDeny)
        assert result.interrupt is True
        assert conn.notifications == [("$/cancel_request", {"requestId": 7})]
        assert broker.open_requests == 0

    asyncio.run(go())


def test_a_question_outside_a_turn_is_refused_without_asking() -> None:
    async def go() -> None:
        session = FakeSession()
        conn = FakeConn(selected("allow-once"))
        broker = session.broker(conn)
        result = await ask(broker)
        assert isinstance(result, PermissionResultDeny)
        assert conn.asked == []

    asyncio.run(go())


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
    assert r.result(result) == [{"sessionUpdate": "usage_update", "used": 21, "size": 1000}]


def test_a_tool_claude_code_refused_to_run_never_says_in_progress() -> None:
    r = StreamRenderer("/p")
    r.assistant(assistant(ToolUseBlock("toolu_nb", "NotebookEdit", {"notebook_path": "/p/n.ipynb", "new_source": "x"})))
    error = "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"
    (failed,) = r.user(UserMessage(content=[ToolResultBlock("toolu_nb", error, is_error=True)]))
    assert failed["status"] == "failed"
    r.assistant(assistant(ToolUseBlock("toolu_x", "Bash", {"command": "exit 3"})))
    running, failed = r.user(UserMessage(content=[ToolResultBlock("toolu_x", "Exit code 3", is_error=True)]))
    assert (running["status"], failed["status"]) == ("in_progress", "failed")


def test_a_question_after_the_turn_is_cancelled_is_refused_without_asking() -> None:
    async def go() -> None:
        session, conn, broker = in_turn(selected("allow-with-updates"))
        assert isinstance(await ask(broker), PermissionResultAllow)
        await session.feed(Cancelled())  # the turn is cancelled; Claude Code still asks (draining)
        late = await ask(broker, "toolu_2", inp={"file_path": "/p/b.txt", "content": "b"})
        assert isinstance(late, PermissionResultDeny)
        assert late.interrupt is True
        assert len(conn.asked) == 1

    asyncio.run(go())


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


def test_leaving_plan_mode_offers_the_references_options_and_switches_the_mode() -> None:
    """ExitPlanMode: "Yes, and use auto mode", "Yes, manually approve edits", "No, keep planning"
    (no bypass where Claude Code refuses it); a yes gives Claude Code the mode and tells the
    session; "keep planning" is a denial Claude reads, the mode unchanged."""

    async def go() -> None:
        plan = {"plan": "1. write a.txt"}
        session, conn, broker = in_turn(selected("exit-plan-default"), selected("reject"))
        result = await ask(broker, "toolu_p", "ExitPlanMode", plan)
        assert isinstance(result, PermissionResultAllow)
        (update,) = result.updated_permissions or []
        assert (update.type, update.mode, update.destination) == ("setMode", "default", "session")
        assert session.modes == ["default"]
        _, _, options = conn.asked[0]
        assert [(o.option_id, o.name, o.kind) for o in options] == [
            ("exit-plan-auto", "Yes, and use auto mode", "allow_always"),
            ("exit-plan-default", "Yes, manually approve edits", "allow_once"),
            ("reject", "No, keep planning", "reject_once"),
        ]
        refused = await ask(broker, "toolu_q", "ExitPlanMode", plan)
        assert isinstance(refused, PermissionResultDeny) and refused.message == "User chose to keep planning"
        assert session.modes == ["default"]

    asyncio.run(go())


def test_an_exit_plan_option_is_unknown_for_any_other_tool() -> None:
    async def go() -> None:
        session, _conn, broker = in_turn(selected("exit-plan-auto"))
        result = await ask(broker)
        assert isinstance(result, PermissionResultDeny)  # not an option of this question
        assert session.modes == []

    asyncio.run(go())
