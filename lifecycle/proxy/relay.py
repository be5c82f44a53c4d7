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
* **Ids and recovery** (spec: "Identity, revisions, and history", "Internal recovery"): each prompt
  gets a turn id from ``new_turn_id``, its failure the id ``<turnId>:error`` (:mod:`lifecycle.ids`)
  at revision 1; a session's active incidents end silently at the next real answer (agent text
  during a later prompt that then ends ``end_turn``). Recovery publishes nothing.
* **Garbage never travels.** A line that is not UTF-8 JSON is not passed on: from the client it
  gets a JSON-RPC parse error back (``id: null``, as JSON-RPC 2.0 answers an unparsable request),
  from the agent it is dropped; both are reported as a :class:`Problem` (no text of the line).

What is not done yet (docs/proxy.md): retry warnings, records replayed by ``session/load``, the
conductor's ``proxy/initialize``; the relay keeps its own per-session state instead of feeding
:class:`lifecycle.SessionLedger`, whose input alphabet is still Claude Code's (issue 53.3).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..air import air_of, with_air
from ..families import (
    AGENT_EXITED,
    Family,
    FamilyCondition,
    agent_words,
    classify_agent_error,
    classify_stop_reason,
    family_of,
    is_protocol_error,
)
from ..ids import turn_error_id
from ..negotiation import CAPABILITY, agent_capabilities_meta, negotiate, version_is_supported
from ..titles import present

if TYPE_CHECKING:  # the record's model (pydantic) loads at the first record: a plain client never needs it
    from ..wire import SessionFailure

__all__ = ["MAX_ACTIVE", "PARSE_ERROR", "Output", "Problem", "Relay", "ToAgent", "ToClient"]

#: JSON-RPC 2.0's code for an unparsable request
PARSE_ERROR = -32700
#: the most active incident ids the relay remembers per session (the oldest goes first): a session
#: that fails forever without an answer holds bounded memory
MAX_ACTIVE = 256


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
    turn_id: str
    answered: bool = False


@dataclass(slots=True)
class _Session:
    active: list[str] = field(default_factory=list)


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


class Relay:
    """One client-agent connection's relay state (see the module docstring).

    Args:
        command: the agent's command line, for its family when ``initialize`` names none.
        new_turn_id: a fresh, unique turn id for each prompt (a UUID in the shell).
    """

    def __init__(self, *, command: str = "", new_turn_id: Callable[[], str]) -> None:
        self._command = command
        self._new_turn_id = new_turn_id
        self._negotiated = False
        self._agent_capable = False
        self._initialize: str | None = None
        self._family: Family = family_of(None, command)
        self._prompts: dict[str, _Prompt] = {}
        self._sessions: dict[str, _Session] = {}

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
        """The ids of the session's active incidents, oldest first (a copy)."""
        session = self._sessions.get(session_id)
        return tuple(session.active) if session else ()

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
        if key is None or not isinstance(method, str):
            return
        if method == "initialize":
            self._initialize = key
            caps = params.get("clientCapabilities") if isinstance(params, Mapping) else None
            self._negotiated = negotiate(caps)
        elif method == "session/prompt" and isinstance(params, Mapping):
            session_id = params.get("sessionId")
            if isinstance(session_id, str):
                self._prompts[key] = _Prompt(session_id, self._new_turn_id())

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
            self._agent_notification(message)
            return [ToClient(line)]
        key = _key(message.get("id"))
        if key is not None and key == self._initialize:
            self._initialize = None
            return [ToClient(self._initialized(message, line))]
        prompt = self._prompts.pop(key, None) if key is not None else None
        if prompt is None or not self.records:
            return [ToClient(line)]
        answer = self._settle(prompt, message)
        return [ToClient(line if answer is None else _dump(answer))]

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

    def _agent_notification(self, message: Mapping[str, Any]) -> None:
        # Agent text during a prompt is a real answer (what ends the session's incidents).
        if message.get("method") != "session/update":
            return
        params = message.get("params")
        if not isinstance(params, Mapping):
            return
        update = params.get("update")
        if not isinstance(update, Mapping) or update.get("sessionUpdate") != "agent_message_chunk":
            return
        content = update.get("content")
        text = content.get("text") if isinstance(content, Mapping) else None
        if isinstance(text, str) and text.strip():
            for prompt in self._prompts.values():
                if prompt.session_id == params.get("sessionId"):
                    prompt.answered = True

    def _settle(self, prompt: _Prompt, message: Mapping[str, Any]) -> dict[str, Any] | None:
        """The answer to send instead of the agent's, or None to send the agent's as it is."""
        error = message.get("error")
        if isinstance(error, Mapping) and is_protocol_error(error.get("code")):
            return None
        if isinstance(error, Mapping):
            failure = classify_agent_error(self._family, error.get("code"), error.get("data"))
            record = self._record(prompt, failure, agent_words(error.get("message"), error.get("data")))
            return _end_turn(message.get("id"), record)
        result = message.get("result")
        if not isinstance(result, Mapping):
            return None
        stop = result.get("stopReason")
        cond = classify_stop_reason(stop)
        if cond is not None:
            record = self._record(prompt, cond, "")
            meta = result.get("_meta")
            from ..wire import attach_record

            meta = attach_record(meta if isinstance(meta, Mapping) else None, record)
            return {**message, "result": {**result, "_meta": meta}}
        if stop == "end_turn" and prompt.answered:
            self._sessions.pop(prompt.session_id, None)  # recovery: nothing published
        return None

    def _record(self, prompt: _Prompt, cond: FamilyCondition, words: str) -> SessionFailure:
        title, details = present(words, "internal_error") if words else (cond.fallback, None)
        incident = turn_error_id(prompt.turn_id)
        active = self._sessions.setdefault(prompt.session_id, _Session()).active
        active.append(incident)
        del active[:-MAX_ACTIVE]
        from ..wire import SessionFailure

        return SessionFailure(
            id=incident,
            revision=1,
            category=cond.category,
            severity=cond.severity,
            title=title,
            details=details,
            actions=cond.actions,
        )

    # ------------------------------------------------------------------ the agent's end

    def agent_exited(self) -> list[Output]:
        """The agent's output ended (it exited): a capable client's prompts still running are
        answered ``end_turn`` with a ``connection`` record; a plain client sees the connection
        end as it would without the proxy."""
        prompts, self._prompts = self._prompts, {}
        if not self.records:
            return []
        out: list[Output] = []
        for key, prompt in prompts.items():
            record = self._record(prompt, AGENT_EXITED, "")
            out.append(ToClient(_dump(_end_turn(json.loads(key), record))))
        return out


def _air_fields() -> dict[str, Any]:
    air = air_of(agent_capabilities_meta(True))
    assert air is not None
    return {k: v for k, v in air.items() if k != "version"}


def _end_turn(request_id: object, record: SessionFailure) -> dict[str, Any]:
    from ..wire import attach_record

    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {"stopReason": "end_turn", "_meta": attach_record(None, record)},
    }
