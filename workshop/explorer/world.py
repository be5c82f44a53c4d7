"""The explorer's world: its bounds and injected text, one concrete configuration, and its VIEW.

Rules
-----
* A :class:`World` is one concrete configuration: a real :class:`~lifecycle.ledger.SessionLedger`
  and :class:`~lifecycle.client.ClientProjection`, plus the environment's counters.
* :func:`clone_value` copies a configuration structurally (immutable values are shared, and so is the
  exploration's :class:`~lifecycle.answers.MachineAnswers`); :func:`ledger_fingerprint` is the
  complete state of a ledger and :func:`ledger_view` its abstract state (see the VIEW comment).
* Incident ids are read with :func:`lifecycle.ids.parse_id`, never by pattern.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import types
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pydantic import BaseModel

from lifecycle.answers import MachineAnswers
from lifecycle.client import ClientProjection
from lifecycle.conditions import Condition
from lifecycle.ids import IdKind, parse_id
from lifecycle.ledger import ActiveIncident, SessionLedger
from lifecycle.negotiation import CAPABILITY
from lifecycle.wire import with_air

__all__ = [
    "CAPABLE",
    "EPOCH",
    "LEGACY",
    "SECRET_MARKERS",
    "SESSION_ID",
    "Bounds",
    "Recorder",
    "World",
    "clone_value",
    "ledger_fingerprint",
    "ledger_flow_state",
    "ledger_view",
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
MAX_TOKENS_TEXT = f"Claude's response exceeded the output token maximum (x-api-key: {API_KEY})"
REFUSAL_TEXT = f"API Error: Claude's safeguards flagged this message. Details: `[cyber]` ({PRIVATE_PATH})"
QUERY_ERROR_TEXT = f"ProcessTransport is not ready for writing (ANTHROPIC_API_KEY={API_KEY}, cwd={PRIVATE_PATH})"
AUTH_FAILED_TEXT = f"401 Unauthorized ({BEARER})"
#: Claude's provider failure after retries that got no HTTP response (issue 21 rule 3: ``service``).
SERVER_ERROR_TEXT = "API Error: Connection error."
#: A budget limit's result text, with ``stop_reason: max_tokens`` (issue 21 rule 1: ``limit``).
LIMIT_RESULT_TEXT = "Reached maximum budget ($0.50)"
#: A login request that arrives only as an ``is_error`` result's text (issue 21 rule 7: ``access``).
LOGIN_RESULT_TEXT = "OAuth token has expired · Run /login to sign in again"
#: A Claude Code that could not start, for a sign-in reason (issue 49 point 2: ``access``).
STARTUP_SIGNIN_TEXT = "Your gateway session has expired. Run /login to sign in again."
STARTUP_SIGNIN_REASON = "gateway_signin_required"
LOCAL_COMMAND_TEXT = "No response requested."
ANSWER_TEXT = "Hello! How can I help?"
FALLBACK_TEXTS = (
    "Switched to claude-sonnet-4-5 because claude-opus-4-5 is overloaded",
    "Switched to claude-haiku-4-5 because claude-sonnet-4-5 is overloaded",
)

#: When the explored 5-hour window resets (Unix seconds; a ``rate_limit_event``'s ``resetsAt``).
WINDOW_RESETS_AT = 1796421723

#: ``clientCapabilities`` of a client that negotiates the extension, and of one that does not.
CAPABLE: dict[str, Any] = {"_meta": with_air(None, capabilities=[CAPABILITY])}
LEGACY: dict[str, Any] = {}

STALE_RUNTIME_NOTE = "not expressible in a trace: lifecycle trace reports this line and skips it"
#: ``lifecycle trace`` has no adapter event for the adapter's own failure (``InternalError``).
INTERNAL_ERROR_NOTE = "not expressible in a trace: lifecycle trace reports this line and skips it"


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


class Recorder:
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

# (a function: the ledger's reset-time zone, given once and never changed)
_ATOMIC: tuple[type, ...] = (str, int, float, bool, type(None), Enum, bytes, frozenset, types.FunctionType)
# ``_port``: the turn part's way back to its ledger (the ledger itself is fingerprinted).
_SKIP_FP = frozenset({"_observer", "_session_id", "_epoch", "_answers", "_port"})
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


_Cloner = Callable[[Any, dict[int, Any], Recorder], Any]
_cloners: dict[type, _Cloner] = {}


def clone_value(value: Any, memo: dict[int, Any], recorder: Recorder) -> Any:
    """A structural copy of ``value`` (immutable values are shared).

    Dispatches on the exact type (decided once per type): this runs for every successor.
    """
    cls = type(value)
    cloner = _cloners.get(cls)
    if cloner is None:
        cloner = _cloners[cls] = _cloner_for(cls)
    return cloner(value, memo, recorder)


def _share(value: Any, memo: dict[int, Any], recorder: Recorder) -> Any:
    return value


def _clone_tuple(value: Any, memo: dict[int, Any], recorder: Recorder) -> Any:
    return tuple([clone_value(v, memo, recorder) for v in value])


def _clone_list(value: Any, memo: dict[int, Any], recorder: Recorder) -> Any:
    return [clone_value(v, memo, recorder) for v in value]


def _clone_dict(value: Any, memo: dict[int, Any], recorder: Recorder) -> Any:
    return {k: clone_value(v, memo, recorder) for k, v in value.items()}


def _clone_deque(value: Any, memo: dict[int, Any], recorder: Recorder) -> Any:
    return deque(clone_value(v, memo, recorder) for v in value)


def _clone_set(value: Any, memo: dict[int, Any], recorder: Recorder) -> Any:
    return {clone_value(v, memo, recorder) for v in value}


def _clone_recorder(value: Any, memo: dict[int, Any], recorder: Recorder) -> Any:
    return recorder


def _clone_client(value: Any, memo: dict[int, Any], recorder: Recorder) -> Any:
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
        Recorder: _clone_recorder,
        ClientProjection: _clone_client,
        # One exploration's answers, shared by every world it clones (a pure function of the class).
        MachineAnswers: _share,
    }
    if cls in simple:
        return simple[cls]
    slots = _slots_of(cls)
    has_dict = "__dict__" in dir(cls) and not slots

    def clone_object(value: Any, memo: dict[int, Any], recorder: Recorder) -> Any:
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
            setter(out, name, clone_value(item, memo, recorder))
        if has_dict or hasattr(value, "__dict__"):
            for k, v in vars(value).items():
                setter(out, k, clone_value(v, memo, recorder))
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
#   * a settled turn (its flow state is ``idle`` or ``cancelled``) only by its id: what it
#     captured while running is never read again (no transition out of those states names an
#     effect that reads the turn's data; ``open_turn`` replaces it), its permission questions
#     included (``question_open`` reads them only while the flow is in ``in_turn``);
#   * ``_withdrawn``, the withdrawn questions not taken yet: an output for the caller
#     (``take_withdrawn``), which the ledger never reads and the explorer never drains;
#   * the turn part (``_turns``, a ``TurnFlow``) is viewed slot by slot beside the ledger's own,
#     less its port back to the ledger (``_port``) and its copy of ``_negotiated``.
_VIEW_DROP = frozenset(
    {"_observer", "_answers", "_session_id", "_epoch", "_seq", "_withdrawn", "_port", "category", "record", "revision"}
)
_SEQUENCED = frozenset({IdKind.SESSION, IdKind.NOTICE})


@functools.lru_cache(maxsize=4096)  # a pure function of the text, asked for every string of every state
def _id_view(text: str) -> Hashable:
    """A session-scoped or notice id without its sequence number; any other text as it is."""
    parsed = parse_id(text, session_id=SESSION_ID, epoch=EPOCH)
    if parsed is not None and parsed.kind in _SEQUENCED:
        return dataclasses.replace(parsed, seq=None)
    return text


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
            # a turn's captured failure (condition, Claude's text, kind): its category too, which
            # the record that settles the turn shows (a provider error is not a rate limit)
            return (_view(value[0]), value[0].category)
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
    view = ledger.turn
    settled = view is not None and view.settled  # the flow left in_turn (idle, or cancelled and draining)
    turns = ledger._turns
    slots: list[tuple[object, str]] = [(ledger, n) for n in _slots_of(type(ledger)) if n != "_turns"]
    slots += [(turns, n) for n in _slots_of(type(turns)) if n != "_negotiated"]
    for owner, name in slots:
        if name in _VIEW_DROP:
            continue
        value = getattr(owner, name, None)
        if name == "_last_record_id":
            parts.append(value in notices)
        elif name == "_runtime_incident":
            parts.append(value is not None)
        elif name == "_turn" and value is not None and settled:
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
    windows: bool = False  # the root's Claude Code reports usage-limit windows (issue 32)
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

    def clone(self, recorder: Recorder) -> World:
        memo: dict[int, Any] = {}
        return World(
            ledger=clone_value(self.ledger, memo, recorder),
            client=clone_value(self.client, memo, recorder),
            root=self.root,
            turns=self.turns,
            notices=self.notices,
            failures_used=self.failures_used,
            turn_failure=self.turn_failure,
            settled=self.settled,
            closed=self.closed,
            flow=self.flow,
            max_turns=self.max_turns,
            windows=self.windows,
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
    """The :class:`~lifecycle.session_flow.SessionFlow` leaf state the ledger's turn is in
    (``SessionLedger.flow``: the state the ledger keeps and asks its machine answers about)."""
    return ledger.flow
