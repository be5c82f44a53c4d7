"""Issue 32, phase 2 on the real CLI: a usage-limit window Claude Code 2.1.332 reports is a
``sessionFailure`` warning of its own for a capable client (docs/acp-agent.md, "Rate-limit
windows"), with the header recipe of ``tests/e2e/test_rate_limits.py`` (a gateway token: Claude
Code reads the unified rate-limit headers only off an API key).

Expected values are literals from the issue ("category ``limit``, severity ``warning``, no actions,
carrier ``session_info_update``", a session-scoped id, never ``<turnId>:error``) and the documented
title; the agent runs with ``TZ=UTC`` so the reset time reads in UTC, formatted here with the
standard library from the reset the headers carried.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from lifecycle.cli.replay import replay_transcript

from .fakeapi import text_reply
from .harness import Script, _fill_cwd, agent, select, tool_turn, tool_use

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]


def warn(share: float, reset: int) -> dict[str, str]:
    """The unified rate-limit headers of a 5-hour window over its 0.9 threshold (the recipe of
    tests/e2e/test_rate_limits.py: ``-surpassed-threshold`` makes it ``allowed_warning``)."""
    return {
        "anthropic-ratelimit-unified-status": "allowed",
        "anthropic-ratelimit-unified-representative-claim": "five_hour",
        "anthropic-ratelimit-unified-5h-utilization": str(share),
        "anthropic-ratelimit-unified-5h-reset": str(reset),
        "anthropic-ratelimit-unified-5h-surpassed-threshold": "0.9",
        "anthropic-ratelimit-unified-reset": str(reset),
    }


def utc(seconds: int) -> str:
    """``3:40 pm`` for a Unix time, in UTC."""
    t = time.gmtime(seconds)
    return f"{t.tm_hour % 12 or 12}:{t.tm_min:02d} {'am' if t.tm_hour < 12 else 'pm'}"


def in_utc(_ws: Any, env: dict[str, str]) -> None:
    env["TZ"] = "UTC"


def test_a_window_warning_is_a_session_info_update_record_then_a_higher_share_updates_it(tmp_path: Path) -> None:
    reset = int(time.time()) + 3600  # an hour left of the 5-hour window

    async def go() -> None:
        first = tool_turn(tool_use("Read", "toolu_read", file_path="{cwd}/notes.txt"))
        first.headers = warn(0.9, reset)
        script = Script(first, text_reply("Read it.", headers=warn(0.95, reset)))
        async with agent(tmp_path, script, select("allow-once"), prepare=in_utc) as run:
            (Path(run.workspace.cwd) / "notes.txt").write_text("notes\n")
            _fill_cwd(script, run)
            response = await run.prompt("read notes.txt")
            # never the turn's failure: the prompt ends normally, with no record on its response
            assert response.stop_reason == "end_turn" and response.field_meta is None
            infos = [u for u in run.of("session_info_update") if "_meta" in u]
            records = [u["_meta"]["jetbrains"]["air"]["sessionFailure"] for u in infos]
            resets = utc(reset)
            assert [(x["revision"], x["title"]) for x in records] == [
                (1, f"You've used 90% of your 5-hour limit · resets {resets} (UTC)"),
                (2, f"You've used 95% of your 5-hour limit · resets {resets} (UTC)"),
            ]
            for x in records:
                assert (x["category"], x["severity"], x["actions"]) == ("limit", "warning", [])
                assert "details" not in x
            ids = {x["id"] for x in records}
            assert len(ids) == 1  # one entry per window, updated in place
            (incident_id,) = ids
            assert incident_id.startswith(f"{run.sid}:") and not incident_id.endswith(":error")

    asyncio.run(go())


def test_claude_code_keeps_no_window_in_its_transcript_so_a_replay_shows_none(tmp_path: Path) -> None:
    """Issue 32 asks that ``lifecycle replay`` show the windows of a replayed transcript. Claude
    Code 2.1.332 writes neither the ``rate_limit_event`` nor the headers' reading into the session's
    transcript (only the usage-limit message of a ``rejected`` window, which is the turn's failure),
    so there is nothing to replay: this test is the evidence docs/acp-agent.md cites. The windows of
    a captured stream (Claude Code's ``stream-json`` lines) go through ``lifecycle trace``."""
    reset = int(time.time()) + 3600

    async def go() -> str:
        async with agent(tmp_path, Script(text_reply("Hi.", headers=warn(0.9, reset))), select("allow-once")) as run:
            await run.prompt("hi")
            records = [
                u["_meta"]["jetbrains"]["air"]["sessionFailure"] for u in run.of("session_info_update") if "_meta" in u
            ]
            assert [x["category"] for x in records] == ["limit"]  # the live session showed the window
            return str(run.sid)

    sid = asyncio.run(go())
    (transcript,) = [p for p in tmp_path.rglob(f"{sid}.jsonl") if "projects" in p.parts]
    text = transcript.read_text()
    for trace in ("rate_limit_event", "allowed_warning", "five_hour", "utilization", "anthropic-ratelimit"):
        assert trace not in text, trace
    view = replay_transcript(transcript)
    assert view.messages >= 2 and view.records == [] and view.active == []
