"""Spec: "Identity, revisions, and history", "Delivery surfaces", "Internal recovery" -- the ledger.

Each test reads like the spec sentence it checks.
"""

from __future__ import annotations

import gc
import tracemalloc

import pytest
from session_harness import Session

from lifecycle import (
    ApiRetry,
    Assistant,
    AuthStatus,
    Cancelled,
    InternalError,
    LocalProtocolError,
    ModelFallback,
    PendingDeliveryError,
    PromptErrorOut,
    PromptResponseOut,
    PromptStarted,
    QueryEnded,
    QueryError,
    Result,
    RuntimeReplaced,
    SessionLedger,
    SessionUpdateOut,
    WorkerShuttingDown,
)
from lifecycle.conditions import Recovery

RATE = "API Error: Request rejected (429) · Number of requests has exceeded your rate limit"
LIMIT = "You've hit your 5-hour limit · resets 4:06pm (UTC)"


def retry(attempt: int, status: int | None = 429, kind: str = "rate_limit") -> ApiRetry:
    return ApiRetry(attempt=attempt, max_retries=10, error_status=status, error=kind)


def synthetic(text: str, error: str | None) -> Assistant:
    return Assistant(text=text, model="<synthetic>", error=error)


def answer(text: str = "Hello") -> Assistant:
    return Assistant(text=text, model="claude-opus-5-5")


def error_result(text: str, status: int | None = 429) -> Result:
    return Result(subtype="success", is_error=True, result=text, api_error_status=status, terminal_reason="api_error")


OK = Result(subtype="success", is_error=False, result="Hello", stop_reason="end_turn")


def failed_turn(s: Session, turn: str, text: str = RATE, kind: str = "rate_limit") -> None:
    s.feed(PromptStarted(turn_id=turn), synthetic(text, kind), error_result(text))


# ---------------------------------------------------------------- identity and revisions


def test_live_turn_failures_use_turn_id_error_and_retry_progress_reuses_it() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), retry(1), retry(2))
    failed_turn_records = s.feed(synthetic(RATE, "rate_limit"), error_result(RATE))
    assert [(r.id, r.revision, r.severity.value) for r in s.records] == [
        ("t1:error", 1, "warning"),
        ("t1:error", 2, "warning"),
        ("t1:error", 3, "error"),
    ]
    (response,) = failed_turn_records
    assert isinstance(response, PromptResponseOut) and response.stop_reason == "end_turn"
    # The client shows one entry, updated in place.
    assert [r.id for r in s.client.records] == ["t1:error"]
    assert s.client.records[0].revision == 3


def test_a_later_independent_occurrence_uses_a_new_id_even_with_identical_text() -> None:
    s = Session()
    failed_turn(s, "t1")
    failed_turn(s, "t2")
    assert [r.id for r in s.records] == ["t1:error", "t2:error"]
    assert [r.title for r in s.records] == [RATE, RATE]
    assert len(s.client.records) == 2  # never deduplicated by title or category


def test_session_scoped_incidents_use_epoch_and_sequence_and_notices_their_own_namespace() -> None:
    s = Session(epoch="ep7")
    s.feed(QueryError(message="boom"))  # the runtime died while idle
    s.feed(RuntimeReplaced())
    s.feed(ModelFallback(content="Switched to Opus 5 because Opus 5.5 is not available"))
    assert [r.id for r in s.records] == ["s1:ep7:1", "s1:notice:ep7:2"]
    assert s.records[1].category.value == "unknown" and s.records[1].severity.value == "warning"


def test_consecutive_updates_for_the_same_notice_reuse_its_id() -> None:
    s = Session()
    s.feed(ModelFallback(content="Switched to Opus 5"), ModelFallback(content="Switched to Sonnet 5"))
    assert [(r.id, r.revision) for r in s.records] == [("s1:notice:e1:1", 1), ("s1:notice:e1:1", 2)]
    # Not consecutive any more once something else was shown: a new notice, the old one retired.
    s.feed(PromptStarted(turn_id="t1"), answer(), ModelFallback(content="Switched again"))
    assert s.records[-1].id == "s1:notice:e1:2"
    assert s.active_ids == ["s1:notice:e1:2"]


def test_a_prompt_cannot_reuse_the_id_of_an_active_failure() -> None:
    s = Session()
    failed_turn(s, "t1")
    with pytest.raises(LocalProtocolError):
        s.feed(PromptStarted(turn_id="t1"))
    assert s.active_ids == ["t1:error"]


def test_a_second_concurrent_prompt_is_refused_and_changes_nothing() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"))
    with pytest.raises(LocalProtocolError):
        s.feed(PromptStarted(turn_id="t2"))
    assert s.ledger.turn is not None and s.ledger.turn.turn_id == "t1"


# ---------------------------------------------------------------- delivery surfaces


def test_a_turn_terminal_failure_rides_the_prompt_response_with_end_turn() -> None:
    s = Session()
    out = s.feed(PromptStarted(turn_id="t1"), synthetic(RATE, "rate_limit"), error_result(RATE))
    assert len(out) == 1
    msg = out[0].to_jsonrpc()
    assert msg["id"] == "t1" and msg["result"]["stopReason"] == "end_turn"
    air = msg["result"]["_meta"]["jetbrains"]["air"]
    assert air["version"] == 1 and air["sessionFailure"]["id"] == "t1:error"


def test_the_capable_client_gets_the_record_instead_of_the_duplicate_prose() -> None:
    s = Session()
    out = s.feed(PromptStarted(turn_id="t1"), synthetic(RATE, "rate_limit"), error_result(RATE))
    assert not any(isinstance(m, SessionUpdateOut) and m.record is None for m in out)


def test_warnings_ride_session_info_update_and_never_settle_the_prompt() -> None:
    s = Session()
    out = s.feed(PromptStarted(turn_id="t1"), retry(1))
    assert [type(m) for m in out] == [SessionUpdateOut]
    assert out[0].update["sessionUpdate"] == "session_info_update"
    assert s.ledger.turn is not None and not s.ledger.turn.settled


def test_legacy_clients_keep_json_rpc_errors_and_transcript_text_and_never_see_jetbrains() -> None:
    s = Session(negotiated=False)
    out = s.feed(PromptStarted(turn_id="t1"), retry(1), synthetic(RATE, "rate_limit"), error_result(RATE))
    assert isinstance(out[0], SessionUpdateOut)
    assert out[0].update == {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": RATE}}
    assert isinstance(out[1], PromptErrorOut) and out[1].code == -32603
    assert all("jetbrains" not in str(m.to_jsonrpc()) for m in out)
    assert s.active_ids == []


def test_legacy_authentication_failures_are_auth_required() -> None:
    s = Session(negotiated=False)
    text = "Invalid API key · Please run /login"
    out = s.feed(PromptStarted(turn_id="t1"), synthetic(text, "authentication_failed"), error_result(text, 401))
    assert isinstance(out[-1], PromptErrorOut) and out[-1].code == -32000


def test_stop_reasons_are_not_failures() -> None:
    for stop, expected in [("max_tokens", "max_tokens"), ("refusal", "refusal"), ("end_turn", "end_turn")]:
        s = Session()
        out = s.feed(PromptStarted(turn_id="t1"), answer(), Result(subtype="success", is_error=False, stop_reason=stop))
        assert isinstance(out[-1], PromptResponseOut)
        assert (out[-1].stop_reason, out[-1].record) == (expected, None)


def test_cancellation_settles_cancelled_and_later_sdk_results_do_not_resettle() -> None:
    s = Session()
    out = s.feed(PromptStarted(turn_id="t1"), Cancelled(), error_result("aborted"))
    assert [(type(m), getattr(m, "stop_reason", None)) for m in out] == [(PromptResponseOut, "cancelled")]
    assert s.records == []


# ---------------------------------------------------------------- internal recovery


def test_authentication_remains_active_until_successful_auth_status() -> None:
    s = Session()
    text = "Invalid API key · Please run /login"
    s.feed(PromptStarted(turn_id="t1"), synthetic(text, "authentication_failed"), error_result(text, 401))
    assert s.records[-1].actions[0].value == "login"
    s.feed(PromptStarted(turn_id="t2"), answer(), OK)  # generic success does not end it
    s.feed(AuthStatus(ok=False))
    assert s.active_ids == ["t1:error"]
    n = len(s.sent)
    s.feed(AuthStatus(ok=True))
    assert s.active_ids == []
    assert len(s.sent) == n  # recovery publishes nothing


def test_transport_loss_remains_active_until_runtime_replacement() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), QueryError(message="ProcessTransport is not ready for writing"))
    rec = s.records[-1]
    assert (rec.category.value, [a.value for a in rec.actions]) == ("connection", ["new_session"])
    assert "ProcessTransport" not in rec.title
    s.feed(AuthStatus(ok=True))
    assert s.active_ids == ["t1:error"]
    s.feed(RuntimeReplaced())
    assert s.active_ids == []


def test_worker_shutdown_then_eof_is_a_connection_failure() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), WorkerShuttingDown(reason="idle"), QueryEnded())
    assert s.records[-1].category.value == "connection"
    assert s.ledger.active[0].recovery is Recovery.RUNTIME_REPLACED


def test_eof_without_result_is_the_missing_result_invariant() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), answer(), QueryEnded())
    rec = s.records[-1]
    assert (rec.category.value, [a.value for a in rec.actions]) == ("service", ["retry"])


def test_other_turn_failures_end_at_a_later_confirmed_attempt() -> None:
    s = Session()
    failed_turn(s, "t1")
    s.feed(PromptStarted(turn_id="t2"), retry(1))
    assert s.active_ids == ["t1:error", "t2:error"]  # a retry is not a confirmed attempt
    s.feed(synthetic("No response requested.", None))  # a local-command answer proves nothing
    assert "t1:error" in s.active_ids
    s.feed(answer())
    assert s.active_ids == ["t2:error"]  # t1 recovered; t2's own warning waits for its turn to end
    s.feed(OK)
    assert s.active_ids == []


def test_restored_quota_remains_active_until_a_real_model_answer() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), synthetic(LIMIT, "rate_limit"), error_result(LIMIT))
    assert s.records[-1].category.value == "limit" and s.records[-1].actions == ()
    s.feed(AuthStatus(ok=True), RuntimeReplaced())
    assert s.active_ids == ["t1:error"]
    s.feed(PromptStarted(turn_id="t2"), answer())
    assert s.active_ids == []


def test_notices_are_not_cleared_by_generic_success() -> None:
    s = Session()
    s.feed(ModelFallback(content="Switched to Opus 5"))
    s.feed(PromptStarted(turn_id="t1"), answer(), OK, AuthStatus(ok=True), RuntimeReplaced())
    assert s.active_ids == ["s1:notice:e1:1"]


def test_publishing_another_incident_is_not_evidence_that_an_older_one_recovered() -> None:
    s = Session()
    failed_turn(s, "t1")
    failed_turn(s, "t2", "Invalid API key · Please run /login", "authentication_failed")
    assert s.active_ids == ["t1:error", "t2:error"]


def test_the_sdk_result_error_after_an_error_result_is_not_a_second_incident() -> None:
    s = Session()
    failed_turn(s, "t1")
    s.feed(QueryError(message="Claude Code returned an error result"))
    assert [r.id for r in s.records] == ["t1:error"]


def test_an_internal_error_is_a_retryable_service_failure() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), InternalError())
    assert s.records[-1].category.value == "service"


# ---------------------------------------------------------------- plan -> deliver -> commit


def test_a_failed_send_leaves_the_ledger_as_the_client_last_saw_it() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), retry(1))
    s.fail_next = 1
    s.feed(retry(2))
    assert s.ledger.revision_of("t1:error") == 1
    s.feed(retry(3))
    # No revision gap visible to the client: the next delivered revision is 2.
    assert s.client.received["t1:error"] == [1, 2]


def test_a_failed_terminal_send_creates_no_active_incident() -> None:
    s = Session()
    s.fail_next = 1
    s.feed(PromptStarted(turn_id="t1"), synthetic(RATE, "rate_limit"), error_result(RATE))
    assert s.active_ids == [] and s.client.records == []


def test_feeding_before_the_previous_plan_was_reported_is_refused() -> None:
    ledger = SessionLedger("s1", negotiated=True, epoch="e1")
    ledger.feed(PromptStarted(turn_id="t1"))
    ledger.feed(retry(1))
    assert ledger.next_outbound() is not None
    with pytest.raises(PendingDeliveryError):
        ledger.feed(retry(2))
    ledger.delivered()
    assert ledger.revision_of("t1:error") == 1


def test_reporting_an_outcome_without_a_planned_send_is_an_error() -> None:
    ledger = SessionLedger("s1", negotiated=True, epoch="e1")
    with pytest.raises(LocalProtocolError):
        ledger.delivered()


def test_events_from_a_replaced_runtime_are_refused_and_logged() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), QueryError(message="x"), RuntimeReplaced())
    assert s.ledger.runtime == 1
    accepted = s.ledger.process(AuthStatus(ok=True), lambda m: None, runtime=0)
    assert accepted is False
    assert s.observed.notes[-1][0] == "stale_runtime_event_refused"


# ---------------------------------------------------------------- memory


def _session_after(n: int) -> int:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    s = SessionLedger("s1", negotiated=True, epoch="e1")
    deliver = lambda m: None  # noqa: E731
    for i in range(n):
        s.process(PromptStarted(turn_id=f"t{i}"), deliver)
        s.process(ApiRetry(attempt=1, max_retries=2, error_status=529, error="overloaded"), deliver)
        s.process(Assistant(text="ok", model="m"), deliver)
        s.process(Result(subtype="success", is_error=False), deliver)
    gc.collect()  # python-statemachine machines hold reference cycles: measure what is retained
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    assert s.active == ()
    return sum(d.size_diff for d in after.compare_to(before, "filename"))


def test_memory_is_bounded_by_active_incidents_not_by_history() -> None:
    small, large = _session_after(10), _session_after(1000)
    assert large <= 2 * max(small, 4096)


def test_a_refused_event_changes_nothing_not_even_the_result_error_expectation() -> None:
    s = Session()
    failed_turn(s, "t1")
    with pytest.raises(LocalProtocolError):
        s.feed(PromptStarted(turn_id="t1"))  # refused: the id's failure is still active
    s.feed(QueryError(message="Claude Code returned an error result"))  # the SDK's ResultError
    assert [r.id for r in s.records] == ["t1:error"]


def test_an_adapter_event_between_the_error_result_and_the_sdks_result_error_changes_nothing() -> None:
    s = Session()
    failed_turn(s, "t1")
    s.feed(AuthStatus(ok=True), Cancelled())  # an ACP authenticate, a stray cancel
    s.feed(QueryError(message="Claude Code returned an error result"))
    assert [r.id for r in s.records] == ["t1:error"]


def test_an_internal_error_after_claudes_failure_text_settles_with_claudes_failure() -> None:
    s = Session(negotiated=False)
    s.feed(PromptStarted(turn_id="t1"), synthetic("Invalid API key · Please run /login", "authentication_failed"))
    out = s.feed(InternalError())
    assert isinstance(out[-1], PromptErrorOut) and out[-1].code == -32000
