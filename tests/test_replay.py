"""Spec: "History replay" -- ``session/load`` restores usage-limit failures at their positions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from session_harness import Session

from lifecycle import HistoryEntry
from lifecycle.history import history_entry, load_history

HERE = Path(__file__).parent / "fixtures" / "claude-cli-2.1.332"
LIMIT = "You've hit your individual spend limit · run /usage-credits to ask your admin for a higher limit"


def user(uuid: str, text: str = "try") -> dict[str, Any]:
    return {"type": "user", "uuid": uuid, "parent_tool_use_id": None, "message": {"role": "user", "content": text}}


def assistant(uuid: str, text: str, model: str = "claude-opus-5-5", parent: str | None = None) -> dict[str, Any]:
    return {
        "type": "assistant",
        "uuid": uuid,
        "parent_tool_use_id": parent,
        "message": {"model": model, "role": "assistant", "content": [{"type": "text", "text": text}]},
    }


def replay(history: list[dict[str, Any]], negotiated: bool = True) -> Session:
    s = Session(negotiated=negotiated)
    s.feed(load_history(history))
    return s


def test_a_usage_limit_is_replayed_at_its_position_with_the_user_uuid_as_turn_id() -> None:
    s = replay([user("u1", "hi"), assistant("m1", LIMIT, "<synthetic>"), user("u2", "next")])
    kinds = [m.update["sessionUpdate"] for m in s.sent]  # type: ignore[union-attr]
    assert kinds == ["user_message_chunk", "session_info_update", "user_message_chunk"]
    (rec,) = s.records
    assert (rec.id, rec.revision, rec.category.value, rec.severity.value, rec.title) == (
        "u1:error",
        1,
        "limit",
        "error",
        LIMIT,
    )
    assert s.active_ids == ["u1:error"]
    # the duplicate prose is suppressed
    assert not any(e.kind == "agent" for e in s.client.entries)


def test_only_synthetic_messages_with_the_stable_prefixes_are_recognised() -> None:
    s = replay(
        [
            user("u1"),
            assistant("m1", LIMIT),  # model prose quoting the text is not the CLI's message
            assistant("m2", "No response requested.", "<synthetic>"),
            assistant("m3", "API Error: Request rejected (429)", "<synthetic>"),
            assistant("m4", f"Note: {LIMIT}", "<synthetic>"),  # a prefix, not a substring
        ]
    )
    assert s.records == []
    assert [e.text for e in s.client.entries if e.kind == "agent"] == [
        LIMIT,
        "No response requested.",
        "API Error: Request rejected (429)",
        f"Note: {LIMIT}",
    ]


def test_every_occurrence_is_replayed_and_only_the_latest_stays_active() -> None:
    s = replay(
        [
            user("u1"),
            assistant("m1", LIMIT, "<synthetic>"),
            user("u2"),
            assistant("m2", "You've reached your weekly limit", "<synthetic>"),
        ]
    )
    assert [r.id for r in s.records] == ["u1:error", "u2:error"]
    assert s.active_ids == ["u2:error"]


def test_a_later_real_model_answer_proves_recovery_and_local_commands_prove_nothing() -> None:
    base = [user("u1"), assistant("m1", LIMIT, "<synthetic>"), user("u2")]
    assert replay([*base, assistant("m2", "No response requested.", "<synthetic>")]).active_ids == ["u1:error"]
    s = replay([*base, assistant("m2", "Recovered")])
    assert [r.id for r in s.records] == ["u1:error"] and s.active_ids == []


def test_history_without_a_preceding_user_message_falls_back_to_the_history_error_id() -> None:
    s = replay([assistant("m1", LIMIT, "<synthetic>")])
    assert [r.id for r in s.records] == ["s1:history-error:m1"]


def test_tool_results_and_meta_messages_are_not_the_turn() -> None:
    tool_result = {
        "type": "user",
        "uuid": "r1",
        "parent_tool_use_id": None,
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "ok"}]},
    }
    meta = {**user("meta1", "Output token limit hit. Resume directly"), "isMeta": True}
    s = replay([user("u1"), tool_result, meta, assistant("m1", LIMIT, "<synthetic>")])
    assert [r.id for r in s.records] == ["u1:error"]


def test_subagent_messages_are_not_top_level_history() -> None:
    s = replay([user("u1"), assistant("m1", LIMIT, "<synthetic>", parent="toolu_1")])
    assert s.records == []


def test_legacy_clients_receive_the_original_transcript_and_no_typed_record() -> None:
    s = replay([user("u1", "hi"), assistant("m1", LIMIT, "<synthetic>")], negotiated=False)
    assert s.records == []
    assert [(e.kind, e.text) for e in s.client.entries] == [("user", "hi"), ("agent", LIMIT)]


def test_get_session_messages_recordings_are_recognised_without_the_error_fields() -> None:
    """get_session_messages drops error/isApiErrorMessage: the synthetic model and prefix suffice."""
    lines = [
        json.loads(x)["fields"] for x in (HERE / "usage_limit_gateway.session_messages.jsonl").read_text().splitlines()
    ]
    assert all("error" not in f and "isApiErrorMessage" not in f for f in lines)
    s = replay(lines)
    (rec,) = s.records
    assert rec.title == "You've hit your 5-hour limit · resets 4:06pm (UTC)"
    assert rec.id == f"{lines[0]['uuid']}:error"


def test_other_failures_in_history_restore_nothing() -> None:
    for scenario in ("http429", "max_tokens", "success"):
        lines = [
            json.loads(x)["fields"] for x in (HERE / f"{scenario}.session_messages.jsonl").read_text().splitlines()
        ]
        assert replay(lines).records == [], scenario


def test_history_entries_from_raw_transcript_lines() -> None:
    raw = {
        "type": "assistant",
        "uuid": "a",
        "isSidechain": False,
        "error": "rate_limit",
        "isApiErrorMessage": True,
        "message": {"model": "<synthetic>", "content": [{"type": "text", "text": LIMIT}]},
    }
    assert history_entry(raw) == HistoryEntry(role="assistant", uuid="a", text=LIMIT, model="<synthetic>")
    assert history_entry({"type": "attachment"}) is None
    assert history_entry({"type": "assistant", "message": "garbage"}) is None
    assert history_entry({**raw, "isSidechain": True}).top_level is False  # type: ignore[union-attr]


def test_a_long_history_may_stream_in_chunks_with_the_same_result() -> None:
    history = [
        user("u1"),
        assistant("m1", LIMIT, "<synthetic>"),
        user("u2"),
        assistant("m2", "Recovered"),
        user("u3"),
        assistant("m3", LIMIT, "<synthetic>"),
        user("u4"),
        assistant("m4", "You've reached your weekly limit", "<synthetic>"),
    ]
    whole = replay(history)
    for size in (1, 2, 3):
        s = Session()
        for i in range(0, len(history), size):
            s.feed(load_history(history[i : i + size]))
        assert [m.to_jsonrpc() for m in s.sent] == [m.to_jsonrpc() for m in whole.sent]
        assert s.active_ids == whole.active_ids == ["u4:error"]


def test_two_limits_after_one_prompt_get_distinct_ids() -> None:
    s = replay([user("u1"), assistant("m1", LIMIT, "<synthetic>"), assistant("m2", LIMIT, "<synthetic>")])
    assert [r.id for r in s.records] == ["u1:error", "s1:history-error:m2"]
    assert s.active_ids == ["s1:history-error:m2"]
