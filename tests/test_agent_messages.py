"""One Claude message read once (``lifecycle.agent.messages``): what the record keeps of each SDK
class, wrong types read as absent, and the rule that nothing else in the agent reads a message's
class. The classes are the real ``claude_agent_sdk`` ones."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    RateLimitEvent,
    StreamEvent,
    SystemMessage,
    TextBlock,
    UserMessage,
)
from claude_agent_sdk.types import RateLimitInfo, TaskStartedMessage
from sdk_messages import result_message

from lifecycle.agent.messages import KINDS, OWN_CLASSES, ClaudeMessage, Kind, PromptSuggestion, read

AGENT = Path(__file__).resolve().parents[1] / "lifecycle" / "agent"


def test_each_sdk_class_reads_as_its_kind() -> None:
    assistant = AssistantMessage(content=[TextBlock(text="hi")], model="m", parent_tool_use_id="toolu_9")
    cases: list[tuple[object, Kind]] = [
        (StreamEvent(uuid="u", session_id="s", event={"type": "message_start"}), Kind.STREAM),
        (assistant, Kind.ASSISTANT),
        (UserMessage(content="x"), Kind.USER),
        (result_message(), Kind.RESULT),
        (SystemMessage(subtype="init", data={"subtype": "init"}), Kind.SYSTEM),
        (RateLimitEvent(rate_limit_info=RateLimitInfo(status="allowed"), uuid="u", session_id="s"), Kind.RATE_LIMIT),
        (PromptSuggestion("run the tests"), Kind.SUGGESTION),
        # a subclass the table does not name: judged as a system message is, never a compaction frame
        (TaskStartedMessage(subtype="task_started", data={}, task_id="t", description="d", uuid="u", session_id="s"),
         Kind.OTHER),
        (object(), Kind.OTHER),
    ]
    for message, kind in cases:
        record = read(message)
        assert record.kind is kind, type(message).__name__
        assert record.sdk is message
    assert read(assistant).parent_tool_use_id == "toolu_9"


def test_the_table_names_the_sdk_classes_that_exist() -> None:
    import claude_agent_sdk

    for name in KINDS:
        if name not in OWN_CLASSES:  # the agent's own (the SDK drops the one, refuses the other)
            assert hasattr(claude_agent_sdk, name), name


def test_a_system_message_keeps_its_subtype_and_data_and_the_prompts_it_names() -> None:
    data = {"status": "requesting", "user_message_uuids": ["p1", 7, "p2"], "user_message_uuid": "p0"}
    record = read(SystemMessage(subtype="status", data=data))
    assert (record.subtype, dict(record.data), record.names) == ("status", data, ("p0", "p1", "p2"))


def test_a_result_keeps_its_origin_and_its_prompts() -> None:
    message = result_message(origin={"kind": "task-notification"}, user_message_uuids=["p1"])
    record = read(message)
    assert (record.subtype, record.origin, record.names) == ("success", "task-notification", ("p1",))
    assert read(result_message()).origin is None


@pytest.mark.parametrize(
    ("attrs", "expected"),
    [
        ({"subtype": 7, "data": "not a mapping"}, (None, {}, ())),
        ({"subtype": None, "data": None, "user_message_uuid": 3, "user_message_uuids": "p1"}, (None, {}, ())),
        ({"subtype": "status", "data": {"user_message_uuids": None}}, ("status", {"user_message_uuids": None}, ())),
    ],
)
def test_wrong_types_read_as_absent(attrs: dict[str, Any], expected: tuple[Any, ...]) -> None:
    class SystemMessage:  # the SDK's class name, fields of any type (a newer CLI's line)
        def __init__(self) -> None:
            self.__dict__.update(attrs)
            self.parent_tool_use_id = ["not", "a", "string"]

    record = read(SystemMessage())
    assert (record.subtype, dict(record.data), record.names) == expected
    assert record.parent_tool_use_id is None


def test_a_prediction_reads_its_text_and_nothing_else() -> None:
    assert dict(read(PromptSuggestion("go")).data) == {"suggestion": "go"}
    odd = PromptSuggestion.__new__(PromptSuggestion)
    object.__setattr__(odd, "suggestion", 7)
    assert dict(read(odd).data) == {"suggestion": ""}


def test_the_record_is_a_frozen_value() -> None:
    record = read(UserMessage(content="x"))
    assert isinstance(record, ClaudeMessage)
    with pytest.raises(AttributeError):
        record.kind = Kind.RESULT  # type: ignore[misc]


# The one class-name dispatch of the agent. Allowed elsewhere: a class name in a log field, an
# event's text or an error message (what failed), and the renderer's reading of content *blocks* inside a message
# (``stream._kind``: TextBlock, ToolUseBlock, ...), and a value's type shown as a placeholder.
_ALLOWED = {("stream.py", "_kind"), ("tool_calls.py", "_raw")}


def _class_name_reads(tree: ast.AST) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []

    class Visitor(ast.NodeVisitor):
        def __init__(self) -> None:
            self.function = ""
            self.exempt = 0

        def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
            outer, self.function = self.function, node.name
            self.generic_visit(node)
            self.function = outer

        visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

        def visit_keyword(self, node: ast.keyword) -> None:  # log.x(error_type=type(e).__name__), Event(message=...)
            self.exempt += 1
            self.generic_visit(node)
            self.exempt -= 1

        visit_JoinedStr = visit_keyword  # type: ignore[assignment]  # an error's text: f"{type(x).__name__} ..."

        def visit_Attribute(self, node: ast.Attribute) -> None:
            value = node.value
            if (
                node.attr == "__name__"
                and isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "type"
                and not self.exempt
            ):
                found.append((self.function, node.lineno))
            self.generic_visit(node)

    Visitor().visit(tree)
    return found


def test_only_read_looks_at_a_message_class() -> None:
    offenders = []
    for path in sorted(AGENT.glob("*.py")):
        for function, line in _class_name_reads(ast.parse(path.read_text())):
            if path.name == "messages.py" and function == "read":
                continue
            if (path.name, function) not in _ALLOWED:
                offenders.append(f"{path.name}:{line} ({function})")
    assert offenders == []
    # and the check finds what it looks for, and passes over what is only said
    assert _class_name_reads(ast.parse("def f(m):\n    return type(m).__name__ == 'ResultMessage'\n")) == [("f", 2)]
    assert _class_name_reads(ast.parse("def f(m):\n    raise TypeError(f'{type(m).__name__} is odd')\n")) == []
