"""Spec: "Identity, revisions, and history", "Delivery surfaces", "Internal recovery" -- the ledger.

Each test reads like the spec sentence it checks.
"""


from __future__ import annotations

import gc
import tracemalloc

import pytest
from ledger_frames import (
    LIMIT,
    MISSING_TITLE,
    OK,
    RATE,
    agent_text,
    answer,
    ends_turn,
    error_result,
    failed_turn,
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
from lifecycle import ledger as ledger_module
from lifecycle.claude import from_sdk_exception
from lifecycle.conditions import Recovery

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
