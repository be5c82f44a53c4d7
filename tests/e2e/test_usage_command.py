"""Issue 52.3 on the real CLI: ``/usage`` is Claude Code's own usage reading (its ``get_usage``
control request) as the reference adapter renders it (docs/acp-agent.md, "`/usage`").

On an API key Claude Code 2.1.337 reports no windows (``rate_limits_available: false``), so the
Markdown is the reference's "## Usage" then "### This session" alone (the lines of
``formatUsageResponse``, ``dist/usage-markdown.js`` of claude-agent-acp 0.101.0); the windows'
rendering is held to the reference's own output in ``tests/test_agent_usage.py``. After one
answered prompt the session's input tokens are not zero, and ``/usage`` sends the model nothing.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from .fakeapi import text_reply
from .harness import Script, agent, select

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

SESSION_ONLY = re.compile(
    r"## Usage\n\n---\n\n### This session\n\n\| Cost \| API time \| Active \|\n\|:--\|:--\|:--\|\n"
    r"\| \$\d+\.\d\d \| \d+(?:m(?: \d+s)?|s) \| \d+(?:m(?: \d+s)?|s) \|\n\n\| Breakdown \| Tokens \|\n\|:--\|--:\|\n"
    r"\| Input \| (?P<input>[\d.]+[KMBT]?) \|\n\| Output \| [\d.]+[KMBT]? \|\n\| Cache read \| [\d.]+[KMBT]? \|\n"
    r"\| Cache write \| [\d.]+[KMBT]? \|"
)


def test_usage_is_claude_codes_reading_as_the_reference_renders_it(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(text_reply("Hi."), then=text_reply("The model was asked."))
        async with agent(tmp_path, script, select("allow-once")) as run:
            assert (await run.prompt("hi")).stop_reason == "end_turn"
            response = await run.prompt("/usage")
            assert response.stop_reason == "end_turn"
            shown = SESSION_ONLY.fullmatch(run.texts()[-1])
            assert shown is not None, run.texts()[-1]
            assert shown["input"] != "0"  # the first prompt's tokens
            assert "The model was asked." not in run.texts()  # /usage sends the model nothing
            # Issue 52.1: a gateway token has no windows (rate_limits_available false): the meter,
            # read when the session's Claude Code started, long before this, sent nothing.
            assert [u for u in run.of("usage_update") if "rateLimits" in u.get("_meta", {})] == []

    asyncio.run(go())
