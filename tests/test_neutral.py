"""The core's provider-neutral events (issue 53.3): any ACP agent's failures through the same
ledger, ids, revisions, carriers and recovery as Claude Code's (lifecycle/neutral.py,
lifecycle/delivery_surfaces.py). Expected values are the spec's ("Identity, revisions, and
history", "Delivery surfaces", "Severity", "Internal recovery") written out.
"""

from __future__ import annotations

from typing import Any

import pytest

from lifecycle import LocalProtocolError, SessionLedger
from lifecycle.conditions import Recovery
from lifecycle.events import (
    AgentAnswered,
    AgentExited,
    AgentFailure,
    AgentRetrying,
    AgentTurnEnded,
    Cancelled,
    PromptStarted,
)
from lifecycle.neutral import agent_condition, agent_title
from lifecycle.wire import Action, Category

LIMIT = AgentFailure(
    key="rate_limit",
    category=Category.LIMIT,
    actions=(Action.RETRY,),
    fallback="The model provider's rate limit was reached. Try again later.",
    words="Resource has been exhausted (e.g. check quota).",
)
EXITED = AgentFailure(
    key="agent_exited",
    category=Category.CONNECTION,
    actions=(Action.NEW_SESSION,),
    fallback="The agent stopped during this turn. Start a new session to go on.",
)


def ledger(negotiated: bool = True) -> SessionLedger:
    return SessionLedger("s1", negotiated=negotiated, epoch="e1")


def run(led: SessionLedger, *events: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for ev in events:
        led.feed(ev)
        while (sent := led.next_outbound()) is not None:
            out.append(sent.to_jsonrpc())
            led.delivered()
    return out


def rec(message: dict[str, Any]) -> dict[str, Any]:
    holder = message.get("result") or message["params"]["update"]
    record: dict[str, Any] = holder["_meta"]["jetbrains"]["air"]["sessionFailure"]
    return record


def test_retry_reports_are_one_warning_updated_in_place_and_the_failure_updates_it() -> None:
    # Spec "Severity": a warning "does not terminate the turn"; "a later terminal failure updates
    # that record with a higher revision"; "Identity": "The same id with a higher revision updates
    # that entry in place".
    led = ledger()
    out = run(
        led,
        PromptStarted(turn_id="t1"),
        AgentRetrying(words="Retrying after 429 (attempt 1 of 3)", category=Category.LIMIT),
        AgentRetrying(words="Retrying after 429 (attempt 2 of 3)", category=Category.LIMIT),
        AgentTurnEnded(stop_reason="end_turn", failure=LIMIT),
    )
    assert [m.get("method", "answer") for m in out] == ["session/update", "session/update", "answer"]
    assert out[0]["params"]["update"]["sessionUpdate"] == "session_info_update"
    assert [rec(m) for m in out] == [
        {
            "id": "t1:error",
            "revision": 1,
            "category": "limit",
            "severity": "warning",
            "title": "Retrying after 429 (attempt 1 of 3)",
            "actions": [],
        },
        {
            "id": "t1:error",
            "revision": 2,
            "category": "limit",
            "severity": "warning",
            "title": "Retrying after 429 (attempt 2 of 3)",
            "actions": [],
        },
        {
            "id": "t1:error",
            "revision": 3,
            "category": "limit",
            "severity": "error",
            "title": "Resource has been exhausted (e.g. check quota).",
            "actions": ["retry"],
        },
    ]
    assert out[2]["id"] == "t1" and out[2]["result"]["stopReason"] == "end_turn"


def test_a_retried_turn_that_answers_ends_its_warning_silently() -> None:
    led = ledger()
    out = run(led, PromptStarted(turn_id="t1"), AgentRetrying(words="Retrying"), AgentAnswered())
    assert len(out) == 1 and [i.id for i in led.active] == ["t1:error"]
    assert run(led, AgentTurnEnded(stop_reason="end_turn")) == [
        {"jsonrpc": "2.0", "id": "t1", "result": {"stopReason": "end_turn"}}
    ]
    assert led.active == ()


def test_a_turn_cut_short_keeps_its_stop_reason_beside_the_record() -> None:
    refused = AgentFailure(key="refusal", category=Category.REQUEST, actions=(), fallback="The model declined.")
    out = run(ledger(), PromptStarted(turn_id="t1"), AgentTurnEnded(stop_reason="refusal", failure=refused))
    assert out[0]["result"]["stopReason"] == "refusal"
    assert rec(out[0]) == {
        "id": "t1:error",
        "revision": 1,
        "category": "request",
        "severity": "error",
        "title": "The model declined.",
        "actions": [],
    }


def test_recovery_is_at_the_next_real_answer_and_publishes_nothing() -> None:
    led = ledger()
    run(led, PromptStarted(turn_id="t1"), AgentTurnEnded(stop_reason="end_turn", failure=LIMIT))
    assert [(i.id, i.recovery) for i in led.active] == [("t1:error", Recovery.CONFIRMED_ATTEMPT)]
    assert run(led, PromptStarted(turn_id="t2"), AgentAnswered()) == []
    assert led.active == ()


def test_the_agent_exiting_settles_the_turn_and_waits_for_a_new_runtime() -> None:
    # Spec "Internal recovery": "transport loss and worker shutdown remain active until runtime
    # replacement"; a real answer does not end it.
    led = ledger()
    out = run(led, PromptStarted(turn_id="t1"), AgentExited(failure=EXITED))
    assert rec(out[0])["category"] == "connection" and rec(out[0])["actions"] == ["new_session"]
    assert [(i.id, i.recovery) for i in led.active] == [("t1:error", Recovery.RUNTIME_REPLACED)]
    run(led, AgentAnswered())
    assert [i.id for i in led.active] == ["t1:error"]


def test_the_agent_exiting_between_turns_is_a_session_scoped_record_once() -> None:
    led = ledger()
    out = run(led, AgentExited(failure=EXITED), AgentExited(failure=EXITED))
    assert len(out) == 1 and out[0]["params"]["update"]["sessionUpdate"] == "session_info_update"
    assert rec(out[0])["id"] == "s1:e1:1"
    assert rec(out[0])["title"] == "The agent stopped during this turn. Start a new session to go on."


def test_a_cancelled_turn_makes_no_record_of_its_late_failure() -> None:
    led = ledger()
    out = run(led, PromptStarted(turn_id="t1"), Cancelled(), AgentTurnEnded(stop_reason="end_turn", failure=LIMIT))
    assert out == [{"jsonrpc": "2.0", "id": "t1", "result": {"stopReason": "cancelled"}}]
    assert led.active == ()


def test_a_legacy_client_gets_the_json_rpc_error_and_no_record() -> None:
    # Spec "Capability negotiation": "Otherwise it preserves the legacy ACP behavior".
    led = ledger(negotiated=False)
    out = run(
        led,
        PromptStarted(turn_id="t1"),
        AgentRetrying(words="Retrying"),
        AgentTurnEnded(stop_reason="end_turn", failure=LIMIT),
    )
    assert out == [
        {
            "jsonrpc": "2.0",
            "id": "t1",
            "error": {"code": -32603, "message": "Internal error: Resource has been exhausted (e.g. check quota)."},
        }
    ]
    login = AgentFailure(key="access", category=Category.ACCESS, actions=(Action.LOGIN,), fallback="Log in.")
    out = run(led, PromptStarted(turn_id="t2"), AgentTurnEnded(stop_reason="end_turn", failure=login))
    assert out[0]["error"] == {"code": -32000, "message": "Authentication required"}


def test_a_second_concurrent_prompt_is_refused_and_changes_nothing() -> None:
    led = ledger()
    run(led, PromptStarted(turn_id="t1"))
    with pytest.raises(LocalProtocolError):
        led.feed(PromptStarted(turn_id="t2"))
    assert led.turn is not None and led.turn.turn_id == "t1"


def test_a_title_is_the_agents_redacted_words_or_the_fallback() -> None:
    assert agent_title("", "Fallback.") == ("Fallback.", None)
    assert agent_title("   ", "") == ("The agent reported a problem.", None)
    title, _ = agent_title("bad key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789", "F")
    assert "abcdefghijklmnopqrstuvwxyz0123456789" not in title and title.startswith("bad key ")
    cond = agent_condition(LIMIT)
    assert (cond.key, cond.category, cond.actions, cond.legacy_code) == (
        "agent:rate_limit",
        Category.LIMIT,
        (Action.RETRY,),
        -32603,
    )
