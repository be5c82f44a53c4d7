"""A session's title (issue 31 "Titles", issue 30 point 7), on the real bundled Claude Code CLI
through the real ACP SDK client, with the fake Anthropic API on 127.0.0.1 as the only fake.

The reference adapter 0.101.0 asks Claude Code for the title with ``generate_session_title`` as
soon as a prompt is sent, and publishes it as ``session_info_update`` ``{title, updatedAt}``.
Claude Code asks the API for it with its own side request (a system prompt that names the
session, a JSON ``{"title"}`` answer); the fake API answers it with the first four words of the
session's text (``fakeapi.fake_title``), so the expected title is known from the prompt here.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from .fakeapi import text_reply
from .harness import Run, Script, agent, run_async, select

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

PROMPT = "Please fix the login bug in auth.py"
TITLE = "Please fix the login"  # the fake API's title: the prompt's first four words
MS_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


async def _titles(run: Run, count: int, timeout: float = 30) -> list[dict[str, object]]:
    end = asyncio.get_running_loop().time() + timeout
    while True:
        found = [u for u in run.of("session_info_update") if "title" in u]
        if len(found) >= count or asyncio.get_running_loop().time() > end:
            return found
        await asyncio.sleep(0.1)


def test_the_first_prompt_names_the_session_once_and_claude_code_stores_it(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(text_reply("On it."), text_reply("Done too."))
        async with agent(tmp_path, script, select("allow-once")) as run:
            assert (await run.prompt(PROMPT)).stop_reason == "end_turn"
            [update] = await _titles(run, 1)
            assert update["title"] == TITLE and MS_Z.match(str(update["updatedAt"])), update
            assert "_meta" not in update  # not a failure record
            [asked] = run.api.title_requests
            assert f"<session>\\n{PROMPT}\\n</session>" in str(asked.body.get("messages")).replace("\n", "\\n")
            # persisted: Claude Code's transcript holds it, and session/list shows it
            stored = [e for e in run.workspace.transcript(run.sid) if e.get("type") == "ai-title"]
            assert stored and {e.get("aiTitle") for e in stored} == {TITLE}  # re-appended, last wins
            listed = await run.conn.list_sessions(cwd=str(run.workspace.cwd))
            assert [s.title for s in listed.sessions if s.session_id == run.sid] == [TITLE]
            # one title per session: the next prompt asks for none and publishes none
            assert (await run.prompt("and now the tests for it")).stop_reason == "end_turn"
            await asyncio.sleep(1.0)
            assert len(run.api.title_requests) == 1
            assert len(await _titles(run, 2, timeout=0)) == 1

    run_async(go())


def test_a_short_first_prompt_leaves_the_title_to_the_next(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(text_reply("Hello."), text_reply("Sure."))
        async with agent(tmp_path, script, select("allow-once"), capable=False) as run:
            assert (await run.prompt("hi")).stop_reason == "end_turn"
            await asyncio.sleep(1.0)
            assert run.api.title_requests == [] and await _titles(run, 1, timeout=0) == []
            assert (await run.prompt("refactor the parser module")).stop_reason == "end_turn"
            [update] = await _titles(run, 1)
            assert update["title"] == "refactor the parser module"  # from the prompt that was long enough

    run_async(go())
