"""Steering (``lifecycle.agent.steering``): the request's checks, and the lane that keeps a steered
turn open until a result answers the steer. The messages are the SDK's own classes, in the shapes
Claude Code 2.1.337 sent them when a steer (``priority: "now"``) interrupted a turn (issue 50.B,
seen on the wire): the interrupted cycle's ``error_during_execution`` result with
``terminal_reason: aborted_streaming`` naming the prompt, then the steered cycle's result naming
the steer. The end-to-end path on the real CLI: tests/e2e/test_steering.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import structlog.testing
from acp import RequestError
from acp.schema import PromptResponse
from claude_agent_sdk import SystemMessage
from hypothesis import given, settings
from hypothesis import strategies as st
from sdk_messages import result_message

from lifecycle.agent.lanes import LaneParts, Lanes
from lifecycle.agent.mcp import McpServers
from lifecycle.agent.messages import Step, read
from lifecycle.agent.steering import MAX_STEER_BYTES, Steering, SteerInvalid, parse_steer, steer_size
from lifecycle.agent.steering import steer as answer_steer
from lifecycle.agent.stream import StreamRenderer
from lifecycle.events import Result
from lifecycle.negotiation import ClientState

TURN = "11111111-1111-1111-1111-111111111111"
STEER = "22222222-2222-2222-2222-222222222222"
STEER2 = "33333333-3333-3333-3333-333333333333"


def aborted(*names: str) -> Any:
    """The interrupted cycle's result (Claude Code 2.1.337, seen on the wire)."""
    return result_message(
        subtype="error_during_execution", is_error=True, terminal_reason="aborted_streaming",
        user_message_uuids=list(names), usage={"input_tokens": 0, "output_tokens": 0},
    )  # fmt: skip


def answered(*names: str) -> Any:
    return result_message(
        result="steered answer", terminal_reason="completed", stop_reason="end_turn",
        user_message_uuids=list(names), usage={"input_tokens": 12, "output_tokens": 9},
    )  # fmt: skip


IDLE = SystemMessage(subtype="session_state_changed", data={"type": "system", "state": "idle"})


def lanes() -> Lanes:
    return Lanes(LaneParts(StreamRenderer("/project"), McpServers(), ClientState()))


def steered(*steers: str) -> tuple[Lanes, Steering]:
    """A session's lanes with a turn open and ``steers`` injected into it."""
    session = lanes()
    steering = session.get(Steering)
    steering.open()
    for steer in steers:
        steering.inject(steer)
    return session, steering


def run(session: Lanes, message: object, *, quiet: bool = False) -> tuple[list[Step], bool]:
    return session.run(read(message), turn=TURN, quiet=quiet, prompt_open=True)


def events(steps: list[Step]) -> list[object]:
    return [s.event for s in steps if s.event is not None]


def test_a_steered_turn_ends_with_the_result_that_answers_the_steer() -> None:
    session, steering = steered(STEER)
    assert steering.running()
    steps, ends = run(session, aborted(TURN))
    assert (steps, ends) == ([], False)  # held: not judged, the turn goes on
    assert steering.running() and steering.pending == {STEER}
    steps, ends = run(session, answered(STEER))
    assert ends
    (result,) = events(steps)
    assert isinstance(result, Result) and result.subtype == "success" and not result.is_error
    assert not steering.running() and steering.pending == set()


def test_a_result_that_names_the_steer_with_the_prompt_ends_the_turn_at_once() -> None:
    # A steer Claude Code folded into the running cycle: one result names both.
    session, _steering = steered(STEER)
    steps, ends = run(session, answered(TURN, STEER))
    assert ends and isinstance(events(steps)[0], Result)


def test_two_steers_keep_the_turn_open_until_the_last_is_answered() -> None:
    session, _ = steered(STEER, STEER2)
    assert run(session, aborted(TURN)) == ([], False)
    assert run(session, aborted(STEER)) == ([], False)  # the second steer interrupted the first's cycle
    steps, ends = run(session, answered(STEER2))
    assert ends and isinstance(events(steps)[0], Result)


def test_idle_without_an_answer_releases_the_held_result() -> None:
    # Claude Code dropped the steer (an interrupt cancels what is queued) and went idle: the turn
    # ends with the result it held, judged then (an aborted cycle: a failure the ledger judges).
    session, steering = steered(STEER)
    assert run(session, aborted(TURN)) == ([], False)
    steps, ends = run(session, IDLE)
    assert ends
    (result,) = events(steps)
    assert isinstance(result, Result) and result.is_error and result.subtype == "error_during_execution"
    assert steering.pending == set() and not steering.running()


def test_idle_with_nothing_held_ends_nothing() -> None:
    session = lanes()
    assert run(session, IDLE) == ([], False)


def test_a_cancelled_turn_still_holds_and_releases_but_judges_nothing() -> None:
    session, _steering = steered(STEER)
    assert run(session, aborted(TURN), quiet=True) == ([], False)
    steps, ends = run(session, IDLE, quiet=True)
    assert ends and events(steps) == []  # the runtime is idle again; a cancelled turn judges nothing


def test_without_a_steer_a_result_ends_the_turn_as_before() -> None:
    session, _ = steered()
    steps, ends = run(session, aborted(TURN))
    assert ends and isinstance(events(steps)[0], Result)


def test_reset_forgets_everything() -> None:
    session, steering = steered(STEER)
    run(session, aborted(TURN))
    steering.reset()
    assert steering.pending == set() and not steering.running()
    assert run(session, IDLE) == ([], False)


# ------------------------------------------------------------------ the request


def test_parse_steer_takes_the_references_shape() -> None:
    text = [{"type": "text", "text": "also"}]
    request = parse_steer({"sessionId": "s", "prompt": text})
    assert (request.session_id, request.prompt, request.prompt_required) == ("s", text, False)
    opted = parse_steer({"sessionId": "s", "prompt": text, "_meta": {"steering": {"idleBehavior": "promptRequired"}}})
    assert opted.prompt_required


@pytest.mark.parametrize(
    ("params", "message"),
    [
        # the reference's words (dist/acp-agent.js, parseSteerRequest)
        (None, "steer params must be an object"),
        ([], "steer params must be an object"),
        ({"prompt": [{"type": "text", "text": "x"}]}, "steer params require a non-empty sessionId"),
        ({"sessionId": "", "prompt": [{"type": "text", "text": "x"}]}, "steer params require a non-empty sessionId"),
        ({"sessionId": 7, "prompt": [{"type": "text", "text": "x"}]}, "steer params require a non-empty sessionId"),
        ({"sessionId": "s"}, "steer params require a non-empty prompt array"),
        ({"sessionId": "s", "prompt": []}, "steer params require a non-empty prompt array"),
        ({"sessionId": "s", "prompt": "text"}, "steer params require a non-empty prompt array"),
        (
            {"sessionId": "s", "prompt": [{"type": "text", "text": "x"}], "_meta": {"steering": {"idleBehavior": "x"}}},
            "unsupported steering idleBehavior",
        ),
    ],
)
def test_bad_steers_are_refused_with_the_reason(params: object, message: str) -> None:
    with pytest.raises(SteerInvalid) as refused:
        parse_steer(params)
    assert str(refused.value) == message


def test_the_size_bound_counts_what_claude_code_receives() -> None:
    assert MAX_STEER_BYTES == 1024 * 1024  # the bound docs/acp-agent.md states
    assert steer_size("ab") == 4  # '"ab"'
    assert steer_size([{"type": "text", "text": "é"}]) == len('[{"type": "text", "text": "é"}]'.encode())


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
_steers = st.fixed_dictionaries(
    {},
    optional={
        "sessionId": _json | st.text(max_size=8),
        "prompt": _json | st.lists(_json, max_size=3),
        "_meta": _json | st.fixed_dictionaries({"steering": _json | st.fixed_dictionaries({"idleBehavior": _json})}),
    },
)


@settings(max_examples=150, derandomize=True, database=None)
@given(params=_json | _steers)
def test_any_params_are_a_request_or_a_clear_refusal(params: object) -> None:
    """docs/security.md, "What each parser may do with garbage": a ``SteerRequest`` of the checked
    shape, or ``SteerInvalid``; nothing else."""
    try:
        request = parse_steer(params)
    except SteerInvalid as refused:
        assert str(refused).startswith(("steer params", "unsupported steering"))
        return
    assert isinstance(request.session_id, str) and request.session_id
    assert isinstance(request.prompt, list) and request.prompt


def test_a_held_result_opens_no_prediction_window() -> None:
    # A prediction Claude Code would make after the interrupted cycle is not the turn's: the turn goes on.
    from lifecycle.agent.messages import PromptSuggestion
    from lifecycle.agent.suggestions import PromptSuggestions

    session = Lanes(LaneParts(StreamRenderer("/project"), McpServers(), ClientState(air=True)))
    steering = session.get(Steering)
    steering.open()
    steering.inject(STEER)
    assert session.get(PromptSuggestions).enabled
    run(session, aborted(TURN))
    assert run(session, PromptSuggestion("run the tests")) == ([], False)
    run(session, answered(STEER))
    steps, _ = run(session, PromptSuggestion("run the tests"))
    assert [u["sessionUpdate"] for s in steps for u in s.updates] == ["session_info_update"]


class _Idle:
    """A session with no running turn whose detached prompt ends as ``outcome``."""

    id = "s1"

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome

    async def steer(self, content: Any) -> str | None:
        return None

    async def run_prompt(self, content: Any) -> Any:
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome


@pytest.mark.parametrize(
    ("outcome", "failed"),
    [
        (RequestError(-32000, "Authentication required"), {"error_type": "RequestError", "error_code": -32000}),
        (PromptResponse(stop_reason="end_turn", field_meta={"sessionFailure": {"id": "t1"}}), {"record": True}),
        (PromptResponse(stop_reason="end_turn"), None),
    ],
)
def test_a_started_new_turns_failure_is_an_error_in_the_log(outcome: Any, failed: dict[str, Any] | None) -> None:
    """Issue 50 gap 3: the reference's ``startedNewTurn`` prompt is detached; its rejection is
    ``logger.error("steered new turn failed")`` (``dist/acp-agent.js`` ``steer``), nothing else."""

    async def go() -> list[dict[str, Any]]:
        detached: set[asyncio.Future[Any]] = set()
        with structlog.testing.capture_logs() as logs:
            answer = await answer_steer(
                {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}, lambda _: _Idle(outcome), detached
            )
            assert answer == {"outcome": "startedNewTurn"}
            while detached:
                await asyncio.sleep(0)
        return logs

    logs = asyncio.run(go())
    errors = [e for e in logs if e["event"] == "steer.new_turn_failed"]
    if failed is None:
        assert errors == []
    else:
        (error,) = errors
        assert error["log_level"] == "error" and {k: error[k] for k in failed} == failed
        assert "Authentication required" not in str(error)  # never the text


def test_a_steer_dropped_by_a_cancel_frees_the_result_held_for_it() -> None:
    """The cancelled turn's result came while the steer was queued (held for it); Claude Code then
    dropped the steer (``cancel_async_message``): nothing will answer it, the turn is over."""
    session, steering = steered(STEER)
    assert run(session, aborted(TURN), quiet=True) == ([], False)  # held for the steer
    assert steering.dropped(STEER) is True
    assert not steering.running() and steering.pending == frozenset()
    assert steering.dropped(STEER) is False  # once
    assert run(session, IDLE)[1] is False  # nothing left to release
    # a drop with nothing held, or with another steer pending, frees nothing
    session, steering = steered(STEER, STEER2)
    assert steering.dropped(STEER) is False and steering.pending == frozenset({STEER2})
