"""ACP's ``subagent_update`` by its schema: the vendored slice
``tests/fixtures/acp-schema/subagent-update.schema.json`` (verbatim but for descriptions, from
``schema/v1/schema.unstable.json`` of the ACP TypeScript SDK 2.4.0, the one the reference adapter
0.101.0 bundles; the Python ACP SDK 0.12.1 is on schema 1.19 and has no subagents) and a check of
the JSON-schema keywords it uses (no JSON-schema library is a dependency)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA = json.loads((Path(__file__).parent / "fixtures" / "acp-schema" / "subagent-update.schema.json").read_text())


def _conforms(value: Any, schema: dict[str, Any]) -> bool:
    """Whether ``value`` conforms to ``schema`` (the keywords the vendored slice uses: ``$ref``,
    ``type``, ``const``, ``properties``, ``required``, ``items``, ``anyOf``, ``allOf``, ``not``,
    ``minimum``; ``additionalProperties`` is ``true`` or absent there: extra keys pass)."""
    if "$ref" in schema and not _conforms(value, SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[1]]):
        return False
    kinds = schema.get("type")
    if kinds is not None:
        names = kinds if isinstance(kinds, list) else [kinds]
        if not any(_is(value, name) for name in names):
            return False
    if "const" in schema and value != schema["const"]:
        return False
    if "minimum" in schema and _is(value, "integer") and value < schema["minimum"]:
        return False
    if isinstance(value, dict):
        if any(key not in value for key in schema.get("required", [])):
            return False
        for key, sub in schema.get("properties", {}).items():
            if key in value and not _conforms(value[key], sub):
                return False
    if isinstance(value, list) and "items" in schema and not all(_conforms(v, schema["items"]) for v in value):
        return False
    if "anyOf" in schema and not any(_conforms(value, sub) for sub in schema["anyOf"]):
        return False
    if "allOf" in schema and not all(_conforms(value, sub) for sub in schema["allOf"]):
        return False
    return not ("not" in schema and _conforms(value, schema["not"]))


def _is(value: Any, name: str) -> bool:
    return {
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
        "null": value is None,
    }[name]


def conforms(update: dict[str, Any]) -> bool:
    """``update`` is a ``SessionUpdate`` of kind ``subagent_update`` by ACP's schema."""
    return _conforms(update, {"$ref": "#/$defs/SessionUpdateSubagent"})
