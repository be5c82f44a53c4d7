"""The next prompt Claude Code predicts (issue 31 point 3), on the real bundled Claude Code CLI
through the real ACP SDK client, with the fake Anthropic API on 127.0.0.1 as the only fake.

The reference adapter 0.101.0 asks Claude Code for predictions (``promptSuggestions: true`` in
the SDK's ``initialize``) and publishes each to a JetBrains AIR client as a
``session_info_update`` whose ``_meta.promptSuggestions`` is ``{"suggestions": [{"text"}]}``,
clearing it (an empty list) when the user sends the next prompt. Claude Code asks the API for the
prediction with its own side request (its last user message starts ``[SUGGESTION MODE``); the
fake API answers it with ``FakeAnthropicAPI.suggestion``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from .fakeapi import text_reply
from .harness import Run, Script, agent, run_async, select

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

NEXT = "Now add tests for the parser"


def predictions(run: Run) -> list[Any]:
    """Each prediction update's ``promptSuggestions``, in wire order."""
    return [
        u["_meta"]["promptSuggestions"]
        for u in run.of("session_info_update")
        if "promptSuggestions" in (u.get("_meta") or {})
    ]


async def _wait(run: Run, count: int, timeout: float = 30) -> list[Any]:
    end = asyncio.get_running_loop().time() + timeout
    while len(found := predictions(run)) < count and asyncio.get_running_loop().time() < end:
        await asyncio.sleep(0.1)
    return found


def test_an_air_client_is_shown_the_predicted_prompt_and_the_next_prompt_clears_it(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(text_reply("Hello."), text_reply("Parser fixed."), text_reply("Tests added."))
        async with agent(tmp_path, script, select("allow-once")) as run:
            run.api.suggestion = f"  {NEXT}\n"
            assert (await run.prompt("hi")).stop_reason == "end_turn"
            assert (await run.prompt("fix the parser")).stop_reason == "end_turn"
            assert await _wait(run, 1) == [{"suggestions": [{"text": NEXT}]}]  # trimmed
            asked = len(run.api.suggestion_requests)
            assert asked >= 1
            # the scripted conversation is untouched: each prompt got its own scripted answer
            assert "".join(run.texts()) == "Hello.Parser fixed."
            before = len(run.incoming())
            assert (await run.prompt("yes, do that")).stop_reason == "end_turn"
            third = [m["params"]["update"] for m in run.incoming()[before:] if m.get("method") == "session/update"]
            kinds = [
                "clear"
                if (u.get("_meta") or {}).get("promptSuggestions") == {"suggestions": []}
                else u["sessionUpdate"]
                for u in third
            ]
            # the prediction is spent by the prompt: cleared before the turn shows anything
            assert kinds.index("clear") < kinds.index("agent_message_chunk"), kinds
            # and the third turn's own prediction is shown again
            assert (await _wait(run, 3))[1:] == [{"suggestions": []}, {"suggestions": [{"text": NEXT}]}]
            assert "".join(run.texts()) == "Hello.Parser fixed.Tests added."

    run_async(go())


def test_a_client_that_does_not_show_them_costs_no_prediction_request(tmp_path: Path) -> None:
    """Better than the reference, which asks Claude Code for a prediction after every turn and
    drops it for every client but AIR (docs/parity.md)."""

    async def go() -> None:
        script = Script(text_reply("Hello."), text_reply("Parser fixed."), text_reply("Tests added."))
        async with agent(tmp_path, script, select("allow-once"), capable=False) as run:
            run.api.suggestion = NEXT
            for text in ("hi", "fix the parser", "yes, do that"):
                assert (await run.prompt(text)).stop_reason == "end_turn"
            await asyncio.sleep(1.5)
            assert run.api.suggestion_requests == []
            assert predictions(run) == []
            assert len(run.api.message_requests) == 3

    run_async(go())


def test_a_prediction_of_only_whitespace_shows_nothing(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(text_reply("Hello."), text_reply("Parser fixed."))
        async with agent(tmp_path, script, select("allow-once")) as run:
            run.api.suggestion = " \n\t "
            assert (await run.prompt("hi")).stop_reason == "end_turn"
            assert (await run.prompt("fix the parser")).stop_reason == "end_turn"
            end = asyncio.get_running_loop().time() + 20
            while not run.api.suggestion_requests and asyncio.get_running_loop().time() < end:
                await asyncio.sleep(0.1)
            assert run.api.suggestion_requests  # Claude Code asked, and predicted nothing
            await asyncio.sleep(1.5)
            assert predictions(run) == []  # nothing held, so nothing to clear either

    run_async(go())
