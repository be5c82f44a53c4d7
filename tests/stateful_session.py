"""The stateful machine: a whole adapter session (one real ``SessionLedger``) driven by real-world
events, with a second model alongside: the client's projection (``ClientProjection``), fed with
exactly what was delivered. Not a test module: tests/test_stateful.py runs it as hypothesis's
random search, tests/test_stateful_mutants.py runs written-out programs of it.

Every rule is named after something that happens to an adapter; every invariant's docstring is the
spec sentence it checks. The "ci" profile (tests/conftest.py) is derandomised, so every run explores
the same examples; tests/test_stateful.py asks it for more examples than the default, and
``HYPOTHESIS_PROFILE=long`` runs a longer search by hand. A failure prints the shortest step list;
rule arguments are plain strings, numbers and booleans, so it can be pasted back as is.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from session_harness import Observed
from statemachine.exceptions import TransitionNotAllowed

from lifecycle import (
    ApiRetry,
    Assistant,
    AuthStatus,
    Cancelled,
    ClientProjection,
    InternalError,
    LocalProtocolError,
    MessagesReplaced,
    ModelFallback,
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
from lifecycle.answers import MachineAnswers
from lifecycle.conditions import Recovery
from lifecycle.events import ChildEnded, ChildRetry, Event, Outbound, RateLimitWindow
from lifecycle.history import load_history
from lifecycle.wire import MalformedRecordError, SessionFailure, Severity, read_record
from workshop.explorer import ledger_fingerprint

#: The incident machine's event that ends an incident under each recovery policy (the spec's
#: recovery policies; the event names are IncidentMachine's), written out here rather than taken
#: from ``lifecycle.answers.RECOVERY_EVENTS``, the table under test.
ENDED_BY: dict[Recovery, str] = {
    Recovery.REAL_MODEL_ANSWER: "real_model_answer",
    Recovery.CONFIRMED_ATTEMPT: "confirmed_attempt",
    Recovery.AUTH_STATUS: "auth_succeeded",
    Recovery.RUNTIME_REPLACED: "runtime_replaced",
    Recovery.NEVER: "superseded",
    Recovery.WINDOW_RESET: "window_reset",
}

SECRETS = (
    "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 4,
    "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNlY3JldA",
    "/home/alice/.config/claude/credentials.json",
    "ANTHROPIC_AUTH_TOKEN=tok_live_0123456789abcdef0123",
)
#: The distinctive part of each secret: none may reach a delivered title, details or error data.
MARKERS = ("A1b2C3d4E5f6G7h8I9j0", "c2lnbmF0dXJlLXNlY3JldA", "/home/alice", "tok_live_0123456789abcdef0123")

#: name -> (SDK error kind, Claude's user-facing text, is it an authentication failure)
FAILURES = {
    "rate_limit": ("rate_limit", "API Error: Request rejected (429) · Number of requests has exceeded your rate limit"),
    "usage_limit": ("rate_limit", "You've hit your 5-hour limit · resets 4:06pm (UTC)"),
    "auth": ("authentication_failed", "Invalid API key · Please run /login"),
    "overload": ("overloaded", "API Error: 529 Overloaded. This is a server-side issue, usually temporary."),
    "server_error": ("server_error", "API Error: 500 Internal server error"),
    "unknown_kind": ("brand_new_kind", "Something new went wrong"),
}
LIMIT = "You've hit your weekly limit · resets Dec 5, 1:06pm (UTC)"
#: Issue 49 point 2: a start-up failure's reason -> ((category, actions), the legacy code): issue 49's
#: table, and the reference's codes (dist/startup-failure.js); an unknown reason is ``service``.
STARTUP_FAILURES: dict[str, tuple[tuple[str, list[str]], int]] = {
    "gateway_signin_required": (("access", ["login"]), -32000),
    "consumer_terms_accept_on_web": (("access", ["login"]), -32603),
    "cwd_unavailable": (("request", []), -32602),
    "config_file_invalid": (("request", []), -32603),
    "proxy_invalid": (("service", ["retry"]), -32603),
    "a_reason_not_known_yet": (("service", ["retry"]), -32603),
}

#: Spec ("Internal recovery"): which events may end an incident under which policy. Anything
#: not listed ends nothing; a notice ends only when a newer notice supersedes it.
MAY_RECOVER: dict[str, frozenset[Recovery]] = {
    "claude_answers_for_real": frozenset({Recovery.REAL_MODEL_ANSWER, Recovery.CONFIRMED_ATTEMPT}),
    "the_turn_succeeds": frozenset({Recovery.CONFIRMED_ATTEMPT}),
    "auth_status_reports": frozenset({Recovery.AUTH_STATUS}),
    "the_runtime_is_replaced": frozenset({Recovery.RUNTIME_REPLACED}),
    "claude_falls_back_to_another_model": frozenset({Recovery.NEVER}),
    "claude_code_reports_a_window": frozenset({Recovery.WINDOW_RESET}),
    "a_window_reading_arrives": frozenset({Recovery.WINDOW_RESET}),
}

#: Issue 32: Claude Code's usage-limit windows as the explored reports name them, each with its
#: reset times (Unix seconds) and the title docs/acp-agent.md documents at each (UTC: the ledger's
#: default zone), "{share}" standing for the share used ("all" when the limit is reached).
WINDOWS: dict[str, dict[int, str]] = {
    "five_hour": {
        1796421723: "{share} of your 5-hour limit · resets 10:02 pm (UTC)",
        1796439723: "{share} of your 5-hour limit · resets 3:02 am (UTC)",  # the next period
    },
    "seven_day": {1796850123: "{share} of your weekly limit · resets Wed 9:02 pm (UTC)"},
}

class AdapterSession(RuleBasedStateMachine):
    """One ACP session of an adapter: the real ledger, and the client's projection of it."""

    #: The machine answers every ledger of a run shares, as an agent shares one across its
    #: sessions (so a real machine instance is asked each distinct question once per run, not once
    #: per example); ``tests/test_stateful_mutants.py`` gives each of its runs its own, asked of the
    #: machine classes as they are then (a mutant's). None: each ledger makes its own.
    answers: MachineAnswers | None = MachineAnswers()

    @initialize(negotiated=st.booleans())
    def open_session(self, negotiated: bool) -> None:
        self.negotiated = negotiated
        self._open(epoch="e1")
        note(f"negotiated={negotiated}")

    def _open(self, epoch: str) -> None:
        self.observed = Observed()
        self.ledger = SessionLedger(
            "s1", negotiated=self.negotiated, epoch=epoch, observer=self.observed, answers=self.answers
        )
        self.client = ClientProjection()
        self.fail_next = 0
        self.turns = getattr(self, "turns", 0)
        self.closed: set[str] = set()  # ids that left the active set: their records are history
        self.settled: set[str] = set()  # prompts answered (planned answers, delivered or not)
        self.turn_failure: str | None = None  # reference: Claude's failure seen in the running turn
        self.failure_message: str | None = None  # reference: the uuid of the message that carried it
        self.messages = getattr(self, "messages", 0)  # Claude's failure messages so far (their uuids)
        self.draining = False  # reference: a cancelled turn whose result has not arrived yet
        self.loss_shown = False  # reference: this runtime's loss reached the client as a record
        self.worker_stopping = False  # reference: this runtime's worker announced its shutdown
        self.step = "open_session"
        self.sent: list[tuple[Outbound, bool]] = []
        self.transitions: list[dict[str, Any]] = []
        self.before_active: dict[str, Any] = {}
        self.was_running = False
        self.expect_failure_settle = False
        self.expect_auth_code = False
        self.expect_code: int | None = None  # a legacy code other than those two (a start-up failure's)
        self.refused = False
        self.asked: list[str] = getattr(self, "asked", [])  # every question Claude Code asked, in order
        self.open_questions: set[str] = set()  # reference: asked in a running turn, not answered, not withdrawn
        self.opened: set[str] = set()  # asked while this ledger's turn ran (the client was asked)
        self.answered: set[str] = set()  # answers the client sent to this ledger, open or not
        self.withdrawn: list[str] = []  # every id SessionLedger.take_withdrawn handed out, in order
        self.late_answer: tuple[str, bool, bool] | None = None  # (tool, open before, changed the session)
        self.windows: dict[str, tuple[str, str, int]] = {}  # reference: window -> (id, title, reset) shown

    # ------------------------------------------------------------------ driving the ledger

    @property
    def running(self) -> bool:
        t = self.ledger.turn
        return t is not None and not t.settled

    def feed(self, step: str, *events: Event, runtime: int | None = None) -> bool:
        """Feed ``events`` as one step named ``step``; deliver each planned message (or fail it)."""
        self.step = step
        self.before_active = {a.id: a for a in self.ledger.active}
        self.was_running = self.running
        self.sent = []
        n = len(self.observed.transitions)
        accepted = True
        try:
            for ev in events:
                accepted = self.ledger.feed(ev, runtime=runtime) and accepted
                while (out := self.ledger.next_outbound()) is not None:
                    if self.fail_next:
                        self.fail_next -= 1
                        self.ledger.delivery_failed()
                        self.sent.append((out, False))
                    else:
                        self.client.receive(out.to_jsonrpc())
                        self.ledger.delivered()
                        self.sent.append((out, True))
                self._take_withdrawn()
        except TransitionNotAllowed as exc:
            # The ledger asks its machines before it plans or commits: whatever a real stream
            # carries, the incident machine never refuses what the ledger fires (a refusal means
            # the ledger and its machine disagree).
            raise AssertionError(f"{step}: the incident machine refused a transition: {exc}") from exc
        self.transitions = self.observed.transitions[n:]
        for out, _ in self.sent:
            if isinstance(out, (PromptResponseOut, PromptErrorOut)):
                assert out.turn_id not in self.settled, f"{out.turn_id} answered twice"
                self.settled.add(out.turn_id)
        self.closed |= {t["incident_id"] for t in self.transitions if t["target"] == "historical"}
        if self.sent:
            note(f"{step}: " + ", ".join(_describe(o, ok) for o, ok in self.sent))
        return accepted

    def _take_withdrawn(self) -> None:
        """After each event: the questions the ledger withdrew are exactly the ones that were open
        when the event made the turn leave ``in_turn`` (cancel, runtime loss, any settlement), each
        handed out once; none while the turn still runs."""
        taken = self.ledger.take_withdrawn()
        expected = set() if self.running else self.open_questions  # leaving in_turn withdraws every open question
        assert sorted(taken) == sorted(expected) and len(set(taken)) == len(taken), (self.step, taken, expected)
        assert not set(taken) & set(self.withdrawn), (self.step, taken, self.withdrawn)
        assert self.ledger.take_withdrawn() == (), self.step  # drained: a second call has nothing
        self.withdrawn.extend(taken)
        if not self.running:
            self.open_questions.clear()

    def _a_loss_is_a_connection_failure(self, *, required: bool = True) -> None:
        """"transport loss and worker shutdown remain active until runtime replacement", shown as a
        ``connection`` failure with ``new_session`` whatever came before (contract parity rule 6);
        once per runtime."""
        if not self.ledger.negotiated:
            return
        delivered = [o.record for o, ok in self.sent if ok and o.record is not None]
        if required and self.was_running:  # the running turn is settled with the loss, whatever Claude said
            settled = [o.record for o, ok in self.sent if ok and isinstance(o, PromptResponseOut)]
            assert all(r is not None and r.category.value == "connection" for r in settled), (self.step, settled)
        if self.loss_shown:
            return
        lost = [
            r for r in delivered if r.category.value == "connection" and [a.value for a in r.actions] == ["new_session"]
        ]
        if required and all(ok for _, ok in self.sent):
            assert lost, (self.step, self.sent)
        self.loss_shown = bool(lost)

    def _claude_failure(self, which: str, uuid: str | None = None) -> None:
        if self.running and self.turn_failure is None:
            self.turn_failure, self.failure_message = which, uuid

    def _settling(self, failure: bool, *, held: bool = True) -> None:
        """Reference: the step about to run ends the running turn, as a failure or not; ``held``:
        with Claude's failure seen in the turn, if any (a runtime loss is a connection failure
        whatever Claude said before: contract parity rule 6)."""
        self.expect_failure_settle = self.running and failure
        self.expect_auth_code = self.expect_failure_settle and held and self.turn_failure == "auth"
        self.expect_code = None

    # ------------------------------------------------------------------ rules (real-world events)

    @precondition(lambda self: not self.running)
    @rule()
    def a_prompt_starts(self) -> None:
        self.turns += 1
        self.turn_failure = self.failure_message = None
        self.draining = False
        self._settling(False)
        self.feed("a_prompt_starts", PromptStarted(turn_id=f"turn-{self.turns}"))

    @precondition(lambda self: self.running)
    @rule()
    def a_second_prompt_arrives_while_one_runs(self) -> None:
        self._settling(False)
        before = ledger_fingerprint(self.ledger)
        with pytest.raises(LocalProtocolError):
            self.feed("a_second_prompt_arrives_while_one_runs", PromptStarted(turn_id=f"turn-{self.turns + 1}"))
        assert ledger_fingerprint(self.ledger) == before  # "The ledger is unchanged"
        self.sent, self.transitions = [], []

    @precondition(lambda self: self.ledger.turn is not None and not self.running)
    @rule()
    def a_prompt_reuses_the_last_turn_id(self) -> None:
        """A client retries a prompt request with the same user-message UUID: refused, and the
        ledger is unchanged (``SessionLedger.feed``)."""
        turn = self.ledger.turn
        assert turn is not None
        self._settling(False)
        before = ledger_fingerprint(self.ledger)
        with pytest.raises(LocalProtocolError):
            self.feed("a_prompt_reuses_the_last_turn_id", PromptStarted(turn_id=turn.turn_id))
        self.sent, self.transitions = [], []
        assert ledger_fingerprint(self.ledger) == before

    @precondition(lambda self: self.running)
    @rule(attempt=st.integers(1, 10), status=st.sampled_from([429, 529, 500, 401, None]))
    def claude_retries_the_api(self, attempt: int, status: int | None) -> None:
        kind = {429: "rate_limit", 529: "overloaded", 500: "server_error", 401: "authentication_failed"}.get(
            status or 0, "unknown"
        )
        self._settling(False)
        self.feed("claude_retries_the_api", ApiRetry(attempt=attempt, max_retries=10, error_status=status, error=kind))

    @rule(which=st.sampled_from(sorted(FAILURES)), secret=st.sampled_from(("", *SECRETS)))
    def claude_reports_a_failure(self, which: str, secret: str) -> None:
        """Claude's synthetic failure message; outside a prompt it is a background incident."""
        kind, text = FAILURES[which]
        self._settling(False)
        self.messages += 1
        uuid = f"msg-{self.messages}"
        self._claude_failure(which, uuid)
        failure = Assistant(text=f"{text} {secret}".strip(), model="<synthetic>", error=kind, uuid=uuid)
        self.feed("claude_reports_a_failure", failure)
        if self.draining:  # "A cancelled turn makes no record" (contract parity rule 7)
            assert [o.record for o, _ in self.sent if o.record is not None] == [], self.sent
        self._a_cancelled_turn_shows_nothing()

    def _a_cancelled_turn_shows_nothing(self) -> None:
        """A client sees nothing of a cancelled turn after ``cancelled`` (issue 21, rule 8): no
        text of it is forwarded, legacy or capable, while it drains."""
        if self.draining:
            assert self.sent == [], (self.step, self.sent)

    @precondition(lambda self: self.running)
    @rule(which=st.sampled_from(sorted(FAILURES)), secret=st.sampled_from(("", *SECRETS)))
    def the_turn_fails(self, which: str, secret: str) -> None:
        """The SDK's usual pair: the synthetic failure message, then the error result."""
        kind, text = FAILURES[which]
        text = f"{text} {secret}".strip()
        self._claude_failure(which)
        self._settling(True)
        self.feed(
            "the_turn_fails",
            Assistant(text=text, model="<synthetic>", error=kind),
            Result(subtype="success", is_error=True, result=text, api_error_status=429, terminal_reason="api_error"),
        )

    @rule(secret=st.sampled_from(("", *SECRETS)))
    def the_result_is_an_error(self, secret: str) -> None:
        self._settling(True)
        text = f"API Error: 529 Overloaded {secret}".strip()
        self.feed("the_result_is_an_error", Result(subtype="success", is_error=True, result=text))
        self.draining = False  # a cancelled turn's result ends its draining

    @precondition(lambda self: self.running)
    @rule(
        subtype=st.sampled_from(["error_max_turns", "error_max_budget_usd", "error_during_execution"]),
        stop=st.sampled_from([None, "max_tokens"]),
    )
    def the_turn_hits_a_configured_limit(self, subtype: str, stop: str | None) -> None:
        """A budget or turn limit is `limit` (the spec's category table: "usage/spend limit,
        budget/turn limit"); "configured session-budget exhaustion: `new_session`", even with
        stop_reason max_tokens, which wins only for success and error_during_execution (issue 21
        rule 1)."""
        wins = stop == "max_tokens" and subtype == "error_during_execution"
        self._settling(not wins)
        held = self.turn_failure
        self.feed(
            "the_turn_hits_a_configured_limit",
            Result(subtype=subtype, is_error=True, errors=(f"Reached the limit {SECRETS[0]}",), stop_reason=stop),
        )
        answers = [o for o, _ in self.sent if isinstance(o, (PromptResponseOut, PromptErrorOut))]
        if wins:
            assert [getattr(o, "stop_reason", None) for o in answers] == ["max_tokens"], (self.step, answers)
        elif self.was_running and held is None and self.ledger.negotiated and subtype != "error_during_execution":
            shown = [(getattr(o, "stop_reason", None), o.record and o.record.category.value) for o in answers]
            assert shown == [("end_turn", "limit")], (self.step, answers)
            assert answers[0].record is not None and [a.value for a in answers[0].record.actions] == ["new_session"]

    @precondition(lambda self: self.running)
    @rule(which=st.sampled_from(["server_error", "overload"]))
    def the_provider_fails_after_retries_without_a_response(self, which: str) -> None:
        """Retries that got no HTTP response are `connection` warnings; the provider error that
        ends the turn is `service` with `retry` (the category table: "`overloaded`, `server_error`,
        unknown provider error" are `service`; issue 21 rule 3)."""
        kind, text = FAILURES[which]
        held = self.turn_failure
        self._claude_failure(which)
        self._settling(True)
        self.feed(
            "the_provider_fails_after_retries_without_a_response",
            ApiRetry(attempt=1, max_retries=10, error_status=None, error="unknown"),
            Assistant(text=text, model="<synthetic>", error=kind),
            Result(subtype="success", is_error=True, result=text, api_error_status=None, terminal_reason="api_error"),
        )
        if self.was_running and held is None and self.ledger.negotiated:
            settled = [o.record for o, _ in self.sent if isinstance(o, PromptResponseOut)]
            assert [(r.category.value, [a.value for a in r.actions]) for r in settled if r is not None] == [
                ("service", ["retry"])
            ], (self.step, settled)

    @precondition(lambda self: self.running)
    @rule()
    def the_result_asks_for_a_login(self) -> None:
        """A login request that arrives only as the error result's text is the synthetic login
        message: `access` with `login`, active until `auth_status`; legacy -32000 (issue 21 rule 7)."""
        held = self.turn_failure
        self._claude_failure("auth")
        self._settling(True)
        text = "OAuth token has expired · Run /login to sign in again"
        self.feed("the_result_asks_for_a_login", Result(subtype="success", is_error=True, result=text))
        if self.was_running and held is None and self.ledger.negotiated:
            settled = [o.record for o, _ in self.sent if isinstance(o, PromptResponseOut)]
            assert [(r.category.value, [a.value for a in r.actions]) for r in settled if r is not None] == [
                ("access", ["login"])
            ], (self.step, settled)

    @precondition(lambda self: self.running and self.turn_failure is None)
    @rule(which=st.sampled_from(sorted(STARTUP_FAILURES)))
    def claude_code_could_not_start(self, which: str) -> None:
        """Claude Code could not start (issue 49 point 2): its result's ``startup_failure_reason``
        settles the turn as the reason's row (sign-in, terms, organisation: `access` with `login`,
        active until `auth_status`; the working directory, a config file: `request`; the rest:
        `service` with `retry`); a legacy client gets the reference's code for the reason."""
        row, legacy = STARTUP_FAILURES[which]
        self._claude_failure("auth" if row[0] == "access" else which)
        self._settling(True)
        self.expect_code = legacy
        text = f"Claude Code could not start ({which})."
        self.feed("claude_code_could_not_start", Result(subtype="error_during_execution", is_error=True,
                                                        errors=(text,), startup_failure=which))  # fmt: skip
        if self.was_running and self.ledger.negotiated:
            settled = [o.record for o, _ in self.sent if isinstance(o, PromptResponseOut)]
            assert [(r.category.value, [a.value for a in r.actions], r.title) for r in settled if r is not None] == [
                (*row, text)
            ], (self.step, settled)

    @precondition(lambda self: self.running)
    @rule(held=st.booleans())
    def claude_replaces_a_message(self, held: bool) -> None:
        """CLI 2.1.337's ``supersedes`` (issue 49.3): a failure printed in a message Claude Code
        then replaced is superseded: the turn no longer holds it, and it settles by what comes
        next; replacing any other message changes nothing. Nothing is sent either way."""
        named = self.failure_message if held and self.failure_message else "msg-never-a-failure"
        self._settling(False)
        holding = self.ledger.flow == "failing"
        self.feed("claude_replaces_a_message", MessagesReplaced(uuids=("msg-unknown", named)))
        assert self.sent == [], (self.step, self.sent)
        if named == self.failure_message:
            self.turn_failure = self.failure_message = None
            assert self.ledger.flow == "running", (self.step, self.ledger.flow)
        else:
            assert (self.ledger.flow == "failing") == holding, (self.step, self.ledger.flow)

    @rule()
    def claude_answers_for_real(self) -> None:
        self._settling(False)
        self.feed("claude_answers_for_real", Assistant(text="Here is the answer.", model="claude-opus-5-5"))
        self._a_cancelled_turn_shows_nothing()

    @rule()
    def a_local_command_answers(self) -> None:
        self._settling(False)
        self.feed("a_local_command_answers", Assistant(text="No response requested.", model="<synthetic>"))
        self._a_cancelled_turn_shows_nothing()

    @rule(stop=st.sampled_from(["end_turn", "max_tokens", "refusal"]))
    def the_turn_succeeds(self, stop: str) -> None:
        # Claude's failure text decides the turn, unless the stop reason wins (max_tokens, refusal).
        self._settling(self.turn_failure is not None and stop == "end_turn")
        running = self.running
        self.feed("the_turn_succeeds", Result(subtype="success", is_error=False, result="done", stop_reason=stop))
        self.draining = False
        if running and stop == "end_turn" and self.turn_failure is None:  # none held (or it was replaced)
            answers = [o for o, _ in self.sent if isinstance(o, (PromptResponseOut, PromptErrorOut))]
            got = [(type(o).__name__, o.record) for o in answers]
            assert got == [("PromptResponseOut", None)], (self.step, answers)
        if running and stop != "end_turn":  # the stop reason wins over a held failure (rule 4)
            answers = [o for o, _ in self.sent if isinstance(o, (PromptResponseOut, PromptErrorOut))]
            assert [(type(o).__name__, getattr(o, "stop_reason", None), o.record) for o in answers] == [
                ("PromptResponseOut", stop, None)
            ], (self.step, answers)

    @precondition(lambda self: self.running)
    @rule(stop=st.sampled_from(["max_tokens", "refusal"]), which=st.sampled_from(["", *sorted(FAILURES)]))
    def the_turn_errs_but_its_stop_reason_wins(self, stop: str, which: str) -> None:
        """A result with ``stop_reason`` max_tokens or refusal settles the prompt with that stop
        reason and publishes no failure, even when ``is_error`` is true and Claude reported a
        failure before it (contract parity rule 4)."""
        self._settling(False)
        events: list[Event] = []
        if which:
            kind, text = FAILURES[which]
            self._claude_failure(which)
            events.append(Assistant(text=text, model="<synthetic>", error=kind))
        events.append(Result(subtype="success", is_error=True, result="declined", stop_reason=stop))
        self.feed("the_turn_errs_but_its_stop_reason_wins", *events)
        answers = [o for o, _ in self.sent if isinstance(o, (PromptResponseOut, PromptErrorOut))]
        assert [(type(o).__name__, getattr(o, "stop_reason", None), o.record) for o in answers] == [
            ("PromptResponseOut", stop, None)
        ]

    @rule(ok=st.booleans())
    def auth_status_reports(self, ok: bool) -> None:
        self._settling(False)
        self.feed("auth_status_reports", AuthStatus(ok=ok))

    @rule(secret=st.sampled_from(SECRETS))
    def the_query_iterator_throws(self, secret: str) -> None:
        self._settling(True, held=False)
        thrown = QueryError(message=f"ProcessTransport is not ready for writing {secret}")
        self.feed("the_query_iterator_throws", thrown)
        self.draining = False  # the stream is over
        self._a_loss_is_a_connection_failure()

    @rule()
    def the_worker_shuts_down_then_eof(self) -> None:
        self._settling(True, held=False)
        self.feed("the_worker_shuts_down_then_eof", WorkerShuttingDown(reason="idle"), QueryEnded())
        self.draining = False  # the stream is over
        self.worker_stopping = True  # until the runtime is replaced
        self._a_loss_is_a_connection_failure()

    @rule()
    def the_query_ends_without_a_result(self) -> None:
        running = self.running
        # Without Claude's failure and without an announced worker shutdown, the turn has no
        # result: a capable client gets the missing_result record, a legacy client end_turn, as
        # the reference answers it (issue 21, rule 6).
        missing = self.turn_failure is None and not self.worker_stopping
        self._settling(self.negotiated or not missing)
        self.feed("the_query_ends_without_a_result", QueryEnded())
        self.draining = False  # the stream is over
        if running and missing and not self.negotiated:
            answers = [o for o, _ in self.sent if isinstance(o, (PromptResponseOut, PromptErrorOut))]
            assert [(type(o).__name__, getattr(o, "stop_reason", None), o.record) for o in answers] == [
                ("PromptResponseOut", "end_turn", None)
            ], (self.step, answers)
        # An EOF is a loss only after the worker announced its shutdown (which a failed send left
        # unshown): then it shows the loss.
        self._a_loss_is_a_connection_failure(required=False)

    @rule()
    def the_adapter_hits_an_internal_error(self) -> None:
        self._settling(True)
        self.feed("the_adapter_hits_an_internal_error", InternalError())

    @rule(which=st.sampled_from(sorted(FAILURES)))
    def a_subagent_reports_a_failure(self, which: str) -> None:
        """Subagent traffic is not the top-level transcript: it changes nothing (it sends nothing,
        and the ledger, its held turn failure included, is as it was)."""
        kind, text = FAILURES[which]
        self._settling(False)
        before = ledger_fingerprint(self.ledger)
        subagent = Assistant(text=text, model="<synthetic>", error=kind, top_level=False)
        self.feed("a_subagent_reports_a_failure", subagent)
        assert self.sent == [] and ledger_fingerprint(self.ledger) == before

    @rule(retries=st.integers(0, 3), end=st.sampled_from(["failed", "cancelled", "completed", "unexplained"]))
    def a_subagent_fails_in_its_child_session(self, retries: int, end: str) -> None:
        """Issue 51.2: a child session's retries and end go to the child's own ledger (its session
        id, this session's epoch). The parent's ledger is as it was and sends nothing, whatever
        its turn is doing; the child's records are the spec's: "Session-scoped, replay-restored,
        warning, and background incidents use a `session_info_update`", under one id updated in
        place ("The same `id` with a higher `revision` updates that entry in place"); only a failed
        child's last record is an error, a cancelled child is not a failure; a legacy client gets
        none."""
        self.children = getattr(self, "children", 0) + 1
        child_id = f"child-{self.children}"
        child = SessionLedger(child_id, negotiated=self.negotiated, epoch="e1", answers=self.answers)
        before = ledger_fingerprint(self.ledger)
        records: list[SessionFailure] = []
        events: list[Event] = [
            ChildRetry(attempt=i + 1, max_retries=3, error_status=529, error="overloaded") for i in range(retries)
        ]
        text = f"Agent terminated early due to an API error: {SECRETS[0]}"
        events.append(ChildEnded(status=end, error=text))  # type: ignore[arg-type]
        for ev in events:
            child.feed(ev)
            while (out := child.next_outbound()) is not None:
                assert isinstance(out, SessionUpdateOut) and out.session_id == child_id, out
                assert out.update["sessionUpdate"] == "session_info_update" and out.record is not None
                records.append(out.record)
                child.delivered()
        assert ledger_fingerprint(self.ledger) == before  # the parent's turn never moves
        severities = ["warning"] * retries + ["error"] * (end == "failed") if self.negotiated else []
        assert [r.severity for r in records] == severities, (end, records)
        assert {r.id for r in records} <= {f"{child_id}:error"}
        assert [r.revision for r in records] == list(range(1, len(severities) + 1))
        assert all(SECRETS[0] not in r.title for r in records)
        assert end == "failed" or child.active == ()  # a retry warning ends silently with the child

    @rule()
    def the_runtime_is_replaced(self) -> None:
        self._settling(False)
        self.feed("the_runtime_is_replaced", RuntimeReplaced())
        self.loss_shown = False
        self.worker_stopping = False

    @rule(secret=st.sampled_from(("", *SECRETS)), model=st.sampled_from(("Opus 5", "Sonnet 5")))
    def claude_falls_back_to_another_model(self, secret: str, model: str) -> None:
        """"Consecutive updates for the same notice may reuse one id"; a notice with other text is a
        new occurrence (contract parity rule 3): an id is only ever revised with its own text."""
        self._settling(False)
        shown = {r.id: (r.title, r.details) for r in self.client.records}
        notices = [a.id for a in self.ledger.active if a.state == "noticed"]
        untracked = self.ledger.untracked_notices
        content = f"Switched to {model} because Opus 5.5 is not available {secret}".strip()
        self.feed("claude_falls_back_to_another_model", ModelFallback(content=content))
        # "not evidence that an older one recovered" (issue 21 rule 2): every notice stays active,
        # or, let go past the ledger's memory bound, is counted as still active
        gone = set(notices) - {a.id for a in self.ledger.active}
        assert len(gone) == self.ledger.untracked_notices - untracked, (notices, self.ledger.active)
        for out, ok in self.sent:
            rec = out.record
            if ok and rec is not None and rec.id in shown:
                assert shown[rec.id] == (rec.title, rec.details), (rec.id, shown[rec.id], rec.title)

    @precondition(lambda self: self.running)
    @rule()
    def the_client_cancels(self) -> None:
        self._settling(False)
        self.feed("the_client_cancels", Cancelled())
        self.draining = True
        answers = [o for o, _ in self.sent if isinstance(o, PromptResponseOut)]
        assert [(o.stop_reason, o.record) for o in answers] == [("cancelled", None)]

    @precondition(lambda self: self.running)
    @rule(which=st.sampled_from(sorted(FAILURES)), result=st.booleans())
    def the_client_cancels_then_the_turns_late_frames_arrive(self, which: str, result: bool) -> None:
        """After ``session/cancel`` the prompt ends ``cancelled``; the cancelled turn's late
        assistant error (and error result) create no record (contract parity rule 7)."""
        kind, text = FAILURES[which]
        self._settling(False)
        self.feed("the_client_cancels", Cancelled())
        answers = [o for o, _ in self.sent if isinstance(o, PromptResponseOut)]
        assert [(o.stop_reason, o.record) for o in answers] == [("cancelled", None)]
        late: list[Event] = [Assistant(text=text, model="<synthetic>", error=kind)]
        if result:
            late.append(Result(subtype="success", is_error=True, result=text))
        self.feed("the_cancelled_turns_late_frames_arrive", *late)
        assert self.sent == [], self.sent  # no record, no re-settling, no text (rules 7 and 8)
        self.draining = not result

    @precondition(lambda self: not self.running and not self.loss_shown and self.ledger.has_active)
    @rule()
    def the_runtime_dies_right_after_a_failed_turn(self) -> None:
        """A transport loss right after a turn's error result is not the SDK repeating that result:
        a connection failure until the runtime is replaced (contract parity rule 6)."""
        self._settling(True, held=False)
        self.feed("the_runtime_dies_right_after_a_failed_turn", QueryError(message="EPIPE"))
        self.draining = False
        self._a_loss_is_a_connection_failure()

    @precondition(lambda self: self.running and self.turn_failure is not None)
    @rule(worker=st.booleans())
    def the_runtime_dies_between_claudes_failure_and_its_result(self, worker: bool) -> None:
        """A transport loss (or a worker shutdown's EOF) between a failed turn's assistant error and
        its result settles the turn as a connection failure, not as Claude's failure (rule 6)."""
        self._settling(True, held=False)
        lost: list[Event] = (
            [WorkerShuttingDown(reason="idle"), QueryEnded()] if worker else [QueryError(message="EPIPE")]
        )
        self.feed("the_runtime_dies_between_claudes_failure_and_its_result", *lost)
        self.draining = False
        self._a_loss_is_a_connection_failure()

    @rule()
    def claude_asks_permission(self) -> None:
        """Claude Code's ``can_use_tool``: opened only in a running turn (the client is asked),
        refused without asking it otherwise (no turn, a cancelled turn still draining)."""
        self._settling(False)
        tool = f"toolu-{len(self.asked) + 1}"
        running = self.running
        self.asked.append(tool)
        self.feed("claude_asks_permission", PermissionAsked(tool_use_id=tool))
        if running:
            self.open_questions.add(tool)
            self.opened.add(tool)

    @precondition(lambda self: bool(self.asked))
    @rule(pick=st.integers(0, 15))
    def client_answers_permission(self, pick: int) -> None:
        """The client answers one of the questions asked so far (open, answered already, refused,
        or withdrawn when its turn left ``in_turn``)."""
        tool = self.asked[-1 - pick % len(self.asked)]
        self._settling(False)
        running, was_open = self.running, self.ledger.question_open(tool)
        before = ledger_fingerprint(self.ledger)
        self.feed("client_answers_permission", PermissionAnswered(tool_use_id=tool))
        self.late_answer = None if running else (tool, was_open, ledger_fingerprint(self.ledger) != before)
        self.open_questions.discard(tool)
        self.answered.add(tool)

    @rule(count=st.integers(1, 2))
    def the_next_send_fails(self, count: int) -> None:
        self.fail_next += count

    @precondition(lambda self: self.ledger.runtime > 0)
    @rule(which=st.sampled_from(["answer", "auth_ok", "result", "failure"]))
    def a_late_event_arrives_from_a_replaced_runtime(self, which: str) -> None:
        event: Event = {
            "answer": Assistant(text="stale", model="claude-opus-5-5"),
            "auth_ok": AuthStatus(ok=True),
            "result": Result(subtype="success", is_error=False, result="stale"),
            "failure": QueryError(message=SECRETS[0]),
        }[which]
        self._settling(False)
        def state() -> Any:
            return [(a.id, a.revision, a.state) for a in self.ledger.active], self.ledger.turn

        before = state()
        stale = self.ledger.runtime - 1
        assert self.feed("a_late_event_arrives_from_a_replaced_runtime", event, runtime=stale) is False
        assert self.sent == [] and state() == before

    @rule(
        window=st.sampled_from(sorted(WINDOWS)),
        status=st.sampled_from(["allowed_warning", "allowed", "rejected"]),
        share=st.sampled_from([0.8, 0.9, 0.95]),
        period=st.integers(0, 1),
    )
    def claude_code_reports_a_window(self, window: str, status: str, share: float, period: int) -> None:
        """Claude Code prints a ``rate_limit_event`` (at any time: in a turn, between turns, while a
        cancelled turn drains) for one of its usage-limit windows (issue 32)."""
        self._window_reading("claude_code_reports_a_window", window, status, share, period, None)

    @rule(
        window=st.sampled_from(sorted(WINDOWS)),
        status=st.sampled_from(["allowed_warning", "allowed", "rejected"]),
        share=st.sampled_from([0.8, 0.9, 0.95]),
        period=st.integers(0, 1),
        read=st.sampled_from(["ahead", "at_reset", "after_reset", "too_far"]),
    )
    def a_window_reading_arrives(self, window: str, status: str, share: float, period: int, read: str) -> None:
        """A window reading the agent stamped with the time it read it arrives (the meter's reading
        at a session's start, or a turn's ``rate_limit_event``: issue 52.1). Read an hour before its
        reset it is judged as Claude Code's report; read at or after its reset, its period is over:
        the window's warning ends and nothing is published (issue 52.5: a window whose reset is in
        the past is not titled as if it were upcoming); a reset more than 35 days after the
        reading is no reset time: ignored, nothing changes (issue 52.6)."""
        resets = sorted(WINDOWS[window])
        resets_at = resets[min(period, len(resets) - 1)]
        # 35 days (docs/acp-agent.md: "more than 35 days after it ... is ignored")
        at = {"ahead": -3600, "at_reset": 0, "after_reset": 60, "too_far": -(35 * 86400 + 1)}[read]
        self._window_reading("a_window_reading_arrives", window, status, share, period, resets_at + at)

    def _window_reading(
        self, step: str, window: str, status: str, share: float, period: int, observed_at: int | None
    ) -> None:
        resets = sorted(WINDOWS[window])
        resets_at = resets[min(period, len(resets) - 1)]
        flow, running = self.ledger.flow, self.running
        shown = self.windows.get(window)
        # Issue 52.6: a reading of a period older than the one shown (out of order), or whose reset
        # lies more than 35 days after it was read, is ignored.
        far = observed_at is not None and resets_at > observed_at + 35 * 86400
        stale = far or (shown is not None and resets_at < shown[2])
        past = not stale and observed_at is not None and resets_at <= observed_at
        ended = not stale and shown is not None and (status == "allowed" or resets_at > shown[2] or past)
        if ended:
            del self.windows[window]
        had = max(self.client.received.get(shown[0], [0])) if shown is not None else 0
        self._settling(False)
        event = RateLimitWindow(
            window=window, status=status, utilization=share, resets_at=resets_at, observed_at=observed_at
        )
        active = [a.id for a in self.ledger.active]
        self.feed(step, event)
        if stale:  # ignored: nothing sent, nothing ended
            assert self.sent == [] and [a.id for a in self.ledger.active] == active, (self.step, self.sent)
            return
        # never the turn's failure: no prompt settled, the turn's flow unchanged
        assert not any(isinstance(o, (PromptResponseOut, PromptErrorOut)) for o, _ in self.sent)
        assert (self.ledger.flow, self.running) == (flow, running)
        if ended:  # back to allowed, or a later reset: that entry ends silently (and stays in history)
            assert shown is not None and shown[0] in self.closed and self.client.record(shown[0]) is not None
        template = WINDOWS[window][resets_at]
        title = "You've used " + template.format(share="all" if status == "rejected" else f"{round(share * 100)}%")
        current = None if ended else shown
        quiet = status == "allowed" or (status == "rejected" and current is None) or (current or ("", ""))[1] == title
        quiet = quiet or past
        if not self.negotiated or quiet:
            assert self.sent == [], (self.step, self.sent)
            return
        ((out, ok),) = self.sent
        rec = out.record
        assert isinstance(out, SessionUpdateOut) and out.update["sessionUpdate"] == "session_info_update"
        assert rec is not None and (rec.category.value, rec.severity, rec.actions, rec.title) == (
            "limit", Severity.WARNING, (), title
        )
        if current is not None:  # a new share or the limit reached: the same entry, one revision up
            assert (rec.id, rec.revision) == (current[0], had + 1)
        else:
            assert rec.revision == 1 and rec.id.startswith("s1:") and not rec.id.endswith(":error")
        if ok:
            self.windows[window] = (rec.id, title, resets_at)

    @rule(recovered=st.booleans(), limits=st.integers(1, 3), orphan=st.booleans(), subagent=st.booleans())
    def the_client_loads_a_history_with_usage_limits(
        self, recovered: bool, limits: int, orphan: bool, subagent: bool = False
    ) -> None:
        """``subagent``: a subagent met the limit too (its message names the Agent call): not the
        top-level transcript, so no record of its own (issue 34, point 2)."""
        history: list[dict[str, Any]] = []
        for i in range(limits):
            if not (orphan and i == 0):
                history.append({"type": "user", "uuid": f"u{i}", "message": {"role": "user", "content": "go"}})
            synthetic = {"model": "<synthetic>", "content": LIMIT}
            if subagent:
                history.append({"type": "assistant", "uuid": f"sub{i}", "message": synthetic,
                                "parent_tool_use_id": "toolu_agent"})
            history.append({"type": "assistant", "uuid": f"m{i}", "message": synthetic})
        if recovered:
            history.append({"type": "assistant", "uuid": "a", "message": {"model": "claude-x", "content": "ok"}})
        # session/load opens a fresh adapter session: a new ledger, epoch and transcript view
        fail_next = self.fail_next
        self._open(epoch=f"load{self.turns}")
        self.fail_next = fail_next
        self._settling(False)
        self.feed("the_client_loads_a_history_with_usage_limits", load_history(history))
        records = [o.record for o, ok in self.sent if o.record is not None]
        if not self.negotiated:
            assert records == [] and self.ledger.active == ()
            return
        assert len(records) == limits  # every recognised occurrence is replayed as a typed record
        delivered = [o.record.id for o, ok in self.sent if ok and o.record is not None]
        # Only the latest the client received stays active, until a later real answer.
        expected = [] if recovered or not delivered else [delivered[-1]]
        assert [a.id for a in self.ledger.active] == expected

    # ------------------------------------------------------------------ invariants (spec sentences)

    @invariant()
    def revisions_strictly_increase_per_id(self) -> None:
        """The same ``id`` with a higher ``revision`` updates that entry in place without moving
        it: per id, the revisions a client receives strictly increase."""
        for rid, revs in self.client.received.items():
            assert all(b > a for a, b in itertools.pairwise(revs)), (rid, revs)

    @invariant()
    def the_same_or_a_lower_revision_changes_nothing(self) -> None:
        """The same or a lower revision is idempotently ignored by the client."""
        delivered = [o for o, ok in self.sent if ok and o.record is not None]
        if not delivered:
            return
        shown = [(r.id, r.revision, r.title) for r in self.client.records]
        probe = ClientProjection()
        for entry in self.client.entries:
            if entry.record is not None:
                probe.receive_meta(_meta(entry.record), carrier=entry.carrier or "session_info_update")
        last = delivered[-1]
        assert last.record is not None
        probe.receive(last.to_jsonrpc())
        stale = last.record.model_copy(update={"revision": max(1, last.record.revision - 1), "title": "stale"})
        probe.receive_meta(_meta(stale), carrier="session_info_update")
        assert [(r.id, r.revision, r.title) for r in probe.records] == shown

    @invariant()
    def a_later_occurrence_uses_a_new_id(self) -> None:
        """A later independent occurrence uses a new ``id``, even when its category and text are
        identical: nothing is published again for an incident that ended."""
        before_closed = self.closed - {t["incident_id"] for t in self.transitions if t["target"] == "historical"}
        for out, _ in self.sent:
            if out.record is not None:
                assert out.record.id not in before_closed, out.record.id

    @invariant()
    def different_ids_are_never_merged(self) -> None:
        """Different ids are never deduplicated by comparing title or category."""
        ids = [e.record.id for e in self.client.entries if e.record is not None]
        assert len(ids) == len(set(ids)) == len(self.client.received)

    @invariant()
    def every_record_validates_next_to_version_1(self) -> None:
        """The record is placed under ``_meta.jetbrains.air.sessionFailure`` next to ``version: 1``
        and validates against the wire model; the schema is identical on both carriers."""
        for out, _ in self.sent:
            msg = out.to_jsonrpc()
            if "error" in msg:
                meta = msg["error"].get("_meta")
            elif "result" in msg:
                meta = msg["result"].get("_meta")
            else:
                meta = msg["params"]["update"].get("_meta")
            try:
                parsed = read_record(meta)
            except MalformedRecordError as exc:  # pragma: no cover - shown by the assertion
                raise AssertionError(f"{out}: {exc}") from exc
            assert parsed == out.record
            if out.record is not None:
                assert meta["jetbrains"]["air"]["version"] == 1
                assert SessionFailure.model_validate(out.record.to_wire()) == out.record

    @invariant()
    def a_warning_never_settles_a_prompt(self) -> None:
        """A warning does not end a turn."""
        for out, _ in self.sent:
            if isinstance(out, PromptResponseOut) and out.record is not None:
                assert out.record.severity is Severity.ERROR
        if self.step in ("claude_retries_the_api", "claude_falls_back_to_another_model"):
            assert not any(isinstance(o, (PromptResponseOut, PromptErrorOut)) for o, _ in self.sent)
            assert self.running == self.was_running

    @invariant()
    def a_warning_has_no_actions(self) -> None:
        """``warning`` means the operation may still succeed and normally has no actions while
        recovery is in progress. Severity is always explicit."""
        for out, _ in self.sent:
            if out.record is not None and out.record.severity is Severity.WARNING:
                assert out.record.actions == (), out.record

    @invariant()
    def a_turn_terminal_failure_rides_the_prompt_response(self) -> None:
        """A turn-terminal failure is attached to the successful ACP ``PromptResponse`` in
        ``_meta``; the response uses ``stopReason: end_turn``."""
        if not self.negotiated:
            return
        answers = [o for o, _ in self.sent if isinstance(o, (PromptResponseOut, PromptErrorOut))]
        assert not any(isinstance(o, PromptErrorOut) for o in answers)
        for o in answers:
            assert isinstance(o, PromptResponseOut)
            if o.record is not None:
                assert o.stop_reason == "end_turn" and o.record.id == f"{o.turn_id}:error"
        if self.expect_failure_settle:
            assert len(answers) == 1 and answers[0].record is not None, (self.step, answers)

    @invariant()
    def everything_else_rides_session_info_update(self) -> None:
        """Session-scoped, replay-restored, warning, and background incidents use a
        ``session_info_update``."""
        for out, _ in self.sent:
            if out.record is not None and not isinstance(out, PromptResponseOut):
                assert isinstance(out, SessionUpdateOut) and out.update["sessionUpdate"] == "session_info_update"

    @invariant()
    def an_incident_leaves_the_active_set_only_through_its_own_policy(self) -> None:
        """Restored quota remains active until a real model answer; authentication until
        successful ``auth_status``; transport loss and worker shutdown until runtime replacement;
        other turn-scoped failures until a later confirmed attempt; notices are not cleared
        merely by generic success. Publishing another incident is not evidence that an older one
        recovered."""
        if self.step == "the_client_loads_a_history_with_usage_limits":
            return  # a fresh ledger: nothing was active before it
        after = {a.id for a in self.ledger.active}
        for rid, inc in self.before_active.items():
            if rid in after:
                continue
            assert inc.recovery in MAY_RECOVER.get(self.step, frozenset()), (rid, inc.recovery, self.step)
            ends = [t for t in self.transitions if t["incident_id"] == rid and t["target"] == "historical"]
            assert [t["event"] for t in ends] == [ENDED_BY[inc.recovery]], (rid, ends)

    @invariant()
    def historical_incidents_never_come_back_and_recovery_publishes_nothing(self) -> None:
        """Resolved records remain in transcript history. Recovery removes only the adapter's
        internal active state; it does not publish a clear tombstone."""
        after = {a.id for a in self.ledger.active}
        assert not (after & self.closed)
        left = set(self.before_active) - after
        assert not any(o.record is not None and o.record.id in left for o, _ in self.sent)
        if self.step in ("auth_status_reports", "the_runtime_is_replaced"):
            assert self.sent == []

    @invariant()
    def the_adapters_belief_is_what_the_client_received(self) -> None:
        """Whatever sends failed, the ledger's active set and revisions are exactly what the
        client received: a failed send leaves an incident as the client last saw it."""
        open_records = {r.id: r for r in self.client.records if r.id not in self.closed}
        active = {a.id: a for a in self.ledger.active}
        assert set(open_records) == set(active), (sorted(open_records), sorted(active))
        for rid, a in active.items():
            assert open_records[rid].revision == a.revision
            warning = a.state in ("retrying", "noticed", "warned")
            assert (open_records[rid].severity is Severity.WARNING) == warning

    @invariant()
    def a_legacy_client_gets_the_legacy_outcome(self) -> None:
        """If no capable client negotiated the extension, existing JSON-RPC errors and transcript
        text remain unchanged."""
        if self.negotiated:
            return
        for out, _ in self.sent:
            assert out.record is None and "jetbrains" not in json.dumps(out.to_jsonrpc())
        assert self.ledger.active == ()
        if self.expect_failure_settle:
            errors = [o for o, _ in self.sent if isinstance(o, PromptErrorOut)]
            code = self.expect_code or (-32000 if self.expect_auth_code else -32603)
            assert len(errors) == 1 and errors[0].code == code, errors

    @invariant()
    def a_question_is_open_only_while_its_turn_runs(self) -> None:
        """A question is open only while its turn runs: opened in a running turn, open until it is
        answered, and withdrawn when the turn leaves ``in_turn`` (cancel, runtime loss, any
        settlement); a question asked outside a running turn is never open."""
        is_open = {tool for tool in self.asked if self.ledger.question_open(tool)}
        assert is_open == self.open_questions, (self.step, sorted(is_open), sorted(self.open_questions))
        assert not is_open or self.running, (self.step, self.ledger.flow)

    @invariant()
    def a_question_is_open_iff_it_was_asked_not_answered_and_not_withdrawn(self) -> None:
        """The ledger's two views of a question agree: it is open exactly when it was asked in a
        running turn, has not been answered, and ``take_withdrawn`` has not handed it out."""
        is_open = {tool for tool in self.asked if self.ledger.question_open(tool)}
        expected = self.opened - self.answered - set(self.withdrawn)
        assert is_open == expected, (self.step, sorted(is_open), sorted(expected))

    @invariant()
    def permission_events_publish_nothing_and_change_no_incident(self) -> None:
        """Permission events are never incidents: a question and its answer publish nothing,
        settle no prompt and change no incident."""
        if self.step not in ("claude_asks_permission", "client_answers_permission"):
            return
        assert self.sent == [] and self.transitions == [], (self.step, self.sent, self.transitions)
        assert {a.id: a for a in self.ledger.active} == self.before_active
        assert self.running == self.was_running

    @invariant()
    def an_answer_after_its_turn_left_in_turn_is_not_honoured(self) -> None:
        """An answer after its turn left ``in_turn`` is not honoured: the question was withdrawn
        then, so the answer finds it closed and changes nothing."""
        if self.step != "client_answers_permission" or self.late_answer is None:
            return
        tool, was_open, changed = self.late_answer
        assert not was_open and not changed, (tool, was_open, changed)

    @invariant()
    def one_entry_per_window_and_it_is_the_windows_own(self) -> None:
        """Issue 32: one id per window (five-hour and weekly are two entries): the open entries
        the client shows for a window are at most one, and exactly the warnings the ledger holds
        active, which no event but the window's own reset ends (``MAY_RECOVER``)."""
        for label in ("5-hour", "weekly"):
            entries = [
                r.id
                for r in self.client.records
                if r.title.startswith("You've used ") and f"of your {label} limit" in r.title
                and r.id not in self.closed
            ]
            assert len(entries) <= 1, (label, entries)
        warned = sorted(a.id for a in self.ledger.active if a.state == "warned")
        assert warned == sorted(w[0] for w in self.windows.values()), (warned, self.windows)

    @invariant()
    def no_title_or_details_carries_an_injected_secret(self) -> None:
        """Raw thrown exceptions, stack traces, transport URLs, tokens, headers, environment
        values, and private paths are never used as titles."""
        for out, _ in self.sent:
            shown = ""
            if out.record is not None:
                shown = out.record.title + (out.record.details or "")
            if isinstance(out, PromptErrorOut):
                shown = out.message + json.dumps(out.data)
            assert not any(m in shown for m in MARKERS), shown


def _meta(record: SessionFailure) -> dict[str, Any]:
    return {"jetbrains": {"air": {"version": 1, "sessionFailure": record.to_wire()}}}


def _describe(out: Outbound, delivered: bool) -> str:
    what = type(out).__name__
    if out.record is not None:
        what += f"({out.record.id} r{out.record.revision} {out.record.severity.value})"
    elif isinstance(out, PromptResponseOut):
        what += f"({out.stop_reason})"
    elif isinstance(out, PromptErrorOut):
        what += f"({out.code})"
    return what if delivered else f"{what} [send failed]"
