"""The ``_meta.jetbrains.air`` namespace and the record's vocabulary, without pydantic (spec: "Wire
record", "Categories", "Severity", "Actions").

:mod:`lifecycle.wire` owns the record and re-exports everything here; this module exists so that a
path that never builds a record does not load pydantic: the agent answers ``initialize``
(:mod:`lifecycle.negotiation` parses what the client declared) before pydantic is loaded (issue
49.1), and the proxy relays a plain client's lines without it (about 13 MB of a process's memory;
issue 53.5).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

__all__ = ["AIR_VERSION", "Action", "Category", "Severity", "air_of", "with_air"]

#: The ``version`` that sits next to every record (spec: "Wire record").
AIR_VERSION = 1


class Category(StrEnum):
    """Broad visual group (spec: "Categories"). Drives iconography only, never behaviour."""

    CONNECTION = "connection"
    ACCESS = "access"
    LIMIT = "limit"
    REQUEST = "request"
    SERVICE = "service"
    UNKNOWN = "unknown"


class Severity(StrEnum):
    """``warning``: may still succeed, does not end a turn; ``error``: cannot continue (spec: "Severity")."""

    WARNING = "warning"
    ERROR = "error"


class Action(StrEnum):
    """Recovery actions version 1 defines (spec: "Actions")."""

    RETRY = "retry"
    LOGIN = "login"
    NEW_SESSION = "new_session"


def air_of(meta: object) -> Mapping[str, Any] | None:
    """``meta["jetbrains"]["air"]`` when every step on that path is an object, else ``None``.

    Never raises on hostile input beyond what ``Mapping.get`` itself raises.
    """
    if not isinstance(meta, Mapping):
        return None
    jetbrains = meta.get("jetbrains")
    if not isinstance(jetbrains, Mapping):
        return None
    air = jetbrains.get("air")
    return air if isinstance(air, Mapping) else None


def with_air(meta: Mapping[str, Any] | None, **fields: Any) -> dict[str, Any]:
    """A deep copy of ``meta`` with ``fields`` set in ``jetbrains.air`` (``version: 1`` beside them).

    Every other key is kept, at every level (another vendor's namespace, ``quota``, a future
    ``jetbrains.air`` key). A non-object value found on the path is replaced, because the
    extension's place is defined by the spec.
    """
    out: dict[str, Any] = copy.deepcopy(dict(meta)) if meta else {}
    jetbrains = out.get("jetbrains")
    jetbrains = dict(jetbrains) if isinstance(jetbrains, Mapping) else {}
    air = jetbrains.get("air")
    air = dict(air) if isinstance(air, Mapping) else {}
    air["version"] = AIR_VERSION
    air.update(fields)
    jetbrains["air"] = air
    out["jetbrains"] = jetbrains
    return out
