"""The prompt turn's half of the ledger (``lifecycle.delivery_surfaces``): its effect table is total
over what ``SessionFlow`` can produce, the ledger performs exactly the effects the machine names
at every point, its flow states are an enum of the machine's leaves, and withdrawn questions are
an output (``SessionLedger.take_withdrawn``) drained like ``next_outbound``.

The rules (lifecycle/session_flow.py and docs/design.md): leaving ``in_turn`` (cancel, runtime
loss, any settlement) withdraws every open question; a question asked outside a running turn is
refused, so it is never open and never withdrawn; an answered question is closed, not withdrawn.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from session_harness import Session

from lifecycle import (
    ApiRetry,
    Assistant,
    Cancelled,
    InternalError,
    LocalProtocolError,
    MessagesReplaced,
    PermissionAnswered,
    PermissionAsked,
    PromptStarted,
    QueryEnded,
    QueryError,
    Result,
    WorkerShuttingDown,
)
from lifecycle.answers import MachineAnswers
from lifecycle.delivery_surfaces import EFFECT_HANDLERS, IN_TURN, FlowState, TurnFlow
from lifecycle.events import Event
from lifecycle.session_flow import EFFECTS, FLOW_EVENTS, FLOW_STATES, SessionFlow

RATE = "API Error: Request rejected (429) · Number of requests has exceeded your rate limit"
OK = Result(subtype="success", is_error=False, result="Hello", stop_reason="end_turn")

# ---------------------------------------------------------------- the effect table


def _produced() -> dict[str, set[tuple[str, str]]]:
    """Every effect a real SessionFlow produces, with the (leaf state, event) points that produce it."""
    answers = MachineAnswers()
    produced: dict[str, set[tuple[str, str]]] = {}
    for state, event in itertools.product(FLOW_STATES, FLOW_EVENTS):
        answer = answers.turn_or_none(state, event)
        for effect in answer[1] if answer else ():
            produced.setdefault(effect, set()).add((state, event))
    return produced


def test_every_effect_the_machine_produces_has_exactly_one_handler_and_every_handler_is_reachable() -> None:
    produced = _produced()
    assert set(EFFECT_HANDLERS) == set(produced)  # total, and no handler the machine never reaches
    assert set(EFFECTS) == set(produced)  # the derived list is what the machine produces
    assert len(EFFECTS) == len(set(EFFECTS)) == 20
    # One method per effect, named after it, and no other effect method in the class.
    assert {h.__name__ for h in EFFECT_HANDLERS.values()} == {f"_do_{e}" for e in EFFECT_HANDLERS}
    assert {n for n in vars(TurnFlow) if n.startswith("_do_")} == {f"_do_{e}" for e in EFFECT_HANDLERS}
    for effect, handler in EFFECT_HANDLERS.items():
        assert vars(TurnFlow)[f"_do_{effect}"] is handler


def test_every_effect_is_an_action_of_the_machine() -> None:
    for effect in EFFECTS:
        assert callable(getattr(SessionFlow, effect)), effect


def test_the_flow_states_are_the_machine_s_leaves_as_an_enum_with_their_plain_ids() -> None:
    assert [s.value for s in FlowState] == ["idle", "running", "answered", "failing", "cancelled"]
    assert tuple(FlowState) == FLOW_STATES
    assert {s.id for s in SessionFlow.in_turn.states} == {"running", "answered", "failing"} == set(IN_TURN)
    assert repr(FlowState.RUNNING) == "'running'" and f"{FlowState.CANCELLED}" == "cancelled"
    ledger = Session().ledger
    assert ledger.flow is FlowState.IDLE
    ledger.process(PromptStarted(turn_id="t1"), lambda _: None)
    assert ledger.flow is FlowState.RUNNING


# Drives a fresh capable ledger to each leaf state (from the states' meaning in session_flow.py).
_TO_STATE: dict[str, tuple[Event, ...]] = {
    "idle": (),
    "running": (PromptStarted(turn_id="t1"),),
    "answered": (PromptStarted(turn_id="t1"), Assistant(text="Hi", model="claude-opus-4-5")),
    "failing": (PromptStarted(turn_id="t1"), Assistant(text=RATE, model="<synthetic>", error="rate_limit", uuid="f1")),
    "cancelled": (PromptStarted(turn_id="t1"), Cancelled()),
}
# An input for each flow event (the classification docs/design.md describes).
_INPUT: dict[str, tuple[Event, ...]] = {
    "prompt": (PromptStarted(turn_id="t2"),),
    "api_retry": (ApiRetry(attempt=1, max_retries=10, error_status=529, error="overloaded"),),
    "real_answer": (Assistant(text="Hello", model="claude-opus-4-5"),),
    "claude_failure": (Assistant(text=RATE, model="<synthetic>", error="rate_limit"),),
    # the provider replaced the message that carried the held failure (the failing state's "f1")
    "failure_replaced": (MessagesReplaced(uuids=("x9", "f1")),),
    "result_success": (OK,),
    "result_stop": (Result(subtype="success", is_error=False, stop_reason="max_tokens"),),
    "result_error": (Result(subtype="success", is_error=True, result=RATE, api_error_status=429),),
    "cancel": (Cancelled(),),
    "transport_lost": (QueryError(message="boom"),),
    "stream_ended": (QueryEnded(),),
    "internal_error": (InternalError(),),
    "permission_asked": (PermissionAsked(tool_use_id="q1"),),
    "permission_answered": (PermissionAnswered(tool_use_id="q1"),),
}


@pytest.mark.parametrize(("state", "event"), sorted(itertools.product(FLOW_STATES, FLOW_EVENTS)))
def test_the_ledger_performs_exactly_the_effects_the_machine_names(
    state: str, event: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = MachineAnswers().turn_or_none(state, event)
    s = Session()
    s.feed(*_TO_STATE[state])
    assert s.ledger.flow == state
    performed: list[str] = []

    def spy(effect: str, handler: Callable[..., None]) -> Callable[..., None]:
        def run(self: Any, turn: Any, arg: Any) -> None:
            performed.append(effect)
            handler(self, turn, arg)

        return run

    for effect, handler in list(EFFECT_HANDLERS.items()):
        monkeypatch.setitem(EFFECT_HANDLERS, effect, spy(effect, handler))
    try:
        s.feed(*_INPUT[event])
    except LocalProtocolError:  # a refused prompt raises (one turn at a time): no effect ran
        assert answer is None and event == "prompt", (state, event)
    assert performed == (list(answer[1]) if answer else []), (state, event)
    assert s.ledger.flow == (answer[0] if answer else state)


# ---------------------------------------------------------------- withdrawn questions, as an output

# Every way a running turn leaves in_turn (the reference's turn rules), with the flow it leaves to.
_LEAVING: dict[str, tuple[tuple[Event, ...], str]] = {
    "cancel": ((Cancelled(),), "cancelled"),
    "query_error": ((QueryError(message="ProcessTransport is not ready for writing"),), "idle"),
    "worker_shutdown_eof": ((WorkerShuttingDown(reason="idle"), QueryEnded()), "idle"),
    "eof_without_result": ((QueryEnded(),), "idle"),
    "result_success": ((OK,), "idle"),
    "result_error": ((Result(subtype="success", is_error=True, result=RATE, api_error_status=429),), "idle"),
    "result_max_tokens": ((Result(subtype="success", is_error=True, stop_reason="max_tokens"),), "idle"),
    "internal_error": ((InternalError(),), "idle"),
}


def asked(tool: str) -> PermissionAsked:
    return PermissionAsked(tool_use_id=tool)


def answered(tool: str) -> PermissionAnswered:
    return PermissionAnswered(tool_use_id=tool)


@pytest.mark.parametrize("negotiated", [True, False], ids=["capable", "legacy"])
@pytest.mark.parametrize("leaving", sorted(_LEAVING))
def test_leaving_in_turn_hands_out_every_open_question_once(leaving: str, negotiated: bool) -> None:
    s = Session(negotiated=negotiated)
    s.feed(PromptStarted(turn_id="t1"), asked("toolu_b"), asked("toolu_a"), asked("toolu_c"), answered("toolu_c"))
    assert s.ledger.take_withdrawn() == ()  # open questions of a running turn are not withdrawn
    events, flow = _LEAVING[leaving]
    s.feed(*events)
    assert s.ledger.flow == flow
    assert s.ledger.take_withdrawn() == ("toolu_a", "toolu_b")  # the answered one was closed, not withdrawn
    assert s.ledger.take_withdrawn() == ()  # drained
    assert not s.ledger.question_open("toolu_a") and not s.ledger.question_open("toolu_b")
    s.feed(answered("toolu_a"))  # the late answer is not honoured, and withdraws nothing again
    assert s.ledger.take_withdrawn() == ()


def test_a_turn_without_open_questions_withdraws_nothing() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), asked("toolu_a"), answered("toolu_a"), OK)
    assert s.ledger.take_withdrawn() == ()
    s.feed(PromptStarted(turn_id="t2"), OK)
    assert s.ledger.take_withdrawn() == ()


@pytest.mark.parametrize("where", ["idle", "cancelled"])
def test_a_question_refused_outside_a_running_turn_is_never_withdrawn(where: str) -> None:
    s = Session()
    if where == "cancelled":
        s.feed(PromptStarted(turn_id="t1"), Cancelled())
    s.feed(asked("toolu_a"))
    assert not s.ledger.question_open("toolu_a")
    s.feed(QueryError(message="boom"), PromptStarted(turn_id="t2"), OK)
    assert s.ledger.take_withdrawn() == ()


def test_withdrawn_questions_wait_for_the_caller_across_turns() -> None:
    """Not taken after the first turn: both turns' questions come out at the next call, in the
    order their turns left in_turn."""
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), asked("toolu_z"), Cancelled())
    s.feed(PromptStarted(turn_id="t2"), asked("toolu_y"))
    assert s.ledger.question_open("toolu_y") and not s.ledger.question_open("toolu_z")
    s.feed(OK)
    assert s.ledger.take_withdrawn() == ("toolu_z", "toolu_y")
    assert s.ledger.take_withdrawn() == ()


def test_a_refused_event_withdraws_nothing() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), asked("toolu_a"))
    with pytest.raises(LocalProtocolError):
        s.feed(PromptStarted(turn_id="t2"))  # one prompt at a time: the ledger is unchanged
    assert s.ledger.feed(Cancelled(), runtime=7) is False  # a replaced runtime's event
    assert s.ledger.take_withdrawn() == ()
    assert s.ledger.question_open("toolu_a")
