"""The prompt turn's effects and its permission questions (spec: "Delivery surfaces": how a turn
ends, and on which surface each of its outcomes rides).

Rules
-----
* Carriers: a turn-terminal failure rides the ``PromptResponse`` (``stopReason: end_turn``);
  a warning (``api_retry``) rides ``session_info_update`` and never ends the turn; a failure
  outside a turn is session-scoped. Without negotiation a failure settles the prompt with the
  legacy JSON-RPC error (:func:`lifecycle.intents.legacy_answer`).
* One home per turn rule: :class:`~lifecycle.session_flow.SessionFlow` decides, for the flow
  event an input is, which state follows and which effects happen, in order. This module only
  performs them: :data:`EFFECT_HANDLERS` names the one method that carries out each effect
  (h2-style: the machine's table names the function). An effect the table lacks is refused by
  name (``InvalidDefinition``); ``tests/test_delivery_surfaces.py`` checks that the table has
  exactly the effects the machine can produce, each reachable.
* The flow's state is a :class:`FlowState`, the machine's leaf state ids as an enum (same
  strings, same repr, so logs, diagrams and the explorer's messages read as before).
* A cancelled turn shows nothing after its ``cancelled`` answer: while the flow is
  ``cancelled`` none of its text is forwarded to any client, and its late failure and result
  make no record.
* Permission questions are never incidents and plan nothing to send. ``open_question`` opens
  one only in ``in_turn`` (at most :data:`MAX_OPEN_QUESTIONS`), ``close_question`` closes it, and
  :meth:`TurnFlow.question_open` is true only while the flow is in ``in_turn``. Whatever makes
  the flow leave ``in_turn`` (cancel, runtime loss, any settlement) withdraws every open question
  at that moment; :meth:`TurnFlow.take_withdrawn` hands their ids out once each.

* A held failure is superseded when the provider replaces the message that carried it
  (:class:`~lifecycle.events.MessagesReplaced` naming the failure's :attr:`Assistant.uuid`, which
  the turn keeps beside it): ``failure_replaced`` drops it (``drop_failure``), so the turn settles
  by what comes next. Replacing any other message is no flow event at all (noted). The uuid is
  the turn's data, like its questions: the event only says which messages the provider replaced,
  and the turn, which holds the failure, decides whether its own was among them.

* The runtime's loss is the turn's to show: whether the worker announced its shutdown, and which
  incident already shows the loss (it is shown once), live here; the ledger tells the turn when
  the runtime is replaced (:meth:`TurnFlow.runtime_replaced`) and when the record showing the
  loss was not delivered (:meth:`TurnFlow.loss_not_delivered`).

Theory of operation
-------------------
:class:`TurnFlow` is a part the ledger (:class:`lifecycle.ledger.SessionLedger`) holds: it owns
the turn's state (the flow, the current turn, the withdrawn questions, the runtime's loss) and
reaches the rest of the ledger only through a narrow port (:class:`LedgerPort`: plan a send,
look up an active incident, recover, publish a background failure, note). It never imports the
ledger. An event handler (:data:`TURN_HANDLERS`: ``on_result``, ...) classifies what arrived into
a flow event, moves the flow with :meth:`TurnFlow._step_turn` (the machine's kept answer: target
leaf and effect names) and hands the effect names to :meth:`TurnFlow._perform`, which looks each
up in :data:`EFFECT_HANDLERS` and calls it with the turn as it was before the step and the
event's input (a ``Result``, Claude's held failure, a tool use id, ...). The step itself is where
questions are withdrawn: a move out of ``in_turn`` appends the turn's open questions to the
withdrawn queue, which the caller drains like ``next_outbound``. The turn keeps its question set
afterwards (it is read only while the flow is in ``in_turn``), so the queue is the only record of
what was withdrawn and when.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from .children import plan_retry
from .conditions import (
    CONDITIONS,
    Condition,
    Recovery,
    classify_assistant_error,
    classify_result,
    is_login_text,
    is_synthetic_failure_text,
    result_event,
    stop_reason_for,
)
from .errors import LocalProtocolError
from .events import (
    AgentAnswered,
    AgentExited,
    AgentFailure,
    AgentRetrying,
    AgentTurnEnded,
    ApiRetry,
    Assistant,
    Cancelled,
    InternalError,
    MessagesReplaced,
    ModelRefusalNoFallback,
    PermissionAnswered,
    PermissionAsked,
    PromptStarted,
    QueryEnded,
    QueryError,
    RateLimitWindow,
    Result,
)
from .ids import turn_error_id
from .intents import Forward, Intent, Publish, Settle, legacy_answer, text_update
from .limits import LIMIT_FAILURES, limit_entry, refused_data
from .neutral import agent_condition, agent_title
from .redaction import redact
from .titles import claude_text, legacy_result_text, present

if TYPE_CHECKING:
    from .answers import Incident, MachineAnswers

__all__ = [
    "EFFECT_HANDLERS",
    "IN_TURN",
    "MAX_OPEN_QUESTIONS",
    "TURN_HANDLERS",
    "FlowState",
    "LedgerPort",
    "Turn",
    "TurnFlow",
    "TurnView",
]

#: How many permission questions may be open at once in one turn (more are refused).
MAX_OPEN_QUESTIONS = 64


class FlowState(StrEnum):
    """The leaf states of :class:`~lifecycle.session_flow.SessionFlow` (its state ids;
    ``tests/test_delivery_surfaces.py`` checks that the two agree: an import-time check would
    make an import cycle)."""

    IDLE = "idle"
    RUNNING = "running"
    ANSWERED = "answered"
    FAILING = "failing"
    CANCELLED = "cancelled"

    __repr__ = str.__repr__  # 'running', as the plain state id always printed


#: The leaves of ``SessionFlow.in_turn``: a prompt runs.
IN_TURN = frozenset({FlowState.RUNNING, FlowState.ANSWERED, FlowState.FAILING})
_FLOW_STATES: dict[str, FlowState] = {s.value: s for s in FlowState}
#: Claude's failure as a turn holds it: (condition, text, SDK error kind).
_Failure = tuple[Condition, str, str | None]
#: Claude's failure as it arrives (``claude_failure``'s input): the failure and the uuid of the
#: message that carried it (None: it had none).
_Arrived = tuple[_Failure, str | None]


@dataclass(frozen=True, slots=True)
class TurnView:
    """A read-only view of the current (or last) turn."""

    turn_id: str
    settled: bool
    answered: bool


class Turn:
    """The current (or last) turn's data; where it stands is the flow state."""

    __slots__ = ("failure", "failure_uuid", "questions", "refusal", "turn_id")

    def __init__(self, turn_id: str) -> None:
        self.turn_id = turn_id
        self.questions: frozenset[str] = frozenset()  # asked in in_turn, not answered (tool use ids)
        self.refusal: str | None = None  # Claude's explanation, shown if the turn ends ``refusal``
        # Claude's first failure, held to settle the turn, and the uuid of the message that carried it
        # (if it had one). Equivalent mutants (None -> ""): both are set together when the turn enters
        # ``failing`` (_do_hold_failure) and read only there.
        self.failure: _Failure | None = None  # pragma: no mutate
        self.failure_uuid: str | None = None  # pragma: no mutate


class LedgerPort(Protocol):
    """What the turn may ask of the ledger that holds it (see the module): nothing else of the
    ledger is reachable from here."""

    @property
    def has_active(self) -> bool:
        """Any incident is active (the common case of nothing to recover skips the call)."""
        ...

    def incident(self, incident_id: str) -> Incident | None:
        """The active incident ``incident_id``, if any."""
        ...

    def plan(self, intent: Intent) -> None:
        """Plan a send (the ledger's outbox, drained by ``next_outbound``)."""
        ...

    def recover(self, policy: Recovery, *, exclude_turn: str | None = None) -> None:
        """End the active incidents that ``policy`` recovers (but the turn ``exclude_turn``'s)."""
        ...

    def background_failure(self, cond: Condition, text: str, fallback_key: str) -> str | None:
        """Publish a session-scoped failure; its incident id (None for a legacy client)."""
        ...

    def refused_by(self) -> RateLimitWindow | None:
        """The usage-limit window Claude Code last reported ``rejected`` and not since allowed."""
        ...

    def note(self, what: str, **fields: Any) -> None:
        """Report something refused or ignored to the ledger's observer."""
        ...


class TurnFlow:
    """The prompt turn: its flow, its effects, its permission questions and the runtime's loss
    (see the module). Held by :class:`~lifecycle.ledger.SessionLedger`, which feeds it the turn's
    events (:data:`TURN_HANDLERS`).

    Args:
        port: the ledger's narrow port (:class:`LedgerPort`).
        answers: the :class:`~lifecycle.answers.MachineAnswers` the turn machine answers by.
        negotiated: the client negotiated ``sessionFailure`` (else the legacy answers).
    """

    __slots__ = ("_answers", "_flow", "_negotiated", "_port", "_runtime_incident", "_turn", "_withdrawn",
                 "_worker_stopping")  # fmt: skip

    def __init__(self, port: LedgerPort, answers: MachineAnswers, *, negotiated: bool) -> None:
        self._port = port
        self._answers = answers
        self._negotiated = negotiated
        self._flow = FlowState.IDLE  # the turn's SessionFlow state (a leaf)
        self._turn: Turn | None = None
        self._withdrawn: tuple[str, ...] = ()  # questions withdrawn and not taken yet (take_withdrawn)
        self._runtime_incident: str | None = None  # the incident that shows the runtime's loss
        self._worker_stopping = False  # the worker announced its shutdown

    # ------------------------------------------------------------------ the ledger's calls

    def worker_shutting_down(self) -> None:
        """The worker announced its shutdown: its end is the runtime lost, not a stream's end."""
        self._worker_stopping = True

    def runtime_replaced(self) -> None:
        """A new runtime works: the old one's shutdown and its shown loss are history."""
        self._worker_stopping = False
        self._runtime_incident = None

    def loss_not_delivered(self, incident_id: str) -> None:
        """A record was not delivered: if it showed the runtime's loss, the next sign shows it."""
        if incident_id == self._runtime_incident:
            self._runtime_incident = None

    # ------------------------------------------------------------------ read-only views

    @property
    def turn(self) -> TurnView | None:
        t = self._turn
        return None if t is None else TurnView(t.turn_id, self._flow not in IN_TURN, self._flow == "answered")

    @property
    def flow(self) -> FlowState:
        """The turn's :class:`~lifecycle.session_flow.SessionFlow` state (a leaf)."""
        return self._flow

    def question_open(self, tool_use_id: str) -> bool:
        """Whether Claude Code's permission question about ``tool_use_id`` is open: it was opened
        in the current turn, not answered, and the turn is still in ``in_turn``. Ask it before
        asking the client and again when the answer arrives (before feeding
        :class:`PermissionAnswered`): an answer to a question that is no longer open must not be
        honoured."""
        turn = self._turn
        return turn is not None and self._flow in IN_TURN and tool_use_id in turn.questions

    def take_withdrawn(self) -> tuple[str, ...]:
        """The tool use ids of the questions that were open and stopped being answerable since the
        last call (their turn left ``in_turn``: cancel, runtime loss, settlement), each once, in
        the order they were withdrawn (one turn's sorted). Drain it after every feed, like
        :meth:`~lifecycle.ledger.SessionLedger.next_outbound`."""
        withdrawn = self._withdrawn
        if withdrawn:
            self._withdrawn = ()
        return withdrawn

    # ------------------------------------------------------------------ asking the machine

    def _ask_turn(self, event: str) -> tuple[str, tuple[str, ...]] | None:
        """The turn machine's answer to ``event`` now (``None``: it refuses); nothing is changed."""
        return self._answers.turn_or_none(self._flow, event)

    def _step_turn(self, event: str) -> tuple[str, ...] | None:
        """Move the turn by ``event``: the effects to perform, or ``None`` when the machine refuses."""
        answer = self._answers.turn_or_none(self._flow, event)
        if answer is None:
            return None
        self._enter(answer[0])
        return answer[1]

    def _enter(self, target: str) -> None:
        """The flow moves to ``target``; leaving ``in_turn`` withdraws the turn's open questions."""
        if self._flow in IN_TURN and target not in IN_TURN and self._turn is not None and self._turn.questions:
            self._withdrawn += tuple(sorted(self._turn.questions))
        self._flow = _FLOW_STATES[target]

    def _perform(self, event: str, effects: tuple[str, ...], turn: Turn | None, arg: Any) -> None:
        """Carry out ``effects`` (the machine's answer to ``event``), in order, each by its handler."""
        for effect in effects:
            handler = EFFECT_HANDLERS.get(effect)
            if handler is None:  # the machine and the ledger disagree
                from statemachine.exceptions import InvalidDefinition

                raise InvalidDefinition(
                    f"SessionFlow names effect {effect!r} on {event!r}; the ledger has no such effect"
                )
            handler(self, turn, arg)

    # ------------------------------------------------------------------ event handlers

    def on_prompt(self, ev: PromptStarted) -> None:
        if not isinstance(ev.turn_id, str) or not ev.turn_id:
            raise LocalProtocolError("PromptStarted needs a non-empty turn id")
        answer = self._ask_turn("prompt")
        if answer is None:
            running = self._turn.turn_id if self._turn else "?"
            raise LocalProtocolError(f"PromptStarted({ev.turn_id!r}) while turn {running!r} is still running")
        if (self._port.has_active and self._port.incident(turn_error_id(ev.turn_id)) is not None) or (
            self._turn and self._turn.turn_id == ev.turn_id
        ):
            raise LocalProtocolError(f"turn id {ev.turn_id!r} was already used in this session")
        turn = self._turn
        self._enter(answer[0])
        self._perform("prompt", answer[1], turn, ev)

    def on_api_retry(self, ev: ApiRetry | AgentRetrying) -> None:
        turn = self._turn
        effects = self._step_turn("api_retry")
        if effects is None:
            self._port.note("api_retry_outside_turn")
            return
        self._perform("api_retry", effects, turn, ev)

    def on_assistant(self, ev: Assistant) -> None:
        if not ev.top_level:
            return  # subagent traffic is not the top-level transcript
        text, turn = ev.text, self._turn
        if ev.refusal is not None and turn is not None and self._flow in IN_TURN:
            turn.refusal = ev.refusal  # the refused response's own explanation wins
        # A cancelled turn shows nothing more while it drains (the reference drops all its frames).
        synthetic, hidden = ev.synthetic, ev.shown or self._flow == "cancelled"
        if ev.error is not None or (synthetic and is_synthetic_failure_text(text)):
            cond = classify_assistant_error(ev.error, text)
            effects = self._step_turn("claude_failure")
            if effects:
                self._perform("claude_failure", effects, turn, ((cond, text, ev.error), ev.uuid))
            login = synthetic and is_login_text(text) and cond.key != "usage_limit"
            if not self._negotiated and text and not hidden and not login:
                # Legacy: Claude's failure text stays in the transcript ("Invalid API key · …" too),
                # except a synthetic login request ("… run /login …", the reference adapter's
                # isSyntheticLoginMessage), which it answers with -32000 alone (the error is the prompt).
                self._port.plan(Forward(text_update("agent_message_chunk", text)))
            return
        if text and not hidden:  # a shown text already reached the client as streamed deltas
            self._port.plan(Forward(text_update("agent_message_chunk", text)))
        if synthetic or not ev.model:
            return  # local-command answers ("No response requested.") and model-less text prove nothing
        effects = self._step_turn("real_answer")
        if effects:
            self._perform("real_answer", effects, turn, None)

    def on_messages_replaced(self, ev: MessagesReplaced) -> None:
        turn = self._turn
        held = turn.failure_uuid if turn is not None and self._flow == "failing" else None
        if held is None or held not in ev.uuids:
            self._port.note("replaced_no_held_failure", count=len(ev.uuids))
            return
        effects = self._step_turn("failure_replaced")
        if effects:
            self._perform("failure_replaced", effects, turn, None)

    def on_result(self, ev: Result) -> None:
        event = result_event(ev.is_error, ev.stop_reason, ev.subtype, ev.result)
        turn = self._turn
        effects = self._step_turn(event)
        if effects is None:
            # No turn is running: e.g. the SDK's ResultError, which repeats the error result.
            self._port.note("result_outside_turn", is_error=bool(ev.is_error))
            return
        self._perform(event, effects, turn, ev)

    def on_agent_answered(self, ev: AgentAnswered) -> None:
        self._step_and_perform("real_answer", None)

    def on_agent_turn_ended(self, ev: AgentTurnEnded) -> None:
        # The agent's answer is the turn's result (result_event's rule in neutral terms).
        event = "result_stop" if ev.stop_reason != "end_turn" else "result_error" if ev.failure else "result_success"
        turn = self._turn
        effects = self._step_turn(event)
        if effects is None:
            self._port.note("result_outside_turn", is_error=ev.failure is not None)
            return
        self._perform(event, effects, turn, ev)

    def on_agent_exited(self, ev: AgentExited) -> None:
        self._step_and_perform("transport_lost", ev.failure)

    def _step_and_perform(self, event: str, arg: object) -> None:
        turn = self._turn
        effects = self._step_turn(event)
        if effects:
            self._perform(event, effects, turn, arg)

    def on_refusal_no_fallback(self, ev: ModelRefusalNoFallback) -> None:
        turn = self._turn
        if ev.explanation and turn is not None and self._flow in IN_TURN and turn.refusal is None:
            turn.refusal = ev.explanation

    def on_query_error(self, ev: QueryError) -> None:
        self._runtime_lost(thrown=True)

    def on_query_end(self, ev: QueryEnded) -> None:
        self._runtime_lost(thrown=False)

    def _runtime_lost(self, *, thrown: bool) -> None:
        # A worker that announced its shutdown and then ended, or a query that threw, is the
        # runtime lost; a plain EOF is the stream ending (a turn without its result).
        key = "worker_shutdown" if self._worker_stopping else ("query_error" if thrown else None)
        self._step_and_perform("transport_lost" if key is not None else "stream_ended", key)

    def on_internal_error(self, ev: InternalError) -> None:
        self._step_and_perform("internal_error", None)

    def on_cancel(self, ev: Cancelled) -> None:
        turn = self._turn
        effects = self._step_turn("cancel")
        if effects is None:
            self._port.note("cancel_without_running_prompt")
            return
        self._perform("cancel", effects, turn, None)

    def on_permission_asked(self, ev: PermissionAsked) -> None:
        tool_use_id = _tool_use_id(ev)
        turn = self._turn
        if turn is not None and tool_use_id in turn.questions and self._flow in IN_TURN:
            raise LocalProtocolError("PermissionAsked for a question that is already open")
        effects = self._step_turn("permission_asked")
        if effects:
            self._perform("permission_asked", effects, turn, tool_use_id)

    def on_permission_answered(self, ev: PermissionAnswered) -> None:
        tool_use_id = _tool_use_id(ev)
        turn = self._turn
        effects = self._step_turn("permission_answered")
        if not effects:  # the turn left in_turn: its questions were withdrawn then
            self._port.note("answer_not_honoured", reason="no_running_turn", flow=self._flow)
            return
        self._perform("permission_answered", effects, turn, tool_use_id)

    # ------------------------------------------------------------------ the effects (EFFECT_HANDLERS)
    # Each is called as ``(turn before the step, the event's input)``.

    def _do_open_turn(self, turn: Turn | None, ev: PromptStarted) -> None:
        self._turn = Turn(ev.turn_id)

    def _do_publish_retry(self, turn: Turn | None, ev: ApiRetry | AgentRetrying) -> None:
        assert turn is not None
        plan_retry(self._port, turn.turn_id, ev, negotiated=self._negotiated)  # children.py: a child's too

    def _do_recover_answered(self, turn: Turn | None, _: None) -> None:
        assert turn is not None
        if self._port.has_active:  # nothing to recover is the common case: skip the calls
            self._port.recover(Recovery.REAL_MODEL_ANSWER)
            self._port.recover(Recovery.CONFIRMED_ATTEMPT, exclude_turn=turn.turn_id)

    def _do_recover_all(self, turn: Turn | None, _: None) -> None:
        if self._port.has_active:
            self._port.recover(Recovery.REAL_MODEL_ANSWER)
            self._port.recover(Recovery.CONFIRMED_ATTEMPT)

    def _do_hold_failure(self, turn: Turn | None, arrived: _Arrived) -> None:
        assert turn is not None
        turn.failure, turn.failure_uuid = arrived

    def _do_drop_failure(self, turn: Turn | None, _: None) -> None:
        assert turn is not None
        turn.failure = None
        turn.failure_uuid = None

    def _do_background_failure(self, turn: Turn | None, arrived: _Arrived) -> None:
        failure = arrived[0]
        self._port.background_failure(failure[0], failure[1], "error_result")

    def _do_settle_stop(self, turn: Turn | None, ev: Result | AgentTurnEnded) -> None:
        assert turn is not None
        if isinstance(ev, AgentTurnEnded):  # the agent's own stop reason, its record beside it
            if ev.failure is not None and self._negotiated:
                self._settle_agent(turn, ev.failure, ev.stop_reason)
            else:
                self._port.plan(Settle(turn.turn_id, ev.stop_reason))
            return
        stop = stop_reason_for(ev.stop_reason, ev.terminal_reason)
        if stop == "refusal" and turn.refusal:
            # The refused response shows nothing: Claude's explanation is the answer.
            self._port.plan(Forward(text_update("agent_message_chunk", redact(turn.refusal))))
        self._port.plan(Settle(turn.turn_id, stop))

    def _do_confirm_attempt(self, turn: Turn | None, ev: Result) -> None:
        # The turn's attempt is confirmed: its own retry warning and earlier turn-scoped failures
        # stop being active.
        if self._port.has_active:
            self._port.recover(Recovery.CONFIRMED_ATTEMPT)

    def _do_settle_failure(self, turn: Turn | None, ev: object) -> None:
        # Claude already said what failed: its text (and condition) ends the turn, refined by
        # the result if a result ends it (not the stream ending, nor an internal error).
        assert turn is not None
        self._settle_held(turn, ev if isinstance(ev, Result) else None)

    def _do_settle_result_error(self, turn: Turn | None, ev: Result | AgentTurnEnded) -> None:
        assert turn is not None
        if isinstance(ev, AgentTurnEnded):
            assert ev.failure is not None  # on_agent_turn_ended: result_error only with a failure
            self._settle_agent(turn, ev.failure, "end_turn")
            return
        cond = classify_result(ev.subtype, ev.terminal_reason, ev.result, ev.startup_failure)
        legacy = legacy_result_text(ev.subtype, ev.result, ev.errors)  # a start-up failure's: its own message
        text = claude_text(ev.result, list(ev.errors))
        self._settle(turn, cond, text, "error_result", legacy_text=legacy, startup=ev.startup_failure)

    def _do_settle_cancelled(self, turn: Turn | None, _: None) -> None:
        assert turn is not None
        self._port.plan(Settle(turn.turn_id, "cancelled"))

    def _do_settle_runtime_loss(self, turn: Turn | None, key: str | AgentFailure | None) -> None:
        assert turn is not None and key is not None
        if isinstance(key, AgentFailure):  # the agent process ended (its family's row)
            self._settle_agent(turn, key, "end_turn")
        else:
            self._settle(turn, CONDITIONS[key], "", key)
        self._runtime_incident = turn_error_id(turn.turn_id)

    def _do_background_runtime_loss(self, turn: Turn | None, key: str | AgentFailure | None) -> None:
        assert key is not None
        if self._runtime_incident is None:  # the runtime's loss is shown once
            if isinstance(key, AgentFailure):
                cond, (title, _) = agent_condition(key), agent_title(key.words, key.fallback)
                self._runtime_incident = self._port.background_failure(cond, title, "internal_error")
            else:
                self._runtime_incident = self._port.background_failure(CONDITIONS[key], "", key)

    def _do_settle_missing_result(self, turn: Turn | None, _: object) -> None:
        assert turn is not None
        self._settle(turn, CONDITIONS["missing_result"], "", "missing_result")

    def _do_settle_internal_error(self, turn: Turn | None, _: None) -> None:
        assert turn is not None
        self._settle(turn, CONDITIONS["internal_error"], "", "internal_error")

    def _do_background_internal_error(self, turn: Turn | None, _: None) -> None:
        self._port.background_failure(CONDITIONS["internal_error"], "", "internal_error")

    def _do_open_question(self, turn: Turn | None, tool_use_id: str) -> None:
        assert turn is not None
        if len(turn.questions) >= MAX_OPEN_QUESTIONS:
            self._port.note("question_refused", reason="too_many_open", open=len(turn.questions))
        else:
            turn.questions = turn.questions | {tool_use_id}

    def _do_refuse_question(self, turn: Turn | None, tool_use_id: str) -> None:
        self._port.note("question_refused", reason="no_running_turn", flow=self._flow)

    def _do_close_question(self, turn: Turn | None, tool_use_id: str) -> None:
        assert turn is not None
        if tool_use_id in turn.questions:
            turn.questions = turn.questions - {tool_use_id}
        else:
            self._port.note("answer_not_honoured", reason="not_open")

    # ------------------------------------------------------------------ settling

    def _settle(
        self,
        turn: Turn,
        cond: Condition,
        text: str,
        fallback_key: str,
        kind: str | None = None,
        *,
        legacy_text: str | None = None,
        startup: str | None = None,
    ) -> None:
        """Settle ``turn`` with a failure: the record on its ``PromptResponse``, or the legacy answer.

        ``kind``: the SDK error kind Claude's failure came with (a legacy client's ``errorKind``).
        ``legacy_text``: what the legacy error says instead of ``text``, where the reference adapter
        composes it differently (an error result: :func:`~lifecycle.titles.legacy_result_text`).
        ``startup``: a start-up failure's reason (its legacy error is the reference's own shape).
        """
        if not self._negotiated:
            text = text if legacy_text is None else legacy_text
        title, details = present(text, fallback_key)
        # Issue 52.2: a limit failure carries the window that refused it, with its reset.
        refused = self._port.refused_by() if cond.key in LIMIT_FAILURES else None
        entry = limit_entry(refused) if refused is not None else None
        if self._negotiated:
            turn_id = turn.turn_id
            publish = Publish(
                turn_error_id(turn_id), turn_id, cond, cond.category, title, details, "fail", prompt_turn=turn_id
            )
            publish.limits = (entry,) if entry is not None else ()
            self._port.plan(publish)
        else:
            data = refused_data(refused) if refused is not None else {}
            self._port.plan(legacy_answer(turn.turn_id, cond, text, details or title, kind, startup, **data))

    def _settle_held(self, turn: Turn, result: Result | None) -> None:
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

    def _settle_agent(self, turn: Turn, failure: AgentFailure, stop_reason: str) -> None:
        """Settle ``turn`` with an agent's failure: the record beside the agent's stop reason, or
        the legacy answer (that stop reason; for ``end_turn`` the failure's JSON-RPC error)."""
        cond = agent_condition(failure)
        title, details = agent_title(failure.words, failure.fallback)
        turn_id = turn.turn_id
        if self._negotiated:
            publish = Publish(turn_error_id(turn_id), turn_id, cond, cond.category, title, details, "fail")
            publish.prompt_turn, publish.stop_reason = turn_id, stop_reason
            self._port.plan(publish)
        elif stop_reason != "end_turn":
            self._port.plan(Settle(turn_id, stop_reason))
        else:
            self._port.plan(legacy_answer(turn_id, cond, failure.words, details or title, None))


def _tool_use_id(ev: PermissionAsked | PermissionAnswered) -> str:
    if not isinstance(ev.tool_use_id, str) or not ev.tool_use_id:
        raise LocalProtocolError(f"{type(ev).__name__} needs a non-empty tool use id")
    return ev.tool_use_id


#: The turn's events -> the method that takes each (the ledger feeds them here).
TURN_HANDLERS: dict[type, Callable[[TurnFlow, Any], None]] = {
    PromptStarted: TurnFlow.on_prompt,
    ApiRetry: TurnFlow.on_api_retry,
    Assistant: TurnFlow.on_assistant,
    Result: TurnFlow.on_result,
    MessagesReplaced: TurnFlow.on_messages_replaced,
    ModelRefusalNoFallback: TurnFlow.on_refusal_no_fallback,
    QueryError: TurnFlow.on_query_error,
    QueryEnded: TurnFlow.on_query_end,
    InternalError: TurnFlow.on_internal_error,
    Cancelled: TurnFlow.on_cancel,
    AgentAnswered: TurnFlow.on_agent_answered,
    AgentRetrying: TurnFlow.on_api_retry,
    AgentTurnEnded: TurnFlow.on_agent_turn_ended,
    AgentExited: TurnFlow.on_agent_exited,
    PermissionAsked: TurnFlow.on_permission_asked,
    PermissionAnswered: TurnFlow.on_permission_answered,
}

#: Effect name (an action of ``SessionFlow``) -> the method that carries it out.
EFFECT_HANDLERS: dict[str, Callable[[TurnFlow, Turn | None, Any], None]] = {
    "open_turn": TurnFlow._do_open_turn,
    "publish_retry": TurnFlow._do_publish_retry,
    "recover_answered": TurnFlow._do_recover_answered,
    "recover_all": TurnFlow._do_recover_all,
    "hold_failure": TurnFlow._do_hold_failure,
    "drop_failure": TurnFlow._do_drop_failure,
    "background_failure": TurnFlow._do_background_failure,
    "settle_stop": TurnFlow._do_settle_stop,
    "confirm_attempt": TurnFlow._do_confirm_attempt,
    "settle_failure": TurnFlow._do_settle_failure,
    "settle_result_error": TurnFlow._do_settle_result_error,
    "settle_cancelled": TurnFlow._do_settle_cancelled,
    "settle_runtime_loss": TurnFlow._do_settle_runtime_loss,
    "background_runtime_loss": TurnFlow._do_background_runtime_loss,
    "settle_missing_result": TurnFlow._do_settle_missing_result,
    "settle_internal_error": TurnFlow._do_settle_internal_error,
    "background_internal_error": TurnFlow._do_background_internal_error,
    "open_question": TurnFlow._do_open_question,
    "refuse_question": TurnFlow._do_refuse_question,
    "close_question": TurnFlow._do_close_question,
}
