"""A meter from the first second (issue 52.1, part; :mod:`lifecycle.agent.meter`): the account's
windows, read from Claude Code's ``get_usage`` when a session's Claude Code starts, as a
``usage_update`` before any prompt.

The readings have the shape Claude Code 2.1.337 answers (``rate_limits`` with ``utilization`` in
percent and ``resets_at`` ISO 8601: the reference adapter's ``usageResponseSchema``,
``dist/usage-markdown.js``; ``API_KEY_READING`` as probed through the SDK's control channel).
Expected values are literals; the reading is made at 1796400000 = 2026-12-04T16:00:00Z.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import acp
import pytest
from acp_harness import FakeClaude, Wire, recording_agent

import lifecycle.agent.translate as translate
from lifecycle.agent.meter import meter_update

NOW = 1796400000
CLAUDE_AI_READING: dict[str, Any] = {
    "session": {"total_cost_usd": 0, "total_api_duration_ms": 0, "total_duration_ms": 10, "model_usage": {}},
    "subscription_type": "max",
    "rate_limits_available": True,
    "rate_limits": {
        "five_hour": {"utilization": 37, "resets_at": "2026-12-04T22:02:03Z"},
        "seven_day": {"utilization": 12.5, "resets_at": "2026-12-09T21:02:03+00:00"},
        "seven_day_oauth_apps": None,
        "seven_day_opus": {"utilization": 0, "resets_at": None},
        "seven_day_sonnet": None,
    },
    "behaviors": None,
}
API_KEY_READING: dict[str, Any] = {
    "session": {"total_cost_usd": 0, "total_api_duration_ms": 0, "total_duration_ms": 1150, "model_usage": {}},
    "subscription_type": None,
    "rate_limits_available": False,
    "rate_limits": None,
    "behaviors": None,
}
METER = {
    "sessionUpdate": "usage_update",
    "used": 0,
    "size": 0,
    "_meta": {
        "rateLimits": [
            {"window": "five_hour", "usedFraction": 0.37, "resetsAt": "2026-12-04T22:02:03Z"},
            {"window": "seven_day", "usedFraction": 0.125, "resetsAt": "2026-12-09T21:02:03Z"},
            {"window": "seven_day_opus", "usedFraction": 0.0},
        ]
    },
}


def test_a_claude_ai_reading_is_the_neutral_list_with_no_status_invented() -> None:
    assert meter_update(CLAUDE_AI_READING, NOW, None) == METER
    assert meter_update(CLAUDE_AI_READING, NOW, (125, 200000)) == {**METER, "used": 125, "size": 200000}


@pytest.mark.parametrize(
    "reading",
    [API_KEY_READING, None, [], {"rate_limits_available": True, "rate_limits": None}, {"rate_limits_available": 1}],
    ids=["api-key", "none", "list", "no-limits", "available-not-true"],
)
def test_an_account_without_windows_gets_nothing(reading: object) -> None:
    assert meter_update(reading, NOW, None) is None


@pytest.mark.parametrize(
    ("window", "why"),
    [
        ("yes", "not an object"),
        ({"utilization": 101, "resets_at": None}, "over 100"),
        ({"utilization": -1, "resets_at": None}, "negative"),
        ({"utilization": True, "resets_at": None}, "a bool"),
        ({"utilization": "37", "resets_at": None}, "text"),
        ({"utilization": 5, "resets_at": "tomorrow"}, "no ISO time"),
        ({"utilization": 5, "resets_at": 1796421723}, "a number for a time"),
        ({"utilization": 5, "resets_at": "2026-12-04T15:59:59Z"}, "in the past"),
        ({"utilization": 5, "resets_at": "2027-01-09T16:00:01Z"}, "over 35 days ahead"),
        ({"utilization": 5, "resets_at": "2026-13-04T15:59:59Z"}, "no such month"),
    ],
)
def test_a_bad_window_is_left_out_and_the_others_kept(window: object, why: str) -> None:
    """Issue 52.6: a malformed, past or absurdly far reading is ignored (and logged), never guessed."""
    reading = {**CLAUDE_AI_READING, "rate_limits": {**CLAUDE_AI_READING["rate_limits"], "five_hour": window}}
    update = meter_update(reading, NOW, None)
    assert update is not None, why
    assert [e["window"] for e in update["_meta"]["rateLimits"]] == ["seven_day", "seven_day_opus"], why


class MeteredClaude(FakeClaude):
    """Claude Code that answers ``get_usage`` with :data:`READING` (the SDK's control channel)."""

    READING: object = CLAUDE_AI_READING

    def __init__(self, options: Any) -> None:
        super().__init__(options)
        self.asked: list[dict[str, Any]] = []
        self._query = self  # the SDK client's query, which sends control requests

    async def _send_control_request(self, request: dict[str, Any]) -> object:
        self.asked.append(request)
        return self.READING if request.get("subtype") == "get_usage" else {}


class ApiKeyClaude(MeteredClaude):
    READING = API_KEY_READING


async def _until(wire: Wire, found: Any) -> list[dict[str, Any]]:
    """The session's updates once ``found`` holds of them (waits for the agent's frames)."""
    while True:
        updates = [f["params"]["update"] for f in wire.frames if f.get("method") == "session/update"]
        if found(updates):
            return updates
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("claude", [MeteredClaude, ApiKeyClaude])
def test_a_new_session_shows_the_windows_before_any_prompt(
    claude: type[MeteredClaude], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(translate, "_PINNED_NOW", str(NOW))
    agent, clients = recording_agent(tmp_path, monkeypatch, claude)

    async def go() -> list[dict[str, Any]]:
        wire = Wire(agent)  # type: ignore[arg-type]
        await wire.conn.initialize(protocol_version=1)
        sid = (await wire.conn.new_session(cwd=str(tmp_path))).session_id
        await _until(wire, lambda _: clients and clients[0].asked)  # Claude Code was asked
        if claude is ApiKeyClaude:  # nothing to show: a prompt ends, and no meter came before it
            await wire.conn.prompt(session_id=sid, prompt=[acp.text_block("hi")])
            return await _until(wire, lambda u: any(x["sessionUpdate"] == "agent_message_chunk" for x in u))
        return await _until(wire, lambda u: any(x["sessionUpdate"] == "usage_update" for x in u))

    updates = asyncio.run(asyncio.wait_for(go(), 10))
    assert clients[0].asked == [{"subtype": "get_usage"}]
    meters = [u for u in updates if u["sessionUpdate"] == "usage_update" and "rateLimits" in u.get("_meta", {})]
    assert meters == ([] if claude is ApiKeyClaude else [METER])


class FailingAfterFirstClaude(MeteredClaude):
    """The first Claude Code reads the windows; every later one gives no reading (a failed
    ``get_usage``: Claude Code could not reach the account, or a new process starts empty)."""

    made = 0

    def __init__(self, options: Any) -> None:
        super().__init__(options)
        type(self).made += 1
        self.READING = CLAUDE_AI_READING if type(self).made == 1 else None


def test_a_new_session_keeps_what_an_earlier_one_read_until_each_window_resets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 52.1: "a new session must not lose what an earlier session of the same agent knew
    (carry the last reading across sessions until it expires)". The second session starts after
    the 5-hour window's reset (22:02:03) and before the weekly one's: only the weekly is carried,
    as it was read; the opus window, of no known reset, is not."""
    monkeypatch.setattr(translate, "_PINNED_NOW", str(NOW))
    FailingAfterFirstClaude.made = 0
    agent, clients = recording_agent(tmp_path, monkeypatch, FailingAfterFirstClaude)

    async def go() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        wire = Wire(agent)  # type: ignore[arg-type]
        await wire.conn.initialize(protocol_version=1)
        first = (await wire.conn.new_session(cwd=str(tmp_path))).session_id
        await _until(wire, lambda u: any(x["sessionUpdate"] == "usage_update" for x in u))
        monkeypatch.setattr(translate, "_PINNED_NOW", str(NOW + 7 * 3600))  # 23:00 UTC
        second = (await wire.conn.new_session(cwd=str(tmp_path))).session_id

        def meters(sid: str) -> list[dict[str, Any]]:
            frames = [f["params"] for f in wire.frames if f.get("method") == "session/update"]
            mine = [p["update"] for p in frames if p["sessionId"] == sid]
            return [u for u in mine if u["sessionUpdate"] == "usage_update"]

        await _until(wire, lambda _: meters(second))
        return meters(first), meters(second)

    first, second = asyncio.run(asyncio.wait_for(go(), 10))
    assert first == [METER]
    assert second == [
        {
            "sessionUpdate": "usage_update",
            "used": 0,
            "size": 0,
            "_meta": {
                "rateLimits": [{"window": "seven_day", "usedFraction": 0.125, "resetsAt": "2026-12-09T21:02:03Z"}]
            },
        }
    ]
    assert [c.asked for c in clients] == [[{"subtype": "get_usage"}], [{"subtype": "get_usage"}]]
