"""The ledger's exact wire output: what the client receives, written out as JSON-RPC literals
(``ledger_frames.py``), for every failure of a turn, runtime loss and internal error, to capable and
legacy clients (spec: "Delivery surfaces"; FORMAT.md).
"""

from __future__ import annotations

from ledger_frames import (
    INTERNAL_TITLE,
    LIMIT,
    MISSING_TITLE,
    NO_MESSAGE_TITLE,
    OK,
    QUERY_ERROR_TITLE,
    RATE,
    WORKER_TITLE,
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
    Assistant,
    AuthStatus,
    InternalError,
    ModelFallback,
    PromptStarted,
    QueryEnded,
    QueryError,
    Result,
    RuntimeReplaced,
    WorkerShuttingDown,
)
from lifecycle.conditions import Recovery

# ---------------------------------------------------------------- exact wire output


def test_retry_warnings_then_the_terminal_error_exactly() -> None:
    s = Session()
    got = wire(
        s,
        PromptStarted(turn_id="t1"),
        retry(1),
        retry(2, None, "unknown"),
        synthetic(RATE, "rate_limit"),
        error_result(RATE),
    )
    assert got == [
        info(rec("t1:error", 1, "limit", "warning", "Retrying Claude, attempt 1 of 10.", [])),
        info(rec("t1:error", 2, "connection", "warning", "Reconnecting to Claude, attempt 2 of 10.", [])),
        ends_turn("t1", rec("t1:error", 3, "limit", "error", RATE, ["retry"])),
    ]
    assert s.observed.transitions == [
        {"session_id": "s1", "incident_id": "t1:error", "source": "pending", "target": "retrying",
         "event": "warn", "revision": 1},
        {"session_id": "s1", "incident_id": "t1:error", "source": "retrying", "target": "retrying",
         "event": "warn", "revision": 2},
        {"session_id": "s1", "incident_id": "t1:error", "source": "retrying", "target": "failed",
         "event": "fail", "revision": 3},
    ]
    assert [(a.id, a.state, a.revision, a.recovery, a.category.value) for a in s.ledger.active] == [
        ("t1:error", "failed", 3, Recovery.CONFIRMED_ATTEMPT, "limit")
    ]


def test_a_long_failure_text_carries_details_on_the_wire() -> None:
    long = "API Error: 500 " + "x" * 200 + ". " + "y" * 400
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), synthetic(long, "server_error"), error_result(long, 500))
    assert got == [ends_turn("t1", rec("t1:error", 1, "service", "error", "API Error: 500 " + "x" * 200 + ".",
                                       ["retry"], details=long))]
    # A short one has no details key at all.
    s = Session()
    record = wire(s, PromptStarted(turn_id="t1"), synthetic(RATE, "rate_limit"), error_result(RATE))[0]
    assert "details" not in record["result"]["_meta"]["jetbrains"]["air"]["sessionFailure"]  # type: ignore[index]


def test_a_provider_error_after_retries_without_a_response_is_service() -> None:
    """Issue 21 rule 3: the retries without an HTTP response are `connection` warnings; the terminal
    `server_error` / `overloaded` is `service` ("`overloaded`, `server_error`, unknown provider error
    → `service`"), whatever the final status, as the reference says (provider_error, overloaded)."""
    text = "API Error: Connection error."
    for kind, status in (("server_error", None), ("server_error", 500), ("overloaded", 529)):
        s = Session()
        got = wire(s, PromptStarted(turn_id="t1"), retry(1, None, "unknown"), retry(2, None, "unknown"),
                   synthetic(text, kind), error_result(text, status))
        assert got[0]["params"]["update"]["_meta"]["jetbrains"]["air"]["sessionFailure"]["category"] == "connection"  # type: ignore[index]
        assert got[-1] == ends_turn("t1", rec("t1:error", 3, "service", "error", text, ["retry"]))


PROMPT_400 = "API Error: 400 prompt is too long: 250000 tokens > 200000 maximum"


def test_an_invalid_request_whose_result_says_prompt_too_long_is_the_context_limit() -> None:
    s = Session()
    got = wire(
        s,
        PromptStarted(turn_id="t1"),
        synthetic(PROMPT_400, "invalid_request"),
        Result(subtype="success", is_error=True, result=PROMPT_400, api_error_status=400,
               terminal_reason="prompt_too_long"),
    )
    assert got == [ends_turn("t1", rec("t1:error", 1, "limit", "error", PROMPT_400, ["new_session"]))]
    # Another terminal reason leaves the invalid request as it is.
    s = Session()
    got = wire(
        s,
        PromptStarted(turn_id="t1"),
        synthetic(PROMPT_400, "invalid_request"),
        Result(subtype="success", is_error=True, result=PROMPT_400, api_error_status=400, terminal_reason="api_error"),
    )
    assert got == [ends_turn("t1", rec("t1:error", 1, "request", "error", PROMPT_400, []))]
    # prompt_too_long refines only an invalid request, never another kind.
    s = Session()
    got = wire(
        s,
        PromptStarted(turn_id="t1"),
        synthetic(RATE, "rate_limit"),
        Result(subtype="success", is_error=True, result=RATE, terminal_reason="prompt_too_long"),
    )
    assert got == [ends_turn("t1", rec("t1:error", 1, "limit", "error", RATE, ["retry"]))]


def test_an_error_result_alone_says_prompt_too_long() -> None:
    s = Session()
    got = wire(
        s,
        PromptStarted(turn_id="t1"),
        Result(subtype="success", is_error=True, result="Prompt is too long", terminal_reason="prompt_too_long"),
    )
    assert got == [ends_turn("t1", rec("t1:error", 1, "limit", "error", "Prompt is too long", ["new_session"]))]


def test_the_title_falls_back_from_claudes_message_to_the_result_then_its_errors() -> None:
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), synthetic("", "overloaded"),
               Result(subtype="success", is_error=True, result="Overloaded, from the result", errors=("e1",)))
    assert got == [ends_turn("t1", rec("t1:error", 1, "service", "error", "Overloaded, from the result", ["retry"]))]
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), synthetic("", "overloaded"),
               Result(subtype="success", is_error=True, result=None, errors=("first", "second")))
    assert got == [ends_turn("t1", rec("t1:error", 1, "service", "error", "first, second", ["retry"]))]
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), synthetic("", "overloaded"),
               Result(subtype="success", is_error=True))
    assert got == [ends_turn("t1", rec("t1:error", 1, "service", "error", NO_MESSAGE_TITLE, ["retry"]))]


def test_an_error_result_without_claudes_message() -> None:
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"),
               Result(subtype="error_max_turns", is_error=True, errors=("Reached maximum number of turns (2)",)))
    assert got == [ends_turn("t1", rec("t1:error", 1, "limit", "error", "Reached maximum number of turns (2)",
                                       ["new_session"]))]
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), Result(subtype="success", is_error=True, result="Server said no",
                                                      errors=("ignored",)))
    assert got == [ends_turn("t1", rec("t1:error", 1, "service", "error", "Server said no", ["retry"]))]
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), Result(subtype="error_during_execution", is_error=True))
    assert got == [ends_turn("t1", rec("t1:error", 1, "service", "error", NO_MESSAGE_TITLE, ["retry"]))]


def test_a_synthetic_login_message_without_an_error_kind_is_an_access_failure() -> None:
    text = "Not logged in · Please run /login"
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), synthetic(text, None),
               Result(subtype="success", is_error=False, result=text))
    assert got == [ends_turn("t1", rec("t1:error", 1, "access", "error", text, ["login"]))]
    assert s.ledger.active[0].recovery is Recovery.AUTH_STATUS
    s = Session(negotiated=False)
    got = wire(s, PromptStarted(turn_id="t1"), synthetic(text, None),
               Result(subtype="success", is_error=False, result=text))
    # The reference adapter sends a login request to a legacy client as the -32000 alone.
    assert got == [legacy_error("t1", -32000, "Authentication required")]


def test_a_synthetic_usage_limit_without_an_error_kind_is_a_limit() -> None:
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), synthetic(LIMIT, None), OK)
    assert got == [ends_turn("t1", rec("t1:error", 1, "limit", "error", LIMIT, []))]
    assert s.ledger.active[0].recovery is Recovery.REAL_MODEL_ANSWER


def test_model_text_that_quotes_a_login_hint_is_not_a_failure() -> None:
    s = Session()
    text = "To fix it, please run /login in your terminal."
    got = wire(s, PromptStarted(turn_id="t1"), answer(text), OK)
    assert got == [agent_text(text), settled("t1", "end_turn")]
    # Nor is a synthetic message without a failure marker.
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), synthetic("No response requested.", None), OK)
    assert got == [agent_text("No response requested."), settled("t1", "end_turn")]


def test_the_first_failure_of_a_turn_decides_it() -> None:
    s = Session()
    auth = "Invalid API key · Please run /login"
    got = wire(s, PromptStarted(turn_id="t1"), synthetic(RATE, "rate_limit"), synthetic(auth, "authentication_failed"),
               error_result(auth))
    assert got == [ends_turn("t1", rec("t1:error", 1, "limit", "error", RATE, ["retry"]))]


def test_a_failure_message_outside_a_turn_is_a_background_incident() -> None:
    s = Session(epoch="ep")
    got = wire(s, synthetic(RATE, "rate_limit"))
    assert got == [info(rec("s1:ep:1", 1, "limit", "error", RATE, ["retry"]))]
    s = Session(epoch="ep")
    got = wire(s, synthetic("", "overloaded"))
    assert got == [info(rec("s1:ep:1", 1, "service", "error", NO_MESSAGE_TITLE, ["retry"]))]


def test_a_subagent_failure_changes_nothing() -> None:
    s = Session()
    sub = Assistant(text=RATE, model="<synthetic>", error="rate_limit", top_level=False)
    got = wire(s, PromptStarted(turn_id="t1"), sub, Assistant(text="sub answer", model="m", top_level=False), OK)
    assert got == [settled("t1", "end_turn")]


def test_legacy_failures_forward_claudes_text_then_the_json_rpc_error() -> None:
    s = Session(negotiated=False)
    got = wire(s, PromptStarted(turn_id="t1"), retry(1), synthetic(RATE, "rate_limit"), error_result(RATE))
    assert got == [agent_text(RATE), legacy_error("t1", -32603, f"Internal error: {RATE}", "rate_limit")]
    s = Session(negotiated=False)
    got = wire(s, PromptStarted(turn_id="t1"), synthetic("", "overloaded"), Result(subtype="success", is_error=True))
    assert got == [legacy_error("t1", -32603, "Internal error", "overloaded")]  # Claude said nothing
    s = Session(negotiated=False)
    got = wire(s, PromptStarted(turn_id="t1"), QueryError(message="boom"))
    assert got == [legacy_error("t1", -32603, "Internal error", "transport_lost")]
    s = Session(negotiated=False)
    got = wire(s, PromptStarted(turn_id="t1"), WorkerShuttingDown(reason="idle"), QueryEnded())
    assert got == [legacy_error("t1", -32603, "Internal error", "worker_shutdown")]
    s = Session(negotiated=False)
    got = wire(s, PromptStarted(turn_id="t1"), QueryEnded())
    assert got == [settled("t1", "end_turn")]  # no result: the reference answers end_turn (issue 21, rule 6)
    s = Session(negotiated=False)
    got = wire(s, PromptStarted(turn_id="t1"), Result(subtype="error_max_turns", is_error=True,
                                                     errors=("Reached maximum number of turns (2)",)))
    assert got == [legacy_error("t1", -32603, "Internal error: Reached maximum number of turns (2)")]


def test_a_legacy_execution_error_joins_its_errors_with_a_comma() -> None:
    # Issue 21 item 4: the reference's `message.errors.join(", ")` (dist/acp-agent.js:5544).
    two = ("Tool execution failed", "Hook blocked the write")
    s = Session(negotiated=False)
    got = wire(s, PromptStarted(turn_id="t1"), Result(subtype="error_during_execution", is_error=True, errors=two))
    assert got == [legacy_error("t1", -32603, "Internal error: Tool execution failed, Hook blocked the write")]
    s = Session(negotiated=False)
    got = wire(s, PromptStarted(turn_id="t1"), Result(subtype="error_max_turns", is_error=True, errors=two))
    assert got == [legacy_error("t1", -32603, "Internal error: Tool execution failed, Hook blocked the write")]
    # A held assistant failure without text: the result's errors, joined the same way, with its kind.
    s = Session(negotiated=False)
    got = wire(s, PromptStarted(turn_id="t1"), synthetic("", "overloaded"),
               Result(subtype="error_during_execution", is_error=True, errors=two))
    assert got == [legacy_error("t1", -32603, "Internal error: Tool execution failed, Hook blocked the write",
                                "overloaded")]
    # A capable client's title joins them the same way, as the reference's title does (`:5544`).
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), Result(subtype="error_during_execution", is_error=True, errors=two))
    assert got == [ends_turn("t1", rec("t1:error", 1, "service", "error",
                                       "Tool execution failed, Hook blocked the write", ["retry"]))]


def test_a_legacy_error_result_without_text_names_its_subtype() -> None:
    # Issue 21 item 5: `errors.join(", ") || message.subtype` (dist/acp-agent.js:5544-5566).
    for subtype in ("error_during_execution", "error_max_turns", "error_max_budget_usd",
                    "error_max_structured_output_retries"):
        s = Session(negotiated=False)
        got = wire(s, PromptStarted(turn_id="t1"), Result(subtype=subtype, is_error=True))
        assert got == [legacy_error("t1", -32603, f"Internal error: {subtype}")]
    s = Session(negotiated=False)
    got = wire(s, PromptStarted(turn_id="t1"), synthetic("", "overloaded"),
               Result(subtype="error_during_execution", is_error=True))
    assert got == [legacy_error("t1", -32603, "Internal error: error_during_execution", "overloaded")]
    # A success result with no text: the reference passes its empty text, so the message is bare.
    s = Session(negotiated=False)
    got = wire(s, PromptStarted(turn_id="t1"), Result(subtype="success", is_error=True, result=""))
    assert got == [legacy_error("t1", -32603, "Internal error")]
    # A capable client still gets the adapter's fallback title (spec: adapter text only when
    # Claude gave none).
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), Result(subtype="error_during_execution", is_error=True))
    assert got == [ends_turn("t1", rec("t1:error", 1, "service", "error", NO_MESSAGE_TITLE, ["retry"]))]


def test_a_shown_answer_is_classified_but_never_forwarded_again() -> None:
    # A text that already reached the client as streamed partial messages: not forwarded again,
    # still a real answer (it recovers the quota and marks the turn answered, so the successful
    # result confirms the attempt and ends the turn's retry warning).
    for negotiated in (True, False):
        s = Session(negotiated=negotiated)
        s.feed(QueryError(message="boom"), RuntimeReplaced())  # nothing a real answer recovers
        shown = Assistant(text="Hello", model="claude-opus-5-5", shown=True)
        got = wire(s, PromptStarted(turn_id="t1"), retry(1), shown)
        assert agent_text("Hello") not in got and len(got) == (1 if negotiated else 0)  # the warning alone
        assert s.ledger.flow == "answered"
        assert wire(s, OK) == [settled("t1", "end_turn")]
        assert s.ledger.active == ()
    s = Session()
    s.feed(synthetic(LIMIT, "rate_limit"))  # a background usage limit: waits for a real answer
    assert s.active_ids == ["s1:e1:1"]
    assert wire(s, PromptStarted(turn_id="t1"), Assistant(text="Hi", model="claude-opus-5-5", shown=True)) == []
    assert s.active_ids == []  # recovered by the shown answer, silently


def test_a_shown_failure_text_is_classified_but_never_forwarded_again() -> None:
    shown = Assistant(text=RATE, model="<synthetic>", error="rate_limit", shown=True)
    s = Session(negotiated=False)
    got = wire(s, PromptStarted(turn_id="t1"), shown, error_result(RATE))
    assert got == [legacy_error("t1", -32603, f"Internal error: {RATE}", "rate_limit")]  # no transcript text
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), shown, error_result(RATE))
    assert got == [ends_turn("t1", rec("t1:error", 1, "limit", "error", RATE, ["retry"]))]
    refused = Assistant(text="", model="claude-opus-5-5", refusal="This request was declined.", shown=True)
    got = wire(s, PromptStarted(turn_id="t2"), refused, Result(subtype="success", is_error=True,
                                                               stop_reason="refusal"))
    assert got == [agent_text("This request was declined."), settled("t2", "refusal")]  # the refusal is kept


def test_legacy_background_failures_are_not_shown_and_are_noted() -> None:
    s = Session(negotiated=False)
    assert wire(s, QueryError(message="boom"), InternalError(), synthetic(RATE, "rate_limit"),
                ModelFallback(content="Switched")) == [agent_text(RATE)]
    assert s.observed.notes == [
        ("background_failure_legacy_not_shown", {"session_id": "s1", "condition": "query_error"}),
        ("background_failure_legacy_not_shown", {"session_id": "s1", "condition": "internal_error"}),
        ("background_failure_legacy_not_shown", {"session_id": "s1", "condition": "rate_limit"}),
        ("model_fallback_legacy_not_shown", {"session_id": "s1"}),
    ]
    assert s.ledger.active == ()


# ---------------------------------------------------------------- runtime loss, exactly


def test_transport_loss_in_a_turn_exactly() -> None:
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), QueryError(message="ProcessTransport is not ready"))
    assert got == [ends_turn("t1", rec("t1:error", 1, "connection", "error", QUERY_ERROR_TITLE, ["new_session"]))]
    assert [(a.id, a.recovery) for a in s.ledger.active] == [("t1:error", Recovery.RUNTIME_REPLACED)]
    # The runtime's loss is shown once: the next idle loss adds nothing.
    assert wire(s, QueryError(message="again"), QueryEnded()) == []


def test_worker_shutdown_in_a_turn_exactly() -> None:
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), WorkerShuttingDown(reason="idle"), QueryEnded())
    assert got == [ends_turn("t1", rec("t1:error", 1, "connection", "error", WORKER_TITLE, ["new_session"]))]


def test_eof_without_a_result_exactly_and_it_is_not_a_runtime_loss() -> None:
    s = Session(epoch="ep")
    got = wire(s, PromptStarted(turn_id="t1"), answer("partial"), QueryEnded())
    assert got == [agent_text("partial"), ends_turn("t1", rec("t1:error", 1, "service", "error", MISSING_TITLE,
                                                              ["retry"]))]
    assert s.ledger.active[0].recovery is Recovery.CONFIRMED_ATTEMPT
    # A missing result did not lose the runtime: a later transport loss is shown.
    got = wire(s, QueryError(message="boom"))
    assert got == [info(rec("s1:ep:1", 1, "connection", "error", QUERY_ERROR_TITLE, ["new_session"]))]


def test_eof_after_claudes_failure_message_settles_with_it() -> None:
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), synthetic(RATE, "rate_limit"), QueryEnded())
    assert got == [ends_turn("t1", rec("t1:error", 1, "limit", "error", RATE, ["retry"]))]


def test_idle_transport_loss_exactly_once_per_runtime() -> None:
    s = Session(epoch="ep")
    got = wire(s, QueryError(message="boom"))
    assert got == [info(rec("s1:ep:1", 1, "connection", "error", QUERY_ERROR_TITLE, ["new_session"]))]
    assert wire(s, QueryError(message="again")) == []  # already shown
    assert wire(s, RuntimeReplaced()) == [] and s.ledger.active == ()
    got = wire(s, QueryError(message="the new runtime died too"))
    assert got == [info(rec("s1:ep:2", 1, "connection", "error", QUERY_ERROR_TITLE, ["new_session"]))]


def test_idle_worker_shutdown_exactly_and_replacement_forgets_it() -> None:
    s = Session(epoch="ep")
    got = wire(s, WorkerShuttingDown(reason="idle"), QueryEnded())
    assert got == [info(rec("s1:ep:1", 1, "connection", "error", WORKER_TITLE, ["new_session"]))]
    wire(s, RuntimeReplaced())
    # The new runtime is not shutting down: its missing result is a missing result.
    got = wire(s, PromptStarted(turn_id="t1"), QueryEnded())
    assert got == [ends_turn("t1", rec("t1:error", 1, "service", "error", MISSING_TITLE, ["retry"]))]


def test_a_normal_eof_while_idle_shows_nothing() -> None:
    s = Session()
    assert wire(s, QueryEnded()) == []
    assert wire(s, PromptStarted(turn_id="t1"), answer(), OK, QueryEnded()) == [agent_text("Hello"),
                                                                               settled("t1", "end_turn")]
    assert s.ledger.active == ()


def test_runtime_generations_count_every_replacement() -> None:
    s = Session()
    s.feed(RuntimeReplaced(), RuntimeReplaced())
    assert s.ledger.runtime == 2
    assert s.ledger.process(AuthStatus(ok=True), lambda m: None, runtime=1) is False
    assert s.ledger.process(AuthStatus(ok=True), lambda m: None, runtime=0) is False
    assert s.ledger.process(AuthStatus(ok=True), lambda m: None, runtime=2) is True
    assert s.observed.notes == [
        ("stale_runtime_event_refused", {"session_id": "s1", "event_type": "AuthStatus", "runtime": 1}),
        ("stale_runtime_event_refused", {"session_id": "s1", "event_type": "AuthStatus", "runtime": 0}),
    ]


def test_a_stale_event_changes_nothing() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), QueryError(message="x"), RuntimeReplaced(), PromptStarted(turn_id="t2"))
    assert s.feed(answer("stale"), runtime=0) == []
    assert s.feed(Result(subtype="success", is_error=False), runtime=0) == []
    assert s.ledger.turn is not None and (s.ledger.turn.turn_id, s.ledger.turn.settled) == ("t2", False)
    assert s.observed.notes[-1] == (
        "stale_runtime_event_refused", {"session_id": "s1", "event_type": "Result", "runtime": 0}
    )


# ---------------------------------------------------------------- internal errors, exactly


def test_an_internal_error_in_a_turn_exactly() -> None:
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), InternalError())
    assert got == [ends_turn("t1", rec("t1:error", 1, "service", "error", INTERNAL_TITLE, ["retry"]))]
    s = Session(negotiated=False)
    got = wire(s, PromptStarted(turn_id="t1"), InternalError())
    assert got == [legacy_error("t1", -32603, f"Internal error: {INTERNAL_TITLE}")]


def test_an_internal_error_after_claudes_failure_uses_claudes_text() -> None:
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), synthetic(RATE, "rate_limit"), InternalError())
    assert got == [ends_turn("t1", rec("t1:error", 1, "limit", "error", RATE, ["retry"]))]


def test_an_idle_internal_error_is_a_background_incident_exactly() -> None:
    s = Session(epoch="ep")
    got = wire(s, InternalError())
    assert got == [info(rec("s1:ep:1", 1, "service", "error", INTERNAL_TITLE, ["retry"]))]
    assert [(a.id, a.recovery) for a in s.ledger.active] == [("s1:ep:1", Recovery.CONFIRMED_ATTEMPT)]
