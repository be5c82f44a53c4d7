"""The prompt turn of one adapter session, as the machine that decides it (spec: "Delivery
surfaces", "Severity"; the reference adapter's "stop reason propagation" rules).

Rules
-----
Everything that decides what a turn event means lives in :class:`SessionFlow`: whether it is
accepted in the turn's current state, which state follows, and which of the ledger's effects it
has (its transitions' actions, named after what the ledger then does). The ledger never decides
these by itself; it classifies what arrived into one of the flow's events (:data:`FLOW_EVENTS`),
asks the machine, and performs the effects it is told, in order. So each turn rule has one home:

* a warning never ends a turn: ``api_retry`` is a self-loop inside the turn;
* the first Claude failure of a turn is held (``hold_failure``) and settles the turn with
  Claude's own text whatever ends it (a result, the stream ending, an internal error);
* a held failure the provider replaced is superseded: ``failure_replaced`` (the message that
  carried it was replaced, :class:`lifecycle.events.MessagesReplaced`) drops it
  (``drop_failure``) and the turn runs on, in ``running`` (not ``answered``: ``failing`` does not
  remember whether an answer came before it, and a replaced response is an attempt Claude Code
  retried, so only an answer that stands, the replacement's, marks the turn answered; one that
  came before had already recovered what waits for one). Anywhere else it changes nothing;
* a stop reason (``max_tokens``, ``refusal``) wins over ``is_error``: ``result_stop`` settles
  with that stop reason and publishes no failure (which results are ``result_stop`` is decided
  by :func:`lifecycle.conditions.result_event`); a turn cut short or refused is not a confirmed
  attempt, so it recovers nothing;
* a cancelled turn makes no record and shows nothing more: after ``cancel`` the turn is answered
  ``cancelled`` and its late frames (Claude's failure, its result) are absorbed by ``cancelled``
  until its result arrives or the next prompt starts; the ledger forwards none of its text to any
  client while the flow is ``cancelled`` (the reference drops every frame of a cancelled turn);
* runtime loss is never swallowed: ``transport_lost`` (the query iterator throwing, a worker
  shutdown's EOF) settles a running turn with a connection failure, whatever Claude said before,
  and outside a turn becomes a session-scoped connection failure. The SDK's own ``ResultError``
  is the error result it follows (:func:`lifecycle.claude.from_sdk_exception`), never a loss;
* a real model answer recovers what waits for one; inside a turn it also marks the turn
  answered, and a successful result then confirms the attempt;
* a question is open only while its turn runs: Claude Code's permission question
  (``permission_asked``) is opened (``open_question``) in any state of ``in_turn`` and refused
  (``refuse_question``: the client is never asked) in ``idle`` and ``cancelled``; its answer
  (``permission_answered``) closes it (``close_question``) while the turn runs. Leaving
  ``in_turn`` (cancel, runtime loss, any settlement) withdraws every open question; an answer
  that arrives after that is not honoured (no effect). Permission events are never incidents:
  they publish nothing and move the turn nowhere.

Theory of operation
-------------------
``idle``: no prompt is running. ``in_turn`` (compound): ``running`` (nothing decisive yet),
``answered`` (a real model answer arrived), ``failing`` (Claude's failure text is held).
``cancelled``: the prompt was answered ``cancelled`` and the turn's stream is still draining.
Open questions are the turn's data, not a state: a question opened in ``in_turn`` stays open only
as long as the flow stays there (:meth:`lifecycle.delivery_surfaces.TurnFlow.question_open`), and
leaving ``in_turn`` hands its id to the ledger's withdrawn queue (``take_withdrawn``).
The ledger keeps the leaves as :class:`lifecycle.delivery_surfaces.FlowState` (the same ids;
``tests/test_delivery_surfaces.py`` checks they agree, since this module is imported only when
a ledger first asks), and :data:`EFFECTS` is read from the transitions' actions; the ledger
carries out each effect by the method :data:`lifecycle.delivery_surfaces.EFFECT_HANDLERS` names.

The machine is pure, like :class:`lifecycle.incident.IncidentMachine`: it has no guards and its
actions only name the effect (:meth:`SessionFlow._effect` appends the name to the model's
``effects``), so its answer to an event is a function of ``(state, event)``: 5 x 14 points. The
ledger's :class:`~lifecycle.answers.MachineAnswers` asks a real instance once per point
(:meth:`~lifecycle.answers.MachineAnswers.turn`) and reuses the answer; a turn costs no machine
instance. ``tests/test_session_flow.py`` checks the kept answers against fresh instances.
"""

from __future__ import annotations

from statemachine import State, StateMachine

__all__ = ["EFFECTS", "FLOW_EVENTS", "FLOW_STATES", "SessionFlow", "flow_transitions"]


class SessionFlow(StateMachine):
    """One session's prompt turns: idle -> in turn (running | answered | failing) -> idle,
    or -> cancelled (draining) -> idle."""

    # -- states
    idle = State(initial=True)

    class in_turn(State.Compound):
        running = State(initial=True)
        answered = State()
        failing = State()

    cancelled = State()

    # -- events (named after what the adapter receives), with the ledger's effects as actions
    prompt = idle.to(in_turn, on="open_turn") | cancelled.to(in_turn, on="open_turn")
    api_retry = (
        in_turn.running.to(in_turn.running, on="publish_retry")
        | in_turn.answered.to(in_turn.answered, on="publish_retry")
        | in_turn.failing.to(in_turn.failing, on="publish_retry")
    )
    real_answer = (
        in_turn.running.to(in_turn.answered, on="recover_answered")
        | in_turn.answered.to(in_turn.answered, on="recover_answered")
        | in_turn.failing.to(in_turn.failing, on="recover_answered")
        | idle.to(idle, on="recover_all")
        | cancelled.to(cancelled, on="recover_all")
    )
    claude_failure = (
        in_turn.running.to(in_turn.failing, on="hold_failure")
        | in_turn.answered.to(in_turn.failing, on="hold_failure")
        | in_turn.failing.to(in_turn.failing)
        | idle.to(idle, on="background_failure")
        | cancelled.to(cancelled)
    )
    failure_replaced = (
        in_turn.failing.to(in_turn.running, on="drop_failure")
        | in_turn.running.to(in_turn.running)
        | in_turn.answered.to(in_turn.answered)
        | idle.to(idle)
        | cancelled.to(cancelled)
    )
    result_success = (
        in_turn.running.to(idle, on="settle_stop")
        | in_turn.answered.to(idle, on=["settle_stop", "confirm_attempt"])
        | in_turn.failing.to(idle, on="settle_failure")
        | cancelled.to(idle)
    )
    result_stop = in_turn.to(idle, on="settle_stop") | cancelled.to(idle)
    result_error = (
        in_turn.running.to(idle, on="settle_result_error")
        | in_turn.answered.to(idle, on="settle_result_error")
        | in_turn.failing.to(idle, on="settle_failure")
        | cancelled.to(idle)
    )
    cancel = in_turn.to(cancelled, on="settle_cancelled")
    transport_lost = (
        in_turn.to(idle, on="settle_runtime_loss")
        | idle.to(idle, on="background_runtime_loss")
        | cancelled.to(idle, on="background_runtime_loss")
    )
    stream_ended = (
        in_turn.running.to(idle, on="settle_missing_result")
        | in_turn.answered.to(idle, on="settle_missing_result")
        | in_turn.failing.to(idle, on="settle_failure")
        | idle.to(idle)
        | cancelled.to(idle)
    )
    internal_error = (
        in_turn.running.to(idle, on="settle_internal_error")
        | in_turn.answered.to(idle, on="settle_internal_error")
        | in_turn.failing.to(idle, on="settle_failure")
        | idle.to(idle, on="background_internal_error")
        | cancelled.to(cancelled, on="background_internal_error")
    )
    permission_asked = (
        in_turn.running.to(in_turn.running, on="open_question")
        | in_turn.answered.to(in_turn.answered, on="open_question")
        | in_turn.failing.to(in_turn.failing, on="open_question")
        | idle.to(idle, on="refuse_question")
        | cancelled.to(cancelled, on="refuse_question")
    )
    permission_answered = (
        in_turn.running.to(in_turn.running, on="close_question")
        | in_turn.answered.to(in_turn.answered, on="close_question")
        | in_turn.failing.to(in_turn.failing, on="close_question")
        | idle.to(idle)
        | cancelled.to(cancelled)
    )

    # -- actions: each names one effect the ledger performs (the machine itself does nothing)
    def _effect(self, name: str) -> None:
        effects = getattr(self.model, "effects", None)
        if isinstance(effects, list):  # an instance made for a diagram or a look has nowhere to put them
            effects.append(name)

    def open_turn(self) -> None:
        """A new turn: its id is the prompt's (a running turn refuses a second prompt)."""
        self._effect("open_turn")

    def publish_retry(self) -> None:
        """An ``api_retry`` warning on the turn's failure id (never settles the turn)."""
        self._effect("publish_retry")

    def recover_answered(self) -> None:
        """A real answer in this turn: recover quota and earlier turns' failures."""
        self._effect("recover_answered")

    def recover_all(self) -> None:
        """A real answer outside a running turn: recover quota and every turn-scoped failure."""
        self._effect("recover_all")

    def hold_failure(self) -> None:
        """Keep Claude's first failure text: it settles the turn."""
        self._effect("hold_failure")

    def drop_failure(self) -> None:
        """The message that carried the held failure was replaced: the turn no longer holds it."""
        self._effect("drop_failure")

    def background_failure(self) -> None:
        """Claude's failure outside a turn: a session-scoped record."""
        self._effect("background_failure")

    def settle_stop(self) -> None:
        """Answer the prompt with the result's ACP stop reason (no failure)."""
        self._effect("settle_stop")

    def confirm_attempt(self) -> None:
        """An answered turn ended well: its warnings and earlier turn failures recover."""
        self._effect("confirm_attempt")

    def settle_failure(self) -> None:
        """Settle the turn with the held Claude failure."""
        self._effect("settle_failure")

    def settle_result_error(self) -> None:
        """Settle the turn with the error result's own text and condition."""
        self._effect("settle_result_error")

    def settle_cancelled(self) -> None:
        """Answer the prompt ``cancelled``."""
        self._effect("settle_cancelled")

    def settle_runtime_loss(self) -> None:
        """Settle the turn with a connection failure that lasts until runtime replacement."""
        self._effect("settle_runtime_loss")

    def background_runtime_loss(self) -> None:
        """The runtime was lost outside a turn: a session-scoped connection failure (once)."""
        self._effect("background_runtime_loss")

    def settle_missing_result(self) -> None:
        """The stream ended without a result: settle with the internal missing-result failure (a
        legacy client, as the reference answers it: ``stopReason: end_turn``)."""
        self._effect("settle_missing_result")

    def settle_internal_error(self) -> None:
        """The adapter failed: settle with its recoverable internal error."""
        self._effect("settle_internal_error")

    def background_internal_error(self) -> None:
        """The adapter failed outside a running turn: a session-scoped record."""
        self._effect("background_internal_error")

    def open_question(self) -> None:
        """Open Claude Code's permission question in the running turn: the client may be asked."""
        self._effect("open_question")

    def refuse_question(self) -> None:
        """No turn runs: the question is refused and the client is never asked."""
        self._effect("refuse_question")

    def close_question(self) -> None:
        """The question is over while its turn runs: its answer may be honoured if it was open."""
        self._effect("close_question")


#: Every event of :class:`SessionFlow`, in declaration order.
FLOW_EVENTS: tuple[str, ...] = tuple(
    dict.fromkeys(str(e.id) for s in SessionFlow.states_map.values() for t in s.transitions for e in t.events)
)

#: The leaf states a turn can be in (what ``SessionLedger`` keeps), in declaration order.
FLOW_STATES: tuple[str, ...] = tuple(s.id for s in SessionFlow.states_map.values() if not s.states)

#: Every effect name an action of :class:`SessionFlow` can produce, each once (read
#: from the transitions' actions, as ``workshop diagrams`` draws them).
EFFECTS: tuple[str, ...] = tuple(
    dict.fromkeys(
        str(action)
        for s in SessionFlow.states_map.values()
        for t in s.transitions
        for action in t.on
        if not action.is_convention
    )
)


def flow_transitions() -> dict[tuple[str, str], str]:
    """The declared transitions as ``(source leaf, event) -> target leaf`` (read from the class;
    a transition from ``in_turn`` applies to each of its leaves, a target ``in_turn`` is its
    initial leaf ``running``)."""
    table: dict[tuple[str, str], str] = {}
    leaves = {s.id: s for s in SessionFlow.states_map.values() if not s.states}
    for state in SessionFlow.states_map.values():
        for transition in state.transitions:
            target = transition.target
            while target.states:  # a compound target enters its initial child
                target = next(s for s in target.states if s.initial)
            sources = [state] if not state.states else [leaf for leaf in leaves.values() if leaf.parent is state]
            for source in sources:
                for event in transition.events:
                    table.setdefault((source.id, str(event.id)), target.id)
    return table
