"""Start-up failures are incidents with their reason (issue 49, point 2), without Claude Code: the
ledger that settles the prompt that started Claude Code with it, and the agent's JSON-RPC error
for a request that waited for the start (lifecycle/agent/startup_failures.py). The reason's row
and code are tested in tests/test_conditions.py, the Claude edge that reads it from the raw result
line in tests/test_claude_edge.py (both in the mutation score's selection).

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
from sdk_messages import PROXY_MESSAGE, PROXY_SHOWN, STARTUP_LINE
from session_harness import Session

from lifecycle.agent.startup_failures import request_error
from lifecycle.claude import from_stream_json
from lifecycle.events import AuthStatus, PromptErrorOut, PromptResponseOut, PromptStarted, Result

MESSAGE, LINE = PROXY_MESSAGE, STARTUP_LINE
SHOWN = PROXY_SHOWN  # the HTTPS_PROXY value masked (developers' guide, Security)


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
    assert (record["title"] + "\n" + record.get("details", "")).startswith(SHOWN.split("\n")[0])
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
    assert (answer.code, answer.message, answer.data) == (code, SHOWN, {"startupFailureReason": reason})
    assert "jetbrains" not in str(answer.to_jsonrpc())


def test_the_request_error_is_the_references() -> None:
    event = from_stream_json(LINE)
    assert isinstance(event, Result)
    err = request_error(event)
    assert (err.code, str(err), err.data) == (-32603, SHOWN, {"startupFailureReason": "proxy_invalid"})
    secret = from_stream_json({**LINE, "errors": ["bad key sk-ant-api03-" + "a" * 80 + " in settings"]})
    assert isinstance(secret, Result) and "sk-ant-api03-aaaa" not in str(request_error(secret))
    bare = from_stream_json({**LINE, "errors": []})
    assert isinstance(bare, Result) and str(request_error(bare)) == "Claude Code could not start."
