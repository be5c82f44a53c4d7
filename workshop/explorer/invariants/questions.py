"""Invariants on Claude Code's permission questions: a question is open only while its turn runs,
permission events are never incidents, and an answer after its turn is not honoured.
"""

from __future__ import annotations

from ..alphabet import question_id
from ..registry import REGISTRY
from ..steps import Step
from ..world import ledger_fingerprint

__all__: list[str] = []

FAMILY = "questions"
invariant = REGISTRY.invariant(FAMILY)


@invariant
def question_open_only_while_its_turn_runs(s: Step) -> str | None:
    """A question is open only while its turn runs: Claude Code's permission question is opened
    (the client may be asked) only inside a running turn and stays open until it is answered;
    leaving ``in_turn`` (cancel, runtime loss, any settlement) withdraws every open question, and
    a question asked outside a running turn (idle, a cancelled turn still draining) is refused
    without asking the client."""
    after = s.after
    ledger = after.ledger
    current = question_id(after)
    for qid in {question_id(s.before) if s.before else current, current}:
        if not ledger.question_open(qid):
            continue
        if not after.running:
            return f"the question {qid} is open after {s.name}, though no turn runs ({ledger.flow})"
        if qid != current:
            return f"the question {qid} of an earlier turn is open in {current}'s turn after {s.name}"
    if s.name == "permission_asked" and s.refused is None and not ledger.question_open(current):
        return f"the question {current} asked in a running turn was not opened"
    if s.name == "permission_answered" and ledger.question_open(current):
        return f"the question {current} is still open after its answer"
    return None


@invariant
def permission_events_publish_nothing(s: Step) -> str | None:
    """Permission events are never incidents: a question (asked or refused) and its answer publish
    nothing, settle no prompt, change no incident and move the turn nowhere."""
    if s.action is None or not s.action.permission or s.before is None:
        return None
    if s.sent:
        return f"{s.name} sent {[type(o).__name__ for o, _ in s.sent]}"
    if s.recorder.transitions:
        return f"{s.name} moved incidents: {[(t[0], t[3]) for t in s.recorder.transitions]}"
    before = [(a.id, a.state, a.revision) for a in s.before_active]
    after = [(a.id, a.state, a.revision) for a in s.after.active]
    if before != after:
        return f"{s.name} changed the active incidents from {before} to {after}"
    if s.after.ledger.flow != s.before.ledger.flow:
        return f"{s.name} moved the turn from {s.before.ledger.flow} to {s.after.ledger.flow}"
    return None


@invariant
def answer_after_its_turn_not_honoured(s: Step) -> str | None:
    """An answer after its turn left ``in_turn`` is not honoured: the question was withdrawn when
    the turn was cancelled, lost its runtime or settled, so the answer finds it closed and changes
    nothing."""
    action, before = s.action, s.before
    if action is None or before is None or action.flow_event != "permission_answered" or s.was_running:
        return None
    qid = question_id(before)
    if before.ledger.question_open(qid):
        return f"the question {qid} was still open for {s.name} after its turn left in_turn ({before.ledger.flow})"
    if ledger_fingerprint(s.after.ledger) != ledger_fingerprint(before.ledger):
        return f"{s.name} to {qid} changed the session after its turn left in_turn"
    return None
