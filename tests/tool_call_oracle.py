"""Not a test: the oracle's frame for ``lifecycle.agent.tool_calls``' tests (``test_agent_tool_calls*.py``):
the reference adapter's ``tool_call`` and final ``tool_call_update`` around a row's fields
(``started``, ``ended``), the ACP schema round trip (``wire``), the working directory of every row
(``CWD``) and the ``rawOutput`` markers (``SAME``, ``ABSENT``). Where the expected values come from:
``test_agent_tool_calls.py``'s docstring."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from acp.schema import SessionNotification

CWD = "/work/proj"
SAME = object()  # rawOutput: the result as given
ABSENT = object()  # rawOutput: not sent


def started(tool_id: str, name: str, raw_input: Any, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The reference's ``tool_call`` (renderer.js ``toolCall``) around a row's fields."""
    return {
        "_meta": {"claudeCode": {"toolName": name}},
        "toolCallId": tool_id,
        "sessionUpdate": "tool_call",
        "rawInput": raw_input,
        "status": "pending",
        **fields,
    }


def ended(tool_id: str, name: str, status: str, raw_output: Any, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The reference's final result update (renderer.js ``result``) around a row's fields."""
    update = {
        "_meta": {"claudeCode": {"toolName": name}},
        "toolCallId": tool_id,
        "sessionUpdate": "tool_call_update",
        "status": status,
    }
    if raw_output is not ABSENT:
        update["rawOutput"] = raw_output
    return {**update, **fields}


def wire(update: Mapping[str, Any]) -> dict[str, Any]:
    """``update`` through the ACP SDK's schema and back: equal to ``update`` only when every field
    validated (the schema silently drops an invalid list item, so validating alone proves little)."""
    text = json.dumps(update, ensure_ascii=False)
    note = SessionNotification.model_validate({"sessionId": "s", "update": json.loads(text)})
    back = note.model_dump(mode="json", by_alias=True, exclude_unset=True)["update"]
    assert isinstance(back, dict)
    return back
