"""Capability negotiation (spec: "Capability negotiation").

The extension is opt-in: it is enabled only when the client's ``initialize`` carries
``clientCapabilities._meta.jetbrains.air`` with a ``version`` that is a finite integer >= 1 and a
``capabilities`` array containing ``"sessionFailure"``. Anything else, however malformed, means the
legacy ACP behaviour; negotiation never raises.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .wire import AIR_VERSION, air_of, with_air

__all__ = ["CAPABILITY", "agent_capabilities_meta", "negotiate", "notices_capable", "version_is_supported"]

CAPABILITY = "sessionFailure"


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
    try:
        air = air_of(_client_meta(client_capabilities))
        if air is None:
            return False
        if not version_is_supported(air.get("version")):
            return False
        caps = air.get("capabilities")
        if isinstance(caps, (str, bytes)) or not isinstance(caps, Sequence):
            return False
        return any(type(c) is str and c == CAPABILITY for c in caps)
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
