"""Where a permission question is asked (``lifecycle.agent.question_routes``, issue 51.1 and
51.5): a late question (no prompt's turn open: a background subagent asking after its turn ended)
is asked, not refused; a subagent's question goes to its child session, the child
``requires_action`` while it waits. On a real :class:`lifecycle.ledger.SessionLedger`, the real
child-sessions lane fed Claude Code 2.1.337's ``task_started`` shape, and the real broker."""

from __future__ import annotations

import asyncio
from typing import Any

from acp.schema import RequestPermissionResponse
from acp_schema import conforms
from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny, TaskStartedMessage, ToolPermissionContext

from lifecycle.agent.hold import BackgroundHold
from lifecycle.agent.messages import Pass, read
from lifecycle.agent.modes import SessionSettings
from lifecycle.agent.permissions import DENIED_MESSAGE, PermissionBroker
from lifecycle.agent.question_routes import LATE_WITHDRAWN_MESSAGE, QuestionRoutes, Route
from lifecycle.agent.stream import StreamRenderer
from lifecycle.agent.subagents import ChildSessions
from lifecycle.events import Cancelled, Event, PromptStarted, Result
from lifecycle.ledger import SessionLedger

PARENT = "s1"
CHILD = "abb67fc03e407a853"  # Claude Code's agent id, the child session's id
BASH = {"command": "echo late > a.txt", "description": "Write a.txt"}


def started(task_id: str = CHILD, tool_use_id: str = "toolu_agent") -> TaskStartedMessage:
    raw = {"task_id": task_id, "tool_use_id": tool_use_id, "description": "Write", "subagent_type": "general-purpose",
           "task_type": "local_agent", "uuid": "u1", "session_id": "s"}  # fmt: skip
    return TaskStartedMessage(
        subtype="task_started", data=raw, task_id=task_id, description="Write", uuid="u1", session_id="s",
        tool_use_id=tool_use_id, task_type="local_agent",
    )  # fmt: skip


class Session:
    """A broker's session: a publisher around a real ledger (``show`` on the parent, ``emit`` on a
    child: recorded as (session, update)), the child-sessions lane and the routes."""

    def __init__(self, *, subagents: bool = True) -> None:
        self.session_id = PARENT
        self.ledger = SessionLedger(PARENT, negotiated=True, epoch="e")
        self.renderer = StreamRenderer("/p")
        self.children = ChildSessions(self.renderer, subagents)
        self.routes = QuestionRoutes(PARENT, self.children, lambda: self.ledger.flow)
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.cancels = 0

    async def feed(self, event: Event, *, runtime: int | None = None) -> bool:
        return self.ledger.process(event, lambda out: None)

    async def show(self, updates: list[dict[str, Any]]) -> int:
        self.sent += [(PARENT, u) for u in updates]
        return len(updates)

    async def emit(self, updates: list[dict[str, Any]], event: Any = None, *, session_id: str | None = None) -> bool:
        self.sent += [(session_id or PARENT, u) for u in updates]
        return False

    async def cancel(self) -> None:
        self.cancels += 1

    def start_child(self, task_id: str = CHILD, tool_use_id: str = "toolu_agent") -> None:
        self.children.run(Pass(read(started(task_id, tool_use_id)), turn=None, quiet=False, prompt_open=False))

    def states(self) -> list[tuple[str, str]]:
        return [
            (u["sessionId"], u["state"]["state"]) for _, u in self.sent if u.get("sessionUpdate") == "subagent_update"
        ]


class Conn:
    """The client: each question answered by the next of ``answers`` (a dict, or ``"hang"``)."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, Any]] = []
        self.notifications: list[tuple[str, Any]] = []

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kw: Any) -> Any:
        self.asked.append((session_id, tool_call))
        answer = self.answers.pop(0)
        if answer == "hang":
            await asyncio.sleep(3600)
        return RequestPermissionResponse.model_validate(answer)

    @property
    def _conn(self) -> Conn:  # the ACP SDK's raw JSON-RPC connection, as the broker reaches it
        return self

    async def send_notification(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))


def broker(session: Session, conn: Conn) -> PermissionBroker:
    return PermissionBroker(
        session,  # type: ignore[arg-type]
        session.renderer,
        SessionSettings(),
        conn,
        cwd="/p",
        on_cancelled=session.cancel,
        routes=session.routes,
    )


def selected(option: str) -> dict[str, Any]:
    return {"outcome": {"outcome": "selected", "optionId": option}}


def ask(b: PermissionBroker, tool_id: str = "toolu_bash", agent_id: str | None = CHILD) -> Any:
    b.saw_permission_request({"subtype": "can_use_tool", "tool_use_id": tool_id})
    return b.can_use_tool("Bash", dict(BASH), ToolPermissionContext(tool_use_id=tool_id, agent_id=agent_id))


async def waiting_on_a_child() -> tuple[Session, Conn, PermissionBroker, asyncio.Future[Any]]:
    """A running child's late question, sent to a client that never answers it."""
    session, conn = Session(), Conn("hang")
    session.start_child()
    b = broker(session, conn)
    task = asyncio.ensure_future(ask(b))
    while not conn.asked:
        await asyncio.sleep(0)
    return session, conn, b, task


# ------------------------------------------------------------------ the routes


def test_a_question_is_late_when_no_turn_is_open_and_goes_to_its_running_child() -> None:
    session = Session()
    routes = session.routes
    assert routes.route(CHILD) == Route(PARENT, None, late=True)  # not announced: the parent's
    session.start_child()
    assert routes.route(CHILD) == Route(CHILD, CHILD, late=True)
    assert routes.route(None) == Route(PARENT, None, late=True)  # the main agent's
    session.ledger.process(PromptStarted(turn_id="t1"), lambda out: None)
    assert routes.route(CHILD) == Route(CHILD, CHILD, late=False)  # a turn runs: the turn's
    session.ledger.process(Cancelled(), lambda out: None)
    assert routes.route(CHILD) is None  # the cancelled work winds down: never asked
    plain = Session(subagents=False)
    plain.start_child()
    assert plain.routes.route(CHILD) == Route(PARENT, None, late=True)  # no child sessions: the parent's


def test_a_live_background_subagent_of_an_earlier_prompt_asks_late_while_a_later_prompt_runs() -> None:
    """A prompt held for its subagent was handed off to the next one (hold.py): the subagent's
    question during the next prompt is not that prompt's (its end must not withdraw it)."""
    session = Session()
    hold = BackgroundHold(enabled=True)
    routes = QuestionRoutes(PARENT, session.children, lambda: session.ledger.flow, hold)
    session.start_child()
    first = Pass(read(started()), turn="t1", quiet=False, prompt_open=True)
    hold.run(first)  # the first prompt started it
    session.ledger.process(PromptStarted(turn_id="t1"), lambda out: None)
    assert routes.route(CHILD) == Route(CHILD, CHILD, late=False)  # its own prompt's question
    later = Pass(read(started("other", "toolu_other")), turn="t2", quiet=False, prompt_open=True)
    hold.run(later)  # the next prompt's first message: the first prompt's subagents are not its own
    assert routes.route(CHILD) == Route(CHILD, CHILD, late=True)
    assert routes.route(None) == Route(PARENT, None, late=False)  # the main agent's: the turn's
    assert routes.route("unknown") == Route(PARENT, None, late=False)  # no live task of that id


def test_a_child_requires_action_while_its_questions_wait_and_runs_again_after_the_last() -> None:
    session = Session()
    session.start_child()
    route = session.routes.route(CHILD)
    assert route is not None
    # the reference's awaitingUser: requires_action at the first open request, running after the last
    first = session.routes.opened(route)
    assert first == [{"sessionUpdate": "subagent_update", "sessionId": CHILD, "state": {"state": "requires_action"}}]
    assert session.routes.opened(route) == []
    assert session.routes.closed(route) == []
    last = session.routes.closed(route)
    assert last == [{"sessionUpdate": "subagent_update", "sessionId": CHILD, "state": {"state": "running"}}]
    assert all(conforms(u) for u in first + last)
    assert session.routes.closed(route) == []  # nothing open: nothing to end
    assert session.routes.opened(Route(PARENT, None, late=True)) == []  # the parent's own question


def test_a_child_being_stopped_is_not_reported_running_when_its_question_ends() -> None:
    session = Session()
    session.start_child()
    route = session.routes.route(CHILD)
    assert route is not None
    assert len(session.routes.opened(route)) == 1
    session.routes.stopping(CHILD)
    assert session.routes.closed(route) == []  # its end (cancelled) comes next


# ------------------------------------------------------------------ the broker


def test_a_late_question_is_asked_on_the_child_and_an_allow_runs_the_tool() -> None:
    async def go() -> None:
        session, conn = Session(), Conn(selected("allow-once"))
        session.start_child()
        result = await ask(broker(session, conn))
        assert isinstance(result, PermissionResultAllow) and result.updated_input == BASH
        ((asked_on, tool_call),) = conn.asked
        assert asked_on == CHILD and tool_call.raw_input == BASH  # exactly what runs
        # the tool call announced on the child before the question; requires_action, then running
        assert [(s, u["sessionUpdate"]) for s, u in session.sent][:2] == [
            (CHILD, "tool_call"),
            (PARENT, "subagent_update"),
        ]
        assert session.states() == [(CHILD, "requires_action"), (CHILD, "running")]
        running = [s for s, u in session.sent if u.get("status") == "in_progress"]
        assert running == [CHILD]  # the tool call runs on the child's session
        assert session.ledger.flow == "idle"  # no turn machine question: nothing opened a turn

    asyncio.run(go())


def test_a_late_question_the_client_cancels_is_the_users_refusal_and_cancels_nothing() -> None:
    async def go() -> None:
        session, conn = Session(), Conn({"outcome": {"outcome": "cancelled"}}, selected("reject"))
        b = broker(session, conn)
        result = await ask(b, agent_id=None)  # no child sessions here: the parent's
        assert isinstance(result, PermissionResultDeny) and result.message == DENIED_MESSAGE
        assert result.interrupt is False and session.cancels == 0
        assert conn.asked[0][0] == PARENT
        rejected = await ask(b, "toolu_2", agent_id=None)
        assert isinstance(rejected, PermissionResultDeny) and rejected.message == DENIED_MESSAGE

    asyncio.run(go())


def test_a_session_cancel_withdraws_a_late_question_denied_and_a_turns_end_does_not() -> None:
    async def go() -> None:
        session, conn, b, task = await waiting_on_a_child()
        b.saw_request(11, "toolu_bash")
        # a prompt's turn opens and ends meanwhile: the late question is not its own
        await session.feed(PromptStarted(turn_id="t1"))
        await session.feed(Result(subtype="success", is_error=False))
        assert session.ledger.take_withdrawn() == ()
        assert not task.done()
        await b.withdraw_late("another-child")  # another child's cancel: not this one
        assert not task.done()
        await b.withdraw_late()  # session/cancel
        result = await task
        assert isinstance(result, PermissionResultDeny) and result.message == LATE_WITHDRAWN_MESSAGE
        assert result.interrupt is False
        assert conn.notifications == [("$/cancel_request", {"requestId": 11})]
        assert session.states() == [(CHILD, "requires_action"), (CHILD, "running")]
        assert b.open_requests == 0

    asyncio.run(go())


def test_a_child_cancel_withdraws_its_late_question_without_reporting_it_running() -> None:
    async def go() -> None:
        session, _, b, task = await waiting_on_a_child()
        session.routes.stopping(CHILD)
        await b.withdraw_late(CHILD)
        result = await task
        assert isinstance(result, PermissionResultDeny) and result.message == LATE_WITHDRAWN_MESSAGE
        assert session.states() == [(CHILD, "requires_action")]  # its end (cancelled) comes next

    asyncio.run(go())


def test_the_same_late_question_asked_twice_is_refused_the_second_time() -> None:
    async def go() -> None:
        session, conn = Session(), Conn("hang")
        b = broker(session, conn)
        first = asyncio.ensure_future(ask(b, agent_id=None))
        while not conn.asked:
            await asyncio.sleep(0)
        second = await b.can_use_tool("Bash", dict(BASH), ToolPermissionContext(tool_use_id="toolu_bash"))
        assert isinstance(second, PermissionResultDeny)
        assert len(conn.asked) == 1
        await b.withdraw()  # the session closes
        assert isinstance(await first, PermissionResultDeny)

    asyncio.run(go())
