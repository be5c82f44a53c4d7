"""Issue 32, point 4: which Anthropic response headers make the real Claude Code CLI 2.1.332 print
a ``rate_limit_event``, proven through ``claude_agent_sdk`` (``RateLimitEvent``) and through the
agent (``lifecycle.agent``: one ``usage_update`` per event, issue 32 point 2).

The recipe (read in the bundled CLI, then proven here):

* Claude Code reads the unified rate-limit headers only when it is **not** on an API key: a
  claude.ai login, or a gateway token (``ANTHROPIC_AUTH_TOKEN``, a JWT with
  ``aud=claude-gateway``: the harness's ``auth="gateway"``). On an API key they are dropped
  (``extractQuotaStatusFromHeaders``: ``if(!fEr(It()))`` resets to "allowed" and returns).
* A response is read only if it has ``anthropic-ratelimit-unified-status``.
* Its state is ``allowed_warning`` for the first window (5-hour, then 7-day) with an
  ``anthropic-ratelimit-unified-<5h|7d>-surpassed-threshold`` header, with that window's
  ``-utilization`` and ``-reset``; without one, when a window's utilization crossed its
  time-based thresholds (5-hour: 0.9 within the first 72% of the window; 7-day: 0.75/60%,
  0.5/35%, 0.25/15%). A ``-status: allowed_warning`` alone reads as ``allowed``.
* It prints a ``rate_limit_event`` when that state changes (a deep comparison, or a window's
  ``round(utilization*100)@reset`` changed), never for an identical state; the info carries
  ``status``, ``resetsAt``, ``rateLimitType`` (the window), ``utilization`` (absent when
  allowed), ``surpassedThreshold`` and ``unifiedWindows`` (every window's reading).

Expected values are the values the headers carried and the behaviour above.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk.types import RateLimitEvent

from .claude_cli import run_query
from .fakeapi import FakeAnthropicAPI, MessageReply, text_reply, tool_use_reply
from .harness import Script, _fill_cwd, agent, select, tool_turn, tool_use

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]


#: A window's reading for :func:`rate_limit_headers`: (utilization 0-1, reset in Unix seconds,
#: surpassed threshold or None).
Window = tuple[float, int, float | None]


def rate_limit_headers(
    *,
    five_hour: Window | None = None,
    seven_day: Window | None = None,
    status: str = "allowed",
    claim: str = "five_hour",
) -> dict[str, str]:
    """The Anthropic API's unified rate-limit headers for a subscription or gateway answer.

    What Claude Code 2.1.332 makes of them (this module's docstring): it reads them only
    when it is not on an API key (a claude.ai login, or a gateway token); its own status is
    ``allowed_warning`` for the first window (5-hour, then 7-day) that has a
    ``-<w>-surpassed-threshold`` header (or whose utilization crossed its own time-based
    thresholds); a ``-status`` of ``allowed_warning`` alone reads as ``allowed`` (``rejected``
    stands). ``claim`` (``-representative-claim``) names the window of a plain ``allowed``
    state. ``status`` is ``-status``; ``-reset`` is the claimed window's reset.
    """
    headers = {"anthropic-ratelimit-unified-status": status, "anthropic-ratelimit-unified-representative-claim": claim}
    for key, window in (("5h", five_hour), ("7d", seven_day)):
        if window is None:
            continue
        utilization, reset, threshold = window
        headers[f"anthropic-ratelimit-unified-{key}-utilization"] = str(utilization)
        headers[f"anthropic-ratelimit-unified-{key}-reset"] = str(reset)
        if threshold is not None:
            headers[f"anthropic-ratelimit-unified-{key}-surpassed-threshold"] = str(threshold)
    claimed = five_hour if claim == "five_hour" else seven_day if claim == "seven_day" else None
    if claimed is not None:
        headers["anthropic-ratelimit-unified-reset"] = str(claimed[1])
    return headers


@dataclass(frozen=True)
class Readings:
    """The headers of each state, with reset times taken when the test starts (an hour left of
    the 5-hour window, five days of the 7-day one)."""

    five_hour_reset: int
    seven_day_reset: int

    @classmethod
    def now(cls) -> Readings:
        now = int(time.time())
        return cls(now + 3600, now + 5 * 86400)

    def warn(self, share: float) -> dict[str, str]:
        return rate_limit_headers(five_hour=(share, self.five_hour_reset, 0.9))

    def back(self) -> dict[str, str]:
        return rate_limit_headers(five_hour=(0.1, self.five_hour_reset, None))

    def weekly(self) -> dict[str, str]:
        return rate_limit_headers(
            five_hour=(0.1, self.five_hour_reset, None),
            seven_day=(0.8, self.seven_day_reset, 0.75),
            claim="seven_day",
        )


def reading(reply: MessageReply, headers: dict[str, str]) -> MessageReply:
    reply.headers = headers
    return reply


def read_turn(headers: dict[str, str]) -> MessageReply:
    """A tool use (Read), so one query makes several API requests."""
    return reading(tool_use_reply("hello.txt"), headers)


def windows(messages: list[Any]) -> list[tuple[str, str | None, float | None, int | None]]:
    return [
        (
            m.rate_limit_info.status,
            m.rate_limit_info.rate_limit_type,
            m.rate_limit_info.utilization,
            m.rate_limit_info.resets_at,
        )
        for m in messages
        if isinstance(m, RateLimitEvent)
    ]


def test_a_warning_a_higher_share_allowed_and_the_weekly_window_through_the_sdk() -> None:
    r = Readings.now()
    api = FakeAnthropicAPI(
        [
            read_turn(r.warn(0.9)),
            read_turn(r.warn(0.95)),
            read_turn(r.warn(0.95)),  # the same state again: no event
            read_turn(r.back()),
            text_reply("done", headers=r.weekly()),
        ]
    )
    run = run_query(api, "hi", auth="gateway", allowed_tools=["Read"], max_turns=8)
    assert run.exception is None, run.stderr
    assert len(run.message_requests) == 5
    assert windows(run.messages) == [
        ("allowed_warning", "five_hour", 0.9, r.five_hour_reset),
        ("allowed_warning", "five_hour", 0.95, r.five_hour_reset),
        ("allowed", "five_hour", None, r.five_hour_reset),
        ("allowed_warning", "seven_day", 0.8, r.seven_day_reset),
    ]
    events = [m for m in run.messages if isinstance(m, RateLimitEvent)]
    assert events[0].rate_limit_info.raw["surpassedThreshold"] == 0.9
    assert events[2].rate_limit_info.raw["unifiedWindows"] == {
        "five_hour": {"utilization": 0.1, "resetsAt": r.five_hour_reset}
    }
    assert events[3].rate_limit_info.raw["unifiedWindows"] == {
        "five_hour": {"utilization": 0.1, "resetsAt": r.five_hour_reset},
        "seven_day": {"utilization": 0.8, "resetsAt": r.seven_day_reset, "surpassedThreshold": 0.75},
    }


def test_on_an_api_key_the_headers_make_no_event() -> None:
    r = Readings.now()
    run = run_query(FakeAnthropicAPI([text_reply("ok", headers=r.warn(0.9))]), "hi", auth="api_key")
    assert run.exception is None, run.stderr
    assert run.result is not None and run.result.is_error is False
    assert windows(run.messages) == []


def test_a_warning_status_header_alone_is_no_warning() -> None:
    r = Readings.now()
    headers = rate_limit_headers(five_hour=(0.9, r.five_hour_reset, None), status="allowed_warning")
    run = run_query(FakeAnthropicAPI([text_reply("ok", headers=headers)]), "hi", auth="gateway")
    assert run.exception is None, run.stderr
    # an hour left of five: 80% of the window gone, past the 72% of the 0.9 threshold
    assert windows(run.messages) == [("allowed", "five_hour", None, r.five_hour_reset)]


def test_each_event_reaches_the_editor_as_a_usage_update_before_the_turns_usage(tmp_path: Path) -> None:
    r = Readings.now()

    async def go() -> None:
        script = Script(
            reading(tool_turn(tool_use("Read", "toolu_read", file_path="{cwd}/notes.txt")), r.warn(0.9)),
            text_reply("Read it.", headers=r.weekly()),
        )
        async with agent(tmp_path, script, select("allow-once")) as run:
            (Path(run.workspace.cwd) / "notes.txt").write_text("notes\n")
            _fill_cwd(script, run)
            response = await run.prompt("read notes.txt")
            assert response.stop_reason == "end_turn"
            usage = run.of("usage_update")
            limits = [u for u in usage if "rateLimits" in (u.get("_meta") or {})]
            assert [u["_meta"]["rateLimits"] for u in limits] == [
                [
                    {
                        "window": "five_hour",
                        "status": "allowed_warning",
                        "usedFraction": 0.9,
                        "resetsAt": iso(r.five_hour_reset),
                    }
                ],
                [
                    {
                        "window": "seven_day",
                        "status": "allowed_warning",
                        "usedFraction": 0.8,
                        "resetsAt": iso(r.seven_day_reset),
                    },
                    {"window": "five_hour", "usedFraction": 0.1, "resetsAt": iso(r.five_hour_reset)},
                ],
            ]
            # the reference's key: the info object as Claude Code sent it
            first = limits[0]["_meta"]["_claude/rateLimit"]
            assert (first["status"], first["rateLimitType"], first["utilization"], first["resetsAt"]) == (
                "allowed_warning",
                "five_hour",
                0.9,
                r.five_hour_reset,
            )
            # the first arrived before the turn's first usage: nothing known of the context yet
            assert (limits[0]["used"], limits[0]["size"]) == (0, 0)
            assert usage.index(limits[0]) == 0
            # the turn's own usage_update (its result) still comes, last
            assert "rateLimits" not in (usage[-1].get("_meta") or {}) and usage[-1]["size"] > 0
            # phase 2: each window is also an incident of its own (tests/e2e/test_rate_limit_windows.py)
            assert [r.title.split(" · ")[0] for r in run.records()] == [
                "You've used 90% of your 5-hour limit",
                "You've used 80% of your weekly limit",
            ]

    asyncio.run(go())


def iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
