"""The core's input alphabet: small immutable events (and its output: what to send).

Edges translate what they receive into these: :mod:`lifecycle.claude` from Claude SDK messages
(objects or stream-json dicts), :mod:`lifecycle.acp` and :mod:`lifecycle.cli.trace` from what only the
adapter observes. The ledger dispatches on type; do not subclass them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .wire import Action, Category, SessionFailure, attach_record

__all__ = [
    "MAX_WINDOWS",
    "AgentAnswered",
    "AgentExited",
    "AgentFailure",
    "AgentRetrying",
    "AgentTurnEnded",
    "ApiRetry",
    "Assistant",
    "AuthStatus",
    "Cancelled",
    "ChildEnded",
    "ChildRetry",
    "Event",
    "HistoryEntry",
    "HistoryLoaded",
    "Informational",
    "InternalError",
    "McpServerNotStarted",
    "MessagesReplaced",
    "ModelFallback",
    "ModelRefusalFallback",
    "ModelRefusalNoFallback",
    "Outbound",
    "PermissionAnswered",
    "PermissionAsked",
    "PromptErrorOut",
    "PromptResponseOut",
    "PromptStarted",
    "QueryEnded",
    "QueryError",
    "RateLimitWindow",
    "Result",
    "RuntimeReplaced",
    "SessionUpdateOut",
    "WorkerShuttingDown",
    "mask_texts",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptStarted:
    """A ``session/prompt`` starts; ``turn_id`` is the prompt's user-message UUID."""

    turn_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiRetry:
    """``system``/``api_retry``: the CLI is retrying an API call (``error_status`` None: no response)."""

    attempt: object = None
    max_retries: object = None
    error_status: int | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Assistant:
    """A top-level or subagent assistant message, reduced to what the lifecycle needs."""

    text: str
    model: str | None
    error: str | None = None
    top_level: bool = True
    uuid: str | None = None
    #: the refusal explanation of a refused response (``stop_reason: refusal``, ``stop_details``)
    refusal: str | None = None
    #: the text already reached the client as streamed partial messages: classify it, never
    #: forward it again
    shown: bool = False

    @property
    def synthetic(self) -> bool:
        """CLI-authored text (errors, limits, local commands), not a model answer."""
        return self.model == "<synthetic>"


@dataclass(frozen=True, slots=True, kw_only=True)
class MessagesReplaced:
    """The provider replaced earlier messages of the turn (Claude Code 2.1.337's ``supersedes``,
    after a refusal fallback or after a response whose tool call could not be parsed): ``uuids``
    names them. It comes just before the message that replaces them. If one of them carried the
    failure the turn holds (its :attr:`Assistant.uuid`), that failure is superseded: the turn
    no longer settles with it (:class:`lifecycle.session_flow.SessionFlow`'s ``failure_replaced``).
    Naming other messages changes nothing."""

    uuids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Result:
    """The turn's ``result`` message."""

    subtype: str | None
    is_error: bool
    result: str | None = None
    errors: tuple[str, ...] = ()
    api_error_status: int | None = None
    stop_reason: str | None = None
    terminal_reason: str | None = None
    #: why Claude Code could not start (``startup_failure_reason``, written with
    #: ``CLAUDE_CODE_STARTUP_FAILURE_RESULTS=1`` before it exits): a start-up failure
    startup_failure: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelFallback:
    """``system``/``model_fallback``: ``content`` is the exact user-facing notice."""

    content: str


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerNotStarted:
    """A client's MCP server that Claude Code did not start (``init``'s ``mcp_servers``: ``failed``
    or ``needs-auth``), observed by the adapter; ``content`` is the notice it shows (the title, then
    a sentence). Not part of a turn: the turn runs on without the server's tools."""

    content: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRefusalFallback:
    """``system``/``model_refusal_fallback``: the model declined and Claude retried with another.

    ``direction`` ``revert`` (older CLIs) and ``scope`` ``local`` keep the session on the original
    model; ``category`` and ``explanation`` are the API's refusal category and explanation.
    """

    original_model: str
    fallback_model: str
    direction: str | None = None
    scope: str | None = None
    category: str | None = None
    explanation: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRefusalNoFallback:
    """``system``/``model_refusal_no_fallback``: the model declined and nothing retried it.

    Publishes nothing; ``explanation`` is shown if the turn then ends with ``stop_reason:
    refusal`` and the refused response itself carried none.
    """

    explanation: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Informational:
    """``system``/``informational``: a free-form notice from Claude Code (e.g. why a hook blocked a
    turn, a safeguard note). ``level`` is ``info``, ``notice``, ``suggestion`` or ``warning``."""

    content: str
    level: str | None = None
    tool_use_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerShuttingDown:
    """``system``/``worker_shutting_down``: the Claude worker announced shutdown."""

    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AuthStatus:
    """``auth_status`` or an ACP ``authenticate`` finished; ``ok`` means authenticated."""

    ok: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryError:
    """The SDK query iterator threw. ``message`` is raw exception text: never shown, never logged."""

    message: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryEnded:
    """The SDK query iterator ended (EOF)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Cancelled:
    """The client sent ``session/cancel`` for the running prompt."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeReplaced:
    """The adapter replaced the Claude runtime (a new query / worker)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class InternalError:
    """The adapter itself failed while running the prompt (an internal invariant broke)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionAsked:
    """Claude Code asks whether a tool use may run (its ``can_use_tool`` callback); the agent asks
    the client (ACP ``session/request_permission``) only if the ledger opens the question
    (:meth:`lifecycle.ledger.SessionLedger.question_open`). ``tool_use_id``: a non-empty string."""

    tool_use_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionAnswered:
    """The question about ``tool_use_id`` is over: the client answered, or the agent stopped
    waiting. Whether the answer may be honoured is whether the question was still open."""

    tool_use_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryEntry:
    """One stored message of a session's history, oldest first.

    ``prompt`` marks a top-level user message typed by the user (not a tool result or meta
    message): its uuid is the live turn id of what follows.
    """

    role: Literal["user", "assistant"]
    uuid: str | None
    text: str
    model: str | None = None
    top_level: bool = True
    prompt: bool = False

    @property
    def synthetic(self) -> bool:
        return self.model == "<synthetic>"


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryLoaded:
    """``session/load``: replay this history into the freshly opened session."""

    entries: tuple[HistoryEntry, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildRetry:
    """An ``api_retry`` of a subagent (a child session, issue 51.2), fed to the child's own
    ledger: a warning on the child's session, never the parent turn's. Fields as
    :class:`ApiRetry`'s."""

    attempt: object = None
    max_retries: object = None
    error_status: int | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildEnded:
    """A subagent's work ended (a child session, issue 51.2), fed to the child's own ledger.

    ``status``: ``completed``, ``failed``, ``cancelled`` (Claude Code's ``killed``/``stopped``),
    or ``unexplained`` (the child stopped with its runtime or its parent session: nothing says it
    failed). ``error``: Claude Code's text for a failed one (its task's ``error``), None if it gave
    none. Only ``failed`` is a failure: a cancelled child is not one.
    """

    status: Literal["completed", "failed", "cancelled", "unexplained"]
    error: str | None = None


#: How many windows one reading reports (:func:`lifecycle.claude.unified_windows`, the event's own
#: first) and how many a ledger remembers (issue 52.5: one bound, so that one event never evicts a
#: window it is about to report again; Claude Code names five).
MAX_WINDOWS = 16


@dataclass(frozen=True, slots=True, kw_only=True)
class RateLimitWindow:
    """A ``rate_limit_event``: the state of one usage-limit window as Claude Code reports it.

    Claude Code prints one when the state it derives from the API's unified rate-limit headers
    changes (never for an identical state). ``window`` is its ``rateLimitType`` (``five_hour``,
    ``seven_day``, ``seven_day_opus``, ``seven_day_sonnet``, ``overage``, ...; None: it named
    none); ``status`` is ``allowed``, ``allowed_warning`` or ``rejected`` (None only for another
    window read from the event's ``unifiedWindows`` with no status of its own:
    :func:`lifecycle.claude.unified_windows`); ``utilization`` the
    share used, 0 to 1 (None: not sent, or not a number in that range); ``resets_at`` when the
    window resets, Unix seconds (None: not sent, or not a plausible time); ``raw`` the
    ``rate_limit_info`` object exactly as Claude Code sent it (camelCase keys); ``observed_at``
    when the embedder read it, Unix seconds (None: not known, as in a recorded trace), the only
    clock the core sees: a reading whose reset is already past then is of a period that is over
    (the ledger ends the window's warning; issue 52.5).

    The ledger judges it at any time (it is the session's, never a turn's): a window in
    ``allowed_warning`` or ``rejected`` is a session-scoped warning of its own, ended silently by
    the window's return to ``allowed`` or by a later reset time (issue 32); the agent also shows it
    as data (:mod:`lifecycle.agent.translate`).
    """

    window: str | None
    status: str | None
    utilization: float | None = None
    resets_at: int | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, hash=False)
    observed_at: int | None = None


# ---------------------------------------------------------------- provider-neutral events
# What any ACP agent reports, in no provider's words (issue 53.3): the proxy's edge
# (:mod:`lifecycle.proxy.relay`) translates an agent's ACP frames into these, its family table
# (:mod:`lifecycle.families`) naming the category and actions. They move the same turn machine as
# Claude Code's events (``real_answer``, ``api_retry``, ``result_*``, ``transport_lost``).


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentFailure:
    """A failure as an agent reported it: ``key`` names its family's row (for logs, never shown),
    ``category`` and ``actions`` are that row's (spec: "Categories", "Actions"), ``words`` the
    agent's own user-facing words (the title, after :func:`lifecycle.titles.present`; "" when it
    gave none) and ``fallback`` the adapter's words used only then (spec: "Adapter-authored
    fallback text is allowed only when no ... user-facing message exists")."""

    key: str
    category: Category
    actions: tuple[Action, ...]
    fallback: str
    words: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentAnswered:
    """The agent showed a real answer (its own text) in the session: what recovers failures that
    wait for one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentRetrying:
    """The agent reports that it retries the turn's request: a warning on the turn's failure id
    (spec: "Severity"), updated in place by the next report and by the turn's failure. ``words``
    is its own report (the title); ``category`` its family's for what is retried."""

    words: str
    category: Category = Category.SERVICE


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentTurnEnded:
    """The agent answered the turn's ``session/prompt``: ``stop_reason`` is the ACP stop reason it
    gave (``end_turn`` for a JSON-RPC error), ``failure`` what failed (None: nothing did). A
    failure with ``end_turn`` is the turn's failure (the record rides the ``PromptResponse``); one
    with another stop reason (``refusal``, ``max_tokens``, ...) keeps that stop reason and carries
    the record beside it."""

    stop_reason: str
    failure: AgentFailure | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentExited:
    """The agent process ended (spec: "Lost transport"): a running turn settles with ``failure``
    (its family's ``connection`` row), outside a turn it is a session-scoped failure."""

    failure: AgentFailure


Event = (
    PromptStarted
    | ApiRetry
    | Assistant
    | Result
    | ModelFallback
    | McpServerNotStarted
    | ModelRefusalFallback
    | ModelRefusalNoFallback
    | Informational
    | WorkerShuttingDown
    | AuthStatus
    | QueryError
    | QueryEnded
    | Cancelled
    | RuntimeReplaced
    | InternalError
    | HistoryLoaded
    | PermissionAsked
    | PermissionAnswered
    | RateLimitWindow
    | MessagesReplaced
    | ChildRetry
    | ChildEnded
    | AgentAnswered
    | AgentRetrying
    | AgentTurnEnded
    | AgentExited
)


# ---------------------------------------------------------------- outbound


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionUpdateOut:
    """A ``session/update`` notification (``update`` is the ACP update object).

    A typed record is carried as ``record`` only; it is attached to the update's ``_meta`` when the
    message is put on the wire (:meth:`meta`, :meth:`to_jsonrpc`), so it exists in one place.
    """

    session_id: str
    update: dict[str, Any]
    record: SessionFailure | None = None

    def meta(self, extra: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
        """The update's ``_meta``: ``extra`` with the record attached (None: no record, no extra)."""
        return _meta(self.record, extra)

    def wire_update(self) -> dict[str, Any]:
        """The ``update`` object as sent: with the record attached to its ``_meta``."""
        if self.record is None:
            return self.update
        return {**self.update, "_meta": self.meta(self.update.get("_meta"))}

    def to_jsonrpc(self) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": self.session_id, "update": self.wire_update()},
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptResponseOut:
    """The successful ``session/prompt`` result (a turn-terminal record rides in its ``_meta``)."""

    turn_id: str
    stop_reason: str
    record: SessionFailure | None = None
    #: the ledger's own ``_meta`` keys beside the record (``rateLimits``: the window that refused
    #: the turn, issue 52.2); never the record's place
    extra_meta: Mapping[str, Any] | None = None

    def meta(self, extra: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
        """The response's ``_meta``: ``extra`` and :attr:`extra_meta` with the record attached
        (None: no record, no extra)."""
        if self.extra_meta:
            extra = {**(extra or {}), **self.extra_meta}
        return _meta(self.record, extra)

    def to_jsonrpc(self) -> dict[str, Any]:
        result: dict[str, Any] = {"stopReason": self.stop_reason}
        meta = self.meta()
        if meta is not None:
            result["_meta"] = meta
        return {"jsonrpc": "2.0", "id": self.turn_id, "result": result}


def _meta(record: SessionFailure | None, extra: Mapping[str, Any] | None) -> dict[str, Any] | None:
    # The one place an outbound message's record meets its carrier's ``_meta``.
    if record is not None:
        return attach_record(extra, record)
    return dict(extra) if extra else None


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptErrorOut:
    """The legacy JSON-RPC error that settles a failed prompt for a client without the extension."""

    turn_id: str
    code: int
    message: str
    data: dict[str, Any] | None = None
    record: None = None

    def to_jsonrpc(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return {"jsonrpc": "2.0", "id": self.turn_id, "error": error}


Outbound = SessionUpdateOut | PromptResponseOut | PromptErrorOut


def mask_texts(out: Outbound, mask: Callable[[str], str]) -> Outbound:
    """``out`` with ``mask`` applied to every text a client reads in it: a record's title and
    details, a forwarded text chunk, an ACP notice's title and description, a legacy error's
    message and string data. Ids, kinds and the rest are left as they are.

    The ACP edge and ``lifecycle trace`` pass :meth:`lifecycle.redaction.SecretMemory.mask`, so
    credentials are masked in every text the adapter emits, legacy prose included.
    """
    if isinstance(out, PromptErrorOut):
        data = out.data
        if data is not None:
            data = {k: mask(v) if isinstance(v, str) else v for k, v in data.items()}
        return replace(out, message=mask(out.message), data=data)
    record = out.record
    if record is not None:
        details = mask(record.details) if record.details is not None else None
        record = record.model_copy(update={"title": mask(record.title), "details": details})
    if isinstance(out, PromptResponseOut):
        return replace(out, record=record)
    update = out.update
    content = update.get("content")
    if isinstance(content, Mapping) and isinstance(content.get("text"), str):
        update = {**update, "content": {**content, "text": mask(content["text"])}}
    if update.get("sessionUpdate") == "notice":
        update = {k: mask(v) if k in ("title", "description") and isinstance(v, str) else v for k, v in update.items()}
    return replace(out, update=update, record=record)
