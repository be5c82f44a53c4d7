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
    HistoryEntry,
    HistoryLoaded,
    InternalError,
    LocalProtocolError,
    McpServerNotStarted,
    ModelFallback,
    PendingDeliveryError,
    PermissionAnswered,
    PermissionAsked,
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
from lifecycle import ledger as ledger_module
from lifecycle.claude import from_sdk_exception
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
    # Spec: "Consecutive updates for the same notice may reuse one id and increment its revision";
    # the reference reuses it only for the same text (contract parity, item 3).
    s = Session()
    s.feed(ModelFallback(content="Switched to Opus 5"), ModelFallback(content="Switched to Opus 5"))
    assert [(r.id, r.revision) for r in s.records] == [("s1:notice:e1:1", 1), ("s1:notice:e1:1", 2)]
    # Different text is a new occurrence; the older notice is not retired by it.
    s.feed(ModelFallback(content="Switched to Sonnet 5"))
    assert (s.records[-1].id, s.records[-1].revision) == ("s1:notice:e1:2", 1)
    # Not consecutive any more once something else was shown: the same text is a new notice.
    s.feed(PromptStarted(turn_id="t1"), answer(), ModelFallback(content="Switched to Sonnet 5"))
    assert (s.records[-1].id, s.records[-1].revision) == ("s1:notice:e1:3", 1)
    assert s.active_ids == ["s1:notice:e1:1", "s1:notice:e1:2", "s1:notice:e1:3"]


def test_notices_stay_active_past_sixteen() -> None:
    """Issue 21 rule 2: notices stay active until their own recovery (none); the 17th notice of a
    session retires nothing (the ledger used to keep only the 16 newest)."""
    s = Session()
    for n in range(40):
        s.feed(ModelFallback(content=f"Switched to model {n}"))
    assert s.active_ids == [f"s1:notice:e1:{n}" for n in range(1, 41)]
    assert s.ledger.untracked_notices == 0


def test_the_bound_on_active_notices_is_the_documented_4096() -> None:
    """docs/design.md: "past ``lifecycle.ledger.MAX_ACTIVE_NOTICES`` (4096) active notices"."""
    assert ledger_module.MAX_ACTIVE_NOTICES == 4096


def test_past_the_bound_the_oldest_active_notice_is_let_go_and_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/design.md: past ``MAX_ACTIVE_NOTICES`` the oldest *notice* is let go and counted; an
    active failure is not a notice and stays, and an update of a notice (same text, revision 2) is
    not another notice. The rule does not depend on the bound's size (its value: the test above),
    so it runs with a bound of 8 instead of 4096 notices (a mutation run repeats it per mutant)."""
    monkeypatch.setattr(ledger_module, "MAX_ACTIVE_NOTICES", 8)
    s = Session()
    s.feed(QueryError(message="boom"))  # the idle runtime's loss: s1:e1:1, active until replacement
    for n in range(8):  # notices s1:notice:e1:2 .. s1:notice:e1:9
        s.ledger.process(ModelFallback(content=f"Switched to model {n}"), lambda m: None)
    assert (len(s.ledger.active), s.ledger.untracked_notices) == (9, 0)
    s.ledger.process(ModelFallback(content="Switched to model 7"), lambda m: None)  # its update, revision 2
    assert (len(s.ledger.active), s.ledger.untracked_notices) == (9, 0)
    s.ledger.process(ModelFallback(content="Switched to model 8"), lambda m: None)  # the 9th notice
    ids = s.active_ids
    assert (len(ids), s.ledger.untracked_notices) == (9, 1)
    assert ids[:3] == ["s1:e1:1", "s1:notice:e1:3", "s1:notice:e1:4"] and ids[-1] == "s1:notice:e1:10"
    assert s.observed.transitions[-1] == {"session_id": "s1", "incident_id": "s1:notice:e1:2", "source": "noticed",
                                          "target": "historical", "event": "superseded", "revision": 1}
    s.ledger.process(ModelFallback(content="Switched to model 9"), lambda m: None)  # and the 10th
    ids = s.active_ids
    assert (len(ids), s.ledger.untracked_notices) == (9, 2)
    assert ids[:2] == ["s1:e1:1", "s1:notice:e1:4"] and ids[-1] == "s1:notice:e1:11"


def test_a_prompt_cannot_reuse_the_id_of_an_active_failure() -> None:
    s = Session()
    failed_turn(s, "t1")
    with pytest.raises(LocalProtocolError, match=r"^turn id 't1' was already used in this session$"):
        s.feed(PromptStarted(turn_id="t1"))
    assert s.active_ids == ["t1:error"]



def test_a_prompt_cannot_reuse_the_id_of_an_active_failure_of_an_earlier_turn() -> None:
    """Not only the last turn's: a failure still active (a login, until auth succeeds) keeps its id."""
    s = Session()
    text = "Invalid API key · Please run /login"
    s.feed(PromptStarted(turn_id="t1"), synthetic(text, "authentication_failed"), error_result(text, 401))
    s.feed(PromptStarted(turn_id="t2"), answer(), OK)
    assert s.active_ids == ["t1:error"] and s.ledger.turn is not None and s.ledger.turn.turn_id == "t2"
    with pytest.raises(LocalProtocolError, match=r"^turn id 't1' was already used in this session$"):
        s.feed(PromptStarted(turn_id="t1"))
    assert s.ledger.flow == "idle"


def test_a_prompt_cannot_reuse_the_id_of_the_last_turn() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), answer(), OK)
    assert s.active_ids == []
    with pytest.raises(LocalProtocolError, match=r"^turn id 't1' was already used in this session$"):
        s.feed(PromptStarted(turn_id="t1"))


def test_a_second_concurrent_prompt_is_refused_and_changes_nothing() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"))
    with pytest.raises(LocalProtocolError, match=r"^PromptStarted\('t2'\) while turn 't1' is still running$"):
        s.feed(PromptStarted(turn_id="t2"))
    assert s.ledger.turn is not None and s.ledger.turn.turn_id == "t1"


@pytest.mark.parametrize("turn_id", ["", None, 7])
def test_a_prompt_needs_a_non_empty_turn_id(turn_id: object) -> None:
    s = Session()
    with pytest.raises(LocalProtocolError, match=r"^PromptStarted needs a non-empty turn id$"):
        s.feed(PromptStarted(turn_id=turn_id))  # type: ignore[arg-type]
    assert (s.ledger.turn, s.ledger.flow, s.sent) == (None, "idle", [])


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


def test_eof_without_result_answers_a_legacy_client_end_turn() -> None:
    # Issue 21, rule 6: the reference answers end_turn (no JSON-RPC error, no errorKind no_result);
    # a capable client keeps the typed missing_result record on the PromptResponse.
    for events in ((), (answer(),), (retry(1),)):
        s = Session(negotiated=False)
        got = wire(s, PromptStarted(turn_id="t1"), *events, QueryEnded())
        assert got[-1] == settled("t1", "end_turn")
        assert s.records == [] and s.ledger.active == () and s.ledger.flow == "idle"
    s = Session()
    got = wire(s, PromptStarted(turn_id="t1"), answer("Hello"), QueryEnded())
    missing = rec("t1:error", 1, "service", "error", MISSING_TITLE, ["retry"])
    assert got == [agent_text("Hello"), ends_turn("t1", missing)]
    # Claude's own failure held before the EOF still settles a legacy turn with the JSON-RPC error.
    s = Session(negotiated=False)
    got = wire(s, PromptStarted(turn_id="t1"), synthetic(RATE, "rate_limit"), QueryEnded())
    assert got == [agent_text(RATE), legacy_error("t1", -32603, f"Internal error: {RATE}", "rate_limit")]


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
    # The SDK raises ResultError right after yielding the error result: the Claude edge turns it
    # into the result it repeats, which no running turn takes (recognised by what it is).
    class ResultError(Exception):  # the SDK's class is matched by name, like the real one
        subtype, result, errors, api_error_status, terminal_reason = "success", RATE, [], 429, "api_error"

    s = Session()
    failed_turn(s, "t1")
    s.feed(from_sdk_exception(ResultError()))
    assert [r.id for r in s.records] == ["t1:error"]
    assert "result_outside_turn" in [what for what, _ in s.observed.notes]


def test_a_transport_loss_after_an_error_result_is_a_connection_failure_until_replacement() -> None:
    # Contract parity rule 6 (reference: transport_lost -> connection, ["new_session"]): a loss
    # after the turn's error result is never swallowed as if it were the SDK's ResultError.
    s = Session()
    failed_turn(s, "t1")
    s.feed(QueryError(message="ProcessTransport is not ready for writing"))
    lost = s.records[-1]
    assert (lost.id, lost.category.value, [a.value for a in lost.actions]) == ("s1:e1:1", "connection", ["new_session"])
    s.feed(PromptStarted(turn_id="t2"))
    assert "s1:e1:1" in s.active_ids  # a new prompt is not a new runtime
    s.feed(RuntimeReplaced())
    assert "s1:e1:1" not in s.active_ids


def test_a_transport_loss_between_claudes_failure_and_its_result_is_a_connection_failure() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), synthetic(RATE, "rate_limit"), QueryError(message="EPIPE"))
    record = s.records[-1]
    assert (record.id, record.category.value, [a.value for a in record.actions]) == (
        "t1:error",
        "connection",
        ["new_session"],
    )
    settled = [m for m in s.sent if isinstance(m, PromptResponseOut)]
    assert [(m.turn_id, m.stop_reason) for m in settled] == [("t1", "end_turn")]


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


def test_a_send_is_offered_until_its_outcome_is_reported_and_never_after() -> None:
    """``next_outbound`` hands out the same planned send until ``delivered`` or
    ``delivery_failed`` reports it; after that it is gone, and the next one is offered."""
    ledger = SessionLedger("s1", negotiated=True, epoch="e1")
    ledger.feed(PromptStarted(turn_id="t1"))
    ledger.feed(retry(1))
    first = ledger.next_outbound()
    assert first is not None and ledger.next_outbound() is first
    ledger.delivered()
    assert ledger.next_outbound() is None
    ledger.feed(retry(2))
    second = ledger.next_outbound()
    assert second is not None and second is not first
    ledger.delivery_failed()
    assert ledger.next_outbound() is None


def test_the_refusal_of_an_early_event_counts_the_sends_still_waiting() -> None:
    """The message names the event and how many planned sends (waiting or handed out) are unreported."""
    ledger = SessionLedger("s1", negotiated=False, epoch="e1")
    ledger.feed(PromptStarted(turn_id="t1"))
    ledger.feed(answer("one"))
    with pytest.raises(PendingDeliveryError, match=r"^Result fed while 1 planned send\(s\) await their outcome$"):
        ledger.feed(OK)
    assert ledger.next_outbound() is not None  # handed out, not reported: still one
    with pytest.raises(PendingDeliveryError, match=r"^Result fed while 1 planned send\(s\) await their outcome$"):
        ledger.feed(OK)
    ledger.delivered()
    ledger.feed(HistoryLoaded(entries=(HistoryEntry(role="user", uuid="u1", text="one", prompt=True),
                                       HistoryEntry(role="user", uuid="u2", text="two", prompt=True))))
    with pytest.raises(PendingDeliveryError, match=r"^Cancelled fed while 2 planned send\(s\) await their outcome$"):
        ledger.feed(Cancelled())
    assert ledger.next_outbound() is not None  # one handed out, one waiting
    with pytest.raises(PendingDeliveryError, match=r"^Cancelled fed while 2 planned send\(s\) await their outcome$"):
        ledger.feed(Cancelled())


def test_reporting_an_outcome_without_a_planned_send_is_an_error() -> None:
    ledger = SessionLedger("s1", negotiated=True, epoch="e1")
    with pytest.raises(LocalProtocolError, match=r"^no planned send is waiting for its outcome$"):
        ledger.delivered()
    with pytest.raises(LocalProtocolError, match=r"^no planned send is waiting for its outcome$"):
        ledger.delivery_failed()


def test_an_unknown_event_type_is_refused_by_name() -> None:
    ledger = SessionLedger("s1", negotiated=True, epoch="e1")
    with pytest.raises(LocalProtocolError, match=r"^unknown event type str$"):
        ledger.feed("PromptStarted")  # type: ignore[arg-type]
    assert (ledger.flow, ledger.pending) == ("idle", False)


@pytest.mark.parametrize(
    ("session_id", "epoch", "message"),
    [
        ("", "e1", "session_id must be a non-empty string"),
        (None, "e1", "session_id must be a non-empty string"),
        (7, "e1", "session_id must be a non-empty string"),
        ("s1", "", "epoch must be a non-empty string"),
        ("s1", None, "epoch must be a non-empty string"),
        ("s1", 7, "epoch must be a non-empty string"),
    ],
)
def test_a_ledger_needs_a_session_id_and_an_epoch(session_id: object, epoch: object, message: str) -> None:
    with pytest.raises(LocalProtocolError, match=f"^{message}$"):
        SessionLedger(session_id, negotiated=True, epoch=epoch)  # type: ignore[arg-type]


def test_a_fresh_ledger_is_idle_with_nothing_to_send_and_no_acp_notices() -> None:
    """``notices`` defaults to False: an informational notice is a transcript line, not an ACP notice."""
    from lifecycle.events import Informational

    ledger = SessionLedger("s1", negotiated=True, epoch="e1")
    assert (ledger.flow, ledger.turn, ledger.pending, ledger.active, ledger.runtime) == ("idle", None, False, (), 0)
    sent: list[dict[str, object]] = []
    ledger.process(Informational(content="Heads up", level="warning"), lambda m: sent.append(m.to_jsonrpc()))
    assert sent == [
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": {
            "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "**Warning:** Heads up"},
            "_meta": {"claudeCode": {"kind": "informational", "level": "warning"}}}}}
    ]


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
    # 300 settled turns: a retention of 28 bytes or more per turn (a small object kept per turn)
    # passes the 8 KiB margin. The mutation run repeats this test per mutant, so it is kept short.
    small, large = _session_after(10), _session_after(300)
    assert large <= 2 * max(small, 4096)


def test_a_refused_prompt_changes_nothing() -> None:
    s = Session()
    failed_turn(s, "t1")
    before = (s.ledger.flow, s.ledger.active, s.ledger.turn)
    with pytest.raises(LocalProtocolError):
        s.feed(PromptStarted(turn_id="t1"))  # refused: the id's failure is still active
    assert (s.ledger.flow, s.ledger.active, s.ledger.turn) == before
    with pytest.raises(LocalProtocolError):
        s.feed(PromptStarted(turn_id="t2"), PromptStarted(turn_id="t3"))  # a second concurrent prompt
    assert s.ledger.flow == "running" and s.ledger.turn is not None and s.ledger.turn.turn_id == "t2"


def test_adapter_events_after_an_error_result_leave_a_later_loss_a_connection_failure() -> None:
    # No timing guess any more (contract parity rule 6): an authenticate and a stray cancel between
    # the error result and a transport loss do not make the loss the SDK's ResultError.
    s = Session()
    failed_turn(s, "t1")
    s.feed(AuthStatus(ok=True), Cancelled())  # an ACP authenticate, a stray cancel
    s.feed(QueryError(message="ProcessTransport is not ready for writing"))
    assert [(r.id, r.category.value) for r in s.records] == [("t1:error", "limit"), ("s1:e1:1", "connection")]


def test_an_internal_error_after_claudes_failure_text_settles_with_claudes_failure() -> None:
    s = Session(negotiated=False)
    s.feed(PromptStarted(turn_id="t1"), synthetic("Invalid API key · Please run /login", "authentication_failed"))
    out = s.feed(InternalError())
    assert isinstance(out[-1], PromptErrorOut) and out[-1].code == -32000


# ---------------------------------------------------------------- exact wire output
# What the client receives, written out as JSON-RPC literals (FORMAT.md: the record at
# _meta.jetbrains.air.sessionFailure next to version 1; a turn-terminal failure on the
# PromptResponse with stopReason end_turn; everything else on a session_info_update; a legacy
# client gets the JSON-RPC error).

QUERY_ERROR_TITLE = "The connection to Claude Code was lost. Send a message to restart it, or start a new session."
WORKER_TITLE = "Claude Code shut down. Send a message to restart it, or start a new session."
MISSING_TITLE = "Claude Code ended the turn without a result. Try again."
INTERNAL_TITLE = "The adapter hit an internal error. Try again."
NO_MESSAGE_TITLE = "Claude Code reported an error without a message. Try again."


def rec(
    id_: str, revision: int, category: str, severity: str, title: str, actions: list[str], details: str | None = None
) -> dict[str, object]:
    out: dict[str, object] = {"id": id_, "revision": revision, "category": category, "severity": severity}
    out["title"] = title
    if details is not None:
        out["details"] = details
    out["actions"] = actions
    return out


def info(record: dict[str, object], session: str = "s1") -> dict[str, object]:
    meta = {"jetbrains": {"air": {"version": 1, "sessionFailure": record}}}
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": {"sessionUpdate": "session_info_update", "_meta": meta}},
    }


def ends_turn(turn: str, record: dict[str, object]) -> dict[str, object]:
    meta = {"jetbrains": {"air": {"version": 1, "sessionFailure": record}}}
    return {"jsonrpc": "2.0", "id": turn, "result": {"stopReason": "end_turn", "_meta": meta}}


def settled(turn: str, stop: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": turn, "result": {"stopReason": stop}}


def legacy_error(turn: str, code: int, message: str, error_kind: str | None = None) -> dict[str, object]:
    # The reference adapter's legacy errors (contract parity item 8): "Internal error: <Claude's
    # text>" with data {"errorKind": <SDK kind>} when there is one; -32000 with no data.
    error: dict[str, object] = {"code": code, "message": message}
    if error_kind is not None:
        error["data"] = {"errorKind": error_kind}
    return {"jsonrpc": "2.0", "id": turn, "error": error}


def agent_text(text: str) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk",
                                                 "content": {"type": "text", "text": text}}},
    }


def wire(s: Session, *events: object) -> list[dict[str, object]]:
    return [m.to_jsonrpc() for m in s.feed(*events)]  # type: ignore[arg-type]


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
