"""Subagents as ACP child sessions (``lifecycle.agent.subagents``, issue 51): the child-sessions
lane on real ``claude_agent_sdk`` messages of the shapes Claude Code 2.1.337 sends for a
foreground ``Agent`` call (seen on the wire in tests/e2e/test_child_sessions.py), and every
``subagent_update`` the lane makes checked against ACP's schema (the vendored slice
``tests/fixtures/acp-schema/subagent-update.schema.json``: the ACP TypeScript SDK 2.4.0's
``schema/v1/schema.unstable.json``, the one the reference adapter 0.101.0 bundles)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp_schema import conforms
from claude_agent_sdk import (
    AssistantMessage,
    TaskNotificationMessage,
    TaskStartedMessage,
    TaskUpdatedMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

from lifecycle.acp import AcpSubagentUpdate, SessionPublisher
from lifecycle.agent.lanes import LaneParts, Lanes
from lifecycle.agent.mcp import McpServers
from lifecycle.agent.messages import Step, read
from lifecycle.agent.stream import StreamRenderer
from lifecycle.agent.subagents import ChildSessions, end_state, labels
from lifecycle.events import ChildEnded
from lifecycle.ledger import SessionLedger
from lifecycle.negotiation import ClientState

TURN = "11111111-1111-1111-1111-111111111111"
AGENT = "toolu_agent"
CHILD = "abb67fc03e407a853"  # Claude Code's agent id (17 characters, as on the wire)
#: Claude Code 2.1.337's ``task_updated`` error for a subagent whose every request got a 429.
FAILED = (
    "Agent terminated early due to an API error: API Error: Server is temporarily limiting requests (not "
    "your usage limit) · Number of requests has exceeded your rate limit (error type rate_limit, HTTP 429)"
)


def test_the_schema_check_can_fail() -> None:
    # The checker is only worth what it refuses: each of these breaks one rule of the schema.
    good = {"sessionUpdate": "subagent_update", "sessionId": CHILD, "state": {"state": "running"}}
    assert conforms(good)
    assert not conforms({**good, "sessionUpdate": "subagent"})
    assert not conforms({"sessionUpdate": "subagent_update"})  # sessionId is required
    assert not conforms({**good, "sessionId": 7})
    assert not conforms({**good, "title": 3})
    assert not conforms({**good, "state": {"state": "idle", "stopReason": "error", "error": {"code": "x"}}})
    assert not conforms({**good, "state": {"state": "idle", "stopReason": "error", "error": {"code": -32603}}})
    assert not conforms({**good, "state": {}})  # a state names its state
    assert not conforms({**good, "capabilities": {"cancel": 1}})


# ------------------------------------------------------------------ the messages


def lanes(client: ClientState) -> Lanes:
    return Lanes(LaneParts(StreamRenderer("/project"), McpServers(), client))


def run(session: Lanes, message: object) -> list[Step]:
    return session.run(read(message), turn=TURN, quiet=False, prompt_open=True)[0]


def agent_call(**extra: Any) -> AssistantMessage:
    tool_input = {"description": "Read the note", "prompt": "Read note.txt.", "subagent_type": "general-purpose"}
    return AssistantMessage(content=[ToolUseBlock(id=AGENT, name="Agent", input={**tool_input, **extra})], model="m")


def started(**data: Any) -> TaskStartedMessage:
    raw = {"task_id": CHILD, "tool_use_id": AGENT, "description": "Read the note", "subagent_type": "general-purpose",
           "task_type": "local_agent", "uuid": "u1", "session_id": "s", **data}  # fmt: skip
    return TaskStartedMessage(
        subtype="task_started", data=raw, task_id=CHILD, description="Read the note", uuid="u1", session_id="s",
        tool_use_id=AGENT, task_type="local_agent",
    )  # fmt: skip


def updated(status: str, error: str | None = None) -> TaskUpdatedMessage:
    patch: dict[str, Any] = {"status": status, **({"error": error} if error else {})}
    data = {"task_id": CHILD, "patch": patch}
    return TaskUpdatedMessage(subtype="task_updated", data=data, task_id=CHILD, patch=patch, status=status)


def notified(status: str) -> TaskNotificationMessage:
    data = {"task_id": CHILD, "status": status, "tool_use_id": AGENT, "output_file": "", "summary": ""}
    return TaskNotificationMessage(
        subtype="task_notification", data=data, task_id=CHILD, status=status, output_file="", summary="",
        uuid="u2", session_id="s", tool_use_id=AGENT,
    )  # fmt: skip


def sub_read() -> AssistantMessage:
    call = ToolUseBlock(id="toolu_sub_read", name="Read", input={"file_path": "/project/note.txt"})
    return AssistantMessage(content=[call], model="m", parent_tool_use_id=AGENT)


def sub_result() -> UserMessage:
    result = ToolResultBlock(tool_use_id="toolu_sub_read", content="hello")
    return UserMessage(content=[result], parent_tool_use_id=AGENT)


def sub_text(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextBlock(text=text)], model="m", parent_tool_use_id=AGENT, message_id="msg_1")


def sent(steps: list[Step]) -> list[tuple[str | None, str]]:
    """(the session each update goes to, None: the parent; its kind), in order."""
    return [(step.session, u["sessionUpdate"]) for step in steps for u in step.updates]


# ------------------------------------------------------------------ the lane


def test_a_foreground_subagent_is_a_child_session_announced_running_and_ended_idle() -> None:
    session = lanes(ClientState(subagents=True))
    assert sent(run(session, agent_call())) == [(None, "tool_call")]  # the Agent call stays on the parent
    steps = run(session, started())
    (announce,) = [u for step in steps for u in step.updates]
    # the reference adapter 0.101.0 on the same CLI: title from the Agent call's description,
    # description its subagent_type, cancel offered, running
    assert announce == {
        "sessionUpdate": "subagent_update", "sessionId": CHILD, "title": "Read the note",
        "description": "general-purpose", "capabilities": {"cancel": {}}, "state": {"state": "running"},
    }  # fmt: skip
    assert conforms(announce) and steps[0].session is None
    AcpSubagentUpdate.model_validate(announce)
    assert sent(run(session, sub_read())) == [(CHILD, "tool_call")]
    assert sent(run(session, sub_result())) == [(CHILD, "tool_call_update"), (CHILD, "tool_call_update")]
    (chunk,) = [u for step in run(session, sub_text("The note says hello.")) for u in step.updates]
    assert chunk == {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "The note says hello."},
        "messageId": "msg_1", "_meta": {"claudeCode": {"parentToolUseId": AGENT}},
    }  # fmt: skip
    (end,) = [u for step in run(session, updated("completed")) for u in step.updates]
    idle = {"state": "idle", "stopReason": "end_turn"}
    assert end == {"sessionUpdate": "subagent_update", "sessionId": CHILD, "state": idle}
    assert conforms(end)
    assert sent(run(session, notified("completed"))) == []  # one end per child


def test_a_client_that_did_not_declare_subagents_sees_them_flat_as_before() -> None:
    session = lanes(ClientState())
    run(session, agent_call())
    assert sent(run(session, started())) == []
    steps = run(session, sub_read())
    assert sent(steps) == [(None, "tool_call")]
    assert steps[0].updates[0]["_meta"]["claudeCode"]["parentToolUseId"] == AGENT
    assert sent(run(session, sub_text("internal"))) == []  # a subagent's text stays internal
    assert sent(run(session, updated("completed"))) == []


def test_a_failed_child_ends_idle_with_the_error_and_its_text() -> None:
    session = lanes(ClientState(subagents=True))
    run(session, agent_call())
    run(session, started())
    steps = run(session, updated("failed", FAILED))
    (end,) = [u for step in steps for u in step.updates]
    # the reference's rfdEndState: an internal error (-32603) carrying Claude Code's text; issue
    # 51.2: with the data a legacy client's prompt error has for the same condition (a rate_limit
    # failure: ``errorKind``, README's conditions table and the reference's legacy error)
    error = {"code": -32603, "message": FAILED, "data": {"errorKind": "rate_limit"}}
    assert end["state"] == {"state": "idle", "stopReason": "error", "error": error}
    assert conforms(end)
    # the end goes to the child's own ledger first (child_records.py), never the parent's
    assert [(s.session, s.event) for s in steps if s.event is not None] == [
        (CHILD, ChildEnded(status="failed", error=FAILED))
    ]
    assert steps[-1].updates == [end]
    AcpSubagentUpdate.model_validate(end)


def test_the_end_comes_from_a_notification_when_no_terminal_patch_came() -> None:
    session = lanes(ClientState(subagents=True))
    run(session, started())
    assert sent(run(session, updated("running"))) == []  # not an end
    (end,) = [u for step in run(session, notified("stopped")) for u in step.updates]
    assert end["state"] == {"state": "idle", "stopReason": "cancelled"}


def test_a_name_is_the_title_and_a_background_bash_is_no_child() -> None:
    session = lanes(ClientState(subagents=True))
    run(session, agent_call(name="reader"))
    (announce,) = [u for step in run(session, started()) for u in step.updates]
    assert (announce["title"], announce["description"]) == ("reader", "general-purpose")
    bash = lanes(ClientState(subagents=True))
    message = started(subagent_type=None, task_type="local_bash")
    assert sent(run(bash, message)) == []
    assert sent(run(bash, sub_read())) == [(None, "tool_call")]  # no child announced: flat


def test_a_subagents_message_before_its_announcement_stays_flat() -> None:
    session = lanes(ClientState(subagents=True))
    assert sent(run(session, sub_read())) == [(None, "tool_call")]


@pytest.mark.parametrize(
    ("name", "role", "description", "expected"),
    [
        # the reference adapter 0.101.0's rfdLabels
        ("reader", "general-purpose", "Read it", {"title": "reader", "description": "general-purpose"}),
        (None, "general-purpose", "Read it", {"title": "Read it", "description": "general-purpose"}),
        (None, "general-purpose", "  ", {"title": "general-purpose"}),
        ("", None, None, {}),
        (3, ["x"], "Read it", {"title": "Read it"}),
    ],
)
def test_labels(name: object, role: object, description: object, expected: dict[str, str]) -> None:
    assert labels(name, role, description) == expected


@pytest.mark.parametrize(
    ("status", "error", "expected"),
    [
        ("completed", None, {"state": "idle", "stopReason": "end_turn"}),
        ("killed", None, {"state": "idle", "stopReason": "cancelled"}),
        ("stopped", None, {"state": "idle", "stopReason": "cancelled"}),
        ("failed", None, {"state": "idle", "stopReason": "error"}),
        ("failed", "  ", {"state": "idle", "stopReason": "error"}),
        ("failed", "boom", {"state": "idle", "stopReason": "error", "error": {"code": -32603, "message": "boom"}}),
        ("running", None, None),
        ("paused", None, None),
        (None, None, None),
        (7, None, None),
    ],
)
def test_end_state(status: object, error: object, expected: dict[str, Any] | None) -> None:
    assert end_state(status, error) == expected
    if expected is not None:
        assert conforms({"sessionUpdate": "subagent_update", "sessionId": CHILD, "state": expected})


def test_a_hostile_task_message_ends_nothing_and_announces_nothing() -> None:
    session = lanes(ClientState(subagents=True))
    assert sent(run(session, started(task_id=["x"]))) == []
    assert sent(run(session, started(tool_use_id=""))) == []
    assert sent(run(session, updated("completed"))) == []  # no such child
    lane = session.get(ChildSessions)
    assert lane.child_of(AGENT) is None


# ------------------------------------------------------------------ the publisher: a child's session, a raw frame


class Sink:
    """A connection recording what it sends: SDK models by session, raw notifications as JSON."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        self.sent.append((session_id, update.model_dump(by_alias=True, exclude_none=True)))

    async def send_notification(self, method: str, params: Any = None) -> None:
        assert method == "session/update"
        self.sent.append((params["sessionId"], params["update"]))


def test_the_publisher_sends_a_steps_updates_to_the_child_and_the_subagent_update_raw() -> None:
    sink = Sink()
    publisher = SessionPublisher(sink, SessionLedger("parent", negotiated=True, epoch="e"))
    announce = {"sessionUpdate": "subagent_update", "sessionId": CHILD, "state": {"state": "running"}}
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "It says hello."}}
    bad = {"sessionUpdate": "subagent_update", "sessionId": CHILD, "state": {"stopReason": "end_turn"}}

    async def go() -> None:
        await publisher.emit([announce])
        await publisher.emit([chunk], session_id=CHILD)
        await publisher.emit([bad])  # not ACP's: counted, not sent

    asyncio.run(go())
    assert sink.sent == [("parent", announce), (CHILD, chunk)]
    assert publisher.failed_sends == 1
    assert not conforms(bad)  # the model refuses what the schema refuses


def test_a_child_runs_from_its_announcement_to_its_end() -> None:
    # what a ``session/cancel`` naming a child asks (session.py ``cancel_child``): only a running one stops
    session = lanes(ClientState(subagents=True))
    lane = session.get(ChildSessions)
    assert not lane.running(CHILD)
    run(session, started())
    assert lane.running(CHILD) and lane.child_of(AGENT) == CHILD
    assert not lane.running("someone-else") and not lane.running("parent")
    run(session, notified("killed"))
    assert not lane.running(CHILD) and lane.child_of(AGENT) == CHILD


def test_every_child_still_running_ends_when_its_session_or_runtime_ends() -> None:
    # issue 51.6: a session that closes ends its running children cancelled; a runtime that ends
    # (Claude Code killed) ends them ``{state: idle}`` with no stop reason: the reference adapter
    # 0.101.0's rfdEndState for a task the stream's end orphaned ("the adapter did not see a
    # cancellation or a failure, which the RFD forbids claiming")
    for status, state in (
        ("cancelled", {"state": "idle", "stopReason": "cancelled"}),
        ("unexplained", {"state": "idle"}),
    ):
        session = lanes(ClientState(subagents=True))
        lane = session.get(ChildSessions)
        run(session, started())
        steps = lane.end_all(status)  # type: ignore[arg-type]
        assert [(s.session, s.event) for s in steps if s.event is not None] == [(CHILD, ChildEnded(status=status))]  # type: ignore[arg-type]
        (end,) = [u for step in steps for u in step.updates]
        assert end == {"sessionUpdate": "subagent_update", "sessionId": CHILD, "state": state}
        assert conforms(end)
        assert lane.known(CHILD) == "ended" and lane.end_all(status) == []  # type: ignore[arg-type]
        assert sent(run(session, notified("killed"))) == []  # its task's own end comes too late: one end


def test_what_a_child_is_to_a_request_naming_it() -> None:
    session = lanes(ClientState(subagents=True))
    lane = session.get(ChildSessions)
    assert lane.known(CHILD) is None
    run(session, started())
    assert lane.known(CHILD) == "running" and lane.known("other") is None
    run(session, updated("completed"))
    assert lane.known(CHILD) == "ended"
