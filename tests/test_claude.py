"""The Claude SDK edge against what the real CLI 2.1.332 emitted under injected API faults.

The recordings (tests/fixtures/claude-cli-2.1.332/*.sdk.jsonl, see tests/fixtures/README.md) are
every message ``claude_agent_sdk.query()`` yielded, then the exception it raised. They are rebuilt
into the SDK's own classes, translated, and fed through a ledger; the records must carry the
category and actions in :data:`EXPECTED`, with Claude's own text as the title. Each expected value
names its basis: the spec sentence it follows, or "project decision" where the spec says nothing.
The ``claude`` extra (``claude_agent_sdk``) is required: the ``test`` extra installs it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

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
        return {"type": "rate_limit_event", **f}
    return None


def recorded(scenario: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (HERE / f"{scenario}.sdk.jsonl").read_text().splitlines() if x.strip()]


# The spec (docs/spec/session-failure.md, vendored) is quoted below, each quote verbatim from the
# section it names (``test_every_spec_quote_is_verbatim_in_its_section`` checks them: table rows
# with their cell padding collapsed, list items one by one); where it says nothing about a case,
# the row names it a project decision (the README's conditions table is where the project
# documents those).
SPEC_CATEGORY_ACCESS = (
    'spec, Categories: "`authentication_failed`, `oauth_org_not_allowed`, synthetic login message | `access`"'
)
SPEC_CATEGORY_LIMIT = (
    'spec, Categories: "`billing_error`, `rate_limit`, `max_output_tokens`, usage/spend limit, '
    'budget/turn limit | `limit`"'
)
SPEC_CATEGORY_REQUEST = 'spec, Categories: "`invalid_request`, `model_not_found` | `request`"'
SPEC_CATEGORY_SERVICE = (
    'spec, Categories: "`overloaded`, `server_error`, unknown provider error, adapter internal error | `service`"'
)
SPEC_CATEGORY_CONNECTION = (
    'spec, Categories: "API retry without an HTTP response, query transport loss, worker shutdown | `connection`"'
)
SPEC_LIMIT_WORDS = 'spec, Categories: "`limit` | Rate, quota, token, context, turn, or configured budget limit."'
SPEC_ACTION_LOGIN = 'spec, Actions: "authentication: `login`"'
SPEC_ACTION_RETRY = 'spec, Actions: "provider overload/error and recoverable internal error: `retry`"'
SPEC_ACTION_NEW_SESSION = 'spec, Actions: "context or configured session-budget exhaustion: `new_session`"'
SPEC_ACTION_NONE = 'spec, Actions: "account quota and invalid request: no action"'
SPEC_TITLE = (
    'spec, Title and details: "For Claude SDK failures the title is copied from the user-facing text Claude '
    'already emitted:" "top-level assistant error text, including synthetic usage-limit and login messages;" '
    '"otherwise the terminal SDK result or error text;"'
)


@dataclass(frozen=True)
class Expect:
    """The final record of a recorded failing turn, and where each expected value comes from."""

    category: str
    actions: list[str]
    title: str  # literal, or "re:<full-match regex>" where the CLI put a port or a count in it
    basis: tuple[str, ...]  # a spec sentence, or "project decision: ..." for each value


# scenario -> the final record, or None when the turn succeeds. Titles are what the CLI said
# (tests/fixtures/claude-cli-2.1.332/README.md, section A).
EXPECTED: dict[str, Expect | None] = {
    "success": None,
    "max_tokens_once": None,
    "retry_then_success": None,
    "http429": Expect(
        "limit",
        ["retry"],
        "API Error: Request rejected (429) · Number of requests has exceeded your rate limit",
        (
            SPEC_CATEGORY_LIMIT,
            "project decision: `rate_limit` is retryable (the spec's action list names no policy for a "
            "rate limit that is not an account quota); README, conditions table row `rate_limit`",
            SPEC_TITLE,
        ),
    ),
    "usage_limit_apikey": Expect(
        "limit",
        ["retry"],
        "re:API Error: Request rejected \\(429\\) · This request would .*",
        (
            SPEC_CATEGORY_LIMIT,
            "project decision: the CLI reports `rate_limit` and no usage-limit text here, so the "
            "`rate_limit` row applies (retry), as for http429",
            SPEC_TITLE,
        ),
    ),
    "usage_limit_gateway": Expect(
        "limit",
        [],
        "You've hit your 5-hour limit · resets 4:06pm (UTC)",
        (SPEC_CATEGORY_LIMIT, SPEC_ACTION_NONE, SPEC_TITLE),
    ),
    "http529": Expect(
        "service",
        ["retry"],
        "re:API Error: 529 Overloaded\\. .*",
        (SPEC_CATEGORY_SERVICE, SPEC_ACTION_RETRY, SPEC_TITLE),
    ),
    "http500": Expect(
        "service",
        ["retry"],
        "re:API Error: 500 Internal server error\\. .*",
        (SPEC_CATEGORY_SERVICE, SPEC_ACTION_RETRY, SPEC_TITLE),
    ),
    "sse_midstream_overloaded": Expect(
        "service",
        ["retry"],
        "re:API Error: 529 Overloaded\\. .*",
        (SPEC_CATEGORY_SERVICE, SPEC_ACTION_RETRY, SPEC_TITLE),
    ),
    "http401": Expect(
        "access",
        ["login"],
        "Invalid API key · Fix external API key",
        (SPEC_CATEGORY_ACCESS, SPEC_ACTION_LOGIN, SPEC_TITLE),
    ),
    "http403": Expect(
        "access",
        ["login"],
        "re:Failed to authenticate\\. API Error: 403 .*",
        (SPEC_CATEGORY_ACCESS, SPEC_ACTION_LOGIN, SPEC_TITLE),
    ),
    # the CLI's kind is `unknown`: an unknown provider error
    "http400": Expect(
        "service",
        ["retry"],
        "API Error: 400 messages: text content blocks must be non-empty",
        (SPEC_CATEGORY_SERVICE, SPEC_ACTION_RETRY, SPEC_TITLE),
    ),
    "http402_billing": Expect(
        "service",
        ["retry"],
        "API Error: 402 Your account has a billing problem.",
        (SPEC_CATEGORY_SERVICE, SPEC_ACTION_RETRY, SPEC_TITLE),
    ),
    "http400_credit": Expect(
        "limit",
        [],
        "Credit balance is too low",
        (
            SPEC_CATEGORY_LIMIT,
            "project decision: `billing_error` is an account quota, so " + SPEC_ACTION_NONE,
            SPEC_TITLE,
        ),
    ),
    "http402_credit": Expect(
        "limit",
        [],
        "Credit balance is too low",
        (
            SPEC_CATEGORY_LIMIT,
            "project decision: `billing_error` is an account quota, so " + SPEC_ACTION_NONE,
            SPEC_TITLE,
        ),
    ),
    "http404_model": Expect(
        "request",
        [],
        "re:There's an issue with the selected model .*",
        (
            SPEC_CATEGORY_REQUEST,
            "project decision: `model_not_found` is a rejected request, so " + SPEC_ACTION_NONE,
            SPEC_TITLE,
        ),
    ),
    # the CLI's kind is `invalid_request` for the next two
    "http400_org_disabled": Expect(
        "request",
        [],
        "re:Your ANTHROPIC_API_KEY belongs to a disabled organization .*",
        (SPEC_CATEGORY_REQUEST, SPEC_ACTION_NONE, SPEC_TITLE),
    ),
    "http413": Expect(
        "request",
        [],
        "re:Request too large \\(max 32MB\\)\\. .*",
        (SPEC_CATEGORY_REQUEST, SPEC_ACTION_NONE, SPEC_TITLE),
    ),
    # kind `invalid_request`, text "Prompt is too long": the context window is exhausted
    "http400_prompt_too_long": Expect(
        "limit",
        ["new_session"],
        "re:Prompt is too long · .*",
        (
            SPEC_LIMIT_WORDS,
            "project decision: the text \"Prompt is too long\" refines `invalid_request` to the context limit",
            SPEC_ACTION_NEW_SESSION,
            SPEC_TITLE,
        ),
    ),
    "max_tokens": Expect(
        "limit",
        ["new_session"],
        "re:API Error: Claude's response exceeded the 128000 output token maximum\\. .*",
        (
            SPEC_CATEGORY_LIMIT,
            "project decision: `max_output_tokens` is context exhaustion, as the reference adapter classifies "
            "it (docs/parity/evidence/controller-probe.txt: max_output_tokens -> context_exhausted), so "
            + SPEC_ACTION_NEW_SESSION,
            SPEC_TITLE,
        ),
    ),
    # server_error with no HTTP status after retries that got no response: the retries are
    # `connection` warnings, the terminal provider error is `service` (issue 21 rule 3)
    "conn_refused": Expect(
        "service",
        ["retry"],
        "re:API Error: Connection refused .*",
        (SPEC_CATEGORY_SERVICE, SPEC_ACTION_RETRY, SPEC_TITLE),
    ),
    "conn_closed": Expect(
        "service",
        ["retry"],
        "re:API Error: Connection dropped \\(ECONNRESET\\)\\. .*",
        (SPEC_CATEGORY_SERVICE, SPEC_ACTION_RETRY, SPEC_TITLE),
    ),
    "sse_truncated": Expect(
        "service",
        ["retry"],
        "re:API Error: Connection dropped \\(ECONNRESET\\)\\. .*",
        (SPEC_CATEGORY_SERVICE, SPEC_ACTION_RETRY, SPEC_TITLE),
    ),
    "max_turns": Expect(
        "limit",
        ["new_session"],
        "Reached maximum number of turns (2)",
        (
            SPEC_CATEGORY_LIMIT,
            "project decision: the turn limit is context exhaustion, as in the reference adapter (README, "
            "conditions table row `error_max_turns`), so " + SPEC_ACTION_NEW_SESSION,
            SPEC_TITLE,
        ),
    ),
    "max_budget": Expect(
        "limit",
        ["new_session"],
        "Reached maximum budget ($0.01)",
        (SPEC_CATEGORY_LIMIT, SPEC_ACTION_NEW_SESSION, SPEC_TITLE),
    ),
}

# api_retry warnings before the terminal state: scenario -> category of the warnings.
# Retries without an HTTP response: SPEC_CATEGORY_CONNECTION. Retries with one: project decision,
# the category of the retry's `error` kind (README, conditions table row `api_retry`).
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
    quotes |= {v for k, v in globals().items() if k.startswith("SPEC_") and isinstance(v, str)}
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
