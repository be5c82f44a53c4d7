"""Spec: "Categories", "Severity", "Actions", "Internal recovery" -- the condition table."""

from __future__ import annotations

import pytest

from lifecycle.conditions import (
    CONDITIONS,
    Recovery,
    classify_assistant_error,
    classify_result,
    render_conditions_markdown,
    result_event,
    retry_condition,
    startup_failure_code,
    startup_failure_condition,
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


def test_an_mcp_server_that_did_not_start_is_an_unknown_warning_notice() -> None:
    # Issue 20, item 4 and docs/parity: a capable client gets a notice record (`unknown`, warning,
    # no actions), not an incident of the turn; nothing but a new runtime could change it.
    row = CONDITIONS["mcp_server_not_started"]
    assert (row.category, row.severity, row.actions, row.recovery) == (
        Category.UNKNOWN,
        Severity.WARNING,
        (),
        Recovery.NEVER,
    )
    assert "| `mcp_server_not_started` | a client's MCP server Claude Code did not start | `unknown` | `warning` "\
           "| none | `never` | -32603 | adapter-observed (`init` `mcp_servers`); `:notice:` namespace |" in (
        render_conditions_markdown().split("\n")
    )


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


def test_a_provider_error_after_retries_without_a_response_stays_service() -> None:
    """Issue 21 rule 3: "`overloaded`, `server_error`, unknown provider error → `service`"; only the
    retry without an HTTP response is `connection` (there is no terminal refinement)."""
    import lifecycle.conditions as conditions

    assert not hasattr(conditions, "refine_terminal")
    assert "api_connection_failed" not in CONDITIONS
    for key in ("server_error", "overloaded", "unknown", "unrecognized_error"):
        assert CONDITIONS[key].category is Category.SERVICE


def test_a_login_request_in_the_result_text_is_access() -> None:
    """Issue 21 rule 7: "… run /login …" as an is_error result's only text is the synthetic login
    message (access, login, until auth_status; legacy -32000)."""
    text = "Invalid API key · Please run /login"
    row = classify_result("success", None, text)
    assert (row.key, row.category, row.actions, row.recovery, row.legacy_code) == (
        "login_required",
        Category.ACCESS,
        (Action.LOGIN,),
        Recovery.AUTH_STATUS,
        -32000,
    )
    assert classify_result("success", None, "Login expired · Run /login to sign in").key == "login_required"
    assert classify_result("success", None, "Something failed").key == "error_result"
    # the login request wins over max_tokens, as in the reference's success lane
    assert result_event(True, "max_tokens", "success", text) == "result_error"
    assert result_event(False, "max_tokens", "success", text) == "result_stop"


@pytest.mark.parametrize(
    ("is_error", "stop", "subtype", "event"),
    [
        (True, "max_tokens", "success", "result_stop"),
        (True, "max_tokens", "error_during_execution", "result_stop"),
        (True, "max_tokens", "error_max_budget_usd", "result_error"),
        (True, "max_tokens", "error_max_turns", "result_error"),
        (True, "max_tokens", "error_max_structured_output_retries", "result_error"),
        (True, "refusal", "error_max_turns", "result_stop"),
        (True, "refusal", "error_max_budget_usd", "result_stop"),
        (False, "max_tokens", "success", "result_stop"),
        (True, "end_turn", "success", "result_error"),
        (False, "end_turn", "success", "result_success"),
    ],
)
def test_max_tokens_wins_only_for_success_and_execution_errors(
    is_error: bool, stop: str, subtype: str, event: str
) -> None:
    """Issue 21 rule 1: a budget or turn limit is a failure even with stop_reason max_tokens
    (dist/acp-agent.js:5492-5495, :5539-5542 check max_tokens only in those two lanes)."""
    assert result_event(is_error, stop, subtype) == event


# ---------------------------------------------------------------- exact values


def test_a_row_is_built_with_the_legacy_code_of_its_recovery() -> None:
    from lifecycle.conditions import Condition, _row

    assert _row("k", "src", Category.ACCESS, (Action.LOGIN,), Recovery.AUTH_STATUS) == Condition(
        "k", "src", Category.ACCESS, Severity.ERROR, (Action.LOGIN,), Recovery.AUTH_STATUS, -32000, ""
    )
    assert _row("w", "s", Category.SERVICE, (), Recovery.NEVER, Severity.WARNING, "n") == Condition(
        "w", "s", Category.SERVICE, Severity.WARNING, (), Recovery.NEVER, -32603, "n"
    )
    for recovery in Recovery:
        expected = -32000 if recovery is Recovery.AUTH_STATUS else -32603
        assert _row("k", "s", Category.LIMIT, (), recovery).legacy_code == expected


def test_legacy_codes_authentication_required_only_for_access_that_login_fixes() -> None:
    auth = {k for k, c in CONDITIONS.items() if c.legacy_code == -32000}
    # a start-up failure's code is its reason's (tests/test_startup_failures.py), not its row's
    assert auth == {"authentication_failed", "oauth_org_not_allowed", "verification_required", "login_required",
                    "startup_failure_access"}  # fmt: skip
    assert {c.legacy_code for c in CONDITIONS.values()} == {-32000, -32603}


def test_is_synthetic_failure_text() -> None:
    from lifecycle.conditions import is_synthetic_failure_text, is_usage_limit_text

    assert is_synthetic_failure_text("Not logged in · Please run /login") is True
    assert is_synthetic_failure_text("Invalid API key · Please run /login") is True
    assert is_synthetic_failure_text("Not logged in") is True
    assert is_synthetic_failure_text("You've hit your 5-hour limit · resets 4:06pm (UTC)") is True
    assert is_synthetic_failure_text("Your org is out of usage · contact your admin") is True
    assert is_synthetic_failure_text("No response requested.") is False
    assert is_synthetic_failure_text("API Error: 500 Internal server error") is False
    assert is_usage_limit_text("You've hit your weekly limit") is True
    assert is_usage_limit_text("Note: You've hit your limit") is False  # a prefix, not a substring


@pytest.mark.parametrize(
    ("kind", "text", "key"),
    [
        (None, "Please run /login", "login_required"),
        (None, "Not logged in · Please run /login", "login_required"),
        ("authentication_failed", "Invalid API key · Please run /login", "authentication_failed"),
        # "run /login" wins over any kind but an authentication one (the reference's
        # isLoginRequiredText; "Login expired · Run /login" arrives as invalid_request)
        ("brand_new", "Not logged in · Please run /login", "login_required"),
        ("invalid_request", "Login expired · Run /login to sign in again", "login_required"),
        ("rate_limit", "API Error: 429 · try again after you log in", "rate_limit"),
        (None, "Something else", "unrecognized_error"),
        ("overloaded", "Prompt is too long", "context_limit"),
        ("invalid_request", "API Error: 400 prompt is too long", "invalid_request"),  # a prefix, case-sensitive
        (None, "Your seat type doesn't include usage credits", "usage_limit"),
        ("unknown", "API Error", "unknown"),
        ("account_on_hold", "x", "account_on_hold"),
        ("cloud_credential_error", "x", "cloud_credential_error"),
        ("verification_required", "x", "verification_required"),
        ("oauth_org_not_allowed", "x", "oauth_org_not_allowed"),
        ("billing_error", "x", "billing_error"),
        ("max_output_tokens", "x", "max_output_tokens"),
        ("model_not_found", "x", "model_not_found"),
        ("server_error", "x", "server_error"),
    ],
)
def test_classify_assistant_error_exactly(kind: str | None, text: str, key: str) -> None:
    assert classify_assistant_error(kind, text).key == key


@pytest.mark.parametrize(
    ("subtype", "terminal", "key"),
    [
        ("error_max_turns", "prompt_too_long", "context_limit"),  # the terminal reason wins
        (None, "prompt_too_long", "context_limit"),
        ("success", None, "error_result"),
        ("success", "completed", "error_result"),
        (None, None, "error_result"),
        (["error_max_turns"], None, "error_result"),
        ("error_max_structured_output_retries", "x", "error_max_structured_output_retries"),
    ],
)
def test_classify_result_exactly(subtype: object, terminal: object, key: str) -> None:
    assert classify_result(subtype, terminal).key == key


def test_retry_condition_exactly() -> None:
    assert retry_condition(None, "rate_limit") == (CONDITIONS["api_retry_no_response"], Category.CONNECTION)
    assert retry_condition(429, "rate_limit") == (CONDITIONS["api_retry"], Category.LIMIT)
    assert retry_condition(400, "invalid_request") == (CONDITIONS["api_retry"], Category.REQUEST)
    assert retry_condition(500, None) == (CONDITIONS["api_retry"], Category.SERVICE)
    assert retry_condition(500, 7) == (CONDITIONS["api_retry"], Category.SERVICE)
    assert retry_condition(0, "rate_limit") == (CONDITIONS["api_retry"], Category.LIMIT)  # 0 is a status


def test_stop_reason_for_exactly() -> None:
    assert stop_reason_for("cancelled", None) == "cancelled"
    assert stop_reason_for("max_tokens", "aborted_tools") == "cancelled"
    assert stop_reason_for("max_tokens", "not_aborted") == "max_tokens"
    assert stop_reason_for(["max_tokens"], 5) == "end_turn"
    assert stop_reason_for("stop_sequence", "completed") == "end_turn"


def test_the_readme_table_header_and_rows_exactly() -> None:
    lines = render_conditions_markdown().split("\n")
    assert lines[0] == (
        "| condition | Claude emits | category | severity | actions | recovery | legacy JSON-RPC | note |"
    )
    assert lines[1] == "| --- | --- | --- | --- | --- | --- | ---: | --- |"
    assert lines[2] == (
        "| `authentication_failed` | assistant `error` | `access` | `error` | `login` | `auth_status` | -32000 |  |"
    )
    assert "| `usage_limit` | synthetic usage/spend-limit message | `limit` | `error` | none | `real_model_answer` "\
           "| -32603 | account quota |" in lines
    # a legacy client's turn that ended without a result answers end_turn (the reference), no code
    assert (
        "| `missing_result` | query ended without a result | `service` | `error` | `retry` | `confirmed_attempt` "
        "| `end_turn` | internal invariant |" in lines
    )
    assert lines[-1] == ""
    assert len(lines) == len(CONDITIONS) + 3


def test_every_row_written_out() -> None:
    """The whole table: (category, severity, actions, recovery) per condition."""
    table = {
        k: (c.category.value, c.severity.value, [a.value for a in c.actions], c.recovery.value)
        for k, c in CONDITIONS.items()
    }
    E, W = "error", "warning"
    assert table == {
        "authentication_failed": ("access", E, ["login"], "auth_status"),
        "oauth_org_not_allowed": ("access", E, ["login"], "auth_status"),
        "verification_required": ("access", E, ["login"], "auth_status"),
        "login_required": ("access", E, ["login"], "auth_status"),
        "account_on_hold": ("access", E, [], "confirmed_attempt"),
        "cloud_credential_error": ("access", E, [], "confirmed_attempt"),
        "usage_limit": ("limit", E, [], "real_model_answer"),
        "billing_error": ("limit", E, [], "confirmed_attempt"),
        "rate_limit": ("limit", E, ["retry"], "confirmed_attempt"),
        "max_output_tokens": ("limit", E, ["new_session"], "confirmed_attempt"),
        "context_limit": ("limit", E, ["new_session"], "confirmed_attempt"),
        "error_max_budget_usd": ("limit", E, ["new_session"], "confirmed_attempt"),
        "error_max_turns": ("limit", E, ["new_session"], "confirmed_attempt"),
        "invalid_request": ("request", E, [], "confirmed_attempt"),
        "model_not_found": ("request", E, [], "confirmed_attempt"),
        "overloaded": ("service", E, ["retry"], "confirmed_attempt"),
        "server_error": ("service", E, ["retry"], "confirmed_attempt"),
        "unknown": ("service", E, ["retry"], "confirmed_attempt"),
        "unrecognized_error": ("service", E, ["retry"], "confirmed_attempt"),
        "error_result": ("service", E, ["retry"], "confirmed_attempt"),
        "error_during_execution": ("service", E, ["retry"], "confirmed_attempt"),
        "error_max_structured_output_retries": ("service", E, ["retry"], "confirmed_attempt"),
        "missing_result": ("service", E, ["retry"], "confirmed_attempt"),
        "internal_error": ("service", E, ["retry"], "confirmed_attempt"),
        # issue 49: sign-in, terms, organisation -> access with login; cwd, config -> request; rest -> service
        "startup_failure_access": ("access", E, ["login"], "auth_status"),
        "startup_failure_request": ("request", E, [], "confirmed_attempt"),
        "startup_failure_service": ("service", E, ["retry"], "confirmed_attempt"),
        "query_error": ("connection", E, ["new_session"], "runtime_replaced"),
        "worker_shutdown": ("connection", E, ["new_session"], "runtime_replaced"),
        "api_retry": ("service", W, [], "confirmed_attempt"),
        "api_retry_no_response": ("connection", W, [], "confirmed_attempt"),
        "model_fallback": ("unknown", W, [], "never"),
        "mcp_server_not_started": ("unknown", W, [], "never"),
        "model_refusal_fallback": ("unknown", W, [], "never"),
        "rate_limit_window": ("limit", W, [], "window_reset"),
    }


def test_condition_looks_up_a_row_or_raises() -> None:
    from lifecycle.conditions import condition

    assert condition("rate_limit") is CONDITIONS["rate_limit"]
    with pytest.raises(KeyError):
        condition("nope")


# ---------------------------------------------------------------- start-up failures (issue 49, point 2)

# Issue 49's table (sign-in, terms, organisation -> access with login; cwd_unavailable,
# config_file_invalid -> request; the rest -> service with retry), the spec's recovery, the
# reference adapter 0.101.0's codes (dist/startup-failure.js); the reasons CLI 2.1.337's and the
# reference's. tests/test_startup_failures.py: the ledger and the agent.

ACCESS = [
    "gateway_signin_required", "org_pin_mismatch", "org_config_refused", "org_signin_ended",
    "consumer_terms_review_in_terminal", "consumer_terms_accept_on_web",
]  # fmt: skip
REQUEST = ["cwd_unavailable", "config_file_invalid"]
SERVICE = [
    "proxy_invalid", "managed_settings_not_delivered", "initialize_fields_not_delivered",
    "sideload_flags_disabled", "resume_target_not_found", "a_reason_not_known_yet",
]  # fmt: skip


@pytest.mark.parametrize(
    ("reasons", "row", "category", "actions", "recovery"),
    [
        (ACCESS, "startup_failure_access", "access", ["login"], "auth_status"),
        (REQUEST, "startup_failure_request", "request", [], "confirmed_attempt"),
        (SERVICE, "startup_failure_service", "service", ["retry"], "confirmed_attempt"),
    ],
)
def test_each_start_up_failure_reason_has_its_row(
    reasons: list[str], row: str, category: str, actions: list[str], recovery: str
) -> None:
    for reason in reasons:
        cond = startup_failure_condition(reason)
        assert cond is CONDITIONS[row], reason
        assert (cond.category.value, [a.value for a in cond.actions], cond.recovery.value) == (
            category,
            actions,
            recovery,
        )
        assert cond.severity.value == "error"
        # a start-up failure is that, whatever else the result says (a login text too)
        assert classify_result("error_during_execution", None, "Please run /login", reason) is cond


def test_the_start_up_failure_codes_are_the_references() -> None:
    assert {r: startup_failure_code(r) for r in ACCESS + REQUEST + SERVICE} == {
        "gateway_signin_required": -32000, "org_pin_mismatch": -32000, "org_config_refused": -32000,
        "org_signin_ended": -32603, "consumer_terms_review_in_terminal": -32603,
        "consumer_terms_accept_on_web": -32603, "cwd_unavailable": -32602, "config_file_invalid": -32603,
        "proxy_invalid": -32603, "managed_settings_not_delivered": -32603,
        "initialize_fields_not_delivered": -32603, "sideload_flags_disabled": -32603,
        "resume_target_not_found": -32603, "a_reason_not_known_yet": -32603,
    }  # fmt: skip


@pytest.mark.parametrize("reason", [None, "", 5, ["proxy_invalid"]])
def test_an_error_result_without_a_start_up_reason_is_what_it_was(reason: object) -> None:
    assert classify_result("error_during_execution", None, None, reason) is CONDITIONS["error_during_execution"]
    assert classify_result("success", None, "Please run /login", reason) is CONDITIONS["login_required"]


