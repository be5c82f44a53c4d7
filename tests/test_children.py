"""A child session's lifecycle in the core (``lifecycle.children``, issue 51.2): a child's own
ledger (a :class:`SessionLedger` under the child's session id) takes its retries and its end;
expected records are the spec's ("Identity, revisions, and history", "Delivery surfaces",
"Severity"), expected errors README's conditions table and the reference adapter's legacy error.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from lifecycle import (
    AuthStatus,
    ChildEnded,
    ChildRetry,
    LocalProtocolError,
    PromptStarted,
    SessionLedger,
    read_record,
)
from lifecycle.acp import SessionPublisher
from lifecycle.agent.child_records import ChildRecords
from lifecycle.children import child_error, child_failure

CHILD = "abb67fc03e407a853"  # Claude Code's agent id, the child's session id
#: Claude Code 2.1.337's task error for a subagent whose every request got a 429 (seen on the wire:
#: tests/e2e/test_child_sessions.py).
FAILED_429 = (
    "Agent terminated early due to an API error: API Error: Request rejected (429) · Number of requests has "
    "exceeded your rate limit (error type rate_limit, HTTP 429, request id req_1, model sent to the API: m)"
)
FAILED_401 = (
    "Agent terminated early due to an API error: Invalid API key · Please run /login "
    "(error type authentication_failed, HTTP 401)"
)


def sends(ledger: SessionLedger, event: Any) -> list[dict[str, Any]]:
    ledger.feed(event)
    out = []
    while (o := ledger.next_outbound()) is not None:
        out.append(o.to_jsonrpc())
        ledger.delivered()
    return out


def record(frame: dict[str, Any]) -> dict[str, Any]:
    """The record of a ``session_info_update`` on the child's session, as its wire form."""
    assert frame["method"] == "session/update" and frame["params"]["sessionId"] == CHILD
    update = frame["params"]["update"]
    assert update["sessionUpdate"] == "session_info_update"  # spec: no prompt response, so this carrier
    found = read_record(update["_meta"])
    assert found is not None
    return found.model_dump(mode="json", exclude_none=True)


def test_retries_are_one_warning_updated_in_place_then_the_failure_updates_it() -> None:
    child = SessionLedger(CHILD, negotiated=True, epoch="e1")
    (first,) = sends(child, ChildRetry(attempt=1, max_retries=2, error_status=429, error="rate_limit"))
    (second,) = sends(child, ChildRetry(attempt=2, max_retries=2, error_status=429, error="rate_limit"))
    (failed,) = sends(child, ChildEnded(status="failed", error=FAILED_429))
    # spec: api_retry progress reuses the live failure id (<turnId>:error; the child's run is its
    # turn), a later terminal failure updates that record with a higher revision
    assert record(first) == {"id": f"{CHILD}:error", "revision": 1, "category": "limit", "severity": "warning",
                             "title": "Retrying Claude, attempt 1 of 2.", "actions": []}  # fmt: skip
    assert record(second) == {**record(first), "revision": 2, "title": "Retrying Claude, attempt 2 of 2."}
    # README's conditions table: rate_limit is limit / error / retry
    assert record(failed) == {"id": f"{CHILD}:error", "revision": 3, "category": "limit", "severity": "error",
                              "title": FAILED_429, "actions": ["retry"]}  # fmt: skip
    assert [a.id for a in child.active] == [f"{CHILD}:error"]


def test_a_completed_or_cancelled_child_publishes_nothing_and_its_warning_ends() -> None:
    for status in ("completed", "cancelled", "unexplained"):
        child = SessionLedger(CHILD, negotiated=True, epoch="e1")
        sends(child, ChildRetry(attempt=1, max_retries=2, error_status=None))
        assert sends(child, ChildEnded(status=status)) == [], status  # type: ignore[arg-type]
        assert child.active == (), status  # spec: recovery publishes no tombstone
        # a second end, or a retry after the end, changes nothing
        assert sends(child, ChildEnded(status="failed", error=FAILED_429)) == []
        assert sends(child, ChildRetry(attempt=2, max_retries=2, error_status=500)) == []


def test_a_legacy_client_gets_no_record_from_a_child() -> None:
    # spec: "If no capable client negotiated the extension, existing JSON-RPC errors ... remain"
    child = SessionLedger(CHILD, negotiated=False, epoch="e1")
    assert sends(child, ChildRetry(attempt=1, max_retries=2, error_status=429)) == []
    assert sends(child, ChildEnded(status="failed", error=FAILED_429)) == []


def test_a_child_never_moves_the_parents_turn() -> None:
    parent = SessionLedger("parent", negotiated=True, epoch="e1")
    sends(parent, PromptStarted(turn_id="turn-1"))
    flow = parent.flow
    child = SessionLedger(CHILD, negotiated=True, epoch="e1")
    sends(child, ChildEnded(status="failed", error=FAILED_429))
    assert (parent.flow, parent.active, parent.pending) == (flow, (), False)
    assert child.flow == "idle"  # a child's ledger has no turn: its end settles nothing


def test_an_unknown_end_is_refused_and_changes_nothing() -> None:
    child = SessionLedger(CHILD, negotiated=True, epoch="e1")
    with pytest.raises(LocalProtocolError):
        child.feed(ChildEnded(status="paused"))  # type: ignore[arg-type]
    (frame,) = sends(child, ChildEnded(status="failed"))
    # no text: the adapter's fallback title, never an empty one (spec: "Title and details")
    assert record(frame)["category"] == "service" and record(frame)["title"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # README's conditions table: the kind Claude Code names; legacy -32603 with errorKind
        (FAILED_429, {"code": -32603, "message": FAILED_429, "data": {"errorKind": "rate_limit"}}),
        # authentication: the legacy -32000, no data (the reference's "Authentication required")
        (FAILED_401, {"code": -32000, "message": FAILED_401}),
        # a text that names no kind: unrecognized_error, -32603 without data
        ("boom", {"code": -32603, "message": "boom"}),
    ],
)  # fmt: skip
def test_child_error(text: str, expected: dict[str, Any]) -> None:
    assert child_error(text) == expected


def test_a_secret_in_a_childs_error_never_reaches_the_client() -> None:
    # docs/security.md: every text a client reads is redacted (lifecycle.titles.present)
    got = child_error("failed: Authorization: Bearer sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789")
    assert "sk-ant-api03" not in got["message"] and got["code"] == -32603


def test_child_failure_reads_the_kind_claude_code_names() -> None:
    assert [child_failure(t)[0].key for t in (FAILED_429, FAILED_401, "boom", None)] == [
        "rate_limit", "authentication_failed", "unrecognized_error", "unrecognized_error"
    ]  # fmt: skip
    assert child_failure("(error type nonsense, HTTP 400)") == (child_failure("boom")[0], None)


class Sink:
    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        self.sent.append((session_id, update.model_dump(by_alias=True, exclude_none=True)))


def test_each_child_has_its_own_ledger_and_a_recovery_reaches_it() -> None:
    sink = Sink()
    parent = SessionPublisher(sink, SessionLedger("parent", negotiated=True, epoch="e1"))
    children = ChildRecords(sink, parent)

    async def go() -> None:
        await children.feed(CHILD, ChildEnded(status="failed", error=FAILED_401))
        await children.feed(CHILD, ChildEnded(status="paused"))  # type: ignore[arg-type]  # refused, logged
        await children.session_event(AuthStatus(ok=True))

    asyncio.run(go())
    ((sid, update),) = sink.sent
    assert sid == CHILD and update["sessionUpdate"] == "session_info_update"
    found = read_record(update["_meta"])
    assert found is not None and (found.id, found.category, found.actions) == (f"{CHILD}:error", "access", ("login",))
    child = children.ledger(CHILD)
    assert child is not None and child.active == ()  # spec: authentication recovers at auth_status
    assert parent.ledger.active == () and children.ledger("other") is None


def test_a_retry_in_a_childs_message_is_the_childs_not_the_parent_turns() -> None:
    # The translation lane (lifecycle/agent/translate.py) on a child's message (Pass.child set by
    # the child-sessions lane): its api_retry becomes the child's ChildRetry, on the child's session.
    # (Claude Code 2.1.337 sends a subagent's retries nowhere; this is the path if one comes.)
    from claude_agent_sdk import SystemMessage

    from lifecycle.agent.mcp import McpServers
    from lifecycle.agent.messages import Pass, read
    from lifecycle.agent.stream import StreamRenderer
    from lifecycle.agent.translate import Translation

    data = {"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 2, "retry_delay_ms": 500,
            "error_status": 529, "error": "overloaded"}  # fmt: skip
    lane = Translation(StreamRenderer("/project"), McpServers())
    message = read(SystemMessage(subtype="api_retry", data=data))
    steps = lane.run(Pass(message, turn="t1", quiet=False, prompt_open=True, child=CHILD))
    assert [(s.session, s.event) for s in steps if s.event is not None] == [
        (CHILD, ChildRetry(attempt=1, max_retries=2, error_status=529, error="overloaded"))
    ]
    parent = lane.run(Pass(message, turn="t1", quiet=False, prompt_open=True))
    assert [type(s.event).__name__ for s in parent if s.event is not None] == ["ApiRetry"]
