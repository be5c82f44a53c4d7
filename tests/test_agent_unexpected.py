"""A line nobody expected ends nothing (issue 49, point 5), without Claude Code: each crafted line
of tests/unexpected_lines.py (every message type the agent reads, fields missing, null and of the
wrong type) through the Claude SDK's own parser, the agent's reading
(:func:`lifecycle.agent.messages.read`) and each lane of :data:`lifecycle.agent.lanes.LANES`.

Expected: a line the SDK refuses is an :class:`~lifecycle.agent.messages.Unreadable` (its type and
subtype, only when they are plain names); one whose required fields are not of the type the SDK's
class declares (claude_agent_sdk/types.py) reads as malformed; every other one runs through every
lane, in and out of a turn, own or not, without raising and without ending a turn
(docs/acp-agent.md: such an event "is logged and sends nothing"). The end to end test is
tests/e2e/test_unexpected_lines.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    RateLimitEvent,
    RateLimitInfo,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    UserMessage,
)
from unexpected_lines import crafted_lines

from lifecycle.agent import sdk
from lifecycle.agent.lanes import LANES, LaneParts, Lanes, Pass
from lifecycle.agent.mcp import McpServers
from lifecycle.agent.messages import ClaudeMessage, Kind, Unreadable, malformed, read
from lifecycle.agent.stream import StreamRenderer
from lifecycle.events import Result
from lifecycle.negotiation import ClientState

CLIENTS = [ClientState(), ClientState(negotiated=True, air=True, compaction=True)]
SID = "00000000-0000-0000-0000-000000000000"


def _parsed() -> list[tuple[dict[str, Any], ClaudeMessage]]:
    """The crafted lines the SDK parses into a message that is not malformed, as records."""
    out = []
    for line in crafted_lines():
        try:
            message = sdk.parse_message(line)
        except Exception:
            continue
        if message is not None and (record := read(message)).kind is not Kind.MALFORMED:
            out.append((line, record))
    return out


PARSED = _parsed()


def test_every_crafted_line_is_refused_or_malformed_or_read() -> None:
    kinds = {record.kind for _, record in PARSED}
    # every kind the agent reads has a crafted line that gets through to the lanes
    assert {Kind.ASSISTANT, Kind.USER, Kind.SYSTEM, Kind.RATE_LIMIT, Kind.OTHER} <= kinds
    assert Kind.RESULT not in kinds and Kind.STREAM not in kinds  # each crafted one is malformed


@pytest.mark.parametrize("lane", LANES, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("client", CLIENTS, ids=["plain", "air"])
def test_each_lane_takes_each_readable_crafted_line(lane: Any, client: ClientState) -> None:
    shared = lane.build(LaneParts(StreamRenderer("/project"), McpServers(), client))
    for line, record in PARSED:
        for turn, own, quiet in (("t1", False, False), (None, False, False), ("t1", True, False), ("t1", False, True)):
            fresh = lane.build(LaneParts(StreamRenderer("/project"), McpServers(), client))
            for built in (fresh, shared):
                p = Pass(record, turn, quiet, turn is not None, own=own)
                built.run(p)  # never raises
                assert not p.ends, line


@pytest.mark.parametrize("client", CLIENTS, ids=["plain", "air"])
def test_the_lanes_make_no_turn_event_of_a_crafted_line(client: ClientState) -> None:
    lanes = Lanes(LaneParts(StreamRenderer("/project"), McpServers(), client))
    for line, record in PARSED:
        steps, ends = lanes.run(record, turn="t1", quiet=False, prompt_open=True)
        assert not ends and not any(isinstance(step.event, Result) for step in steps), line


@pytest.mark.parametrize(
    "data, names",
    [
        ({"type": "system", "subtype": "task_notification"}, ("system", "task_notification")),
        ({"type": "result"}, ("result", None)),
        ({"type": "a b", "subtype": "x" * 65}, (None, None)),  # no plain name: never logged
        ({"type": "x" * 64, "subtype": "sk-ant-api03-\n"}, ("x" * 64, None)),
        ({"type": 5, "subtype": ["x"]}, (None, None)),
        ({}, (None, None)),
        (["not", "a", "mapping"], (None, None)),
    ],
)
def test_an_unreadable_line_keeps_only_plain_names(data: Any, names: tuple[Any, Any]) -> None:
    line = Unreadable.from_raw(data)
    assert (line.type, line.subtype) == names
    record = read(line)
    assert record.kind is Kind.MALFORMED and record.sdk is line
    assert (record.data["type"], record.subtype) == names and record.data["unparsable"] is True


def _result(**fields: Any) -> ResultMessage:
    base: dict[str, Any] = dict(subtype="success", duration_ms=1, duration_api_ms=2, is_error=False, num_turns=1,
                                session_id=SID)  # fmt: skip
    return ResultMessage(**{**base, **fields})


# The SDK's required fields (claude_agent_sdk/types.py) of the wrong type, one at a time.
MALFORMED = [
    StreamEvent(uuid="u", session_id=SID, event=None),  # type: ignore[arg-type]
    StreamEvent(uuid="u", session_id=SID, event="x"),  # type: ignore[arg-type]
    AssistantMessage(content=None, model="m"),  # type: ignore[arg-type]
    AssistantMessage(content="text", model="m"),  # type: ignore[arg-type]
    AssistantMessage(content=[], model=None),  # type: ignore[arg-type]
    UserMessage(content=None),  # type: ignore[arg-type]
    UserMessage(content=5),  # type: ignore[arg-type]
    _result(subtype=None),
    _result(is_error="no"),
    _result(is_error=0),
    _result(num_turns="1"),
    _result(num_turns=True),
    _result(session_id=5),
    _result(duration_ms=None),
    _result(duration_ms=True),
    _result(duration_api_ms="2"),
    RateLimitEvent(rate_limit_info=RateLimitInfo(status=None), uuid="u", session_id=SID),  # type: ignore[arg-type]
    RateLimitEvent(rate_limit_info=None, uuid="u", session_id=SID),  # type: ignore[arg-type]
]
WELL_FORMED = [
    StreamEvent(uuid="u", session_id=SID, event={}),
    AssistantMessage(content=[], model="m"),
    UserMessage(content="text"),
    UserMessage(content=[]),
    _result(),
    _result(duration_ms=1.5, duration_api_ms=0.0, is_error=True),
    SystemMessage(subtype="status", data={}),
    RateLimitEvent(rate_limit_info=RateLimitInfo(status="allowed"), uuid="u", session_id=SID),
]


@pytest.mark.parametrize("message", MALFORMED, ids=repr)
def test_a_required_field_of_the_wrong_type_is_malformed(message: object) -> None:
    record = read(message)
    assert record.kind is Kind.MALFORMED and record.sdk is message and "unparsable" not in record.data
    wire = {"StreamEvent": "stream_event", "RateLimitEvent": "rate_limit_event"}
    name = type(message).__name__
    assert record.data["type"] == wire.get(name, name.removesuffix("Message").lower())


@pytest.mark.parametrize("message", WELL_FORMED, ids=repr)
def test_the_required_fields_of_their_type_are_read(message: object) -> None:
    assert read(message).kind is not Kind.MALFORMED
    assert not malformed(read(message).kind, message)


def test_a_kind_with_no_required_fields_is_never_malformed() -> None:
    # a system message's subtype and data read as absent instead (tests/test_agent_messages.py)
    for kind in (Kind.SYSTEM, Kind.OTHER, Kind.SUGGESTION):
        assert not malformed(kind, object())
