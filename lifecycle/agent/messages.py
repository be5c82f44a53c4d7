"""One Claude message, read once: the small typed record every lane takes, and what a lane gives
back.

Rules
-----
* :func:`read` is the one place in the agent that looks at an SDK message's class
  (:data:`KINDS`, by class name: the SDK's classes are imported lazily, and a class this table
  does not name is :attr:`Kind.OTHER`, judged as a system message is). Every lane
  (:mod:`lifecycle.agent.lanes`) reads the record's fields, never the class.
* The record keeps what more than one lane asks of a message, read once: its kind, its subtype
  (a system message's, a result's), its ``data`` (a system message's mapping, a prediction's
  text; empty otherwise), the subagent's ``parent_tool_use_id``, the prompts it names (a
  ``user_message_uuid``, ``user_message_uuids``, on the message or in its data) and a result's
  ``origin`` kind, and the messages an assistant message replaces (CLI 2.1.337's ``supersedes``,
  which the SDK's class has no field for: :class:`lifecycle.agent.adopt.SuggestingClient` keeps
  it from the raw line; read as the Claude edge reads it, :func:`lifecycle.claude.replaced_uuids`).
  The SDK's object rides along (:attr:`ClaudeMessage.sdk`) for the one lane that renders its
  content.
* A value of the wrong type reads as absent (a subtype that is no string is None, a data that is
  no mapping is empty, a name that is no string is not named): a message the agent did not
  expect ends nothing.
* A message is **malformed** (:attr:`Kind.MALFORMED`) when a field the SDK's class requires and
  the lanes build on is not of its type (:func:`malformed`: a streamed delta's ``event`` no
  mapping, an answer's ``content`` no list, a result's ``subtype``, ``is_error``, ``num_turns``,
  ``session_id`` or durations not what the SDK declares, a usage-limit event's ``status`` no
  string; a system message has none: its subtype and data read as absent), and so is a line the
  SDK could not parse at all (:class:`Unreadable`, handed on by
  :class:`lifecycle.agent.adopt.SuggestingClient`). No lane sees a malformed message: the session
  logs it (its type and subtype, never its content), counts it and skips it, so the turn ends as
  it would have without it (docs/acp-agent.md, "A line nobody expected").
* A lane's output is a list of :class:`Step` (updates to show, then an event to judge), in the
  order they are sent; its input, the record on its way (:class:`Pass`); what a session's lanes
  are built from, :class:`LaneParts`. They live here, beside the record, so that no lane module
  imports the table of lanes.

Theory of operation
-------------------
Sans-I/O and cheap: the runtime's pump hands each SDK message to the session, which reads it
here once and runs the record through the lanes (:class:`lifecycle.agent.lanes.Lanes`). A
streamed turn's chunks (``StreamEvent``, the hot path) read only their class, their parent and
their names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from ..claude import replaced_uuids
from ..events import Event
from .interrupts import Interruptions

if TYPE_CHECKING:
    from ..negotiation import ClientState
    from .mcp import McpServers
    from .modes import SessionSettings
    from .stream import StreamRenderer

__all__ = [
    "KINDS", "OWN_CLASSES", "ClaudeMessage", "Kind", "LaneParts", "Pass", "PromptSuggestion", "Step", "Unreadable",
    "malformed", "read",
]  # fmt: skip


class Kind(StrEnum):
    """What a Claude message is (the SDK's class, or the agent's own :class:`PromptSuggestion`)."""

    STREAM = "stream"  # StreamEvent: a streamed delta of the turn in flight
    ASSISTANT = "assistant"  # AssistantMessage
    USER = "user"  # UserMessage (tool results)
    RESULT = "result"  # ResultMessage: a turn's end
    SYSTEM = "system"  # SystemMessage (init, status, compact_boundary, api_retry, ...)
    RATE_LIMIT = "rate_limit"  # RateLimitEvent: a usage-limit window changed state
    SUGGESTION = "suggestion"  # the predicted next prompt (suggestions.py)
    MALFORMED = "malformed"  # unreadable, or a required field of the wrong type: skipped
    OTHER = "other"  # any other class (the SDK's task messages, a newer SDK's): judged as system


#: The SDK's class names and what they are (the one class-name dispatch of the agent).
KINDS: Final[Mapping[str, Kind]] = MappingProxyType(
    {
        "StreamEvent": Kind.STREAM,
        "AssistantMessage": Kind.ASSISTANT,
        "UserMessage": Kind.USER,
        "ResultMessage": Kind.RESULT,
        "SystemMessage": Kind.SYSTEM,
        "RateLimitEvent": Kind.RATE_LIMIT,
        "PromptSuggestion": Kind.SUGGESTION,
        "Unreadable": Kind.MALFORMED,
    }
)
#: The names in :data:`KINDS` that are the agent's own classes, not the SDK's (the SDK drops a
#: prediction and refuses an unparsable line; the agent's SDK client hands both on).
OWN_CLASSES: Final = frozenset({"PromptSuggestion", "Unreadable"})
_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})
#: The line's ``type`` where it is not the kind's name (a skipped message is logged by its type).
_WIRE: Final[Mapping[Kind, str]] = MappingProxyType({Kind.STREAM: "stream_event", Kind.RATE_LIMIT: "rate_limit_event"})


@dataclass(frozen=True, slots=True)
class PromptSuggestion:
    """Claude Code's ``prompt_suggestion`` message: the prompt it expects the user to send next
    (the Claude SDK drops it; :class:`lifecycle.agent.adopt.SuggestingClient` hands it on)."""

    suggestion: str

    @classmethod
    def from_raw(cls, data: Mapping[str, Any]) -> PromptSuggestion:
        text = data.get("suggestion")
        return cls(text if isinstance(text, str) else "")


#: What a type or subtype is shown as in a log line when it is no plain name (never its content).
_NAME: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def _name(value: object) -> str | None:
    """``value`` when it is a plain name (a type, a subtype), else None: a log line never carries
    what a hostile line put there."""
    return value if isinstance(value, str) and _NAME.fullmatch(value) else None


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A line of Claude Code's the SDK could not parse: its type and subtype (plain names only),
    never its content."""

    type: str | None
    subtype: str | None

    @classmethod
    def from_raw(cls, data: object) -> Unreadable:
        if not isinstance(data, Mapping):
            return cls(None, None)
        return cls(_name(data.get("type")), _name(data.get("subtype")))


@dataclass(frozen=True, slots=True)
class ClaudeMessage:
    """One SDK message as the lanes see it (see the module)."""

    kind: Kind
    sdk: object  # the SDK's own message, for the renderer and the Claude edge
    subtype: str | None = None
    data: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    parent_tool_use_id: str | None = None
    names: tuple[str, ...] = ()  # the prompts (user message uuids) it names
    origin: str | None = None  # a result's origin kind (a turn Claude Code started by itself)
    replaces: tuple[str, ...] = ()  # the message uuids an assistant message replaces (``supersedes``)


@dataclass(frozen=True, slots=True)
class Step:
    """Updates to show, then an event to judge (either may be empty); ``session``: the session
    the updates go to when not the lane's own (a child session: :mod:`lifecycle.agent.subagents`;
    the event is the session's own ledger's whatever)."""

    updates: list[dict[str, Any]] = field(default_factory=list)
    event: Event | None = None
    session: str | None = None


@dataclass(frozen=True, slots=True)
class LaneParts:
    """What a session's lanes are built from."""

    renderer: StreamRenderer
    mcp: McpServers
    client: ClientState
    #: The session's ``Interrupt`` reports (interrupts.py): the translation lane asks them at a result.
    interrupts: Interruptions = field(default_factory=lambda: Interruptions(""))
    #: The session's settings (mode, model, commands); None: a lane that needs them keeps its own.
    settings: SessionSettings | None = None


@dataclass(slots=True)
class Pass:
    """One message on its way through the lanes, and what the lanes learned of it."""

    message: ClaudeMessage
    turn: str | None  # the prompt in flight (None between prompts)
    quiet: bool  # the turn shows nothing more (the ledger's flow is ``cancelled``)
    prompt_open: bool  # a prompt's turn is open in the ledger (its flow is not ``idle``)
    own: bool = False  # Claude Code's own turn (set by the own-turns lane)
    #: A result of the prompt's turn that a steer superseded (set by the steering lane): the turn
    #: goes on in the steered cycle, so it ends nothing and is not judged.
    held: bool = False
    #: A held result the turn ends with after all (set by the steering lane: Claude Code went idle
    #: without a result answering the steer), translated before this message.
    released: ClaudeMessage | None = None
    hold: bool = False  # the prompt's result is held (set by the hold lane; translation leaves its event)
    after: list[Step] = field(default_factory=list)  # steps sent after every lane's (the hold lane's)
    #: The child session the message's updates go to (set by the child-sessions lane: a subagent's
    #: message for a client that declared ``subagents``); None: the session's own.
    child: str | None = None

    @property
    def ends(self) -> bool:
        """The message ends the turn in flight: a result that is not Claude Code's own nor held
        for a steer, or a message that releases a held one."""
        if self.released is not None:
            return True
        return self.message.kind is Kind.RESULT and not self.own and not self.held


def read(message: object) -> ClaudeMessage:
    """``message`` as its record (see the module); never raises."""
    kind = KINDS.get(type(message).__name__, Kind.OTHER)
    if kind is Kind.MALFORMED or (kind is not Kind.OTHER and malformed(kind, message)):
        return _skipped(kind, message)
    if kind is Kind.SUGGESTION:
        text = getattr(message, "suggestion", None)
        suggestion = text if isinstance(text, str) else ""
        return ClaudeMessage(kind, message, data=MappingProxyType({"suggestion": suggestion}))
    raw = getattr(message, "data", None)
    data = raw if isinstance(raw, Mapping) else _EMPTY
    subtype = getattr(message, "subtype", None) if kind in (Kind.SYSTEM, Kind.RESULT, Kind.OTHER) else None
    parent = getattr(message, "parent_tool_use_id", None)
    return ClaudeMessage(
        kind,
        message,
        subtype=subtype if isinstance(subtype, str) else None,
        data=data,
        parent_tool_use_id=parent if isinstance(parent, str) else None,
        names=_names(message, data),
        origin=_origin(message) if kind is Kind.RESULT else None,
        replaces=replaced_uuids(getattr(message, "supersedes", None)) if kind is Kind.ASSISTANT else (),
    )




def _skipped(kind: Kind, message: object) -> ClaudeMessage:
    """The record of a message no lane sees: its type and subtype (plain names only)."""
    if kind is Kind.MALFORMED:  # a line the SDK refused
        data = {"type": _name(getattr(message, "type", None)), "unparsable": True}
    else:
        data = {"type": _WIRE.get(kind, kind.value)}
    subtype = _name(getattr(message, "subtype", None))
    return ClaudeMessage(Kind.MALFORMED, message, subtype=subtype, data=MappingProxyType(data))


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def malformed(kind: Kind, message: object) -> bool:
    """Whether a field the SDK's class requires for ``kind``, and the lanes build on, is not of
    the type the SDK declares (see the module)."""

    def get(name: str) -> object:
        return getattr(message, name, None)

    if kind is Kind.STREAM:
        return not isinstance(get("event"), Mapping)
    if kind is Kind.ASSISTANT:
        return not isinstance(get("content"), list) or not isinstance(get("model"), str)
    if kind is Kind.USER:
        return not isinstance(get("content"), str | list)
    if kind is Kind.RESULT:
        return not (
            isinstance(get("subtype"), str)
            and isinstance(get("is_error"), bool)
            and isinstance(get("num_turns"), int) and not isinstance(get("num_turns"), bool)
            and isinstance(get("session_id"), str)
            and _number(get("duration_ms")) and _number(get("duration_api_ms"))
        )  # fmt: skip
    if kind is Kind.RATE_LIMIT:
        return not isinstance(getattr(get("rate_limit_info"), "status", None), str)
    return False


def _names(message: object, data: Mapping[str, Any]) -> tuple[str, ...]:
    """The prompt ids (user message uuids) a message names, on itself and in its data."""
    names: list[str] = []
    for one, many in (
        (getattr(message, "user_message_uuid", None), getattr(message, "user_message_uuids", None)),
        (data.get("user_message_uuid"), data.get("user_message_uuids")) if data else (None, None),
    ):
        if isinstance(one, str):
            names.append(one)
        if isinstance(many, list):
            names.extend(u for u in many if isinstance(u, str))
    return tuple(names)


def _origin(message: object) -> str | None:
    origin = getattr(message, "origin", None)
    kind = origin.get("kind") if isinstance(origin, Mapping) else getattr(origin, "kind", None)
    return kind if isinstance(kind, str) else None
