"""The prompt turn's machine (``SessionFlow``) and how the ledger asks it (``MachineAnswers.turn``).

The answers ``MachineAnswers`` keeps are checked against three things it does not use: the
transitions as the class declares them (``flow_transitions``, read from the declarations, no
machine run), all 65 points of the turn machine written out here by hand (``TURN_TABLE``), and a
fresh instance per question.
"""

from __future__ import annotations

import itertools
import random

import pytest
from statemachine.exceptions import InvalidDefinition, TransitionNotAllowed

from lifecycle.answers import MachineAnswers
from lifecycle.session_flow import EFFECTS, FLOW_EVENTS, FLOW_STATES, SessionFlow, flow_transitions

POINTS = list(itertools.product(FLOW_STATES, FLOW_EVENTS))

# Every point of the turn machine written out by hand, from session_flow.py's "Rules" (the spec's
# delivery surfaces and severity, and the contract-parity decisions of docs/parity/README.md),
# not read from the class: (leaf state, event) -> (target leaf, effects), or None (refused).
# 5 states x 13 events = 65 points.
S = ("settle_stop",)
TURN_TABLE: dict[tuple[str, str], tuple[str, tuple[str, ...]] | None] = {
    # a prompt opens a turn from idle, or while a cancelled turn drains; one turn at a time
    ("idle", "prompt"): ("running", ("open_turn",)),
    ("running", "prompt"): None,
    ("answered", "prompt"): None,
    ("failing", "prompt"): None,
    ("cancelled", "prompt"): ("running", ("open_turn",)),
    # a real model answer recovers what waits for one; inside a turn it marks the turn answered
    # (a held failure stays held); a cancelled turn's answer still recovers, and shows nothing
    ("idle", "real_answer"): ("idle", ("recover_all",)),
    ("running", "real_answer"): ("answered", ("recover_answered",)),
    ("answered", "real_answer"): ("answered", ("recover_answered",)),
    ("failing", "real_answer"): ("failing", ("recover_answered",)),
    ("cancelled", "real_answer"): ("cancelled", ("recover_all",)),
    # Claude's first failure of a turn is held; a later one adds nothing; a cancelled turn makes
    # no record; outside a turn it is a session-scoped failure
    ("idle", "claude_failure"): ("idle", ("background_failure",)),
    ("running", "claude_failure"): ("failing", ("hold_failure",)),
    ("answered", "claude_failure"): ("failing", ("hold_failure",)),
    ("failing", "claude_failure"): ("failing", ()),
    ("cancelled", "claude_failure"): ("cancelled", ()),
    # runtime loss is never swallowed: it settles a turn whatever Claude said (rule 6), and
    # outside a turn (or after the cancelled turn was answered) it is a session-scoped failure
    ("idle", "transport_lost"): ("idle", ("background_runtime_loss",)),
    ("running", "transport_lost"): ("idle", ("settle_runtime_loss",)),
    ("answered", "transport_lost"): ("idle", ("settle_runtime_loss",)),
    ("failing", "transport_lost"): ("idle", ("settle_runtime_loss",)),
    ("cancelled", "transport_lost"): ("idle", ("background_runtime_loss",)),
    # the stream ending without a result: a missing result, or the held failure's settlement
    ("idle", "stream_ended"): ("idle", ()),
    ("running", "stream_ended"): ("idle", ("settle_missing_result",)),
    ("answered", "stream_ended"): ("idle", ("settle_missing_result",)),
    ("failing", "stream_ended"): ("idle", ("settle_failure",)),
    ("cancelled", "stream_ended"): ("idle", ()),
    # the adapter's own failure: settles a turn (a held failure wins), else session-scoped
    ("idle", "internal_error"): ("idle", ("background_internal_error",)),
    ("running", "internal_error"): ("idle", ("settle_internal_error",)),
    ("answered", "internal_error"): ("idle", ("settle_internal_error",)),
    ("failing", "internal_error"): ("idle", ("settle_failure",)),
    ("cancelled", "internal_error"): ("cancelled", ("background_internal_error",)),
    # permission questions: opened only in a running turn, refused in idle and while a cancelled
    # turn drains, closed by their answer while the turn runs; never a move
    ("idle", "permission_asked"): ("idle", ("refuse_question",)),
    ("running", "permission_asked"): ("running", ("open_question",)),
    ("answered", "permission_asked"): ("answered", ("open_question",)),
    ("failing", "permission_asked"): ("failing", ("open_question",)),
    ("cancelled", "permission_asked"): ("cancelled", ("refuse_question",)),
    ("idle", "permission_answered"): ("idle", ()),
    ("running", "permission_answered"): ("running", ("close_question",)),
    ("answered", "permission_answered"): ("answered", ("close_question",)),
    ("failing", "permission_answered"): ("failing", ("close_question",)),
    ("cancelled", "permission_answered"): ("cancelled", ()),
    # a stop reason (max_tokens, refusal) wins over is_error and over a held failure (rule 4);
    # it confirms nothing; no result is expected outside a turn
    ("idle", "result_stop"): None,
    ("running", "result_stop"): ("idle", S),
    ("answered", "result_stop"): ("idle", S),
    ("failing", "result_stop"): ("idle", S),
    ("cancelled", "result_stop"): ("idle", ()),
    # a cancel answers a running turn cancelled (rule 7); there is nothing to cancel otherwise
    ("idle", "cancel"): None,
    ("running", "cancel"): ("cancelled", ("settle_cancelled",)),
    ("answered", "cancel"): ("cancelled", ("settle_cancelled",)),
    ("failing", "cancel"): ("cancelled", ("settle_cancelled",)),
    ("cancelled", "cancel"): None,
    # a warning never ends a turn; outside one (or in a cancelled one) it is no turn event
    ("idle", "api_retry"): None,
    ("running", "api_retry"): ("running", ("publish_retry",)),
    ("answered", "api_retry"): ("answered", ("publish_retry",)),
    ("failing", "api_retry"): ("failing", ("publish_retry",)),
    ("cancelled", "api_retry"): None,
    # a successful result settles the turn: with its stop reason (confirming the attempt only
    # after a real answer), or with the held failure; a cancelled turn's result ends the drain
    ("idle", "result_success"): None,
    ("running", "result_success"): ("idle", S),
    ("answered", "result_success"): ("idle", ("settle_stop", "confirm_attempt")),
    ("failing", "result_success"): ("idle", ("settle_failure",)),
    ("cancelled", "result_success"): ("idle", ()),
    # an error result settles with Claude's error, or with the held failure
    ("idle", "result_error"): None,
    ("running", "result_error"): ("idle", ("settle_result_error",)),
    ("answered", "result_error"): ("idle", ("settle_result_error",)),
    ("failing", "result_error"): ("idle", ("settle_failure",)),
    ("cancelled", "result_error"): ("idle", ()),
}
RULES = {point: answer for point, answer in TURN_TABLE.items() if answer is not None}
QUESTIONS = {point: answer for point, answer in RULES.items() if point[1].startswith("permission_")}
REFUSED = sorted(point for point, answer in TURN_TABLE.items() if answer is None)


class _Model:
    def __init__(self, state: str) -> None:
        self.state: object = state
        self.effects: list[str] = []


def _fresh(state: str, event: str) -> tuple[str, tuple[str, ...]] | None:
    """A new instance resumed at ``state`` answers ``event`` (None: it refuses)."""
    model = _Model(state)
    machine = SessionFlow(model=model, state_field="state")
    try:
        machine.send(event)
    except TransitionNotAllowed:
        return None
    (leaf,) = [s.id for s in machine.configuration if not s.states]
    return leaf, tuple(model.effects)


def test_the_kept_answers_are_the_declared_transitions_and_a_fresh_instance_s_in_any_order() -> None:
    answers = MachineAnswers()
    declared = flow_transitions()
    order = POINTS * 2  # every point asked twice: the second time from what was kept
    random.Random(12).shuffle(order)
    for state, event in order:
        kept = answers.turn_or_none(state, event)
        assert kept == _fresh(state, event), (state, event)
        if kept is None:
            assert (state, event) not in declared
        else:
            assert kept[0] == declared[(state, event)], (state, event)
            assert set(kept[1]) <= set(EFFECTS)
    assert answers.turn_questions == len(POINTS)  # each point asked of a real instance once


def test_every_point_is_written_out() -> None:
    """The hand-written table has exactly the machine's 65 points (5 states x 13 events)."""
    assert len(TURN_TABLE) == 65 == len(POINTS)
    assert set(TURN_TABLE) == set(POINTS)


@pytest.mark.parametrize(("state", "event"), sorted(TURN_TABLE))
def test_the_turn_rules_written_out(state: str, event: str) -> None:
    """Each point as the kept answer, a fresh instance and the declarations give it."""
    assert MachineAnswers().turn_or_none(state, event) == TURN_TABLE[(state, event)]
    assert _fresh(state, event) == TURN_TABLE[(state, event)]
    answer = TURN_TABLE[(state, event)]
    assert flow_transitions().get((state, event)) == (answer[0] if answer else None)


def test_every_point_of_the_permission_events_is_written_out() -> None:
    """All 5 leaf states x the 2 permission events, no more and no fewer."""
    states = {"idle", "running", "answered", "failing", "cancelled"}
    assert set(QUESTIONS) == {(s, e) for s in states for e in ("permission_asked", "permission_answered")}
    assert set(FLOW_STATES) == states and {"permission_asked", "permission_answered"} <= set(FLOW_EVENTS)
    assert len(FLOW_STATES) * len(FLOW_EVENTS) == 5 * 13  # the point count session_flow.py states


@pytest.mark.parametrize(("state", "event"), REFUSED)
def test_a_refusal_is_none_on_the_hot_path_and_a_fresh_exception_otherwise(state: str, event: str) -> None:
    answers = MachineAnswers()
    assert answers.turn_or_none(state, event) is None
    errors = []
    for _ in range(2):
        with pytest.raises(TransitionNotAllowed) as caught:
            answers.turn(state, event)
        errors.append(caught.value)
    assert errors[0] is not errors[1]  # the kept refusal is never raised itself (tracebacks would pile up)


class _ImpureFlow(SessionFlow):
    """A turn machine whose action changes its model beyond naming an effect."""

    def open_turn(self) -> None:
        super().open_turn()
        self.model.opened = True


def test_an_impure_turn_machine_is_refused_rather_than_remembered() -> None:
    answers = MachineAnswers(flow_class=_ImpureFlow)
    with pytest.raises(InvalidDefinition, match="not pure on 'prompt' from 'idle'"):
        answers.turn_or_none("idle", "prompt")
    assert answers.turn_questions == 0
