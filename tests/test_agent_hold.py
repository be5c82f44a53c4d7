"""The hold lane (``lifecycle.agent.hold``) alone, on the Claude SDK's own message classes in the
shapes Claude Code 2.1.337 sends them (``task_started`` of a background subagent, its
``task_updated`` and ``task_notification``, the follow-up's result with ``origin``
``task-notification``; tests/e2e/test_background_work.py and test_acpx.py drive the same path on
the real CLI). Expected behaviour: the reference adapter 0.101.0's ``Turn.deferredSettle``
(``dist/acp-agent.js``: ``turnAwaitingSubagents``, ``settleOrDefer``, ``settleDeferredIfDrained``)."""

from __future__ import annotations

from typing import Any

from claude_agent_sdk.types import SystemMessage, TaskNotificationMessage, TaskStartedMessage, TaskUpdatedMessage
from sdk_messages import result_message

from lifecycle.agent.hold import MAX_LIVE, BackgroundHold
from lifecycle.agent.lanes import LaneParts, Lanes
from lifecycle.agent.mcp import McpServers
from lifecycle.agent.messages import Step, read
from lifecycle.agent.stream import StreamRenderer
from lifecycle.events import Result
from lifecycle.negotiation import ClientState

TURN = "11111111-1111-1111-1111-111111111111"


def lanes(client: ClientState | None = None) -> Lanes:
    return Lanes(LaneParts(StreamRenderer("/project"), McpServers(), client or ClientState()))


def run(session: Lanes, message: object, *, turn: str | None = TURN, quiet: bool = False) -> list[Step]:
    return session.run(read(message), turn=turn, quiet=quiet, prompt_open=turn is not None)[0]


def started(task: str, subagent_type: str | None = "general-purpose", *, background: bool = True) -> TaskStartedMessage:
    data: dict[str, Any] = {"type": "system", "subtype": "task_started", "task_id": task, "tool_use_id": "toolu_a"}
    data["is_backgrounded"] = background  # Claude Code 2.1.337 sends it on every task_started
    if subagent_type is not None:
        data["subagent_type"] = subagent_type
    return TaskStartedMessage("task_started", data, task, "Read the note", "u", "s")


def notified(task: str) -> TaskNotificationMessage:
    data = {"type": "system", "subtype": "task_notification", "task_id": task, "status": "completed"}
    return TaskNotificationMessage("task_notification", data, task, "completed", "/out", "hello", "u", "s")


def updated(task: str, status: str) -> TaskUpdatedMessage:
    data = {"type": "system", "subtype": "task_updated", "task_id": task, "patch": {"status": status}}
    return TaskUpdatedMessage("task_updated", data, task, {"status": status})


def level(*tasks: str) -> SystemMessage:
    """Claude Code's ``background_tasks_changed``: every live background task (CLI 2.1.337)."""
    listed = [{"task_id": t, "status": "running"} for t in tasks]
    data = {"type": "system", "subtype": "background_tasks_changed", "tasks": listed}
    return SystemMessage("background_tasks_changed", data)


IDLE = SystemMessage("session_state_changed", {"type": "system", "subtype": "session_state_changed", "state": "idle"})


def prompt_result() -> Any:
    return result_message(user_message_uuids=[TURN])


def follow_up(num_turns: int = 1) -> Any:
    return result_message(origin={"kind": "task-notification"}, num_turns=num_turns)


def events(steps: list[Step]) -> list[type]:
    return [type(s.event) for s in steps if s.event is not None]


def test_the_prompts_result_waits_for_its_background_subagent_and_its_report() -> None:
    session = lanes()
    run(session, started("a1"))
    held = run(session, prompt_result())
    assert events(held) == []  # the turn stays open: no result for the ledger
    assert session.get(BackgroundHold).held is not None
    run(session, updated("a1", "completed"))
    run(session, notified("a1"))
    released = run(session, follow_up())
    assert events(released) == [Result]
    assert released[-1].event is not None and released[-1].updates == []  # after the follow-up's own steps
    assert session.get(BackgroundHold).held is None


def test_a_placeholder_follow_up_does_not_end_the_hold() -> None:
    """Claude Code 2.1.274+ answers batched notifications with placeholders (``num_turns: 0``)."""
    session = lanes()
    run(session, started("a1"))
    run(session, prompt_result())
    run(session, notified("a1"))
    assert events(run(session, follow_up(num_turns=0))) == []
    assert events(run(session, follow_up())) == [Result]


def test_a_failed_follow_up_ends_the_hold() -> None:
    """A follow-up whose request failed (an error result, whatever its ``num_turns``) brings no
    report: the prompt is answered then, not held until the user cancels (a project decision)."""
    session = lanes()
    run(session, started("a1"))
    run(session, prompt_result())
    run(session, notified("a1"))
    failed = result_message(origin={"kind": "task-notification"}, num_turns=0, is_error=True)
    assert events(run(session, failed)) == [Result]


def test_parallel_subagents_hold_until_the_last_one_answered() -> None:
    session = lanes()
    run(session, started("a1"))
    run(session, started("a2"))
    run(session, prompt_result())
    run(session, notified("a1"))
    assert events(run(session, follow_up())) == []  # a2 still works
    run(session, updated("a2", "killed"))  # a terminal patch alone ends it too
    assert events(run(session, follow_up())) == [Result]


def test_a_background_bash_never_holds_the_prompt() -> None:
    """The reference's "shells never defer": a task without a ``subagent_type``."""
    session = lanes()
    run(session, started("b1", subagent_type=None))
    assert events(run(session, prompt_result())) == [Result]


def test_an_earlier_prompts_subagent_does_not_hold_a_later_prompt() -> None:
    session = lanes()
    run(session, started("a1"))
    run(session, prompt_result())
    assert session.get(BackgroundHold).take() is not None  # the session handed the first prompt off
    later = "22222222-2222-2222-2222-222222222222"
    assert events(run(session, result_message(user_message_uuids=[later]), turn=later)) == [Result]


def test_a_cancelled_turn_and_a_subagent_started_in_one_are_never_held() -> None:
    session = lanes()
    run(session, started("a1"), quiet=True)
    assert events(run(session, prompt_result(), quiet=True)) == []  # a cancelled turn's result: dropped
    assert session.get(BackgroundHold).held is None


def test_a_client_with_air_background_subagents_gets_no_hold() -> None:
    """An AIR client that declares ``backgroundSubagents`` keeps listening after the answer (the
    reference's ``endsTurnsWithLiveSubagents``)."""
    caps = {"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure", "backgroundSubagents"]}}}}
    client = ClientState.parse(caps)
    assert client.background_subagents and client.negotiated
    session = lanes(client)
    run(session, started("a1"))
    assert events(run(session, prompt_result())) == [Result]
    old = {"_meta": {"jetbrains": {"air": {"version": 0, "capabilities": ["backgroundSubagents"]}}}}
    assert not ClientState.parse(old).background_subagents  # an unsupported version declares nothing


def test_the_live_tasks_are_bounded() -> None:
    session = lanes()
    for i in range(MAX_LIVE + 10):
        run(session, started(f"t{i}", subagent_type=None), turn=None)
    assert len(session.get(BackgroundHold).live) == MAX_LIVE


def test_a_background_subagent_that_ended_before_the_result_holds_it_until_its_report() -> None:
    """Issue 50 gap 1: Claude Code reports the subagent in a turn of its own after the prompt's
    result (CLI 2.1.337, tests/e2e/test_background_work.py); the reference answers at the result."""
    session = lanes()
    run(session, started("a1"))
    run(session, updated("a1", "completed"))
    run(session, notified("a1"))
    assert events(run(session, prompt_result())) == []
    assert events(run(session, follow_up())) == [Result]


def test_idle_ends_the_hold_once_no_subagent_of_the_prompt_is_live() -> None:
    """The reference's idle fallback (``settleDeferredIfDrained`` at ``session_state_changed``
    idle): a report the model got inside the prompt's turn brings no turn of Claude Code's own."""
    session = lanes()
    run(session, started("a1"))
    run(session, notified("a1"))
    assert events(run(session, prompt_result())) == []
    assert events(run(session, IDLE)) == [Result]
    assert events(run(session, IDLE)) == []  # given back once
    # an idle while a subagent of the prompt is live ends nothing (Claude Code withholds it then)
    later = "22222222-2222-2222-2222-222222222222"
    run(session, started("a2"), turn=later)
    assert events(run(session, result_message(user_message_uuids=[later]), turn=later)) == []
    assert events(run(session, IDLE, turn=later)) == []
    run(session, notified("a2"), turn=later)
    assert events(run(session, IDLE, turn=later)) == [Result]


def test_a_foreground_subagent_that_ended_holds_nothing() -> None:
    """A subagent that did not run in the background ended before the Agent call's result: its
    answer is that result, no report is owed (the reference: "a sync subagent is pruned")."""
    session = lanes()
    run(session, started("a1", background=False))
    run(session, updated("a1", "completed"))
    assert events(run(session, prompt_result())) == [Result]


def test_the_level_signal_ends_a_subagent_whose_end_was_lost_and_a_later_level_revives_it() -> None:
    """The reference's ``background_tasks_changed`` handling (``endedPerLevel``): a task the level
    does not list is over for the hold; one a later level lists is live again."""
    session = lanes()
    run(session, started("a1"))
    run(session, started("a2"))
    run(session, level("a1"))  # a2's end never came
    hold = session.get(BackgroundHold)
    assert set(hold.live) == {"a1"}
    run(session, level("a1", "a2"))  # a racing level: a2 is live after all
    assert set(hold.live) == {"a1", "a2"}
    assert events(run(session, prompt_result())) == []
    run(session, level())  # neither end came: the level says both are gone
    assert events(run(session, IDLE)) == [Result]
    run(session, level("x"))  # malformed or unknown entries change nothing
    run(session, SystemMessage("background_tasks_changed", {"type": "system", "tasks": "nonsense"}))
    assert hold.live == {} and hold.held is None
