"""Spec: "Identity, revisions, and history" and "Actions" -- the receiving side."""

from __future__ import annotations

from typing import Any

import pytest

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


# ---------------------------------------------------------------- exact bookkeeping


def meta_of(message: dict[str, Any]) -> dict[str, Any]:
    return message["params"]["update"]["_meta"]  # type: ignore[no-any-return]


def test_every_revision_received_is_remembered_and_only_higher_ones_apply() -> None:
    c = ClientProjection()
    c.receive_all([rec("x", 2, "two"), rec("x", 2, "again"), rec("x", 1, "old"), rec("x", 3, "three")])
    assert c.received == {"x": [2, 2, 1, 3]}
    assert (c.ignored, c.malformed) == (2, 0)
    assert [(e.kind, e.record.revision, e.record.title, e.carrier) for e in c.entries] == [  # type: ignore[union-attr]
        ("record", 3, "three", "session_info_update")
    ]


def test_an_update_replaces_the_carrier_too() -> None:
    c = ClientProjection()
    c.receive(rec("t1:error", 1))
    body = meta_of(rec("t1:error", 2, "final"))
    c.receive({"jsonrpc": "2.0", "id": "t1", "result": {"stopReason": "end_turn", "_meta": body}})
    assert [(e.record.revision, e.carrier) for e in c.entries] == [(2, "prompt_response")]  # type: ignore[union-attr]


def test_text_chunks_of_both_roles() -> None:
    c = ClientProjection()
    user = chunk("typed")
    user["params"]["update"]["sessionUpdate"] = "user_message_chunk"
    c.receive_all([user, chunk("answer")])
    assert [(e.kind, e.text, e.record, e.carrier) for e in c.entries] == [
        ("user", "typed", None, None),
        ("agent", "answer", None, None),
    ]


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "session/update", "params": None},
        {"jsonrpc": "2.0", "method": "session/update", "params": {"update": None}},
        {"jsonrpc": "2.0", "method": "session/update", "params": {"update": {"sessionUpdate": "plan"}}},
        {"jsonrpc": "2.0", "method": "session/update",
         "params": {"update": {"sessionUpdate": "agent_message_chunk", "content": {"text": 5}}}},
        {"jsonrpc": "2.0", "method": "session/update",
         "params": {"update": {"sessionUpdate": "agent_message_chunk", "content": "text"}}},
        {"jsonrpc": "2.0", "method": "session/update",
         "params": {"update": {"sessionUpdate": "session_info_update"}}},
        {"jsonrpc": "2.0", "method": "other", "params": {"update": meta_of(rec("x", 1))}},
        {"jsonrpc": "2.0", "id": "t1", "result": None},
        {"jsonrpc": "2.0", "id": "t1", "result": {"stopReason": "end_turn"}},
        {"jsonrpc": "2.0", "id": "t1", "error": {"code": -32603, "message": "Internal error",
                                                 "_meta": meta_of(rec("x", 1))}},
    ],
)
def test_messages_without_text_or_record_show_nothing(message: dict[str, Any]) -> None:
    c = ClientProjection()
    c.receive(message)
    assert (c.entries, c.received, c.malformed, c.ignored) == ([], {}, 0, 0)


def test_a_record_on_a_session_update_that_is_not_an_info_update_is_not_read() -> None:
    c = ClientProjection()
    m = rec("x", 1)
    m["params"]["update"]["sessionUpdate"] = "agent_message_chunk"
    m["params"]["update"]["content"] = {"type": "text", "text": "hi"}
    c.receive(m)
    assert [(e.kind, e.record) for e in c.entries] == [("agent", None)]


@pytest.mark.parametrize(
    "air",
    [
        {"version": 0, "sessionFailure": {"id": "x"}},
        {"sessionFailure": {"id": "x"}},
        {"version": True, "sessionFailure": {"id": "x"}},
        {"version": "1", "sessionFailure": {"id": "x"}},
        {"version": 1, "sessionFailure": None},
        {"version": 1, "sessionFailure": ["x"]},
    ],
)
def test_a_record_present_but_unusable_is_malformed(air: dict[str, Any]) -> None:
    c = ClientProjection()
    c.receive_meta({"jetbrains": {"air": air}}, carrier="session_info_update")
    assert (c.entries, c.malformed, c.received) == ([], 1, {})


def test_a_later_version_is_read() -> None:
    c = ClientProjection()
    wire = meta_of(rec("x", 1))["jetbrains"]["air"]["sessionFailure"]
    c.receive_meta({"jetbrains": {"air": {"version": 2, "sessionFailure": wire}}}, carrier="prompt_response")
    assert [(r.id, r.revision) for r in c.records] == [("x", 1)] and c.entries[0].carrier == "prompt_response"


def test_no_record_at_all_is_not_malformed() -> None:
    c = ClientProjection()
    for meta in (None, {}, {"jetbrains": {"air": {"version": 1}}}, {"quota": 1}):
        c.receive_meta(meta, carrier="session_info_update")
    assert (c.entries, c.malformed) == ([], 0)


def test_actions_that_are_not_an_array_make_the_record_malformed() -> None:
    c = ClientProjection()
    c.receive(rec("x", 1, actions="retry"))  # type: ignore[arg-type]
    assert (c.records, c.malformed) == ([], 1)


def test_non_string_actions_are_filtered() -> None:
    c = ClientProjection()
    c.receive(rec("x", 1, actions=[1, None, "retry", ["login"]]))
    assert [a.value for a in c.record("x").actions] == ["retry"]  # type: ignore[union-attr]


def test_a_client_without_any_action_drops_them_all() -> None:
    c = ClientProjection(supported_actions=frozenset())
    c.receive(rec("x", 1, actions=["retry", "login", "new_session"]))
    assert c.record("x").actions == ()  # type: ignore[union-attr]
    assert ClientProjection().supported_actions == frozenset({Action.RETRY, Action.LOGIN, Action.NEW_SESSION})


def test_record_of_an_unknown_id_is_none_and_records_keep_transcript_order() -> None:
    c = ClientProjection()
    c.receive_all([rec("b", 1), chunk("x"), rec("a", 1), rec("b", 2)])
    assert c.record("zzz") is None
    assert [(r.id, r.revision) for r in c.records] == [("b", 2), ("a", 1)]
    assert c.record("a").revision == 1  # type: ignore[union-attr]
