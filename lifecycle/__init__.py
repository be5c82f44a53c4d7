"""lifecycle: a sans-I/O incident lifecycle for the ACP ``sessionFailure`` extension.

The package's folders are its architecture:

* the core, flat in this folder, performs no I/O and is named after the spec's sections:
  ``wire`` (Wire record), ``negotiation`` (Capability negotiation), ``ids`` (Identity),
  ``conditions`` (Categories, Actions), ``families`` and ``neutral`` (any other ACP agent's
  failures, provider-neutral), ``titles`` (Title and details), ``redaction`` (its rules
  in ``redaction_found``, ``redaction_layout``, ``redaction_credentials``, ``redaction_shapes``),
  ``events``, ``incident`` and ``session_flow`` (the machines), ``answers`` (how the machines are
  asked, and the incidents' model), ``intents`` and ``ledger`` (Delivery surfaces, Internal
  recovery), ``history`` (History replay), ``client`` (the receiving side), ``errors``;
  ``log`` is the structlog listener a caller may attach;
* the edges: ``lifecycle.claude`` (Claude SDK messages -> events) and ``lifecycle.acp`` (the
  ledger's messages -> the ACP Python SDK);
* ``lifecycle.agent``: the reference Claude ACP agent (``lifecycle acp``);
* ``lifecycle.cli``: the ``lifecycle`` command (``trace``, ``replay``, ``schema`` and the rest);
* ``lifecycle.conformance``: the conformance kit (``lifecycle conformance``), for adapter authors.

The developer tools (explorer, mutants, benchmark, diagrams) are not part of this package: they are
the repository's ``workshop`` package (``python -m workshop``), which no wheel carries.

This module re-exports the core's public API; the edges, the agent and the kit are imported by
their own names. ``import lifecycle`` loads the errors only; every other re-export, the wire
record (``wire``, and pydantic with it) included, is loaded when it is first read (PEP 562,
``_LAZY``), each from the module that defines it, so a name's first read costs its module's import
(``python -m workshop bench``'s ``imports.first_use_s`` counts it). The two machine classes
(``IncidentMachine``, ``SessionFlow``) are among them: python-statemachine is imported when a
ledger first asks a machine (or when either name is read), not by ``import lifecycle``.
"""

from typing import TYPE_CHECKING, Any

from .errors import (
    LifecycleError,
    LocalProtocolError,
    MalformedMessage,
    MalformedRecordError,
    PendingDeliveryError,
    RemoteProtocolError,
)

if TYPE_CHECKING:
    from .answers import Incident, MachineAnswers
    from .client import ClientProjection, Entry
    from .conditions import CONDITIONS, Condition, Recovery
    from .events import (
        AgentAnswered,
        AgentExited,
        AgentFailure,
        AgentRetrying,
        AgentTurnEnded,
        ApiRetry,
        Assistant,
        AuthStatus,
        Cancelled,
        ChildEnded,
        ChildRetry,
        Event,
        HistoryEntry,
        HistoryLoaded,
        Informational,
        InternalError,
        McpServerNotStarted,
        MessagesReplaced,
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
        RateLimitWindow,
        Result,
        RuntimeReplaced,
        SessionUpdateOut,
        WorkerShuttingDown,
    )
    from .ids import IdKind, IncidentId, parse_id
    from .incident import IncidentMachine
    from .ledger import ActiveIncident, SessionLedger, TurnView
    from .negotiation import negotiate
    from .session_flow import SessionFlow
    from .wire import Action, Category, SessionFailure, Severity, attach_record, read_record

#: The re-exports loaded on first access (PEP 562), by the module that defines them: ``import
#: lifecycle`` loads the errors only (the record, :mod:`.wire`, brings pydantic).
_LAZY: dict[str, str] = {
    **dict.fromkeys(("Incident", "MachineAnswers"), "answers"),
    **dict.fromkeys(("ClientProjection", "Entry"), "client"),
    **dict.fromkeys(("CONDITIONS", "Condition", "Recovery"), "conditions"),
    **dict.fromkeys(
        (
            "AgentAnswered", "AgentExited", "AgentFailure", "AgentRetrying", "AgentTurnEnded",
            "ApiRetry", "Assistant", "AuthStatus", "Cancelled", "ChildEnded", "ChildRetry", "Event", "HistoryEntry",
            "HistoryLoaded",
            "Informational", "InternalError", "McpServerNotStarted", "MessagesReplaced", "ModelFallback",
            "ModelRefusalFallback", "ModelRefusalNoFallback", "Outbound", "PermissionAnswered", "PermissionAsked",
            "PromptErrorOut", "PromptResponseOut", "PromptStarted", "QueryEnded", "QueryError", "RateLimitWindow",
            "Result", "RuntimeReplaced", "SessionUpdateOut", "WorkerShuttingDown",
        ),
        "events",
    ),
    **dict.fromkeys(("IdKind", "IncidentId", "parse_id"), "ids"),
    "IncidentMachine": "incident",
    **dict.fromkeys(("ActiveIncident", "SessionLedger", "TurnView"), "ledger"),
    "negotiate": "negotiation",
    "SessionFlow": "session_flow",
    **dict.fromkeys(("Action", "Category", "SessionFailure", "Severity", "attach_record", "read_record"), "wire"),
}

__all__ = [
    "CONDITIONS",
    "Action",
    "ActiveIncident",
    "AgentAnswered",
    "AgentExited",
    "AgentFailure",
    "AgentRetrying",
    "AgentTurnEnded",
    "ApiRetry",
    "Assistant",
    "AuthStatus",
    "Cancelled",
    "Category",
    "ChildEnded",
    "ChildRetry",
    "ClientProjection",
    "Condition",
    "Entry",
    "Event",
    "HistoryEntry",
    "HistoryLoaded",
    "IdKind",
    "Incident",
    "IncidentId",
    "IncidentMachine",
    "Informational",
    "InternalError",
    "LifecycleError",
    "LocalProtocolError",
    "MachineAnswers",
    "MalformedMessage",
    "MalformedRecordError",
    "McpServerNotStarted",
    "MessagesReplaced",
    "ModelFallback",
    "ModelRefusalFallback",
    "ModelRefusalNoFallback",
    "Outbound",
    "PendingDeliveryError",
    "PermissionAnswered",
    "PermissionAsked",
    "PromptErrorOut",
    "PromptResponseOut",
    "PromptStarted",
    "QueryEnded",
    "QueryError",
    "RateLimitWindow",
    "Recovery",
    "RemoteProtocolError",
    "Result",
    "RuntimeReplaced",
    "SessionFailure",
    "SessionFlow",
    "SessionLedger",
    "SessionUpdateOut",
    "Severity",
    "TurnView",
    "WorkerShuttingDown",
    "attach_record",
    "negotiate",
    "parse_id",
    "read_record",
]

__version__ = "0.1.0"

def _module(name: str) -> Any:
    """Core module ``name`` of :data:`_LAZY`, imported (by name: no dynamic import in the core)."""
    if name == "answers":
        from . import answers

        return answers
    if name == "client":
        from . import client

        return client
    if name == "conditions":
        from . import conditions

        return conditions
    if name == "events":
        from . import events

        return events
    if name == "ids":
        from . import ids

        return ids
    if name == "incident":
        from . import incident

        return incident
    if name == "ledger":
        from . import ledger

        return ledger
    if name == "negotiation":
        from . import negotiation

        return negotiation
    if name == "wire":
        from . import wire

        return wire
    from . import session_flow

    return session_flow


def __getattr__(name: str) -> Any:
    # A re-export of :data:`_LAZY`, imported on first access and kept.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lifecycle' has no attribute {name!r}")
    value = getattr(_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
