"""The explorer's alphabet, roots and steps: what the environment may do, and doing it.

Rules
-----
* An :class:`Action` is one letter of the alphabet: the ``lifecycle trace`` lines it feeds (SDK
  lines translated by :func:`lifecycle.claude.from_stream_json`, adapter events as
  :mod:`lifecycle.cli.trace` makes them) and when the environment may emit them.
* A :class:`Root` is an initial configuration (a capable or legacy client; a fresh session or a
  ``session/load`` of a history).
* :func:`run_step` feeds one action to a clone of a world and delivers what the ledger plans;
  :func:`make_root` builds a root's world with the machine answers its caller owns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from lifecycle.answers import MachineAnswers
from lifecycle.claude import from_stream_json
from lifecycle.client import ClientProjection
from lifecycle.conditions import Recovery
from lifecycle.errors import LocalProtocolError
from lifecycle.events import (
    AuthStatus,
    Cancelled,
    Event,
    InternalError,
    Outbound,
    PermissionAnswered,
    PermissionAsked,
    PromptErrorOut,
    PromptResponseOut,
    PromptStarted,
    QueryEnded,
    QueryError,
    RuntimeReplaced,
)
from lifecycle.history import load_history
from lifecycle.ids import turn_error_id
from lifecycle.ledger import ActiveIncident, SessionLedger
from lifecycle.negotiation import negotiate
from lifecycle.session_flow import flow_transitions
from lifecycle.wire import SessionFailure

from .world import (
    ANSWER_TEXT,
    AUTH_FAILED_TEXT,
    AUTH_TEXT,
    CAPABLE,
    EPOCH,
    FALLBACK_TEXTS,
    INTERNAL_ERROR_NOTE,
    LEGACY,
    LIMIT_RESULT_TEXT,
    LIMIT_TEXT,
    LOCAL_COMMAND_TEXT,
    LOGIN_RESULT_TEXT,
    MAX_TOKENS_TEXT,
    OLDER_LIMIT_TEXT,
    QUERY_ERROR_TEXT,
    RATE_TEXT,
    REFUSAL_TEXT,
    RESULT_ERROR_TEXT,
    SERVER_ERROR_TEXT,
    SESSION_ID,
    STALE_RUNTIME_NOTE,
    WINDOW_RESETS_AT,
    Bounds,
    Recorder,
    World,
)

__all__ = [
    "ACTIONS",
    "ACTIONS_BY_NAME",
    "ROOTS",
    "Action",
    "Line",
    "Root",
    "Step",
    "adapter_line",
    "drain",
    "make_root",
    "outcome",
    "question_id",
    "root_lines",
    "run_step",
]

Line = dict[str, Any]


def adapter_line(event: str, **fields: Any) -> Line:
    return {"type": "adapter", "event": event, **fields}


def _assistant(text: str, model: str, error: str | None = None, uuid: str = "a1") -> Line:
    line: Line = {
        "type": "assistant",
        "message": {"model": model, "role": "assistant", "content": [{"type": "text", "text": text}]},
        "parent_tool_use_id": None,
        "uuid": uuid,
        "session_id": SESSION_ID,
    }
    if error is not None:
        line["error"] = error
    return line


def _retry_line(world: World) -> Line:
    if _retry_revision(world) == 0:
        return _retry(world, 429, "rate_limit")
    return _retry(world, None, "unknown")


def _retry(world: World, status: int | None, kind: str) -> Line:
    return {
        "type": "system",
        "subtype": "api_retry",
        "attempt": _retry_revision(world) + 1,
        "max_retries": 10,
        "retry_delay_ms": 500,
        "error_status": status,
        "error": kind,
        "session_id": SESSION_ID,
    }


@dataclass(frozen=True, slots=True)
class Action:
    """One letter of the alphabet: the trace lines it feeds, when it is enabled, what it may end.

    ``flow_event`` is the :class:`~lifecycle.session_flow.SessionFlow` event the spec makes of it
    (None: it is no turn event and must leave the turn where it is); the explorer steps its own
    copy of the flow by the class's declared transitions and compares it to the ledger's.
    ``recovers`` is the spec's table, not the ledger's: the recovery policies whose incidents may
    leave the active set on this event (spec: "Internal recovery").
    """

    name: str
    lines: Callable[[World], tuple[Line, ...]]
    enabled: Callable[[World, Bounds], bool]
    flow_event: str | None = None
    recovers: frozenset[Recovery] = frozenset()
    late: bool = False  # fed tagged with the replaced runtime's generation
    failure_kind: str | None = None  # Claude failure text of this kind (reference for legacy codes)
    settles_with_failure: bool = False  # ends a running turn as a failure (spec reference)
    publishes_nothing: bool = False  # recovery-only events: nothing may be sent
    ends_runtime: bool = False  # the query iterator threw or ended: the runtime is dead until replaced
    loss: bool = False  # the runtime was lost (rule 6: a connection failure with new_session)
    stop_reason: str | None = None  # a result whose stop reason wins over ``is_error`` (rule 4)
    turn_frame: bool = False  # an SDK message of the prompt's turn (rule 7: absorbed after cancel)
    permission: bool = False  # a permission question or its answer: never an incident
    window: bool = False  # a usage-limit window's report: the session's, never the turn's (issue 32)


# The environment: a Claude runtime emits SDK messages only while it is alive; once its query
# iterator threw or ended it is dead until the adapter replaces it, and the adapter replaces only
# a dead runtime and prompts only on a live one. ``auth_status``/``authenticate``, cancellation and
# late events from a replaced runtime may arrive at any time.


def _always(world: World, bounds: Bounds) -> bool:
    return True


def _alive(world: World, bounds: Bounds) -> bool:
    return not world.dead


def _while_running(world: World, bounds: Bounds) -> bool:
    return world.running and not world.dead


def _while_cancelled(world: World, bounds: Bounds) -> bool:
    """The prompt was answered ``cancelled`` and its turn's stream still drains (a live runtime)."""
    return world.flow == "cancelled" and not world.dead


def _background_allowed(world: World) -> bool:
    """A background (session-scoped) record may appear: once a prompt has run, while no incident
    is active. A constraint on the environment, like the incident bound: a background record
    before the first prompt, or on top of other incidents, only repeats the space a later one
    already reaches with one more incident in it (and multiplies it)."""
    return world.ledger.turn is not None and not world.active


def _idle_background(world: World, bounds: Bounds) -> bool:
    """No prompt runs and no cancelled turn drains (a live runtime), and a background record may
    appear (:func:`_background_allowed`)."""
    return world.flow == "idle" and not world.dead and _background_allowed(world)


def _internal_error_allowed(world: World, bounds: Bounds) -> bool:
    """The adapter fails while it handles what the live runtime sent: in a running turn it
    settles the turn; outside one it is a background record (see :func:`_background_allowed`)."""
    return not world.dead and (world.running or _background_allowed(world))


def _retry_revision(world: World) -> int:
    turn = world.ledger.turn
    return world.ledger.revision_of(turn_error_id(turn.turn_id)) if turn else 0


def _retry_allowed(world: World, bounds: Bounds) -> bool:
    return _while_running(world, bounds) and _retry_revision(world) < bounds.retries


def _turn_bound(world: World, bounds: Bounds) -> int:
    return bounds.turns if world.max_turns is None else min(bounds.turns, world.max_turns)


def _prompt_allowed(world: World, bounds: Bounds) -> bool:
    return not world.running and not world.dead and world.turns < _turn_bound(world, bounds)


def _replace_allowed(world: World, bounds: Bounds) -> bool:
    return world.dead and world.ledger.runtime < bounds.replacements


def _notice_revision(world: World) -> int:
    return max((a.revision for a in world.active if a.state == "noticed"), default=0)


def _turn_id(world: World) -> str:
    return f"t{world.turns + 1}"


def question_id(world: World) -> str:
    """The tool use id of the permission question of the current (or last) turn: one question
    per turn, so at most one is open at once (the bound that keeps the space small)."""
    turn = world.ledger.turn
    return f"toolu-{turn.turn_id if turn else 't0'}"


def _question_allowed(world: World, bounds: Bounds) -> bool:
    """Claude Code asks while the turn runs (a live runtime), while its question is not open."""
    return _while_running(world, bounds) and not world.ledger.question_open(question_id(world))


def _question_open(world: World, bounds: Bounds) -> bool:
    return world.ledger.question_open(question_id(world))


_Enabled = Callable[[World, Bounds], bool]


def _unless_waiting(enabled: _Enabled) -> _Enabled:
    """``enabled``, except while Claude Code waits for the answer to its permission question: its
    ``can_use_tool`` callback blocks the turn, so the turn's stream is quiet (no API call, no
    message, no result) until the answer; the turn may still be cancelled, lose its runtime, or
    fail in the adapter."""

    def quiet_while_waiting(world: World, bounds: Bounds) -> bool:
        return enabled(world, bounds) and not (world.running and _question_open(world, bounds))

    return quiet_while_waiting


def _outside_turn(world: World, bounds: Bounds) -> bool:
    """No turn runs (idle, or a cancelled turn draining): a live runtime may still ask."""
    return not world.running and not world.dead


def _after_turn(world: World, bounds: Bounds) -> bool:
    """The client may answer the last turn's question at any time after the turn left in_turn
    (cancel, runtime loss, any settlement), whether or not it was open then."""
    return not world.running and world.ledger.turn is not None


def _window(status: str, utilization: float | None) -> Line:
    """Claude Code's ``rate_limit_event`` for its 5-hour window, as the CLI prints it (issue 32)."""
    info: dict[str, Any] = {"status": status, "resetsAt": WINDOW_RESETS_AT, "rateLimitType": "five_hour"}
    if utilization is not None:
        info["utilization"] = utilization
    return {"type": "rate_limit_event", "rate_limit_info": info, "uuid": "rl1", "session_id": SESSION_ID}


def _window_allowed(world: World, bounds: Bounds) -> bool:
    """A root that reports windows, a live runtime, not waiting for a permission answer, and no
    other incident active (a constraint, like the incident bound: other incidents still come and
    go beside an active window warning, and a window's report on top of them only multiplies the
    space; that it ends none of them is the same rule whatever they are)."""
    others = any(a.state != "warned" for a in world.active)
    return world.windows and not others and _unless_waiting(_alive)(world, bounds)


def _result(text: str, *, is_error: bool, **fields: Any) -> Line:
    return {"type": "result", "subtype": "success", "is_error": is_error, "result": text, **fields}


_ANSWER_RECOVERS = frozenset({Recovery.REAL_MODEL_ANSWER, Recovery.CONFIRMED_ATTEMPT})
_WINDOW_RECOVERS = frozenset({Recovery.WINDOW_RESET})
_ATTEMPT_RECOVERS = frozenset({Recovery.CONFIRMED_ATTEMPT})

ACTIONS: tuple[Action, ...] = (
    Action("prompt", lambda w: (adapter_line("prompt", turnId=_turn_id(w)),), _prompt_allowed, "prompt"),
    Action(
        "prompt_while_running",
        lambda w: (adapter_line("prompt", turnId=_turn_id(w)),),
        lambda w, b: _while_running(w, b) and w.turns < _turn_bound(w, b),
    ),
    # A client re-sends a prompt with the last turn's id (a retried request): refused.
    Action(
        "prompt_reusing_turn_id",
        lambda w: (adapter_line("prompt", turnId=w.ledger.turn.turn_id if w.ledger.turn else "t0"),),
        lambda w, b: w.ledger.turn is not None and not w.running,
    ),
    # The first retry of a turn got an HTTP response (429), the next one none (a connection
    # error): both kinds, one letter (the VIEW would merge their successors anyway).
    Action("api_retry", lambda w: (_retry_line(w),), _unless_waiting(_retry_allowed), "api_retry", turn_frame=True),
    Action(
        "rate_limit_error",
        lambda w: (_assistant(RATE_TEXT, "<synthetic>", "rate_limit"),),
        _unless_waiting(_while_running),
        "claude_failure",
        failure_kind="rate_limit",
        turn_frame=True,
    ),
    Action(
        "auth_error",
        lambda w: (_assistant(AUTH_TEXT, "<synthetic>", "authentication_failed"),),
        _unless_waiting(_while_running),
        "claude_failure",
        failure_kind="auth",
        turn_frame=True,
    ),
    Action(
        "usage_limit_error",
        lambda w: (_assistant(LIMIT_TEXT, "<synthetic>", "rate_limit"),),
        _unless_waiting(_while_running),
        "claude_failure",
        failure_kind="usage_limit",
        turn_frame=True,
    ),
    # Issue 21 rule 3: Claude's provider error (after the turn's retries, the second of which got
    # no HTTP response): a service failure, never connection.
    Action(
        "server_error",
        lambda w: (_assistant(SERVER_ERROR_TEXT, "<synthetic>", "server_error"),),
        _unless_waiting(_while_running),
        "claude_failure",
        failure_kind="server_error",
        turn_frame=True,
    ),
    # Rule 7: the cancelled turn's stream drains; its failure arrives after ``cancel``.
    Action(
        "cancelled_turn_failure",
        lambda w: (_assistant(RATE_TEXT, "<synthetic>", "rate_limit"),),
        _while_cancelled,
        "claude_failure",
        turn_frame=True,
    ),
    # A subagent's failure, in a turn or in the background (issue 31): its message names the Agent
    # call that ran it; not the top-level transcript, so it changes nothing (.subagents).
    Action(
        "subagent_failure",
        lambda w: ({**_assistant(LIMIT_TEXT, "<synthetic>", "rate_limit"), "parent_tool_use_id": "toolu_agent"},),
        _unless_waiting(_alive),
        publishes_nothing=True,
    ),
    # Claude's failure with no prompt running: a session-scoped (background) record.
    Action(
        "background_failure",
        lambda w: (_assistant(AUTH_TEXT, "<synthetic>", "authentication_failed"),),
        _idle_background,
        "claude_failure",
    ),
    Action(
        "real_answer",
        lambda w: (_assistant(ANSWER_TEXT, "claude-opus-4-5"),),
        _unless_waiting(_alive),  # also a cancelled turn's late answer, and one outside a prompt
        "real_answer",
        recovers=_ANSWER_RECOVERS,
        turn_frame=True,
    ),
    # A ``<synthetic>`` local-command answer proves nothing: no turn event at all.
    Action(
        "local_command",
        lambda w: (_assistant(LOCAL_COMMAND_TEXT, "<synthetic>"),),
        _unless_waiting(_while_running),
        turn_frame=True,
    ),
    Action(
        "result_success",
        lambda w: (_result(ANSWER_TEXT, is_error=False, stop_reason="end_turn"),),
        _unless_waiting(_alive),
        "result_success",
        recovers=_ATTEMPT_RECOVERS,
        turn_frame=True,
    ),
    Action(
        "result_error",
        lambda w: (_result(RESULT_ERROR_TEXT, is_error=True, api_error_status=529, terminal_reason="api_error"),),
        _unless_waiting(_alive),
        "result_error",
        settles_with_failure=True,
        turn_frame=True,
    ),
    # Rule 4: the stop reason wins over ``is_error`` (both as the CLI sends them: is_error true).
    Action(
        "result_max_tokens",
        lambda w: (_result(MAX_TOKENS_TEXT, is_error=True, stop_reason="max_tokens"),),
        _unless_waiting(_alive),
        "result_stop",
        recovers=_ATTEMPT_RECOVERS,
        stop_reason="max_tokens",
        turn_frame=True,
    ),
    Action(
        "result_refusal",
        lambda w: (_result(REFUSAL_TEXT, is_error=True, stop_reason="refusal", terminal_reason="api_error"),),
        _unless_waiting(_alive),
        "result_stop",
        recovers=_ATTEMPT_RECOVERS,
        stop_reason="refusal",
        turn_frame=True,
    ),
    # Issue 21 rule 1: a budget limit is a limit failure even with stop_reason max_tokens.
    Action(
        "result_limit_max_tokens",
        lambda w: (
            {
                "type": "result",
                "subtype": "error_max_budget_usd",
                "is_error": True,
                "stop_reason": "max_tokens",
                "errors": [LIMIT_RESULT_TEXT],
            },
        ),
        _unless_waiting(_alive),
        "result_error",
        settles_with_failure=True,
        turn_frame=True,
    ),
    # Issue 21 rule 7: a login request only in the error result's text (no assistant frame).
    Action(
        "login_result",
        lambda w: (_result(LOGIN_RESULT_TEXT, is_error=True, terminal_reason="api_error"),),
        _unless_waiting(_alive),
        "result_error",
        settles_with_failure=True,
        turn_frame=True,
    ),
    Action(
        "auth_ok",
        lambda w: ({"type": "auth_status", "isAuthenticating": False, "output": []},),
        _always,
        recovers=frozenset({Recovery.AUTH_STATUS}),
        publishes_nothing=True,
    ),
    Action(
        "auth_failed",
        lambda w: ({"type": "auth_status", "isAuthenticating": False, "output": [], "error": AUTH_FAILED_TEXT},),
        _always,
        publishes_nothing=True,
    ),
    Action(
        "query_error",
        lambda w: (adapter_line("query_error", message=QUERY_ERROR_TEXT),),
        _alive,
        "transport_lost",
        settles_with_failure=True,
        ends_runtime=True,
        loss=True,
    ),
    Action(
        "worker_shutdown_eof",
        lambda w: ({"type": "system", "subtype": "worker_shutting_down", "reason": "idle"}, adapter_line("query_end")),
        _alive,
        "transport_lost",
        settles_with_failure=True,
        ends_runtime=True,
        loss=True,
    ),
    Action(
        "query_end",
        lambda w: (adapter_line("query_end"),),
        _alive,
        "stream_ended",
        settles_with_failure=True,
        ends_runtime=True,
    ),
    # The adapter's own failure while it handles what the live runtime sent.
    Action(
        "internal_error",
        lambda w: (adapter_line("internal_error", note=INTERNAL_ERROR_NOTE),),
        _internal_error_allowed,
        "internal_error",
        settles_with_failure=True,
    ),
    Action(
        "runtime_replaced",
        lambda w: (adapter_line("runtime_replaced"),),
        _replace_allowed,
        recovers=frozenset({Recovery.RUNTIME_REPLACED}),
        publishes_nothing=True,
    ),
    Action(
        "model_fallback",
        lambda w: (
            {
                "type": "system",
                "subtype": "model_fallback",
                "content": FALLBACK_TEXTS[_notice_revision(w) % len(FALLBACK_TEXTS)],
                "original_model": "claude-opus-4-5",
                "fallback_model": "claude-sonnet-4-5",
                "trigger": "overloaded",
            },
        ),
        _unless_waiting(lambda w, b: _while_running(w, b) and _notice_revision(w) < b.notices),  # during a query
        # A newer notice retires none (issue 21 rule 2; lifecycle.ledger.MAX_ACTIVE_NOTICES is 4096).
        recovers=frozenset({Recovery.NEVER}),
    ),
    # Contract rule 1: the model declined and Claude retried with another model: a warning notice
    # (a record for a capable client, the reference's transcript line for a legacy one).
    Action(
        "refusal_fallback",
        lambda w: (
            {
                "type": "system",
                "subtype": "model_refusal_fallback",
                "trigger": "refusal",
                "direction": "retry",
                "scope": "session",
                "original_model": "claude-opus-5-5",
                "fallback_model": "claude-opus-4-8",
                "api_refusal_category": "cyber",
                "api_refusal_explanation": "This request was declined.",
            },
        ),
        _unless_waiting(lambda w, b: _while_running(w, b) and sum(a.state == "noticed" for a in w.active) < b.notices),
        recovers=frozenset({Recovery.NEVER}),
    ),
    Action("cancel", lambda w: (adapter_line("cancel"),), _while_running, "cancel"),
    # Claude Code's permission questions (its can_use_tool callback) and the client's answers.
    Action(
        "permission_asked",
        lambda w: (adapter_line("permission_asked", toolUseId=question_id(w)),),
        _question_allowed,
        "permission_asked",
        permission=True,
    ),
    Action(
        "permission_answered",
        lambda w: (adapter_line("permission_answered", toolUseId=question_id(w)),),
        _question_open,
        "permission_answered",
        permission=True,
    ),
    # Asked outside a running turn: idle, or the cancelled turn's tool while its stream drains.
    Action(
        "permission_asked_outside_turn",
        lambda w: (adapter_line("permission_asked", toolUseId=question_id(w)),),
        _outside_turn,
        "permission_asked",
        permission=True,
        turn_frame=True,
    ),
    # The client's answer arrives after the question's turn left in_turn: never honoured.
    Action(
        "permission_answered_late",
        lambda w: (adapter_line("permission_answered", toolUseId=question_id(w)),),
        _after_turn,
        "permission_answered",
        permission=True,
    ),
    # Issue 32: Claude Code reports its 5-hour window (at two shares, and back to allowed) whenever
    # a live runtime's API answer changes it: in a turn, between turns, while a cancelled turn
    # drains (not while it waits for a permission answer: no API call then).
    Action("window_warning", lambda w: (_window("allowed_warning", 0.9),), _window_allowed,
           recovers=_WINDOW_RECOVERS, window=True),
    Action("window_warning_higher", lambda w: (_window("allowed_warning", 0.95),), _window_allowed,
           recovers=_WINDOW_RECOVERS, window=True),
    Action("window_allowed", lambda w: (_window("allowed", None),), _window_allowed,
           recovers=_WINDOW_RECOVERS, window=True),
    Action(
        "late_event",
        lambda w: (adapter_line("late_event", runtime=w.ledger.runtime - 1, note=STALE_RUNTIME_NOTE,
                            line=_assistant(ANSWER_TEXT, "claude-opus-4-5")),),
        lambda w, b: w.ledger.runtime >= 1,
        late=True,
        publishes_nothing=True,
    ),
)
ACTIONS_BY_NAME: Mapping[str, Action] = {a.name: a for a in ACTIONS}


# ---------------------------------------------------------------------------- roots (histories)


def _history_user(uuid: str, text: str) -> Line:
    return {"type": "user", "uuid": uuid, "message": {"role": "user", "content": text}}


def _history_assistant(uuid: str, text: str, model: str) -> Line:
    return {
        "type": "assistant",
        "uuid": uuid,
        "message": {"role": "assistant", "model": model, "content": [{"type": "text", "text": text}]},
    }


@dataclass(frozen=True, slots=True)
class Root:
    """An initial configuration; ``history`` is replayed with ``session/load`` (a fresh ledger).

    ``limits`` and ``active_limit`` are the spec's expectation for the replay: how many typed
    records it restores and which of them (by position) stays active.
    """

    name: str
    negotiated: bool
    history: tuple[Line, ...] | None = None
    limits: int = 0
    active_limit: int | None = None
    turns: int | None = None  # a tighter turn bound for this root (a loaded session is explored less)
    windows: bool = False  # Claude Code reports usage-limit windows in this root (issue 32)


_H_LATEST = (
    _history_user("u1", "hi"),
    _history_assistant("m1", OLDER_LIMIT_TEXT, "<synthetic>"),
    _history_user("u2", "hi again"),
    _history_assistant("m2", LIMIT_TEXT, "<synthetic>"),
)
_H_RECOVERED = (
    _history_user("u1", "hi"),
    _history_assistant("m1", LIMIT_TEXT, "<synthetic>"),
    _history_user("u2", "and now?"),
    _history_assistant("m2", ANSWER_TEXT, "claude-opus-4-5"),
)
_H_ORPHAN = (_history_assistant("m1", LIMIT_TEXT, "<synthetic>"),)

ROOTS: tuple[Root, ...] = (
    Root("capable/new", True),
    Root("capable/load-latest-limit-active", True, _H_LATEST, limits=2, active_limit=1, turns=1),
    Root("capable/load-limit-recovered", True, _H_RECOVERED, limits=1, active_limit=None, turns=1),
    Root("capable/load-limit-without-user-message", True, _H_ORPHAN, limits=1, active_limit=0, turns=1),
    # Issue 32's windows: in a root of its own with one turn (a window's warning multiplies every
    # state it is active in by the window's states); a legacy client is shown none of them, so the
    # legacy root reports them too (its states do not multiply).
    Root("capable/new-windows", True, turns=1, windows=True),
    Root("legacy/new", False, windows=True),
    Root("legacy/load-latest-limit-active", False, _H_LATEST, limits=2, active_limit=1, turns=1),
)


def root_lines(root: Root) -> tuple[Line, ...]:
    init = adapter_line("initialize", clientCapabilities=CAPABLE if root.negotiated else LEGACY)
    if root.history is None:
        return init, adapter_line("session", sessionId=SESSION_ID)
    return init, adapter_line("load", sessionId=SESSION_ID, history=list(root.history))


# ---------------------------------------------------------------------------- steps


@dataclass(slots=True)
class Step:
    """One edge: the action, the configurations before and after, and what happened."""

    action: Action | None  # None: the root's setup
    before: World | None
    after: World
    sent: list[tuple[Outbound, bool]]  # every planned message, and whether it was delivered
    recorder: Recorder
    accepted: bool = True
    refused: LocalProtocolError | None = None
    error: BaseException | None = None
    root: Root | None = None
    fail_first: bool = False

    @property
    def name(self) -> str:
        return self.action.name if self.action else "root"

    def records(self) -> Iterator[tuple[Outbound, bool, SessionFailure]]:
        for out, ok in self.sent:
            if out.record is not None:
                yield out, ok, out.record

    @property
    def before_active(self) -> tuple[ActiveIncident, ...]:
        return self.before.active if self.before else ()

    @property
    def left(self) -> list[ActiveIncident]:
        """Incidents active before this step and not after it."""
        now = {a.id for a in self.after.active}
        return [a for a in self.before_active if a.id not in now]

    @property
    def was_running(self) -> bool:
        return self.before.running if self.before else False

    @property
    def failure_settle_expected(self) -> bool:
        """Spec reference: this step ends the running turn as a failure."""
        if self.action is None or self.before is None or not self.was_running:
            return False
        if self.action.settles_with_failure:
            return True
        return self.action.name == "result_success" and self.before.turn_failure is not None


def _event_for(line: Line, world: World) -> Event | None:
    if line.get("type") != "adapter":
        return from_stream_json(line)
    what = line["event"]
    if what == "prompt":
        return PromptStarted(turn_id=line["turnId"])
    if what == "cancel":
        return Cancelled()
    if what == "query_error":
        return QueryError(message=line.get("message", ""))
    if what == "query_end":
        return QueryEnded()
    if what == "runtime_replaced":
        return RuntimeReplaced()
    if what == "authenticated":
        return AuthStatus(ok=line.get("ok") is True)
    if what == "late_event":
        return from_stream_json(line["line"])
    if what == "internal_error":
        return InternalError()
    if what == "permission_asked":
        return PermissionAsked(tool_use_id=line["toolUseId"])
    if what == "permission_answered":
        return PermissionAnswered(tool_use_id=line["toolUseId"])
    raise ValueError(f"no event for adapter line {what!r}")  # pragma: no cover


def drain(world: World, sent: list[tuple[Outbound, bool]]) -> None:
    ledger = world.ledger
    while (out := ledger.next_outbound()) is not None:
        if world.fail_next > 0:
            world.fail_next -= 1
            ledger.delivery_failed()
            sent.append((out, False))
        else:
            world.client.receive(out.to_jsonrpc())
            ledger.delivered()
            sent.append((out, True))


def outcome(out: Outbound) -> str:
    if isinstance(out, PromptErrorOut):
        return f"error {out.code}"
    assert isinstance(out, PromptResponseOut)
    return f"{out.stop_reason}{' +record' if out.record is not None else ''}"


def _finish(step: Step) -> None:
    """Update the environment counters and the monitor after a step."""
    w, action = step.after, step.action
    if action is not None:
        if action.name == "prompt" and step.accepted and step.refused is None:
            w.turns += 1
            w.turn_failure = None
        elif action.name in ("model_fallback", "refusal_fallback"):
            w.notices += 1
        elif action.name == "runtime_replaced":
            w.dead = False
        if action.ends_runtime:
            w.dead = True
        if action.failure_kind and step.was_running and step.before and step.before.turn_failure is None:
            w.turn_failure = action.failure_kind
        if action.flow_event is not None and step.accepted and step.before is not None:
            w.flow = _FLOW.get((step.before.flow, action.flow_event), step.before.flow)
    settled = [out.turn_id for out, _ in step.sent if isinstance(out, (PromptResponseOut, PromptErrorOut))]
    if settled:
        w.settled = w.settled + tuple(settled)
    closed = {t[0] for t in step.recorder.transitions if t[2] == "historical"}
    if closed:
        w.closed = w.closed | closed


_FLOW = flow_transitions()


def run_step(before: World, action: Action, *, fail_first: bool = False) -> Step:
    """Apply ``action`` to a clone of ``before`` (``before`` itself is left untouched).

    ``fail_first``: the step's first send fails (``deliver_fails`` before the action's lines).
    """
    recorder = Recorder()
    world = before.clone(recorder)
    step = Step(action, before, world, [], recorder, fail_first=fail_first)
    if fail_first:
        world.fail_next = 1
        world.failures_used += 1
    for line in action.lines(before):
        try:
            event = _event_for(line, world)
            if event is None:
                continue
            runtime = world.ledger.runtime - 1 if action.late else None
            step.accepted = world.ledger.feed(event, runtime=runtime) and step.accepted
            drain(world, step.sent)
        except LocalProtocolError as exc:
            step.refused = exc
            step.accepted = False
        except Exception as exc:
            step.error = exc
            return step
    _finish(step)
    return step


def make_root(root: Root, answers: MachineAnswers | None = None) -> Step:
    """The root configuration: ``initialize``, then ``session`` or ``load`` (a fresh ledger).

    ``answers``: the exploration's machine answers (asked of the machine class as it is now);
    ``None`` gives the root's ledger answers of its own.
    """
    recorder = Recorder()
    lines = root_lines(root)
    negotiated = negotiate(lines[0]["clientCapabilities"])
    ledger = SessionLedger(SESSION_ID, negotiated=negotiated, epoch=EPOCH, observer=recorder, answers=answers)
    world = World(ledger=ledger, client=ClientProjection(), root=root.name, max_turns=root.turns, windows=root.windows)
    step = Step(None, None, world, [], recorder, root=root)
    if root.history is not None:
        try:
            ledger.feed(load_history(root.history))
            drain(world, step.sent)
        except Exception as exc:
            step.error = exc
            return step
    _finish(step)
    return step

