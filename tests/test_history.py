"""Spec: "History replay" -- ``session/load`` restores usage-limit failures at their positions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from session_harness import Session

from lifecycle import HistoryEntry
from lifecycle.history import (
    history_entry,
    load_history,
    read_transcript,
    replaced_uuids,
    replayed_prompt,
    strip_markers,
    unreadable_notice,
)

HERE = Path(__file__).parent / "fixtures" / "claude-cli-2.1.337"
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
    assert rec.title == "You've hit your 5-hour limit · resets 5pm (UTC)"
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


# ---------------------------------------------------------------- exact entries and ids


class SessionMessage:
    """The SDK's ``SessionMessage`` shape: read by attribute."""

    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)


def test_a_session_message_object_is_read_by_attribute() -> None:
    msg = SessionMessage(
        type="assistant", uuid="m1", message={"model": "<synthetic>", "content": LIMIT}, parent_tool_use_id=None
    )
    assert history_entry(msg) == HistoryEntry(role="assistant", uuid="m1", text=LIMIT, model="<synthetic>")
    prompt = SessionMessage(type="user", uuid="u1", message={"role": "user", "content": "hi"})
    assert history_entry(prompt) == HistoryEntry(role="user", uuid="u1", text="hi", prompt=True)
    assert history_entry(SessionMessage(type="system", uuid="x", message={})) is None
    assert history_entry(object()) is None


def test_user_entries_exactly() -> None:
    assert history_entry(user("u1", "hello")) == HistoryEntry(
        role="user", uuid="u1", text="hello", top_level=True, prompt=True
    )
    # A tool result is not a prompt, and its text is not replayed as the user's.
    tool_result = {
        "type": "user",
        "uuid": "r1",
        "message": {
            "content": [
                {"type": "text", "text": "visible"},
                {"type": "tool_result", "tool_use_id": "x", "content": "ok"},
            ]
        },
    }
    assert history_entry(tool_result) == HistoryEntry(role="user", uuid="r1", text="", top_level=True, prompt=False)
    meta = {**user("m", "Caveat: hidden"), "isMeta": True}
    assert history_entry(meta) == HistoryEntry(role="user", uuid="m", text="", top_level=True, prompt=False)
    sub = {**user("s", "subagent prompt"), "parent_tool_use_id": "toolu_1"}
    assert history_entry(sub) == HistoryEntry(role="user", uuid="s", text="", top_level=False, prompt=False)
    side = {**user("c", "sidechain"), "isSidechain": True}
    assert history_entry(side) == HistoryEntry(role="user", uuid="c", text="", top_level=False, prompt=False)
    # Text blocks that merely look like tool results are still a prompt.
    blocks = {"type": "user", "uuid": "b", "message": {"content": [{"type": "text", "text": "a"}, "tool_result"]}}
    assert history_entry(blocks) == HistoryEntry(role="user", uuid="b", text="a", prompt=True)


@pytest.mark.parametrize("uuid", [None, "", 7, ["u"]])
def test_a_missing_or_odd_uuid_is_none(uuid: object) -> None:
    entry = history_entry({"type": "assistant", "uuid": uuid, "message": {"model": 5, "content": "x"}})
    assert entry == HistoryEntry(role="assistant", uuid=None, text="x", model=None)


def test_replayed_ids_exactly() -> None:
    history = [
        assistant("m0", LIMIT, "<synthetic>"),  # no prompt before it
        user("u1"),
        assistant("m1", LIMIT, "<synthetic>"),
        assistant("m2", LIMIT, "<synthetic>"),  # the prompt's id is taken
        {"type": "assistant", "message": {"model": "<synthetic>", "content": LIMIT}},  # no uuid either
    ]
    s = Session(epoch="ep")
    s.feed(load_history(history))
    assert [r.id for r in s.records] == ["s1:history-error:m0", "u1:error", "s1:history-error:m2", "s1:history-error:1"]
    assert s.active_ids == ["s1:history-error:1"]
    assert [(r.category.value, r.severity.value, list(r.actions), r.title, r.details) for r in s.records] == [
        ("limit", "error", [], LIMIT, None)
    ] * 4


def test_a_history_that_repeats_a_message_uuid_still_gets_distinct_ids() -> None:
    history = [assistant("m1", LIMIT, "<synthetic>"), assistant("m1", LIMIT, "<synthetic>")]
    s = replay(history)
    assert [r.id for r in s.records] == ["s1:history-error:m1", "s1:history-error:1"]


def test_a_prompt_whose_failure_is_active_is_not_reused() -> None:
    s = Session()
    s.feed(load_history([user("u1"), assistant("m1", LIMIT, "<synthetic>")]))
    s.feed(load_history([user("u1"), assistant("m2", LIMIT, "<synthetic>")]))  # the same prompt id again
    assert [r.id for r in s.records] == ["u1:error", "s1:history-error:m2"]


def test_subagent_entries_are_skipped_and_the_rest_of_the_history_still_replays() -> None:
    s = replay(
        [
            user("u1"),
            assistant("x", "sub", parent="toolu_1"),
            assistant("m1", LIMIT, "<synthetic>"),
            assistant("a1", "Real answer"),
        ]
    )
    assert [r.id for r in s.records] == ["u1:error"]
    assert [(e.kind, e.text) for e in s.client.entries if e.kind != "record"] == [
        ("user", "try"),
        ("agent", "Real answer"),
    ]
    assert s.active_ids == []


def test_a_long_replayed_text_has_details() -> None:
    long = "You've hit your limit · " + "x" * 600
    s = replay([user("u1"), assistant("m1", long, "<synthetic>")])
    (rec,) = s.records
    # The only boundary is too early (index 21 < 166): 499 characters and the ellipsis.
    assert (rec.title, rec.details) == ("You've hit your limit · " + "x" * 475 + "…", long)


def test_the_replayed_record_rides_a_session_info_update_of_the_loaded_session() -> None:
    s = Session(session_id="sess-9")
    s.feed(load_history([user("u1", "hi"), assistant("m1", LIMIT, "<synthetic>")]))
    assert [m.to_jsonrpc() for m in s.sent] == [
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "sess-9",
                "update": {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hi"}},
            },
        },
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "sess-9",
                "update": {
                    "sessionUpdate": "session_info_update",
                    "_meta": {
                        "jetbrains": {
                            "air": {
                                "version": 1,
                                "sessionFailure": {
                                    "id": "u1:error",
                                    "revision": 1,
                                    "category": "limit",
                                    "severity": "error",
                                    "title": LIMIT,
                                    "actions": [],
                                },
                            }
                        }
                    },
                },
            },
        },
    ]
    assert s.observed.transitions == [
        {
            "session_id": "sess-9",
            "incident_id": "u1:error",
            "source": "pending",
            "target": "failed",
            "event": "restore",
            "revision": 1,
        }
    ]


def test_a_user_message_without_content_is_an_empty_prompt() -> None:
    entry = history_entry({"type": "user", "uuid": "u1", "message": {"role": "user"}})
    assert entry == HistoryEntry(role="user", uuid="u1", text="", prompt=True)
    entry = history_entry({"type": "user", "uuid": "u2", "message": {"content": 5}})
    assert entry == HistoryEntry(role="user", uuid="u2", text="", prompt=True)


def test_a_repeated_prompt_uuid_never_reuses_a_recovered_replayed_id() -> None:
    s = Session()
    s.feed(load_history([user("u1"), assistant("m1", LIMIT, "<synthetic>"), assistant("a1", "Recovered")]))
    assert s.active_ids == []
    s.feed(load_history([user("u1"), assistant("m2", LIMIT, "<synthetic>")]))  # a corrupt history repeats u1
    assert [r.id for r in s.records] == ["u1:error", "s1:history-error:m2"]
    assert s.active_ids == ["s1:history-error:m2"]


# ------------------------------------------------------------------ a transcript's unreadable lines

#: The notice's title (lifecycle/history.py, ``unreadable_notice``; the words are this project's).
UNREADABLE_TITLE = "Part of this session's history could not be read"


def test_the_reader_keeps_every_complete_line_and_numbers_the_rest() -> None:
    data = (
        b'{"type":"user","n":1}\n'
        b"\n"  # blank: not a line of the transcript, not reported
        b'{"type":"assistant","text":"caf\xff"}\n'  # a stray byte inside a string: kept, repaired
        b"[1, 2]\n"  # JSON, but no object
        b"not json\n"
        b'{"type":"user","n":2}\r\n'
        b'{"type":"assistant","text":"gr\xc3'  # torn inside a character, at the end
    )
    read = read_transcript(data)
    assert read.entries == (
        {"type": "user", "n": 1},
        {"type": "assistant", "text": "caf\ufffd"},
        {"type": "user", "n": 2},
    )
    assert read.skipped == (4, 5, 7)
    assert read.repaired == (3,)
    assert unreadable_notice(read) == (
        f"{UNREADABLE_TITLE}\nSkipped lines 4, 5, 7 of the stored transcript: cut off or not JSON. "
        "Bytes that are not UTF-8 in line 3 are shown as \ufffd."
    )


@pytest.mark.parametrize(
    ("data", "skipped", "repaired", "notice"),
    [
        (b'{"a":1}\n{"b":2}\n', (), (), None),
        (b"", (), (), None),
        (b" \n\t\n\r\n", (), (), None),  # whitespace lines are no lines
        (b'{"a":1}\nnull\n', (2,), (), "Skipped line 2 of the stored transcript: cut off or not JSON."),
        (b'"text"\n', (1,), (), "Skipped line 1 of the stored transcript: cut off or not JSON."),
        (b'{"a":"\xfe"}\n', (), (1,), "Bytes that are not UTF-8 in line 1 are shown as \ufffd."),
        (b"\xfe\n", (1,), (), "Skipped line 1 of the stored transcript: cut off or not JSON."),  # skipped, not repaired
        (b"x\n" * 5, (1, 2, 3, 4, 5), (), "Skipped lines 1, 2, 3, 4, 5 of the stored transcript: cut off or not JSON."),
        (
            b"x\n" * 6,
            (1, 2, 3, 4, 5, 6),
            (),
            "Skipped lines 1, 2, 3, 4, 5 and 1 more of the stored transcript: cut off or not JSON.",
        ),
        (
            b'{"a":"\xfe"}\n' * 2 + b"x",
            (3,),
            (1, 2),
            "Skipped line 3 of the stored transcript: cut off or not JSON. "
            "Bytes that are not UTF-8 in lines 1, 2 are shown as \ufffd.",
        ),
    ],
    ids=["clean", "empty", "blank", "null", "string", "repaired", "bad-and-not-json", "five", "six", "both"],
)
def test_what_the_reader_reports_and_the_notice_says(
    data: bytes, skipped: tuple[int, ...], repaired: tuple[int, ...], notice: str | None
) -> None:
    read = read_transcript(data)
    assert (read.skipped, read.repaired) == (skipped, repaired)
    assert unreadable_notice(read) == (None if notice is None else f"{UNREADABLE_TITLE}\n{notice}")


def test_a_line_nested_too_deep_is_skipped_and_the_next_one_read() -> None:
    deep = read_transcript(b"[" * 100_000 + b"\n" + b'{"ok":true}')
    assert (deep.entries, deep.skipped) == (({"ok": True},), (1,))


# ``lifecycle.history``: what a replay leaves out of a stored prompt (issue 50.3) and the messages a
# later one replaced (issue 49.3).
#
# The expectations are the reference adapter 0.101.0's (``dist/acp-agent.js``: ``stripMarkerTags``
# cuts each ``<tag>…</tag>`` of ``TRANSCRIPT_MARKERS`` to the nearest closing tag of its name;
# ``stripLocalCommandMetadataText`` turns a marker-only message into its slash command as typed, or
# hides it: output, ``REPLAY_HIDDEN_COMMANDS``, injected context) and Claude Code 2.1.337's
# ``supersedes`` ("Uuids of earlier messages that this message replaces", ``sdk.d.ts`` of npm
# @anthropic-ai/claude-agent-sdk 0.3.337), written out as literals.


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("no tags at all", "no tags at all"),
        ("a < b and c > d", "a < b and c > d"),
        ("<b>bold</b> stays", "<b>bold</b> stays"),
        ("<task-notification>job done, output in /tmp/x</task-notification>hello", "hello"),
        ("a<system-reminder>r</system-reminder>b<system-reminder>s</system-reminder>c", "abc"),
        ("<command-name>/x</command-name> <command-args>y</command-args>", " "),
        # to the nearest closing tag of its own name: an inner marker goes with it
        ("<task-notification>a<system-reminder>b</system-reminder>c</task-notification>d", "d"),
        ("<task-notification>never closed", "<task-notification>never closed"),
        ("x<task-notification>a</task-notification", "x<task-notification>a</task-notification"),
        # a tag never closed ahead is no opener from there on; the others are still cut
        (
            "<system-reminder>open <task-notification>t</task-notification> end",
            "<system-reminder>open  end",
        ),
        ("<local-command-stdout>out</local-command-stdout>", ""),
        ("<local-command-stderr>err</local-command-stderr>tail", "tail"),
        ("<command-message>m</command-message>", ""),
        ("ends with <", "ends with <"),
        ("<<task-notification>t</task-notification>>", "<>"),
    ],
)
def test_strip_markers_cuts_each_marker_span(text: str, kept: str) -> None:
    assert strip_markers(text) == kept


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain words", "plain words"),
        ("<b>x</b>", "<b>x</b>"),
        ("text <system-reminder>r</system-reminder>", "text "),
        (
            "<command-name>/review</command-name><command-message>review</command-message>"
            "<command-args>src/a.py</command-args>",
            "/review src/a.py",
        ),
        ("<command-name>/review</command-name><command-message>review</command-message>", "/review"),
        ("<command-name> /review </command-name><command-args> a </command-args>", "/review a"),
        ("<command-name>/review</command-name><command-args>   </command-args>", "/review"),
        ("<local-command-stdout>out</local-command-stdout>", None),
        ("<local-command-stderr>err</local-command-stderr>", None),
        ("<command-name>/model</command-name><command-args>haiku</command-args>", None),
        ("<command-name>/usage</command-name>", None),
        ("<command-name>/compact</command-name><command-args>now please</command-args>", None),
        ("<task-notification>t</task-notification>", None),
        ("<task-notification>t</task-notification>  ", None),
        ("<command-name>review</command-name>", None),
        ("<command-name>/x", "<command-name>/x"),
    ],
)
def test_replayed_prompt_is_what_the_user_typed(text: str, shown: str | None) -> None:
    assert replayed_prompt(text) == shown


def test_replaced_uuids_are_bounded_strings() -> None:
    assert replaced_uuids(None) == ()
    assert replaced_uuids("abc") == ()
    assert replaced_uuids(("a",)) == ()  # a JSON array only
    assert replaced_uuids(["a", 1, None, "", "x" * 101, "x" * 100]) == ("a", "x" * 100)
    many = [f"u{i}" for i in range(70)]
    assert replaced_uuids(many) == tuple(many[:64])
    assert replaced_uuids([*["", 7] * 40, "late"]) == ()  # only the first 64 entries are read


def _user(uuid: str, text: str) -> dict[str, Any]:
    return {"type": "user", "uuid": uuid, "parent_tool_use_id": None, "message": {"role": "user", "content": text}}


def _assistant(uuid: str, text: str, supersedes: object = None) -> dict[str, Any]:
    line: dict[str, Any] = {
        "type": "assistant",
        "uuid": uuid,
        "parent_tool_use_id": None,
        "message": {"model": "claude-opus-5-5", "role": "assistant", "content": [{"type": "text", "text": text}]},
    }
    if supersedes is not None:
        line["supersedes"] = supersedes
    return line


def test_a_replayed_history_leaves_out_what_a_later_message_replaced() -> None:
    history = load_history(
        [
            _user("u1", "hi"),
            _assistant("a1", "first try"),
            _assistant("a2", "the answer", supersedes=["a1"]),
            _user("u2", "<task-notification>done</task-notification>"),
            _user("u3", "<command-name>/review</command-name><command-args>x.py</command-args>"),
        ]
    )
    assert [(e.uuid, e.role, e.text, e.prompt) for e in history.entries] == [
        ("u1", "user", "hi", True),
        ("a2", "assistant", "the answer", False),
        ("u2", "user", "", False),
        ("u3", "user", "/review x.py", True),
    ]


def test_only_an_assistant_message_replaces() -> None:
    user_naming = _user("u2", "x")
    user_naming["supersedes"] = ["a1"]
    history = load_history([_user("u1", "hi"), _assistant("a1", "kept"), user_naming])
    assert [e.uuid for e in history.entries] == ["u1", "a1", "u2"]
