"""``lifecycle.agent.tool_calls`` on malformed and hostile input, and its bounds: nothing raises,
every update validates against the ACP schema, and everything long is cut and says so."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from tool_call_oracle import CWD, wire

from lifecycle.agent.tool_calls import (
    MAX_ITEMS,
    MAX_RAW_STRING,
    MAX_SHOWN,
    MAX_TEXT,
    MAX_TITLE,
    plan_update,
    tool_call_progress,
    tool_call_result,
    tool_call_start,
)

# ---------------------------------------------------------------------------------- malformed


class Hostile(Mapping[str, Any]):
    """A mapping whose every read raises."""

    def __getitem__(self, key: str) -> Any:
        raise RuntimeError("hostile")

    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("hostile")

    def __len__(self) -> int:
        raise RuntimeError("hostile")


def test_a_hostile_input_degrades_to_the_bare_updates() -> None:
    assert tool_call_start("t", "Edit", Hostile(), cwd=CWD) == {
        "sessionUpdate": "tool_call",
        "toolCallId": "t",
        "title": "Edit",
        "status": "pending",
    }
    assert tool_call_result("t", "Bash", {}, Hostile(), is_error=False, structured=None) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t",
        "status": "completed",
        "_meta": {"claudeCode": {"toolName": "Bash"}},
    }
    assert tool_call_result("t", "Read", {}, "x", is_error=True, structured=Hostile()) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t",
        "status": "failed",
        "_meta": {"claudeCode": {"toolName": "Read"}},
        "rawOutput": "x",
        "content": [{"type": "content", "content": {"type": "text", "text": "```\nx\n```"}}],
    }
    assert plan_update(Hostile()) is None


def test_wrong_types_degrade_to_the_generic_rendering() -> None:
    no_input = tool_call_start(None, None, None)  # type: ignore[arg-type]
    assert no_input == {
        "_meta": {"claudeCode": {"toolName": ""}},
        "toolCallId": "",
        "sessionUpdate": "tool_call",
        "status": "pending",
        "title": "Unknown Tool",
        "kind": "other",
        "content": [],
    }
    listed = tool_call_start("t", "Read", ["/etc/passwd"], cwd=CWD)  # type: ignore[arg-type]
    assert (listed["title"], listed["locations"], listed["rawInput"]) == ("Read File", [], ["/etc/passwd"])
    # A value of the wrong type is treated as absent (the reference would interpolate it).
    read = tool_call_start("t", "Read", {"file_path": "/work/proj/a", "offset": "5", "limit": True}, cwd=CWD)
    assert (read["title"], read["locations"]) == ("Read a", [{"path": "/work/proj/a", "line": 1}])
    bash = tool_call_start("t", "Bash", {"command": 5, "description": ["x"]}, cwd=CWD)
    assert (bash["title"], bash["content"]) == ("Terminal", [])
    # A diff needs text on both sides: a Write without text content announces none.
    write = tool_call_start("t", "Write", {"file_path": "/work/proj/a", "content": {"x": 1}}, cwd=CWD)
    assert (write["title"], write["content"]) == ("Write a", [])
    edit = tool_call_start("t", "Edit", {"file_path": "/work/proj/a", "old_string": "x", "new_string": 7}, cwd=CWD)
    assert edit["content"] == [{"type": "diff", "path": "/work/proj/a", "oldText": "x", "newText": ""}]
    grep: dict[str, Any] = {
        "pattern": 3.0,
        "-i": float("nan"),
        "-n": 0,
        "-A": None,
        "-B": 2.5,
        "glob": ["a", None, "b"],
        "type": {},
    }
    # JavaScript's truthiness (NaN and 0 are false, {} is true) and String() of each value.
    assert (
        tool_call_start("t", "Grep", grep)["title"] == 'grep -A null -B 2.5 --include="a,,b" --type=[object Object] "3"'
    )
    result = tool_call_result("t", "Read", {}, [None, 3, {"type": "text", "text": 5}], is_error=False)
    assert result["content"] == [
        {"type": "content", "content": {"type": "text", "text": "null"}},
        {"type": "content", "content": {"type": "text", "text": "3"}},
        {"type": "content", "content": {"type": "text", "text": "```\n\n```"}},
    ]
    patch = {
        "filePath": "/work/proj/a",
        "structuredPatch": ["x", {"lines": "-a"}, {"lines": [1, "+b"], "newStart": "2"}],
    }
    edited = tool_call_result("t", "Edit", {}, "ok", is_error=False, structured=patch)
    assert (edited["content"], edited["locations"]) == (
        [{"type": "diff", "path": "/work/proj/a", "oldText": None, "newText": "b"}],
        [{"path": "/work/proj/a"}],
    )


def cyclic() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


def deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"a": value}
    return value


MALFORMED: list[Any] = [
    None,
    "text",
    42,
    3.5,
    float("nan"),
    b"bytes",
    [1, [2, [3]]],
    cyclic(),
    deep(5000),
    {"file_path": 7, "content": None, "command": [], "todos": [None], "questions": "q", "edits": {}},
    {"file_path": "/work/proj/\ud800", "old_string": "\udfff", "new_string": "ok", "offset": 10**400},
    {1: "int key", None: "none key", ("t",): "tuple key", "k" * 5000: "long key"},
    {"type": "image", "source": {"type": "base64", "data": None, "media_type": 5}},
    Hostile(),
]
NAMES = ["Write", "Edit", "MultiEdit", "NotebookEdit", "Bash", "Read", "Grep", "Glob", "WebFetch", "WebSearch"]
NAMES += ["TodoWrite", "Task", "Agent", "ExitPlanMode", "AskUserQuestion", "Skill", "Other", "mcp__s__t", "Nope", ""]


@pytest.mark.parametrize("name", [*NAMES, None, 7])
def test_no_malformed_input_raises_and_every_update_is_valid(name: Any) -> None:
    for value in MALFORMED:
        for structured in (
            None,
            value,
            {"type": "text", "file": value, "stdout": value, "stderr": "", "results": value},
        ):
            updates = [
                tool_call_start(value, name, value, cwd=value),
                tool_call_result(value, name, value, value, is_error=False, structured=structured, cwd=value),
                tool_call_result(
                    "t", name, {}, [value, {"type": "text", "text": value}], is_error=True, structured=structured
                ),
                tool_call_progress(value, value),
            ]
            plan = plan_update(value)
            for update in [*updates, *([plan] if plan is not None else [])]:
                assert wire(update) == update
                assert len(json.dumps(update, ensure_ascii=False).encode()) < 400_000


# ------------------------------------------------------------------------------------- bounds


def cut(kept: str, total: int, sep: str = "\n") -> str:
    return f"{kept}{sep}[… {total - len(kept)} characters cut]"


def test_a_long_command_output_is_cut_and_says_so() -> None:
    output = "x" * (3 * MAX_TEXT)
    update = tool_call_result("t", "Bash", {"command": "yes"}, output, is_error=False)
    assert update["content"] == [
        {
            "type": "content",
            "content": {"type": "text", "text": "```console\n" + cut("x" * MAX_TEXT, len(output)) + "\n```"},
        }
    ]
    assert update["rawOutput"] == cut("x" * MAX_RAW_STRING, len(output))


def test_a_long_write_is_cut_in_the_diff_and_in_raw_input() -> None:
    text = "y" * (MAX_TEXT + 5)
    update = tool_call_start("t", "Write", {"file_path": "/work/proj/big", "content": text}, cwd=CWD)
    assert update["content"] == [
        {"type": "diff", "path": "/work/proj/big", "oldText": None, "newText": cut("y" * MAX_TEXT, len(text))}
    ]
    assert update["rawInput"] == {"file_path": "/work/proj/big", "content": cut("y" * MAX_RAW_STRING, len(text))}


def test_a_long_title_and_id_are_cut() -> None:
    update = tool_call_start("i" * (MAX_TITLE + 1), "Bash", {"command": "c" * (MAX_TITLE + 40)})
    assert update["title"] == "c" * MAX_TITLE + "… [40 characters cut]"
    assert update["toolCallId"] == "i" * MAX_TITLE + "… [1 characters cut]"


def test_a_long_file_is_numbered_up_to_the_limit() -> None:
    lines = [f"line {i}" for i in range(40_000)]
    structured = {"type": "text", "file": {"content": "\n".join(lines) + "\n", "startLine": 1}}
    update = tool_call_result("t", "Read", {"file_path": "/a"}, "raw", is_error=False, structured=structured)
    [item] = update["content"]
    text = item["content"]["text"]
    assert text.startswith("```\n1\tline 0\n2\tline 1\n") and text.endswith(" characters cut]\n```")
    body, note = text[4:-4].rsplit("\n", 1)
    assert len(body) <= MAX_TEXT
    shown = [row.split("\t", 1)[1] for row in body.split("\n")]
    assert shown[:-1] == lines[: len(shown) - 1] and lines[len(shown) - 1].startswith(shown[-1])
    source = "\n".join(lines)
    assert note == f"[… {len(source) - len(chr(10).join(shown))} characters cut]"


def test_empty_lines_cannot_outgrow_the_limit() -> None:
    structured = {"type": "text", "file": {"content": "\n" * (2 * MAX_TEXT)}}
    update = tool_call_result("t", "Read", {"file_path": "/a"}, "raw", is_error=False, structured=structured)
    assert len(update["content"][0]["content"]["text"]) <= MAX_TEXT + 40


def test_images_over_the_budget_become_text() -> None:
    data = "Q" * (MAX_SHOWN * 3 // 4)
    image = {"type": "image", "source": {"type": "base64", "data": data, "media_type": "image/png"}}
    update = tool_call_result("t", "Read", {"file_path": "/a.png"}, [image, image], is_error=False)
    assert update["content"] == [
        {"type": "content", "content": {"type": "image", "data": data, "mimeType": "image/png"}},
        {"type": "content", "content": {"type": "text", "text": "[image: image/png, 109.9 KB, too large to show]"}},
    ]


def test_many_blocks_are_cut_and_say_so() -> None:
    blocks = [{"type": "text", "text": "b"}] * (MAX_ITEMS + 3)
    update = tool_call_result("t", "mcp__s__t", {}, blocks, is_error=False)
    assert len(update["content"]) == MAX_ITEMS + 1
    assert update["content"][-1] == {"type": "content", "content": {"type": "text", "text": "[… 3 more blocks cut]"}}


def test_the_whole_update_is_bounded() -> None:
    blocks = [{"type": "text", "text": "z" * MAX_TEXT}] * 50
    update = tool_call_result("t", "mcp__s__t", {}, blocks, is_error=True)
    size = len(json.dumps(update))
    assert MAX_SHOWN < size < MAX_SHOWN + 100_000
    texts = [item["content"]["text"] for item in update["content"]]
    assert texts[2] == "```\n[… 100000 characters cut]\n```"


def test_raw_values_are_bounded() -> None:
    wide = {f"k{i}": i for i in range(MAX_ITEMS + 2)}
    raw = tool_call_start("t", "Nope", {"wide": wide, "long": list(range(MAX_ITEMS + 1)), "deep": deep(20)})["rawInput"]
    assert len(raw["wide"]) == MAX_ITEMS + 1 and raw["wide"]["…"] == "2 more keys cut"
    assert raw["long"][-1] == "[… 1 items cut]" and len(raw["long"]) == MAX_ITEMS + 1
    level = raw["deep"]
    for _ in range(10):
        level = level["a"]
    assert level == {"a": None}


def test_a_lone_surrogate_becomes_a_replacement_character() -> None:
    update = tool_call_start("t", "Read", {"file_path": "/work/proj/\ud800.txt"}, cwd=CWD)
    assert update["title"] == "Read \ufffd.txt"
    json.dumps(update, ensure_ascii=False).encode("utf-8")
