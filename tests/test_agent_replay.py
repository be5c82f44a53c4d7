"""``lifecycle.agent.replay``: a stored session's thinking, tool calls and results around the
ledger's history (issue 30, point 5).

Stored messages are written in the form ``get_session_messages`` returns (dicts of ``type``,
``uuid``, ``message``). Expected updates are literals: the tool calls as the reference adapter
0.101.0 replayed the same transcript (tests/e2e/test_editor_replay.py compares the two live),
without its ``name`` key (docs/parity/README.md).
"""

from __future__ import annotations

from typing import Any

from session_harness import Session

from lifecycle.agent.replay import Replayed, replay
from lifecycle.history import load_history

CWD = "/work/p"
LIMIT = "You've hit your individual spend limit · run /usage-credits to ask your admin for a higher limit"


def user(uuid: str, content: Any) -> dict[str, Any]:
    return {"type": "user", "uuid": uuid, "parent_tool_use_id": None, "message": {"role": "user", "content": content}}


def assistant(
    uuid: str, *blocks: dict[str, Any], model: str = "claude-opus-5-5", msg_id: str = "msg_1"
) -> dict[str, Any]:
    message = {"id": msg_id, "model": model, "role": "assistant", "content": list(blocks)}
    return {"type": "assistant", "uuid": uuid, "parent_tool_use_id": None, "message": message}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def use(tool_id: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def result(tool_id: str, content: Any, is_error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": is_error}


def flat(steps: list[Replayed]) -> list[dict[str, Any]]:
    """The updates replay adds, in order, with a marker where each history event goes."""
    out: list[dict[str, Any]] = []
    for step in steps:
        out.extend(step.before)
        out.extend({"history": e.role, "text": e.text} for e in step.history.entries)
        out.extend(step.after)
    return out


def test_thinking_before_the_text_tool_calls_after_and_results_without_in_progress() -> None:
    stored = [
        user("u1", "write"),
        assistant(
            "a1",
            {"type": "thinking", "thinking": "Write it first.", "signature": "sig"},
            text("Writing."),
            use("toolu_w", "Write", file_path=f"{CWD}/new.txt", content="hello\n"),
            msg_id="msg_w",
        ),
        user("u2", [result("toolu_w", "File created successfully at: /work/p/new.txt")]),
        assistant("a2", text("Written."), msg_id="msg_done"),
    ]
    assert flat(list(replay(stored, CWD))) == [
        {"history": "user", "text": "write"},
        {
            "sessionUpdate": "agent_thought_chunk",
            "content": {"type": "text", "text": "Write it first."},
            "messageId": "msg_w",
        },
        {"history": "assistant", "text": "Writing."},
        {
            "_meta": {"claudeCode": {"toolName": "Write"}},
            "toolCallId": "toolu_w",
            "rawInput": {"file_path": "/work/p/new.txt", "content": "hello\n"},
            "sessionUpdate": "tool_call",
            "status": "pending",
            "title": "Write new.txt",
            "kind": "edit",
            "content": [{"type": "diff", "path": "/work/p/new.txt", "oldText": None, "newText": "hello\n"}],
            "locations": [{"path": "/work/p/new.txt"}],
        },
        {"history": "user", "text": ""},
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "toolu_w",
            "status": "completed",
            "_meta": {"claudeCode": {"toolName": "Write"}},
            "rawOutput": "File created successfully at: /work/p/new.txt",
        },
        {"history": "assistant", "text": "Written."},
    ]


def test_an_edit_keeps_its_diff_and_a_bash_result_its_output() -> None:
    stored = [
        user("u1", "edit and run"),
        assistant("a1", use("toolu_e", "Edit", file_path=f"{CWD}/new.txt", old_string="hello", new_string="bye")),
        user("u2", [result("toolu_e", "The file /work/p/new.txt has been updated successfully.")]),
        assistant("a2", use("toolu_b", "Bash", command="echo hi", description="Say hi")),
        user("u3", [result("toolu_b", [{"type": "text", "text": "hi"}])]),
    ]
    updates = [u for u in flat(list(replay(stored, CWD))) if "sessionUpdate" in u]
    edit, edit_end, bash, bash_end = updates
    assert (edit["title"], edit["content"]) == (
        "Edit new.txt",
        [{"type": "diff", "path": "/work/p/new.txt", "oldText": "hello", "newText": "bye"}],
    )
    assert (edit_end["sessionUpdate"], edit_end["status"], "content" in edit_end) == (
        "tool_call_update",
        "completed",
        False,
    )
    assert (bash["title"], bash["kind"]) == ("echo hi", "execute")
    assert bash_end["status"] == "completed"
    assert bash_end["content"] == [{"type": "content", "content": {"type": "text", "text": "```console\nhi\n```"}}]


def test_a_failed_result_is_failed_and_a_call_never_ended_fails_at_the_end() -> None:
    stored = [
        user("u1", "go"),
        assistant("a1", use("toolu_x", "Bash", command="exit 3")),
        user("u2", [result("toolu_x", "Exit code 3", is_error=True)]),
        assistant("a2", use("toolu_open", "Bash", command="sleep 100")),
    ]
    updates = [u for u in flat(list(replay(stored, CWD))) if "sessionUpdate" in u]
    assert [(u["toolCallId"], u["sessionUpdate"], u["status"]) for u in updates] == [
        ("toolu_x", "tool_call", "pending"),
        ("toolu_x", "tool_call_update", "failed"),
        ("toolu_open", "tool_call", "pending"),
        ("toolu_open", "tool_call_update", "failed"),
    ]


def test_a_plan_is_a_plan_and_subagent_or_unreadable_messages_add_nothing() -> None:
    todos = [{"content": "Edit", "status": "pending", "activeForm": "Editing"}]
    sub = assistant("s1", use("toolu_sub", "Bash", command="ls"))
    sub["parent_tool_use_id"] = "toolu_agent"
    side = {**assistant("s2", use("toolu_side", "Bash", command="ls")), "isSidechain": True}
    stored = [
        assistant("a1", use("toolu_t", "TodoWrite", todos=todos)),
        sub,
        side,
        {"type": "assistant", "uuid": "bad", "message": {"content": [{"type": "tool_use", "id": 7}, "junk"]}},
        {"type": "attachment"},
    ]
    steps = list(replay(stored, CWD))
    updates = [u for u in flat(steps) if "sessionUpdate" in u]
    assert updates == [
        {"sessionUpdate": "plan", "entries": [{"content": "Edit", "status": "pending", "priority": "medium"}]}
    ]
    # Every stored message still reaches the ledger, in order (it drops what is not top level).
    assert [len(s.history.entries) for s in steps] == [1, 1, 1, 1, 0]


def test_differential_the_ledger_fed_message_by_message_sends_what_the_whole_history_sends() -> None:
    """Differential: the sessionFailure replay rules hold when ``load_session`` feeds each
    stored message's history on its own (a capable and a legacy client)."""
    stored = [
        user("u1", "try"),
        assistant("a1", text(LIMIT), model="<synthetic>"),
        user("u2", "again"),
        assistant("a2", text("Recovered"), use("toolu_r", "Read", file_path=f"{CWD}/a")),
        user("u3", [result("toolu_r", "x")]),
        user("u4", "once more"),
        assistant("a3", text(LIMIT), model="<synthetic>"),
    ]
    for negotiated in (True, False):
        whole = Session(negotiated=negotiated)
        whole.feed(load_history(stored))
        parts = Session(negotiated=negotiated)
        for step in replay(stored, CWD):
            if step.history.entries:
                parts.feed(step.history)
        assert [m.to_jsonrpc() for m in parts.sent] == [m.to_jsonrpc() for m in whole.sent]
        assert parts.active_ids == whole.active_ids == (["u4:error"] if negotiated else [])
