"""The prompt turn's machine (``SessionFlow``) and how the ledger asks it (``MachineAnswers.turn``).

The answers ``MachineAnswers`` keeps are checked against three things it does not use: the
transitions as the class declares them (``flow_transitions``, read from the declarations, no
machine run), all 70 points of the turn machine written out by hand (``TURN_TABLE``, tests/expected.py), and a
fresh instance per question.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from expected import TURN_TABLE
from statemachine.exceptions import InvalidDefinition, TransitionNotAllowed

from lifecycle.answers import MachineAnswers
from lifecycle.session_flow import EFFECTS, FLOW_EVENTS, FLOW_STATES, SessionFlow, flow_transitions

POINTS = list(itertools.product(FLOW_STATES, FLOW_EVENTS))

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


class _CountedFlow(SessionFlow):
    """The turn machine, counting its instances (each one is a question asked of a real machine)."""

    made = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        type(self).made += 1
        super().__init__(*args, **kwargs)


def test_the_kept_answers_are_the_declared_transitions_and_a_fresh_instance_s_in_any_order() -> None:
    _CountedFlow.made = 0
    answers = MachineAnswers(flow_class=_CountedFlow)
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
    # each point asked of a real instance once: the second asking is answered from what was kept
    assert answers.turn_questions == len(POINTS) == _CountedFlow.made


def test_every_point_is_written_out() -> None:
    """The hand-written table has exactly the machine's 70 points (5 states x 14 events)."""
    assert len(TURN_TABLE) == 70 == len(POINTS)
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
    assert len(FLOW_STATES) * len(FLOW_EVENTS) == 5 * 14  # the point count session_flow.py states


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
