"""The translation lane (:mod:`lifecycle.agent.translate`). Issue 32, point 2: every ``RateLimitEvent``
reaches the client as data, without processes.

:func:`lifecycle.agent.translate.translate` on the real ``claude_agent_sdk`` classes: one
``usage_update`` step, sent before the turn's first usage too (the reference drops it then,
claude-agent-acp #1127), with the renderer's last known ``used``/``size`` (``0``/``0`` while
none is known: the ACP schema requires both), in ``_meta`` the info object as Claude Code sent it
under the reference's key ``_claude/rateLimit`` and ``rateLimits``, the provider-neutral list ACP
discussion #2235 proposes (docs/acp-agent.md, "Rate-limit windows"). The infos are the ones
Claude Code 2.1.332 printed (tests/e2e/test_rate_limits.py); expected values are literals.
"""

from __future__ import annotations

from typing import Any

import pytest
from acp.schema import UsageUpdate
from claude_agent_sdk import AssistantMessage, TextBlock, ToolUseBlock
from claude_agent_sdk.types import RateLimitEvent, RateLimitInfo
from sdk_messages import result_message

from lifecycle.agent.mcp import McpServers
from lifecycle.agent.messages import read
from lifecycle.agent.stream import StreamRenderer
from lifecycle.agent.translate import translate
from lifecycle.events import MessagesReplaced, RateLimitWindow

WARNING_INFO: dict[str, Any] = {
    "status": "allowed_warning",
    "resetsAt": 1796421723,
    "rateLimitType": "five_hour",
    "utilization": 0.9,
    "isUsingOverage": False,
    "surpassedThreshold": 0.9,
    "unifiedWindows": {"five_hour": {"utilization": 0.9, "resetsAt": 1796421723, "surpassedThreshold": 0.9}},
}
WEEKLY_INFO: dict[str, Any] = {
    "status": "allowed_warning",
    "resetsAt": 1796850123,
    "rateLimitType": "seven_day",
    "utilization": 0.8,
    "isUsingOverage": False,
    "surpassedThreshold": 0.75,
    "unifiedWindows": {
        "five_hour": {"utilization": 0.1, "resetsAt": 1796421723},
        "seven_day": {"utilization": 0.8, "resetsAt": 1796850123, "surpassedThreshold": 0.75},
    },
}


def event(info: Any) -> RateLimitEvent:
    typed = RateLimitInfo(
        status=info.get("status") if isinstance(info, dict) else None,  # type: ignore[arg-type]
        resets_at=info.get("resetsAt") if isinstance(info, dict) else None,
        rate_limit_type=info.get("rateLimitType") if isinstance(info, dict) else None,
        utilization=info.get("utilization") if isinstance(info, dict) else None,
        raw=info if isinstance(info, dict) else {},
    )
    return RateLimitEvent(rate_limit_info=typed, uuid="u1", session_id="s1")


def one_update(message: object, renderer: StreamRenderer, *, quiet: bool = False) -> dict[str, Any]:
    steps, ends = translate(read(message), renderer, McpServers(), quiet=quiet)
    assert not ends
    # shown, and judged (phase 2): the event's window on the update's step, each other window after it
    assert isinstance(steps[0].event, RateLimitWindow) and all(not s.updates for s in steps[1:])
    assert len(steps[0].updates) == 1
    update = steps[0].updates[0]
    UsageUpdate.model_validate(update)  # a valid ACP usage_update
    return update


def test_an_event_before_any_usage_is_sent_with_zero_used_and_size() -> None:
    r = StreamRenderer("/p")
    r.start_turn()
    assert one_update(event(WARNING_INFO), r) == {
        "sessionUpdate": "usage_update",
        "used": 0,
        "size": 0,
        "_meta": {
            "_claude/rateLimit": WARNING_INFO,
            "rateLimits": [
                {
                    "window": "five_hour",
                    "status": "allowed_warning",
                    "usedFraction": 0.9,
                    "resetsAt": "2026-12-04T22:02:03Z",
                }
            ],
        },
    }


def test_an_event_after_a_result_reuses_the_last_used_and_size() -> None:
    r = StreamRenderer("/p")
    r.start_turn()
    answer = AssistantMessage(content=[TextBlock("x")], model="claude-sonnet-4-5")
    answer.usage = {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 5}
    r.assistant(answer)
    r.result(result_message(model_usage={"claude-sonnet-4-5": {"contextWindow": 200000}}))
    update = one_update(event(WEEKLY_INFO), r)
    assert (update["used"], update["size"]) == (125, 200000)
    assert update["_meta"]["rateLimits"] == [
        {"window": "seven_day", "status": "allowed_warning", "usedFraction": 0.8, "resetsAt": "2026-12-09T21:02:03Z"},
        # no status of its own from Claude Code: left out, not guessed
        {"window": "five_hour", "usedFraction": 0.1, "resetsAt": "2026-12-04T22:02:03Z"},
    ]
    assert update["_meta"]["_claude/rateLimit"] == WEEKLY_INFO
    # the model of the turn's answer, as the reference attaches it to every usage_update (attachUsageModel)
    assert update["_meta"]["_claude/model"] == "claude-sonnet-4-5"


def test_a_cancelled_turn_still_shows_the_sessions_window() -> None:
    update = one_update(event(WARNING_INFO), StreamRenderer("/p"), quiet=True)
    assert update["_meta"]["rateLimits"][0]["status"] == "allowed_warning"


def test_unreadable_values_are_left_out_of_the_neutral_entry_but_kept_raw() -> None:
    info = {"status": "rejected", "rateLimitType": "five_hour", "utilization": "lots", "resetsAt": -5}
    update = one_update(event(info), StreamRenderer("/p"))
    assert update["_meta"] == {
        "_claude/rateLimit": info,
        "rateLimits": [{"window": "five_hour", "status": "rejected"}],
    }


@pytest.mark.parametrize("info", [{"status": "paused"}, {"status": None}, {}])
def test_an_event_without_a_known_status_shows_nothing(info: dict[str, Any]) -> None:
    steps, ends = translate(read(event(info)), StreamRenderer("/p"), McpServers(), quiet=False)
    assert (steps, ends) == ([], False)


def test_the_raw_object_sent_is_a_copy() -> None:
    info = dict(WARNING_INFO)
    update = one_update(event(info), StreamRenderer("/p"))
    info["status"] = "rejected"
    assert update["_meta"]["_claude/rateLimit"]["status"] == "allowed_warning"


# Issue 49.3: messages Claude Code replaced. The lines are CLI 2.1.337's: an unparsable tool call
# (``__unparsedToolInput``, printed for a Read whose streamed input was cut, tests/e2e) and the
# answer that names it in ``supersedes`` (the field as ``sdk.d.ts`` of npm
# @anthropic-ai/claude-agent-sdk 0.3.337 types it, on the raw line; the SDK's class has none, so
# the agent's client sets the attribute, as here).
REPLACED = "6b667b4d-1e30-479b-a1e6-ffa9e88465b0"
CUT = {"__unparsedToolInput": {"raw": '{"file_path": "x.txt", ', "len": 23}}
UNPARSABLE = AssistantMessage(
    content=[ToolUseBlock(id="toolu_bad", name="Read", input=CUT)], model="claude-opus-5-5", uuid=REPLACED
)


def _replacing(supersedes: object) -> AssistantMessage:
    message = AssistantMessage(content=[TextBlock(text="Let me read it.")], model="claude-opus-5-5", uuid="d23293f6")
    message.supersedes = supersedes  # type: ignore[attr-defined]
    return message


def test_a_replacing_message_ends_the_tool_calls_of_the_messages_it_replaces() -> None:
    renderer = StreamRenderer("/project")
    (announced,), _ = translate(read(UNPARSABLE), renderer, McpServers(), quiet=False)
    assert [u["sessionUpdate"] for u in announced.updates] == ["tool_call"]
    steps, _ = translate(read(_replacing([REPLACED])), renderer, McpServers(), quiet=False)
    ended = steps[0].updates
    assert [(u["sessionUpdate"], u["toolCallId"], u["status"]) for u in ended] == [
        ("tool_call_update", "toolu_bad", "failed")
    ]
    # Ended once: the turn's end finds nothing open.
    assert renderer.close_open_tools() == []
    # The replacement is judged before the answer itself (it may supersede a held failure).
    assert [type(step.event).__name__ for step in steps] == ["MessagesReplaced", "Assistant"]
    assert steps[0].event == MessagesReplaced(uuids=(REPLACED,))


def test_a_quiet_turn_s_replacement_is_not_judged() -> None:
    renderer = StreamRenderer("/project")
    translate(read(UNPARSABLE), renderer, McpServers(), quiet=False)
    steps, _ = translate(read(_replacing([REPLACED])), renderer, McpServers(), quiet=True)
    assert steps == []  # a cancelled turn shows and judges nothing more
    assert renderer.close_open_tools() == []  # the renderer still saw it


@pytest.mark.parametrize(
    "supersedes",
    [None, REPLACED, [7, None], ["unknown-uuid"], [""], ["x" * 101]],
)
def test_a_supersedes_that_names_no_message_of_the_turn_ends_nothing(supersedes: object) -> None:
    # An unknown uuid is a no-op (the CLI's own words); a value that is no list of short strings
    # names nothing.
    renderer = StreamRenderer("/project")
    translate(read(UNPARSABLE), renderer, McpServers(), quiet=False)
    steps, _ = translate(read(_replacing(supersedes)), renderer, McpServers(), quiet=False)
    assert all(u.get("toolCallId") != "toolu_bad" for s in steps for u in s.updates)
    assert [u["status"] for u in renderer.close_open_tools()] == ["failed"]  # still open until then


def test_what_a_message_replaces_is_read_once_and_bounded() -> None:
    assert read(_replacing(["a", "b"])).replaces == ("a", "b")
    assert read(_replacing([f"u{i}" for i in range(100)])).replaces == tuple(f"u{i}" for i in range(64))
    assert read(UNPARSABLE).replaces == ()


def test_a_reading_of_no_named_window_adds_no_entry() -> None:
    """Issue 52.5: every turn on a claude.ai login sent ``[{"status": "allowed"}]``; an entry
    always names its window, so a reading of none leaves ``rateLimits`` out (the raw object, the
    reference's key, is still there)."""
    update = one_update(event({"status": "allowed"}), StreamRenderer("/p"))
    assert update["_meta"] == {"_claude/rateLimit": {"status": "allowed"}}


def test_every_window_judged_carries_the_time_it_was_read() -> None:
    """Issue 52.5: the ledger's one clock is the reading's ``observed_at`` (Unix seconds); a
    reading made now is later than 2020-01-01T00:00:00Z (1577836800)."""
    steps, _ = translate(read(event(WEEKLY_INFO)), StreamRenderer("/p"), McpServers(), quiet=False)
    read_at = [s.event.observed_at for s in steps if isinstance(s.event, RateLimitWindow)]
    assert len(read_at) == 2 and all(isinstance(t, int) and t > 1577836800 for t in read_at)
