"""The predicted next prompt (``lifecycle.agent.suggestions``; the SDK edge in
``lifecycle.agent.adopt``: ``test_agent_adopt.py``): the reference adapter 0.101.0's rules
(``prompt-suggestions.js`` and its call sites in ``acp-agent.js``), with the wire shapes written out
as literals. The e2e test on the real CLI is ``tests/e2e/test_prompt_suggestions.py``."""

from __future__ import annotations

from typing import Any

import pytest
from sdk_messages import result_message

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
