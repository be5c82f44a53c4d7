"""The Claude SDK edge against what the real CLI 2.1.337 emitted under injected API faults.

The recordings (tests/fixtures/claude-cli-2.1.337/*.sdk.jsonl, see tests/fixtures/README.md) are
every message ``claude_agent_sdk.query()`` yielded, then the exception it raised. They are rebuilt
into the SDK's own classes, translated, and fed through a ledger; the records must carry the
category and actions in :data:`expected.EXPECTED` (tests/expected.py), with Claude's own text as
the title. Each expected value names its basis: the spec sentence it follows, or "project
decision" where the spec says nothing.
The ``claude`` extra (``claude_agent_sdk``) is required: the ``test`` extra installs it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import expected
import pytest
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
from conftest import FIXTURES, ROOT, documented_count
from expected import EXPECTED, RETRY_CATEGORY, SPEC_TITLE, _title_ok
from session_harness import Session

from lifecycle import PromptResponseOut, PromptStarted
from lifecycle.claude import from_sdk_exception, from_sdk_message, from_stream_json

HERE = FIXTURES


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
        return {"type": "rate_limit_event", **f, "rate_limit_info": f["rate_limit_info"]["raw"]}  # as printed
    return None


def recorded(scenario: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (HERE / f"{scenario}.sdk.jsonl").read_text().splitlines() if x.strip()]


def test_every_recording_has_an_expectation() -> None:
    assert {p.name.removesuffix(".sdk.jsonl") for p in HERE.glob("*.sdk.jsonl")} == set(EXPECTED)
    assert len(EXPECTED) == documented_count("recordings")


def test_every_expected_value_states_where_it_comes_from() -> None:
    """A row is the spec's only where it quotes the spec; anything else says it is our choice."""
    for scenario, want in EXPECTED.items():
        if want is None:
            continue
        assert want.basis, scenario
        for basis in want.basis:
            assert basis.startswith(("spec, ", "project decision: ")), (scenario, basis)
        assert SPEC_TITLE in want.basis, scenario


SPEC = ROOT / "docs" / "spec" / "session-failure.md"
_QUOTE = re.compile(r'^spec, (?P<section>[^:"]+): (?P<quotes>(?:"[^"]+" ?)+)$')


def spec_section(title: str) -> str:
    """The text of the spec's ``## title`` section, whitespace collapsed (so a table row's padded
    cells read ``a | b``)."""
    text = SPEC.read_text()
    assert f"\n## {title}\n" in text, f"the spec has no section {title!r}"
    body = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    return " ".join(body.split())


def spec_quote_problems(basis: str) -> list[str]:
    """Why ``basis`` ("spec, <section>: "<quote>" ...") is not a verbatim quote of the spec."""
    m = _QUOTE.match(basis)
    if m is None:
        return [f"not of the form spec, <section>: \"<quote>\": {basis}"]
    section = spec_section(m["section"])
    return [q for q in re.findall(r'"([^"]+)"', m["quotes"]) if " ".join(q.split()) not in section]


def test_every_spec_quote_is_verbatim_in_its_section() -> None:
    quotes = {b for want in EXPECTED.values() if want is not None for b in want.basis if b.startswith("spec, ")}
    quotes |= {v for k, v in vars(expected).items() if k.startswith("SPEC_") and isinstance(v, str)}
    assert len(quotes) >= 11
    assert {q: problems for q in sorted(quotes) if (problems := spec_quote_problems(q))} == {}


def test_the_quote_check_rejects_a_paraphrase() -> None:
    """The check above is not vacuous: a paraphrase, a wrong section and a missing section fail it."""
    assert spec_quote_problems('spec, Actions: "authentication: `login`"') == []
    assert spec_quote_problems('spec, Actions: "authentication failures: `login`"') == [
        "authentication failures: `login`"
    ]
    assert spec_quote_problems('spec, Categories: "authentication: `login`"') == ["authentication: `login`"]
    with pytest.raises(AssertionError):
        spec_quote_problems('spec, Nowhere: "x"')


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
    assert settled[0].record == rec and settled[0].stop_reason == "end_turn"
    assert (rec.id, rec.category.value, [a.value for a in rec.actions]) == ("t1:error", want.category, want.actions)
    assert _title_ok(want.title, rec.title), rec.title
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
