"""The ledger: the notes its observer receives, cancelled turns, notices, a refusal's banner, a turn
machine naming an effect the ledger lacks, and the exact paths the other ledger tests do not take
(spec: "Identity, revisions, and history", "Delivery surfaces", "Internal recovery").
"""

from __future__ import annotations

import pytest
from ledger_frames import (
    INTERNAL_TITLE,
    LIMIT,
    NO_MESSAGE_TITLE,
    OK,
    QUERY_ERROR_TITLE,
    RATE,
    agent_text,
    answer,
    ends_turn,
    error_result,
    info,
    legacy_error,
    rec,
    retry,
    settled,
    synthetic,
    wire,
)
from session_harness import Session

from lifecycle import (
    ApiRetry,
    Assistant,
    AuthStatus,
    Cancelled,
    HistoryEntry,
    HistoryLoaded,
    InternalError,
    LocalProtocolError,
    McpServerNotStarted,
    ModelFallback,
    PermissionAnswered,
    PermissionAsked,
    PromptStarted,
    QueryEnded,
    QueryError,
    Result,
    SessionLedger,
)

# ---------------------------------------------------------------- notes the observer receives


def test_events_that_change_nothing_are_noted() -> None:
    s = Session()
    assert wire(s, retry(1), Result(subtype="success", is_error=True), Cancelled(), AuthStatus(ok=False)) == []
    assert s.observed.notes == [
        ("api_retry_outside_turn", {"session_id": "s1"}),
        ("result_outside_turn", {"session_id": "s1", "is_error": True}),
        ("cancel_without_running_prompt", {"session_id": "s1"}),
        ("auth_not_completed", {"session_id": "s1"}),
    ]
    wire(s, Result(subtype="success", is_error=False))
    assert s.observed.notes[-1] == ("result_outside_turn", {"session_id": "s1", "is_error": False})


def test_a_retry_after_the_terminal_failure_of_the_turn_is_noted_not_shown() -> None:
    s = Session()
    ledger = s.ledger
    ledger.process(PromptStarted(turn_id="t1"), lambda m: None)
    # The SDK's own order can put a retry between the failure message and its result.
    s.feed(synthetic(RATE, "rate_limit"), error_result(RATE))
    assert s.ledger.active[0].state == "failed"
    assert wire(s, retry(3)) == []  # the turn is settled: outside any turn
    assert s.observed.notes[-1] == ("api_retry_outside_turn", {"session_id": "s1"})


def test_a_failed_send_is_noted_with_what_it_carried() -> None:
    s = Session()
    s.fail_next = 1
    s.feed(PromptStarted(turn_id="t1"), retry(1))
    s.fail_next = 1
    s.feed(answer("hi"))
    s.fail_next = 1
    s.feed(OK)
    assert [n for n in s.observed.notes if n[0] == "delivery_failed"] == [
        ("delivery_failed", {"session_id": "s1", "intent": "publish"}),
        ("delivery_failed", {"session_id": "s1", "intent": "forward"}),
        ("delivery_failed", {"session_id": "s1", "intent": "settle"}),
    ]
    s = Session(negotiated=False)
    s.fail_next = 1
    s.feed(PromptStarted(turn_id="t1"), InternalError())
    assert s.observed.notes == [("delivery_failed", {"session_id": "s1", "intent": "reject"})]


def test_an_observer_is_optional() -> None:
    ledger = SessionLedger("s1", negotiated=True, epoch="e1")
    sent: list[object] = []
    for ev in (retry(1), PromptStarted(turn_id="t1"), retry(1), synthetic(RATE, "rate_limit"), error_result(RATE)):
        ledger.process(ev, sent.append)
    assert len(sent) == 2 and ledger.active[0].id == "t1:error"


def test_cancel_settles_the_running_prompt_exactly() -> None:
    s = Session()
    assert wire(s, PromptStarted(turn_id="t7"), Cancelled()) == [settled("t7", "cancelled")]


ABORTED = "API Error: Request was aborted."


@pytest.mark.parametrize("negotiated", [False, True], ids=["legacy", "capable"])
def test_a_cancelled_turn_shows_nothing_after_its_cancelled_answer(negotiated: bool) -> None:
    # Issue 21, rule 8: the reference drops every frame of a cancelled turn. Its late synthetic
    # abort text, its late failure and a late real answer reach no client until the next prompt.
    s = Session(negotiated=negotiated)
    got = wire(
        s,
        PromptStarted(turn_id="t1"),
        answer("Working on it"),
        Cancelled(),
        synthetic(ABORTED, None),
        synthetic(ABORTED, "unknown"),
        synthetic(RATE, "rate_limit"),
        answer("late"),
        Result(subtype="error_during_execution", is_error=True, terminal_reason="aborted_streaming"),
    )
    assert got == [agent_text("Working on it"), settled("t1", "cancelled")]
    assert s.ledger.flow == "idle" and s.records == [] and s.active_ids == []
    got = wire(s, PromptStarted(turn_id="t2"), answer("Hello"), OK)
    assert got == [agent_text("Hello"), settled("t2", "end_turn")]


def test_a_cancelled_turn_late_text_is_dropped_until_the_next_prompt() -> None:
    # The drop lasts while the flow is cancelled: the next prompt's text is forwarded again, even
    # when the cancelled turn's result never came.
    s = Session(negotiated=False)
    got = wire(s, PromptStarted(turn_id="t1"), Cancelled(), synthetic(ABORTED, None), PromptStarted(turn_id="t2"))
    assert got == [settled("t1", "cancelled")]
    assert s.ledger.flow == "running"
    got = wire(s, synthetic(RATE, "rate_limit"), error_result(RATE))
    assert got == [agent_text(RATE), legacy_error("t2", -32603, f"Internal error: {RATE}", "rate_limit")]


def test_revision_of_an_unknown_or_ended_incident_is_0() -> None:
    s = Session()
    assert s.ledger.revision_of("t1:error") == 0
    s.feed(PromptStarted(turn_id="t1"), retry(1), retry(2))
    assert s.ledger.revision_of("t1:error") == 2
    s.feed(answer(), OK)
    assert s.ledger.revision_of("t1:error") == 0


def test_model_fallback_notices_exactly() -> None:
    s = Session(epoch="ep")
    long = "Switched to Opus 5 " + "because of load. " * 40
    long = long.strip()
    got = wire(s, ModelFallback(content=""), ModelFallback(content=""), ModelFallback(content=long))
    title = present_title(long)
    assert got == [
        info(rec("s1:notice:ep:1", 1, "unknown", "warning", "Claude switched to a fallback model.", [])),
        info(rec("s1:notice:ep:1", 2, "unknown", "warning", "Claude switched to a fallback model.", [])),
        info(rec("s1:notice:ep:2", 1, "unknown", "warning", title, [], details=long)),  # other text: new id
    ]
    got = wire(s, PromptStarted(turn_id="t1"), answer("hi"), ModelFallback(content=long))
    assert got[-1] == info(rec("s1:notice:ep:3", 1, "unknown", "warning", title, [], details=long))


def test_an_mcp_server_that_did_not_start_is_a_notice_record_of_its_own() -> None:
    # Issue 20, item 4: a capable client is shown it as a notice record; it is not an incident of
    # the turn (the turn ends as it would have), and only a legacy client's note names it.
    text = 'MCP server "broken" failed to start. Its tools are unavailable in this session.'
    s = Session(epoch="ep")
    got = wire(s, PromptStarted(turn_id="t1"), McpServerNotStarted(content=text), answer("hi"), OK)
    assert got == [
        info(rec("s1:notice:ep:1", 1, "unknown", "warning", text, [])),
        agent_text("hi"),
        settled("t1", "end_turn"),
    ]
    assert wire(s, McpServerNotStarted(content=" ")) == [
        info(
            rec(
                "s1:notice:ep:2", 1, "unknown", "warning",
                "An MCP server did not start; its tools are unavailable in this session.", [],
            )
        )
    ]  # fmt: skip
    legacy = Session(negotiated=False)
    assert wire(legacy, McpServerNotStarted(content=text)) == []
    assert legacy.observed.notes == [("mcp_server_not_started_legacy_not_shown", {"session_id": "s1"})]


def present_title(long: str) -> str:
    # "Switched to Opus 5 because of load. because of load. ..." cut at the last ". " in 500 chars:
    # the prefix is 19 characters and each repetition 17, so the last whole one ends at 19 + 28*17 - 1.
    return long[: 19 + 28 * 17 - 1]


def test_a_long_background_failure_has_details() -> None:
    long = "API Error: 500 " + "x" * 200 + ". " + "y" * 400
    s = Session(epoch="ep")
    assert wire(s, synthetic(long, "server_error")) == [
        info(rec("s1:ep:1", 1, "service", "error", "API Error: 500 " + "x" * 200 + ".", ["retry"], details=long))
    ]


# ---------------------------------------------------------------- a refusal's banner, an internal error while draining

REFUSED = Result(subtype="success", is_error=True, stop_reason="refusal")


def test_a_refusal_banner_explains_a_refused_turn_that_carried_no_explanation() -> None:
    """The reference: the explanation shown with ``stop_reason: refusal`` is the refused
    response's own, else the first ``model_refusal_no_fallback`` banner of the turn with one."""
    from lifecycle.events import ModelRefusalNoFallback as Banner

    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), Banner(explanation="Banner says why."), REFUSED)
    assert got == [agent_text("Banner says why."), settled("t1", "refusal")]
    own = Assistant(text="", model="claude-opus-5-5", refusal="Own reason.", shown=True)
    got = wire(s, PromptStarted(turn_id="t2"), own, Banner(explanation="Banner."), REFUSED)
    assert got == [agent_text("Own reason."), settled("t2", "refusal")]  # the response's own wins
    got = wire(s, PromptStarted(turn_id="t3"), Banner(explanation="Banner."), own, REFUSED)
    assert got == [agent_text("Own reason."), settled("t3", "refusal")]  # in either order
    got = wire(s, PromptStarted(turn_id="t4"), Banner(explanation="First."), Banner(explanation="Second."), REFUSED)
    assert got == [agent_text("First."), settled("t4", "refusal")]
    got = wire(s, PromptStarted(turn_id="t5"), Banner(explanation=None), REFUSED)
    assert got == [settled("t5", "refusal")]
    assert wire(s, Banner(explanation="Outside a turn.")) == []  # explains nothing, now or later
    assert wire(s, PromptStarted(turn_id="t6"), REFUSED) == [settled("t6", "refusal")]
    assert s.ledger.active == ()


def test_an_internal_error_while_a_cancelled_turn_drains_is_the_sessions() -> None:
    """The cancelled turn was answered ``cancelled`` and makes no record; the adapter's own
    failure meanwhile is a session-scoped failure (``background_internal_error``)."""
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), Cancelled(), InternalError())
    assert got == [
        settled("t1", "cancelled"),
        info(rec("s1:e1:1", 1, "service", "error", INTERNAL_TITLE, ["retry"])),
    ]
    assert s.ledger.flow == "cancelled"


def test_a_runtime_loss_whose_record_was_not_delivered_is_shown_at_its_next_sign() -> None:
    s = Session()
    s.fail_next = 1
    assert wire(s, QueryError(message="boom")) == []  # the send failed: nothing is committed
    got = wire(s, QueryError(message="again"))
    assert got == [info(rec("s1:e1:2", 1, "connection", "error", QUERY_ERROR_TITLE, ["new_session"]))]
    assert wire(s, QueryError(message="and again")) == []  # shown now: once


# ---------------------------------------------------------------- a turn machine naming an effect the ledger lacks


def _renaming(effect: str) -> type:
    """A SessionFlow whose ``effect`` action names ``bogus`` instead (every other one unchanged)."""
    from lifecycle.session_flow import SessionFlow

    class Renaming(SessionFlow):
        def _effect(self, name: str) -> None:
            super()._effect("bogus" if name == effect else name)

    return Renaming


@pytest.mark.parametrize(
    ("effect", "setup", "event", "flow_event"),
    [
        ("settle_cancelled", [PromptStarted(turn_id="t1")], Cancelled(), "cancel"),
        (
            "publish_retry",
            [PromptStarted(turn_id="t1")],
            ApiRetry(attempt=1, max_retries=2, error_status=529, error="overloaded"),
            "api_retry",
        ),
        ("open_question", [PromptStarted(turn_id="t1")], PermissionAsked(tool_use_id="q1"), "permission_asked"),
        (
            "close_question",
            [PromptStarted(turn_id="t1"), PermissionAsked(tool_use_id="q1")],
            PermissionAnswered(tool_use_id="q1"),
            "permission_answered",
        ),
        ("settle_internal_error", [PromptStarted(turn_id="t1")], InternalError(), "internal_error"),
        ("settle_runtime_loss", [PromptStarted(turn_id="t1")], QueryError(message="boom"), "transport_lost"),
        ("background_runtime_loss", [], QueryError(message="boom"), "transport_lost"),
        ("open_turn", [], PromptStarted(turn_id="t1"), "prompt"),
        ("hold_failure", [PromptStarted(turn_id="t1")], synthetic(RATE, "rate_limit"), "claude_failure"),
        ("background_failure", [], synthetic(RATE, "rate_limit"), "claude_failure"),
        ("recover_answered", [PromptStarted(turn_id="t1")], answer(), "real_answer"),
        ("recover_all", [], answer(), "real_answer"),
        ("settle_stop", [PromptStarted(turn_id="t1")], OK, "result_success"),
        ("confirm_attempt", [PromptStarted(turn_id="t1"), answer()], OK, "result_success"),
        ("settle_failure", [PromptStarted(turn_id="t1"), synthetic(RATE, "rate_limit")], error_result(RATE),
         "result_error"),
        ("settle_result_error", [PromptStarted(turn_id="t1")], error_result(RATE), "result_error"),
        ("settle_missing_result", [PromptStarted(turn_id="t1")], QueryEnded(), "stream_ended"),
        ("settle_failure", [PromptStarted(turn_id="t1"), synthetic(RATE, "rate_limit")], QueryEnded(), "stream_ended"),
        ("settle_failure", [PromptStarted(turn_id="t1"), synthetic(RATE, "rate_limit")], InternalError(),
         "internal_error"),
        ("background_internal_error", [], InternalError(), "internal_error"),
        ("refuse_question", [], PermissionAsked(tool_use_id="q1"), "permission_asked"),
    ],
)
def test_an_effect_the_ledger_does_not_perform_is_refused_by_name(
    effect: str, setup: list[object], event: object, flow_event: str
) -> None:
    """The machine and the ledger disagree: the ledger says which effect on which event, never
    silently skips it (``_unknown_effect``)."""
    from statemachine.exceptions import InvalidDefinition

    from lifecycle.answers import MachineAnswers

    ledger = SessionLedger("s1", negotiated=True, epoch="e1", answers=MachineAnswers(flow_class=_renaming(effect)))
    for ev in setup:
        ledger.process(ev, lambda _: None)  # type: ignore[arg-type]
    message = f"SessionFlow names effect 'bogus' on '{flow_event}'; the ledger has no such effect"
    with pytest.raises(InvalidDefinition) as refused:
        ledger.process(event, lambda _: None)  # type: ignore[arg-type]
    assert str(refused.value) == message


def test_the_sessions_of_one_agent_share_what_the_machines_answered() -> None:
    """A ledger asks its machines through the :class:`MachineAnswers` it is given (the agent gives
    one to all its sessions): a second session living the same story asks them nothing new."""
    from lifecycle.answers import MachineAnswers

    answers = MachineAnswers()
    asked = []
    for session_id in ("s1", "s2"):
        ledger = SessionLedger(session_id, negotiated=True, epoch="e1", answers=answers)
        for ev in (PromptStarted(turn_id="t1"), retry(1), synthetic(RATE, "rate_limit"), error_result(RATE)):
            ledger.process(ev, lambda _: None)
        asked.append((answers.incident_questions, answers.turn_questions))
    assert asked[0] == asked[1] and min(asked[0]) > 0


# ---------------------------------------------------------------- exact paths the cases above do not take


def test_a_message_without_a_refusal_keeps_the_banner_that_explains_the_turn() -> None:
    from lifecycle.events import ModelRefusalNoFallback as Banner

    s = Session()
    partial = Assistant(text="partial", model="claude-opus-5-5")  # no refusal of its own
    got = wire(s, PromptStarted(turn_id="t1"), Banner(explanation="Banner."), partial, REFUSED)
    assert got == [agent_text("partial"), agent_text("Banner."), settled("t1", "refusal")]


def test_a_real_answer_outside_a_turn_ends_a_restored_limit_and_a_background_failure() -> None:
    """The flow's ``recover_all`` (diagrams/session-flow.md): a real model answer while idle is evidence
    for both policies, a restored quota's (real model answer) and the others' (confirmed attempt)."""
    s = Session()
    s.feed(HistoryLoaded(entries=(HistoryEntry(role="user", uuid="u1", text="", prompt=True),
                                  HistoryEntry(role="assistant", uuid="m1", text=LIMIT, model="<synthetic>"))))
    assert s.active_ids == ["u1:error"]
    assert wire(s, answer("back")) == [agent_text("back")]
    assert s.active_ids == []
    s.feed(synthetic("API Error: 500 boom", "server_error"))
    assert s.active_ids == ["s1:e1:1"]
    assert wire(s, answer("back")) == [agent_text("back")]
    assert s.active_ids == []


def test_an_error_result_whose_text_asks_for_a_login_is_a_failure_even_at_max_tokens() -> None:
    """The login check comes before ``max_tokens`` wins (conditions.result_event, as the reference)."""
    s = Session()
    text = "Invalid API key · Please run /login"
    got = wire(s, PromptStarted(turn_id="t1"),
               Result(subtype="success", is_error=True, stop_reason="max_tokens", result=text))
    assert got == [ends_turn("t1", rec("t1:error", 1, "access", "error", text, ["login"]))]


def test_an_aborted_terminal_reason_settles_the_turn_cancelled() -> None:
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), answer("Hi"),
               Result(subtype="success", is_error=False, stop_reason="end_turn", terminal_reason="aborted_tools"))
    assert got == [agent_text("Hi"), settled("t1", "cancelled")]


def test_legacy_error_texts_come_from_claude_then_from_the_result() -> None:
    """Contract parity item 8: ``Internal error: <Claude's text>``; without Claude's text, the
    result's (a ``success``-subtype error result: its ``result``)."""
    s = Session(negotiated=False)
    got = wire(s, PromptStarted(turn_id="t1"), Result(subtype="success", is_error=True, result="boom"))
    assert got == [legacy_error("t1", -32603, "Internal error: boom")]
    got = wire(s, PromptStarted(turn_id="t2"), synthetic("Claude says A", "rate_limit"),
               Result(subtype="success", is_error=True, result="Result says B"))
    assert got == [
        agent_text("Claude says A"),
        legacy_error("t2", -32603, "Internal error: Claude says A", "rate_limit"),
    ]
    got = wire(s, PromptStarted(turn_id="t3"), synthetic("", "server_error"),
               Result(subtype="success", is_error=True, result="Result says B"))
    assert got == [legacy_error("t3", -32603, "Internal error: Result says B", "server_error")]


def test_a_held_failure_without_text_settled_by_eof_has_the_no_message_title() -> None:
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), synthetic("", "server_error"), QueryEnded())
    assert got == [ends_turn("t1", rec("t1:error", 1, "service", "error", NO_MESSAGE_TITLE, ["retry"]))]


def test_a_runtime_loss_in_a_turn_whose_answer_was_not_delivered_is_shown_at_its_next_sign() -> None:
    s = Session()
    s.fail_next = 1
    assert wire(s, PromptStarted(turn_id="t1"), QueryError(message="x")) == []  # the settle's send failed
    assert s.active_ids == []
    got = wire(s, QueryError(message="y"))
    assert got == [info(rec("s1:e1:1", 1, "connection", "error", QUERY_ERROR_TITLE, ["new_session"]))]


def test_a_retry_never_turns_a_failure_shown_as_terminal_back_into_a_warning() -> None:
    """A replayed limit whose id is the running turn's is shown ``failed``: the turn's retry after
    it is noted, and no warning is published over it."""
    s = Session()
    s.feed(PromptStarted(turn_id="t1"),
           HistoryLoaded(entries=(HistoryEntry(role="user", uuid="t1", text="", prompt=True),
                                  HistoryEntry(role="assistant", uuid="m1", text=LIMIT, model="<synthetic>"))))
    assert [(a.id, a.state) for a in s.ledger.active] == [("t1:error", "failed")]
    assert wire(s, retry(1)) == []
    assert s.observed.notes[-1] == ("api_retry_after_terminal_failure", {"session_id": "s1", "incident_id": "t1:error"})
    assert (s.ledger.revision_of("t1:error"), s.ledger.flow) == (1, "running")


@pytest.mark.parametrize("event", [PermissionAsked(tool_use_id=""), PermissionAnswered(tool_use_id="")])
def test_a_permission_event_needs_a_non_empty_tool_use_id_and_says_which(event: object) -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"))
    name = type(event).__name__
    with pytest.raises(LocalProtocolError, match=f"^{name} needs a non-empty tool use id$"):
        s.feed(event)  # type: ignore[arg-type]


def test_an_incident_the_machine_ends_on_its_publishing_event_is_no_longer_active() -> None:
    """The machines decide (answers.py); the ledger only follows: under a machine whose ``fail``
    reaches its final state, a published failure is no longer active, whether its incident was
    active before (a retry warning) or new. (The package's machine keeps every published incident
    active: docs/design.md's incident table.)"""
    from statemachine import State, StateMachine

    from lifecycle.answers import MachineAnswers

    class PublishEnds(StateMachine):
        pending = State(initial=True)
        retrying = State()
        historical = State(final=True)
        warn = pending.to(retrying)
        fail = pending.to(historical) | retrying.to(historical)

    ledger = SessionLedger("s1", negotiated=True, epoch="e1", answers=MachineAnswers(PublishEnds))  # type: ignore[arg-type]
    sent: list[object] = []
    for ev in (PromptStarted(turn_id="t1"), retry(1)):
        ledger.process(ev, sent.append)
    assert [a.id for a in ledger.active] == ["t1:error"]
    for ev in (synthetic(RATE, "rate_limit"), error_result(RATE), PromptStarted(turn_id="t2"),
               synthetic(RATE, "rate_limit"), error_result(RATE)):
        ledger.process(ev, sent.append)
    assert [(r.id, r.revision) for r in (m.record for m in sent) if r is not None] == [  # type: ignore[attr-defined]
        ("t1:error", 1), ("t1:error", 2), ("t2:error", 1)
    ]
    assert ledger.active == ()
