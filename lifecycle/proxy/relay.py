"""The relay between an ACP client and an ACP agent, sans-I/O (issue 53.1, 53.2).

Rules:

* Lines in, lines out. :meth:`Relay.from_client` and :meth:`Relay.from_agent` take one line (the
  bytes between two newlines, without the newline) and return what to write where
  (:class:`ToAgent`, :class:`ToClient`) and what to report (:class:`Problem`); the I/O shell
  (:mod:`lifecycle.proxy.shell`) reads the pipes and does the writing. No clock, no file, no log.
* **Passthrough is byte for byte.** Until a client negotiated ``sessionFailure`` (spec: "Capability
  negotiation") and unless the agent itself advertises it, every line goes on exactly as it came:
  the same bytes, so the same JSON value. The relay reads each line once to keep its small state
  (which request was ``initialize`` and which a ``session/prompt``), never to rewrite it.
* **Records only for a capable client** of an agent that does not make them itself: a prompt's
  JSON-RPC error (other than a protocol error: :data:`lifecycle.families.PROTOCOL_ERRORS`)
  becomes the successful ``PromptResponse`` (``stopReason: end_turn``) carrying the
  record (spec: "Delivery surfaces"); a turn that ends ``refusal``, ``max_tokens`` or
  ``max_turn_requests`` keeps its stop reason and carries the record in the response's ``_meta``
  (the agent's answer stays authoritative: "An error record does not independently invent ACP
  lifecycle state"); the agent dying while prompts run answers each of them ``end_turn`` with a
  ``connection`` record offering ``new_session`` (:meth:`Relay.agent_exited`). The category and
  actions come from the agent's family table (:mod:`lifecycle.families`), the title from the
  agent's own words (:func:`lifecycle.families.agent_words`, then :func:`lifecycle.titles.present`).
* **One home for ids, revisions, carriers and recovery**: the relay keeps no incident state of its
  own. It translates what the agent reports into the core's provider-neutral events
  (:class:`~lifecycle.events.AgentAnswered`, :class:`~lifecycle.events.AgentTurnEnded`,
  :class:`~lifecycle.events.AgentExited`, with :class:`~lifecycle.events.PromptStarted` and
  :class:`~lifecycle.events.Cancelled` from the client) and feeds each session's
  :class:`~lifecycle.ledger.SessionLedger`, whose answers it composes with the agent's own
  frames: the record the ledger puts on a ``PromptResponse`` goes into the agent's answer (its
  stop reason and fields kept), a ``session_info_update`` goes before it. Each prompt gets a turn
  id from ``new_turn_id``, its failure ``<turnId>:error``; a session's failures end silently at
  the next real answer (agent text that is not one of its family's notices), as the ledger's
  turn machine decides; a cancelled turn makes no record.
* **Silent failures** (issue 53; docs/proxy.md): a turn the agent ends ``end_turn`` having shown
  nothing (no text, thought, tool call or plan; gemini-cli's SAFETY stop) is a record
  (:data:`lifecycle.families.EMPTY_TURN`); a family's own notice sent as agent text (codex-acp's
  "Model metadata ... not found") stays as it is and is no answer; a turn cut off at the token
  limit that the agent ends ``end_turn`` is, on the wire, an answer: no record.
* **Records survive ``session/load``**: the relay keeps what it published per session (the last
  revision of each id, at most :data:`MAX_KEPT`), each at its place: after the transcript of the
  prompt it belongs to. When the agent replays the session, each is sent again (same id, same
  revision: a client that has it ignores it) just before the replayed user message that follows
  its prompt, or before the load's answer.
* **Garbage never travels.** A line that is not UTF-8 JSON is not passed on: from the client it
  gets a JSON-RPC parse error back (``id: null``, as JSON-RPC 2.0 answers an unparsable request),
  from the agent it is dropped; both are reported as a :class:`Problem` (no text of the line).

What is not done yet (docs/proxy.md): the conductor's ``proxy/initialize``; records kept across
proxy processes (the keeping is in memory, per connection).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..air import air_of, with_air
from ..errors import LocalProtocolError
from ..families import (
    AGENT_EXITED,
    EMPTY_TURN,
    Family,
    agent_failure,
    agent_words,
    classify_agent_error,
    classify_stop_reason,
    family_of,
    is_notice,
    is_protocol_error,
)
from ..negotiation import CAPABILITY, agent_capabilities_meta, negotiate, version_is_supported

if TYPE_CHECKING:
    # The core's events, ledger and record (pydantic) load with the first record's bookkeeping: a
    # plain client's relay never needs them (workshop bench --only proxy measures it).
    from ..events import AgentFailure, Event, Outbound, PromptResponseOut
    from ..ledger import SessionLedger
    from ..wire import SessionFailure

__all__ = ["MAX_KEPT", "PARSE_ERROR", "Output", "Problem", "Relay", "ToAgent", "ToClient"]

#: JSON-RPC 2.0's code for an unparsable request
PARSE_ERROR = -32700
#: the most records the relay keeps per session for ``session/load`` (the oldest goes first): a
#: session that fails forever holds bounded memory
MAX_KEPT = 256
#: the updates that show the user something of the turn (a turn with none of them is silent)
_VISIBLE = frozenset(("agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"))
_INFO_UPDATE = {"sessionUpdate": "session_info_update"}
#: the most ``session/load`` requests waiting for their answer (a hostile client's are bounded)
_MAX_LOADS = 64


@dataclass(frozen=True, slots=True)
class ToAgent:
    """Write ``line`` (and a newline) to the agent's stdin."""

    line: bytes


@dataclass(frozen=True, slots=True)
class ToClient:
    """Write ``line`` (and a newline) to the client (the proxy's stdout)."""

    line: bytes


@dataclass(frozen=True, slots=True)
class Problem:
    """Something to report on stderr: which side, and what (never the line's text)."""

    side: Literal["client", "agent"]
    what: str


Output = ToAgent | ToClient | Problem


@dataclass(slots=True)
class _Prompt:
    session_id: str
    #: the ledger took its PromptStarted (False: a second concurrent prompt of the session, which
    #: the ledger refuses: its frames pass as they are)
    tracked: bool
    shown: bool = False  # the agent showed something of the turn (text, thought, tool call, plan)
    cancelled: bool = False  # the client cancelled it
    answered: bool = False  # ... and a real answer (AgentAnswered was fed)


@dataclass(slots=True)
class _Kept:
    """The records published in one session, for ``session/load``: id -> (place, last record);
    a place is the number of the prompt (1, 2, ...) whose transcript the record follows."""

    records: dict[str, tuple[int, SessionFailure]] = field(default_factory=dict)
    #: the content blocks of each prompt of the session so far (its replayed user message is as
    #: many chunks when the agent names no ``messageId``); the first :data:`MAX_KEPT` * 16
    blocks: list[int] = field(default_factory=list)

    @property
    def prompts(self) -> int:
        return len(self.blocks)

    def prompted(self, blocks: int) -> None:
        if len(self.blocks) < MAX_KEPT * 16:
            self.blocks.append(max(blocks, 1))

    def keep(self, record: SessionFailure) -> None:
        place = self.records.pop(record.id, (self.prompts, record))[0]
        self.records[record.id] = (place, record)  # a later revision keeps its first place
        while len(self.records) > MAX_KEPT:
            del self.records[next(iter(self.records))]


@dataclass(slots=True)
class _Replay:
    """A ``session/load`` under way: the user messages replayed so far and what is left to send."""

    session_id: str
    pending: list[tuple[int, SessionFailure]]
    blocks: list[int]
    prompts: int = 0
    in_user: bool = False
    message_id: object = None  # the current user message's ``messageId`` (None: not named)
    left: int = 0  # chunks still expected of the current user message (no ``messageId``)


def _key(request_id: object) -> str | None:
    # JSON-RPC ids are strings or numbers; 1 and "1" are different ids, so the key keeps the type.
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int, float)):
        return None
    return json.dumps(request_id)


def _dump(message: Mapping[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


def _parse(line: bytes) -> object:
    """The line's JSON value; raises ValueError (UnicodeDecodeError is one) when it has none."""
    return json.loads(line.decode("utf-8"))


def agent_advertises(result: object) -> bool:
    """The agent's ``initialize`` result advertises ``sessionFailure`` itself
    (``agentCapabilities._meta.jetbrains.air``: a supported version and the capability)."""
    caps = result.get("agentCapabilities") if isinstance(result, Mapping) else None
    air = air_of(caps.get("_meta")) if isinstance(caps, Mapping) else None
    if air is None or not version_is_supported(air.get("version")):
        return False
    listed = air.get("capabilities")
    return isinstance(listed, list) and CAPABILITY in listed


def _update_of(message: Mapping[str, Any]) -> tuple[object, Mapping[str, Any]] | None:
    """A ``session/update`` notification's session id and update, or None."""
    params = message.get("params")
    if message.get("method") != "session/update" or not isinstance(params, Mapping):
        return None
    update = params.get("update")
    return (params.get("sessionId"), update) if isinstance(update, Mapping) else None


class Relay:
    """One client-agent connection's relay state (see the module docstring).

    Args:
        command: the agent's command line, for its family when ``initialize`` names none.
        new_turn_id: a fresh, unique turn id for each prompt (a UUID in the shell).
        new_epoch: a fresh, unique epoch for each session's ledger (spec: "Session-scoped
            incidents use an adapter-session epoch"); ``new_turn_id`` by default.
    """

    def __init__(
        self, *, command: str = "", new_turn_id: Callable[[], str], new_epoch: Callable[[], str] | None = None
    ) -> None:
        self._command = command
        self._new_id = new_turn_id
        self._new_epoch = new_epoch or new_turn_id
        self._negotiated = False
        self._agent_capable = False
        self._initialize: str | None = None
        self._family: Family = family_of(None, command)
        self._prompts: dict[str, _Prompt] = {}
        self._ledgers: dict[str, SessionLedger] = {}
        self._kept: dict[str, _Kept] = {}
        self._loads: dict[str, _Replay] = {}  # a session/load's request key -> its replay

    # ------------------------------------------------------------------ views

    @property
    def records(self) -> bool:
        """Records are being made: the client negotiated and the agent does not make them itself."""
        return self._negotiated and not self._agent_capable

    @property
    def family(self) -> str:
        """The agent's family name (``unknown`` until recognised)."""
        return self._family.name

    def active(self, session_id: str) -> tuple[str, ...]:
        """The ids of the session's active incidents, oldest first (its ledger's)."""
        ledger = self._ledgers.get(session_id)
        return tuple(i.id for i in ledger.active) if ledger else ()

    def kept(self, session_id: str) -> tuple[SessionFailure, ...]:
        """The records kept for the session's ``session/load``, in the order they were first sent."""
        kept = self._kept.get(session_id)
        return tuple(r for _, r in kept.records.values()) if kept else ()

    # ------------------------------------------------------------------ client -> agent

    def from_client(self, line: bytes) -> list[Output]:
        """One line the client wrote."""
        try:
            message = _parse(line)
        except ValueError:
            error = {"code": PARSE_ERROR, "message": "Parse error: the proxy received a line that is not JSON"}
            return [
                Problem("client", "a line that is not UTF-8 JSON: answered with a parse error, not passed on"),
                ToClient(_dump({"jsonrpc": "2.0", "id": None, "error": error})),
            ]
        if isinstance(message, Mapping):
            self._client_message(message)
        return [ToAgent(line)]

    def _client_message(self, message: Mapping[str, Any]) -> None:
        method, key, params = message.get("method"), _key(message.get("id")), message.get("params")
        session_id = params.get("sessionId") if isinstance(params, Mapping) else None
        if method == "initialize" and key is not None:
            self._initialize = key
            caps = params.get("clientCapabilities") if isinstance(params, Mapping) else None
            self._negotiated = negotiate(caps)
        if not self.records or not isinstance(session_id, str):
            return
        from ..events import Cancelled, PromptStarted

        if method == "session/prompt" and key is not None:
            tracked = self._feed(session_id, PromptStarted(turn_id=self._new_id())) is not None
            self._prompts[key] = _Prompt(session_id, tracked)
            if tracked:
                blocks = params.get("prompt") if isinstance(params, Mapping) else None
                self._kept.setdefault(session_id, _Kept()).prompted(len(blocks) if isinstance(blocks, list) else 1)
        elif method == "session/cancel" and session_id in self._ledgers:
            for prompt in self._prompts.values():
                prompt.cancelled = prompt.cancelled or prompt.session_id == session_id
            self._feed(session_id, Cancelled())  # the agent answers the prompt itself
        elif method == "session/load" and key is not None:
            # A fresh ledger (a new epoch, spec: "Identity"); the kept records wait for the replay.
            self._ledgers.pop(session_id, None)
            kept = self._kept.get(session_id)
            self._loads[key] = _Replay(
                session_id, list(kept.records.values()) if kept else [], list(kept.blocks) if kept else []
            )
            while len(self._loads) > _MAX_LOADS:  # loads never answered: the oldest is let go
                del self._loads[next(iter(self._loads))]

    def _feed(self, session_id: str, event: Event) -> list[Outbound] | None:
        """Feed the session's ledger; what it sends (each kept), or None when it refused the event."""
        ledger = self._ledgers.get(session_id)
        if ledger is None:
            from ..ledger import SessionLedger

            ledger = self._ledgers[session_id] = SessionLedger(session_id, negotiated=True, epoch=self._new_epoch())
        try:
            ledger.feed(event)
        except LocalProtocolError:
            return None
        outs: list[Outbound] = []
        while (out := ledger.next_outbound()) is not None:
            ledger.delivered()
            outs.append(out)
            if out.record is not None:
                self._kept.setdefault(session_id, _Kept()).keep(out.record)
        return outs

    # ------------------------------------------------------------------ agent -> client

    def from_agent(self, line: bytes) -> list[Output]:
        """One line the agent wrote."""
        try:
            message = _parse(line)
        except ValueError:
            return [Problem("agent", "a line that is not UTF-8 JSON: dropped")]
        if not isinstance(message, Mapping):
            return [ToClient(line)]
        if "method" in message:
            return [*self._agent_notification(message), ToClient(line)]
        key = _key(message.get("id"))
        if key is not None and key == self._initialize:
            self._initialize = None
            return [ToClient(self._initialized(message, line))]
        replay = self._loads.pop(key, None) if key is not None else None
        if replay is not None:  # the load's answer: what is left of its records goes first
            loaded = "result" in message and self.records
            return [*(self._replayed(replay, len(replay.pending)) if loaded else []), ToClient(line)]
        prompt = self._prompts.pop(key, None) if key is not None else None
        if prompt is None or not prompt.tracked or not self.records:
            return [ToClient(line)]
        return self._settle(prompt, message, line)

    def _initialized(self, message: Mapping[str, Any], line: bytes) -> bytes:
        result = message.get("result")
        if isinstance(result, Mapping):
            info = result.get("agentInfo")
            name = info.get("name") if isinstance(info, Mapping) else None
            self._family = family_of(name, self._command)
            self._agent_capable = agent_advertises(result)
        if not self.records or not isinstance(result, Mapping):
            return line
        # The client negotiated and the agent does not advertise: the proxy advertises for it.
        caps = result.get("agentCapabilities")
        caps = dict(caps) if isinstance(caps, Mapping) else {}
        meta = caps.get("_meta")
        caps["_meta"] = with_air(meta if isinstance(meta, Mapping) else None, **_air_fields())
        return _dump({**message, "result": {**result, "agentCapabilities": caps}})

    def _agent_notification(self, message: Mapping[str, Any]) -> list[Output]:
        """What goes before the agent's notification (replayed records); notes what it shows."""
        found = _update_of(message) if self.records else None
        if found is None:
            return []
        session_id, update = found
        kind = update.get("sessionUpdate")
        for replay in self._loads.values():
            if replay.session_id == session_id:
                return self._replay_update(replay, kind, update.get("messageId"))
        if kind not in _VISIBLE or not isinstance(session_id, str):
            return []
        content = update.get("content")
        text = content.get("text") if isinstance(content, Mapping) else None
        real = kind == "agent_message_chunk" and isinstance(text, str) and bool(text.strip())
        if real and isinstance(text, str) and is_notice(self._family, text):
            return []  # the agent's own notice: neither an answer nor something the turn showed
        for prompt in self._prompts.values():
            if prompt.session_id == session_id and prompt.tracked:
                prompt.shown = True
                if real and not prompt.answered:
                    from ..events import AgentAnswered

                    prompt.answered = True
                    self._feed(session_id, AgentAnswered())  # recovery publishes nothing
        return []

    def _replay_update(self, replay: _Replay, kind: object, message_id: object) -> list[Output]:
        # A replayed user message starts the next prompt: the records of the prompts before it go
        # first. A user chunk continues the current message when it names the same messageId, or,
        # naming none, while the live prompt's blocks are not all replayed yet.
        if kind != "user_message_chunk":
            replay.in_user = False
            return []
        if replay.in_user and (
            message_id == replay.message_id if message_id is not None else replay.message_id is None and replay.left > 0
        ):
            replay.left -= 1
            return []
        replay.in_user, replay.message_id = True, message_id
        replay.prompts += 1
        blocks = replay.blocks[replay.prompts - 1] if replay.prompts <= len(replay.blocks) else 1
        replay.left = blocks - 1
        return self._replayed(replay, sum(1 for place, _ in replay.pending if place < replay.prompts))

    def _replayed(self, replay: _Replay, count: int) -> list[Output]:
        ready = sorted(replay.pending, key=lambda kept: kept[0])[:count]
        replay.pending = [kept for kept in replay.pending if kept not in ready]
        from ..events import SessionUpdateOut

        out: list[Output] = []
        for _, record in ready:
            update = SessionUpdateOut(session_id=replay.session_id, update=_INFO_UPDATE, record=record)
            out.append(ToClient(_dump(update.to_jsonrpc())))
        return out

    def _settle(self, prompt: _Prompt, message: Mapping[str, Any], line: bytes) -> list[Output]:
        """The agent answered a tracked prompt: the ledger's answer composed with the agent's."""
        from ..events import AgentTurnEnded

        error, result = message.get("error"), message.get("result")
        failure: AgentFailure | None = None
        if isinstance(error, Mapping) and not is_protocol_error(error.get("code")):
            words = agent_words(error.get("message"), error.get("data"))
            failure = agent_failure(classify_agent_error(self._family, error.get("code"), error.get("data")), words)
            stop: object = "end_turn"
        elif isinstance(result, Mapping) and isinstance(result.get("stopReason"), str):
            stop = result["stopReason"]
            cond = classify_stop_reason(stop)
            if cond is None and stop == "end_turn" and not prompt.shown:
                cond = EMPTY_TURN  # the agent ended the turn having shown nothing (silent failure)
            failure = agent_failure(cond) if cond is not None else None
        else:
            # A protocol error, or an answer without a stop reason: passed on; the turn is over.
            self._feed(prompt.session_id, AgentTurnEnded(stop_reason="cancelled"))
            return [ToClient(line)]
        outs = self._feed(prompt.session_id, AgentTurnEnded(stop_reason=str(stop), failure=failure)) or []
        return self._compose(outs, message, line)

    def _compose(self, outs: list[Outbound], message: Mapping[str, Any], line: bytes) -> list[Output]:
        from ..events import PromptResponseOut, SessionUpdateOut

        out: list[Output] = []
        answer = line
        for sent in outs:
            if isinstance(sent, SessionUpdateOut) and sent.record is not None:
                out.append(ToClient(_dump(sent.to_jsonrpc())))
            elif isinstance(sent, PromptResponseOut) and sent.record is not None:
                answer = _dump(_with_record(message, sent))
        return [*out, ToClient(answer)]

    # ------------------------------------------------------------------ the agent's end

    def agent_exited(self) -> list[Output]:
        """The agent's output ended (it exited): a capable client's prompts still running are
        answered ``end_turn`` with a ``connection`` record (a cancelled one ``cancelled``, and the
        loss is then a session-scoped record before it, as the ledger decides); a plain client sees
        the connection end as it would without the proxy."""
        prompts, self._prompts = self._prompts, {}
        if not self.records:
            return []
        from ..events import AgentExited, PromptResponseOut, SessionUpdateOut

        out: list[Output] = []
        for key, prompt in prompts.items():
            request = {"jsonrpc": "2.0", "id": json.loads(key)}
            exited = AgentExited(failure=agent_failure(AGENT_EXITED))
            sent = (self._feed(prompt.session_id, exited) or []) if prompt.tracked else []
            notices = [o for o in sent if isinstance(o, SessionUpdateOut) and o.record is not None]
            out.extend(ToClient(_dump(o.to_jsonrpc())) for o in notices)
            answer = next((o for o in sent if isinstance(o, PromptResponseOut) and o.record is not None), None)
            if answer is not None:
                out.append(ToClient(_dump(_with_record(request, answer))))
            else:  # cancelled, or a prompt the ledger never took: answered all the same, no record
                stop = "cancelled" if prompt.cancelled else "end_turn"
                out.append(ToClient(_dump({**request, "result": {"stopReason": stop}})))
        return out


def _air_fields() -> dict[str, Any]:
    air = air_of(agent_capabilities_meta(True))
    assert air is not None
    return {k: v for k, v in air.items() if k != "version"}


def _with_record(message: Mapping[str, Any], sent: PromptResponseOut) -> dict[str, Any]:
    """The agent's answer carrying the ledger's record: its result (its fields kept) with the
    ledger's stop reason (the agent's own) and the record in its ``_meta``; an error answer
    becomes ``{"stopReason": ..., "_meta": ...}`` (spec: "Delivery surfaces")."""
    from ..wire import attach_record

    assert sent.record is not None
    result = message.get("result")
    result = {"stopReason": sent.stop_reason, **(result if isinstance(result, Mapping) else {})}
    meta = result.get("_meta")
    result["_meta"] = attach_record(meta if isinstance(meta, Mapping) else None, sent.record)
    result["stopReason"] = sent.stop_reason
    answer = {k: v for k, v in message.items() if k not in ("error", "result")}
    return {"jsonrpc": "2.0", **answer, "result": result}
