"""Claude Code's ``Interrupt`` hook (CLI 2.1.337, issue 49.3): the report, its vocabulary, and the
result it turns from a failure into a stop (lifecycle/agent/interrupts.py, the translation lane).

The hook inputs are literals of ``InterruptHookInput`` in ``sdk.d.ts`` of npm
``@anthropic-ai/claude-agent-sdk`` 0.3.337 (the CLI's own types), as CLI 2.1.337 sent them in
tests/e2e/test_interrupts.py's scenario; the result is CLI 2.1.337's for a permission denied with
``interrupt`` (``error_during_execution``, ``terminal_reason: aborted_tools``, its diagnostic).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sdk_messages import result_message

from lifecycle.agent.interrupts import Interruption, Interruptions, read_interruption
from lifecycle.agent.lanes import LaneParts, Lanes
from lifecycle.agent.mcp import McpServers
from lifecycle.agent.messages import read
from lifecycle.agent.stream import StreamRenderer
from lifecycle.events import Cancelled, Result
from lifecycle.negotiation import ClientState

#: CLI 2.1.337's hook input for a ``PermissionRequest`` hook's deny with ``interrupt`` (paths cut).
HOOK_INPUT: dict[str, Any] = {
    "session_id": "s", "transcript_path": "/home/u/.claude/projects/p/s.jsonl", "cwd": "/home/u/p",
    "prompt_id": "p1", "permission_mode": "default", "effort": {"level": "medium"},
    "hook_event_name": "Interrupt", "source": "system", "reason": "permission_denied",
}  # fmt: skip
#: CLI 2.1.337's result after it (usage and ids cut).
INTERRUPTED = dict(
    subtype="error_during_execution", is_error=True, stop_reason="tool_use", terminal_reason="aborted_tools",
    errors=["[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use"],
)  # fmt: skip


def _hook(interrupts: Interruptions, data: object) -> dict[str, Any]:
    return asyncio.run(interrupts.hook(data, None, {"signal": None}))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (HOOK_INPUT, Interruption("system", "permission_denied")),
        ({**HOOK_INPUT, "source": "user", "reason": "stop", "via": "client"},
         Interruption("user", "stop", "client")),
        ({**HOOK_INPUT, "source": "session", "reason": "rewind", "via": "terminal"},
         Interruption("session", "rewind", "terminal")),
        ({**HOOK_INPUT, "reason": "other"}, Interruption("system", "other")),
        # A word a later Claude Code may add, or a wrong type: unrecognized, never its text.
        ({**HOOK_INPUT, "source": "robot", "reason": 7, "via": ["x"]},
         Interruption("unrecognized", "unrecognized", "unrecognized")),
        ({"hook_event_name": "Interrupt"}, Interruption("unrecognized", "unrecognized")),
        ({**HOOK_INPUT, "hook_event_name": "PostCompact"}, None),
        ("Interrupt", None),
        (None, None),
    ],
)  # fmt: skip
def test_a_report_is_read_against_its_vocabulary(data: object, expected: Interruption | None) -> None:
    assert read_interruption(data) == expected


def test_the_hook_answers_nothing_and_keeps_the_report_until_a_result_takes_it() -> None:
    interrupts = Interruptions("s")
    assert _hook(interrupts, ["not", "a", "mapping"]) == {}
    assert interrupts.take() is None
    assert _hook(interrupts, HOOK_INPUT) == {}  # Claude Code ignores the output
    assert interrupts.take() == Interruption("system", "permission_denied")
    assert interrupts.take() is None  # once


@pytest.mark.parametrize(
    ("result", "settles"),
    [
        (Result(subtype="error_during_execution", is_error=True, terminal_reason="aborted_tools"), True),
        (Result(subtype="error_during_execution", is_error=True, terminal_reason="aborted_streaming"), True),
        # A failure an interrupt did not end stays a failure; a success needs no help.
        (Result(subtype="error_during_execution", is_error=True, terminal_reason="api_error"), False),
        (Result(subtype="error_during_execution", is_error=True), False),
        (Result(subtype="success", is_error=False, terminal_reason="aborted_tools"), False),
        (None, False),
    ],
)
def test_only_a_failure_an_interrupt_ended_is_a_stop(result: Result | None, settles: bool) -> None:
    interrupts = Interruptions("s")
    _hook(interrupts, HOOK_INPUT)
    assert (interrupts.settles(result) is not None) is settles
    assert interrupts.take() is None  # taken either way


def _lanes() -> tuple[Lanes, Interruptions]:
    interrupts = Interruptions("s")
    return Lanes(LaneParts(StreamRenderer("/project"), McpServers(), ClientState(), interrupts=interrupts)), interrupts


def _events(lanes: Lanes, message: object) -> list[object]:
    steps, _ = lanes.run(read(message), turn="t1", quiet=False, prompt_open=True)
    return [s.event for s in steps if s.event is not None]


def test_the_translation_lane_settles_an_interrupted_turn_cancelled() -> None:
    lanes, interrupts = _lanes()
    _hook(interrupts, HOOK_INPUT)
    assert _events(lanes, result_message(**INTERRUPTED)) == [Cancelled()]
    # The next turn's failure is its own: the report was taken.
    (event,) = _events(lanes, result_message(**INTERRUPTED))
    assert isinstance(event, Result) and event.is_error


def test_without_the_report_the_same_result_is_a_failure() -> None:
    # Claude Code before 2.1.337 (no Interrupt hook) or a failure no interrupt caused.
    lanes, _ = _lanes()
    (event,) = _events(lanes, result_message(**INTERRUPTED))
    assert isinstance(event, Result) and event.is_error and event.terminal_reason == "aborted_tools"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
_WORDS = st.sampled_from(["user", "session", "system", "stop", "permission_denied", "rewind", "other",
                          "terminal", "client", "Interrupt", ""])  # fmt: skip


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(
    fields=st.dictionaries(st.sampled_from(["hook_event_name", "source", "reason", "via", "cwd"]), _JSON | _WORDS),
    interrupt=st.booleans(),
)
def test_any_hook_input_reads_as_words_of_the_vocabularies_or_none(fields: dict[str, Any], interrupt: bool) -> None:
    # Hostile input (docs/security.md, "What each parser may do with garbage"): never raises, never
    # a word outside the vocabularies (so never a path or text into the log).
    data = {**fields, "hook_event_name": "Interrupt"} if interrupt else fields
    report = read_interruption(data)
    if data.get("hook_event_name") != "Interrupt":
        assert report is None
        return
    assert report is not None
    assert report.source in {"user", "session", "system", "unrecognized"}
    assert report.reason in {"stop", "permission_denied", "rewind", "other", "unrecognized"}
    assert report.via in {None, "terminal", "client", "unrecognized"}
