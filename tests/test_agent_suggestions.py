"""The predicted next prompt (``lifecycle.agent.suggestions``, the SDK edge in
``lifecycle.agent.adopt``): the reference adapter 0.101.0's rules (``prompt-suggestions.js`` and
its call sites in ``acp-agent.js``), with the wire shapes written out as literals. The e2e test on
the real CLI is ``tests/e2e/test_prompt_suggestions.py``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions
from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport
from sdk_messages import result_message

from lifecycle.agent.adopt import AdoptingTransport, SuggestingClient
from lifecycle.agent.messages import read
from lifecycle.agent.suggestions import PromptSuggestion, PromptSuggestions
from lifecycle.negotiation import ClientState

ResultMessage = result_message  # the SDK's own (a result whose fields are not the SDK's types is skipped)


def shown(text: str) -> dict[str, Any]:
    return {"sessionUpdate": "session_info_update", "_meta": {"promptSuggestions": {"suggestions": [{"text": text}]}}}


CLEAR = {"sessionUpdate": "session_info_update", "_meta": {"promptSuggestions": {"suggestions": []}}}


def test_a_prediction_after_a_result_is_shown_once_and_the_next_prompt_clears_it() -> None:
    s = PromptSuggestions(enabled=True)
    assert s.see(read(ResultMessage())) == []
    assert s.see(read(PromptSuggestion("  run the tests \n"))) == [shown("run the tests")]
    assert s.see(read(PromptSuggestion("something else"))) == []  # one per result
    assert s.prompt_sent() == [CLEAR]
    assert s.prompt_sent() == []  # nothing held: no second clear


def test_a_prediction_outside_its_window_is_dropped() -> None:
    s = PromptSuggestions(enabled=True)
    assert s.see(read(PromptSuggestion("before any result"))) == []
    s.see(read(ResultMessage()))
    assert s.prompt_sent() == []  # nothing shown yet: no clear, and the window is closed
    assert s.see(read(PromptSuggestion("late: the user moved on"))) == []


def test_the_same_prediction_again_is_not_sent_again_and_whitespace_clears() -> None:
    s = PromptSuggestions(enabled=True)
    s.see(read(ResultMessage()))
    assert s.see(read(PromptSuggestion("fix it"))) == [shown("fix it")]
    s.see(read(ResultMessage()))  # an own turn's result (a background job's notification)
    assert s.see(read(PromptSuggestion("fix it"))) == []
    s.see(read(ResultMessage()))
    assert s.see(read(PromptSuggestion(" \t\n"))) == [CLEAR]
    s.see(read(ResultMessage()))
    assert s.see(read(PromptSuggestion(""))) == []  # nothing held already


def test_a_long_prediction_is_cut_at_2000_characters() -> None:
    s = PromptSuggestions(enabled=True)
    s.see(read(ResultMessage()))
    assert s.see(read(PromptSuggestion("x" * 5000))) == [shown("x" * 2000)]


def test_a_client_that_does_not_show_them_gets_nothing() -> None:
    s = PromptSuggestions()
    s.see(read(ResultMessage()))
    assert s.see(read(PromptSuggestion("fix it"))) == [] and s.prompt_sent() == []


@pytest.mark.parametrize(
    ("caps", "capable"),
    [
        ({"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}}, True),
        ({"_meta": {"jetbrains": {"air": {}}}}, True),  # the reference's isAirClient: any object
        ({"_meta": {"jetbrains": {"air": True}}}, False),
        ({"_meta": {"jetbrains": {}}}, False),
        ({"_meta": None}, False),
        ({}, False),
        (None, False),
        ([], False),
    ],
)
def test_only_a_client_that_declared_air_shows_them(caps: object, capable: bool) -> None:
    assert ClientState.parse(caps).suggestions is capable


def test_a_message_without_a_text_is_a_prediction_of_nothing() -> None:
    assert PromptSuggestion.from_raw({"type": "prompt_suggestion", "suggestion": 7}) == PromptSuggestion("")
    assert PromptSuggestion.from_raw({"type": "prompt_suggestion", "suggestion": "go"}) == PromptSuggestion("go")


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


def test_a_prediction_goes_out_through_the_publisher_masked_like_transcript_prose() -> None:
    """The prediction is the model's text about the user's work: a credential in it is masked as
    in an agent message (docs/security.md, "What is masked where")."""
    from acp_harness import FAKE_API_KEY, published

    s = PromptSuggestions(enabled=True)
    s.see(read(ResultMessage()))
    [wire] = published(s.see(read(PromptSuggestion(f"export ANTHROPIC_API_KEY={FAKE_API_KEY} and retry"))))
    assert wire["sessionUpdate"] == "session_info_update"
    [entry] = wire["_meta"]["promptSuggestions"]["suggestions"]
    assert FAKE_API_KEY not in entry["text"]
    assert entry["text"].startswith("export ANTHROPIC_API_KEY=") and entry["text"].endswith(" and retry")
