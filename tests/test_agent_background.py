"""lifecycle.agent.background: which of Claude Code's messages belong to a turn no prompt started,
for the cases the live tests (tests/e2e/test_background_work.py) do not force: a CLI without
request markers (fail open: everything is the prompt's), a prompt Claude Code folded into its own
turn (the reference adapter 0.101.0's ``answersPendingPrompt``: that turn is the prompt's), and
what an own turn's events become while a prompt is open. The message shapes are Claude Code
2.1.332's, as the e2e probe recorded them."""

from __future__ import annotations

from typing import Any

from claude_agent_sdk import AssistantMessage, ResultMessage, SystemMessage, TextBlock
from sdk_messages import result_message

from lifecycle.agent.background import OwnTurns
from lifecycle.agent.mcp import McpServers
from lifecycle.agent.messages import read
from lifecycle.agent.stream import StreamRenderer
from lifecycle.agent.translate import own_steps
from lifecycle.events import Assistant

TURN = "11111111-1111-1111-1111-111111111111"


def init(*capabilities: str) -> SystemMessage:
    return SystemMessage(subtype="init", data={"subtype": "init", "capabilities": list(capabilities)})


def requesting(*uuids: str) -> SystemMessage:
    data: dict[str, Any] = {"subtype": "status", "status": "requesting"}
    if uuids:
        data["user_message_uuids"] = list(uuids)
    return SystemMessage(subtype="status", data=data)


def answer(text: str, model: str = "claude-opus-5-5") -> AssistantMessage:
    return AssistantMessage(content=[TextBlock(text=text)], model=model)


def result(origin: str | None = None, *uuids: str) -> ResultMessage:
    return result_message(
        usage={"input_tokens": 5, "output_tokens": 3},
        origin={"kind": origin} if origin else None,  # type: ignore[typeddict-item]
        user_message_uuids=list(uuids) or None,
    )


def test_work_before_claude_code_takes_the_prompt_is_its_own_and_the_prompts_after() -> None:
    own = OwnTurns()
    own.owns(read(init("request_marker_lists_v1")), None)
    assert own.owns(read(answer("The job finished.")), None)  # between prompts
    assert own.running
    assert own.owns(read(answer("still its own")), TURN)  # a prompt sent, not taken yet
    assert own.owns(read(result("task-notification")), TURN)
    assert not own.running
    assert not own.owns(read(requesting(TURN)), TURN)  # Claude Code took the prompt
    assert not own.owns(read(answer("The prompt's answer.")), TURN)  # names no prompt, but the prompt's turn runs
    assert not own.owns(read(result(None, TURN)), TURN)
    assert not own.owns(read(answer("late, no own request")), TURN)  # the prompt's (fail open)
    own.owns(read(requesting()), TURN)  # its result came, and Claude Code asks the model for no prompt
    assert own.owns(read(answer("after the prompt's result")), TURN)


def test_a_prompts_message_before_any_request_is_the_prompts_unless_an_own_turn_runs() -> None:
    own = OwnTurns()
    own.owns(read(init("request_marker_lists_v1")), None)
    # Claude Code answers the prompt without asking the model (a login request): no own turn runs.
    assert not own.owns(read(answer("Not logged in · Please run /login", model="<synthetic>")), TURN)
    assert not own.owns(read(result(None)), TURN)
    # A request for no prompt: Claude Code's own turn, even while a prompt waits to be taken.
    own.owns(read(requesting()), TURN)
    assert own.owns(read(answer("The job finished.")), TURN)


def test_a_cli_without_request_markers_has_no_own_turns_but_results_with_an_own_origin() -> None:
    own = OwnTurns()
    own.owns(read(init("interrupt_receipt_v1")), None)
    assert not own.owns(read(answer("The job finished.")), None)
    assert not own.owns(read(answer("anything")), TURN)
    assert own.owns(read(result("task-notification")), TURN)  # the origin alone tells (the reference)
    assert not own.owns(read(result(None)), TURN)  # no origin: the prompt's (fail open)


def test_a_prompt_folded_into_claude_codes_turn_owns_that_turn() -> None:
    own = OwnTurns()
    own.owns(read(init("request_marker_lists_v1")), None)
    own.owns(read(requesting()), TURN)
    assert own.owns(read(answer("reacting to the notification")), TURN)
    assert not own.owns(read(requesting(TURN)), TURN)
    assert not own.owns(read(result("task-notification", TURN)), TURN)


def test_an_own_turns_events_are_not_the_open_prompts_and_its_unstreamed_text_is_shown() -> None:
    renderer, mcp = StreamRenderer("/project"), McpServers()
    steps = own_steps(read(answer("The job finished.")), renderer, mcp, prompt_open=True)
    assert [s.event for s in steps] == [None]
    assert [u for s in steps for u in s.updates] == [
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "The job finished."}}
    ]
    # No prompt open: the ledger judges it (as the session's).
    (step,) = own_steps(read(answer("The job finished.")), renderer, mcp, prompt_open=False)
    assert isinstance(step.event, Assistant) and step.event.text == "The job finished."
    # Its result ends nothing of a prompt's: no event, no usage.
    assert own_steps(read(result("task-notification")), renderer, mcp, prompt_open=True) == []
    assert not any(renderer.turn_usage.values())


def test_an_own_results_usage_is_shown_but_counted_in_no_prompt() -> None:
    renderer, mcp = StreamRenderer("/project"), McpServers()
    primed = AssistantMessage(content=[TextBlock(text="hi")], model="claude-opus-5-5", usage={"input_tokens": 30})
    own_steps(read(primed), renderer, mcp, prompt_open=False)
    end = result("task-notification")
    end.model_usage = {"claude-opus-5-5": {"contextWindow": 1000}}  # type: ignore[typeddict-item]
    (step,) = own_steps(read(end), renderer, mcp, prompt_open=True)
    assert step.event is None
    # the answer's model and the result's origin, under the reference's keys (acp-agent.js: attachUsageModel,
    # ``_claude/origin`` on an autonomous result's usage_update)
    meta = {"_claude/model": "claude-opus-5-5", "_claude/origin": {"kind": "task-notification"}}
    assert step.updates == [{"sessionUpdate": "usage_update", "used": 30, "size": 1000, "_meta": meta}]
    assert not any(renderer.turn_usage.values())
