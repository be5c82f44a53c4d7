"""``lifecycle check``: an exhaustive, bounded explorer of one adapter session (TLC-style).

Rules
-----
* The explorer runs the real code: every step feeds real events (SDK lines translated by
  :func:`lifecycle.claude.from_stream_json`, adapter events as :mod:`lifecycle.cli.trace` makes them)
  into a real :class:`~lifecycle.ledger.SessionLedger` whose incidents move only by the answers
  of real :class:`~lifecycle.incident.IncidentMachine` instances, and delivers what it plans to a real
  :class:`~lifecycle.client.ClientProjection`. Nothing here restates *how* the ledger decides;
  the invariants restate *what* the spec requires, one spec sentence each.
* An abstract state is the root and the ledger's VIEW (see the comment at :func:`ledger_view`):
  a generic digest of every slot of the ledger and its incidents and turn, minus what cannot
  change what happens next (presentation text, revision numbers, id sequence numbers), plus
  whether the Claude runtime is dead. Two paths that reach the same abstract state are one state.
* The environment is realistic, not arbitrary: SDK messages come from a live runtime (a
  dead one, after its iterator threw or ended, is replaced before the next prompt), assistant
  messages and fallback notices arrive during a prompt, and any step may have its first record
  send fail (``deliver_fails``).
* Bounds keep the space finite and small: see :class:`Bounds`. States with more active
  incidents than the bound are counted but not expanded (a TLC ``CONSTRAINT``).

Theory of operation
-------------------
Breadth-first search from the roots (a capable or legacy client; a fresh session or a
``session/load`` of a history holding usage-limit messages). Each node keeps its concrete
configuration only until it is expanded. To get a successor, the configuration is *cloned*
(a structural copy of the ledger's slots and the client's lists, ~tens of µs) and one action is
fed to the clone; re-running the shortest path to every frontier state would cost the whole
prefix per successor. An incident holds no machine instance (the ledger asks the run's
:class:`lifecycle.incident.MachineAnswers`, which asks a real ``IncidentMachine`` once per distinct
question), so cloning one is copying its slots; every run makes its own answers, so a patched
(mutant) machine class is asked afresh.

Every edge is checked against every invariant; every new state is also checked for traps (each
active incident must still be able to leave the active set through its own policy's event).
The first violation of each invariant is reported with the shortest path to it (BFS order), as
``lifecycle trace`` input lines (``shared/conformance/FORMAT.md``). Coverage of every declared
``IncidentMachine`` and :class:`~lifecycle.session_flow.SessionFlow` transition, and a list of
expected reachability targets, make sure the explorer is not vacuous; ``--mutants`` seeds real
bugs and requires each to be caught (:mod:`lifecycle.tools.mutants`).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import itertools
import json
import re
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from pydantic import BaseModel

from ...claude import from_stream_json
from ...client import ClientProjection
from ...conditions import Condition, Recovery
from ...errors import LocalProtocolError
from ...events import (
    Assistant,
    AuthStatus,
    Cancelled,
    Event,
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
)
from ...history import load_history
from ...incident import RECOVERY_EVENTS, IncidentMachine, MachineAnswers
from ...ledger import ActiveIncident, SessionLedger
from ...negotiation import negotiate
from ...session_flow import flow_state_of, flow_transitions
from ...wire import MalformedRecordError, SessionFailure, Severity, read_record

__all__ = [
    "INVARIANTS",
    "TARGETS",
    "Bounds",
    "CheckResult",
    "Explorer",
    "PathReplay",
    "Violation",
    "check_escape",
    "cli_main",
    "declared_incident_transitions",
    "explore",
    "render_report",
    "run_path",
]

SESSION_ID = "s1"
EPOCH = "e1"  # what ``lifecycle trace`` gives the first session it opens

# ---------------------------------------------------------------------------- injected secrets
# Raw SDK/exception text the rules inject; none of it may reach a delivered title or details.
API_KEY = "sk-ant-api03-Zq3fW9xN2mL7pR4tK8vY1bH6cJ0dG5sA3eU9iO2nM7xQ4zB8vC1kF6hT0rW5yE2uL9pD3gS-AAAAA"
BEARER = "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.Qm9ndXNTaWduYXR1cmVGb3JUZXN0cw"
PRIVATE_PATH = "/home/alice/.claude/.credentials.json"
#: The distinctive part of each secret: none may appear in a title, details or legacy error data.
SECRET_MARKERS: tuple[str, ...] = ("sk-ant-api03-Zq3fW9x", "eyJhbGciOiJIUzI1NiJ9", "/home/alice")

RATE_TEXT = (
    "API Error: Request rejected (429) · Number of requests has exceeded your rate limit "
    f"(x-api-key: {API_KEY})"
)
AUTH_TEXT = f"Invalid API key · Please run /login · Authorization: {BEARER}"
LIMIT_TEXT = "You've hit your 5-hour limit · resets 4:06pm (UTC)"
OLDER_LIMIT_TEXT = "You've hit your session limit · resets 11:00am (UTC)"
RESULT_ERROR_TEXT = f"API Error: 529 Overloaded · while reading {PRIVATE_PATH}"
QUERY_ERROR_TEXT = f"ProcessTransport is not ready for writing (ANTHROPIC_API_KEY={API_KEY}, cwd={PRIVATE_PATH})"
AUTH_FAILED_TEXT = f"401 Unauthorized ({BEARER})"
LOCAL_COMMAND_TEXT = "No response requested."
ANSWER_TEXT = "Hello! How can I help?"
FALLBACK_TEXTS = (
    "Switched to claude-sonnet-4-5 because claude-opus-4-5 is overloaded",
    "Switched to claude-haiku-4-5 because claude-sonnet-4-5 is overloaded",
)

CAPABLE = {"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}}
LEGACY: dict[str, Any] = {}

_STALE_RUNTIME_NOTE = "not expressible in a trace: lifecycle trace reports this line and skips it"


@dataclass(frozen=True, slots=True)
class Bounds:
    """The explorer's bounds (all small on purpose: the space grows as their product)."""

    turns: int = 2  # prompts per session
    incidents: int = 3  # concurrent active incidents; states beyond are not expanded
    replacements: int = 1  # runtime replacements
    retries: int = 2  # api_retry warnings shown per turn (the warning's revision)
    notices: int = 2  # revisions of one model-fallback notice (consecutive updates)
    failed_sends: bool = True  # also explore every step with its first send failing


# ---------------------------------------------------------------------------- observer


class _Recorder:
    """The ledger's observer in the explorer: collects one step's transitions and notes."""

    __slots__ = ("notes", "transitions")

    def __init__(self) -> None:
        self.transitions: list[tuple[str, str, str, str]] = []
        self.notes: list[str] = []

    def transition(
        self, *, session_id: str, incident_id: str, source: str, target: str, event: str, revision: int
    ) -> None:
        self.transitions.append((incident_id, source, target, event))

    def note(self, what: str, **fields: Any) -> None:
        self.notes.append(what)


# ---------------------------------------------------------------------------- clone and fingerprint

_ATOMIC: tuple[type, ...] = (str, int, float, bool, type(None), Enum, bytes, frozenset)
_SKIP_FP = frozenset({"_observer", "_session_id", "_epoch"})
_slots_cache: dict[type, tuple[str, ...]] = {}
_frozen_cache: dict[type, bool] = {}


def _slots_of(cls: type) -> tuple[str, ...]:
    names = _slots_cache.get(cls)
    if names is None:
        seen: list[str] = []
        for klass in reversed(cls.__mro__):
            slots = klass.__dict__.get("__slots__", ())
            for s in (slots,) if isinstance(slots, str) else slots:
                if s not in seen and s not in ("__dict__", "__weakref__"):
                    seen.append(s)
        names = _slots_cache[cls] = tuple(seen)
    return names


def _is_frozen(cls: type) -> bool:
    frozen = _frozen_cache.get(cls)
    if frozen is None:
        if dataclasses.is_dataclass(cls):
            frozen = bool(cls.__dataclass_params__.frozen)  # type: ignore[attr-defined]
        elif issubclass(cls, BaseModel):
            frozen = bool(cls.model_config.get("frozen"))
        else:
            frozen = False
        _frozen_cache[cls] = frozen
    return frozen


_Cloner = Callable[[Any, dict[int, Any], _Recorder], Any]
_cloners: dict[type, _Cloner] = {}


def _clone(value: Any, memo: dict[int, Any], recorder: _Recorder) -> Any:
    """A structural copy of ``value`` (immutable values are shared).

    Dispatches on the exact type (decided once per type): this runs for every successor.
    """
    cls = type(value)
    cloner = _cloners.get(cls)
    if cloner is None:
        cloner = _cloners[cls] = _cloner_for(cls)
    return cloner(value, memo, recorder)


def _share(value: Any, memo: dict[int, Any], recorder: _Recorder) -> Any:
    return value


def _clone_tuple(value: Any, memo: dict[int, Any], recorder: _Recorder) -> Any:
    return tuple([_clone(v, memo, recorder) for v in value])


def _clone_list(value: Any, memo: dict[int, Any], recorder: _Recorder) -> Any:
    return [_clone(v, memo, recorder) for v in value]


def _clone_dict(value: Any, memo: dict[int, Any], recorder: _Recorder) -> Any:
    return {k: _clone(v, memo, recorder) for k, v in value.items()}


def _clone_deque(value: Any, memo: dict[int, Any], recorder: _Recorder) -> Any:
    return deque(_clone(v, memo, recorder) for v in value)


def _clone_set(value: Any, memo: dict[int, Any], recorder: _Recorder) -> Any:
    return {_clone(v, memo, recorder) for v in value}


def _clone_recorder(value: Any, memo: dict[int, Any], recorder: _Recorder) -> Any:
    return recorder


def _clone_client(value: Any, memo: dict[int, Any], recorder: _Recorder) -> Any:
    # The client's transcript only grows, and an entry is replaced, never changed in place
    # (``ClientProjection.receive_meta``): the entries can be shared, the containers cannot.
    out = copy.copy(value)
    out.entries = list(value.entries)
    out.received = {k: list(v) for k, v in value.received.items()}
    out._index = dict(value._index)
    return out


def _cloner_for(cls: type) -> _Cloner:
    if issubclass(cls, _ATOMIC) or _is_frozen(cls):
        return _share
    simple: dict[type, _Cloner] = {
        tuple: _clone_tuple,
        list: _clone_list,
        dict: _clone_dict,
        deque: _clone_deque,
        set: _clone_set,
        _Recorder: _clone_recorder,
        ClientProjection: _clone_client,
        # One exploration's answers, shared by every world it clones (a pure function of the class).
        MachineAnswers: _share,
    }
    if cls in simple:
        return simple[cls]
    slots = _slots_of(cls)
    has_dict = "__dict__" in dir(cls) and not slots

    def clone_object(value: Any, memo: dict[int, Any], recorder: _Recorder) -> Any:
        # Objects are the only values that may be shared inside a ledger (an incident referenced
        # twice): keep their identity with ``memo``.
        key = id(value)
        done = memo.get(key)
        if done is not None:
            return done
        out = object.__new__(cls)
        memo[key] = out
        setter = object.__setattr__
        for name in slots:
            try:
                item = getattr(value, name)
            except AttributeError:
                continue
            setter(out, name, _clone(item, memo, recorder))
        if has_dict or hasattr(value, "__dict__"):
            for k, v in vars(value).items():
                setter(out, k, _clone(v, memo, recorder))
        return out

    return clone_object


def _fingerprint(value: Any) -> Hashable:
    """A hashable digest of ``value``'s state (ledger slots, incidents, turns), ignoring observers."""
    if isinstance(value, _ATOMIC):
        return value
    cls = type(value)
    if cls is tuple:
        return tuple(_fingerprint(v) for v in value)
    if cls is list or cls is deque:
        return ("[", *(_fingerprint(v) for v in value))
    if cls is dict:
        return ("{", *((k, _fingerprint(v)) for k, v in value.items()))
    if cls is set:
        return ("set", frozenset(_fingerprint(v) for v in value))
    if _is_frozen(cls):
        return value  # type: ignore[no-any-return]
    names = _slots_of(cls)
    if names:
        return (cls.__name__, *(_fingerprint(getattr(value, n, None)) for n in names if n not in _SKIP_FP))
    if hasattr(value, "__dict__"):
        return (cls.__name__, *((k, _fingerprint(v)) for k, v in sorted(vars(value).items())))
    return repr(value)  # pragma: no cover


def ledger_fingerprint(ledger: SessionLedger) -> Hashable:
    """The complete state of a ledger: every slot except identity constants and observers."""
    return _fingerprint(ledger)


# The explorer's VIEW (in TLC's sense): what two ledgers must share to count as one abstract
# state. It is generic over the ledger's slots (new core state is part of it by default) except
# for what cannot change what the ledger does next:
#   * presentation: an incident's category and record, a failure's text; a ``Condition`` only
#     by its recovery policy, severity and legacy JSON-RPC code (the rows that share those behave
#     alike; which one a record shows is checked by the invariants on every edge, not merged);
#   * the sequence counter and the sequence numbers in session-scoped and notice ids (ids need
#     only be new; ``new_id_per_occurrence`` checks every published id against the concrete ones);
#   * an incident's revision: the ledger never branches on it (it only adds one), and every
#     delivered revision is checked on its edge (``revisions_increase``, ``belief_equals_client``).
#     This also bounds repeated warnings and notice updates: an update leads back to its state;
#   * ``_last_record_id`` only by whether it names the active notice, and ``_runtime_incident``
#     only by whether it is set: the only comparisons the ledger makes with them;
#   * a settled turn only by its id (what it captured while running is never read again).
_SEQ_ID = re.compile(r"(?<=:)\d+$")
_VIEW_DROP = frozenset(
    {"_observer", "_session_id", "_epoch", "_seq", "category", "record", "revision"}
)


def _id_view(text: str) -> str:
    return _SEQ_ID.sub("#", text) if text.startswith(f"{SESSION_ID}:") else text


def _view(value: Any) -> Hashable:
    if isinstance(value, str):
        return _id_view(value)
    if isinstance(value, Condition):
        return (value.recovery, value.severity, value.legacy_code)
    if isinstance(value, _ATOMIC):
        return value
    cls = type(value)
    if cls is tuple:
        if value and isinstance(value[0], Condition):
            return _view(value[0])  # a turn's captured failure: (condition, Claude's text)
        return tuple(_view(v) for v in value)
    if cls is list or cls is deque:
        return ("[", *(_view(v) for v in value))
    if cls is dict:
        return ("{", *((_view(k), _view(v)) for k, v in value.items()))
    if cls is set:
        return ("set", frozenset(_view(v) for v in value))
    if _is_frozen(cls):
        return value  # type: ignore[no-any-return]
    names = _slots_of(cls) or tuple(sorted(vars(value)))
    return (cls.__name__, *(_view(getattr(value, n, None)) for n in names if n not in _VIEW_DROP))


def ledger_view(ledger: SessionLedger) -> Hashable:
    """The abstract state of a ledger (see the VIEW comment above)."""
    parts: list[Hashable] = []
    notices = {a.id for a in ledger.active if a.state == "noticed"}
    for name in _slots_of(type(ledger)):
        if name in _VIEW_DROP:
            continue
        value = getattr(ledger, name, None)
        if name == "_last_record_id":
            parts.append(value in notices)
        elif name == "_runtime_incident":
            parts.append(value is not None)
        elif name == "_turn" and value is not None and getattr(value, "settled", False):
            parts.append(("settled turn", value.turn_id))  # what it captured no longer matters
        else:
            parts.append(_view(value))
    return tuple(parts)


# ---------------------------------------------------------------------------- the world


@dataclass(slots=True)
class World:
    """One concrete configuration: the ledger, the client, the environment's counters, the monitor."""

    ledger: SessionLedger
    client: ClientProjection
    root: str
    turns: int = 0
    notices: int = 0
    failures_used: int = 0
    fail_next: int = 0  # within one step only: its first send fails
    #: the kind of Claude failure text seen in the running turn (spec reference: legacy codes)
    turn_failure: str | None = None
    settled: tuple[str, ...] = ()  # the prompts settled so far (planned settlements, delivered or not)
    closed: frozenset[str] = frozenset()
    flow: str = "idle"
    max_turns: int | None = None  # the root's own turn bound
    dead: bool = False  # the runtime's query iterator threw or ended; replaced by runtime_replaced
    _active_view: tuple[ActiveIncident, ...] | None = None

    @property
    def active(self) -> tuple[ActiveIncident, ...]:
        """``ledger.active``, computed once: read only once the world's step is over."""
        if self._active_view is None:
            self._active_view = self.ledger.active
        return self._active_view

    @property
    def running(self) -> bool:
        turn = self.ledger.turn
        return turn is not None and not turn.settled

    def clone(self, recorder: _Recorder) -> World:
        memo: dict[int, Any] = {}
        return World(
            ledger=_clone(self.ledger, memo, recorder),
            client=_clone(self.client, memo, recorder),
            root=self.root,
            turns=self.turns,
            notices=self.notices,
            failures_used=self.failures_used,
            turn_failure=self.turn_failure,
            settled=self.settled,
            closed=self.closed,
            flow=self.flow,
            max_turns=self.max_turns,
            dead=self.dead,
        )

    def key(self) -> Hashable:
        """The abstract state: the root and the ledger's VIEW. The rest follows from it or cannot
        change what happens next: the turn count, settled prompts, reference failure kind and
        flow state follow from the ledger; the client's open records are the ledger's active
        incidents (``belief_equals_client``) and its closed ones never change again
        (``historical_never_back``); the counters below only feed the report."""
        return (self.root, self.dead, ledger_view(self.ledger))


def ledger_flow_state(ledger: SessionLedger) -> str:
    """The :class:`~lifecycle.session_flow.SessionFlow` state the ledger's turn is in.

    ``failing`` is the running turn holding Claude's failure text; the public :class:`TurnView`
    does not show it, so it is read from the turn itself (white-box, like the fingerprint).
    """
    turn = ledger.turn
    running = turn is not None and not turn.settled
    raw = getattr(ledger, "_turn", None)
    failing = running and getattr(raw, "failure", None) is not None
    return flow_state_of(running, bool(turn and turn.answered), failing)


# ---------------------------------------------------------------------------- actions


Line = dict[str, Any]


def _adapter(event: str, **fields: Any) -> Line:
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


def _retry_revision(world: World) -> int:
    turn = world.ledger.turn
    return world.ledger.revision_of(f"{turn.turn_id}:error") if turn else 0


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


_ANSWER_RECOVERS = frozenset({Recovery.REAL_MODEL_ANSWER, Recovery.CONFIRMED_ATTEMPT})

ACTIONS: tuple[Action, ...] = (
    Action("prompt", lambda w: (_adapter("prompt", turnId=_turn_id(w)),), _prompt_allowed, "prompt"),
    Action(
        "prompt_while_running",
        lambda w: (_adapter("prompt", turnId=_turn_id(w)),),
        lambda w, b: _while_running(w, b) and w.turns < _turn_bound(w, b),
    ),
    # A client re-sends a prompt with the last turn's id (a retried request): refused.
    Action(
        "prompt_reusing_turn_id",
        lambda w: (_adapter("prompt", turnId=w.ledger.turn.turn_id if w.ledger.turn else "t0"),),
        lambda w, b: w.ledger.turn is not None and not w.running,
    ),
    # The first retry of a turn got an HTTP response (429), the next one none (a connection
    # error): both kinds, one letter (the VIEW would merge their successors anyway).
    Action("api_retry", lambda w: (_retry_line(w),), _retry_allowed, "api_retry"),
    Action(
        "rate_limit_error",
        lambda w: (_assistant(RATE_TEXT, "<synthetic>", "rate_limit"),),
        _while_running,
        "claude_failure",
        failure_kind="rate_limit",
    ),
    Action(
        "auth_error",
        lambda w: (_assistant(AUTH_TEXT, "<synthetic>", "authentication_failed"),),
        _while_running,
        "claude_failure",
        failure_kind="auth",
    ),
    Action(
        "usage_limit_error",
        lambda w: (_assistant(LIMIT_TEXT, "<synthetic>", "rate_limit"),),
        _while_running,
        "claude_failure",
        failure_kind="usage_limit",
    ),
    Action(
        "real_answer",
        lambda w: (_assistant(ANSWER_TEXT, "claude-opus-4-5"),),
        _while_running,
        "real_answer",
        recovers=_ANSWER_RECOVERS,
    ),
    Action(
        "local_command", lambda w: (_assistant(LOCAL_COMMAND_TEXT, "<synthetic>"),), _while_running, "local_command"
    ),
    Action(
        "result_success",
        lambda w: (
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "result": ANSWER_TEXT,
                "stop_reason": "end_turn",
            },
        ),
        _alive,
        "result_success",
        recovers=frozenset({Recovery.CONFIRMED_ATTEMPT}),
    ),
    Action(
        "result_error",
        lambda w: (
            {
                "type": "result",
                "subtype": "success",
                "is_error": True,
                "result": RESULT_ERROR_TEXT,
                "api_error_status": 529,
                "terminal_reason": "api_error",
            },
        ),
        _alive,
        "result_error",
        settles_with_failure=True,
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
        lambda w: (_adapter("query_error", message=QUERY_ERROR_TEXT),),
        _alive,
        "runtime_lost",
        settles_with_failure=True,
    ),
    Action(
        "worker_shutdown_eof",
        lambda w: ({"type": "system", "subtype": "worker_shutting_down", "reason": "idle"}, _adapter("query_end")),
        _alive,
        "runtime_lost",
        settles_with_failure=True,
    ),
    Action("query_end", lambda w: (_adapter("query_end"),), _alive, "runtime_lost", settles_with_failure=True),
    Action(
        "runtime_replaced",
        lambda w: (_adapter("runtime_replaced"),),
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
        lambda w, b: _while_running(w, b) and _notice_revision(w) < b.notices,  # emitted during a query
        recovers=frozenset({Recovery.NEVER}),  # only by a newer notice superseding it
    ),
    Action("cancel", lambda w: (_adapter("cancel"),), _while_running, "cancel"),
    Action(
        "late_event",
        lambda w: (_adapter("late_event", runtime=w.ledger.runtime - 1, note=_STALE_RUNTIME_NOTE,
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
    Root("legacy/new", False),
    Root("legacy/load-latest-limit-active", False, _H_LATEST, limits=2, active_limit=1, turns=1),
)


def _root_lines(root: Root) -> tuple[Line, ...]:
    init = _adapter("initialize", clientCapabilities=CAPABLE if root.negotiated else LEGACY)
    if root.history is None:
        return init, _adapter("session", sessionId=SESSION_ID)
    return init, _adapter("load", sessionId=SESSION_ID, history=list(root.history))


# ---------------------------------------------------------------------------- steps


@dataclass(slots=True)
class Step:
    """One edge: the action, the configurations before and after, and what happened."""

    action: Action | None  # None: the root's setup
    before: World | None
    after: World
    sent: list[tuple[Outbound, bool]]  # every planned message, and whether it was delivered
    recorder: _Recorder
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
    raise ValueError(f"no event for adapter line {what!r}")  # pragma: no cover


def _drain(world: World, sent: list[tuple[Outbound, bool]]) -> None:
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


def _outcome(out: Outbound) -> str:
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
        elif action.name == "model_fallback":
            w.notices += 1
        elif action.name == "runtime_replaced":
            w.dead = False
        if action.flow_event == "runtime_lost":
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
    recorder = _Recorder()
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
            _drain(world, step.sent)
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
    recorder = _Recorder()
    lines = _root_lines(root)
    negotiated = negotiate(lines[0]["clientCapabilities"])
    ledger = SessionLedger(SESSION_ID, negotiated=negotiated, epoch=EPOCH, observer=recorder, answers=answers)
    world = World(ledger=ledger, client=ClientProjection(), root=root.name, max_turns=root.turns)
    step = Step(None, None, world, [], recorder, root=root)
    if root.history is not None:
        try:
            ledger.feed(load_history(root.history))
            _drain(world, step.sent)
        except Exception as exc:
            step.error = exc
            return step
    _finish(step)
    return step


# ---------------------------------------------------------------------------- invariants


@dataclass(frozen=True, slots=True)
class Invariant:
    name: str
    spec: str
    check: Callable[[Step], str | None]


INVARIANTS: list[Invariant] = []


def invariant(func: Callable[[Step], str | None]) -> Callable[[Step], str | None]:
    """Register ``func``; its docstring is the spec sentence it checks."""
    doc = " ".join((func.__doc__ or "").split())
    INVARIANTS.append(Invariant(func.__name__, doc, func))
    return func


def _turn_error_id(turn_id: str) -> str:
    return f"{turn_id}:error"


@invariant
def no_crash(s: Step) -> str | None:
    """The core raises only its documented errors (``LocalProtocolError`` for an event that cannot
    apply now); anything else is a bug."""
    if s.error is not None:
        return f"{s.name} raised {type(s.error).__name__}: {s.error}"
    return None


@invariant
def refusals_change_nothing(s: Step) -> str | None:
    """An event from a replaced runtime is refused, never applied; an event that cannot apply now
    (a second concurrent prompt, a turn id already used) leaves the session unchanged
    (``SessionLedger.feed``: "The ledger is unchanged")."""
    if s.before is None or s.action is None:
        return None
    if s.action.late and s.accepted:
        return "an event from the replaced runtime was accepted"
    if s.action.name == "prompt_while_running" and s.refused is None:
        return "a second concurrent prompt was accepted"
    if s.action.name == "prompt_reusing_turn_id" and s.refused is None:
        return "a prompt reusing a turn id was accepted"
    if (not s.accepted or s.refused is not None) and (
        s.sent or ledger_fingerprint(s.after.ledger) != ledger_fingerprint(s.before.ledger)
    ):
        return "a refused event changed the session or sent something"
    return None


@invariant
def revisions_increase(s: Step) -> str | None:
    """The same ``id`` with a higher ``revision`` updates that entry in place without moving it:
    per id, delivered revisions strictly increase."""
    for rid, revs in s.after.client.received.items():
        if any(b <= a for a, b in itertools.pairwise(revs)):
            return f"{rid} delivered revisions {revs}"
    if s.before is not None:
        before = _positions(s.before.client)
        after = _positions(s.after.client)
        for rid, at in before.items():
            if after.get(rid) != at:
                return f"{rid} moved in the transcript from {at} to {after.get(rid)}"
    return None


def _positions(client: ClientProjection) -> dict[str, int]:
    return {e.record.id: i for i, e in enumerate(client.entries) if e.record is not None}


@invariant
def stale_revisions_ignored(s: Step) -> str | None:
    """The same or a lower revision is idempotently ignored by the client."""
    delivered = [(out, rec) for out, ok, rec in s.records() if ok]
    if not delivered:
        return None
    out, rec = delivered[-1]
    probe = s.after.client
    before = [(r.id, r.revision, r.title) for r in probe.records]
    replay = _clone(probe, {}, s.recorder)
    replay.receive(out.to_jsonrpc())  # the same revision again
    if rec.revision > 1:
        lower = rec.model_copy(update={"revision": rec.revision - 1, "title": "stale"})
        replay.receive_meta(_meta_of(lower), carrier="session_info_update")
    after = [(r.id, r.revision, r.title) for r in replay.records]
    return None if after == before else f"re-delivering {rec.id} r{rec.revision} changed the client: {after}"


def _meta_of(record: SessionFailure) -> dict[str, Any]:
    return {"jetbrains": {"air": {"version": 1, "sessionFailure": record.to_wire()}}}


@invariant
def new_id_per_occurrence(s: Step) -> str | None:
    """A later independent occurrence uses a new ``id``, even when its category and text are
    identical: no record is ever published again for an id whose incident ended."""
    if s.before is None:
        return None
    for _, _, rec in s.records():
        if rec.id in s.before.closed:
            return f"a record for {rec.id} (revision {rec.revision}) was published after it ended"
    return None


@invariant
def ids_never_merged(s: Step) -> str | None:
    """Different ids are never deduplicated by comparing title or category: every id the client
    received is its own transcript entry."""
    client = s.after.client
    if len(client.records) != len(client.received):
        return f"{len(client.received)} ids received but {len(client.records)} entries shown"
    return None


_NOTICE_ID = re.compile(rf"{SESSION_ID}:notice:{EPOCH}:\d+")
_SESSION_SCOPED_ID = re.compile(rf"{SESSION_ID}:{EPOCH}:\d+")
_TURN_ID = re.compile(r"(t\d+|u\d+):error")
_HISTORY_ID = re.compile(rf"{SESSION_ID}:history-error:.+")


@invariant
def id_namespaces(s: Step) -> str | None:
    """Live turn failures use ``<turnId>:error``. Session-scoped incidents use an adapter-session
    epoch plus an incident sequence. Notices have their own ``:notice:`` namespace."""
    for out, _, rec in s.records():
        name = s.name
        if isinstance(out, PromptResponseOut):
            expected: re.Pattern[str] | str = _turn_error_id(out.turn_id)
        elif name == "model_fallback":
            expected = _NOTICE_ID
        elif name == "api_retry":
            turn = s.after.ledger.turn
            expected = _turn_error_id(turn.turn_id) if turn else "<no turn>"
        elif name == "root":
            expected = re.compile(f"{_TURN_ID.pattern}|{_HISTORY_ID.pattern}")
        else:
            expected = _SESSION_SCOPED_ID
        ok = rec.id == expected if isinstance(expected, str) else expected.fullmatch(rec.id) is not None
        if not ok:
            shown = expected if isinstance(expected, str) else expected.pattern
            return f"{name} published id {rec.id!r}, expected {shown}"
    return None


@invariant
def wire_valid(s: Step) -> str | None:
    """The record is placed under ``_meta.jetbrains.air.sessionFailure`` next to ``version: 1``,
    validates against the wire model, and the schema is identical on both carriers: every
    message's wire record (if any) is exactly the record the adapter published."""
    for out, _ in s.sent:
        msg = out.to_jsonrpc()
        if isinstance(out, PromptResponseOut):
            meta = msg.get("result", {}).get("_meta")
        elif isinstance(out, SessionUpdateOut):
            meta = msg.get("params", {}).get("update", {}).get("_meta")
        else:
            meta = msg.get("error", {}).get("_meta")
        try:
            parsed = read_record(meta)
        except MalformedRecordError as exc:
            return f"{type(out).__name__}: {exc}"
        rec = out.record
        if parsed != rec:
            shown = f"{parsed.id} r{parsed.revision}" if parsed else None
            return f"{type(out).__name__} carries {shown} on the wire but published {rec.id if rec else None}"
        if rec is None:
            continue
        if meta["jetbrains"]["air"].get("version") != 1:
            return f"{rec.id}: not next to version 1"
        if SessionFailure.model_validate(rec.to_wire()) != rec:
            return f"{rec.id}: the record does not round-trip through the wire model"
    return None


@invariant
def warning_never_settles(s: Step) -> str | None:
    """A warning does not end a turn."""
    for out, _, rec in s.records():
        if rec.severity is Severity.WARNING and isinstance(out, PromptResponseOut):
            return f"warning {rec.id} rode the PromptResponse"
    if s.name in ("api_retry", "model_fallback"):
        if any(isinstance(out, (PromptResponseOut, PromptErrorOut)) for out, _ in s.sent):
            return f"{s.name} settled the prompt"
        if s.was_running and not s.after.running:
            return f"{s.name} ended the running turn"
    return None


@invariant
def terminal_failure_on_prompt_response(s: Step) -> str | None:
    """A turn-terminal failure is attached to the successful ACP ``PromptResponse`` in ``_meta``;
    the response uses ``stopReason: end_turn``."""
    if not s.after.ledger.negotiated:
        return None
    for out, _ in s.sent:
        if isinstance(out, PromptErrorOut):
            return f"a capable client got a JSON-RPC error for {out.turn_id}"
        if isinstance(out, PromptResponseOut) and out.record is not None:
            rec = out.record
            if out.stop_reason != "end_turn" or rec.severity is not Severity.ERROR:
                return f"{rec.id} rode a PromptResponse with stopReason {out.stop_reason}, severity {rec.severity}"
            if rec.id != _turn_error_id(out.turn_id):
                return f"the PromptResponse of {out.turn_id} carried {rec.id}"
    if s.failure_settle_expected:
        settles = [out for out, _ in s.sent if isinstance(out, PromptResponseOut)]
        if len(settles) != 1 or settles[0].record is None:
            return f"{s.name} ended the turn as a failure without a record on its PromptResponse"
    return None


@invariant
def other_records_on_session_info_update(s: Step) -> str | None:
    """Session-scoped, replay-restored, warning, and background incidents use a
    ``session_info_update``."""
    for out, _, rec in s.records():
        if isinstance(out, PromptResponseOut):
            continue
        kind = out.update.get("sessionUpdate") if isinstance(out, SessionUpdateOut) else None
        if kind != "session_info_update":
            return f"{rec.id} rode {type(out).__name__} {kind!r}"
    return None


@invariant
def settled_once(s: Step) -> str | None:
    """A prompt is settled exactly once (shared/conformance/FORMAT.md); a cancelled prompt is
    answered with ``stopReason: cancelled``."""
    seen = list(s.before.settled if s.before else ())
    for out, _ in s.sent:
        if isinstance(out, (PromptResponseOut, PromptErrorOut)):
            if out.turn_id in seen:
                return f"{out.turn_id} was settled twice"
            seen.append(out.turn_id)
            turn = s.before.ledger.turn if s.before else None
            if not s.was_running or turn is None or turn.turn_id != out.turn_id:
                return f"{s.name} settled {out.turn_id}, which was not the running prompt"
            if s.name == "cancel" and not (isinstance(out, PromptResponseOut) and out.stop_reason == "cancelled"):
                return f"cancel settled {out.turn_id} with {_outcome(out)}"
    return None


@invariant
def recovery_by_own_policy(s: Step) -> str | None:
    """An incident leaves the active set only through its own recovery policy's event: restored
    quota at a real model answer, authentication at a successful ``auth_status``, transport loss
    at runtime replacement, other turn-scoped failures at a later confirmed attempt; notices are
    not cleared by generic success. Publishing another incident is not evidence that an older
    one recovered."""
    if s.action is None:
        return None
    for inc in s.left:
        if inc.recovery not in s.action.recovers:
            return f"{inc.id} ({inc.recovery.value}) left the active set on {s.name}"
        event = RECOVERY_EVENTS[inc.recovery]
        if not any(t[0] == inc.id and t[2] == "historical" and t[3] == event for t in s.recorder.transitions):
            return f"{inc.id} left the active set without its machine's {event} transition"
    return None


@invariant
def historical_never_back(s: Step) -> str | None:
    """Resolved records remain in transcript history. Recovery removes only the adapter's internal
    active state; it does not delete or rewrite the historical entry."""
    if s.before is None:
        return None
    active = {a.id for a in s.after.active}
    back = active & s.before.closed
    if back:
        return f"{sorted(back)} came back into the active set"
    before = {r.id: r for r in s.before.client.records}
    after = {r.id: r for r in s.after.client.records}
    for rid in s.before.closed:
        if rid in before and after.get(rid) != before[rid]:
            return f"the historical entry {rid} was deleted or rewritten"
    return None


@invariant
def recovery_publishes_nothing(s: Step) -> str | None:
    """Recovery removes only the adapter's internal active state; it does not publish a clear
    tombstone."""
    left = {a.id for a in s.left}
    for _, _, rec in s.records():
        if rec.id in left:
            return f"{rec.id} was published in the step it recovered"
    if s.action is not None and s.action.publishes_nothing and s.sent:
        return f"{s.name} sent {len(s.sent)} message(s)"
    return None


def _expected_severity(state: str) -> Severity | None:
    return {"retrying": Severity.WARNING, "noticed": Severity.WARNING, "failed": Severity.ERROR}.get(state)


@invariant
def belief_equals_client(s: Step) -> str | None:
    """The adapter's belief (active set, revisions) equals what the client actually received,
    whatever sends failed: a failed send leaves the incident as the client last saw it."""
    client = {r.id: r for r in s.after.client.records if r.id not in s.after.closed}
    active = {a.id: a for a in s.after.active}
    if set(client) != set(active):
        return f"ledger active {sorted(active)} != client's open records {sorted(client)}"
    for rid, a in active.items():
        rec = client[rid]
        if rec.revision != a.revision:
            return f"{rid}: ledger revision {a.revision}, client revision {rec.revision}"
        if _expected_severity(a.state) is not rec.severity:
            return f"{rid}: ledger state {a.state}, client shows a {rec.severity.value}"
    return None


@invariant
def legacy_unchanged(s: Step) -> str | None:
    """If no capable client negotiated the extension, existing JSON-RPC errors and transcript
    text remain unchanged: no ``_meta.jetbrains``, no typed record, the legacy JSON-RPC outcome."""
    if s.after.ledger.negotiated:
        return None
    for out, _ in s.sent:
        if out.record is not None or "jetbrains" in json.dumps(out.to_jsonrpc()):
            return f"a legacy client was sent _meta.jetbrains ({type(out).__name__})"
    if s.after.active:
        return "a legacy session holds active incidents"
    if s.failure_settle_expected:
        settles = [out for out, _ in s.sent if isinstance(out, (PromptResponseOut, PromptErrorOut))]
        code = -32000 if s.before and s.before.turn_failure == "auth" else -32603
        if len(settles) != 1 or not isinstance(settles[0], PromptErrorOut) or settles[0].code != code:
            got = [_outcome(o) for o in settles]
            return f"{s.name} ended a legacy turn as a failure with {got}, expected JSON-RPC error {code}"
    return None


@invariant
def no_secrets(s: Step) -> str | None:
    """Raw thrown exceptions, stack traces, transport URLs, tokens, headers, environment values,
    and private paths are never used as titles (nor as details, nor as legacy error data)."""
    for out, _ in s.sent:
        texts: list[str] = []
        if out.record is not None:
            texts += [out.record.title, out.record.details or ""]
        if isinstance(out, PromptErrorOut):
            texts += [out.message, json.dumps(out.data or {})]
        for text in texts:
            for marker in SECRET_MARKERS:
                if marker in text:
                    return f"{type(out).__name__} title/details contain {marker!r}: {text[:120]!r}"
    return None


@invariant
def warnings_have_no_actions(s: Step) -> str | None:
    """``warning`` means the operation may still succeed and normally has no actions while
    recovery is in progress. Severity is always explicit."""
    for _, _, rec in s.records():
        if rec.severity is Severity.WARNING and rec.actions:
            return f"warning {rec.id} recommends {[a.value for a in rec.actions]}"
    return None


@invariant
def replay_latest_only(s: Step) -> str | None:
    """Every recognized occurrence is replayed as a typed record at its original transcript
    position. The latest matching message stays active until a later real-model answer proves
    recovery; older and recovered records remain historical typed entries. Legacy clients
    receive the original transcript and no typed record."""
    root = s.root
    if root is None or root.history is None:
        return None
    records = [rec for _, _, rec in s.records()]
    if not root.negotiated:
        texts = [e.text for e in s.after.client.entries if e.kind == "agent"]
        expected = [
            h["message"]["content"][0]["text"] for h in root.history if h["type"] == "assistant"
        ]
        if records or texts != expected:
            return f"the legacy replay showed {texts} and {len(records)} record(s)"
        return None
    if len(records) != root.limits:
        return f"{len(records)} typed record(s) replayed for {root.limits} usage-limit message(s)"
    kinds = [e.kind for e in s.after.client.entries]
    expected_kinds = [
        "user" if h["type"] == "user" else ("record" if h["message"]["model"] == "<synthetic>" else "agent")
        for h in root.history
    ]
    if kinds != expected_kinds:
        return f"replayed transcript order {kinds}, expected {expected_kinds}"
    active = [a.id for a in s.after.active]
    want = [] if root.active_limit is None else [records[root.active_limit].id]
    if active != want:
        return f"after replay {active} are active, expected {want}"
    return None


@invariant
def session_flow_is_the_truth(s: Step) -> str | None:
    """The session-flow diagram (``lifecycle.session_flow.SessionFlow``) shows what the ledger
    does: its declared transitions predict the ledger's turn state after every event."""
    actual = ledger_flow_state(s.after.ledger)
    if s.after.flow != actual:
        return f"SessionFlow says {s.after.flow!r} after {s.name}, the ledger's turn is {actual!r}"
    return None


#: Escape scripts: the events that, per the spec, end an incident under each policy.
def _escape_events(policy: Recovery) -> tuple[Event, ...]:
    prompt = PromptStarted(turn_id="t-escape")
    answer = Assistant(text=ANSWER_TEXT, model="claude-opus-4-5")
    ok = Result(subtype="success", is_error=False, stop_reason="end_turn")
    scripts: dict[Recovery, tuple[Event, ...]] = {
        Recovery.AUTH_STATUS: (AuthStatus(ok=True),),
        Recovery.RUNTIME_REPLACED: (RuntimeReplaced(),),
        Recovery.REAL_MODEL_ANSWER: (prompt, answer),
        Recovery.CONFIRMED_ATTEMPT: (prompt, answer, ok),
        Recovery.NEVER: (prompt, answer, ok, ModelFallback(content="Switched to claude-haiku-4-5")),
    }
    return scripts[policy]


RECOVERY_REACHABLE = Invariant(
    "recovery_reachable",
    "No trap: every active incident still leaves the active set through its own policy's event "
    "(restored quota remains active until a real model answer; authentication until successful "
    "auth_status; transport loss until runtime replacement; other turn-scoped failures until a "
    "later confirmed attempt; a notice until a newer notice).",
    lambda s: None,  # a state property: see Explorer._escape
)


def check_escape(world: World) -> str | None:
    """The escape check of one configuration: None, or why an active incident cannot recover."""
    active = world.active
    for policy in sorted({a.recovery for a in active}, key=lambda p: p.value):
        recorder = _Recorder()
        w = world.clone(recorder)
        events: tuple[Event, ...] = _escape_events(policy)
        if w.running:
            events = (Cancelled(), *events)
        try:
            for ev in events:
                w.ledger.feed(ev)
                _drain(w, [])
        except Exception as exc:
            return f"recovering {policy.value} incidents raised {type(exc).__name__}: {exc}"
        remaining = {a.id for a in w.ledger.active}
        stuck = [a.id for a in active if a.recovery is policy and a.id in remaining]
        if stuck:
            names = " ".join(type(e).__name__ for e in events)
            return f"{stuck} ({policy.value}) stay active after {names}"
    return None


# ---------------------------------------------------------------------------- reachability targets


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    description: str
    reached: Callable[[Step], bool]


def _active_with(s: Step, state: str, recovery: Recovery | None = None, min_revision: int = 1) -> bool:
    return any(
        a.state == state and (recovery is None or a.recovery is recovery) and a.revision >= min_revision
        for a in s.after.active
    )


def _outcomes(s: Step) -> list[str]:
    return [_outcome(o) for o, ok in s.sent if ok and isinstance(o, (PromptResponseOut, PromptErrorOut))]


TARGETS: tuple[Target, ...] = (
    Target("warning_active", "an api_retry warning is active", lambda s: _active_with(s, "retrying")),
    Target(
        "warning_updated",
        "a warning was updated in place (revision 2)",
        lambda s: _active_with(s, "retrying", None, 2),
    ),
    Target(
        "warning_became_error",
        "a terminal failure updated the turn's warning with a higher revision",
        lambda s: any(t[1:] == ("retrying", "failed", "fail") for t in s.recorder.transitions),
    ),
    Target("quota_active", "a usage-limit failure waits for a real model answer",
           lambda s: _active_with(s, "failed", Recovery.REAL_MODEL_ANSWER)),
    Target("auth_active", "an authentication failure waits for auth_status",
           lambda s: _active_with(s, "failed", Recovery.AUTH_STATUS)),
    Target("transport_active", "a transport loss waits for runtime replacement",
           lambda s: _active_with(s, "failed", Recovery.RUNTIME_REPLACED)),
    Target("confirmed_attempt_active", "a turn-scoped failure waits for a confirmed attempt",
           lambda s: _active_with(s, "failed", Recovery.CONFIRMED_ATTEMPT)),
    Target(
        "background_failure",
        "a session-scoped (background) incident is active",
        lambda s: any(_SESSION_SCOPED_ID.fullmatch(a.id) for a in s.after.active),
    ),
    Target("notice_active", "a model-fallback notice is active", lambda s: _active_with(s, "noticed")),
    Target("notice_updated", "consecutive notices reused one id", lambda s: _active_with(s, "noticed", None, 2)),
    Target(
        "notice_superseded",
        "a newer notice retired an older one",
        lambda s: any(t[1] == "noticed" and t[3] == "superseded" for t in s.recorder.transitions),
    ),
    Target("three_active", "three incidents are active at once", lambda s: len(s.after.active) >= 3),
    Target(
        "replay_restored",
        "a replayed usage limit is active",
        lambda s: s.root is not None and bool(s.after.active),
    ),
    Target(
        "replay_superseded",
        "an older replayed usage limit became history when a later one was restored",
        lambda s: s.root is not None and any(t[3] == "superseded" for t in s.recorder.transitions),
    ),
    Target(
        "replay_recovered",
        "a replayed usage limit was recovered by a later real answer in the history",
        lambda s: s.root is not None and any(t[3] == "real_model_answer" for t in s.recorder.transitions),
    ),
    Target(
        "failed_send",
        "a record's send failed and the client stayed behind",
        lambda s: any(not ok and out.record is not None for out, ok in s.sent),
    ),
    Target(
        "republished_after_failed_send",
        "a record was delivered for an id whose earlier send had failed",
        lambda s: any(ok and rec.revision >= 2 for out, ok, rec in s.records())
        and s.after.failures_used > 0
        and not s.fail_first,
    ),
    Target("late_event_refused", "an event from the replaced runtime was refused",
           lambda s: s.action is not None and s.action.late and not s.accepted),
    Target("prompt_cancelled", "a prompt was cancelled", lambda s: "cancelled" in _outcomes(s)),
    Target(
        "failure_on_prompt_response",
        "a turn-terminal failure rode the PromptResponse",
        lambda s: any(isinstance(o, PromptResponseOut) and o.record is not None and ok for o, ok in s.sent),
    ),
    Target("legacy_internal_error", "a legacy client got JSON-RPC -32603", lambda s: "error -32603" in _outcomes(s)),
    Target("legacy_auth_required", "a legacy client got JSON-RPC -32000", lambda s: "error -32000" in _outcomes(s)),
    Target("second_turn", "a second prompt ran", lambda s: s.after.turns >= 2),
    Target("runtime_replaced", "the runtime was replaced", lambda s: s.after.ledger.runtime >= 1),
)


# ---------------------------------------------------------------------------- the explorer


def declared_incident_transitions() -> list[tuple[str, str, str]]:
    """Every declared ``IncidentMachine`` transition as ``(source, event, target)``."""
    out: list[tuple[str, str, str]] = []
    for state in IncidentMachine.states:
        for t in state.transitions:
            for ev in t.events:
                out.append((state.id, str(ev.id), t.target.id))
    return out


@dataclass(slots=True)
class Violation:
    """The first (shortest) violation of one invariant."""

    invariant: str
    spec: str
    message: str
    depth: int
    steps: list[str]
    trace: list[str]

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(slots=True)
class CheckResult:
    """What one exploration found."""

    bounds: Bounds
    states: int = 0
    edges: int = 0
    depth: int = 0
    roots: int = 0
    beyond_bound: int = 0
    seconds: float = 0.0
    complete: bool = False
    invariants: list[str] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    coverage: dict[str, int] = field(default_factory=dict)
    flow_coverage: dict[str, int] = field(default_factory=dict)
    targets: dict[str, int | None] = field(default_factory=dict)

    @property
    def uncovered(self) -> list[str]:
        return [k for k, v in self.coverage.items() if v == 0]

    @property
    def flow_uncovered(self) -> list[str]:
        return [k for k, v in self.flow_coverage.items() if v == 0]

    @property
    def unreached(self) -> list[str]:
        return [k for k, v in self.targets.items() if v is None]

    @property
    def ok(self) -> bool:
        return (
            self.complete
            and not self.violations
            and not self.uncovered
            and not self.flow_uncovered
            and not self.unreached
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "bounds": dataclasses.asdict(self.bounds),
            "states": self.states,
            "edges": self.edges,
            "depth": self.depth,
            "roots": self.roots,
            "beyond_bound": self.beyond_bound,
            "seconds": round(self.seconds, 3),
            "complete": self.complete,
            "invariants": self.invariants,
            "violations": [v.to_json() for v in self.violations],
            "coverage": self.coverage,
            "uncovered": self.uncovered,
            "flow_coverage": self.flow_coverage,
            "flow_uncovered": self.flow_uncovered,
            "targets": self.targets,
            "unreached": self.unreached,
        }


def _label(t: tuple[str, str, str]) -> str:
    return f"{t[0]} --{t[1]}--> {t[2]}"


_FAIL_LINE: Line = _adapter("deliver_fails", count=1)


@dataclass(slots=True)
class _Node:
    world: World | None
    parent: _Node | None
    lines: tuple[Line, ...]
    step: str
    depth: int


class Explorer:
    """Breadth-first exploration of one session's abstract state space within ``bounds``.

    Args:
        bounds: the bounds (:class:`Bounds`).
        stop_at_first: stop at the first violation (the mutation self-test).
        max_states: give up (``complete`` False) beyond this many states.
    """

    def __init__(self, bounds: Bounds | None = None, *, stop_at_first: bool = False, max_states: int = 2_000_000):
        self.bounds = bounds or Bounds()
        self.stop_at_first = stop_at_first
        self.max_states = max_states
        self._escaped: set[Hashable] = set()

    def run(self) -> CheckResult:
        started = time.perf_counter()
        # Fresh answers for every run: the machine class may be a mutant's since the last one.
        answers = MachineAnswers()
        b = self.bounds
        result = CheckResult(bounds=b, invariants=[i.name for i in INVARIANTS] + [RECOVERY_REACHABLE.name])
        result.coverage = {_label(t): 0 for t in declared_incident_transitions()}
        flow_table = flow_transitions()
        result.flow_coverage = {_label((src, ev, dst)): 0 for (src, ev), dst in flow_table.items()}
        result.targets = {t.name: None for t in TARGETS}
        failed: set[str] = set()
        seen: set[Hashable] = set()
        queue: deque[_Node] = deque()

        def record(step: Step, node: _Node) -> bool:
            """Check one edge; returns False when exploration must stop."""
            for t in step.recorder.transitions:
                label = _label((t[1], t[3], t[2]))
                if label in result.coverage:
                    result.coverage[label] += 1
            if step.action is not None and step.action.flow_event and step.before is not None:
                key = (step.before.flow, step.action.flow_event)
                if key in flow_table and step.after.flow == flow_table[key]:
                    result.flow_coverage[_label((key[0], key[1], flow_table[key]))] += 1
            for target in TARGETS:
                if result.targets[target.name] is None and step.error is None and target.reached(step):
                    result.targets[target.name] = node.depth
            bad = False
            for inv in INVARIANTS:
                if inv.name in failed:
                    continue
                try:
                    msg = inv.check(step)
                except Exception as exc:  # an invariant that cannot even be evaluated fails
                    msg = f"evaluating the invariant raised {type(exc).__name__}: {exc}"
                if msg is not None:
                    bad = True
                    failed.add(inv.name)
                    result.violations.append(self._violation(inv, msg, node))
                    if self.stop_at_first:
                        return False
            return not bad

        for root in ROOTS:
            step = make_root(root, answers)
            node = _Node(step.after, None, _root_lines(root), root.name, 0)
            result.roots += 1
            if not record(step, node):
                if self.stop_at_first:
                    return self._done(result, started, complete=False, states=len(seen))
                continue
            key = step.after.key()
            if key not in seen:
                seen.add(key)
                queue.append(node)
                if not self._state_ok(step.after, node, result, failed) and self.stop_at_first:
                    return self._done(result, started, complete=False, states=len(seen))

        while queue:
            node = queue.popleft()
            world = node.world
            assert world is not None
            node.world = None  # keep only the frontier's configurations in memory
            result.depth = max(result.depth, node.depth)
            if len(world.active) > b.incidents:
                result.beyond_bound += 1
                continue
            for action in ACTIONS:
                if not action.enabled(world, b):
                    continue
                lines = action.lines(world)
                sent_record = False
                for fail_first in (False, True):
                    if fail_first and not (b.failed_sends and sent_record):
                        break  # fail a send only where it matters: a record that must not be committed
                    step = run_step(world, action, fail_first=fail_first)
                    sent_record = bool(step.sent) and step.sent[0][0].record is not None
                    result.edges += 1
                    name = action.name + _FAILING if fail_first else action.name
                    child = _Node(step.after, node, (_FAIL_LINE, *lines) if fail_first else lines, name, node.depth + 1)
                    if not record(step, child):
                        if self.stop_at_first:
                            return self._done(result, started, complete=False, states=len(seen))
                        continue  # do not explore beyond a violation
                    key = step.after.key()
                    if key in seen:
                        continue
                    seen.add(key)
                    if len(seen) > self.max_states:
                        return self._done(result, started, complete=False, states=len(seen))
                    if not self._state_ok(step.after, child, result, failed) and self.stop_at_first:
                        return self._done(result, started, complete=False, states=len(seen))
                    queue.append(child)
        return self._done(result, started, complete=True, states=len(seen))

    def _state_ok(self, world: World, node: _Node, result: CheckResult, failed: set[str]) -> bool:
        if RECOVERY_REACHABLE.name in failed or not world.active:
            return True
        # The escape depends on the ledger alone: states that differ only in the environment's
        # counters or the client's history share one check.
        key = ledger_view(world.ledger)
        if key in self._escaped:
            return True
        msg = check_escape(world)
        if msg is None:
            self._escaped.add(key)
            return True
        failed.add(RECOVERY_REACHABLE.name)
        result.violations.append(self._violation(RECOVERY_REACHABLE, msg, node))
        return False

    def _done(self, result: CheckResult, started: float, *, complete: bool, states: int | None = None) -> CheckResult:
        result.complete = complete
        if states is not None:
            result.states = states
        result.seconds = time.perf_counter() - started
        return result

    @staticmethod
    def _violation(inv: Invariant, msg: str, node: _Node) -> Violation:
        chain: list[_Node] = []
        cur: _Node | None = node
        while cur is not None:
            chain.append(cur)
            cur = cur.parent
        chain.reverse()
        trace = [_dumps(line) for n in chain for line in n.lines]
        return Violation(inv.name, inv.spec, msg, node.depth, [n.step for n in chain], trace)


_FAILING = " (first send fails)"


@dataclass(slots=True)
class PathReplay:
    """A path replayed outside the explorer (see :func:`run_path`)."""

    steps: list[Step]
    delivered: list[dict[str, Any]]  # every JSON-RPC message the client received, in order
    lines: list[str]  # the path as ``lifecycle trace`` input

    @property
    def world(self) -> World:
        return self.steps[-1].after


def run_path(root_name: str, steps: list[str]) -> PathReplay:
    """Replay a path the explorer reports (``Violation.steps[0]`` is the root, the rest actions).

    Raises ``ValueError`` for an unknown root or action, or an action that is not enabled where
    the path uses it.
    """
    root = next((r for r in ROOTS if r.name == root_name), None)
    if root is None:
        raise ValueError(f"no root {root_name!r}")
    step = make_root(root)
    delivered = [out.to_jsonrpc() for out, ok in step.sent if ok]
    replay = PathReplay([step], delivered, [_dumps(x) for x in _root_lines(root)])
    unbounded = Bounds(turns=99, replacements=99, retries=99, notices=99)
    for name in steps:
        fail_first = name.endswith(_FAILING)
        action = ACTIONS_BY_NAME.get(name.removesuffix(_FAILING))
        if action is None:
            raise ValueError(f"no action {name!r}")
        world = replay.world
        if not action.enabled(world, unbounded):
            raise ValueError(f"{name} is not enabled after {replay.lines[-1]}")
        replay.lines += [_dumps(x) for x in ((_FAIL_LINE,) if fail_first else ()) + action.lines(world)]
        step = run_step(world, action, fail_first=fail_first)
        replay.steps.append(step)
        replay.delivered += [out.to_jsonrpc() for out, ok in step.sent if ok]
    return replay


def _dumps(line: Line) -> str:
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


def explore(bounds: Bounds | None = None, *, stop_at_first: bool = False) -> CheckResult:
    """Explore the whole abstract state space within ``bounds`` and check every invariant."""
    return Explorer(bounds, stop_at_first=stop_at_first).run()


# ---------------------------------------------------------------------------- report and CLI


def render_report(result: CheckResult, *, verbose: bool = False) -> str:
    """A short human-readable report of ``result``."""
    b = result.bounds
    lines = [
        f"lifecycle check: bounds turns={b.turns} active-incidents<={b.incidents} replacements={b.replacements} "
        f"warnings/turn={b.retries} notice-revisions={b.notices} failed-sends={'yes' if b.failed_sends else 'no'}",
        f"explored {result.states} states, {result.edges} edges, depth {result.depth}, from {result.roots} roots "
        f"in {result.seconds:.1f} s ({'complete' if result.complete else 'INCOMPLETE'}; "
        f"{result.beyond_bound} states beyond the incident bound not expanded)",
    ]
    n_inv = len(result.invariants)
    if result.violations:
        lines.append(f"invariants: {len(result.violations)} of {n_inv} VIOLATED")
    else:
        lines.append(f"invariants: all {n_inv} hold in every state and on every edge")
    covered = len(result.coverage) - len(result.uncovered)
    lines.append(f"IncidentMachine transitions: {covered}/{len(result.coverage)} fired")
    if verbose or result.uncovered:
        for label, n in result.coverage.items():
            lines.append(f"  {'NEVER ' if n == 0 else ''}{label}: {n}")
    fcovered = len(result.flow_coverage) - len(result.flow_uncovered)
    lines.append(f"SessionFlow transitions: {fcovered}/{len(result.flow_coverage)} fired")
    if verbose or result.flow_uncovered:
        for label, n in result.flow_coverage.items():
            lines.append(f"  {'NEVER ' if n == 0 else ''}{label}: {n}")
    reached = len(result.targets) - len(result.unreached)
    lines.append(f"reachability targets: {reached}/{len(result.targets)} reached")
    descriptions = {t.name: t.description for t in TARGETS}
    if verbose or result.unreached:
        for name, depth in result.targets.items():
            where = "NOT REACHED" if depth is None else f"depth {depth}"
            lines.append(f"  {name} ({where}): {descriptions[name]}")
    for v in result.violations:
        lines.append("")
        lines.append(f"VIOLATED {v.invariant}: {v.message}")
        lines.append(f"  spec: {v.spec}")
        lines.append(f"  shortest counterexample ({v.depth} steps): {' -> '.join(v.steps)}")
        lines.append("  as `lifecycle trace` input:")
        lines.extend(f"    {t}" for t in v.trace)
    lines.append("OK" if result.ok else "FAILED")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="lifecycle check", description="Exhaustively explore one session's abstract state space."
    )
    p.add_argument("--mutants", action="store_true", help="self-test: seed known bugs, require each to be caught")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--verbose", "-v", action="store_true", help="list every transition and target")
    d = Bounds()
    p.add_argument("--turns", type=int, default=d.turns)
    p.add_argument("--incidents", type=int, default=d.incidents)
    p.add_argument("--replacements", type=int, default=d.replacements)
    p.add_argument("--retries", type=int, default=d.retries)
    p.add_argument("--notices", type=int, default=d.notices)
    p.add_argument("--no-failed-sends", action="store_true", help="do not explore failing sends")
    p.add_argument("--max-states", type=int, default=500_000, help="give up (FAILED, incomplete) beyond this")
    return p


def cli_main(argv: list[str]) -> int:
    """``lifecycle check [--mutants] [--json] [bounds...]``; exit 1 on any failure."""
    args = _parser().parse_args(argv)
    bounds = Bounds(
        turns=args.turns,
        incidents=args.incidents,
        replacements=args.replacements,
        retries=args.retries,
        notices=args.notices,
        failed_sends=not args.no_failed_sends,
    )
    if args.mutants:
        from ..mutants import render_mutants_report, run_mutants

        report = run_mutants(bounds)
        if args.json:
            print(json.dumps(report.to_json(), indent=2))
        else:
            print(render_mutants_report(report))
        return 0 if report.ok else 1
    result = Explorer(bounds, max_states=args.max_states).run()
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print(render_report(result, verbose=args.verbose))
    return 0 if result.ok else 1

