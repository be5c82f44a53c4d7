"""lifecycle: a sans-I/O incident lifecycle for the ACP ``sessionFailure`` extension.

The core (``wire``, ``negotiation``, ``conditions``, ``titles``, ``incident``, ``ledger``,
``replay``, ``client``) performs no I/O. The edges are thin: ``claude`` (Claude SDK messages),
``trace`` (conformance traces), ``acp`` (the ACP Python SDK), ``log`` (structlog).
"""

from .client import ClientProjection, Entry
from .conditions import CONDITIONS, Condition, Recovery
from .errors import LifecycleError, LocalProtocolError, PendingDeliveryError
from .events import (
    ApiRetry,
    Assistant,
    AuthStatus,
    Cancelled,
    Event,
    HistoryEntry,
    HistoryLoaded,
    InternalError,
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
    WorkerShuttingDown,
)
from .incident import Incident, IncidentMachine
from .ledger import ActiveIncident, SessionLedger, TurnView
from .negotiation import negotiate
from .wire import Action, Category, MalformedRecordError, SessionFailure, Severity, attach_record, read_record

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
    "Incident",
    "IncidentMachine",
    "InternalError",
    "LifecycleError",
    "LocalProtocolError",
    "MalformedRecordError",
    "ModelFallback",
    "Outbound",
    "PendingDeliveryError",
    "PromptErrorOut",
    "PromptResponseOut",
    "PromptStarted",
    "QueryEnded",
    "QueryError",
    "Recovery",
    "Result",
    "RuntimeReplaced",
    "SessionFailure",
    "SessionLedger",
    "SessionUpdateOut",
    "Severity",
    "TurnView",
    "WorkerShuttingDown",
    "attach_record",
    "negotiate",
    "read_record",
]

__version__ = "0.1.0"
