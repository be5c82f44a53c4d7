"""``workshop check --mutants``: the explorer's non-vacuity self-test.

Rules
-----
Each mutant seeds one realistic bug into the *real* code (the ledger, the way it asks the turn
machine, the incident machine, the client projection, the title pipeline) by monkeypatching it
for the duration of one exploration, and is restored afterwards, whatever happens. A mutant is
caught when the explorer reports a violation; the self-test fails unless every mutant is caught,
and reports which invariant caught each one and the shortest trace that shows it. Mutants wrap
the real functions rather than copy them, so they keep working while the core evolves; a mutant
whose target no longer exists fails loudly (it is reported as not applicable, which fails the
self-test).

This is the only place where core code is patched.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from lifecycle import client as client_mod
from lifecycle import delivery_surfaces as surfaces_mod
from lifecycle import intents
from lifecycle import ledger as ledger_mod
from lifecycle import titles as titles_mod
from lifecycle.conditions import CONDITIONS, Recovery, classify_assistant_error
from lifecycle.events import (
    ApiRetry,
    Assistant,
    AuthStatus,
    Cancelled,
    HistoryLoaded,
    MessagesReplaced,
    ModelFallback,
    PermissionAsked,
    Result,
)
from lifecycle.ids import turn_error_id
from lifecycle.incident import IncidentMachine
from lifecycle.wire import Action, Category, SessionFailure, Severity, attach_record

from .explorer import (
    INVARIANTS,
    Bounds,
    Explorer,
    Violation,
    check_escape,
    run_path,
)

__all__ = ["MUTANTS", "Mutant", "MutantReport", "MutantResult", "render_mutants_report", "run_mutants"]


class _Patches:
    """Attribute and mapping patches, undone in reverse order."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []

    def attr(self, obj: Any, name: str, value: Any) -> None:
        if not hasattr(obj, name):
            raise AttributeError(f"{getattr(obj, '__name__', obj)!r} has no attribute {name!r} to mutate")
        old = getattr(obj, name)
        setattr(obj, name, value)
        self._undo.append(lambda: setattr(obj, name, old))

    def item(self, mapping: MutableMapping[Any, Any], key: Any, value: Any) -> None:
        if key not in mapping:
            raise KeyError(f"{key!r} is not there to mutate")
        old = mapping[key]
        mapping[key] = value
        self._undo.append(lambda: mapping.__setitem__(key, old))

    def undo(self) -> None:
        while self._undo:
            self._undo.pop()()


@contextmanager
def applied(mutant: Mutant) -> Iterator[None]:
    """Apply ``mutant`` for the duration of the block."""
    patches = _Patches()
    try:
        mutant.apply(patches)
        yield
    finally:
        patches.undo()


@dataclass(frozen=True, slots=True)
class Mutant:
    name: str
    bug: str
    apply: Callable[[_Patches], None]


def _handler(event_type: type) -> Callable[..., None]:
    return ledger_mod._HANDLERS[event_type]


def _outbox_of(turns: Any) -> Any:
    """The outbox of the ledger that holds ``turns`` (a seeded bug reaches past the turn's port)."""
    return turns._port._ledger._outbox


# ---------------------------------------------------------------------------- the bugs


def _recovery_on_wrong_event(p: _Patches) -> None:
    orig = _handler(AuthStatus)

    def on_auth(self: Any, ev: AuthStatus) -> None:
        orig(self, ev)
        if ev.ok:  # "a successful login also fixes the transport"
            self._recover(Recovery.RUNTIME_REPLACED)

    p.item(ledger_mod._HANDLERS, AuthStatus, on_auth)


def _with_revision(out: Any, revision: int) -> Any:
    rec: SessionFailure = out.record.model_copy(update={"revision": revision})
    return dataclasses.replace(out, record=rec)


def _revision_not_bumped(p: _Patches) -> None:
    orig = ledger_mod.SessionLedger._materialise

    def materialise(self: Any, intent: Any) -> Any:
        out = orig(self, intent)
        if out is not None and out.record is not None and out.record.revision > 1:
            return _with_revision(out, out.record.revision - 1)  # "publish the current revision"
        return out

    p.attr(ledger_mod.SessionLedger, "_materialise", materialise)


def _tombstone_on_recovery(p: _Patches) -> None:
    orig = ledger_mod.SessionLedger._recover

    def recover(self: Any, policy: Recovery, *, exclude_turn: str | None = None) -> None:
        before = dict(self._active)
        orig(self, policy, exclude_turn=exclude_turn)
        for rid, inc in before.items():
            if rid not in self._active:  # "tell the client it is resolved"
                tomb = SessionFailure(
                    id=rid,
                    revision=inc.revision + 1,
                    category=inc.category,
                    severity=Severity.WARNING,
                    title="Resolved.",
                    actions=(),
                )
                update = {"sessionUpdate": "session_info_update", "_meta": attach_record(None, tomb)}
                self._outbox.append(intents.Forward(update))

    p.attr(ledger_mod.SessionLedger, "_recover", recover)


def _in_turn(ledger: Any) -> bool:
    """The ledger's turn is running (its flow is one of ``SessionFlow.in_turn``'s leaves)."""
    view = ledger.turn
    return view is not None and not view.settled


def _warning_settles_prompt(p: _Patches) -> None:
    orig = _handler(ApiRetry)

    def on_retry(self: Any, ev: ApiRetry) -> None:
        running = _in_turn(self)
        orig(self, ev)
        turns = self._turns
        if running and self._negotiated and turns._turn is not None:  # "a retry warning answers the prompt"
            turns._flow = "idle"
            self._outbox.append(intents.Settle(turns._turn.turn_id, "end_turn"))

    p.item(ledger_mod._HANDLERS, ApiRetry, on_retry)


def _legacy_gets_meta(p: _Patches) -> None:
    orig = _handler(ModelFallback)

    def on_fallback(self: Any, ev: ModelFallback) -> None:
        negotiated = self._negotiated
        self._negotiated = True  # "forgot the negotiation check"
        try:
            orig(self, ev)
        finally:
            self._negotiated = negotiated

    p.item(ledger_mod._HANDLERS, ModelFallback, on_fallback)


def _sequence_not_advanced(p: _Patches) -> None:
    def next_seq(self: Any) -> int:
        return 1  # "the sequence is per epoch, so 1 is unique" -- it is not

    p.attr(ledger_mod.SessionLedger, "_next_seq", next_seq)


def _commit_on_failed_send(p: _Patches) -> None:
    orig = ledger_mod.SessionLedger.delivery_failed

    def delivery_failed(self: Any) -> None:
        intent = self._head_intent
        orig(self)
        if isinstance(intent, intents.Publish):  # "we planned it, so it happened"
            self._commit(intent)

    p.attr(ledger_mod.SessionLedger, "delivery_failed", delivery_failed)


def _quota_guard_wrong(p: _Patches) -> None:
    def recovers_on_real_model_answer(self: Any) -> bool:
        return bool(self.model.recovery is Recovery.CONFIRMED_ATTEMPT)  # a copy-paste slip

    p.attr(IncidentMachine, "recovers_on_real_model_answer", recovers_on_real_model_answer)


def _synthetic_answer_recovers(p: _Patches) -> None:
    orig = _handler(Assistant)

    def on_assistant(self: Any, ev: Assistant) -> None:
        if ev.synthetic and ev.error is None:  # "any assistant text is an answer"
            ev = dataclasses.replace(ev, model="claude-any")
        orig(self, ev)

    p.item(ledger_mod._HANDLERS, Assistant, on_assistant)


def _stale_runtime_accepted(p: _Patches) -> None:
    orig = ledger_mod.SessionLedger.feed

    def feed(self: Any, event: Any, *, runtime: int | None = None) -> bool:
        return bool(orig(self, event))  # "the runtime tag is informational"

    p.attr(ledger_mod.SessionLedger, "feed", feed)


def _terminal_failure_on_session_update(p: _Patches) -> None:
    orig = surfaces_mod.TurnFlow._settle

    def settle_failure(self: Any, turn: Any, *args: Any, **kwargs: Any) -> None:
        orig(self, turn, *args, **kwargs)
        outbox = _outbox_of(self)
        last = outbox[-1] if outbox else None
        if isinstance(last, intents.Publish) and last.prompt_turn is not None:
            last.prompt_turn = None  # "show it like every other record, then answer the prompt"
            outbox.append(intents.Settle(turn.turn_id, "end_turn"))

    p.attr(surfaces_mod.TurnFlow, "_settle", settle_failure)


def _replay_ignores_later_answer(p: _Patches) -> None:
    orig = _handler(HistoryLoaded)

    def on_history(self: Any, ev: HistoryLoaded) -> None:
        orig(self, ev)
        kept = [i for i in self._outbox if not isinstance(i, intents.Recover)]  # "replay is display only"
        self._outbox.clear()
        self._outbox.extend(kept)

    p.item(ledger_mod._HANDLERS, HistoryLoaded, on_history)


def _notice_cleared_by_success(p: _Patches) -> None:
    orig = _handler(Result)

    def on_result(self: Any, ev: Result) -> None:
        orig(self, ev)
        if not ev.is_error:  # "a successful turn clears every warning"
            for inc in [i for i in self._active.values() if i.state == "noticed"]:
                self._fire(inc, "superseded")
                del self._active[inc.id]

    p.item(ledger_mod._HANDLERS, Result, on_result)


def _client_applies_stale_revision(p: _Patches) -> None:
    orig = client_mod.ClientProjection.receive_meta

    def receive_meta(self: Any, meta: object, *, carrier: str) -> None:
        raw = client_mod._raw_record(meta)
        at = self._index.get(raw.get("id")) if raw is not None else None
        if at is not None:  # "the newest message wins" instead of the highest revision
            current = self.entries[at]
            self.entries[at] = client_mod.Entry(
                kind=current.kind, record=current.record.model_copy(update={"revision": 0}), carrier=current.carrier
            )
            result = orig(self, meta, carrier=carrier)
            if self.entries[at].record.revision == 0:  # nothing applied: restore what was shown
                self.entries[at] = current
            return result
        return orig(self, meta, carrier=carrier)

    p.attr(client_mod.ClientProjection, "receive_meta", receive_meta)


def _titles_not_redacted(p: _Patches) -> None:
    p.attr(titles_mod, "redact", lambda text: text)  # "Claude's text is safe to show as is"


def _cancel_answers_end_turn(p: _Patches) -> None:
    orig = _handler(Cancelled)

    def on_cancel(self: Any, ev: Cancelled) -> None:
        orig(self, ev)
        last = self._outbox[-1] if self._outbox else None
        if isinstance(last, intents.Settle):
            last.stop_reason = "end_turn"  # "the turn ended"

    p.item(ledger_mod._HANDLERS, Cancelled, on_cancel)


def _late_result_settles_again(p: _Patches) -> None:
    orig = _handler(Result)

    def on_result(self: Any, ev: Result) -> None:
        turn = self._turns._turn
        if turn is not None and not _in_turn(self):  # "every result answers its prompt"
            self._outbox.append(intents.Settle(turn.turn_id, "end_turn"))
            return
        orig(self, ev)

    p.item(ledger_mod._HANDLERS, Result, on_result)


def _warning_recommends_retry(p: _Patches) -> None:
    orig = _handler(ApiRetry)

    def on_retry(self: Any, ev: ApiRetry) -> None:
        orig(self, ev)
        last = self._outbox[-1] if self._outbox else None
        if isinstance(last, intents.Publish) and last.transition == "warn":  # "offer a retry button"
            last.condition = dataclasses.replace(last.condition, actions=(Action.RETRY,))

    p.item(ledger_mod._HANDLERS, ApiRetry, on_retry)


# -- the contract-parity rules (the prompt turn as ``SessionFlow`` decides it)


def _is_error_beats_stop_reason(p: _Patches) -> None:
    orig: Callable[..., str] = getattr(surfaces_mod, "result_event")  # noqa: B009 (not exported)

    def result_event(is_error: object, stop_reason: object, *rest: object) -> str:
        if is_error:  # "an error is an error, whatever the stop reason"
            return "result_error"
        return orig(is_error, stop_reason, *rest)

    p.attr(surfaces_mod, "result_event", result_event)


def _held_failure_beats_stop_reason(p: _Patches) -> None:
    orig = surfaces_mod.TurnFlow._step_turn

    def step_turn(self: Any, event: str) -> Any:
        if event == "result_stop" and self._flow == "failing":  # "Claude already said what failed"
            event = "result_error"
        return orig(self, event)

    p.attr(surfaces_mod.TurnFlow, "_step_turn", step_turn)


def _loss_after_error_result_swallowed(p: _Patches) -> None:
    orig = surfaces_mod.TurnFlow._runtime_lost

    def runtime_lost(self: Any, *args: Any, **kwargs: Any) -> None:
        turn = self._turn
        if self._flow == "idle" and turn is not None and self._port.incident(turn_error_id(turn.turn_id)) is not None:
            # "right after an error result, the exception is the SDK repeating it" (the old timing guess)
            self._worker_stopping = False
            return
        orig(self, *args, **kwargs)

    p.attr(surfaces_mod.TurnFlow, "_runtime_lost", runtime_lost)


def _held_failure_beats_loss(p: _Patches) -> None:
    orig = surfaces_mod.TurnFlow._step_turn

    def step_turn(self: Any, event: str) -> Any:
        if event == "transport_lost" and self._flow == "failing":  # "Claude's own text is the better title"
            event = "stream_ended"
        return orig(self, event)

    p.attr(surfaces_mod.TurnFlow, "_step_turn", step_turn)


def _cancelled_turn_failure_published(p: _Patches) -> None:
    orig = _handler(Assistant)

    def on_assistant(self: Any, ev: Assistant) -> None:
        draining = self._turns._flow == "cancelled"
        orig(self, ev)
        if draining and ev.top_level and ev.error is not None:  # "Claude said it failed: show it"
            self._background_failure(classify_assistant_error(ev.error, ev.text), ev.text, "error_result")

    p.item(ledger_mod._HANDLERS, Assistant, on_assistant)


def _notice_reused_whatever_its_text(p: _Patches) -> None:
    orig = ledger_mod.SessionLedger._publish_notice

    def publish_notice(self: Any, row: Any, title: str, details: Any) -> None:
        last = self._last_notice
        if last is not None and last[0] == self._last_record_id:  # "consecutive is enough"
            self._last_notice = (last[0], title, details)
        orig(self, row, title, details)

    p.attr(ledger_mod.SessionLedger, "_publish_notice", publish_notice)


def _newer_notice_retires_older(p: _Patches) -> None:
    orig = ledger_mod.SessionLedger._commit

    def commit(self: Any, intent: Any) -> None:
        older = [i for i in self._active.values() if i.state == "noticed" and i.id != intent.incident_id]
        orig(self, intent)
        if intent.transition == "notify":  # "the newest notice is the one that matters"
            for old in older:
                if self._active.pop(old.id, None) is not None:
                    self._fire(old, "superseded")

    p.attr(ledger_mod.SessionLedger, "_commit", commit)


# -- issue 21: rules 1, 2, 3 and 7


def _max_tokens_beats_limit(p: _Patches) -> None:
    orig: Callable[..., str] = getattr(surfaces_mod, "result_event")  # noqa: B009 (not exported)

    def result_event(is_error: object, stop_reason: object, subtype: object = None, text: object = None) -> str:
        return orig(is_error, stop_reason, "success", text)  # "max_tokens wins, whatever the subtype"

    p.attr(surfaces_mod, "result_event", result_event)


def _notices_forgotten_past_a_small_bound(p: _Patches) -> None:
    p.attr(ledger_mod, "MAX_ACTIVE_NOTICES", 1)  # "one notice is all a client needs"
    p.attr(ledger_mod.SessionLedger, "untracked_notices", property(lambda self: 0))


def _unreachable_api_is_connection(p: _Patches) -> None:
    orig = surfaces_mod.TurnFlow._settle

    def settle(self: Any, turn: Any, cond: Any, *args: Any, **kwargs: Any) -> None:
        warning = self._port.incident(turn_error_id(turn.turn_id))  # the turn's retry warning, if any
        retried = warning is not None and warning.state == "retrying"
        if retried and cond.key in ("server_error", "overloaded", "unknown"):  # "the API was unreachable"
            cond = dataclasses.replace(cond, category=Category.CONNECTION)
        orig(self, turn, cond, *args, **kwargs)

    p.attr(surfaces_mod.TurnFlow, "_settle", settle)


def _login_result_is_service(p: _Patches) -> None:
    orig: Callable[..., Any] = getattr(surfaces_mod, "classify_result")  # noqa: B009 (not exported)

    def classify_result(subtype: object, terminal_reason: object, text: object = None, startup: object = None) -> Any:
        return orig(subtype, terminal_reason, None, startup)  # "the result's text is only its title"

    p.attr(surfaces_mod, "classify_result", classify_result)


# -- permission questions (never incidents; open only while their turn runs)


def _questions_outlive_their_turn(p: _Patches) -> None:
    def question_open(self: Any, tool_use_id: str) -> bool:
        turn = self._turn  # "the turn's set is the truth": forgets that leaving in_turn withdraws them
        return turn is not None and tool_use_id in turn.questions

    p.attr(surfaces_mod.TurnFlow, "question_open", question_open)


def _refused_question_published(p: _Patches) -> None:
    orig = _handler(PermissionAsked)

    def on_asked(self: Any, ev: PermissionAsked) -> None:
        running = _in_turn(self)
        orig(self, ev)
        if not running:  # "tell the user their tool was refused"
            self._background_failure(CONDITIONS["internal_error"], "", "internal_error")

    p.item(ledger_mod._HANDLERS, PermissionAsked, on_asked)


# -- usage-limit windows (issue 32: one entry per window, updated in place)


def _window_repeat_published(p: _Patches) -> None:
    orig = ledger_mod.SessionLedger._remember_window

    def remember_window(self: Any, key: str, shown: tuple[str | None, str, int | None]) -> None:
        orig(self, key, (shown[0], "", shown[2]))  # "each report is news": the title shown is not kept

    p.attr(ledger_mod.SessionLedger, "_remember_window", remember_window)


def _past_reset_titled(p: _Patches) -> None:
    p.attr(ledger_mod, "reset_passed", lambda reading: False)  # every reset is taken as upcoming


def _subagent_failure_is_the_turns(p: _Patches) -> None:
    orig = _handler(Assistant)

    def on_assistant(self: Any, ev: Assistant) -> None:
        orig(self, dataclasses.replace(ev, top_level=True))  # "every assistant message is the session's"

    p.item(ledger_mod._HANDLERS, Assistant, on_assistant)


def _replaced_failure_still_settles(p: _Patches) -> None:
    def on_replaced(self: Any, ev: MessagesReplaced) -> None:
        return None  # "a replaced message's failure is still the turn's": the held failure is kept

    p.item(ledger_mod._HANDLERS, MessagesReplaced, on_replaced)


MUTANTS: tuple[Mutant, ...] = (
    Mutant("recovery_on_wrong_event", "a successful auth_status also ends transport-loss incidents",
           _recovery_on_wrong_event),
    Mutant("revision_not_bumped", "an update is published with the revision the client already has",
           _revision_not_bumped),
    Mutant("tombstone_on_recovery", "recovery publishes a 'resolved' record", _tombstone_on_recovery),
    Mutant("warning_settles_prompt", "an api_retry warning answers the running prompt", _warning_settles_prompt),
    Mutant("legacy_gets_meta", "a model-fallback notice is sent to a legacy client", _legacy_gets_meta),
    Mutant("id_reused", "session-scoped and notice ids reuse sequence number 1", _sequence_not_advanced),
    Mutant("state_advanced_on_failed_send", "a record whose send failed is committed anyway",
           _commit_on_failed_send),
    Mutant("quota_guard_wrong", "the quota recovery guard checks the confirmed-attempt policy",
           _quota_guard_wrong),
    Mutant("synthetic_answer_recovers", "a <synthetic> local-command answer counts as a real answer",
           _synthetic_answer_recovers),
    Mutant("stale_runtime_accepted", "events from a replaced runtime are applied", _stale_runtime_accepted),
    Mutant("terminal_failure_on_session_update", "a turn-terminal failure rides a session_info_update",
           _terminal_failure_on_session_update),
    Mutant("replay_ignores_later_answer", "a replayed limit followed by a real answer stays active",
           _replay_ignores_later_answer),
    Mutant("notice_cleared_by_success", "a successful result clears the model-fallback notice",
           _notice_cleared_by_success),
    Mutant("client_applies_stale_revision", "the client applies a same or lower revision",
           _client_applies_stale_revision),
    Mutant("titles_not_redacted", "titles are Claude's text without redaction", _titles_not_redacted),
    Mutant("cancel_answers_end_turn", "a cancelled prompt is answered with end_turn", _cancel_answers_end_turn),
    Mutant("late_result_settles_again", "a late result settles an already settled prompt again",
           _late_result_settles_again),
    Mutant("warning_recommends_retry", "an api_retry warning carries the retry action", _warning_recommends_retry),
    Mutant("is_error_beats_stop_reason", "an is_error result with stop_reason max_tokens or refusal is a failure",
           _is_error_beats_stop_reason),
    Mutant("held_failure_beats_stop_reason", "a refusal after Claude's failure text settles with that failure",
           _held_failure_beats_stop_reason),
    Mutant("loss_after_error_result_swallowed", "a runtime loss right after an error result is ignored",
           _loss_after_error_result_swallowed),
    Mutant("held_failure_beats_loss", "a runtime loss after Claude's failure text settles with that failure",
           _held_failure_beats_loss),
    Mutant("cancelled_turn_failure_published", "a cancelled turn's late failure is published as a session record",
           _cancelled_turn_failure_published),
    Mutant("notice_reused_whatever_its_text", "a consecutive notice reuses the previous id whatever its text",
           _notice_reused_whatever_its_text),
    Mutant("newer_notice_retires_older", "a newer notice retires the older ones", _newer_notice_retires_older),
    Mutant("max_tokens_beats_limit", "a budget or turn limit with stop_reason max_tokens ends max_tokens",
           _max_tokens_beats_limit),
    Mutant("notices_forgotten_past_a_small_bound", "only the newest notice stays active; the others are forgotten",
           _notices_forgotten_past_a_small_bound),
    Mutant("unreachable_api_is_connection", "a provider error after the turn's retries is connection",
           _unreachable_api_is_connection),
    Mutant("login_result_is_service", "a login request only in the result text is a service failure",
           _login_result_is_service),
    Mutant("questions_outlive_their_turn", "a permission question stays open after its turn left in_turn",
           _questions_outlive_their_turn),
    Mutant("refused_question_published", "a question asked outside a running turn is published as a failure",
           _refused_question_published),
    Mutant("window_repeat_published", "an identical usage-limit window report is published again",
           _window_repeat_published),
    Mutant("past_reset_titled", "a window reading made after its reset is titled as upcoming",
           _past_reset_titled),
    Mutant("subagent_failure_is_the_turns", "a subagent's usage-limit message is taken as the session's own",
           _subagent_failure_is_the_turns),
    Mutant("replaced_failure_still_settles", "a failure whose message Claude Code replaced still settles the turn",
           _replaced_failure_still_settles),
)


# ---------------------------------------------------------------------------- running them


@dataclass(slots=True)
class MutantResult:
    name: str
    bug: str
    caught_by: str | None
    message: str
    violation: Violation | None
    states: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "bug": self.bug,
            "caught": self.caught_by is not None,
            "caught_by": self.caught_by,
            "message": self.message,
            "steps": self.violation.steps if self.violation else [],
            "trace": self.violation.trace if self.violation else [],
            "states": self.states,
            "seconds": round(self.seconds, 3),
        }


@dataclass(slots=True)
class MutantReport:
    results: list[MutantResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return bool(self.results) and all(r.caught_by is not None for r in self.results)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "mutants": len(self.results),
            "caught": sum(r.caught_by is not None for r in self.results),
            "seconds": round(self.seconds, 3),
            "results": [r.to_json() for r in self.results],
        }


def run_mutant(mutant: Mutant, bounds: Bounds | None = None) -> MutantResult:
    """Explore with ``mutant`` applied; it is caught when some invariant fails."""
    started = time.perf_counter()
    patches = _Patches()
    try:
        mutant.apply(patches)
    except (AttributeError, KeyError) as exc:
        patches.undo()
        return MutantResult(mutant.name, mutant.bug, None, f"not applicable: {exc}", None, 0, 0.0)
    try:
        result = Explorer(bounds, stop_at_first=True).run()
    finally:
        patches.undo()  # the run's machine answers went with its Explorer
    seconds = time.perf_counter() - started
    if not result.violations:
        return MutantResult(mutant.name, mutant.bug, None, "NOT CAUGHT", None, result.states, seconds)
    v = result.violations[0]
    baseline = _baseline_violation(v)
    if baseline is not None:  # the real code fails there too: the mutant did not make the difference
        message = f"NOT CAUGHT: the same path fails without the mutant ({baseline})"
        return MutantResult(mutant.name, mutant.bug, None, message, v, result.states, seconds)
    return MutantResult(mutant.name, mutant.bug, v.invariant, v.message, v, result.states, seconds)


def _baseline_violation(v: Violation) -> str | None:
    """Replay the counterexample on the unpatched code: any invariant it violates there."""
    try:
        replay = run_path(v.steps[0], v.steps[1:])
    except ValueError:
        return None  # the path exists only with the bug (an action it enabled): the bug made it
    for step in replay.steps:
        for inv in INVARIANTS:
            msg = inv.check(step)
            if msg is not None:
                return f"{inv.name}: {msg}"
    escape = check_escape(replay.world) if replay.world.active else None
    return None if escape is None else f"recovery_reachable: {escape}"


def run_mutants(bounds: Bounds | None = None, mutants: tuple[Mutant, ...] = MUTANTS) -> MutantReport:
    """Run every mutant; the report is ok only when every one was caught."""
    started = time.perf_counter()
    report = MutantReport([run_mutant(m, bounds) for m in mutants])
    report.seconds = time.perf_counter() - started
    return report


def render_mutants_report(report: MutantReport) -> str:
    caught = sum(r.caught_by is not None for r in report.results)
    lines = [f"workshop check --mutants: {caught}/{len(report.results)} seeded bugs caught in {report.seconds:.1f} s"]
    width = max((len(r.name) for r in report.results), default=0)
    for r in report.results:
        if r.caught_by is None:
            lines.append(f"  MISSED {r.name:<{width}}  {r.bug}: {r.message}")
            continue
        assert r.violation is not None
        lines.append(
            f"  caught {r.name:<{width}}  by {r.caught_by} after {r.violation.depth} steps "
            f"({r.states} states, {r.seconds:.1f} s): {r.message}"
        )
    lines.append("OK" if report.ok else "FAILED")
    return "\n".join(lines)
