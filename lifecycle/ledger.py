"""The per-session ledger: the sans-I/O adapter-session core (spec: "Identity, revisions, and
history", "Delivery surfaces", "Internal recovery", "History replay").

Rules
-----
* Ids (built by :mod:`lifecycle.ids`): a live turn failure is ``<turnId>:error`` (api_retry
  warnings of the turn reuse it and the terminal failure updates it); a session-scoped incident is
  ``<sessionId>:<epoch>:<seq>``; a notice is ``<sessionId>:notice:<epoch>:<seq>``; a replayed
  failure is ``<userUuid>:error`` or, without a preceding user message,
  ``<sessionId>:history-error:<messageUuid>``. The epoch is the adapter session's (a fresh one for
  every ``session/new`` or ``session/load``), so ids never collide across adapter processes.
* Carriers: a turn-terminal failure rides the ``PromptResponse`` (``stopReason: end_turn``);
  warnings, notices, session-scoped, background and replayed records ride ``session_info_update``.
* Legacy: without negotiation no record and no ``_meta.jetbrains`` is ever produced; failures
  settle the prompt with the JSON-RPC error (-32603, or -32000 for authentication) and Claude's
  text stays in the transcript as it was.

Theory of operation
-------------------
The ledger is h11-shaped. :meth:`SessionLedger.feed` takes one typed event and plans what to
send; it applies at once only what sends nothing (recoveries, which publish nothing, and turn
bookkeeping). The caller then drains :meth:`SessionLedger.next_outbound`, sends each message and
reports the outcome with :meth:`SessionLedger.delivered` or :meth:`SessionLedger.delivery_failed`.
A record's revision is computed when its message is materialised and the incident advances only
on ``delivered``: a failed send leaves the incident exactly as the client last saw it, so a later
qualifying event republishes with no revision gap and no duplicate id.

Memory is O(active incidents): historical incidents are dropped (their records live on in the
client's transcript), and only the current turn is remembered.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from .conditions import (
    CONDITIONS,
    Condition,
    Recovery,
    classify_assistant_error,
    classify_result,
    is_synthetic_failure_text,
    is_usage_limit_text,
    refine_terminal,
    retry_condition,
    stop_reason_for,
)
from .errors import LocalProtocolError, PendingDeliveryError
from .events import (
    ApiRetry,
    Assistant,
    AuthStatus,
    Cancelled,
    Event,
    HistoryEntry,
    HistoryLoaded,
    InternalError,
    ModelFallback,
    Outbound,
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
from .ids import history_error_id, notice_id, session_incident_id, turn_error_id
from .incident import RECOVERY_EVENTS, Incident, MachineAnswers, TransitionObserver
from .titles import claude_text, present, retry_title
from .wire import Category, SessionFailure

__all__ = ["ActiveIncident", "SessionLedger", "TurnView"]

_Transition = Literal["warn", "fail", "notify", "restore"]
_LEGACY_MESSAGES = {-32603: "Internal error", -32000: "Authentication required"}
#: The update a record rides on (the record is attached when the message is sent: ``SessionUpdateOut.meta``).
_INFO_UPDATE: dict[str, Any] = {"sessionUpdate": "session_info_update"}


@dataclass(frozen=True, slots=True)
class ActiveIncident:
    """A read-only view of one active incident."""

    id: str
    state: str
    revision: int
    recovery: Recovery
    category: Category


@dataclass(frozen=True, slots=True)
class TurnView:
    """A read-only view of the current (or last) turn."""

    turn_id: str
    settled: bool
    answered: bool


# ------------------------------------------------------------------ planned sends (intents)


@dataclass(slots=True)
class _Publish:
    incident_id: str
    turn_id: str | None
    condition: Condition
    category: Category
    title: str
    details: str | None
    transition: _Transition
    prompt_turn: str | None = None  # set: the record rides this turn's PromptResponse
    supersedes: str | None = None  # an older notice retired when this one is delivered


@dataclass(slots=True)
class _Forward:
    update: dict[str, Any]


@dataclass(slots=True)
class _Settle:
    turn_id: str
    stop_reason: str


@dataclass(slots=True)
class _Reject:
    turn_id: str
    code: int
    title: str


@dataclass(slots=True)
class _Recover:
    """Fire a recovery event in stream order (publishes nothing; applied when reached)."""

    policy: Recovery
    exclude_turn: str | None = None


_Intent = _Publish | _Forward | _Settle | _Reject | _Recover


class _Turn:
    __slots__ = ("answered", "failure", "no_response", "settled", "turn_id")

    def __init__(self, turn_id: str) -> None:
        self.turn_id = turn_id
        self.settled = False
        self.answered = False
        self.no_response = False  # an api_retry of this turn got no HTTP response
        self.failure: tuple[Condition, str] | None = None


def _text_update(kind: str, text: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


class SessionLedger:
    """The lifecycle of every incident of one ACP session.

    Args:
        session_id: the ACP session id.
        negotiated: whether the client negotiated ``sessionFailure`` (see
            :func:`lifecycle.negotiation.negotiate`); False keeps the legacy behaviour.
        epoch: this adapter session's epoch, unique per ``session/new``/``session/load``
            (the ACP edge uses a random token; the trace driver a counter).
        observer: receives every transition and every refused or ignored event (structlog in
            :mod:`lifecycle.log`); the ledger itself never logs.
        answers: the :class:`~lifecycle.incident.MachineAnswers` its incidents move by. Whoever
            owns many ledgers (an agent, a benchmark, the explorer) may share one, so each
            distinct question is asked of a real machine once for all of them; by default the
            ledger makes its own on its first transition. Nothing is shared between ledgers
            that were not given the same object.
    """

    __slots__ = (
        "_active",
        "_answers",
        "_epoch",
        "_expect_result_error",
        "_head",
        "_head_intent",
        "_last_record_id",
        "_negotiated",
        "_observer",
        "_outbox",
        "_replay_ids",
        "_replay_prompt",
        "_replay_prompt_used",
        "_runtime",
        "_runtime_incident",
        "_seq",
        "_session_id",
        "_turn",
        "_worker_stopping",
    )

    def __init__(
        self,
        session_id: str,
        *,
        negotiated: bool,
        epoch: str,
        observer: TransitionObserver | None = None,
        answers: MachineAnswers | None = None,
    ) -> None:
        if not session_id or not isinstance(session_id, str):
            raise LocalProtocolError("session_id must be a non-empty string")
        if not epoch or not isinstance(epoch, str):
            raise LocalProtocolError("epoch must be a non-empty string")
        self._session_id = session_id
        self._negotiated = bool(negotiated)
        self._epoch = epoch
        self._observer = observer
        self._answers = answers
        self._active: dict[str, Incident] = {}
        self._outbox: deque[_Intent] = deque()
        self._head: Outbound | None = None
        self._head_intent: _Intent | None = None
        self._turn: _Turn | None = None
        self._seq = 0
        self._runtime = 0
        self._runtime_incident: str | None = None
        self._worker_stopping = False
        self._expect_result_error = False
        self._last_record_id: str | None = None
        self._replay_prompt: str | None = None
        self._replay_prompt_used = False
        self._replay_ids: set[str] = set()  # as small as the number of replayed failures

    # ------------------------------------------------------------------ read-only views

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def negotiated(self) -> bool:
        return self._negotiated

    @property
    def epoch(self) -> str:
        return self._epoch

    @property
    def runtime(self) -> int:
        """The current runtime generation (bumped by :class:`RuntimeReplaced`)."""
        return self._runtime

    @property
    def has_active(self) -> bool:
        """Whether any incident is active (``bool(active)`` without building the views)."""
        return bool(self._active)

    @property
    def active(self) -> tuple[ActiveIncident, ...]:
        """The active incidents, oldest first (what the trailer line reports)."""
        return tuple(
            ActiveIncident(i.id, i.state, i.revision, i.recovery, i.category or Category.UNKNOWN)
            for i in self._active.values()
        )

    @property
    def turn(self) -> TurnView | None:
        t = self._turn
        return None if t is None else TurnView(t.turn_id, t.settled, t.answered)

    def revision_of(self, incident_id: str) -> int:
        """The last revision the client received for an *active* incident (0 if none)."""
        inc = self._active.get(incident_id)
        return inc.revision if inc else 0

    @property
    def pending(self) -> bool:
        """True while planned sends wait for their outcome."""
        return self._head is not None or bool(self._outbox)

    # ------------------------------------------------------------------ the funnel

    def feed(self, event: Event, *, runtime: int | None = None) -> bool:
        """Take one event; plan what to send. Returns False when the event was refused.

        ``runtime`` is the generation of the runtime that produced an SDK event; an event from a
        replaced runtime is refused (and reported to the observer), never applied.

        Raises:
            PendingDeliveryError: sends planned by the previous event were not all reported.
            LocalProtocolError: the event cannot apply now (a second concurrent prompt, a turn id
                whose failure is still active). The ledger is unchanged.
        """
        if self._head is not None or self._outbox:
            raise PendingDeliveryError(
                f"{type(event).__name__} fed while {len(self._outbox) + (self._head is not None)} "
                "planned send(s) await their outcome"
            )
        if runtime is not None and runtime != self._runtime:
            self._note("stale_runtime_event_refused", event_type=type(event).__name__, runtime=runtime)
            return False
        handler = _HANDLERS.get(type(event))
        if handler is None:
            raise LocalProtocolError(f"unknown event type {type(event).__name__}")
        expected = self._expect_result_error
        if type(event) in _MOVES_THE_STREAM_ON:
            # Only the SDK stream moving on ends the wait for its ResultError; an adapter event
            # that lands in between (an ACP authenticate, a cancel) does not.
            self._expect_result_error = False
        try:
            handler(self, event)
        except LocalProtocolError:
            self._expect_result_error = expected  # a refused event changes nothing
            raise
        return True

    def next_outbound(self) -> Outbound | None:
        """The next message to send, or None. Report its outcome before asking again."""
        if self._head is not None:
            return self._head
        while self._outbox:
            intent = self._outbox.popleft()
            out = self._materialise(intent)
            if out is not None:
                self._head, self._head_intent = out, intent
                return out
        return None

    def delivered(self) -> None:
        """The message from :meth:`next_outbound` reached the client: commit what it shows."""
        intent = self._take_head()
        if isinstance(intent, _Publish):
            self._commit(intent)
        else:
            self._last_record_id = None

    def delivery_failed(self) -> None:
        """The message from :meth:`next_outbound` was not delivered: nothing it shows is committed."""
        intent = self._take_head()
        self._note("delivery_failed", intent=type(intent).__name__.lstrip("_").lower())

    def process(self, event: Event, deliver: Callable[[Outbound], object], *, runtime: int | None = None) -> bool:
        """Feed ``event`` and drain its sends through ``deliver`` (an exception = a failed send)."""
        accepted = self.feed(event, runtime=runtime)
        if not self._outbox:
            return accepted  # the common case: nothing to send
        while (out := self.next_outbound()) is not None:
            try:
                deliver(out)
            except Exception:
                self.delivery_failed()
            else:
                self.delivered()
        return accepted

    # ------------------------------------------------------------------ event handlers

    def _on_prompt(self, ev: PromptStarted) -> None:
        if not isinstance(ev.turn_id, str) or not ev.turn_id:
            raise LocalProtocolError("PromptStarted needs a non-empty turn id")
        if self._turn is not None and not self._turn.settled:
            raise LocalProtocolError(
                f"PromptStarted({ev.turn_id!r}) while turn {self._turn.turn_id!r} is still running"
            )
        if turn_error_id(ev.turn_id) in self._active or (self._turn and self._turn.turn_id == ev.turn_id):
            raise LocalProtocolError(f"turn id {ev.turn_id!r} was already used in this session")
        self._turn = _Turn(ev.turn_id)

    def _open_turn(self) -> _Turn | None:
        t = self._turn
        return t if t is not None and not t.settled else None

    def _on_api_retry(self, ev: ApiRetry) -> None:
        turn = self._open_turn()
        if turn is None:
            self._note("api_retry_outside_turn")
            return
        incident_id = turn_error_id(turn.turn_id)
        current = self._active.get(incident_id)
        if current is not None and current.state != "retrying":
            self._note("api_retry_after_terminal_failure", incident_id=incident_id)
            return
        turn.no_response = turn.no_response or ev.error_status is None
        if not self._negotiated:
            return  # legacy: retry progress was never shown
        row, category = retry_condition(ev.error_status, ev.error)
        title = retry_title(ev.attempt, ev.max_retries, has_response=ev.error_status is not None)
        self._outbox.append(_Publish(incident_id, turn.turn_id, row, category, title, None, "warn"))

    def _on_assistant(self, ev: Assistant) -> None:
        if not ev.top_level:
            return  # subagent traffic is not the top-level transcript
        text = ev.text
        if ev.error is not None or (ev.synthetic and is_synthetic_failure_text(text)):
            cond = classify_assistant_error(ev.error, text)
            turn = self._open_turn()
            if turn is not None:
                if turn.failure is None:
                    turn.failure = (cond, text)
            else:
                self._background_failure(cond, text, "error_result")
            if not self._negotiated and text:
                self._outbox.append(_Forward(_text_update("agent_message_chunk", text)))
            return
        if text:
            self._outbox.append(_Forward(_text_update("agent_message_chunk", text)))
        if ev.synthetic or not ev.model:
            return  # local-command answers ("No response requested.") and model-less text prove nothing
        turn = self._open_turn()
        if turn is not None:
            turn.answered = True
        self._recover(Recovery.REAL_MODEL_ANSWER)
        self._recover(Recovery.CONFIRMED_ATTEMPT, exclude_turn=turn.turn_id if turn else None)

    def _on_result(self, ev: Result) -> None:
        turn = self._open_turn()
        if turn is None:
            self._note("result_outside_turn", is_error=bool(ev.is_error))
            return
        if turn.failure is not None:
            cond, text = turn.failure
            if cond.key == "invalid_request" and ev.terminal_reason == "prompt_too_long":
                cond = CONDITIONS["context_limit"]
            cond = refine_terminal(cond, ev.api_error_status, turn.no_response)
            self._settle_failure(turn, cond, claude_text(text, ev.result, list(ev.errors)), "error_result")
            self._expect_result_error = True
            return
        if ev.is_error:
            cond = classify_result(ev.subtype, ev.terminal_reason)
            self._settle_failure(turn, cond, claude_text(ev.result, list(ev.errors)), "error_result")
            self._expect_result_error = True
            return
        turn.settled = True
        self._outbox.append(_Settle(turn.turn_id, stop_reason_for(ev.stop_reason, ev.terminal_reason)))
        if turn.answered:
            # The turn's attempt is confirmed: its own retry warning and earlier turn-scoped
            # failures stop being active.
            self._recover(Recovery.CONFIRMED_ATTEMPT)

    def _on_model_fallback(self, ev: ModelFallback) -> None:
        if not self._negotiated:
            self._note("model_fallback_legacy_not_shown")
            return
        title, details = present(ev.content, "model_fallback")
        row = CONDITIONS["model_fallback"]
        previous = next((i for i in self._active.values() if i.state == "noticed"), None)
        if previous is not None and self._last_record_id == previous.id:
            # Consecutive updates for the same notice reuse its id with a higher revision.
            self._outbox.append(_Publish(previous.id, None, row, row.category, title, details, "notify"))
            return
        incident_id = notice_id(self._session_id, self._epoch, self._next_seq())
        self._outbox.append(
            _Publish(
                incident_id,
                None,
                row,
                row.category,
                title,
                details,
                "notify",
                supersedes=previous.id if previous else None,
            )
        )

    def _on_worker_shutting_down(self, ev: WorkerShuttingDown) -> None:
        self._worker_stopping = True

    def _on_auth(self, ev: AuthStatus) -> None:
        if ev.ok:
            self._recover(Recovery.AUTH_STATUS)
        else:
            self._note("auth_not_completed")

    def _on_query_error(self, ev: QueryError) -> None:
        self._runtime_lost(thrown=True)

    def _on_query_end(self, ev: QueryEnded) -> None:
        self._runtime_lost(thrown=False)

    def _runtime_lost(self, *, thrown: bool) -> None:
        turn = self._open_turn()
        key = "worker_shutdown" if self._worker_stopping else ("query_error" if thrown else "missing_result")
        if turn is not None:
            if turn.failure is not None:
                cond, text = turn.failure
                self._settle_failure(turn, cond, text, "error_result")
                return
            self._settle_failure(turn, CONDITIONS[key], "", key)
            if key != "missing_result":
                self._runtime_incident = turn_error_id(turn.turn_id)
            return
        if self._expect_result_error:
            # The SDK raises ResultError right after an error result: not a second incident.
            self._expect_result_error = False
            self._note("error_after_error_result_ignored")
            return
        if key == "missing_result" or self._runtime_incident is not None:
            return  # a normal EOF while idle, or the runtime's loss is already shown
        self._runtime_incident = self._background_failure(CONDITIONS[key], "", key)

    def _on_runtime_replaced(self, ev: RuntimeReplaced) -> None:
        self._runtime += 1
        self._worker_stopping = False
        self._runtime_incident = None
        self._recover(Recovery.RUNTIME_REPLACED)

    def _on_internal_error(self, ev: InternalError) -> None:
        turn = self._open_turn()
        cond = CONDITIONS["internal_error"]
        if turn is not None and turn.failure is not None:
            # Claude already said what failed: its text (and condition) ends the turn.
            failed, text = turn.failure
            self._settle_failure(turn, failed, text, "error_result")
        elif turn is not None:
            self._settle_failure(turn, cond, "", "internal_error")
        else:
            self._background_failure(cond, "", "internal_error")

    def _on_cancel(self, ev: Cancelled) -> None:
        turn = self._open_turn()
        if turn is None:
            self._note("cancel_without_running_prompt")
            return
        turn.settled = True
        self._outbox.append(_Settle(turn.turn_id, "cancelled"))

    def _on_history(self, ev: HistoryLoaded) -> None:
        # Streaming: a long history may arrive as several HistoryLoaded events (bounded memory).
        # Every recognised occurrence is published at its position; at commit a later occurrence
        # supersedes the earlier active one, and a later real answer recovers it, in stream order.
        for entry in ev.entries:
            if not entry.top_level:
                continue  # subagent and sidechain messages are not the top-level transcript
            if entry.role == "user":
                if entry.prompt:
                    self._replay_prompt, self._replay_prompt_used = entry.uuid, False
                    if entry.text:
                        self._outbox.append(_Forward(_text_update("user_message_chunk", entry.text)))
                continue
            if _is_replayed_limit(entry) and self._negotiated:
                prompt = self._replay_prompt
                incident_id = turn_error_id(prompt) if prompt and not self._replay_prompt_used else None
                if incident_id is None or incident_id in self._replay_ids or incident_id in self._active:
                    incident_id = history_error_id(self._session_id, entry.uuid or self._next_seq())
                    if incident_id in self._replay_ids:  # a corrupt history repeats a uuid
                        incident_id = history_error_id(self._session_id, self._next_seq())
                else:
                    self._replay_prompt_used = True
                self._replay_ids.add(incident_id)
                row = CONDITIONS["usage_limit"]
                title, details = present(entry.text, "error_result")
                self._outbox.append(_Publish(incident_id, prompt, row, row.category, title, details, "restore"))
                continue
            if entry.text:
                self._outbox.append(_Forward(_text_update("agent_message_chunk", entry.text)))
            if _is_real_answer(entry):
                self._outbox.append(_Recover(Recovery.REAL_MODEL_ANSWER))

    # ------------------------------------------------------------------ helpers

    def _settle_failure(self, turn: _Turn, cond: Condition, text: str, fallback_key: str) -> None:
        turn.settled = True
        title, details = present(text, fallback_key)
        if self._negotiated:
            self._outbox.append(
                _Publish(
                    turn_error_id(turn.turn_id),
                    turn.turn_id,
                    cond,
                    cond.category,
                    title,
                    details,
                    "fail",
                    prompt_turn=turn.turn_id,
                )
            )
        else:
            self._outbox.append(_Reject(turn.turn_id, cond.legacy_code, title))

    def _background_failure(self, cond: Condition, text: str, fallback_key: str) -> str | None:
        if not self._negotiated:
            self._note("background_failure_legacy_not_shown", condition=cond.key)
            return None
        incident_id = session_incident_id(self._session_id, self._epoch, self._next_seq())
        title, details = present(text, fallback_key)
        self._outbox.append(_Publish(incident_id, None, cond, cond.category, title, details, "fail"))
        return incident_id

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _recover(self, policy: Recovery, *, exclude_turn: str | None = None) -> None:
        if not self._active:
            return
        event = RECOVERY_EVENTS[policy]
        for inc in [i for i in self._active.values() if i.recovery is policy]:
            if exclude_turn is not None and inc.turn_id == exclude_turn:
                continue
            if inc.state == "noticed":
                continue  # notices are not cleared by generic success
            self._fire(inc, event)
            del self._active[inc.id]

    def _note(self, what: str, **fields: Any) -> None:
        if self._observer is not None:
            self._observer.note(what, session_id=self._session_id, **fields)

    def _take_head(self) -> _Intent:
        if self._head is None or self._head_intent is None:
            raise LocalProtocolError("no planned send is waiting for its outcome")
        intent = self._head_intent
        self._head = self._head_intent = None
        return intent

    def _materialise(self, intent: _Intent) -> Outbound | None:
        if isinstance(intent, _Recover):
            self._recover(intent.policy, exclude_turn=intent.exclude_turn)
            return None
        if isinstance(intent, _Forward):
            return SessionUpdateOut(session_id=self._session_id, update=intent.update)
        if isinstance(intent, _Settle):
            return PromptResponseOut(turn_id=intent.turn_id, stop_reason=intent.stop_reason)
        if isinstance(intent, _Reject):
            return PromptErrorOut(
                turn_id=intent.turn_id,
                code=intent.code,
                message=_LEGACY_MESSAGES.get(intent.code, "Internal error"),
                data={"details": intent.title},
            )
        current = self._active.get(intent.incident_id)
        record = SessionFailure(
            id=intent.incident_id,
            revision=(current.revision if current else 0) + 1,
            category=intent.category,
            severity=intent.condition.severity,
            title=intent.title,
            details=intent.details,
            actions=intent.condition.actions,
        )
        if intent.prompt_turn is not None:
            return PromptResponseOut(turn_id=intent.prompt_turn, stop_reason="end_turn", record=record)
        return SessionUpdateOut(session_id=self._session_id, update=_INFO_UPDATE, record=record)

    def _commit(self, intent: _Publish) -> None:
        assert self._head is None
        inc = self._active.get(intent.incident_id)
        if inc is None:
            inc = Incident(intent.incident_id, intent.turn_id)
        inc.revision += 1
        inc.replayed = intent.transition == "restore"
        inc.condition = intent.condition
        inc.category = intent.category
        inc.recovery = intent.condition.recovery if intent.transition != "warn" else Recovery.CONFIRMED_ATTEMPT
        self._fire(inc, intent.transition)
        self._last_record_id = inc.id
        if inc.active:
            self._active[inc.id] = inc
        else:
            self._active.pop(inc.id, None)
        older = [intent.supersedes] if intent.supersedes is not None else []
        if inc.replayed:
            older = [i.id for i in self._active.values() if i.replayed and i is not inc]
        for old_id in older:
            old = self._active.pop(old_id, None)
            if old is not None:
                self._fire(old, "superseded")

    def _fire(self, inc: Incident, event: str) -> None:
        """``event`` on the incident's :class:`~lifecycle.incident.IncidentMachine`, reported to the observer."""
        answers = self._answers
        if answers is None:
            answers = self._answers = MachineAnswers()
        source, target = answers.fire(inc, event)
        if self._observer is not None:
            self._observer.transition(
                session_id=self._session_id,
                incident_id=inc.id,
                source=source,
                target=target,
                event=event,
                revision=inc.revision,
            )


def _is_replayed_limit(entry: HistoryEntry) -> bool:
    return entry.role == "assistant" and entry.top_level and entry.synthetic and is_usage_limit_text(entry.text)


def _is_real_answer(entry: HistoryEntry) -> bool:
    return entry.role == "assistant" and entry.top_level and not entry.synthetic and entry.model is not None


_MOVES_THE_STREAM_ON: frozenset[type] = frozenset(
    {PromptStarted, ApiRetry, Assistant, Result, ModelFallback, WorkerShuttingDown, RuntimeReplaced}
)

_HANDLERS: dict[type, Callable[[SessionLedger, Any], None]] = {
    PromptStarted: SessionLedger._on_prompt,
    ApiRetry: SessionLedger._on_api_retry,
    Assistant: SessionLedger._on_assistant,
    Result: SessionLedger._on_result,
    ModelFallback: SessionLedger._on_model_fallback,
    WorkerShuttingDown: SessionLedger._on_worker_shutting_down,
    AuthStatus: SessionLedger._on_auth,
    QueryError: SessionLedger._on_query_error,
    QueryEnded: SessionLedger._on_query_end,
    RuntimeReplaced: SessionLedger._on_runtime_replaced,
    InternalError: SessionLedger._on_internal_error,
    Cancelled: SessionLedger._on_cancel,
    HistoryLoaded: SessionLedger._on_history,
}
