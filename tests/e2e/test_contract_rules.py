"""Issue 21's contract rules through the real ``lifecycle acp``: the real ACP SDK client over stdio,
the real claude-agent-sdk and its bundled Claude Code CLI; only the Anthropic API is faked
(``fakeapi.py``, 127.0.0.1).

* Rule 1: a turn limit (``error_max_turns``) is a ``limit`` failure with ``new_session``, even when
  the result's ``stop_reason`` is ``max_tokens`` (the reference lets ``max_tokens`` win only for
  ``success`` and ``error_during_execution``).
* Rule 3: retries that got no HTTP response are ``connection`` warnings; the ``server_error`` that
  ends the turn is ``service`` with ``retry`` (spec: "`overloaded`, `server_error` … → `service`"),
  here and in ``test_acp_e2e.py::test_connection_dropped``.

Rules 2 and 7 are not driven here: the CLI sends no model-fallback notice against the fake API,
and it writes its login request as an assistant message before the result (rule 7's shape, the
request only in the result's text, is covered by the conformance cases, the explorer and the
stateful test).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .agent_under_test import KINDS, check_retried_failure, legacy_error
from .fakeapi import CloseReply, MessageReply, error_reply

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]


@pytest.mark.parametrize("kind", KINDS)
def test_rule_3_a_server_error_after_retries_without_a_response_is_service(kind: str, agents: Any) -> None:
    """Two dropped connections (no HTTP response: `connection` warnings), then a 500: the turn's
    failure is `service` with `retry`; a legacy client gets the reference's -32603 with
    `errorKind: server_error`. (This shape was `service` before issue 21 too, the 500 carrying its
    status; the shape that was `connection` then, three dropped connections, which the CLI ends as
    `server_error` with no status, is ``test_acp_e2e.py::test_connection_dropped``.)"""
    agent = agents(kind)
    sid = agent.new_session()
    text = f"server error after dropped connections ({kind})"
    out = agent.prompt(sid, text, CloseReply(), CloseReply(), error_reply(500, "api_error", "Internal server error"))
    assert agent.claude_error_kind(sid) == "server_error"
    check_retried_failure(
        agent, out, text, category="service", warning_category="connection", actions=["retry"], has_response=False
    )


def _read_then_cut(path: Path) -> MessageReply:
    """A Read tool call in an answer the API cut at its token limit (``stop_reason: max_tokens``)."""
    return MessageReply(
        [
            {"type": "text", "text": "Let me read it."},
            {"type": "tool_use", "name": "Read", "input": {"file_path": str(path)}},
        ],
        stop_reason="max_tokens",
    )


@pytest.mark.parametrize("kind", KINDS)
def test_rule_1_a_turn_limit_with_max_tokens_is_a_limit_failure(kind: str, agents: Any) -> None:
    """With ``--max-turns 1`` the answer's tool call is the turn's last: Claude Code ends it
    ``error_max_turns`` with the answer's ``stop_reason: max_tokens``. The turn is a `limit` failure
    with `new_session`, not ``max_tokens`` (checked 2026-12-03: with ``max_tokens`` winning for every
    subtype, as before issue 21, this capable turn ended ``stopReason: max_tokens``)."""
    agent = agents(kind, "--max-turns", "1")
    target = agent.cwd / "notes.txt"
    target.write_text("hello\n")
    sid = agent.new_session()
    out = agent.prompt(sid, f"read notes ({kind})", _read_then_cut(target))
    if not agent.capable:
        assert out.error is not None and out.error["code"] == -32603, out.error
        assert out.error == legacy_error(-32603, "Reached maximum number of turns (1)", None)
        return
    assert out.result is not None and out.result["stopReason"] == "end_turn", out.result
    final = out.response_record()
    assert final is not None
    assert (final.category.value, [a.value for a in final.actions], final.severity.value) == (
        "limit",
        ["new_session"],
        "error",
    )
    assert final.title == "Reached maximum number of turns (1)"
