"""The recorded CLI runs (tests/fixtures/claude-cli-2.1.337) as the events an adapter feeds.

Each ``*.sdk.jsonl`` line is rebuilt into the ``claude_agent_sdk`` object (or exception) it was and
translated by :mod:`lifecycle.claude`, exactly as an adapter consuming ``query()`` would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import FIXTURES

from lifecycle import PromptStarted
from lifecycle.claude import from_sdk_exception, from_sdk_message
from lifecycle.events import Event
from lifecycle.history import load_history

__all__ = ["HERE", "history_events", "recorded_events", "sdk_object"]

HERE: Path = FIXTURES


def sdk_object(line: dict[str, Any]) -> Any:
    from claude_agent_sdk import ResultError
    from claude_agent_sdk.types import (
        AssistantMessage,
        RateLimitEvent,
        ResultMessage,
        SystemMessage,
        TextBlock,
        ToolResultBlock,
        ToolUseBlock,
        UserMessage,
    )

    def block(b: dict[str, Any]) -> Any:
        if "text" in b:
            return TextBlock(text=b["text"])
        return ToolResultBlock(**b) if "tool_use_id" in b else ToolUseBlock(**b)

    if "raised" in line:
        attrs = line["attrs"]
        data = {
            k: attrs.get(k) for k in ("subtype", "errors", "result", "api_error_status", "terminal_reason")
        }
        return ResultError(line["message"], data=data, exit_code=attrs.get("exit_code"))
    cls, f = line["class"], dict(line["fields"])
    if cls in ("AssistantMessage", "UserMessage") and isinstance(f["content"], list):
        f["content"] = [block(b) for b in f["content"]]
    return {
        "AssistantMessage": AssistantMessage,
        "UserMessage": UserMessage,
        "ResultMessage": ResultMessage,
        "SystemMessage": SystemMessage,
        "RateLimitEvent": RateLimitEvent,
    }[cls](**f)


def recorded_events(name: str, turn: str) -> list[Event]:
    """A recorded CLI run as the events an adapter feeds: the prompt, then each SDK message."""
    events: list[Event] = [PromptStarted(turn_id=turn)]
    for raw in (HERE / f"{name}.sdk.jsonl").read_text().splitlines():
        if not raw.strip():
            continue
        obj = sdk_object(json.loads(raw))
        ev = from_sdk_exception(obj) if isinstance(obj, BaseException) else from_sdk_message(obj)
        if ev is not None:
            events.append(ev)
    return events


def history_events(name: str) -> list[Event]:
    from claude_agent_sdk.types import SessionMessage

    stored = [
        SessionMessage(**json.loads(x)["fields"]) for x in (HERE / f"{name}.session_messages.jsonl").open()
    ]
    return [load_history(stored)]
