"""``session/load``'s replay of the children (``lifecycle.agent.child_replay``, issue 51.1) on the
SDK's ``SessionMessage`` of the shapes Claude Code 2.1.337 stores (the parent's transcript, and a
subagent's from ``get_subagent_messages``: each message naming the Agent call that launched it),
every ``subagent_update`` checked against ACP's schema. The end states are the reference adapter
0.101.0's ``replaySubagentTerminalState`` (subagent-replay.js); the notice's words are its own."""

from __future__ import annotations

from typing import Any

import pytest
from acp_schema import conforms
from claude_agent_sdk import SessionMessage

from lifecycle.agent.child_replay import child_replay

CHILD = "abb67fc03e407a853"
PARENT = "11111111-1111-1111-1111-111111111111"


def parent(kind: str, *blocks: dict[str, Any]) -> SessionMessage:
    role = "assistant" if kind == "assistant" else "user"
    return SessionMessage(type=kind, uuid="u", session_id=PARENT, message={"role": role, "content": list(blocks)})  # type: ignore[arg-type]


def child(kind: str, *blocks: dict[str, Any], launch: str | None = "toolu_agent") -> SessionMessage:
    role = "assistant" if kind == "assistant" else "user"
    message = {"role": role, "content": list(blocks), "id": "msg_1"}
    return SessionMessage(type=kind, uuid="c", session_id=PARENT, message=message, parent_tool_use_id=launch)  # type: ignore[arg-type]


def launch(tool_id: str = "toolu_agent", **extra: Any) -> SessionMessage:
    call = {"description": "Read the note", "prompt": "Read note.txt.", "subagent_type": "general-purpose", **extra}
    return parent("assistant", {"type": "tool_use", "id": tool_id, "name": "Agent", "input": call})


def result(content: str, *, is_error: bool = False, tool_id: str = "toolu_agent") -> SessionMessage:
    return parent("user", {"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": is_error})


READER = [
    child("user", {"type": "text", "text": "Read note.txt."}),
    child(
        "assistant", {"type": "tool_use", "id": "toolu_sub_read", "name": "Read", "input": {"file_path": "/p/n.txt"}}
    ),
    child("user", {"type": "tool_result", "tool_use_id": "toolu_sub_read", "content": "hello"}),
    child("assistant", {"type": "text", "text": "It says hello."}),
]


def test_a_child_is_announced_replayed_on_its_session_and_ended_as_its_launch_ended() -> None:
    replayed = child_replay([launch(), result("The note says hello.")], {CHILD: READER}, "/p")
    assert replayed.notice is None
    sessions = [(s, u["sessionUpdate"]) for s, u in replayed.updates]
    assert sessions == [
        (None, "subagent_update"),
        (CHILD, "tool_call"),
        (CHILD, "tool_call_update"),
        (CHILD, "agent_message_chunk"),
        (None, "subagent_update"),
    ]
    announce, *_, end = [u for _, u in replayed.updates]
    assert announce == {
        "sessionUpdate": "subagent_update", "sessionId": CHILD, "title": "Read the note",
        "description": "general-purpose", "state": {"state": "running"},
    }  # fmt: skip
    assert end == {
        "sessionUpdate": "subagent_update",
        "sessionId": CHILD,
        "state": {"state": "idle", "stopReason": "end_turn"},
    }
    read = replayed.updates[2][1]
    assert read["status"] == "completed" and read["_meta"]["claudeCode"]["parentToolUseId"] == "toolu_agent"
    assert replayed.updates[3][1]["content"]["text"] == "It says hello."
    assert all(conforms(u) for s, u in replayed.updates if s is None)


@pytest.mark.parametrize(
    ("content", "is_error", "background", "state"),
    [
        ("[Request interrupted by user for tool use]", True, False, {"state": "idle", "stopReason": "cancelled"}),
        (
            "Agent terminated early due to an API error",
            True,
            False,
            {
                "state": "idle",
                "stopReason": "error",
                "error": {"code": -32603, "message": "Agent terminated early due to an API error"},
            },
        ),
        ("Async agent launched successfully.", False, False, {"state": "idle"}),  # ran in the background
        ("Async agent launched successfully.", False, True, {"state": "idle"}),
    ],
    ids=["interrupted", "failed", "launched", "background"],
)
def test_the_replayed_end_is_what_the_launch_result_says(
    content: str, is_error: bool, background: bool, state: dict[str, Any]
) -> None:
    extra = {"run_in_background": True} if background else {}
    replayed = child_replay([launch(**extra), result(content, is_error=is_error)], {CHILD: READER}, "/p")
    end = replayed.updates[-1][1]
    assert end["state"] == state and conforms(end)


def test_a_launch_whose_history_is_missing_is_not_announced_and_a_notice_says_how_many() -> None:
    stored = [launch(), result("ok"), launch("toolu_other"), result("ok", tool_id="toolu_other"), launch("toolu_3")]
    replayed = child_replay(stored, {CHILD: READER}, "/p")
    assert {u["sessionId"] for _, u in replayed.updates if u["sessionUpdate"] == "subagent_update"} == {CHILD}
    assert replayed.notice == (
        "Some subagent history is not available\nThe history of 2 subagents of this session could not be restored."
    )
    one = child_replay([launch()], {"orphan": [child("assistant", {"type": "text", "text": "x"}, launch=None)]}, "/p")
    assert one.updates == []
    assert one.notice is not None and one.notice.endswith(
        "The history of 1 subagent of this session could not be restored."
    )


def test_a_transcript_that_is_not_claude_codes_replays_what_it_can() -> None:
    odd = [child("assistant", {"type": "tool_use", "id": 7, "name": None}), child("user", {"type": "tool_result"})]
    replayed = child_replay([launch(), parent("user", {"type": "tool_result"}), "junk"], {CHILD: odd, "x": []}, "/p")
    kinds = [u["sessionUpdate"] for _, u in replayed.updates]
    assert kinds[0] == kinds[-1] == "subagent_update" and replayed.notice is None
