"""The extension's namespace in ``_meta`` (spec: "Wire record", "Capability negotiation"):
``_meta.jetbrains.air``, where a client declares the extension and where every record travels
beside ``version: 1``.

It is read by :func:`air_of` and written by :func:`with_air`, and nowhere else
(:mod:`lifecycle.wire` re-exports both, beside the record they carry). Plain mappings only, no
pydantic: an agent parses what a client declared (:mod:`lifecycle.negotiation`) before it has
loaded the record's model, so ``initialize`` is answered without it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["AIR_VERSION", "air_of", "with_air"]

#: The ``version`` that sits next to every record (spec: "Wire record").
AIR_VERSION = 1


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
