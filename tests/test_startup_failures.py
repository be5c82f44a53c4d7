"""Start-up failures are incidents with their reason (issue 49, point 2), without Claude Code: the
reason's row and code (lifecycle/conditions.py), the Claude edge that reads it from the raw result
line (lifecycle/claude), the ledger that settles the prompt that started Claude Code with it, and
the agent's JSON-RPC error for a request that waited for the start (lifecycle/agent/startup_failures.py).

Expected values: the categories and actions are issue 49's (sign-in, terms and organisation
reasons -> ``access`` with ``login``; ``cwd_unavailable``, ``config_file_invalid`` -> ``request``;
the rest -> ``service`` with ``retry``), the recovery the spec's ("Internal recovery":
authentication until a successful ``auth_status``, other turn-scoped failures at a later confirmed
attempt); the codes and the error's shape the reference adapter 0.101.0's
(``dist/startup-failure.js``); the reasons CLI 2.1.337's (``sdk.d.ts``) and the reference's; the
result line Claude Code 2.1.332's own for ``HTTPS_PROXY=not-a-url`` (tests/e2e/test_startup_failure.py
runs it).
"""

from __future__ import annotations

from typing import Any

import pytest
from claude_agent_sdk import ResultError
from session_harness import Session

from lifecycle.agent.startup_failures import request_error, startup_failure
from lifecycle.claude import from_sdk_exception, from_stream_json
from lifecycle.conditions import CONDITIONS, classify_result, startup_failure_code, startup_failure_condition
from lifecycle.events import AuthStatus, PromptErrorOut, PromptResponseOut, PromptStarted, Result

MESSAGE = (
    'Invalid proxy URL in HTTPS_PROXY: "not-a-url" cannot be parsed as a URL.\n'
    'Proxy settings must be a complete URL including the scheme, e.g. "http://proxy.example.com:8080".\n'
    "Fix or unset HTTPS_PROXY and restart Claude Code."
)
#: Claude Code 2.1.332's line for HTTPS_PROXY=not-a-url (usage and ids trimmed)
LINE: dict[str, Any] = {
    "type": "result", "subtype": "error_during_execution", "duration_ms": 0, "duration_api_ms": 0,
    "is_error": True, "num_turns": 0, "stop_reason": None, "session_id": "s1", "total_cost_usd": 0,
    "errors": [MESSAGE], "startup_failure_reason": "proxy_invalid",
}  # fmt: skip

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
def test_each_reason_has_its_row(
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


def test_the_codes_are_the_references() -> None:
    assert {r: startup_failure_code(r) for r in ACCESS + REQUEST + SERVICE} == {
        "gateway_signin_required": -32000, "org_pin_mismatch": -32000, "org_config_refused": -32000,
        "org_signin_ended": -32603, "consumer_terms_review_in_terminal": -32603,
        "consumer_terms_accept_on_web": -32603, "cwd_unavailable": -32602, "config_file_invalid": -32603,
        "proxy_invalid": -32603, "managed_settings_not_delivered": -32603,
        "initialize_fields_not_delivered": -32603, "sideload_flags_disabled": -32603,
        "resume_target_not_found": -32603, "a_reason_not_known_yet": -32603,
    }  # fmt: skip


@pytest.mark.parametrize("reason", [None, "", 5, ["proxy_invalid"]])
def test_without_a_reason_an_error_result_is_what_it_was(reason: object) -> None:
    assert classify_result("error_during_execution", None, None, reason) is CONDITIONS["error_during_execution"]
    assert classify_result("success", None, "Please run /login", reason) is CONDITIONS["login_required"]


def test_the_claude_edge_reads_the_reason_from_the_raw_line() -> None:
    event = from_stream_json(LINE)
    assert isinstance(event, Result) and event.startup_failure == "proxy_invalid"
    assert event.errors == (MESSAGE,) and event.is_error
    for value in (None, "", 7):
        other = from_stream_json({**LINE, "startup_failure_reason": value})
        assert isinstance(other, Result) and other.startup_failure is None
    # the SDK's ResultError keeps the raw line (its ResultMessage has no field for the reason)
    exc = ResultError(f"Claude Code returned an error result: {MESSAGE}", data=LINE, exit_code=1)
    event = from_sdk_exception(exc)
    assert isinstance(event, Result) and event.startup_failure == "proxy_invalid"
    assert startup_failure(exc) == event
    plain = ResultError("x", data={**LINE, "startup_failure_reason": None}, exit_code=1)
    assert startup_failure(plain) is None and startup_failure(RuntimeError("x")) is None
    assert startup_failure(None) is None


def _failed(negotiated: bool, reason: str = "proxy_invalid", message: str = MESSAGE) -> tuple[Session, list[Any]]:
    s = Session(negotiated=negotiated)
    line = {**LINE, "errors": [message], "startup_failure_reason": reason}
    out = s.feed(PromptStarted(turn_id="t1"), from_stream_json(line))  # type: ignore[arg-type]
    return s, out


def test_a_capable_client_gets_the_typed_record_on_the_prompt_response() -> None:
    s, out = _failed(True)
    (answer,) = out
    assert isinstance(answer, PromptResponseOut) and answer.stop_reason == "end_turn"
    record = answer.to_jsonrpc()["result"]["_meta"]["jetbrains"]["air"]["sessionFailure"]
    assert (record["id"], record["category"], record["severity"], record["actions"]) == (
        "t1:error", "service", "error", ["retry"])  # fmt: skip
    assert (record["title"] + "\n" + record.get("details", "")).startswith(MESSAGE.split("\n")[0][:60])
    assert s.active_ids == ["t1:error"]


def test_a_sign_in_reason_is_access_with_login_until_auth_succeeds() -> None:
    s, out = _failed(True, "org_signin_ended", "Your organization sign-in has ended. Run /login.")
    record = out[0].to_jsonrpc()["result"]["_meta"]["jetbrains"]["air"]["sessionFailure"]
    assert (record["category"], record["actions"]) == ("access", ["login"])
    s.feed(AuthStatus(ok=True))
    assert s.active_ids == []


@pytest.mark.parametrize(("reason", "code"), [("proxy_invalid", -32603), ("gateway_signin_required", -32000),
                                              ("cwd_unavailable", -32602)])  # fmt: skip
def test_a_legacy_client_gets_the_references_error(reason: str, code: int) -> None:
    _, out = _failed(False, reason)
    (answer,) = out
    assert isinstance(answer, PromptErrorOut)
    assert (answer.code, answer.message, answer.data) == (code, MESSAGE, {"startupFailureReason": reason})
    assert "jetbrains" not in str(answer.to_jsonrpc())


def test_the_request_error_is_the_references() -> None:
    event = from_stream_json(LINE)
    assert isinstance(event, Result)
    err = request_error(event)
    assert (err.code, str(err), err.data) == (-32603, MESSAGE, {"startupFailureReason": "proxy_invalid"})
    secret = from_stream_json({**LINE, "errors": ["bad key sk-ant-api03-" + "a" * 80 + " in settings"]})
    assert isinstance(secret, Result) and "sk-ant-api03-aaaa" not in str(request_error(secret))
    bare = from_stream_json({**LINE, "errors": []})
    assert isinstance(bare, Result) and str(request_error(bare)) == "Claude Code could not start."
