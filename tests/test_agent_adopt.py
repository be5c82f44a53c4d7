"""The Claude SDK edge of :mod:`lifecycle.agent.adopt`, without processes: ``AdoptingTransport.write``
asks for prompt suggestions in the SDK's ``initialize`` only when the client shows them, and
``SuggestingClient`` hands on the ``prompt_suggestion`` message the SDK's parser drops (the
reference adapter 0.101.0's rules: ``test_agent_suggestions.py``). Adopting an early Claude Code:
``test_agent_launch.py``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions
from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

from lifecycle.agent.adopt import AdoptingTransport, SuggestingClient
from lifecycle.agent.suggestions import PromptSuggestion

INITIALIZE = {"type": "control_request", "request_id": "req_1_ab", "request": {"subtype": "initialize", "hooks": None}}


def _written(monkeypatch: pytest.MonkeyPatch, enabled: bool, *lines: dict[str, Any]) -> list[dict[str, Any]]:
    sent: list[str] = []

    async def write(self: SubprocessCLITransport, data: str) -> None:
        sent.append(data)

    monkeypatch.setattr(SubprocessCLITransport, "write", write)
    transport = AdoptingTransport(ClaudeAgentOptions(cwd="/w"), prompt_suggestions=enabled)

    async def go() -> None:
        for line in lines:
            await transport.write(json.dumps(line) + "\n")

    asyncio.run(go())
    assert all(data.endswith("\n") and data.count("\n") == 1 for data in sent)
    return [json.loads(data) for data in sent]


def test_the_sdks_initialize_asks_for_predictions_only_when_the_client_shows_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    user = {"type": "user", "message": {"role": "user", "content": '{"subtype": "initialize"}'}}
    asked = _written(monkeypatch, True, INITIALIZE, user, INITIALIZE)
    assert asked[0] == {**INITIALIZE, "request": {"subtype": "initialize", "hooks": None, "promptSuggestions": True}}
    assert asked[1:] == [user, INITIALIZE]  # nothing else is touched, and only the first initialize
    assert _written(monkeypatch, False, INITIALIZE) == [INITIALIZE]


def test_the_client_hands_on_the_prediction_the_sdk_would_drop() -> None:
    class Query:
        async def receive_messages(self) -> Any:
            yield {"type": "prompt_suggestion", "suggestion": "run it", "uuid": "u", "session_id": "s"}
            yield {"type": "no_such_type"}
            yield {"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}, "uuid": "u", "session_id": "s"}

    client = SuggestingClient(ClaudeAgentOptions())
    client._query = Query()

    async def go() -> list[Any]:
        return [m async for m in client.receive_messages()]

    first, second = asyncio.run(go())
    assert first == PromptSuggestion("run it")
    assert type(second).__name__ == "RateLimitEvent"
