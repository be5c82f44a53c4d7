"""The agent families table (lifecycle/families.py, issue 53.2): every row as literals, the agent's
words, and the rendered table.

Basis of the expected values: the spec's "Categories" (rate/quota/context limit → ``limit``,
rejected credentials → ``access``, invalid input or unsupported model → ``request``, provider
failure → ``service``, lost transport → ``connection``; unknown kinds degrade to ``service``) and
"Actions" (authentication ``login``, provider errors ``retry``, context exhaustion
``new_session``, account quota and invalid request none); the kinds are what each agent sends
(issue 53, docs/proxy.md).
"""

from __future__ import annotations

import pytest

from lifecycle.families import (
    FAMILIES,
    PROTOCOL_ERRORS,
    STOP_CONDITIONS,
    agent_words,
    classify_agent_error,
    classify_stop_reason,
    family_of,
    is_protocol_error,
    render_families_markdown,
)

ROWS = {
    ("gemini", "400"): ("request", ()),
    ("gemini", "401"): ("access", ("login",)),
    ("gemini", "403"): ("access", ()),
    ("gemini", "404"): ("request", ()),
    ("gemini", "429"): ("limit", ("retry",)),
    ("gemini", "500"): ("service", ("retry",)),
    ("gemini", "502"): ("service", ("retry",)),
    ("gemini", "503"): ("service", ("retry",)),
    ("gemini", "504"): ("service", ("retry",)),
    ("codex", "context_window_exceeded"): ("limit", ("new_session",)),
    ("codex", "session_budget_exceeded"): ("limit", ("new_session",)),
    ("codex", "usage_limit_exceeded"): ("limit", ()),
    ("codex", "rate_limit_exceeded"): ("limit", ("retry",)),
    ("codex", "server_overloaded"): ("service", ("retry",)),
    ("codex", "internal_server_error"): ("service", ("retry",)),
    ("codex", "unauthorized"): ("access", ("login",)),
    ("codex", "bad_request"): ("request", ()),
    ("codex", "invalid_prompt"): ("request", ()),
    ("codex", "http_connection_failed"): ("connection", ("retry",)),
    ("codex", "response_stream_connection_failed"): ("connection", ("retry",)),
    ("codex", "response_stream_disconnected"): ("connection", ("retry",)),
    ("codex", "response_too_many_failed_attempts"): ("service", ("retry",)),
    ("opencode", "APIError"): ("service", ("retry",)),
    ("opencode", "ContextOverflowError"): ("limit", ("new_session",)),
    ("opencode", "ProviderAuthError"): ("access", ("login",)),
}


def test_every_row_written_out() -> None:
    table = {
        (f.name, kind): (c.category.value, tuple(a.value for a in c.actions))
        for f in FAMILIES
        for kind, c in f.kinds.items()
    }
    assert table == ROWS
    assert all(c.severity.value == "error" for f in FAMILIES for c in f.kinds.values())
    stops = {k: (c.category.value, tuple(a.value for a in c.actions)) for k, c in STOP_CONDITIONS.items()}
    assert stops == {
        "refusal": ("request", ()),
        "max_tokens": ("limit", ("new_session",)),
        "max_turn_requests": ("limit", ("new_session",)),
    }


@pytest.mark.parametrize(
    ("name", "command", "family"),
    [
        ("gemini-cli", "", "gemini"),
        (None, "/home/u/.npm/bin/gemini", "gemini"),
        ("codex-acp", "npx", "codex"),
        (None, "opencode", "opencode"),
        ("OpenCode", "", "opencode"),  # opencode 1.18.33's agentInfo.name
        ("my-agent", "/usr/bin/my-agent", "unknown"),
        (42, "", "unknown"),
    ],
)
def test_family_of(name: object, command: str, family: str) -> None:
    assert family_of(name, command).name == family


@pytest.mark.parametrize(
    ("family", "code", "data", "key"),
    [
        ("gemini", 429, None, "rate_limit"),
        ("gemini", True, None, "unknown"),  # a bool is no HTTP status
        # an HTTP status codex names wins over its kind (the provider answered: spec "Categories"
        # keeps connection for a retry "without an HTTP response")
        ("codex", -32603, {"codex_error_info": {"httpConnectionFailed": {"httpStatusCode": 502}}}, "server_error"),
        ("codex", -32603, {"codex_error_info": {"http_connection_failed": {"http_status_code": None}}}, "connection"),
        (
            "codex",
            -32603,
            {"codex_error_info": {"response_too_many_failed_attempts": {"http_status_code": 429}}},
            "rate_limit",
        ),
        ("codex", -32603, {"codex_error_info": "other", "message": "unexpected status 401 Unauthorized: x"}, "access"),
        (
            "codex",
            -32603,
            {"codex_error_info": "bad_request", "message": "unexpected status 401 Unauthorized"},
            "invalid_request",
        ),
        ("codex", -32603, {"codex_error_info": "other", "message": "no status here"}, "unknown"),
        ("codex", -32603, {"codexErrorInfo": "usageLimitExceeded"}, "usage_limit"),
        ("codex", -32603, {"codex_error_info": "something_new"}, "unknown"),
        ("codex", -32603, "not an object", "unknown"),
        ("opencode", -32603, {"errorName": "ProviderAuthError"}, "access"),
        ("opencode", -32603, {"errorName": ["APIError"]}, "unknown"),
        ("unknown", 429, None, "unknown"),
        # ACP's "Authentication required", whatever the family
        ("unknown", -32000, None, "access"),
        ("codex", -32000, {"codex_error_info": "server_overloaded"}, "access"),
    ],
)
def test_classify_agent_error(family: str, code: object, data: object, key: str) -> None:
    fam = next((f for f in FAMILIES if f.name == family), family_of(None))
    assert classify_agent_error(fam, code, data).key == key


def test_protocol_errors_are_no_failures() -> None:
    # JSON-RPC 2.0 section 5.1's reserved codes for a wrong request, and ACP's resource not found
    assert sorted(PROTOCOL_ERRORS) == [-32700, -32602, -32601, -32600, -32002]
    assert [is_protocol_error(c) for c in (-32602, -32603, -32000, True, "-32602")] == [
        True,
        False,
        False,
        False,
        False,
    ]


def test_classify_stop_reason() -> None:
    assert [classify_stop_reason(s) for s in ("end_turn", "cancelled", None, 3)] == [None] * 4
    assert classify_stop_reason("refusal") is STOP_CONDITIONS["refusal"]


@pytest.mark.parametrize(
    ("message", "data", "words"),
    [
        # gemini-cli's raw Google JSON body (issue 53): its own message
        (
            '{"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}',
            None,
            "Internal error encountered.",
        ),
        ('[{"error":{"code":400,"message":"Bad field."}}]', None, "Bad field."),
        ('{"message":"top level"}', None, "top level"),
        ('{"status":"INTERNAL"}', None, ""),  # a body without words: none
        # codex-acp: the words in data.message, the generic "Internal error" in message
        (
            "Internal error",
            {"message": "exceeded retry limit, last status: 429"},
            "exceeded retry limit, last status: 429",
        ),
        ("Internal error", {"message": "   "}, ""),
        ("Internal error.", None, ""),
        # opencode 1.18.33 (recorded by tests/e2e/test_proxy_opencode.py): the generic prefix dropped
        ("Internal error: Incorrect API key provided.", {"service": "session"}, "Incorrect API key provided."),
        ("Error:   x", None, "x"),
        # URLs taken out, with their "url:" label
        (
            "unexpected status 401: Missing key, url: http://127.0.0.1:9/v1/responses",
            None,
            "unexpected status 401: Missing key",
        ),
        ("see https://example.invalid/docs for more", None, "see for more"),
        ("{not json", None, "{not json"),
        (None, None, ""),
    ],
)
def test_agent_words(message: object, data: object, words: str) -> None:
    assert agent_words(message, data) == words


def test_the_rendered_table_has_a_row_per_kind() -> None:
    text = render_families_markdown()
    assert "| gemini | `gemini-cli`, `gemini` | `code` | `429` | `limit` | `retry` |" in text
    assert "| any, and an unknown agent | | | any other | `service` | `retry` |" in text
    # the silent turn and codex-acp's notice (docs/proxy.md "Silent failures and retries")
    silent = "| `end_turn` with nothing shown (no text, thought, tool call or plan) | `unknown` | `retry` |"
    assert f"| every family | | `stopReason` {silent}" in text
    assert "| codex | | agent text | starts `` Model metadata for ` ``: its own notice | no record, no answer" in text
    assert len(text.splitlines()) == 2 + len(ROWS) + 2 + len(STOP_CONDITIONS) + 3 + 2
