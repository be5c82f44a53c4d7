"""ACP glue: the few typed helpers an existing Python ACP agent calls to embed the ledger.

Needs the ``acp`` extra (``agent-client-protocol``); nothing in the core imports this module.

Rules
-----
* Negotiation reads the ``initialize`` request's ``ClientCapabilities`` (its ``_meta`` is the
  model's ``field_meta``); it never raises (:func:`negotiate_client`).
* ``_meta`` is merged, never replaced: a record is attached beside whatever else an agent already
  carries there (a ``quota`` key, another vendor's namespace). Models are rebuilt from their
  by-alias dump, so unknown ``_meta`` keys survive the SDK's pydantic models.
* :class:`SessionPublisher` is the ledger's plan -> deliver -> commit loop over an ACP connection:
  ``feed`` plans, each planned message is sent, then ``delivered``/``delivery_failed`` is
  reported. A send that raises commits nothing, so the next qualifying event republishes with no
  revision gap. One ``asyncio.Lock`` per session serialises every feeder (SDK consumer, auth
  watcher, replay) from ``feed`` to the last send.
* The outcome of a prompt comes from the ledger, never from the agent: a ``PromptResponseOut``
  becomes the :class:`acp.schema.PromptResponse` the handler returns, a ``PromptErrorOut`` the
  :class:`acp.RequestError` it raises (:meth:`SessionPublisher.outcome`).
* No credential reaches the client in prose, capable or legacy: every text the publisher sends
  (transcript prose, a record's title and details, a legacy error's message and data; not a tool
  card, which is verbatim: :data:`VERBATIM_UPDATES`) goes through the
  session's :class:`lifecycle.redaction.SecretMemory`: its credentials are masked
  (:func:`lifecycle.redaction.mask_credentials`; the rest of the prose stays byte for byte), and
  so is every secret an earlier text of the session revealed (a password found in a URL of
  Claude's message is masked in the error that follows it too).
* An ACP standard ``notice`` update (``{"sessionUpdate": "notice", "severity", "title",
  "description"?}``, planned for a client that declared ``clientCapabilities.session.notices``)
  is newer than the ACP SDK's schema, whose models reject it. It alone is checked against
  :class:`AcpNotice` (severity ``info``/``warning``/``error``, a string title, an optional string
  description, nothing else) and sent as a raw ``session/update`` notification through the
  connection's lower-level ``send_notification`` (:func:`notice_update`); every other update keeps
  the SDK's full validation (:func:`acp_update`). Its title and description are masked too.
  A ``compaction_update`` (``{"sessionUpdate": "compaction_update", "compactionId", "status",
  "error"?}``, shown by the agent to a client that declared ``clientCapabilities.session.compaction``:
  :mod:`lifecycle.agent.compaction`) is newer than the SDK too: checked against
  :class:`AcpCompactionUpdate` and sent the same raw way. So is a ``subagent_update`` (a child
  session's announcement and state, for a client that declared ``clientCapabilities.subagents``:
  :mod:`lifecycle.agent.subagents`), checked against :class:`AcpSubagentUpdate`.
* A step's updates may go to another session than the ledger's (:meth:`SessionPublisher.emit`'s
  ``session_id``: a child session's tool calls and text); its event is still the ledger's.

Awkwardness, admitted: a ``PromptResponse`` is not sent by the publisher but returned by the
agent's ``prompt`` handler. It counts as delivered when it is handed to a handler still waiting
for it; if that handler is gone (cancelled), it counts as failed.

Embedding takes a handful of lines (``examples/embed_acp.py`` is the tested version)::

    negotiated = negotiate_client(client_capabilities)            # in initialize
    caps = advertise(AgentCapabilities(load_session=True), negotiated)
    pub = SessionPublisher(conn, SessionLedger(sid, negotiated=negotiated, epoch=new_epoch()))
    await pub.feed(PromptStarted(turn_id))                         # in prompt
    ...  # await pub.feed(from_sdk_message(msg)) for every message
    return await pub.outcome(turn_id)
"""

from __future__ import annotations

import asyncio
import copy
import secrets
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal, Protocol

from acp import RequestError
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    PromptResponse,
    SessionInfoUpdate,
    SessionNotification,
)
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from ..events import Event, Outbound, PromptErrorOut, PromptResponseOut, PromptStarted, SessionUpdateOut, mask_texts
from ..ledger import SessionLedger
from ..negotiation import agent_capabilities_meta, negotiate
from ..redaction import VERBATIM_UPDATES, SecretMemory
from ..wire import SessionFailure, attach_record

__all__ = [
    "COMPACTION_UPDATE",
    "NOTICE_UPDATE",
    "PLAN_UPDATE",
    "SUBAGENT_UPDATE",
    "VERBATIM_UPDATES",
    "AcpCompactionUpdate",
    "AcpNotice",
    "AcpPlanUpdate",
    "AcpSubagentUpdate",
    "NotificationSink",
    "SessionPublisher",
    "UpdateSink",
    "acp_update",
    "advertise",
    "attach_to_response",
    "merge_meta",
    "negotiate_client",
    "new_epoch",
    "notice_update",
    "prompt_error",
    "prompt_response",
    "session_info_update",
    "with_meta",
]


class UpdateSink(Protocol):
    """What the publisher sends through: ``acp.agent.connection.AgentSideConnection`` fits."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None: ...


class NotificationSink(Protocol):
    """A raw JSON-RPC notification sender: ``acp.connection.Connection`` fits (an
    ``AgentSideConnection`` holds one as ``_conn``). Used for updates the SDK's schema lacks."""

    async def send_notification(self, method: str, params: Any = None) -> None: ...


#: The ``sessionUpdate`` of an ACP standard notice (newer than the ACP SDK's schema).
NOTICE_UPDATE = "notice"
#: The ``sessionUpdate`` of a context compaction's state (newer than the ACP SDK's schema).
COMPACTION_UPDATE = "compaction_update"
#: The ``sessionUpdate`` of a Markdown plan (ACP plan operations; newer than the ACP SDK's schema).
PLAN_UPDATE = "plan_update"
#: A child session's announcement and state (ACP ``SubagentUpdate``; :mod:`lifecycle.agent.subagents`).
SUBAGENT_UPDATE = "subagent_update"

_SESSION_UPDATE_METHOD = "session/update"


# ------------------------------------------------------------------ negotiation


def negotiate_client(client_capabilities: ClientCapabilities | Mapping[str, Any] | None) -> bool:
    """True when the ``initialize`` request's client capabilities negotiate ``sessionFailure``.

    Accepts the SDK model (``_meta`` is ``field_meta``), the raw JSON object, or None (legacy).
    Never raises.
    """
    if client_capabilities is None:
        return False
    return negotiate(client_capabilities)


def advertise(capabilities: AgentCapabilities | None, negotiated: bool) -> AgentCapabilities:
    """``capabilities`` with ``sessionFailure`` advertised under ``_meta.jetbrains.air`` when
    ``negotiated``; every field and ``_meta`` key already set is kept.

    Args:
        capabilities: the agent's own capabilities (None: the SDK defaults).
        negotiated: the result of :func:`negotiate_client`; False advertises nothing new.

    Returns:
        A new model; fields that were set explicitly stay explicitly set (so they are sent).
    """
    base = capabilities if capabilities is not None else AgentCapabilities()
    data = base.model_dump(by_alias=True, exclude_unset=True)
    extension = agent_capabilities_meta(negotiated)
    if extension:
        data["_meta"] = merge_meta(data.get("_meta"), extension)
    return AgentCapabilities.model_validate(data)


def new_epoch() -> str:
    """A random epoch token for one adapter session (``session/new`` or ``session/load``)."""
    return secrets.token_hex(8)


# ------------------------------------------------------------------ _meta


def merge_meta(base: Mapping[str, Any] | None, extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """A deep copy of ``base`` with ``extra`` merged in.

    Objects merge key by key at every level; for any other value ``extra`` wins, except two
    lists, which are united in order (so ``capabilities`` arrays keep both sides' entries).
    """
    out: dict[str, Any] = copy.deepcopy(dict(base)) if base else {}
    for key, value in (extra or {}).items():
        current = out.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            out[key] = merge_meta(current, value)
        elif isinstance(current, list) and isinstance(value, list):
            out[key] = current + [copy.deepcopy(v) for v in value if v not in current]
        else:
            out[key] = copy.deepcopy(value)
    return out


def _rebuild_response(response: PromptResponse, **fields: Any) -> PromptResponse:
    # Rebuilt from the by-alias dump (exclude_unset) so what was set stays set -- the SDK sends
    # responses with ``exclude_unset`` -- and unknown ``_meta`` keys are carried over.
    data = response.model_dump(by_alias=True, exclude_unset=True)
    data.update(fields)
    return PromptResponse.model_validate(data)


def attach_to_response(response: PromptResponse | None, record: SessionFailure) -> PromptResponse:
    """``response`` carrying ``record`` (spec: "Delivery surfaces"): ``stopReason: end_turn`` and
    the record at ``_meta.jetbrains.air.sessionFailure``; other ``_meta`` keys are kept."""
    if response is None:
        return PromptResponse(stop_reason="end_turn", field_meta=attach_record(None, record))
    return _rebuild_response(response, stopReason="end_turn", _meta=attach_record(response.field_meta, record))


def with_meta(response: PromptResponse, meta: Mapping[str, Any]) -> PromptResponse:
    """``response`` with the agent's own ``meta`` (e.g. ``{"quota": ...}``) merged into ``_meta``.

    A record already attached stays: the agent's keys never replace ``jetbrains.air``.
    """
    current = response.field_meta or {}
    merged = merge_meta(meta, current)  # the response's own keys (the record) win
    return _rebuild_response(response, _meta=merged)


def prompt_response(
    out: PromptResponseOut, *, meta: Mapping[str, Any] | None = None, usage: Mapping[str, int] | None = None
) -> PromptResponse:
    """The ``PromptResponse`` a handler returns for the ledger's ``out``.

    Args:
        out: the ledger's settlement of the turn.
        meta: the agent's own ``_meta`` for the response (kept beside a record).
        usage: the turn's token counts (ACP ``Usage``: ``totalTokens``, ``inputTokens``, ...).
    """
    combined = out.meta(meta)
    # ``stopReason`` is validated by the SDK model (the ledger only plans ACP stop reasons).
    data: dict[str, Any] = {"stopReason": out.stop_reason}
    if usage is not None:
        data["usage"] = dict(usage)
    if combined is not None:
        data["_meta"] = combined
    return PromptResponse.model_validate(data)


class LegacyError(RequestError):
    """A legacy JSON-RPC error exactly as the ledger planned it: without ``data`` when it has none
    (the SDK's ``RequestError`` always writes ``"data": null``; the reference adapter leaves it out,
    e.g. ``-32000 "Authentication required"``)."""

    def to_error_obj(self) -> dict[str, Any]:
        obj = super().to_error_obj()
        if obj.get("data") is None:
            obj.pop("data", None)
        return obj


def prompt_error(out: PromptErrorOut) -> RequestError:
    """The legacy JSON-RPC error (``-32603`` / ``-32000``) a handler raises for ``out``."""
    return LegacyError(out.code, out.message, out.data)


def session_info_update(record: SessionFailure, *, meta: Mapping[str, Any] | None = None) -> SessionInfoUpdate:
    """The ``session_info_update`` that carries ``record`` (``_meta`` merged with ``meta``)."""
    return SessionInfoUpdate(session_update="session_info_update", field_meta=attach_record(meta, record))


def acp_update(update: Mapping[str, Any]) -> Any:
    """The SDK model of one ``session/update`` ``update`` object (any ``sessionUpdate`` kind).

    Raises:
        pydantic.ValidationError: ``update`` is not a valid ACP update.
    """
    # Validated through the notification so the SDK's own discriminated union picks the model.
    return SessionNotification.model_validate({"sessionId": "-", "update": dict(update)}).update


class AcpNotice(BaseModel):
    """An ACP standard ``notice`` update, the one update kind the ACP SDK's models lack.

    Strict: ``severity`` is ``info``, ``warning`` or ``error``; ``title`` a string;
    ``description`` an optional string; ``_meta`` an optional object; no other key.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    session_update: Literal["notice"] = Field(alias="sessionUpdate")
    severity: Literal["info", "warning", "error"]
    title: StrictStr
    description: StrictStr | None = None
    field_meta: dict[str, Any] | None = Field(default=None, alias="_meta")

    def to_wire(self) -> dict[str, Any]:
        """The ``update`` object as sent (absent optional fields are left out, not ``null``)."""
        return self.model_dump(by_alias=True, exclude_none=True)


class AcpSummaryText(BaseModel):
    """One text block of a compaction's ``summary``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["text"]
    text: StrictStr


class AcpCompactionUpdate(BaseModel):
    """A ``compaction_update`` (the reference adapter 0.101.0's ``context-compaction.js``): the
    compaction's id, its status (``in_progress``, ``completed``, ``failed``, ``cancelled``), the
    summary of a completed one (text blocks), the error of a failed one; nothing else."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    session_update: Literal["compaction_update"] = Field(alias="sessionUpdate")
    compaction_id: StrictStr = Field(alias="compactionId")
    status: Literal["in_progress", "completed", "failed", "cancelled"]
    summary: list[AcpSummaryText] | None = None
    error: StrictStr | None = None
    field_meta: dict[str, Any] | None = Field(default=None, alias="_meta")

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True)


class AcpSubagentError(BaseModel):
    """The JSON-RPC error object of a child whose work failed (``data``: what a legacy client's
    prompt error carries for the same condition, :func:`lifecycle.children.child_error`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    code: StrictInt
    message: StrictStr
    data: dict[str, Any] | None = None


class AcpSubagentState(BaseModel):
    """A child's work state (ACP ``SessionWorkState``): ``running``, ``requires_action``,
    ``idle`` (with its ``stopReason``, and the ``error`` of a failed one) or ``unknown``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    state: Literal["running", "requires_action", "idle", "unknown"]
    stop_reason: Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"] | None = Field(
        default=None, alias="stopReason"
    )
    error: AcpSubagentError | None = None


class AcpSubagentCapabilities(BaseModel):
    """What the client may do to a child (ACP ``SubagentSessionCapabilities``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cancel: dict[str, Any] | None = None


class AcpSubagentUpdate(BaseModel):
    """A ``subagent_update`` on the parent session: ACP's ``SubagentUpdate`` (unstable; the shape
    of the ACP schema the reference adapter 0.101.0 bundles, ``@agentclientprotocol/sdk`` 2.4.0
    ``schema/v1/schema.unstable.json``; the Python ACP SDK 0.12.1 predates it). The child's
    ``sessionId`` is required; ``title``, ``description``, ``capabilities``, ``state`` optional
    (absent: unchanged); nothing else."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    session_update: Literal["subagent_update"] = Field(alias="sessionUpdate")
    session_id: StrictStr = Field(alias="sessionId", min_length=1)
    title: StrictStr | None = None
    description: StrictStr | None = None
    capabilities: AcpSubagentCapabilities | None = None
    state: AcpSubagentState | None = None
    field_meta: dict[str, Any] | None = Field(default=None, alias="_meta")

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True)


class AcpMarkdownPlan(BaseModel):
    """The ``plan`` of a ``plan_update``: a Markdown plan and its id."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    type: Literal["markdown"]
    plan_id: StrictStr = Field(alias="planId")
    content: StrictStr


class AcpPlanUpdate(BaseModel):
    """A ``plan_update`` (the reference adapter 0.101.0's ``exit-plan.js`` ``planModeUpdate``):
    the plan Claude had approved, as Markdown."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    session_update: Literal["plan_update"] = Field(alias="sessionUpdate")
    plan: AcpMarkdownPlan
    field_meta: dict[str, Any] | None = Field(default=None, alias="_meta")

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True)


#: The updates newer than the ACP SDK's schema that the publisher sends raw, each checked by its model
#: (a ``notice`` is the ledger's: :meth:`SessionPublisher._deliver`).
_RAW_UPDATES: dict[object, type[AcpCompactionUpdate] | type[AcpPlanUpdate] | type[AcpSubagentUpdate]] = {
    COMPACTION_UPDATE: AcpCompactionUpdate,
    PLAN_UPDATE: AcpPlanUpdate,
    SUBAGENT_UPDATE: AcpSubagentUpdate,
}


def notice_update(update: Mapping[str, Any]) -> AcpNotice:
    """The checked model of one ACP ``notice`` update.

    Raises:
        pydantic.ValidationError: ``update`` is not a well-formed notice.
    """
    return AcpNotice.model_validate(dict(update))


def _notification_sink(conn: object) -> NotificationSink:
    """The raw sender behind ``conn``: ``conn`` itself when it can send notifications, else the
    ``acp.connection.Connection`` an ``AgentSideConnection`` keeps (through the seam to the SDKs'
    private parts, :func:`lifecycle.agent.sdk.notification_sink`)."""
    from ..agent.sdk import notification_sink

    return notification_sink(conn)


# ------------------------------------------------------------------ the publisher


# Keys whose strings are protocol structure or ids, never text to mask.
_STRUCTURAL_KEYS = frozenset({"sessionUpdate", "type", "toolCallId", "status", "kind", "currency", "priority"})


def _mask_strings(value: Any, mask: Callable[[str], str], key: str | None = None) -> Any:
    if isinstance(value, str):
        return value if key in _STRUCTURAL_KEYS else mask(value)
    if isinstance(value, Mapping):
        return {k: _mask_strings(v, mask, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_strings(v, mask) for v in value]
    return value


class _Undeliverable(Exception):
    """A prompt settlement with no handler waiting for it."""


class SessionPublisher:
    """Sends one session's planned messages through an ACP connection.

    Args:
        conn: the agent's connection (anything with ``session_update``, see :class:`UpdateSink`).
        ledger: the session's ledger.
        response_meta: the agent's own ``_meta`` for every ``PromptResponse`` (e.g. a quota
            report); merged, never replacing a record.

    Every :meth:`feed` holds the session's lock from the ledger's ``feed`` to the last send, so
    concurrent feeders never interleave and revisions reach the client in order.
    """

    __slots__ = ("_conn", "_ledger", "_lock", "_response_meta", "_secrets", "_turns", "failed_sends")

    def __init__(
        self,
        conn: UpdateSink,
        ledger: SessionLedger,
        *,
        response_meta: Mapping[str, Any] | None = None,
    ) -> None:
        self._conn = conn
        self._ledger = ledger
        self._lock = asyncio.Lock()
        self._response_meta = dict(response_meta) if response_meta else None
        self._turns: dict[str, asyncio.Future[PromptResponseOut]] = {}
        self._secrets = SecretMemory()
        #: how many planned sends failed (their content was not committed)
        self.failed_sends = 0

    @property
    def ledger(self) -> SessionLedger:
        return self._ledger

    @property
    def session_id(self) -> str:
        return self._ledger.session_id

    async def feed(self, event: Event, *, runtime: int | None = None) -> bool:
        """Feed ``event`` to the ledger and send what it planned, in order.

        Args:
            event: the lifecycle event.
            runtime: the generation of the runtime that produced an SDK event (stale ones are
                refused by the ledger).

        Returns:
            False when the ledger refused the event (a stale runtime).

        Raises:
            lifecycle.errors.LocalProtocolError: the ledger rejected the event (e.g. a second
                concurrent prompt); nothing was planned.
        """
        async with self._lock:
            return await self._feed(event, runtime)

    def hold(self) -> AbstractAsyncContextManager[None]:
        """The session's lock, for a caller whose own reply must go out before anything the
        publisher sends (a ``session/new`` answer before the updates its start causes)."""
        return self._lock

    async def emit(
        self,
        updates: Iterable[Mapping[str, Any]],
        event: Event | None = None,
        *,
        runtime: int | None = None,
        session_id: str | None = None,
    ) -> bool:
        """One step of a message: its transcript ``updates`` (as :meth:`show`), then its ``event``
        (as :meth:`feed`), under one hold of the session's lock, so no other feeder's sends come
        between a message's updates and its records. ``session_id``: the session the updates go
        to, when not this one (a child session: :mod:`lifecycle.agent.subagents`); the event is
        this session's ledger's whatever the updates' session.

        Returns:
            What :meth:`feed` returns for ``event``; False when there is none.
        """
        async with self._lock:
            await self._show(updates, session_id)
            return await self._feed(event, runtime) if event is not None else False

    async def _feed(self, event: Event, runtime: int | None) -> bool:
        if isinstance(event, PromptStarted):
            # Registered first so the settlement always finds its waiter.
            self._turns[event.turn_id] = asyncio.get_running_loop().create_future()
            try:
                accepted = self._ledger.feed(event, runtime=runtime)
            except BaseException:
                self._turns.pop(event.turn_id, None)
                raise
        else:
            accepted = self._ledger.feed(event, runtime=runtime)
        await self._drain()
        return accepted

    async def show(self, updates: Iterable[Mapping[str, Any]]) -> int:
        """Send transcript updates the ledger does not plan (streamed chunks, tool calls and
        their results, a plan, usage), in order, under the session's lock (so they never
        interleave with a record's send).

        Each is validated by the SDK's models and its texts are masked like the ledger's (the
        session's :class:`~lifecycle.redaction.SecretMemory`), except a tool card
        (:data:`VERBATIM_UPDATES`), which shows what runs and what Claude was sent verbatim.
        Nothing of the lifecycle depends on them: an update the SDK refuses, or a send that fails, is counted in
        :attr:`failed_sends` and dropped.

        Returns:
            How many updates were sent.
        """
        async with self._lock:
            return await self._show(updates)

    async def _show(self, updates: Iterable[Mapping[str, Any]], session_id: str | None = None) -> int:
        sent = 0
        target = session_id or self._ledger.session_id
        for update in updates:
            try:
                verbatim = update.get("sessionUpdate") in VERBATIM_UPDATES
                raw = _RAW_UPDATES.get(update.get("sessionUpdate"))
                if raw is not None:  # newer than the SDK's schema: our own model checks it
                    wire = raw.model_validate(_mask_strings(update, self._secrets.mask)).to_wire()
                    params = {"sessionId": target, "update": wire}
                    await _notification_sink(self._conn).send_notification(_SESSION_UPDATE_METHOD, params)
                    sent += 1
                    continue
                model = acp_update(dict(update) if verbatim else _mask_strings(update, self._secrets.mask))
                await self._conn.session_update(target, model)
            except asyncio.CancelledError:
                raise
            except Exception:
                self.failed_sends += 1
            else:
                sent += 1
        return sent

    async def outcome(self, turn_id: str, *, usage: Mapping[str, int] | None = None) -> PromptResponse:
        """Wait for the ledger to settle ``turn_id``; the handler's return value, built once, here.

        Args:
            usage: the turn's token counts (ACP ``Usage``), read when the turn is settled (a live
                mapping the agent keeps filling: the counts of every result before the settlement);
                left out when empty or all zero.

        Raises:
            acp.RequestError: the legacy JSON-RPC error the ledger settled the turn with.
            KeyError: no ``PromptStarted(turn_id)`` was fed through this publisher.
        """
        future = self._turns[turn_id]
        try:
            out = await future
        finally:
            self._turns.pop(turn_id, None)
        counts = dict(usage) if usage is not None and any(usage.values()) else None
        return prompt_response(out, meta=self._response_meta, usage=counts)

    # -------------------------------------------------------------- internals

    async def _drain(self) -> None:
        ledger = self._ledger
        while (out := ledger.next_outbound()) is not None:
            try:
                await self._deliver(out)
            except asyncio.CancelledError:
                # The feeder was cancelled mid-send: nothing it was sending is committed, and the
                # rest of the plan is reported failed too, so the ledger stays consistent.
                ledger.delivery_failed()
                self.failed_sends += 1
                while ledger.next_outbound() is not None:
                    ledger.delivery_failed()
                    self.failed_sends += 1
                raise
            except Exception:
                ledger.delivery_failed()
                self.failed_sends += 1
            else:
                ledger.delivered()

    def _masked(self, out: Outbound) -> Outbound:
        """``out`` with credentials (and secrets seen earlier in the session) masked in its texts."""
        return mask_texts(out, self._secrets.mask)

    async def _deliver(self, out: Outbound) -> None:
        out = self._masked(out)
        if isinstance(out, SessionUpdateOut):
            wire = out.wire_update()
            if wire.get("sessionUpdate") == NOTICE_UPDATE:
                # Checked by our own model, sent below the SDK's (which predate ``notice``).
                params = {"sessionId": out.session_id, "update": notice_update(wire).to_wire()}
                await _notification_sink(self._conn).send_notification(_SESSION_UPDATE_METHOD, params)
                return
            await self._conn.session_update(out.session_id, acp_update(wire))
            return
        future = self._turns.get(out.turn_id)
        if future is None or future.done():
            raise _Undeliverable(out.turn_id)
        if isinstance(out, PromptResponseOut):
            future.set_result(out)
        else:
            future.set_exception(prompt_error(out))
