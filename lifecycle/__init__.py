"""lifecycle: a sans-I/O incident lifecycle for the ACP ``sessionFailure`` extension.

The package's folders are its architecture:

* the core, flat in this folder, performs no I/O and is named after the spec's sections:
  ``wire`` (Wire record), ``negotiation`` (Capability negotiation), ``ids`` (Identity),
  ``conditions`` (Categories, Actions), ``titles`` (Title and details), ``redaction``,
  ``events``, ``incident`` and ``session_flow`` (the machines), ``ledger`` (Delivery surfaces,
  Internal recovery), ``history`` (History replay), ``client`` (the receiving side), ``errors``;
  ``log`` is the structlog listener a caller may attach;
* the edges: ``lifecycle.claude`` (Claude SDK messages -> events) and ``lifecycle.acp`` (the
  ledger's messages -> the ACP Python SDK);
* ``lifecycle.agent``: the reference Claude ACP agent (``lifecycle acp``);
* ``lifecycle.cli``: the ``lifecycle`` command (``trace``, ``replay``, ``schema`` and the rest);
* ``lifecycle.tools``: developer tools (explorer, mutants, benchmark, diagrams), which the core
  never imports.

This module re-exports the core's public API; the edges, the agent and the tools are imported by
their own names.
"""

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
    ModelFallback,
    ModelRefusalFallback,
    ModelRefusalNoFallback,
    Outbound,
    PromptErrorOut,
    PromptResponseOut,
    PromptStarted,
    QueryEnded,
    QueryError,
    Result,
    RuntimeReplaced,
    SessionUpdateOut,
    WorkerShuttingDown,
)
from .ids import IdKind, IncidentId, parse_id
from .incident import Incident, IncidentMachine, MachineAnswers
from .ledger import ActiveIncident, SessionLedger, TurnView
from .negotiation import negotiate
from .session_flow import SessionFlow
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
    "ModelFallback",
    "ModelRefusalFallback",
    "ModelRefusalNoFallback",
    "Outbound",
    "PendingDeliveryError",
    "PromptErrorOut",
    "PromptResponseOut",
    "PromptStarted",
    "QueryEnded",
    "QueryError",
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
