"""``lifecycle.agent.tool_calls``: the results of the file-editing tools (Write, Edit, MultiEdit,
NotebookEdit) and of Bash against the reference adapter, and what the reference's frames keep
(oracle: ``test_agent_tool_calls.py``'s docstring)."""

from __future__ import annotations

from typing import Any

import pytest
from tool_call_oracle import ABSENT, CWD, SAME, ended, wire

from lifecycle.agent.tool_calls import (
    tool_call_result,
    tool_call_start,
)

# ------------------------------------------------------------------------------------ results

RESULT_CASES = [
    # reporters/file-edit.js WriteReporter (normalizeWriteInput)
    pytest.param(
        "Write",
        {"file_path": "/work/proj/new.txt", "content": "hello\n"},
        "File created successfully at: /work/proj/new.txt",
        {
            "type": "create",
            "filePath": "/work/proj/new.txt",
            "content": "hello\n",
            "structuredPatch": [],
            "originalFile": None,
        },
        False,
        "completed",
        SAME,
        {},
        id="Write-1",
    ),
    pytest.param(
        "Write",
        {"file_path": "/work/proj/old.txt", "content": "a\nB\nc\n"},
        "The file /work/proj/old.txt has been updated.",
        {
            "type": "update",
            "filePath": "/work/proj/old.txt",
            "content": "a\nB\nc\n",
            "originalFile": "a\nb\nc\n",
            "structuredPatch": [
                {"oldStart": 1, "oldLines": 3, "newStart": 1, "newLines": 3, "lines": [" a", "-b", "+B", " c"]}
            ],
        },
        False,
        "completed",
        SAME,
        {
            "content": [{"type": "diff", "path": "/work/proj/old.txt", "oldText": "a\nb\nc", "newText": "a\nB\nc"}],
            "locations": [{"path": "/work/proj/old.txt", "line": 1}],
        },
        id="Write-2",
    ),
    pytest.param(
        "Write",
        {"file_path": "/work/proj/big.txt", "content": "new"},
        "ok",
        {
            "type": "update",
            "filePath": "/work/proj/big.txt",
            "content": "new",
            "originalFile": None,
            "structuredPatch": [],
        },
        False,
        "completed",
        SAME,
        {
            "content": [
                {
                    "type": "content",
                    "content": {
                        "type": "text",
                        "text": "Updated `/work/proj/big.txt` (previous content too large to diff)",
                    },
                }
            ],
            "locations": [{"path": "/work/proj/big.txt"}],
        },
        id="Write-3",
    ),
    pytest.param(
        "Write",
        {"file_path": "/work/proj/same.txt", "content": "new"},
        "ok",
        {
            "type": "update",
            "filePath": "/work/proj/same.txt",
            "content": "new",
            "originalFile": "old",
            "structuredPatch": [],
        },
        False,
        "completed",
        SAME,
        {
            "content": [{"type": "diff", "path": "/work/proj/same.txt", "oldText": "old", "newText": "new"}],
            "locations": [{"path": "/work/proj/same.txt"}],
        },
        id="Write-4",
    ),
    pytest.param("Write", {"file_path": "/work/proj/n.txt"}, "ok", None, False, "completed", SAME, {}, id="Write-5"),
    # reporters/file-edit.js EditReporter
    pytest.param(
        "Edit",
        {"file_path": "/work/proj/src/a.py", "old_string": "x = 1", "new_string": "x = 2"},
        "The file /work/proj/src/a.py has been updated.",
        {
            "filePath": "/work/proj/src/a.py",
            "oldString": "x = 1",
            "newString": "x = 2",
            "originalFile": "import os\nx = 1\n",
            "structuredPatch": [
                {
                    "oldStart": 1,
                    "oldLines": 2,
                    "newStart": 1,
                    "newLines": 2,
                    "lines": [" import os", "-x = 1", "+x = 2"],
                },
                {
                    "oldStart": 9,
                    "oldLines": 1,
                    "newStart": 9,
                    "newLines": 2,
                    "lines": [" y", "+z", "\\ No newline at end of file"],
                },
            ],
            "userModified": False,
            "replaceAll": False,
        },
        False,
        "completed",
        SAME,
        {
            "content": [
                {
                    "type": "diff",
                    "path": "/work/proj/src/a.py",
                    "oldText": "import os\nx = 1",
                    "newText": "import os\nx = 2",
                },
                {"type": "diff", "path": "/work/proj/src/a.py", "oldText": "y", "newText": "y\nz"},
            ],
            "locations": [{"path": "/work/proj/src/a.py", "line": 1}, {"path": "/work/proj/src/a.py", "line": 9}],
        },
        id="Edit-1",
    ),
    pytest.param(
        "Edit",
        {"file_path": "/work/proj/a.py", "old_string": "nope", "new_string": "x"},
        "<tool_use_error>String to replace not found in file.</tool_use_error>",
        None,
        True,
        "failed",
        SAME,
        {
            "content": [
                {
                    "type": "content",
                    "content": {
                        "type": "text",
                        "text": "```\n<tool_use_error>String to replace not found in file.</tool_use_error>\n```",
                    },
                }
            ]
        },
        id="Edit-2",
    ),
    pytest.param(
        "Edit",
        {"file_path": "/work/proj/a.py"},
        "ok",
        {"filePath": "/work/proj/a.py", "structuredPatch": [{"newStart": 4, "lines": ["-gone"]}, {"lines": []}]},
        False,
        "completed",
        SAME,
        {
            "content": [{"type": "diff", "path": "/work/proj/a.py", "oldText": "gone", "newText": ""}],
            "locations": [{"path": "/work/proj/a.py", "line": 4}],
        },
        id="Edit-3",
    ),
    # Like Edit (not the reference's GenericReporter): the confirmation text adds nothing; the
    # announced diff stays.
    pytest.param(
        "MultiEdit",
        {"file_path": "/work/proj/m.py", "edits": []},
        "Applied 1 edit to /work/proj/m.py",
        None,
        False,
        "completed",
        SAME,
        {},
        id="MultiEdit-1",
    ),
    # reporters/file-edit.js NotebookEditReporter (not AIR: upstream generic)
    pytest.param(
        "NotebookEdit",
        {"notebook_path": "/work/proj/n.ipynb", "new_source": "x"},
        "Updated cell c1 with x",
        None,
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "Updated cell c1 with x"}}]},
        id="NotebookEdit-1",
    ),
    # reporters/bash.js BashReporter
    pytest.param(
        "Bash",
        {"command": "echo hi"},
        "hi\n",
        None,
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "```console\nhi\n```"}}]},
        id="Bash-1",
    ),
    pytest.param(
        "Bash",
        {"command": "make"},
        "raw ignored",
        {"stdout": "built", "stderr": "warning: x", "interrupted": False, "isImage": False},
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "```console\nbuilt\nwarning: x\n```"}}]},
        id="Bash-2",
    ),
    pytest.param(
        "Bash",
        {"command": "sleep 9"},
        "raw",
        {"stdout": "", "stderr": "", "interrupted": True, "isImage": False},
        False,
        "completed",
        SAME,
        {
            "content": [
                {
                    "type": "content",
                    "content": {"type": "text", "text": "```console\n[Command was aborted before completion]\n```"},
                }
            ]
        },
        id="Bash-3",
    ),
    pytest.param(
        "Bash",
        {"command": "cat big"},
        "raw",
        {
            "stdout": "head",
            "stderr": "",
            "interrupted": False,
            "persistedOutputPath": "/tmp/out.txt",
            "persistedOutputSize": 99999,
        },
        False,
        "completed",
        SAME,
        {
            "content": [
                {
                    "type": "content",
                    "content": {
                        "type": "text",
                        "text": "```console\nhead\n"
                        "[Output truncated (99999 bytes total): full output saved to /tmp/out.txt]\n```",
                    },
                }
            ]
        },
        id="Bash-4",
    ),
    pytest.param(
        "Bash",
        {"command": "false"},
        "Exit code 1\nboom",
        None,
        True,
        "failed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "```\nExit code 1\nboom\n```"}}]},
        id="Bash-5",
    ),
    pytest.param("Bash", {"command": "true"}, "", None, False, "completed", SAME, {}, id="Bash-6"),
    pytest.param(
        "Bash",
        {"command": "x"},
        [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        None,
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "```console\none\ntwo\n```"}}]},
        id="Bash-7",
    ),
    pytest.param(
        "Bash",
        {"command": "bg"},
        "Command running in background",
        {"stdout": "", "stderr": "", "interrupted": False, "backgroundTaskId": "t1"},
        False,
        "completed",
        SAME,
        {
            "content": [
                {
                    "type": "content",
                    "content": {"type": "text", "text": "```console\nCommand running in background\n```"},
                }
            ]
        },
        id="Bash-8",
    ),
    pytest.param(
        "Bash",
        {"command": "img"},
        [{"type": "image", "source": {"type": "base64", "data": "iVBO", "media_type": "image/png"}}],
        {"stdout": "x", "stderr": "", "isImage": True},
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "image", "data": "iVBO", "mimeType": "image/png"}}]},
        id="Bash-9",
    ),
    pytest.param("Bash", {"command": "x"}, "  \n\t", None, False, "completed", SAME, {}, id="Bash-10"),
    pytest.param("Bash", {"command": "x"}, None, None, True, "failed", ABSENT, {}, id="Bash-11"),
]


@pytest.mark.parametrize(
    ("name", "tool_input", "result", "structured", "is_error", "status", "raw_output", "fields"), RESULT_CASES
)
def test_tool_call_result_renders_like_the_reference(
    name: str,
    tool_input: dict[str, Any],
    result: Any,
    structured: dict[str, Any] | None,
    is_error: bool,
    status: str,
    raw_output: Any,
    fields: dict[str, Any],
) -> None:
    update = tool_call_result("toolu_1", name, tool_input, result, is_error=is_error, structured=structured, cwd=CWD)
    expected_raw = result if raw_output is SAME else raw_output
    assert update == ended("toolu_1", name, status, expected_raw, fields)
    assert wire(update) == update


# ------------------------------------------------------------------------ the reference's frames


def test_a_result_without_content_keeps_the_announced_diff() -> None:
    # renderer.js result + file-edit.js WriteReporter.toolResult ({}): a created file's result
    # carries no content, so the client keeps the tool_call's creation diff.
    tool_input = {"file_path": "/work/proj/new.txt", "content": "hello\n"}
    start = tool_call_start("toolu_9", "Write", tool_input, cwd=CWD)
    end = tool_call_result("toolu_9", "Write", tool_input, "File created", is_error=False, cwd=CWD)
    assert start["content"] == [{"type": "diff", "path": "/work/proj/new.txt", "oldText": None, "newText": "hello\n"}]
    assert "content" not in end and end["status"] == "completed"


def test_todowrite_result_is_the_status_alone() -> None:
    # acp-agent.js, case "tool_result": TodoWrite (shown as a plan) gets no rendered result; a
    # tool call a permission request surfaced for it is only closed, with its status.
    update = tool_call_result("toolu_2", "TodoWrite", {"todos": []}, "Todos have been modified", is_error=False)
    assert update == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "toolu_2",
        "status": "completed",
        "_meta": {"claudeCode": {"toolName": "TodoWrite"}},
    }
    assert wire(update) == update


def test_a_relative_path_is_not_made_relative() -> None:
    # DEVIATION: content.js toDisplayPath resolves a relative path against the adapter's process
    # directory; a pure function has none, so a relative path (Claude Code sends absolute ones) is shown as is.
    assert tool_call_start("t", "Read", {"file_path": "src/a.py"}, cwd=CWD)["title"] == "Read src/a.py"
    assert tool_call_start("t", "Read", {"file_path": "/work/proj/a.py"}, cwd="proj")["title"] == "Read /work/proj/a.py"
    assert tool_call_start("t", "Read", {"file_path": "/work/proj/a.py"}, cwd="/")["title"] == "Read /work/proj/a.py"
    assert tool_call_start("t", "Read", {"file_path": "/work/proj/a.py"})["title"] == "Read /work/proj/a.py"
