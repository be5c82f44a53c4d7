"""Spec: "Categories", "Severity", "Actions", "Internal recovery" -- the condition table."""

from __future__ import annotations

import pytest

from lifecycle.conditions import (
    CONDITIONS,
    Recovery,
    classify_assistant_error,
    classify_result,
    render_conditions_markdown,
    retry_condition,
    stop_reason_for,
)
from lifecycle.wire import Action, Category, Severity

# The spec's "Claude condition -> Category" table, row by row.
SPEC_CATEGORIES = {
    "authentication_failed": Category.ACCESS,
    "oauth_org_not_allowed": Category.ACCESS,
    "login_required": Category.ACCESS,
    "billing_error": Category.LIMIT,
    "rate_limit": Category.LIMIT,
    "max_output_tokens": Category.LIMIT,
    "usage_limit": Category.LIMIT,
    "error_max_budget_usd": Category.LIMIT,
    "error_max_turns": Category.LIMIT,
    "invalid_request": Category.REQUEST,
    "model_not_found": Category.REQUEST,
    "overloaded": Category.SERVICE,
    "server_error": Category.SERVICE,
    "unknown": Category.SERVICE,
    "internal_error": Category.SERVICE,
    "api_retry_no_response": Category.CONNECTION,
    "api_connection_failed": Category.CONNECTION,
    "query_error": Category.CONNECTION,
    "worker_shutdown": Category.CONNECTION,
    "model_fallback": Category.UNKNOWN,
}


@pytest.mark.parametrize(("key", "category"), sorted(SPEC_CATEGORIES.items()))
def test_every_spec_row_maps_to_its_category(key: str, category: Category) -> None:
    assert CONDITIONS[key].category is category


def test_the_model_fallback_notice_is_an_unknown_warning() -> None:
    row = CONDITIONS["model_fallback"]
    assert (row.category, row.severity, row.recovery) == (Category.UNKNOWN, Severity.WARNING, Recovery.NEVER)


# "Current Claude policies" -> actions.
@pytest.mark.parametrize(
    ("key", "actions"),
    [
        ("authentication_failed", (Action.LOGIN,)),
        ("login_required", (Action.LOGIN,)),
        ("overloaded", (Action.RETRY,)),
        ("server_error", (Action.RETRY,)),
        ("internal_error", (Action.RETRY,)),
        ("query_error", (Action.NEW_SESSION,)),
        ("worker_shutdown", (Action.NEW_SESSION,)),
        ("context_limit", (Action.NEW_SESSION,)),
        ("error_max_budget_usd", (Action.NEW_SESSION,)),
        ("usage_limit", ()),
        ("billing_error", ()),
        ("invalid_request", ()),
    ],
)
def test_actions_follow_the_current_claude_policies(key: str, actions: tuple[Action, ...]) -> None:
    assert CONDITIONS[key].actions == actions


# "Internal recovery".
@pytest.mark.parametrize(
    ("key", "recovery"),
    [
        ("usage_limit", Recovery.REAL_MODEL_ANSWER),
        ("authentication_failed", Recovery.AUTH_STATUS),
        ("login_required", Recovery.AUTH_STATUS),
        ("query_error", Recovery.RUNTIME_REPLACED),
        ("worker_shutdown", Recovery.RUNTIME_REPLACED),
        ("rate_limit", Recovery.CONFIRMED_ATTEMPT),
        ("server_error", Recovery.CONFIRMED_ATTEMPT),
        ("model_fallback", Recovery.NEVER),
    ],
)
def test_recovery_policies(key: str, recovery: Recovery) -> None:
    assert CONDITIONS[key].recovery is recovery


def test_warnings_have_no_actions_and_errors_are_explicit() -> None:
    for row in CONDITIONS.values():
        assert row.severity in (Severity.WARNING, Severity.ERROR)
        if row.severity is Severity.WARNING:
            assert row.actions == ()


@pytest.mark.parametrize("kind", ["brand_new_kind", "", "RATE_LIMIT", None])
def test_unknown_sdk_error_kinds_degrade_to_service_never_success(kind: str | None) -> None:
    row = classify_assistant_error(kind, "Something odd happened")
    assert row.category is Category.SERVICE and row.severity is Severity.ERROR


def test_text_refines_a_coarse_kind() -> None:
    assert (
        classify_assistant_error("rate_limit", "You've hit your 5-hour limit · resets 4:06pm (UTC)").key
        == "usage_limit"
    )
    assert (
        classify_assistant_error("invalid_request", "Prompt is too long · the request is ~250000").key
        == "context_limit"
    )
    assert classify_assistant_error(None, "Not logged in · Please run /login").key == "login_required"
    assert classify_assistant_error("rate_limit", "API Error: Request rejected (429)").key == "rate_limit"


def test_result_subtypes() -> None:
    for sub in (
        "error_max_budget_usd",
        "error_max_turns",
        "error_during_execution",
        "error_max_structured_output_retries",
    ):
        assert classify_result(sub, None).key == sub
    assert classify_result("success", "prompt_too_long").key == "context_limit"
    assert classify_result("weird", None).category is Category.SERVICE


def test_api_retry_with_and_without_an_http_response() -> None:
    row, cat = retry_condition(None, "unknown")
    assert (row.severity, cat) == (Severity.WARNING, Category.CONNECTION)
    assert retry_condition(429, "rate_limit")[1] is Category.LIMIT
    assert retry_condition(529, "overloaded")[1] is Category.SERVICE
    assert retry_condition(401, "authentication_failed")[1] is Category.ACCESS
    assert retry_condition(500, "never-seen")[1] is Category.SERVICE


def test_max_tokens_refusal_and_cancellation_are_stop_reasons() -> None:
    assert stop_reason_for("max_tokens", "completed") == "max_tokens"
    assert stop_reason_for("refusal", None) == "refusal"
    assert stop_reason_for("end_turn", "aborted_streaming") == "cancelled"
    assert stop_reason_for("tool_use", None) == "end_turn"
    assert stop_reason_for(None, None) == "end_turn"


def test_the_readme_table_is_rendered_from_the_data() -> None:
    table = render_conditions_markdown()
    for key in CONDITIONS:
        assert f"`{key}`" in table
    assert table.count("\n") == len(CONDITIONS) + 2


def test_an_unreachable_api_is_a_connection_failure_only_with_the_evidence() -> None:
    from lifecycle.conditions import refine_terminal

    server_error = CONDITIONS["server_error"]
    assert refine_terminal(server_error, None, True).key == "api_connection_failed"
    assert refine_terminal(server_error, 500, True) is server_error  # the API answered
    assert refine_terminal(server_error, None, False) is server_error  # no retry evidence
    assert refine_terminal(CONDITIONS["rate_limit"], None, True).key == "rate_limit"
