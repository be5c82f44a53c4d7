"""The Claude SDK edge against what the real CLI 2.1.332 emitted under injected API faults.

The recordings (tests/fixtures/claude-cli-2.1.332/*.sdk.jsonl, copied from shared/fixtures) are
every message ``claude_agent_sdk.query()`` yielded, then the exception it raised. They are rebuilt
into the SDK's own classes, translated, and fed through a ledger; the records must carry the
category, severity and actions the spec's tables assign, with Claude's own text as the title.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")  # the [claude] extra; always installed by [test]

from claude_agent_sdk import ResultError
from claude_agent_sdk.types import (
    AssistantMessage,
    RateLimitEvent,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from session_harness import Session

from lifecycle import PromptResponseOut, PromptStarted
from lifecycle.claude import from_sdk_exception, from_sdk_message, from_stream_json

HERE = Path(__file__).parent / "fixtures" / "claude-cli-2.1.332"


def _block(b: dict[str, Any]) -> Any:
    if "text" in b:
        return TextBlock(text=b["text"])
    if "tool_use_id" in b:
        return ToolResultBlock(**b)
    if "name" in b and "input" in b:
        return ToolUseBlock(**b)
    raise AssertionError(f"unexpected block {b}")


def rebuild(line: dict[str, Any]) -> Any:
    """A recorded line as the SDK object (or exception) it was."""
    if "raised" in line:
        assert line["raised"] == "ResultError"
        attrs = line["attrs"]
        data = {k: attrs[k] for k in ("subtype", "errors", "result", "api_error_status", "terminal_reason")}
        return ResultError(line["message"], data=data, exit_code=attrs["exit_code"])
    cls, f = line["class"], dict(line["fields"])
    if cls == "AssistantMessage":
        f["content"] = [_block(b) for b in f["content"]]
        return AssistantMessage(**f)
    if cls == "UserMessage":
        if isinstance(f["content"], list):
            f["content"] = [_block(b) for b in f["content"]]
        return UserMessage(**f)
    if cls == "ResultMessage":
        return ResultMessage(**f)
    if cls == "SystemMessage":
        return SystemMessage(**f)
    if cls == "RateLimitEvent":
        return RateLimitEvent(**f)
    raise AssertionError(cls)


def stream_json(line: dict[str, Any]) -> dict[str, Any] | None:
    """The same recorded message in the CLI's stream-json form."""
    cls, f = line.get("class"), line.get("fields", {})
    if cls == "SystemMessage":
        return dict(f["data"])
    if cls == "AssistantMessage":
        content = [
            {"type": "text", "text": b["text"]} if "text" in b else {"type": "tool_use", **b} for b in f["content"]
        ]
        return {
            "type": "assistant",
            "uuid": f["uuid"],
            "parent_tool_use_id": f["parent_tool_use_id"],
            "error": f["error"],
            "message": {"model": f["model"], "content": content},
        }
    if cls == "ResultMessage":
        return {"type": "result", **f}
    if cls == "UserMessage":
        return {"type": "user", "message": {"content": f["content"]}}
    if cls == "RateLimitEvent":
        return {"type": "rate_limit_event", **f}
    return None


def recorded(scenario: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (HERE / f"{scenario}.sdk.jsonl").read_text().splitlines() if x.strip()]


# scenario -> (category, actions, title) of the final record, or None when the turn succeeds.
# Derived from the spec's tables and the README of the recordings (what the CLI said).
EXPECTED: dict[str, tuple[str, list[str], str] | None] = {
    "success": None,
    "max_tokens_once": None,
    "retry_then_success": None,
    "http429": (
        "limit",
        ["retry"],
        "API Error: Request rejected (429) · Number of requests has exceeded your rate limit",
    ),
    "usage_limit_apikey": ("limit", ["retry"], "re:API Error: Request rejected \\(429\\) · This request would .*"),
    "usage_limit_gateway": ("limit", [], "You've hit your 5-hour limit · resets 4:06pm (UTC)"),
    "http529": ("service", ["retry"], "re:API Error: 529 Overloaded\\. .*"),
    "http500": ("service", ["retry"], "re:API Error: 500 Internal server error\\. .*"),
    "sse_midstream_overloaded": ("service", ["retry"], "re:API Error: 529 Overloaded\\. .*"),
    "http401": ("access", ["login"], "Invalid API key · Fix external API key"),
    "http403": ("access", ["login"], "re:Failed to authenticate\\. API Error: 403 .*"),
    "http400": ("service", ["retry"], "API Error: 400 messages: text content blocks must be non-empty"),
    "http402_billing": ("service", ["retry"], "API Error: 402 Your account has a billing problem."),
    "http400_credit": ("limit", [], "Credit balance is too low"),
    "http402_credit": ("limit", [], "Credit balance is too low"),
    "http404_model": ("request", [], "re:There's an issue with the selected model .*"),
    "http400_org_disabled": ("request", [], "re:Your ANTHROPIC_API_KEY belongs to a disabled organization .*"),
    "http413": ("request", [], "re:Request too large \\(max 32MB\\)\\. .*"),
    "http400_prompt_too_long": ("limit", ["new_session"], "re:Prompt is too long · .*"),
    "max_tokens": ("limit", [], "re:API Error: Claude's response exceeded the 128000 output token maximum\\. .*"),
    # server_error with no HTTP status after retries that got no response: the API was unreachable
    "conn_refused": ("connection", ["retry"], "re:API Error: Connection refused .*"),
    "conn_closed": ("connection", ["retry"], "re:API Error: Connection dropped \\(ECONNRESET\\)\\. .*"),
    "sse_truncated": ("connection", ["retry"], "re:API Error: Connection dropped \\(ECONNRESET\\)\\. .*"),
    "max_turns": ("limit", [], "Reached maximum number of turns (2)"),
    "max_budget": ("limit", ["new_session"], "Reached maximum budget ($0.01)"),
}

# api_retry warnings before the terminal state: scenario -> category of the warnings.
RETRY_CATEGORY = {
    "http429": "limit",
    "http529": "service",
    "http500": "service",
    "http401": "access",
    "retry_then_success": "service",
    "sse_midstream_overloaded": "service",
    "conn_refused": "connection",
    "conn_closed": "connection",
    "sse_truncated": "connection",
}


def _title_ok(want: str, got: str) -> bool:
    import re

    return re.fullmatch(want[3:], got, re.S) is not None if want.startswith("re:") else want == got


def test_every_recording_has_an_expectation() -> None:
    assert {p.name.removesuffix(".sdk.jsonl") for p in HERE.glob("*.sdk.jsonl")} == set(EXPECTED)


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_recorded_sdk_objects_give_the_spec_records(scenario: str) -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"))
    for line in recorded(scenario):
        obj = rebuild(line)
        event = from_sdk_exception(obj) if isinstance(obj, BaseException) else from_sdk_message(obj)
        if event is not None:
            s.feed(event)
    settled = [m for m in s.sent if isinstance(m, PromptResponseOut)]
    assert len(settled) == 1, "a prompt is settled exactly once (the ResultError is not a second incident)"
    warnings = [r for r in s.records if r.severity.value == "warning"]
    assert [r.revision for r in warnings] == list(range(1, len(warnings) + 1))
    if scenario in RETRY_CATEGORY:
        assert warnings and {r.category.value for r in warnings} == {RETRY_CATEGORY[scenario]}
    else:
        assert warnings == []
    errors = [r for r in s.records if r.severity.value == "error"]
    want = EXPECTED[scenario]
    if want is None:
        assert errors == [] and settled[0].record is None
        assert s.active_ids == []  # a recovered retry warning stays history only
        return
    (rec,) = errors
    category, actions, title = want
    assert settled[0].record == rec and settled[0].stop_reason == "end_turn"
    assert (rec.id, rec.category.value, [a.value for a in rec.actions]) == ("t1:error", category, actions)
    assert _title_ok(title, rec.title), rec.title
    assert rec.details is None
    assert rec.revision == len(warnings) + 1  # the terminal failure updates the warning in place


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_stream_json_and_sdk_objects_mean_the_same(scenario: str) -> None:
    for line in recorded(scenario):
        if "raised" in line:
            continue
        raw = stream_json(line)
        assert raw is not None
        assert from_stream_json(raw) == from_sdk_message(rebuild(line)), line.get("class")


def test_the_usage_limit_stays_active_until_a_real_answer() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"))
    for line in recorded("usage_limit_gateway"):
        obj = rebuild(line)
        ev = from_sdk_exception(obj) if isinstance(obj, BaseException) else from_sdk_message(obj)
        if ev is not None:
            s.feed(ev)
    assert [(a.id, a.recovery.value) for a in s.ledger.active] == [("t1:error", "real_model_answer")]


def test_exceptions_other_than_result_error_are_query_errors_without_their_text() -> None:
    from claude_agent_sdk import CLIConnectionError, ProcessError

    from lifecycle.events import QueryError

    for exc in (CLIConnectionError("ProcessTransport is not ready for writing"), ProcessError("x", exit_code=1)):
        ev = from_sdk_exception(exc)
        assert isinstance(ev, QueryError) and "ProcessTransport" not in ev.message
