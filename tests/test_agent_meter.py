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
from dataclasses import replace
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import ClientCapabilities
from acp_harness import AIR, FakeClaude, Wire, recording_agent
from hypothesis import given, settings
from hypothesis import strategies as st
from sdk_messages import result_message

import lifecycle.agent.translate as translate
from lifecycle.agent.meter import METER_WINDOWS, MeterMemory, meter_steps, meter_windows
from lifecycle.events import RateLimitWindow

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
# The statuses are Claude Code's for this reading (CLI 2.1.337's early-warning table: the 5-hour
# window warns at 90 % with at most 72 % of its 5 hours gone, the weekly at 75/50/25 % with at most
# 60/35/15 % of its week gone): 37 % and 12.5 % are below every threshold, so all are allowed.
INFO = {
    "status": "allowed",
    "resetsAt": 1796421723,
    "rateLimitType": "five_hour",
    "utilization": 0.37,
    "unifiedWindows": {
        "five_hour": {"status": "allowed", "resetsAt": 1796421723, "utilization": 0.37},
        "seven_day": {"status": "allowed", "resetsAt": 1796850123, "utilization": 0.125},
        "seven_day_opus": {"status": "allowed", "utilization": 0.0},
    },
}
METER = {
    "sessionUpdate": "usage_update",
    "used": 0,
    "size": 0,
    "_meta": {
        "_claude/rateLimit": INFO,
        "rateLimits": [
            {"window": "five_hour", "status": "allowed", "usedFraction": 0.37, "resetsAt": "2026-12-04T22:02:03Z"},
            {"window": "seven_day", "status": "allowed", "usedFraction": 0.125, "resetsAt": "2026-12-09T21:02:03Z"},
            {"window": "seven_day_opus", "status": "allowed", "usedFraction": 0.0},
        ],
    },
}


def meter_update(reading: object, now: int, context: tuple[int, int] | None) -> dict[str, Any] | None:
    """The ``usage_update`` the meter's steps show for ``reading`` (None: no step)."""
    steps = meter_steps(meter_windows(reading, now), context)
    return steps[0].updates[0] if steps else None


def test_a_claude_ai_reading_is_the_neutral_list_and_the_references_object() -> None:
    assert meter_update(CLAUDE_AI_READING, NOW, None) == METER
    assert meter_update(CLAUDE_AI_READING, NOW, (125, 200000)) == {**METER, "used": 125, "size": 200000}


def test_every_window_goes_to_the_ledger_once() -> None:
    """The first step carries the named window, then one step per other window (as a turn's
    ``rate_limit_event`` does): a warning can start from each."""
    steps = meter_steps(meter_windows(CLAUDE_AI_READING, NOW), None)
    events = [s.event for s in steps]
    assert [(e.window, e.status, e.observed_at) for e in events if isinstance(e, RateLimitWindow)] == [
        ("five_hour", "allowed", NOW),
        ("seven_day", "allowed", NOW),
        ("seven_day_opus", "allowed", NOW),
    ]
    assert [len(s.updates) for s in steps] == [1, 0, 0]


@pytest.mark.parametrize(
    ("five_hour", "status"),
    [
        # 4.5 hours to the reset: 10 % of the window gone, 92 % used: over 90 % within 72 %
        ({"utilization": 92, "resets_at": "2026-12-04T20:30:00Z"}, "allowed_warning"),
        # 1 hour to the reset: 80 % of the window gone, past 72 %: Claude Code does not warn
        ({"utilization": 92, "resets_at": "2026-12-04T17:00:00Z"}, "allowed"),
        ({"utilization": 89.9, "resets_at": "2026-12-04T20:30:00Z"}, "allowed"),
        ({"utilization": 100, "resets_at": "2026-12-04T17:00:00Z"}, "rejected"),
        ({"utilization": 95, "resets_at": None}, "allowed"),  # no reset: no share of time to judge
    ],
)
def test_the_status_is_the_one_claude_code_derives(five_hour: dict[str, Any], status: str) -> None:
    reading = {**CLAUDE_AI_READING, "rate_limits": {"five_hour": five_hour}}
    update = meter_update(reading, NOW, None)
    assert update is not None
    assert update["_meta"]["_claude/rateLimit"]["status"] == status
    assert update["_meta"]["rateLimits"][0]["status"] == status


def test_the_most_pressing_window_is_the_references_object() -> None:
    """The weekly window at 60 % with 1 day of 7 gone (14 %, within 15/35 %: past 25 and 50 %)
    warns; the 5-hour one does not: ``_claude/rateLimit`` names the weekly, listed first."""
    limits = {
        "five_hour": {"utilization": 10, "resets_at": "2026-12-04T20:00:00Z"},
        "seven_day": {"utilization": 60, "resets_at": "2026-12-10T16:00:00Z"},
    }
    update = meter_update({**CLAUDE_AI_READING, "rate_limits": limits}, NOW, None)
    assert update is not None
    assert update["_meta"]["_claude/rateLimit"]["rateLimitType"] == "seven_day"
    assert update["_meta"]["_claude/rateLimit"]["status"] == "allowed_warning"
    assert [(e["window"], e["status"]) for e in update["_meta"]["rateLimits"]] == [
        ("seven_day", "allowed_warning"),
        ("five_hour", "allowed"),
    ]


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
                "_claude/rateLimit": {
                    "status": "allowed",
                    "resetsAt": 1796850123,
                    "rateLimitType": "seven_day",
                    "utilization": 0.125,
                    "unifiedWindows": {
                        "seven_day": {"status": "allowed", "resetsAt": 1796850123, "utilization": 0.125}
                    },
                },
                "rateLimits": [
                    {
                        "window": "seven_day",
                        "status": "allowed",
                        "usedFraction": 0.125,
                        "resetsAt": "2026-12-09T21:02:03Z",
                    }
                ],
            },
        }
    ]
    assert [c.asked for c in clients] == [[{"subtype": "get_usage"}], [{"subtype": "get_usage"}]]


class WarningClaude(MeteredClaude):
    """A claude.ai login at 92 % of its 5-hour window, 4.5 hours before its reset (Claude Code's
    early warning: over 90 % within 72 % of the window)."""

    READING: object = {
        **CLAUDE_AI_READING,
        "rate_limits": {"five_hour": {"utilization": 92, "resets_at": "2026-12-04T20:30:00Z"}},
    }


def test_a_window_warning_starts_from_the_reading_before_any_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 52.1: "a window warning (the existing incident) starts from it without waiting for a
    turn": a capable client gets the ``limit`` warning of docs/acp-agent.md ("Rate-limit
    windows") on a ``session_info_update``, with a session-scoped id, no prompt sent."""
    monkeypatch.setattr(translate, "_PINNED_NOW", str(NOW))
    agent, _ = recording_agent(tmp_path, monkeypatch, WarningClaude)

    async def go() -> tuple[str, list[dict[str, Any]]]:
        wire = Wire(agent)  # type: ignore[arg-type]
        await wire.conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities(field_meta=AIR))
        sid = (await wire.conn.new_session(cwd=str(tmp_path))).session_id
        updates = await _until(wire, lambda u: any(x["sessionUpdate"] == "session_info_update" for x in u))
        return sid, updates

    sid, updates = asyncio.run(asyncio.wait_for(go(), 10))
    infos = [u for u in updates if u["sessionUpdate"] == "session_info_update"]
    record = infos[0]["_meta"]["jetbrains"]["air"]["sessionFailure"]
    assert (record["category"], record["severity"], record["actions"], record["revision"]) == (
        "limit",
        "warning",
        [],
        1,
    )
    assert record["title"].startswith("You've used 92% of your 5-hour limit · resets ")
    assert record["id"].startswith(f"{sid}:") and not record["id"].endswith(":error")
    meter = next(u for u in updates if u["sessionUpdate"] == "usage_update")
    assert meter["_meta"]["_claude/rateLimit"]["status"] == "allowed_warning"


def _event(window: str | None, resets_at: int | None, *, status: str | None = "allowed_warning") -> RateLimitWindow:
    return RateLimitWindow(window=window, status=status, utilization=0.9, resets_at=resets_at, observed_at=NOW)


def test_the_memory_keeps_a_turns_reading_for_the_next_session() -> None:
    """Issue 52.1: a turn's ``rate_limit_event`` (its windows, the session's ``_emit``) is kept as
    the meter's reading is: the next session sees it, read again at its own time."""
    memory = MeterMemory()
    memory.saw(_event("five_hour", NOW + 3600))
    memory.saw(_event("seven_day", NOW + 86400, status=None))  # another window of the event
    recalled = memory.recall(NOW + 60)
    assert [(w.window, w.status, w.observed_at) for w in recalled] == [
        ("five_hour", "allowed_warning", NOW + 60),
        # no status of its own: 90 % with 6 of 7 days gone is allowed (Claude Code's table)
        ("seven_day", "allowed", NOW + 60),
    ]
    assert memory.recall(NOW + 3600) == (
        replace(_event("seven_day", NOW + 86400), observed_at=NOW + 3600, status="allowed"),
    )


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (_event(None, NOW + 3600), "names no window"),
        (_event("five_hour", None), "no reset: when it expires is not known"),
        (_event("five_hour", NOW + 1800), "out of order: an older period than the one kept"),
        (_event("five_hour", NOW + 36 * 86400), "absurdly far: over 35 days ahead"),
    ],
)
def test_the_memory_ignores_bad_readings(bad: RateLimitWindow, why: str) -> None:
    """Issue 52.6: a reading the ledger would ignore never replaces the one kept, nor invents one."""
    memory = MeterMemory()
    memory.saw(_event("five_hour", NOW + 3600))
    memory.saw(bad)
    assert [(w.window, w.resets_at) for w in memory.recall(NOW)] == [("five_hour", NOW + 3600)], why


def test_the_memory_is_bounded() -> None:
    """One bound for every list of windows (issue 52.5): 16 windows kept, the oldest let go."""
    memory = MeterMemory()
    for i in range(18):
        memory.saw(_event(f"window_{i}", NOW + 3600))
    assert [w.window for w in memory.recall(NOW)] == [f"window_{i}" for i in range(2, 18)]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
_TIMES = st.sampled_from(
    ["2026-12-04T22:02:03Z", "2026-12-04T15:00:00Z", "2027-06-01T00:00:00Z", "2026-12-04T16:00:00+00:00", "x"]
)
_WINDOW_READING = st.fixed_dictionaries(
    {},
    optional={
        "utilization": st.one_of(st.floats(), st.integers(-5, 200), st.text(max_size=3), st.booleans()),
        "resets_at": st.one_of(_TIMES, st.integers(), st.none()),
    },
)


@given(
    windows=st.dictionaries(
        st.sampled_from([*METER_WINDOWS, "overage", "five hour", ""]), _WINDOW_READING | _JSON, max_size=7
    ),
    available=st.sampled_from([True, False, 1, None]),
)
@settings(max_examples=300, deadline=None)
def test_no_reading_crashes_the_meter_or_invents_a_limit(windows: dict[str, Any], available: object) -> None:
    """Issue 52.6: whatever Claude Code's reading holds (any JSON in any field), the meter raises
    nothing and shows only what the reading says of Claude Code's own windows: a share from 0 to
    1, a reset after the reading and at most 35 days ahead, a status of the three."""
    reading = {"rate_limits_available": available, "rate_limits": windows}
    found = meter_windows(reading, NOW)
    for w in found:
        assert available is True and w.window in METER_WINDOWS and w.window in windows
        assert w.utilization is not None and 0 <= w.utilization <= 1
        assert w.resets_at is None or NOW < w.resets_at <= NOW + 35 * 86400
        assert w.status in ("allowed", "allowed_warning", "rejected")
    steps = meter_steps(found, None)
    assert len(steps) == len(found)
    memory = MeterMemory()
    memory.remember(found)
    assert all(w.resets_at is not None and w.resets_at > NOW for w in memory.recall(NOW))


class RefusingClaude(MeteredClaude):
    """A claude.ai login whose 5-hour window is all used (resets at 17:00 UTC, an hour after the
    reading): Claude Code refuses the first prompt with its own usage-limit message, as it does
    with no ``rate_limit_event`` when its process read no headers yet (a new process starts
    empty: issue 52.1)."""

    READING: object = {
        **CLAUDE_AI_READING,
        "rate_limits": {"five_hour": {"utilization": 100, "resets_at": "2026-12-04T17:00:00Z"}},
    }

    async def query(self, prompt: Any) -> None:
        from claude_agent_sdk import AssistantMessage, TextBlock

        async for message in prompt:
            self.sent.append(message)
        text = "You've hit your 5-hour limit · resets 5pm (UTC)"
        self.queue.put_nowait(AssistantMessage(content=[TextBlock(text=text)], model="<synthetic>", error="rate_limit"))
        self.queue.put_nowait(result_message(session_id="x", result=text, is_error=True, stop_reason="stop_sequence"))


def test_a_refused_first_prompt_says_when_to_retry_from_the_meter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 52.2 with 52.1: the refused *first* prompt (codex-acp PR #524: "exactly the moment the
    reset matters") carries the reset the meter read, ``rejected`` at 100 %, in a legacy client's
    error data (docs/acp-agent.md, "A refused turn says when to retry")."""
    monkeypatch.setattr(translate, "_PINNED_NOW", str(NOW))
    agent, _ = recording_agent(tmp_path, monkeypatch, RefusingClaude)

    async def go() -> Any:
        wire = Wire(agent)  # type: ignore[arg-type]
        await wire.conn.initialize(protocol_version=1)
        sid = (await wire.conn.new_session(cwd=str(tmp_path))).session_id
        await _until(wire, lambda u: any(x["sessionUpdate"] == "usage_update" for x in u))
        with pytest.raises(acp.RequestError) as refused:
            await wire.conn.prompt(session_id=sid, prompt=[acp.text_block("hi")])
        return refused.value

    error = asyncio.run(asyncio.wait_for(go(), 10))
    assert error.data == {"errorKind": "rate_limit", "resetsAt": "2026-12-04T17:00:00Z", "retryAfterSeconds": 3600}
