"""``lifecycle replay``'s byte pre-filter agrees with a full parse on the lines that fool it.

Contract parity, item 10 (docs/parity/reference-behaviour.md, "Replay pre-filter"): the reference
adapter reads every transcript line leniently (invalid UTF-8 becomes U+FFFD) and key order plays no
part. Two lines used to defeat the project's pre-filter: a real answer written message-first whose
tool input holds a ``"type":"user"`` key (taken for a user line, so the limit it recovers stayed
active), and a synthetic limit with one invalid byte (counted malformed, so its record was lost).
"""

from __future__ import annotations

import io
import json

from lifecycle.cli.replay import replay_lines, replay_stream

LIMIT = "You've hit your 5-hour limit · resets 4:06pm (UTC)"
WEEKLY = "You've hit your weekly limit · resets Dec 5, 1:06pm (UTC)"


def _user(uuid: str, text: str) -> bytes:
    return json.dumps({"type": "user", "uuid": uuid, "message": {"role": "user", "content": text}}).encode()


def _limit_message_first(uuid: str, text: bytes) -> bytes:
    # The CLI writes some assistant lines with ``message`` before ``type``.
    head = b'{"parentUuid":null,"message":{"model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"'
    return head + text + b'"}]},"uuid":"' + uuid.encode() + b'","type":"assistant","error":"rate_limit"}'


def _answer_message_first(uuid: str) -> bytes:
    message = {
        "model": "claude-opus-5-5",
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Done."},
            {"type": "tool_use", "id": "tu1", "name": "Task", "input": {"type": "user", "prompt": "x"}},
        ],
    }
    return json.dumps({"message": message, "uuid": uuid, "type": "assistant"}, separators=(",", ":")).encode()


def _transcript() -> list[bytes]:
    return [
        _user("u1", "first"),
        _limit_message_first("m1", LIMIT.encode() + b" \xff"),  # one invalid UTF-8 byte
        _user("u2", "second"),
        _limit_message_first("m2", WEEKLY.encode()),
        _user("u3", "third"),
        _answer_message_first("m3"),
    ]


def test_a_bad_byte_does_not_hide_a_usage_limit_and_a_nested_type_does_not_make_a_user_line() -> None:
    for view in (
        replay_lines(_transcript(), "s1"),
        replay_stream(io.BytesIO(b"\n".join(_transcript()) + b"\n"), "s1", chunk_size=7),
    ):
        assert view.malformed == 0
        assert [(r["record"]["id"], r["record"]["title"]) for r in view.records] == [
            ("u1:error", LIMIT + " \ufffd"),
            ("u2:error", WEEKLY),
        ]
        assert view.active == []  # m3 is a real answer: the latest limit recovered
        assert view.messages == 6


def test_without_the_answer_the_latest_limit_stays_active() -> None:
    view = replay_lines(_transcript()[:-1], "s1")
    assert view.active == [{"id": "u2:error", "recovery": "real_model_answer"}]


def test_a_message_first_user_line_holding_an_assistant_marker_is_still_a_user_line() -> None:
    # The nested marker says assistant; the line is a user prompt (its uuid becomes the turn id).
    nested_user = json.dumps(
        {"message": {"role": "user", "content": [{"type": "text", "text": "hi", "meta": {"type": "assistant"}}]},
         "uuid": "u9", "type": "user"},
        separators=(",", ":"),
    ).encode()
    view = replay_lines([nested_user, _limit_message_first("m9", LIMIT.encode())], "s1")
    assert [r["record"]["id"] for r in view.records] == ["u9:error"]
