"""Stateful tests: a whole adapter session driven by real-world events, with the client's view
(``ClientProjection``, fed with exactly what was delivered) alongside.

Each invariant's docstring is the spec sentence it checks. The "ci" profile (tests/conftest.py)
is derandomised; ``HYPOTHESIS_PROFILE=long`` runs a longer search by hand. A failure prints the
shortest step list.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from session_harness import Session

from lifecycle import (
    ApiRetry,
    Assistant,
    AuthStatus,
    Cancelled,
    ModelFallback,
    PromptErrorOut,
    PromptResponseOut,
    PromptStarted,
    QueryEnded,
    QueryError,
    Result,
    RuntimeReplaced,
    SessionUpdateOut,
    WorkerShuttingDown,
)
from lifecycle.conditions import Recovery
from lifecycle.incident import RECOVERY_EVENTS
from lifecycle.replay import load_history
from lifecycle.wire import read_record

SECRETS = (
    "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 4,
    "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNlY3JldA",
    "/home/alice/.config/claude/credentials.json",
    "ANTHROPIC_AUTH_TOKEN=tok_live_0123456789abcdef0123",
)
MARKERS = ("A1b2C3d4E5f6G7h8I9j0", "c2lnbmF0dXJlLXNlY3JldA", "/home/alice", "tok_live_0123456789abcdef0123")

FAILURES = {
    "rate_limit": ("rate_limit", "API Error: Request rejected (429) · Number of requests has exceeded your rate limit"),
    "usage_limit": ("rate_limit", "You've hit your 5-hour limit · resets 4:06pm (UTC)"),
    "auth": ("authentication_failed", "Invalid API key · Please run /login"),
    "overload": ("server_error", "API Error: 529 Overloaded. This is a server-side issue, usually temporary."),
    "unknown_kind": ("brand_new_kind", "Something new went wrong"),
}
LIMIT = "You've hit your weekly limit · resets Dec 5, 1:06pm (UTC)"


class AdapterSession(RuleBasedStateMachine):
    """One ACP session of an adapter: the real ledger, and the client's projection of it."""

    @initialize(negotiated=st.booleans())
    def open_session(self, negotiated: bool) -> None:
        self.negotiated = negotiated
        self.s = Session(negotiated=negotiated)
        self.turns = 0
        self.historical: set[str] = set()
        self.step_sent: list[Any] = []
        self.before: dict[str, Recovery] = {}
        self.before_revisions: dict[str, int] = {}
        note(f"negotiated={negotiated}")

    # ------------------------------------------------------------------ helpers

    @property
    def open_turn(self) -> bool:
        t = self.s.ledger.turn
        return t is not None and not t.settled

    def feed(self, *events: Any, runtime: int | None = None) -> None:
        self.before = {a.id: a.recovery for a in self.s.ledger.active}
        self.before_revisions = {a.id: a.revision for a in self.s.ledger.active}
        start = len(self.s.sent)
        n_transitions = len(self.s.observed.transitions)
        self.s.feed(*events, runtime=runtime)
        self.step_sent = self.s.sent[start:]
        self.step_transitions = self.s.observed.transitions[n_transitions:]
        for t in self.step_transitions:
            if t["target"] == "historical":
                self.historical.add(t["incident_id"])

    # ------------------------------------------------------------------ rules (real-world events)

    @precondition(lambda self: not self.open_turn)
    @rule()
    def a_prompt_starts(self) -> None:
        self.turns += 1
        self.feed(PromptStarted(turn_id=f"turn-{self.turns}"))

    @precondition(lambda self: self.open_turn)
    @rule(attempt=st.integers(1, 10), status=st.sampled_from([429, 529, 500, 401, None]))
    def claude_retries_the_api(self, attempt: int, status: int | None) -> None:
        kind = {429: "rate_limit", 529: "overloaded", 500: "server_error", 401: "authentication_failed"}.get(
            status or 0, "unknown"
        )
        self.feed(ApiRetry(attempt=attempt, max_retries=10, error_status=status, error=kind))

    @precondition(lambda self: self.open_turn)
    @rule(which=st.sampled_from(sorted(FAILURES)), secret=st.sampled_from(("", *SECRETS)))
    def the_turn_fails(self, which: str, secret: str) -> None:
        kind, text = FAILURES[which]
        text = f"{text} {secret}".strip()
        self.feed(
            Assistant(text=text, model="<synthetic>", error=kind),
            Result(subtype="success", is_error=True, result=text, api_error_status=429),
        )

    @precondition(lambda self: self.open_turn)
    @rule(subtype=st.sampled_from(["error_max_turns", "error_max_budget_usd", "error_during_execution"]))
    def the_turn_hits_a_configured_limit(self, subtype: str) -> None:
        self.feed(Result(subtype=subtype, is_error=True, errors=(f"Reached the limit {SECRETS[0]}",)))

    @rule()
    def claude_answers_for_real(self) -> None:
        self.feed(Assistant(text="Here is the answer.", model="claude-opus-5-5"))

    @rule()
    def a_local_command_answers(self) -> None:
        self.feed(Assistant(text="No response requested.", model="<synthetic>"))

    @precondition(lambda self: self.open_turn)
    @rule(stop=st.sampled_from(["end_turn", "max_tokens", "refusal"]))
    def the_turn_succeeds(self, stop: str) -> None:
        self.feed(Result(subtype="success", is_error=False, result="done", stop_reason=stop))

    @rule(ok=st.booleans())
    def auth_status_reports(self, ok: bool) -> None:
        self.feed(AuthStatus(ok=ok))

    @rule(secret=st.sampled_from(SECRETS))
    def the_query_iterator_throws(self, secret: str) -> None:
        self.feed(QueryError(message=f"ProcessTransport is not ready for writing {secret}"))

    @rule()
    def the_worker_shuts_down_then_eof(self) -> None:
        self.feed(WorkerShuttingDown(reason="idle"), QueryEnded())

    @rule()
    def the_runtime_is_replaced(self) -> None:
        self.feed(RuntimeReplaced())

    @rule(secret=st.sampled_from(("", *SECRETS)))
    def claude_falls_back_to_another_model(self, secret: str) -> None:
        self.feed(ModelFallback(content=f"Switched to Opus 5 because Opus 5.5 is not available {secret}".strip()))

    @precondition(lambda self: self.open_turn)
    @rule()
    def the_client_cancels(self) -> None:
        self.feed(Cancelled())

    @rule()
    def the_next_send_fails(self) -> None:
        self.s.fail_next += 1

    @precondition(lambda self: self.s.ledger.runtime > 0)
    @rule()
    def a_late_event_arrives_from_a_replaced_runtime(self) -> None:
        accepted = self.s.ledger.process(
            Assistant(text="stale", model="claude-opus-5-5"), lambda m: None, runtime=self.s.ledger.runtime - 1
        )
        assert accepted is False
        self.step_sent = []

    @rule(recovered=st.booleans(), limits=st.integers(1, 3))
    def the_client_loads_a_history_with_usage_limits(self, recovered: bool, limits: int) -> None:
        history: list[dict[str, Any]] = []
        for i in range(limits):
            history.append({"type": "user", "uuid": f"u{i}", "message": {"role": "user", "content": "go"}})
            history.append(
                {"type": "assistant", "uuid": f"m{i}", "message": {"model": "<synthetic>", "content": LIMIT}}
            )
        if recovered:
            history.append({"type": "assistant", "uuid": "a", "message": {"model": "claude-x", "content": "ok"}})
        # session/load opens a fresh adapter session (a new epoch and a new transcript view)
        self.s = Session(negotiated=self.negotiated, epoch=f"load{self.turns}")
        self.historical = set()
        self.feed(load_history(history))
        expect_active = 0 if recovered or not self.negotiated else 1
        # the delivery of the latest may have failed: then at most one is active
        assert len(self.s.ledger.active) <= expect_active

    # ------------------------------------------------------------------ invariants (spec sentences)

    @invariant()
    def revisions_strictly_increase_per_id(self) -> None:
        """The same id with a higher revision updates the entry; the same or a lower revision is
        ignored -- so what a client receives for one id is 1, 2, 3, ... with no gap."""
        for rid, revs in self.s.client.received.items():
            assert revs == list(range(1, len(revs) + 1)), (rid, revs)
        assert self.s.client.ignored == 0

    @invariant()
    def an_id_is_never_reused_and_different_ids_never_merge(self) -> None:
        """A later independent occurrence uses a new id; different ids are never deduplicated."""
        for out in self.step_sent:
            if out.record is not None and out.record.id in self.historical:
                # only allowed for the record whose own delivery made it historical in this step
                assert not any(
                    t["incident_id"] == out.record.id and t["source"] == "historical" for t in self.step_transitions
                )
                assert out.record.id not in self.before or out.record.revision > self.before_revisions.get(
                    out.record.id, 0
                )
        ids = [e.record.id for e in self.s.client.entries if e.record is not None]
        assert len(ids) == len(set(ids))

    @invariant()
    def every_record_is_valid_and_next_to_version_1(self) -> None:
        """The record is placed under _meta.jetbrains.air.sessionFailure, next to version 1."""
        for out in self.step_sent:
            msg = out.to_jsonrpc()
            if "error" in msg:
                continue
            meta = msg["result"].get("_meta") if "result" in msg else msg["params"]["update"].get("_meta")
            assert read_record(meta) == out.record
            if out.record is not None:
                assert meta["jetbrains"]["air"]["version"] == 1

    @invariant()
    def warnings_never_settle_and_terminal_failures_ride_the_prompt_response(self) -> None:
        """A warning does not end a turn; a turn-terminal failure is attached to the PromptResponse
        with stopReason end_turn; everything else uses session_info_update."""
        for out in self.step_sent:
            if isinstance(out, PromptResponseOut) and out.record is not None:
                assert out.record.severity.value == "error" and out.stop_reason == "end_turn"
                assert out.record.id == f"{out.turn_id}:error"
            if isinstance(out, SessionUpdateOut) and out.record is not None:
                assert out.update["sessionUpdate"] == "session_info_update"

    @invariant()
    def incidents_leave_only_through_their_own_recovery_and_recovery_publishes_nothing(self) -> None:
        """Recovery removes only the internal active state; it does not publish a tombstone; an
        incident stops being active only on the event its recovery policy names."""
        after = {a.id for a in self.s.ledger.active}
        sent_ids = {o.record.id for o in self.step_sent if o.record is not None}
        for rid, policy in self.before.items():
            if rid in after:
                continue
            ends = [t for t in self.step_transitions if t["incident_id"] == rid and t["target"] == "historical"]
            assert len(ends) == 1, (rid, ends)
            assert ends[0]["event"] in (RECOVERY_EVENTS[policy], "superseded"), (rid, policy, ends)
            if ends[0]["event"] != "superseded":
                assert rid not in sent_ids, "a recovery published something"
        assert not (after & self.historical)

    @invariant()
    def the_adapters_belief_is_what_the_client_received(self) -> None:
        """Whatever sends failed, the ledger's revisions and active set match the client's view."""
        for a in self.s.ledger.active:
            rec = self.s.client.record(a.id)
            assert rec is not None and rec.revision == a.revision, (a, rec)

    @invariant()
    def legacy_clients_never_see_the_extension(self) -> None:
        """If no capable client negotiated the extension, JSON-RPC errors and transcript text remain."""
        if self.negotiated:
            return
        for out in self.step_sent:
            assert "jetbrains" not in json.dumps(out.to_jsonrpc())
            assert out.record is None
        assert self.s.ledger.active == ()

    @invariant()
    def failures_settle_legacy_prompts_with_json_rpc_errors(self) -> None:
        for out in self.step_sent:
            if isinstance(out, PromptErrorOut):
                assert not self.negotiated and out.code in (-32603, -32000)

    @invariant()
    def no_title_or_details_carries_an_injected_secret(self) -> None:
        """Raw thrown exceptions, tokens, headers, environment values and private paths are never
        used as titles."""
        for out in self.step_sent:
            if out.record is not None:
                shown = out.record.title + (out.record.details or "")
                assert not any(m in shown for m in MARKERS), shown
            if isinstance(out, PromptErrorOut):
                assert not any(m in json.dumps(out.data) for m in MARKERS)


TestAdapterSession = AdapterSession.TestCase
