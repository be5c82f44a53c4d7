"""The agent's lanes (``lifecycle.agent.lanes``): their order is the rule, and one message's steps
come out in that order. Real ``claude_agent_sdk`` messages, the shapes Claude Code 2.1.332 sends
(the e2e tests drive the same path on the real CLI: tests/e2e/test_compaction.py,
test_background_work.py, test_prompt_suggestions.py)."""

from __future__ import annotations

from typing import Any

from claude_agent_sdk import AssistantMessage, ResultMessage, SystemMessage, TextBlock
from sdk_messages import result_message

from lifecycle.agent.background import OwnTurns
from lifecycle.agent.compaction import ContextCompaction
from lifecycle.agent.following import SessionState
from lifecycle.agent.hold import BackgroundHold
from lifecycle.agent.lanes import LANES, LaneParts, Lanes
from lifecycle.agent.mcp import McpServers
from lifecycle.agent.messages import PromptSuggestion, Step, read
from lifecycle.agent.steering import Steering
from lifecycle.agent.stream import StreamRenderer
from lifecycle.agent.subagents import ChildSessions
from lifecycle.agent.suggestions import PromptSuggestions
from lifecycle.agent.translate import Translation
from lifecycle.events import Assistant, Result
from lifecycle.negotiation import ClientState

TURN = "11111111-1111-1111-1111-111111111111"
AIR_CLIENT = ClientState(negotiated=True, air=True, compaction=True)


def lanes(client: ClientState = AIR_CLIENT) -> Lanes:
    return Lanes(LaneParts(StreamRenderer("/project"), McpServers(), client))


def run(session: Lanes, message: object, *, turn: str | None = TURN, quiet: bool = False) -> tuple[list[Step], bool]:
    return session.run(read(message), turn=turn, quiet=quiet, prompt_open=turn is not None)


def compacting(uid: str) -> SystemMessage:
    return SystemMessage(subtype="status", data={"subtype": "status", "status": "compacting", "uuid": uid})


def answer(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextBlock(text=text)], model="claude-opus-5-5")


def result() -> ResultMessage:
    return result_message(usage={"input_tokens": 5, "output_tokens": 3})


def updates(steps: list[Step]) -> list[str]:
    return [u["sessionUpdate"] for step in steps for u in step.updates]


def test_the_order_is_own_turns_steering_state_compaction_hold_children_translation_suggestions() -> None:
    # Steering reads ``own`` (an own result is never held) and must set ``held`` before the
    # translation lane judges the result; the session state follows whatever the turn; the hold
    # reads ``own`` and ``released`` and sets ``hold`` before translation; the child-sessions lane
    # sets ``child`` before the translation lane renders on it.
    order = (
        OwnTurns, Steering, SessionState, ContextCompaction, BackgroundHold, ChildSessions, Translation,
        PromptSuggestions,
    )  # fmt: skip
    assert order == LANES
    built = lanes()
    assert [type(lane) for lane in built.order] == list(LANES)
    assert built.get(ContextCompaction).updates is True  # built from what the client declared
    assert built.get(PromptSuggestions).enabled is True
    assert lanes(ClientState()).get(ContextCompaction).updates is False


def test_a_result_closes_the_open_compaction_before_its_own_step_and_opens_the_prediction_window() -> None:
    session = lanes()
    steps, ends = run(session, compacting("c1"))
    assert updates(steps) == ["compaction_update"] and not ends
    steps, ends = run(session, result())
    assert ends
    # the compaction's end first (its own step, no event), then the result's usage and event
    assert steps[0] == Step([{"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "cancelled"}])
    assert isinstance(steps[-1].event, Result)
    steps, ends = run(session, PromptSuggestion("run the tests"), turn=None)
    assert steps == [
        Step([{"sessionUpdate": "session_info_update",
               "_meta": {"promptSuggestions": {"suggestions": [{"text": "run the tests"}]}}}])
    ]  # fmt: skip
    assert not ends


def test_an_own_turns_result_ends_nothing_of_the_prompts_but_closes_a_compaction() -> None:
    session = lanes(ClientState())
    run(session, SystemMessage(subtype="init", data={"capabilities": ["request_marker_lists_v1"]}), turn=None)
    steps, _ = run(session, answer("The job finished."), turn=None)  # between prompts: Claude Code's own
    assert isinstance(steps[-1].event, Assistant)
    run(session, compacting("c2"), turn=None)
    own = result_message(usage={"input_tokens": 1, "output_tokens": 1}, origin={"kind": "task-notification"})
    steps, ends = run(session, own, turn=None)
    assert not ends  # an own result ends no prompt's turn
    assert steps[0].updates[0]["toolCallId"] == "c2" and steps[0].updates[0]["status"] == "failed"
    assert all(not isinstance(step.event, Result) for step in steps)  # no prompt's result judged


def test_a_cancelled_turn_shows_nothing_and_its_turn_events_are_not_judged() -> None:
    session = lanes()
    steps, ends = run(session, answer("late words of a cancelled turn"), quiet=True)
    assert steps == [] and not ends
    steps, ends = run(session, result(), quiet=True)
    assert ends and steps == []  # the cancelled turn's result still ends it, shows nothing


def test_each_lane_has_the_one_signature() -> None:
    for cls in LANES:
        built: Any = cls.build(LaneParts(StreamRenderer("/p"), McpServers(), ClientState()))
        assert callable(built.run)


def test_the_design_diagram_is_the_tuple() -> None:
    """docs/design.md's diagram of the agent's path numbers the lanes; it must be LANES, in order."""
    import re
    from pathlib import Path

    design = (Path(__file__).resolve().parents[1] / "docs" / "design.md").read_text()
    numbered = re.findall(r"^\s*│\s+(\d)\. (\w+)\s", design, re.M)
    assert numbered == [(str(i), cls.__name__) for i, cls in enumerate(LANES, 1)]  # type: ignore[attr-defined]
