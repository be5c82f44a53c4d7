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
  settle the prompt with the JSON-RPC error (-32603, -32000 for authentication; ``end_turn`` for a
  stream that ends without a result) and Claude's text stays in the transcript as it was.
* A cancelled turn shows nothing after its ``cancelled`` answer: while the flow is ``cancelled``
  none of its text is forwarded to any client, and its late failure and result make no record.
* Permission questions are never incidents: :class:`PermissionAsked` opens a question only in a
  running turn (the turn machine's ``open_question``), :class:`PermissionAnswered` closes it, and
  :meth:`SessionLedger.question_open` is true only while the flow is in ``in_turn``, so whatever
  makes the turn leave it withdraws every open question. They plan nothing to send.

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
from typing import Any

from .answers import RECOVERY_EVENTS, Incident, MachineAnswers, TransitionObserver
from .conditions import (
    CONDITIONS,
    Condition,
    Recovery,
    classify_assistant_error,
    classify_result,
    is_synthetic_failure_text,
    result_event,
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
    HistoryLoaded,
    Informational,
    InternalError,
    McpServerNotStarted,
    ModelFallback,
    ModelRefusalFallback,
    ModelRefusalNoFallback,
    Outbound,
    PermissionAnswered,
    PermissionAsked,
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
from .history import is_real_answer, is_replayed_limit
from .ids import history_error_id, notice_id, session_incident_id, turn_error_id
from .intents import Forward, Intent, Publish, Recover, Reject, Settle, legacy_answer, notice_update, text_update
from .redaction import redact
from .titles import (
    claude_text,
    legacy_result_text,
    present,
    refusal_fallback_notice,
    refusal_fallback_record,
    refusal_fallback_texts,
    refusal_fallback_transcript,
    retry_title,
    split_notice_text,
)
from .wire import Category, SessionFailure

__all__ = ["MAX_OPEN_QUESTIONS", "ActiveIncident", "SessionLedger", "TurnView"]


_MAX_NOTICED_TOOLS = 64
#: How many permission questions may be open at once in one turn (more are refused).
MAX_OPEN_QUESTIONS = 64
#: How many notices the ledger tracks as active (notices never recover, and another notice is no
#: evidence that one did): far above any real session's count; past it the oldest entry is let go
#: and counted (:attr:`SessionLedger.untracked_notices`), so no report claims less than is active.
MAX_ACTIVE_NOTICES = 4096
_IDLE = "idle"
_IN_TURN = frozenset({"running", "answered", "failing"})  # SessionFlow's in_turn leaves
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


class _Turn:
    """The current (or last) turn's data; where it stands is the flow state (``SessionFlow``)."""

    __slots__ = ("failure", "questions", "refusal", "turn_id")

    def __init__(self, turn_id: str) -> None:
        self.turn_id = turn_id
        self.questions: frozenset[str] = frozenset()  # open permission questions (tool use ids)
        self.refusal: str | None = None  # Claude's explanation, shown if the turn ends ``refusal``
        # Claude's first failure (condition, text, SDK error kind), held to settle the turn.
        self.failure: tuple[Condition, str, str | None] | None = None


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
        answers: the :class:`~lifecycle.answers.MachineAnswers` its incidents move by. Whoever
            owns many ledgers (an agent, a benchmark, the explorer) may share one, so each
            distinct question is asked of a real machine once for all of them; by default the
            ledger makes its own on its first transition. Nothing is shared between ledgers
            that were not given the same object.
    """

    __slots__ = (
        "_active",
        "_answers",
        "_epoch",
        "_flow",
        "_head",
        "_head_intent",
        "_last_notice",
        "_last_record_id",
        "_negotiated",
        "_notice_count",
        "_noticed_tools",
        "_notices",
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
        "_untracked_notices",
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
        notices: bool = False,
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
        self._notices = bool(notices)
        self._noticed_tools: dict[str, None] = {}  # tool uses whose notice was sent (bounded)
        self._active: dict[str, Incident] = {}
        self._outbox: deque[Intent] = deque()
        self._head: Outbound | None = None
        self._head_intent: Intent | None = None
        self._turn: _Turn | None = None
        self._seq = 0
        self._runtime = 0
        self._runtime_incident: str | None = None
        self._worker_stopping = False
        self._flow = _IDLE  # the turn's SessionFlow state (a leaf)
        self._last_record_id: str | None = None
        self._last_notice: tuple[str, str, str | None] | None = None  # (id, title, details)
        self._notice_count = self._untracked_notices = 0  # active notices; those let go past the bound
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
    def untracked_notices(self) -> int:
        """Notices still active for the client but let go past :data:`MAX_ACTIVE_NOTICES`."""
        return self._untracked_notices

    @property
    def turn(self) -> TurnView | None:
        t = self._turn
        return None if t is None else TurnView(t.turn_id, self._flow not in _IN_TURN, self._flow == "answered")

    @property
    def flow(self) -> str:
        """The turn's :class:`~lifecycle.session_flow.SessionFlow` state (a leaf state id)."""
        return self._flow

    def question_open(self, tool_use_id: str) -> bool:
        """Whether Claude Code's permission question about ``tool_use_id`` is open: it was opened
        in the current turn, not answered, and the turn is still in ``in_turn``. Ask it before
        asking the client and again when the answer arrives (before feeding
        :class:`PermissionAnswered`): an answer to a question that is no longer open must not be
        honoured."""
        turn = self._turn
        return turn is not None and self._flow in _IN_TURN and tool_use_id in turn.questions

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
                whose failure is still active, a permission question that is already open) or is
                malformed (an empty turn or tool use id). The ledger is unchanged.
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
        handler(self, event)  # a refused event raises before it changes anything
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
        if isinstance(intent, Publish):
            self._commit(intent)
        else:
            self._last_record_id = None

    def delivery_failed(self) -> None:
        """The message from :meth:`next_outbound` was not delivered: nothing it shows is committed."""
        intent = self._take_head()
        if isinstance(intent, Publish) and intent.incident_id == self._runtime_incident:
            # The runtime's loss was not shown after all: the next sign of it shows it.
            self._runtime_incident = None
        self._note("delivery_failed", intent=type(intent).__name__.lower())

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
        answer = self._ask_turn("prompt")
        if answer is None:
            running = self._turn.turn_id if self._turn else "?"
            raise LocalProtocolError(f"PromptStarted({ev.turn_id!r}) while turn {running!r} is still running")
        if (self._active and turn_error_id(ev.turn_id) in self._active) or (
            self._turn and self._turn.turn_id == ev.turn_id
        ):
            raise LocalProtocolError(f"turn id {ev.turn_id!r} was already used in this session")
        target, effects = answer
        self._flow = target
        for effect in effects:
            if effect == "open_turn":
                self._turn = _Turn(ev.turn_id)
            else:
                self._unknown_effect(effect, "prompt")

    def _ask_turn(self, event: str) -> tuple[str, tuple[str, ...]] | None:
        """The turn machine's answer to ``event`` now (``None``: it refuses); nothing is changed."""
        answers = self._answers
        if answers is None:
            answers = self._machines()
        return answers.turn_or_none(self._flow, event)

    def _step_turn(self, event: str) -> tuple[str, ...] | None:
        """Move the turn by ``event``: the effects to perform, or ``None`` when the machine refuses."""
        answers = self._answers  # _ask_turn inlined: this runs for every assistant message and result
        if answers is None:
            answers = self._machines()
        answer = answers.turn_or_none(self._flow, event)
        if answer is None:
            return None
        self._flow, effects = answer
        return effects

    def _on_api_retry(self, ev: ApiRetry) -> None:
        effects = self._step_turn("api_retry")
        if effects is None:
            self._note("api_retry_outside_turn")
            return
        turn = self._turn
        assert turn is not None
        for effect in effects:
            if effect != "publish_retry":
                self._unknown_effect(effect, "api_retry")
                continue
            incident_id = turn_error_id(turn.turn_id)
            current = self._active.get(incident_id)
            if current is not None and current.state != "retrying":
                self._note("api_retry_after_terminal_failure", incident_id=incident_id)
                continue
            if not self._negotiated:
                continue  # legacy: retry progress was never shown
            row, category = retry_condition(ev.error_status, ev.error)
            title = retry_title(ev.attempt, ev.max_retries, has_response=ev.error_status is not None)
            self._outbox.append(Publish(incident_id, turn.turn_id, row, category, title, None, "warn"))

    def _on_assistant(self, ev: Assistant) -> None:
        if not ev.top_level:
            return  # subagent traffic is not the top-level transcript
        text = ev.text
        if ev.refusal is not None and self._turn is not None and self._flow in _IN_TURN:
            self._turn.refusal = ev.refusal  # the refused response's own explanation wins
        # A cancelled turn shows nothing more while it drains (the reference drops all its frames).
        synthetic, hidden = ev.synthetic, ev.shown or self._flow == "cancelled"
        if ev.error is not None or (synthetic and is_synthetic_failure_text(text)):
            cond = classify_assistant_error(ev.error, text)
            for effect in self._step_turn("claude_failure") or ():
                if effect == "hold_failure":
                    assert self._turn is not None
                    self._turn.failure = (cond, text, ev.error)
                elif effect == "background_failure":
                    self._background_failure(cond, text, "error_result")
                else:
                    self._unknown_effect(effect, "claude_failure")
            if not self._negotiated and text and not hidden and cond.recovery is not Recovery.AUTH_STATUS:
                # Legacy: Claude's failure text stays in the transcript, except a login request,
                # which the reference adapter answers with -32000 alone (the error is the prompt).
                self._outbox.append(Forward(text_update("agent_message_chunk", text)))
            return
        if text and not hidden:  # a shown text already reached the client as streamed deltas
            self._outbox.append(Forward(text_update("agent_message_chunk", text)))
        if synthetic or not ev.model:
            return  # local-command answers ("No response requested.") and model-less text prove nothing
        for effect in self._step_turn("real_answer") or ():
            if effect == "recover_answered":
                assert self._turn is not None
                if self._active:  # nothing to recover is the common case: skip the calls
                    self._recover(Recovery.REAL_MODEL_ANSWER)
                    self._recover(Recovery.CONFIRMED_ATTEMPT, exclude_turn=self._turn.turn_id)
            elif effect == "recover_all":
                if self._active:
                    self._recover(Recovery.REAL_MODEL_ANSWER)
                    self._recover(Recovery.CONFIRMED_ATTEMPT)
            else:
                self._unknown_effect(effect, "real_answer")

    def _on_result(self, ev: Result) -> None:
        event = result_event(ev.is_error, ev.stop_reason, ev.subtype, ev.result)
        effects = self._step_turn(event)
        if effects is None:
            # No turn is running: e.g. the SDK's ResultError, which repeats the error result.
            self._note("result_outside_turn", is_error=bool(ev.is_error))
            return
        turn = self._turn
        assert turn is not None
        for effect in effects:
            if effect == "settle_stop":
                stop = stop_reason_for(ev.stop_reason, ev.terminal_reason)
                if stop == "refusal" and turn.refusal:
                    # The refused response shows nothing: Claude's explanation is the answer.
                    self._outbox.append(Forward(text_update("agent_message_chunk", redact(turn.refusal))))
                self._outbox.append(Settle(turn.turn_id, stop))
            elif effect == "confirm_attempt":
                # The turn's attempt is confirmed: its own retry warning and earlier turn-scoped
                # failures stop being active.
                if self._active:
                    self._recover(Recovery.CONFIRMED_ATTEMPT)
            elif effect == "settle_failure":
                self._settle_held(turn, ev)
            elif effect == "settle_result_error":
                cond = classify_result(ev.subtype, ev.terminal_reason, ev.result)
                legacy = legacy_result_text(ev.subtype, ev.result, ev.errors)
                self._settle(turn, cond, claude_text(ev.result, list(ev.errors)), "error_result", legacy_text=legacy)
            else:
                self._unknown_effect(effect, event)

    def _on_notice_record(self, ev: ModelFallback | McpServerNotStarted) -> None:
        key = "model_fallback" if isinstance(ev, ModelFallback) else "mcp_server_not_started"
        if not self._negotiated:
            self._note(f"{key}_legacy_not_shown")
            return
        title, details = present(ev.content, key)
        self._publish_notice(CONDITIONS[key], title, details)

    def _on_refusal_fallback(self, ev: ModelRefusalFallback) -> None:
        summary, explanation = refusal_fallback_texts(
            ev.original_model,
            ev.fallback_model,
            direction=ev.direction,
            scope=ev.scope,
            category=ev.category,
            explanation=ev.explanation,
        )
        if self._notices:
            self._outbox.append(Forward(notice_update("warning", *refusal_fallback_notice(summary, explanation))))
        elif self._negotiated:
            title, details = refusal_fallback_record(summary, explanation)
            self._publish_notice(CONDITIONS["model_refusal_fallback"], title, details)
        else:
            text = refusal_fallback_transcript(summary, explanation)
            self._outbox.append(Forward(text_update("agent_message_chunk", text)))

    def _on_informational(self, ev: Informational) -> None:
        # Claude Code's free-form notice (the reference adapter's "informational" lane): an ACP
        # ``notice`` for a client that declared them (``info`` is transcript-only noise there, and
        # a tool's repeats are dropped), a bold-label transcript line for every other client. It is
        # never a record: it reports no failure.
        level = ev.level or "notice"
        severity = "warning" if level == "warning" else "info"
        if self._notices:
            if level == "info" or not ev.content:
                return
            if ev.tool_use_id is not None:
                if ev.tool_use_id in self._noticed_tools:
                    return
                self._noticed_tools[ev.tool_use_id] = None
                while len(self._noticed_tools) > _MAX_NOTICED_TOOLS:
                    del self._noticed_tools[next(iter(self._noticed_tools))]
            fallback = "Claude reported a warning" if severity == "warning" else "Claude reported a notice"
            self._outbox.append(Forward(notice_update(severity, *split_notice_text(ev.content, fallback))))
            return
        if not ev.content:
            return
        text = ev.content if level == "info" else f"**{level[:1].upper()}{level[1:]}:** {ev.content}"
        chunk = text_update("agent_message_chunk", text)
        chunk["_meta"] = {"claudeCode": {"kind": "informational", "level": level}}
        self._outbox.append(Forward(chunk))

    def _on_refusal_no_fallback(self, ev: ModelRefusalNoFallback) -> None:
        turn = self._turn
        if ev.explanation and turn is not None and self._flow in _IN_TURN and turn.refusal is None:
            turn.refusal = ev.explanation

    def _publish_notice(self, row: Condition, title: str, details: str | None) -> None:
        last = self._last_notice
        if last is not None and last[0] == self._last_record_id and last[1:] == (title, details):
            # Consecutive updates of the same notice (same text, nothing published in between)
            # reuse its id with a higher revision; any other notice is a new occurrence.
            incident_id = last[0]
        else:
            incident_id = notice_id(self._session_id, self._epoch, self._next_seq())
        self._outbox.append(Publish(incident_id, None, row, row.category, title, details, "notify"))

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
        # A worker that announced its shutdown and then ended, or a query that threw, is the
        # runtime lost; a plain EOF is the stream ending (a turn without its result).
        key = "worker_shutdown" if self._worker_stopping else ("query_error" if thrown else None)
        event = "transport_lost" if key is not None else "stream_ended"
        turn = self._turn
        for effect in self._step_turn(event) or ():
            if effect == "settle_runtime_loss" and key is not None and turn is not None:
                self._settle(turn, CONDITIONS[key], "", key)
                self._runtime_incident = turn_error_id(turn.turn_id)
            elif effect == "background_runtime_loss" and key is not None:
                if self._runtime_incident is None:  # the runtime's loss is shown once
                    self._runtime_incident = self._background_failure(CONDITIONS[key], "", key)
            elif effect == "settle_missing_result" and turn is not None:
                self._settle(turn, CONDITIONS["missing_result"], "", "missing_result")
            elif effect == "settle_failure" and turn is not None:
                self._settle_held(turn, None)
            else:
                self._unknown_effect(effect, event)

    def _on_runtime_replaced(self, ev: RuntimeReplaced) -> None:
        self._runtime += 1
        self._worker_stopping = False
        self._runtime_incident = None
        self._recover(Recovery.RUNTIME_REPLACED)

    def _on_internal_error(self, ev: InternalError) -> None:
        turn = self._turn
        cond = CONDITIONS["internal_error"]
        for effect in self._step_turn("internal_error") or ():
            if effect == "settle_failure" and turn is not None:
                # Claude already said what failed: its text (and condition) ends the turn.
                self._settle_held(turn, None)
            elif effect == "settle_internal_error" and turn is not None:
                self._settle(turn, cond, "", "internal_error")
            elif effect == "background_internal_error":
                self._background_failure(cond, "", "internal_error")
            else:
                self._unknown_effect(effect, "internal_error")

    def _on_cancel(self, ev: Cancelled) -> None:
        effects = self._step_turn("cancel")
        if effects is None:
            self._note("cancel_without_running_prompt")
            return
        turn = self._turn
        assert turn is not None
        for effect in effects:
            if effect == "settle_cancelled":
                self._outbox.append(Settle(turn.turn_id, "cancelled"))
            else:
                self._unknown_effect(effect, "cancel")

    def _on_permission_asked(self, ev: PermissionAsked) -> None:
        tool_use_id = _tool_use_id(ev)
        turn = self._turn
        if turn is not None and tool_use_id in turn.questions and self._flow in _IN_TURN:
            raise LocalProtocolError("PermissionAsked for a question that is already open")
        for effect in self._step_turn("permission_asked") or ():
            if effect == "open_question" and turn is not None:
                if len(turn.questions) >= MAX_OPEN_QUESTIONS:
                    self._note("question_refused", reason="too_many_open", open=len(turn.questions))
                else:
                    turn.questions = turn.questions | {tool_use_id}
            elif effect == "refuse_question":
                self._note("question_refused", reason="no_running_turn", flow=self._flow)
            else:
                self._unknown_effect(effect, "permission_asked")

    def _on_permission_answered(self, ev: PermissionAnswered) -> None:
        tool_use_id = _tool_use_id(ev)
        turn = self._turn
        effects = self._step_turn("permission_answered")
        if not effects:  # the turn left in_turn: its questions were withdrawn then
            self._note("answer_not_honoured", reason="no_running_turn", flow=self._flow)
            return
        for effect in effects:
            if effect == "close_question" and turn is not None:
                if tool_use_id in turn.questions:
                    turn.questions = turn.questions - {tool_use_id}
                else:
                    self._note("answer_not_honoured", reason="not_open")
            else:
                self._unknown_effect(effect, "permission_answered")

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
                        self._outbox.append(Forward(text_update("user_message_chunk", entry.text)))
                continue
            if is_replayed_limit(entry) and self._negotiated:
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
                self._outbox.append(Publish(incident_id, prompt, row, row.category, title, details, "restore"))
                continue
            if entry.text:
                self._outbox.append(Forward(text_update("agent_message_chunk", entry.text)))
            if is_real_answer(entry):
                self._outbox.append(Recover(Recovery.REAL_MODEL_ANSWER))

    # ------------------------------------------------------------------ helpers

    def _settle(
        self,
        turn: _Turn,
        cond: Condition,
        text: str,
        fallback_key: str,
        kind: str | None = None,
        *,
        legacy_text: str | None = None,
    ) -> None:
        """Settle ``turn`` with a failure: the record on its ``PromptResponse``, or the legacy answer.

        ``kind``: the SDK error kind Claude's failure came with (a legacy client's ``errorKind``).
        ``legacy_text``: what the legacy error says instead of ``text``, where the reference adapter
        composes it differently (an error result: :func:`~lifecycle.titles.legacy_result_text`).
        """
        if not self._negotiated:
            text = text if legacy_text is None else legacy_text
        title, details = present(text, fallback_key)
        if self._negotiated:
            self._outbox.append(
                Publish(
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
            self._outbox.append(legacy_answer(turn.turn_id, cond, text, details or title, kind))

    def _settle_held(self, turn: _Turn, result: Result | None) -> None:
        """Settle ``turn`` with the Claude failure it holds, refined by its ``result`` if one came."""
        assert turn.failure is not None
        cond, text, kind = turn.failure
        if result is None:
            self._settle(turn, cond, text, "error_result", kind)
            return
        if cond.key == "invalid_request" and result.terminal_reason == "prompt_too_long":
            cond = CONDITIONS["context_limit"]
        legacy = claude_text(text) or legacy_result_text(result.subtype, result.result, result.errors)
        self._settle(
            turn, cond, claude_text(text, result.result, list(result.errors)), "error_result", kind, legacy_text=legacy
        )

    def _unknown_effect(self, effect: str, event: str) -> None:
        # A SessionFlow action the ledger does not perform: the machine and the ledger disagree.
        from statemachine.exceptions import InvalidDefinition

        raise InvalidDefinition(f"SessionFlow names effect {effect!r} on {event!r}; the ledger has no such effect")

    def _background_failure(self, cond: Condition, text: str, fallback_key: str) -> str | None:
        if not self._negotiated:
            self._note("background_failure_legacy_not_shown", condition=cond.key)
            return None
        incident_id = session_incident_id(self._session_id, self._epoch, self._next_seq())
        title, details = present(text, fallback_key)
        self._outbox.append(Publish(incident_id, None, cond, cond.category, title, details, "fail"))
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

    def _take_head(self) -> Intent:
        if self._head is None or self._head_intent is None:
            raise LocalProtocolError("no planned send is waiting for its outcome")
        intent = self._head_intent
        self._head = self._head_intent = None
        return intent

    def _materialise(self, intent: Intent) -> Outbound | None:
        if type(intent) is Forward:  # the common send: an agent message chunk
            return SessionUpdateOut(session_id=self._session_id, update=intent.update)
        if isinstance(intent, Recover):
            self._recover(intent.policy, exclude_turn=intent.exclude_turn)
            return None
        if isinstance(intent, Settle):
            return PromptResponseOut(turn_id=intent.turn_id, stop_reason=intent.stop_reason)
        if isinstance(intent, Reject):
            return PromptErrorOut(turn_id=intent.turn_id, code=intent.code, message=intent.message, data=intent.data)
        assert isinstance(intent, Publish)
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

    def _commit(self, intent: Publish) -> None:
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
        older: list[str] = []
        if inc.replayed:
            older = [i.id for i in self._active.values() if i.replayed and i is not inc]
        elif intent.transition == "notify":
            self._last_notice = (inc.id, intent.title, intent.details)
            # Notices stay active until their own recovery (none): another notice retires none.
            if inc.revision == 1 and inc.active:
                self._notice_count += 1
                if self._notice_count > MAX_ACTIVE_NOTICES:  # memory bound: let go and count
                    older = [next(i.id for i in self._active.values() if i.state == "noticed")]
                    self._notice_count -= 1
                    self._untracked_notices += 1
        for old_id in older:
            old = self._active.pop(old_id, None)
            if old is not None:
                self._fire(old, "superseded")

    def _machines(self) -> MachineAnswers:
        answers = self._answers
        if answers is None:
            answers = self._answers = MachineAnswers()
        return answers

    def _fire(self, inc: Incident, event: str) -> None:
        """``event`` on the incident's :class:`~lifecycle.incident.IncidentMachine`, reported to the observer."""
        source, target = self._machines().fire(inc, event)
        if self._observer is not None:
            self._observer.transition(
                session_id=self._session_id,
                incident_id=inc.id,
                source=source,
                target=target,
                event=event,
                revision=inc.revision,
            )


def _tool_use_id(ev: PermissionAsked | PermissionAnswered) -> str:
    if not isinstance(ev.tool_use_id, str) or not ev.tool_use_id:
        raise LocalProtocolError(f"{type(ev).__name__} needs a non-empty tool use id")
    return ev.tool_use_id


_HANDLERS: dict[type, Callable[[SessionLedger, Any], None]] = {
    PromptStarted: SessionLedger._on_prompt,
    ApiRetry: SessionLedger._on_api_retry,
    Assistant: SessionLedger._on_assistant,
    Result: SessionLedger._on_result,
    ModelFallback: SessionLedger._on_notice_record,
    McpServerNotStarted: SessionLedger._on_notice_record,
    ModelRefusalFallback: SessionLedger._on_refusal_fallback,
    ModelRefusalNoFallback: SessionLedger._on_refusal_no_fallback,
    Informational: SessionLedger._on_informational,
    WorkerShuttingDown: SessionLedger._on_worker_shutting_down,
    AuthStatus: SessionLedger._on_auth,
    QueryError: SessionLedger._on_query_error,
    QueryEnded: SessionLedger._on_query_end,
    RuntimeReplaced: SessionLedger._on_runtime_replaced,
    InternalError: SessionLedger._on_internal_error,
    Cancelled: SessionLedger._on_cancel,
    HistoryLoaded: SessionLedger._on_history,
    PermissionAsked: SessionLedger._on_permission_asked,
    PermissionAnswered: SessionLedger._on_permission_answered,
}
