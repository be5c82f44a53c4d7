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
  warnings, notices, session-scoped, background and replayed records ride ``session_info_update``;
  so does a child session's (its own ledger: :mod:`lifecycle.children`, issue 51.2).
* Usage-limit windows (:class:`~lifecycle.events.RateLimitWindow`, issue 32) are the session's,
  judged at any time and never a turn's failure: a window in ``allowed_warning`` is one
  session-scoped ``limit`` warning per window (no actions, on ``session_info_update``; an ACP
  ``notice`` for a client that declared notices and not the extension; nothing for a legacy
  one), its title :func:`~lifecycle.titles.window_title` in the embedder's ``zone``. A new title
  is a higher revision of the same id; the same title publishes nothing; ``rejected`` only
  updates a warning already shown (Claude Code's own usage-limit message fails the turn). The
  window back to ``allowed``, or an event of it with a later reset time, ends it silently; so does
  a reading whose reset had passed when it was read (``observed_at``, issue 52.5: a past reset is
  never titled as upcoming). A reading whose reset lies more than 35 days after it, or of a period
  older than the one shown, is ignored and noted. At most :data:`~lifecycle.events.MAX_WINDOWS`
  windows are remembered, the bound of one reading's list, so one event never evicts a window it
  reports again.
* Legacy: without negotiation no record and no ``_meta.jetbrains`` is ever produced; failures
  settle the prompt with the JSON-RPC error (-32603, -32000 for authentication; ``end_turn`` for a
  stream that ends without a result) and Claude's text stays in the transcript as it was.
* The prompt turn (its flow, its effects, cancelled turns, permission questions and the runtime's
  loss) follows the rules of :mod:`lifecycle.delivery_surfaces`: a
  :class:`~lifecycle.delivery_surfaces.TurnFlow` the ledger holds, which reaches the ledger only
  through its narrow port (:class:`_TurnPort`: plan a send, look up an active incident, recover,
  publish a background failure, note).

Theory of operation
-------------------
The ledger is h11-shaped. :meth:`SessionLedger.feed` takes one typed event and plans what to
send; it applies at once only what sends nothing (recoveries, which publish nothing, and turn
bookkeeping). The caller then drains :meth:`SessionLedger.next_outbound`, sends each message and
reports the outcome with :meth:`SessionLedger.delivered` or :meth:`SessionLedger.delivery_failed`.
A record's revision is computed when its message is materialised and the incident advances only
on ``delivered``: a failed send leaves the incident exactly as the client last saw it, so a later
qualifying event republishes with no revision gap and no duplicate id. Questions withdrawn by the
event (its turn left ``in_turn``) are drained the same way, with :meth:`SessionLedger.take_withdrawn`.

Each event type has one handler: the session's in :data:`_HANDLERS`, the turn's in
:data:`lifecycle.delivery_surfaces.TURN_HANDLERS` (they move the flow and carry out the effects
its machine names through :data:`lifecycle.delivery_surfaces.EFFECT_HANDLERS`).

Memory is O(active incidents): historical incidents are dropped (their records live on in the
client's transcript), and only the current turn is remembered.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .answers import RECOVERY_EVENTS, Incident, MachineAnswers, TransitionObserver
from .children import ChildFlow
from .conditions import CONDITIONS, Condition, Recovery
from .delivery_surfaces import MAX_OPEN_QUESTIONS, TURN_HANDLERS, FlowState, TurnFlow, TurnView
from .errors import LocalProtocolError, PendingDeliveryError
from .events import (
    MAX_WINDOWS,
    AuthStatus,
    ChildEnded,
    ChildRetry,
    Event,
    HistoryLoaded,
    Informational,
    McpServerNotStarted,
    ModelFallback,
    ModelRefusalFallback,
    Outbound,
    PromptErrorOut,
    PromptResponseOut,
    RateLimitWindow,
    RuntimeReplaced,
    SessionUpdateOut,
    WorkerShuttingDown,
)
from .history import is_real_answer, is_replayed_limit
from .ids import history_error_id, notice_id, session_incident_id, turn_error_id
from .intents import Forward, Intent, Publish, Recover, Reject, Settle, notice_update, text_update
from .limits import ignored_reading, refused_after, reset_passed
from .titles import (
    ResetZone,
    present,
    refusal_fallback_notice,
    refusal_fallback_record,
    refusal_fallback_texts,
    refusal_fallback_transcript,
    split_notice_text,
    utc_zone,
    window_title,
)
from .wire import Category, SessionFailure

__all__ = ["MAX_OPEN_QUESTIONS", "ActiveIncident", "SessionLedger", "TurnView"]


_MAX_NOTICED_TOOLS = 64
#: How many notices the ledger tracks as active (notices never recover, and another notice is no
#: evidence that one did): far above any real session's count; past it the oldest entry is let go
#: and counted (:attr:`SessionLedger.untracked_notices`), so no report claims less than is active.
MAX_ACTIVE_NOTICES = 4096
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


class _TurnPort:
    """The ledger's narrow port for its turn (:class:`~lifecycle.delivery_surfaces.LedgerPort`):
    each call looks the ledger's method up when made."""

    __slots__ = ("_ledger",)

    def __init__(self, ledger: SessionLedger) -> None:
        self._ledger = ledger

    @property
    def has_active(self) -> bool:
        return bool(self._ledger._active)

    def incident(self, incident_id: str) -> Incident | None:
        return self._ledger._active.get(incident_id)

    def plan(self, intent: Intent) -> None:
        self._ledger._outbox.append(intent)

    def recover(self, policy: Recovery, *, exclude_turn: str | None = None) -> None:
        self._ledger._recover(policy, exclude_turn=exclude_turn)

    def background_failure(self, cond: Condition, text: str, fallback_key: str) -> str | None:
        return self._ledger._background_failure(cond, text, fallback_key)

    def note(self, what: str, **fields: Any) -> None:
        self._ledger._note(what, **fields)

    def refused_by(self) -> RateLimitWindow | None:
        return self._ledger._refused


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
            ledger makes its own (no machine is imported before its first question). Nothing
            is shared between ledgers that were not given the same object.
    """

    __slots__ = (
        "_active",
        "_answers",
        "_child",
        "_epoch",
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
        "_refused",
        "_replay_ids",
        "_replay_prompt",
        "_replay_prompt_used",
        "_runtime",
        "_seq",
        "_session_id",
        "_turns",
        "_untracked_notices",
        "_windows",
        "_zone",
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
        zone: ResetZone = utc_zone,
    ) -> None:
        if not session_id or not isinstance(session_id, str):
            raise LocalProtocolError("session_id must be a non-empty string")
        if not epoch or not isinstance(epoch, str):
            raise LocalProtocolError("epoch must be a non-empty string")
        self._session_id = session_id
        self._negotiated = bool(negotiated)
        self._epoch = epoch
        self._observer = observer
        self._answers = answers if answers is not None else MachineAnswers()
        self._notices = bool(notices)
        self._noticed_tools: dict[str, None] = {}  # tool uses whose notice was sent (bounded)
        self._active: dict[str, Incident] = {}
        self._outbox: deque[Intent] = deque()
        self._head: Outbound | None = None
        # Equivalent mutants (None -> ""): _take_head refuses while _head is None, and the two are set
        # together; _last_record_id (below) is compared only with a published notice's id, never empty.
        self._head_intent: Intent | None = None  # pragma: no mutate
        self._seq = 0
        self._runtime = 0
        # the prompt turn: its flow, its questions, the runtime's loss (delivery_surfaces.py)
        self._turns = TurnFlow(_TurnPort(self), self._answers, negotiated=self._negotiated)
        self._child = ChildFlow(_TurnPort(self), session_id, negotiated=self._negotiated)  # a child's (children.py)
        self._last_record_id: str | None = None  # pragma: no mutate
        self._last_notice: tuple[str, str, str | None] | None = None  # (id, title, details)
        self._notice_count = self._untracked_notices = 0  # active notices; those let go past the bound
        # Equivalent mutants (None -> ""; False -> None or True): no prompt is falsy either way, the
        # record's turn id is never matched against "" (turn ids are non-empty), and the flag is read
        # only after a prompt set it to False.
        self._replay_prompt: str | None = None  # pragma: no mutate
        self._replay_prompt_used = False  # pragma: no mutate
        self._replay_ids: set[str] = set()  # as small as the number of replayed failures
        # window -> (its incident id, None for a notice; the title the client saw; its reset time)
        self._windows: dict[str, tuple[str | None, str, int | None]] = {}
        self._refused: RateLimitWindow | None = None  # the window last reported rejected (issue 52.2)
        self._zone = zone

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
        return tuple(ActiveIncident(i.id, i.state, i.revision, i.recovery, i.category) for i in self._active.values())

    @property
    def untracked_notices(self) -> int:
        """Notices still active for the client but let go past :data:`MAX_ACTIVE_NOTICES`."""
        return self._untracked_notices

    @property
    def turn(self) -> TurnView | None:
        """The current (or last) turn."""
        return self._turns.turn

    @property
    def flow(self) -> FlowState:
        """The turn's :class:`~lifecycle.session_flow.SessionFlow` state (a leaf)."""
        return self._turns.flow

    def question_open(self, tool_use_id: str) -> bool:
        """Whether Claude Code's permission question about ``tool_use_id`` is open: it was opened
        in the current turn, not answered, and the turn is still in ``in_turn``. Ask it before
        asking the client and again when the answer arrives (before feeding
        :class:`PermissionAnswered`): an answer to a question that is no longer open must not be
        honoured."""
        return self._turns.question_open(tool_use_id)

    def take_withdrawn(self) -> tuple[str, ...]:
        """The tool use ids of the questions that were open and stopped being answerable since the
        last call (their turn left ``in_turn``: cancel, runtime loss, settlement), each once, in
        the order they were withdrawn (one turn's sorted). Drain it after every feed, like
        :meth:`next_outbound`."""
        return self._turns.take_withdrawn()

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
        else:  # equivalent mutant (None -> ""): compared only with a published notice's id, never empty
            self._last_record_id = None  # pragma: no mutate

    def delivery_failed(self) -> None:
        """The message from :meth:`next_outbound` was not delivered: nothing it shows is committed."""
        intent = self._take_head()
        if isinstance(intent, Publish):  # the runtime's loss not shown after all: the next sign shows it
            self._turns.loss_not_delivered(intent.incident_id)
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

    # ------------------------------------------------------------------ event handlers (the turn's: TURN_HANDLERS)

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

    def _publish_notice(self, row: Condition, title: str, details: str | None) -> None:
        last = self._last_notice
        if last is not None and last[0] == self._last_record_id and last[1:] == (title, details):
            # Consecutive updates of the same notice (same text, nothing published in between)
            # reuse its id with a higher revision; any other notice is a new occurrence.
            incident_id = last[0]
        else:
            incident_id = notice_id(self._session_id, self._epoch, self._next_seq())
        self._outbox.append(Publish(incident_id, None, row, row.category, title, details, "notify"))

    def _on_rate_limit_window(self, ev: RateLimitWindow) -> None:
        key = ev.window or ""
        shown = self._windows.get(key)
        ignored = ignored_reading(ev, shown[2] if shown is not None else None)
        if ignored is not None:
            self._note(ignored)  # issue 52.6: a reading ignored, and counted
            return
        self._refused = refused_after(self._refused, ev)  # what a limit failure carries (issue 52.2)
        if shown is not None and (ev.status == "allowed" or _later(ev.resets_at, shown[2])):
            self._end_window(key)  # the window reset: silently, no tombstone
            shown = None
        if reset_passed(ev):
            # Issue 52.5: the period this reading is about is over; its warning (the shown one's
            # reset is no later) would title a past reset as upcoming: it ends, nothing is shown.
            if shown is not None:
                self._end_window(key)
            if ev.status != "allowed":
                self._note("rate_limit_window_reset_passed")
            return
        if ev.status != "allowed_warning" and (ev.status != "rejected" or shown is None):
            # allowed, another window's reading without a status, or a limit reached with no
            # warning shown (Claude Code's own usage-limit message fails the turn): nothing to show
            return
        title = window_title(ev.window, ev.status, ev.utilization, ev.resets_at, self._zone)
        if shown is not None and shown[1] == title:
            self._note("rate_limit_window_repeat_not_shown")  # no new user-facing status
            return
        if self._negotiated:
            incident_id = shown[0] if shown is not None and shown[0] is not None else None
            incident_id = incident_id or session_incident_id(self._session_id, self._epoch, self._next_seq())
            row, window = CONDITIONS["rate_limit_window"], (key, ev.resets_at)
            publish = Publish(incident_id, None, row, row.category, title, None, "window_warn", window=window)
            self._outbox.append(publish)
        elif self._notices:
            self._outbox.append(Forward(notice_update("warning", title, None)))
            self._remember_window(key, (None, title, ev.resets_at))
        else:
            self._note("rate_limit_window_legacy_not_shown")

    def _remember_window(self, key: str, shown: tuple[str | None, str, int | None]) -> None:
        self._windows.pop(key, None)
        self._windows[key] = shown
        while len(self._windows) > MAX_WINDOWS:  # memory bound (one reading's at most): let the oldest go
            self._end_window(next(iter(self._windows)))

    def _end_window(self, key: str) -> None:
        incident_id = self._windows.pop(key)[0]
        inc = self._active.pop(incident_id, None) if incident_id is not None else None
        if inc is not None:
            self._fire(inc, "window_reset")

    def _on_worker_shutting_down(self, ev: WorkerShuttingDown) -> None:
        self._turns.worker_shutting_down()

    def _on_auth(self, ev: AuthStatus) -> None:
        if ev.ok:
            self._recover(Recovery.AUTH_STATUS)
        else:
            self._note("auth_not_completed")

    def _on_runtime_replaced(self, ev: RuntimeReplaced) -> None:
        self._runtime += 1
        self._turns.runtime_replaced()
        self._recover(Recovery.RUNTIME_REPLACED)

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
            if inc.state == "noticed":  # notices are not cleared by generic success
                # Equivalent mutant (break): a notice's recovery is `never`, which no caller recovers.
                continue  # pragma: no mutate
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
            self._recover(intent.policy)
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
            extra = {"rateLimits": list(intent.limits)} if intent.limits else None
            return PromptResponseOut(
                turn_id=intent.prompt_turn, stop_reason=intent.stop_reason, record=record, extra_meta=extra
            )
        return SessionUpdateOut(session_id=self._session_id, update=_INFO_UPDATE, record=record)

    def _commit(self, intent: Publish) -> None:
        assert self._head is None
        inc = self._active.get(intent.incident_id)
        if inc is None:
            inc = Incident(intent.incident_id, intent.turn_id)
        inc.revision += 1
        inc.replayed = intent.transition == "restore"
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
        elif intent.window is not None:
            self._remember_window(intent.window[0], (inc.id, intent.title, intent.window[1]))
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

    def _fire(self, inc: Incident, event: str) -> None:
        """``event`` on the incident's :class:`~lifecycle.incident.IncidentMachine`, reported to the observer."""
        source, target = self._answers.fire(inc, event)
        if self._observer is not None:
            self._observer.transition(
                session_id=self._session_id,
                incident_id=inc.id,
                source=source,
                target=target,
                event=event,
                revision=inc.revision,
            )


def _later(resets_at: int | None, shown: int | None) -> bool:
    """A window event's reset time is later than the one its shown warning had: that one passed."""
    return resets_at is not None and shown is not None and resets_at > shown


def _turn_event(handler: Callable[[TurnFlow, Any], None]) -> Callable[[SessionLedger, Any], None]:
    """The ledger's handler of a turn event: the turn takes it (``TURN_HANDLERS``)."""

    def on_turn_event(ledger: SessionLedger, ev: Any) -> None:
        handler(ledger._turns, ev)

    on_turn_event.__name__ = handler.__name__
    return on_turn_event


_HANDLERS: dict[type, Callable[[SessionLedger, Any], None]] = {
    **{event_type: _turn_event(handler) for event_type, handler in TURN_HANDLERS.items()},
    ModelFallback: SessionLedger._on_notice_record,
    McpServerNotStarted: SessionLedger._on_notice_record,
    ModelRefusalFallback: SessionLedger._on_refusal_fallback,
    Informational: SessionLedger._on_informational,
    WorkerShuttingDown: SessionLedger._on_worker_shutting_down,
    AuthStatus: SessionLedger._on_auth,
    RuntimeReplaced: SessionLedger._on_runtime_replaced,
    HistoryLoaded: SessionLedger._on_history,
    RateLimitWindow: SessionLedger._on_rate_limit_window,
    ChildRetry: lambda ledger, ev: ledger._child.on_retry(ev),
    ChildEnded: lambda ledger, ev: ledger._child.on_ended(ev),
}
