"""Capability negotiation (spec: "Capability negotiation").

The extension is opt-in: it is enabled only when the client's ``initialize`` carries
``clientCapabilities._meta.jetbrains.air`` with a ``version`` that is a finite integer >= 1 and a
``capabilities`` array containing ``"sessionFailure"``. Anything else, however malformed, means the
legacy ACP behaviour; negotiation never raises.

Everything else an adapter takes from the client's ``initialize`` is parsed here too, once, into
one value (:class:`ClientState`, :meth:`ClientState.parse`): the one home of "what this client
declared". An adapter reads its flags; nothing else looks at ``clientCapabilities``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .air import AIR_VERSION, air_of, with_air

__all__ = [
    "BACKGROUND_SUBAGENTS",
    "CAPABILITY",
    "ClientState",
    "agent_capabilities_meta",
    "negotiate",
    "notices_capable",
    "version_is_supported",
]

CAPABILITY = "sessionFailure"
#: The AIR capability of a client that keeps listening after a prompt's answer (the reference's
#: ``AIR_BACKGROUND_SUBAGENTS_CAPABILITY``): its turns are not held for background subagents.
BACKGROUND_SUBAGENTS = "backgroundSubagents"


def version_is_supported(version: object) -> bool:
    """A JSON number with an integral, finite value >= 1 (``true``, ``"1"``, ``1.5``, NaN, inf: no)."""
    if isinstance(version, bool):
        return False
    if isinstance(version, int):
        return version >= AIR_VERSION
    if isinstance(version, float):
        return math.isfinite(version) and version.is_integer() and version >= AIR_VERSION
    return False


def _client_meta(client_capabilities: object) -> object:
    if isinstance(client_capabilities, Mapping):
        return client_capabilities.get("_meta")
    # An ACP SDK ``ClientCapabilities`` model keeps ``_meta`` as ``field_meta``.
    return getattr(client_capabilities, "field_meta", None)


def negotiate(client_capabilities: object) -> bool:
    """True when the client negotiated ``sessionFailure``; never raises.

    Accepts the raw ``clientCapabilities`` JSON object or an ACP SDK ``ClientCapabilities`` model.
    """
    return _air_declares(client_capabilities, CAPABILITY)


def _air_declares(client_capabilities: object, capability: str) -> bool:
    """True when ``_meta.jetbrains.air`` has a supported ``version`` and lists ``capability``
    (the reference adapter's ``clientSupportsAirCapability``); never raises."""
    try:
        air = air_of(_client_meta(client_capabilities))
        if air is None:
            return False
        if not version_is_supported(air.get("version")):
            return False
        caps = air.get("capabilities")
        if isinstance(caps, (str, bytes)) or not isinstance(caps, Sequence):
            return False
        return any(type(c) is str and c == capability for c in caps)
    except Exception:  # a hostile Mapping/Sequence implementation: legacy, never a crash
        return False


def notices_capable(client_capabilities: object) -> bool:
    """True when the client declared ACP session notices (``clientCapabilities.session.notices``,
    an object; the ACP Session Notices RFD); never raises.

    Such a client gets the notices that have an ACP ``notice`` form as ``{"sessionUpdate":
    "notice", ...}`` updates, as the reference adapter sends them.
    """
    try:
        if isinstance(client_capabilities, Mapping):
            session = client_capabilities.get("session")
        else:  # an ACP SDK model keeps fields it does not know in its extras
            extra = getattr(client_capabilities, "model_extra", None) or {}
            session = extra.get("session") if isinstance(extra, Mapping) else None
        notices = session.get("notices") if isinstance(session, Mapping) else None
        return isinstance(notices, Mapping)
    except Exception:  # a hostile Mapping implementation: no notices, never a crash
        return False


def agent_capabilities_meta(enabled: bool) -> dict[str, Any]:
    """What an adapter advertises under ``agentCapabilities._meta`` to a client that declared AIR."""
    if not enabled:
        return {}
    return with_air(None, capabilities=[CAPABILITY])


@dataclass(frozen=True, slots=True)
class ClientState:
    """What a client's ``initialize`` declared, parsed once (:meth:`parse`); the default is a
    client that declared nothing (the legacy behaviour everywhere).

    Attributes:
        negotiated: ``sessionFailure`` (:func:`negotiate`): typed records instead of the legacy
            behaviour.
        air: ``_meta.jetbrains.air`` is an object (whatever it negotiated): the reference
            adapter's test for a JetBrains AIR client, which gets prompt suggestions.
        notices: ACP session notices (:func:`notices_capable`).
        form: form elicitation (``elicitation.form``: an object, or ``true``): a question to the
            user is asked as a form.
        compaction: ``session.compaction`` is an object: compactions travel as
            ``compaction_update`` instead of a synthetic tool call.
        terminal_auth: the client runs terminal logins (``auth.terminal: true``, or
            ``_meta["terminal-auth"]: true``).
        terminal_auth_meta: ... declared by ``_meta["terminal-auth"]: true`` (Zed, JetBrains and the
            ACP registry's validator): each login method then carries its full command.
        terminal_output: ``_meta.terminal_output: true``: the client draws a tool's terminal
            output (the reference adapter's terminal cards).
        background_subagents: AIR's ``backgroundSubagents`` capability (with a supported
            version): the client keeps listening after a prompt's answer, so a turn is not held
            open for the background subagents it started (:mod:`lifecycle.agent.hold`).
        plan: ``plan`` is given and not ``null`` (ACP plan operations; the reference's
            ``supportsPlanOperations``): an approved plan is also sent as a Markdown ``plan_update``.
        subagents: ``subagents`` is an object (``{}``; omitted or ``null``: not declared): the
            client shows each subagent as a child session (``subagent_update``; ACP's
            ``SubagentCapabilities``, the reference adapter 0.101.0's ``clientSupportsSubagents``).
    """

    negotiated: bool = False
    air: bool = False
    notices: bool = False
    form: bool = False
    compaction: bool = False
    terminal_auth: bool = False
    terminal_auth_meta: bool = False
    terminal_output: bool = False
    background_subagents: bool = False
    plan: bool = False
    subagents: bool = False

    @property
    def suggestions(self) -> bool:
        """The client shows prompt suggestions: an AIR client (the reference's rule)."""
        return self.air

    @classmethod
    def parse(cls, client_capabilities: object) -> ClientState:
        """``clientCapabilities`` (the raw JSON object, an ACP SDK model, or None) as one value;
        never raises (anything unreadable declares nothing)."""
        try:
            caps = _as_json(client_capabilities)
            meta = caps.get("_meta")
            session, auth = caps.get("session"), caps.get("auth")
            elicitation = caps.get("elicitation")
            form = elicitation.get("form") if isinstance(elicitation, Mapping) else None
            meta_terminal = isinstance(meta, Mapping) and meta.get("terminal-auth") is True
            return cls(
                negotiated=negotiate(caps),
                air=air_of(meta) is not None,
                notices=notices_capable(caps),
                form=isinstance(form, Mapping) or form is True,
                compaction=isinstance(session, Mapping) and isinstance(session.get("compaction"), Mapping),
                terminal_auth=meta_terminal or (isinstance(auth, Mapping) and auth.get("terminal") is True),
                terminal_auth_meta=meta_terminal,
                terminal_output=isinstance(meta, Mapping) and meta.get("terminal_output") is True,
                background_subagents=_air_declares(caps, BACKGROUND_SUBAGENTS),
                plan=caps.get("plan") is not None,
                subagents=isinstance(caps.get("subagents"), Mapping),
            )
        except Exception:  # a hostile Mapping implementation: nothing declared, never a crash
            return cls()


def _as_json(client_capabilities: object) -> Mapping[str, Any]:
    """The raw JSON object of ``clientCapabilities``: as given, or an ACP SDK model's dump (by
    alias, with the fields it kept as extras)."""
    if isinstance(client_capabilities, Mapping):
        return client_capabilities
    dump = getattr(client_capabilities, "model_dump", None)
    if callable(dump):
        dumped = dump(by_alias=True, exclude_none=True)
        if isinstance(dumped, Mapping):
            return dumped
    return {}
