"""Claude Code's permission questions in the ledger (``PermissionAsked``, ``PermissionAnswered``,
``SessionLedger.question_open``) and in ``lifecycle trace``.

The rules (lifecycle/session_flow.py): a question is open only while its turn runs; leaving
``in_turn`` (cancel, runtime loss, any settlement) withdraws every open question, and an answer
that arrives after that is not honoured; a question asked outside a running turn is refused
without asking the client; permission events are never incidents and publish nothing.
"""

from __future__ import annotations

import pytest
from session_harness import Session

from lifecycle import (
    ApiRetry,
    Assistant,
    Cancelled,
    InternalError,
    LocalProtocolError,
    PermissionAnswered,
    PermissionAsked,
    PromptStarted,
    QueryEnded,
    QueryError,
    Result,
    WorkerShuttingDown,
)
from lifecycle.cli.trace import run_trace
from lifecycle.events import Event
from lifecycle.ledger import MAX_OPEN_QUESTIONS
from workshop.explorer import ledger_fingerprint

RATE = "API Error: Request rejected (429) · Number of requests has exceeded your rate limit"
LIMIT = "You've hit your 5-hour limit · resets 4:06pm (UTC)"
TOOL = "toolu_01"


def asked(tool: str = TOOL) -> PermissionAsked:
    return PermissionAsked(tool_use_id=tool)


def answered(tool: str = TOOL) -> PermissionAnswered:
    return PermissionAnswered(tool_use_id=tool)


def refused(flow: str) -> tuple[str, dict[str, object]]:
    return ("question_refused", {"session_id": "s1", "reason": "no_running_turn", "flow": flow})


def not_honoured(flow: str) -> tuple[str, dict[str, object]]:
    return ("answer_not_honoured", {"session_id": "s1", "reason": "no_running_turn", "flow": flow})


# Every way a running turn leaves in_turn, written out (the flow state it leaves to).
LEAVING: dict[str, tuple[tuple[Event, ...], str]] = {
    "cancel": ((Cancelled(),), "cancelled"),
    "query_error": ((QueryError(message="ProcessTransport is not ready for writing"),), "idle"),
    "worker_shutdown_eof": ((WorkerShuttingDown(reason="idle"), QueryEnded()), "idle"),
    "eof_without_result": ((QueryEnded(),), "idle"),
    "result_success": ((Result(subtype="success", is_error=False, stop_reason="end_turn"),), "idle"),
    "result_error": ((Result(subtype="success", is_error=True, result=RATE, api_error_status=429),), "idle"),
    "result_max_tokens": ((Result(subtype="success", is_error=True, stop_reason="max_tokens"),), "idle"),
    "internal_error": ((InternalError(),), "idle"),
}


@pytest.mark.parametrize("negotiated", [True, False], ids=["capable", "legacy"])
@pytest.mark.parametrize("leaving", sorted(LEAVING))
def test_leaving_in_turn_withdraws_every_open_question(leaving: str, negotiated: bool) -> None:
    s = Session(negotiated=negotiated)
    s.feed(PromptStarted(turn_id="t1"), asked("toolu_a"), asked("toolu_b"))
    assert s.ledger.question_open("toolu_a") and s.ledger.question_open("toolu_b")
    events, flow = LEAVING[leaving]
    s.feed(*events)
    assert s.ledger.flow == flow
    assert not s.ledger.question_open("toolu_a") and not s.ledger.question_open("toolu_b")
    # The client's answer that still arrives is not honoured: nothing changes, nothing is sent.
    before = ledger_fingerprint(s.ledger)
    assert s.feed(answered("toolu_a")) == []
    assert ledger_fingerprint(s.ledger) == before
    assert s.observed.notes[-1] == not_honoured(flow)
    # Nor does the question come back with the next turn.
    s.feed(PromptStarted(turn_id="t2"))
    assert not s.ledger.question_open("toolu_a") and not s.ledger.question_open("toolu_b")


def test_a_question_is_open_in_every_state_of_a_running_turn_until_it_is_answered() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), asked("toolu_running"))
    assert s.ledger.flow == "running" and s.ledger.question_open("toolu_running")
    s.feed(Assistant(text="Let me edit the file.", model="claude-opus-5-5"), asked("toolu_answered"))
    assert s.ledger.flow == "answered" and s.ledger.question_open("toolu_answered")
    s.feed(Assistant(text=RATE, model="<synthetic>", error="rate_limit"), asked("toolu_failing"))
    assert s.ledger.flow == "failing"
    assert [s.ledger.question_open(t) for t in ("toolu_running", "toolu_answered", "toolu_failing")] == [True] * 3
    s.feed(answered("toolu_answered"))
    assert [s.ledger.question_open(t) for t in ("toolu_running", "toolu_answered", "toolu_failing")] == [
        True, False, True
    ]
    assert not s.ledger.question_open("toolu_never_asked")
    assert s.ledger.flow == "failing"  # a question and its answer move the turn nowhere
    assert s.observed.notes == []


def test_a_question_asked_outside_a_running_turn_is_refused_and_noted() -> None:
    s = Session()
    assert s.feed(asked("toolu_idle")) == []  # no turn at all
    s.feed(PromptStarted(turn_id="t1"), Cancelled(), asked("toolu_draining"))  # a cancelled turn drains
    s.feed(PromptStarted(turn_id="t2"), Result(subtype="success", is_error=False), asked("toolu_after"))
    assert not any(s.ledger.question_open(t) for t in ("toolu_idle", "toolu_draining", "toolu_after"))
    assert s.observed.notes == [refused("idle"), refused("cancelled"), refused("idle")]


def test_an_answer_to_a_question_that_is_not_open_is_noted() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), asked(), answered(), answered(), answered("toolu_never_asked"))
    assert s.observed.notes == [("answer_not_honoured", {"session_id": "s1", "reason": "not_open"})] * 2
    s.feed(asked())  # asked again after its answer: open again
    assert s.ledger.question_open(TOOL)


@pytest.mark.parametrize("negotiated", [True, False], ids=["capable", "legacy"])
def test_permission_events_publish_nothing_and_change_no_incident(negotiated: bool) -> None:
    s = Session(negotiated=negotiated)
    s.feed(Assistant(text=LIMIT, model="<synthetic>", error="rate_limit"))  # a background usage limit
    s.feed(PromptStarted(turn_id="t1"), ApiRetry(attempt=1, max_retries=10, error_status=429, error="rate_limit"))
    active = [(a.id, a.state, a.revision) for a in s.ledger.active]
    assert active == ([("s1:e1:1", "failed", 1), ("t1:error", "retrying", 1)] if negotiated else [])
    transitions = len(s.observed.transitions)
    for event in (asked(), answered(), asked()):
        assert s.feed(event) == [] and not s.ledger.pending
    (cancelled,) = s.feed(Cancelled())
    assert cancelled.to_jsonrpc() == {"jsonrpc": "2.0", "id": "t1", "result": {"stopReason": "cancelled"}}
    for event in (answered(), asked("toolu_late")):
        assert s.feed(event) == [] and not s.ledger.pending
    assert [(a.id, a.state, a.revision) for a in s.ledger.active] == active
    assert len(s.observed.transitions) == transitions


def test_a_malformed_permission_event_is_refused_and_changes_nothing() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), asked())
    before = ledger_fingerprint(s.ledger)
    for bad in ("", None, 7):
        for event in (PermissionAsked, PermissionAnswered):
            with pytest.raises(LocalProtocolError, match="needs a non-empty tool use id"):
                s.ledger.feed(event(tool_use_id=bad))  # type: ignore[arg-type]
    assert ledger_fingerprint(s.ledger) == before and s.ledger.question_open(TOOL)


def test_the_same_question_asked_twice_while_it_is_open_is_refused() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), asked())
    before = ledger_fingerprint(s.ledger)
    with pytest.raises(LocalProtocolError, match="already open"):
        s.ledger.feed(asked())
    assert ledger_fingerprint(s.ledger) == before and s.ledger.question_open(TOOL)


def test_open_questions_are_bounded_the_next_one_is_refused() -> None:
    assert MAX_OPEN_QUESTIONS == 64
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), *(asked(f"toolu_{n}") for n in range(64)))
    assert all(s.ledger.question_open(f"toolu_{n}") for n in range(64))
    s.feed(asked("toolu_64"))
    assert not s.ledger.question_open("toolu_64")
    assert s.observed.notes == [("question_refused", {"session_id": "s1", "reason": "too_many_open", "open": 64})]
    s.feed(answered("toolu_0"), asked("toolu_64"))
    assert s.ledger.question_open("toolu_64") and not s.ledger.question_open("toolu_0")


# ---------------------------------------------------------------- lifecycle trace


def test_the_trace_adapter_events_feed_the_questions() -> None:
    lines = [
        '{"type":"adapter","event":"initialize","clientCapabilities":{}}',
        '{"type":"adapter","event":"session","sessionId":"s1"}',
        '{"type":"adapter","event":"prompt","turnId":"t1"}',
        '{"type":"adapter","event":"permission_asked","toolUseId":"toolu_01"}',
        '{"type":"adapter","event":"permission_asked","toolUseId":"toolu_01"}',
        '{"type":"adapter","event":"permission_answered","toolUseId":""}',
        '{"type":"adapter","event":"permission_asked"}',
        '{"type":"adapter","event":"permission_answered","toolUseId":"toolu_01"}',
        '{"type":"adapter","event":"cancel"}',
        '{"type":"adapter","event":"permission_answered","toolUseId":"toolu_01"}',
    ]
    out: list[str] = []
    errors: list[str] = []
    run_trace(lines, out.append, errors.append)
    assert out == [
        '{"jsonrpc":"2.0","id":"t1","result":{"stopReason":"cancelled"}}\n',
        '{"lifecycle":"active","sessions":{"s1":[]}}\n',
    ]
    assert errors == [
        "line 5: PermissionAsked for a question that is already open",
        "line 6: permission_answered needs a non-empty toolUseId",
        "line 7: permission_asked needs a non-empty toolUseId",
    ]
