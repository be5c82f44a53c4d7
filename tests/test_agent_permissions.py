"""The permission broker without processes (:class:`lifecycle.agent.permissions.PermissionBroker`):
every answer a client can give, the options it is offered, withdrawal when the turn ends, a
question outside a turn, leaving plan mode; on the real ``claude_agent_sdk`` classes and a real
:class:`lifecycle.ledger.SessionLedger` (moved from ``test_agent_stream.py``, which keeps the
renderer's tests)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp import RequestError
from acp.schema import RequestPermissionResponse
from claude_agent_sdk import (
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    ToolPermissionContext,
)
from claude_agent_sdk.types import PermissionRuleValue

from lifecycle.agent.modes import SessionSettings
from lifecycle.agent.permissions import DENIED_MESSAGE, WITHDRAWN_MESSAGE, PermissionBroker
from lifecycle.agent.stream import StreamRenderer
from lifecycle.events import Cancelled, Event, PromptStarted, QueryError
from lifecycle.ledger import SessionLedger

WRITE = {"file_path": "/p/a.txt", "content": "a"}


#: Claude Code's suggestion for a Write in the working directory (CLI 2.1.332, default mode).
ACCEPT_EDITS = PermissionUpdate(type="setMode", mode="acceptEdits", destination="session")


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


def test_a_question_claude_code_withdraws_is_withdrawn_at_the_client() -> None:
    # Claude Code's ``control_cancel_request`` (a PermissionRequest hook of the user's settings
    # decided first: tests/e2e/test_interrupts.py): the SDK cancels the ``can_use_tool`` call. The
    # client's request is cancelled on the wire too, and no answer allows the tool.
    async def go() -> None:
        _, conn, broker = in_turn("hang")
        task = asyncio.ensure_future(ask(broker))
        while not conn.asked:
            await asyncio.sleep(0)
        broker.saw_request(7, "toolu_1")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
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
