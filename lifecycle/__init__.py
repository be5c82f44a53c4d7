"""lifecycle: a sans-I/O incident lifecycle for the ACP ``sessionFailure`` extension.

The package's folders are its architecture:

* the core, flat in this folder, performs no I/O and is named after the spec's sections:
  ``wire`` (Wire record), ``negotiation`` (Capability negotiation), ``ids`` (Identity),
  ``conditions`` (Categories, Actions), ``titles`` (Title and details), ``redaction`` (its rules
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
their own names. The two machine classes (``IncidentMachine``, ``SessionFlow``) are re-exported
lazily: python-statemachine is imported when a ledger first asks a machine (or when either name is
read), not by ``import lifecycle``.
"""

from typing import TYPE_CHECKING, Any

from .answers import Incident, MachineAnswers
from .client import ClientProjection, Entry
from .conditions import CONDITIONS, Condition, Recovery
from .errors import (
    LifecycleError,
    LocalProtocolError,
    MalformedMessage,
    MalformedRecordError,
    PendingDeliveryError,
    RemoteProtocolError,
)
from .events import (
    ApiRetry,
    Assistant,
    AuthStatus,
    Cancelled,
    Event,
    HistoryEntry,
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
    RateLimitWindow,
    Result,
    RuntimeReplaced,
    SessionUpdateOut,
    WorkerShuttingDown,
)
from .ids import IdKind, IncidentId, parse_id
from .ledger import ActiveIncident, SessionLedger, TurnView
from .negotiation import negotiate
from .wire import Action, Category, SessionFailure, Severity, attach_record, read_record

__all__ = [
    "CONDITIONS",
    "Action",
    "ActiveIncident",
    "ApiRetry",
    "Assistant",
    "AuthStatus",
    "Cancelled",
    "Category",
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

if TYPE_CHECKING:
    from .incident import IncidentMachine
    from .session_flow import SessionFlow

def __getattr__(name: str) -> Any:
    # The two public names whose modules import python-statemachine, loaded on first access.
    value: Any
    if name == "IncidentMachine":
        from .incident import IncidentMachine as value
    elif name == "SessionFlow":
        from .session_flow import SessionFlow as value
    else:
        raise AttributeError(f"module 'lifecycle' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
