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
  ``origin`` kind. The SDK's object rides along (:attr:`ClaudeMessage.sdk`) for the one lane that
  renders its content.
* A value of the wrong type reads as absent (a subtype that is no string is None, a data that is
  no mapping is empty, a name that is no string is not named): a message the agent did not
  expect ends nothing.
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

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from ..events import Event

if TYPE_CHECKING:
    from ..negotiation import ClientState
    from .mcp import McpServers
    from .stream import StreamRenderer

__all__ = ["KINDS", "ClaudeMessage", "Kind", "LaneParts", "Pass", "PromptSuggestion", "Step", "read"]


class Kind(StrEnum):
    """What a Claude message is (the SDK's class, or the agent's own :class:`PromptSuggestion`)."""

    STREAM = "stream"  # StreamEvent: a streamed delta of the turn in flight
    ASSISTANT = "assistant"  # AssistantMessage
    USER = "user"  # UserMessage (tool results)
    RESULT = "result"  # ResultMessage: a turn's end
    SYSTEM = "system"  # SystemMessage (init, status, compact_boundary, api_retry, ...)
    RATE_LIMIT = "rate_limit"  # RateLimitEvent: a usage-limit window changed state
    SUGGESTION = "suggestion"  # the predicted next prompt (suggestions.py)
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
    }
)
_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class PromptSuggestion:
    """Claude Code's ``prompt_suggestion`` message: the prompt it expects the user to send next
    (the Claude SDK drops it; :class:`lifecycle.agent.adopt.SuggestingClient` hands it on)."""

    suggestion: str

    @classmethod
    def from_raw(cls, data: Mapping[str, Any]) -> PromptSuggestion:
        text = data.get("suggestion")
        return cls(text if isinstance(text, str) else "")


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


@dataclass(frozen=True, slots=True)
class Step:
    """Updates to show, then an event to judge (either may be empty)."""

    updates: list[dict[str, Any]] = field(default_factory=list)
    event: Event | None = None


@dataclass(frozen=True, slots=True)
class LaneParts:
    """What a session's lanes are built from."""

    renderer: StreamRenderer
    mcp: McpServers
    client: ClientState


@dataclass(slots=True)
class Pass:
    """One message on its way through the lanes, and what the lanes learned of it."""

    message: ClaudeMessage
    turn: str | None  # the prompt in flight (None between prompts)
    quiet: bool  # the turn shows nothing more (the ledger's flow is ``cancelled``)
    prompt_open: bool  # a prompt's turn is open in the ledger (its flow is not ``idle``)
    own: bool = False  # Claude Code's own turn (set by the own-turns lane)

    @property
    def ends(self) -> bool:
        """The message ends the turn in flight: a result that is not Claude Code's own."""
        return self.message.kind is Kind.RESULT and not self.own


def read(message: object) -> ClaudeMessage:
    """``message`` as its record (see the module); never raises."""
    kind = KINDS.get(type(message).__name__, Kind.OTHER)
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
    )


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
