"""``/usage`` as the reference adapter shows it (issue 52.3, :mod:`lifecycle.agent.usage`).

Expected Markdown is literal: the output of the reference's own ``formatUsageResponse``
(``dist/usage-markdown.js`` of claude-agent-acp 0.101.0), run with Node under ``TZ=UTC`` on the same
readings on 2026-12-07. ``API_KEY_READING`` is what Claude Code 2.1.337's ``get_usage`` answered
an API-key session that had made no request (probed through the SDK's control channel).
"""

from __future__ import annotations

from typing import Any

import pytest

from lifecycle.agent.usage import is_usage_command, parse_usage, usage_markdown

FULL: dict[str, Any] = {
    "session": {
        "total_cost_usd": 1.2345, "total_api_duration_ms": 83000, "total_duration_ms": 45000,
        "model_usage": {
            "claude-sonnet-4-6": {
                "inputTokens": 12345, "outputTokens": 999, "cacheReadInputTokens": 1500000,
                "cacheCreationInputTokens": 0,
            },
            "claude-haiku-4-5": {
                "inputTokens": 100, "outputTokens": 1, "cacheReadInputTokens": 0, "cacheCreationInputTokens": 2048,
            },
        },
    },
    "subscription_type": "Max",
    "rate_limits_available": True,
    "rate_limits": {
        "five_hour": {"utilization": 37, "resets_at": "2026-12-04T22:02:03Z"},
        "seven_day": {"utilization": 0, "resets_at": "2026-12-09T21:02:03Z"},
        "seven_day_opus": {"utilization": 12.5, "resets_at": None},
        "seven_day_sonnet": None,
    },
    "behaviors": None,
}
API_KEY_READING: dict[str, Any] = {
    "session": {
        "total_cost_usd": 0, "total_api_duration_ms": 0, "total_duration_ms": 1150, "total_lines_added": 0,
        "total_lines_removed": 0, "model_usage": {},
    },
    "subscription_type": None,
    "rate_limits_available": False,
    "rate_limits": None,
    "behaviors": None,
}  # fmt: skip
SCOPED: dict[str, Any] = {
    **FULL,
    "subscription_type": "Pro | *x*",
    "rate_limits": {
        "five_hour": {"utilization": 100, "resets_at": "not a date"},
        "seven_day": None,
        "model_scoped": [{"display_name": "Opus", "utilization": 0.4, "resets_at": "2026-12-09T21:02:03Z"}],
    },
}  # fmt: skip


def utc(seconds: int) -> tuple[int, str]:
    return 0, "UTC"


@pytest.mark.parametrize(
    ("reading", "markdown"),
    [
        (
            FULL,
            "## Usage\n\n> Claude Max subscription usage\n\n### Limits\n\n**5-hour limit** — **37%** · Resets Dec 4, "
            "10:02 PM UTC\n\n`███████░░░░░░░░░░░░░`\n\n**Weekly · all models** — **0%** · Resets Dec 9, 9:02 PM UTC"
            "\n\n`░░░░░░░░░░░░░░░░░░░░`\n\n**Weekly · Opus** — **12.5%**\n\n`███░░░░░░░░░░░░░░░░░`\n\n---\n\n"
            "### This session\n\n| Cost | API time | Active |\n|:--|:--|:--|\n| $1.23 | 1m 23s | 45s |\n\n"
            "| Breakdown | Tokens |\n|:--|--:|\n| Input | 12.4K |\n| Output | 1K |\n| Cache read | 1.5M |\n"
            "| Cache write | 2K |",
        ),
        (
            API_KEY_READING,
            "## Usage\n\n---\n\n### This session\n\n| Cost | API time | Active |\n|:--|:--|:--|\n| $0.00 | 0s | 1s |"
            "\n\n| Breakdown | Tokens |\n|:--|--:|\n| Input | 0 |\n| Output | 0 |\n| Cache read | 0 |\n"
            "| Cache write | 0 |",
        ),
        (
            SCOPED,
            "## Usage\n\n> Claude Pro \\| \\*x\\* subscription usage\n\n### Limits\n\n**5-hour limit** — **100%** · "
            "Resets not a date\n\n`████████████████████`\n\n**Weekly · Opus** — **0.4%** · Resets Dec 9, 9:02 PM UTC"
            "\n\n`█░░░░░░░░░░░░░░░░░░░`\n\n---\n\n### This session\n\n| Cost | API time | Active |\n|:--|:--|:--|\n"
            "| $1.23 | 1m 23s | 45s |\n\n| Breakdown | Tokens |\n|:--|--:|\n| Input | 12.4K |\n| Output | 1K |\n"
            "| Cache read | 1.5M |\n| Cache write | 2K |",
        ),
    ],
    ids=["claude-ai-login", "api-key", "model-scoped-and-escaped"],
)
def test_the_markdown_is_the_references(reading: dict[str, Any], markdown: str) -> None:
    parsed = parse_usage(reading)
    assert parsed is not None
    assert usage_markdown(parsed, utc) == markdown


def test_the_reset_reads_in_the_agents_zone() -> None:
    parsed = parse_usage(FULL)
    assert parsed is not None
    assert "**5-hour limit** — **37%** · Resets Dec 4, 11:02 PM CET" in usage_markdown(parsed, lambda s: (3600, "CET"))


@pytest.mark.parametrize(
    "reading",
    [
        None,
        "usage",
        {"session": 1},
        {**FULL, "session": {**FULL["session"], "total_cost_usd": -1}},
        {**FULL, "session": {**FULL["session"], "total_cost_usd": float("nan")}},
        {**FULL, "rate_limits_available": "yes"},
        {**FULL, "rate_limits": {"five_hour": {"utilization": 101, "resets_at": None}}},
        {**FULL, "rate_limits": {"five_hour": {"utilization": True, "resets_at": None}}},
        {**FULL, "rate_limits": {"five_hour": {"utilization": 5, "resets_at": 1796421723}}},
        {**FULL, "rate_limits": {"model_scoped": [{"utilization": 5, "resets_at": None}]}},
        {**FULL, "subscription_type": 3},
        {**FULL, "behaviors": {"day": {}, "week": {}}},
    ],
    ids=[
        "none", "text", "no-session", "negative-cost", "nan-cost", "available-not-bool", "over-100",
        "bool-share", "numeric-reset", "scoped-without-name", "subscription-not-text", "empty-behaviors",
    ],
)  # fmt: skip
def test_a_reading_it_cannot_render_is_none(reading: object) -> None:
    """The reference's ``parseUsageResponse`` refuses these (zod): its agent then shows Claude
    Code's own output, as ours does."""
    assert parse_usage(reading) is None


@pytest.mark.parametrize(
    ("text", "usage"), [("/usage", True), ("  /usage\n", True), ("/usage now", False), ("/cost", False)]
)
def test_only_a_prompt_that_is_exactly_usage_is_the_command(text: str, usage: bool) -> None:
    assert is_usage_command(text) is usage
    assert is_usage_command([{"type": "text", "text": "/usage"}]) is False  # not a text alone
