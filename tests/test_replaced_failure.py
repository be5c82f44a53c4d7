"""A failure printed in a message the provider then replaced is superseded (issue 49.3: "replaced
messages after an unparsable tool call [...]: a replaced failure is superseded").

CLI 2.1.337 names, on an assistant line, the earlier messages it replaces (``supersedes``: "Uuids of
earlier messages that this message replaces: after a refusal fallback, or after a response whose
tool call could not be parsed", ``sdk.d.ts`` of npm ``@anthropic-ai/claude-agent-sdk`` 0.3.337).
The core reads it as :class:`lifecycle.events.MessagesReplaced`; if it names the message whose
failure the turn holds, the turn machine's ``failure_replaced`` drops that failure
(lifecycle/session_flow.py's rules) and the turn ends by what comes next.
"""

from __future__ import annotations

import pytest
from session_harness import Session

from lifecycle import Assistant, MessagesReplaced, PromptResponseOut, PromptStarted, Result
from lifecycle.claude import replaced_uuids, stream_events

# Claude Code's provider-error text (as the recorded 529 of tests/expected.py's corpus begins, error
# kind ``server_error``) and a fallback model's answer.
FAILED = "API Error: 529 Overloaded. This is a server-side issue, usually temporary."
OK = Result(subtype="success", is_error=False, result="Here is the answer.", stop_reason="end_turn")


def _failure(uuid: str | None = "f1") -> Assistant:
    return Assistant(text=FAILED, model="<synthetic>", error="server_error", uuid=uuid)


def _answer() -> Assistant:
    return Assistant(text="Here is the answer.", model="claude-opus-4-8", uuid="a2")


@pytest.mark.parametrize("negotiated", [True, False], ids=["capable", "legacy"])
def test_a_replaced_failure_does_not_settle_the_turn(negotiated: bool) -> None:
    s = Session(negotiated=negotiated)
    s.feed(PromptStarted(turn_id="t1"), _failure())
    assert s.ledger.flow == "failing"
    assert s.feed(MessagesReplaced(uuids=("f1",))) == []  # superseding sends nothing
    assert s.ledger.flow == "running"  # the machine's rule: only an answer that stands marks it answered
    s.feed(_answer())
    assert s.ledger.flow == "answered"
    out = s.feed(OK)
    settles = [o for o in out if isinstance(o, PromptResponseOut)]
    # The turn ended well: end_turn, no record (capable), no JSON-RPC error (legacy).
    assert [(o.stop_reason, o.record) for o in settles] == [("end_turn", None)]
    assert s.ledger.active == ()


def test_a_replacement_that_names_other_messages_leaves_the_held_failure() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), _failure())
    s.feed(MessagesReplaced(uuids=("x1", "x2")), _answer())
    assert s.ledger.flow == "failing"
    (settle,) = [o for o in s.feed(OK) if isinstance(o, PromptResponseOut)]
    assert settle.stop_reason == "end_turn" and settle.record is not None
    assert settle.record.title == FAILED  # Claude's own text settles it, as before
    assert ("replaced_no_held_failure", {"session_id": "s1", "count": 2}) in s.observed.notes


def test_a_failure_without_a_uuid_cannot_be_named() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), _failure(uuid=None), MessagesReplaced(uuids=("f1",)))
    assert s.ledger.flow == "failing"


def test_only_the_held_failure_s_message_counts() -> None:
    # The turn holds its first failure; a second one adds nothing, so replacing the second
    # lets nothing go (the machine's failing -> failing on claude_failure).
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), _failure("f1"), _failure("f2"), MessagesReplaced(uuids=("f2",)))
    assert s.ledger.flow == "failing"
    s.feed(MessagesReplaced(uuids=("f1",)))
    assert s.ledger.flow == "running"


@pytest.mark.parametrize("setup", ["idle", "running", "answered"])
def test_a_replacement_outside_a_held_failure_changes_nothing(setup: str) -> None:
    s = Session()
    start = [PromptStarted(turn_id="t1")]
    events = {"idle": [], "running": start, "answered": [*start, _answer()]}
    s.feed(*events[setup])
    assert s.feed(MessagesReplaced(uuids=("f1",))) == []
    assert s.ledger.flow == setup


def test_a_replaced_failure_then_a_new_failure_holds_the_new_one() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), _failure("f1"), MessagesReplaced(uuids=("f1",)))
    rate = "API Error: Request rejected (429) · Number of requests has exceeded your rate limit"
    s.feed(Assistant(text=rate, model="<synthetic>", error="rate_limit", uuid="f2"))
    (settle,) = [o for o in s.feed(OK) if isinstance(o, PromptResponseOut)]
    assert settle.record is not None and settle.record.title == rate


# The Claude edge: the recorded shape of CLI 2.1.337's replacing answer (the assistant line of
# tests/e2e/test_replaced_messages.py's refusal fallback, ids shortened): ``supersedes`` beside
# ``uuid`` on the line, not inside ``message``.
LINE = {
    "type": "assistant",
    "message": {
        "id": "msg_a2", "type": "message", "role": "assistant", "model": "claude-opus-4-8",
        "content": [{"type": "text", "text": "Here is the answer."}], "stop_reason": None,
    },
    "parent_tool_use_id": None,
    "session_id": "s1",
    "uuid": "a2",
    "supersedes": ["f1"],
}  # fmt: skip


def test_a_replacing_line_is_the_replacement_then_the_answer() -> None:
    replaced, answer = stream_events(LINE)
    assert replaced == MessagesReplaced(uuids=("f1",))
    assert isinstance(answer, Assistant) and answer.uuid == "a2" and answer.text == "Here is the answer."
    assert stream_events({**LINE, "supersedes": []}) == (answer,)
    assert stream_events({"type": "user", "supersedes": ["f1"]}) == ()  # only an assistant line replaces


@pytest.mark.parametrize(
    ("value", "named"),
    [(None, ()), ("f1", ()), ([7, None, "", "x" * 101], ()), (["a", "b"], ("a", "b"))],
)
def test_what_supersedes_names_is_bounded(value: object, named: tuple[str, ...]) -> None:
    assert replaced_uuids(value) == named
    assert replaced_uuids([f"u{i}" for i in range(100)]) == tuple(f"u{i}" for i in range(64))


# A replayed history (session/load): a message a later one names as replaced is left out, so a
# failure it carried is superseded there too. Shapes: the stored transcript's user / assistant
# lines (tests/conformance/cases/replay-restores-usage-limit), the usage-limit text Claude Code
# prints (tests/stateful_session.py's FAILURES), ``supersedes`` as on the live line.
LIMIT = "You've hit your 5-hour limit · resets 4:06pm (UTC)"


def _history(supersedes: list[str] | None) -> list[dict[str, object]]:
    answer: dict[str, object] = {
        "type": "assistant", "uuid": "a2", "parent_tool_use_id": None,
        "message": {"role": "assistant", "model": "claude-opus-4-8", "content": [{"type": "text", "text": "Done."}]},
    }  # fmt: skip
    if supersedes is not None:
        answer["supersedes"] = supersedes
    return [
        {"type": "user", "uuid": "u1", "parent_tool_use_id": None,
         "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}},
        {"type": "assistant", "uuid": "a1", "parent_tool_use_id": None,
         "message": {"role": "assistant", "model": "<synthetic>", "content": [{"type": "text", "text": LIMIT}]}},
        answer,
    ]  # fmt: skip


def test_a_replaced_failure_is_not_replayed() -> None:
    from lifecycle.history import load_history

    kept = Session()
    kept.feed(load_history(_history(None)))
    # Without the replacement the limit is replayed (as history: the later answer recovered it).
    assert [o.record.title for o in kept.sent if o.record is not None] == [LIMIT]
    replaced = Session()
    replaced.feed(load_history(_history(["a1"])))
    assert [o.record for o in replaced.sent if o.record is not None] == []
    assert [e.uuid for e in load_history(_history(["a1"])).entries] == ["u1", "a2"]
    assert [e.uuid for e in load_history(_history(["zz", 7])).entries] == ["u1", "a1", "a2"]  # type: ignore[list-item]
