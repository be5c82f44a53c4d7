"""Spec: "Identity, revisions, and history" and "Actions" -- the receiving side."""

from __future__ import annotations

from typing import Any

from lifecycle.client import ClientProjection
from lifecycle.wire import Action


def rec(id_: str, revision: int, title: str = "t", actions: list[Any] | None = None, **kw: Any) -> dict[str, Any]:
    r = {
        "id": id_,
        "revision": revision,
        "category": "limit",
        "severity": "error",
        "title": title,
        "actions": actions or [],
    }
    r.update(kw)
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s1",
            "update": {
                "sessionUpdate": "session_info_update",
                "_meta": {"jetbrains": {"air": {"version": 1, "sessionFailure": r}}},
            },
        },
    }


def chunk(text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s1",
            "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
        },
    }


def test_first_record_creates_an_entry_at_the_stream_position_and_updates_stay_in_place() -> None:
    c = ClientProjection()
    c.receive_all([chunk("a"), rec("x", 1, "first"), chunk("b"), rec("x", 2, "second")])
    assert [e.kind for e in c.entries] == ["agent", "record", "agent"]
    assert c.entries[1].record is not None and c.entries[1].record.title == "second"


def test_same_or_lower_revisions_are_ignored() -> None:
    c = ClientProjection()
    c.receive_all([rec("x", 2, "two"), rec("x", 2, "again"), rec("x", 1, "old")])
    assert c.record("x").title == "two" and c.ignored == 2  # type: ignore[union-attr]


def test_different_ids_are_never_merged_even_with_the_same_title() -> None:
    c = ClientProjection()
    c.receive_all([rec("x", 1, "same"), rec("y", 1, "same")])
    assert [r.id for r in c.records] == ["x", "y"]


def test_unknown_and_duplicate_actions_are_filtered_and_unsupported_ones_dropped() -> None:
    c = ClientProjection(supported_actions=frozenset({Action.RETRY, Action.LOGIN}))
    c.receive(rec("x", 1, actions=["login", "reboot", "login", "new_session", "retry"]))
    assert [a.value for a in c.record("x").actions] == ["login", "retry"]  # type: ignore[union-attr]


def test_actions_are_never_inferred_from_category() -> None:
    c = ClientProjection()
    c.receive(rec("x", 1, actions=[]))
    assert c.record("x").actions == ()  # type: ignore[union-attr]


def test_malformed_records_are_counted_not_shown() -> None:
    c = ClientProjection()
    c.receive(rec("", 1))
    c.receive(rec("x", True))  # type: ignore[arg-type]
    assert c.records == [] and c.malformed == 2


def test_prompt_response_records() -> None:
    c = ClientProjection()
    body = rec("t1:error", 3)["params"]["update"]["_meta"]
    c.receive({"jsonrpc": "2.0", "id": "t1", "result": {"stopReason": "end_turn", "_meta": body}})
    assert c.entries[0].carrier == "prompt_response"
