"""``lifecycle.agent.tool_calls`` against the reference adapter it renders like.

Oracle: every expected update below is a literal, the output of the reference adapter's own functions
(``@agentclientprotocol/claude-agent-acp`` 0.101.0, ``dist/tool-calls/renderer.js``
``AcpToolCallRenderer`` with a plain client's capabilities: ``new AcpToolCallRenderer()``) run under
node for the same input, with ``cwd`` ``/work/proj``:

* a tool use: ``renderer.toolCall({id, name, input}, {cwd})`` (acp-agent.js ``toAcpNotifications``,
  ``case "tool_use"``), the reporter of each row named in its comment;
* a result: ``renderer.result(toolUse, toolResultBlock, {structured})`` (the ``tool_result`` case),
  for Edit and Write merged with ``renderer.hookResult(toolUse, structured, cwd)``: the reference
  sends the PostToolUse hook's diff as an update of its own, this module in the result (the SDK's
  ``tool_use_result`` is the same object as the hook's ``tool_response``);
* a plan: ``dist/tools.js`` ``planEntries``.

Two mechanical differences are applied to the reference's output, by design: its ``tool_call``
carries ``name`` (not in the ACP schema, which drops it) and its hook update a ``_meta`` copy of the
whole ``tool_response`` (unbounded); neither is sent here. Rows marked DEVIATION are deliberate.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from acp.schema import SessionNotification

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
    tool_kind,
)

CWD = "/work/proj"
SAME = object()  # rawOutput: the result as given
ABSENT = object()  # rawOutput: not sent


def started(tool_id: str, name: str, raw_input: Any, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The reference's ``tool_call`` (renderer.js ``toolCall``) around a row's fields."""
    return {
        "_meta": {"claudeCode": {"toolName": name}},
        "toolCallId": tool_id,
        "sessionUpdate": "tool_call",
        "rawInput": raw_input,
        "status": "pending",
        **fields,
    }


def ended(tool_id: str, name: str, status: str, raw_output: Any, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The reference's final result update (renderer.js ``result``) around a row's fields."""
    update = {
        "_meta": {"claudeCode": {"toolName": name}},
        "toolCallId": tool_id,
        "sessionUpdate": "tool_call_update",
        "status": status,
    }
    if raw_output is not ABSENT:
        update["rawOutput"] = raw_output
    return {**update, **fields}


def wire(update: Mapping[str, Any]) -> dict[str, Any]:
    """``update`` through the ACP SDK's schema and back: equal to ``update`` only when every field
    validated (the schema silently drops an invalid list item, so validating alone proves little)."""
    text = json.dumps(update, ensure_ascii=False)
    note = SessionNotification.model_validate({"sessionId": "s", "update": json.loads(text)})
    back = note.model_dump(mode="json", by_alias=True, exclude_unset=True)["update"]
    assert isinstance(back, dict)
    return back


# ---------------------------------------------------------------------------------- tool uses

START_CASES = [
    # reporters/file-edit.js WriteReporter (normalizeWriteInput)
    pytest.param(
        "Write",
        {"file_path": "/work/proj/new.txt", "content": "hello\n"},
        CWD,
        {
            "title": "Write new.txt",
            "kind": "edit",
            "content": [{"type": "diff", "path": "/work/proj/new.txt", "oldText": None, "newText": "hello\n"}],
            "locations": [{"path": "/work/proj/new.txt"}],
        },
        id="Write-1",
    ),
    pytest.param(
        "Write", {}, CWD, {"title": "Preparing file…", "kind": "edit", "content": [], "locations": []}, id="Write-2"
    ),
    pytest.param(
        "Write",
        {"content": "x"},
        CWD,
        {
            "title": "Preparing file…",
            "kind": "edit",
            "content": [{"type": "content", "content": {"type": "text", "text": "x"}}],
            "locations": [],
        },
        id="Write-3",
    ),
    pytest.param(
        "Write",
        {"path": "/work/proj/p.txt", "file_text": "t"},
        CWD,
        {
            "title": "Write p.txt",
            "kind": "edit",
            "content": [{"type": "diff", "path": "/work/proj/p.txt", "oldText": None, "newText": "t"}],
            "locations": [{"path": "/work/proj/p.txt"}],
        },
        id="Write-4",
    ),
    pytest.param(
        "Write",
        {"file_path": "/work/proj/x", "content": None, "file_content": "fc"},
        CWD,
        {
            "title": "Write x",
            "kind": "edit",
            "content": [{"type": "diff", "path": "/work/proj/x", "oldText": None, "newText": "fc"}],
            "locations": [{"path": "/work/proj/x"}],
        },
        id="Write-5",
    ),
    # reporters/file-edit.js EditReporter
    pytest.param(
        "Edit",
        {"file_path": "/work/proj/src/a.py", "old_string": "x = 1", "new_string": "x = 2"},
        CWD,
        {
            "title": "Edit src/a.py",
            "kind": "edit",
            "content": [{"type": "diff", "path": "/work/proj/src/a.py", "oldText": "x = 1", "newText": "x = 2"}],
            "locations": [{"path": "/work/proj/src/a.py"}],
        },
        id="Edit-1",
    ),
    pytest.param(
        "Edit",
        {"file_path": "/elsewhere/b.py", "old_string": "", "new_string": "new"},
        CWD,
        {
            "title": "Edit /elsewhere/b.py",
            "kind": "edit",
            "content": [{"type": "diff", "path": "/elsewhere/b.py", "oldText": None, "newText": "new"}],
            "locations": [{"path": "/elsewhere/b.py"}],
        },
        id="Edit-2",
    ),
    pytest.param(
        "Edit", {"old_string": "a"}, CWD, {"title": "Edit", "kind": "edit", "content": [], "locations": []}, id="Edit-3"
    ),
    pytest.param(
        "Edit",
        {"file_path": "/work/proj/c", "old_string": "gone", "new_string": ""},
        CWD,
        {
            "title": "Edit c",
            "kind": "edit",
            "content": [{"type": "diff", "path": "/work/proj/c", "oldText": "gone", "newText": ""}],
            "locations": [{"path": "/work/proj/c"}],
        },
        id="Edit-4",
    ),
    pytest.param(
        "Edit",
        {"file_path": "/work/proj", "old_string": "a", "new_string": "b"},
        CWD,
        {
            "title": "Edit",
            "kind": "edit",
            "content": [{"type": "diff", "path": "/work/proj", "oldText": "a", "newText": "b"}],
            "locations": [{"path": "/work/proj"}],
        },
        id="Edit-5",
    ),
    pytest.param(
        "Edit",
        {"file_path": "/work/project/x", "old_string": "a", "new_string": "b"},
        CWD,
        {
            "title": "Edit /work/project/x",
            "kind": "edit",
            "content": [{"type": "diff", "path": "/work/project/x", "oldText": "a", "newText": "b"}],
            "locations": [{"path": "/work/project/x"}],
        },
        id="Edit-6",
    ),
    pytest.param(
        "Edit",
        {"file_path": "/work/proj/../other/y", "old_string": "a", "new_string": "b"},
        CWD,
        {
            "title": "Edit /work/proj/../other/y",
            "kind": "edit",
            "content": [{"type": "diff", "path": "/work/proj/../other/y", "oldText": "a", "newText": "b"}],
            "locations": [{"path": "/work/proj/../other/y"}],
        },
        id="Edit-7",
    ),
    pytest.param(
        "Edit",
        {"file_path": "/work/proj/z", "old_string": "a", "new_string": "b"},
        "/work/proj/",
        {
            "title": "Edit z",
            "kind": "edit",
            "content": [{"type": "diff", "path": "/work/proj/z", "oldText": "a", "newText": "b"}],
            "locations": [{"path": "/work/proj/z"}],
        },
        id="Edit-8",
    ),
    # Not the reference's (its GenericReporter: "MultiEdit", other, no content): issue 19 asks a
    # diff for MultiEdit and NotebookEdit; docs/parity/README.md has the row.
    pytest.param(
        "MultiEdit",
        {"file_path": "/work/proj/m.py", "edits": [{"old_string": "a", "new_string": "b"}, {"new_string": "c"}]},
        CWD,
        {
            "title": "Edit m.py",
            "kind": "edit",
            "content": [
                {"type": "diff", "path": "/work/proj/m.py", "oldText": "a", "newText": "b"},
                {"type": "diff", "path": "/work/proj/m.py", "oldText": None, "newText": "c"},
            ],
            "locations": [{"path": "/work/proj/m.py"}],
        },
        id="MultiEdit-1",
    ),
    pytest.param(
        "NotebookEdit",
        {"notebook_path": "/work/proj/n.ipynb", "cell_id": "c1", "new_source": "print(1)"},
        CWD,
        {
            "title": "Edit n.ipynb",
            "kind": "edit",
            "content": [{"type": "diff", "path": "/work/proj/n.ipynb", "oldText": None, "newText": "print(1)"}],
            "locations": [{"path": "/work/proj/n.ipynb"}],
        },
        id="NotebookEdit-1",
    ),
    # reporters/bash.js BashReporter
    pytest.param(
        "Bash",
        {"command": "echo hi", "description": "Say hi"},
        CWD,
        {
            "title": "echo hi",
            "kind": "execute",
            "content": [{"type": "content", "content": {"type": "text", "text": "Say hi"}}],
        },
        id="Bash-1",
    ),
    pytest.param("Bash", {}, CWD, {"title": "Terminal", "kind": "execute", "content": []}, id="Bash-2"),
    # reporters/bash.js BashReporter
    pytest.param(
        "PowerShell",
        {"command": "dir", "command_description": "List"},
        CWD,
        {
            "title": "dir",
            "kind": "execute",
            "content": [{"type": "content", "content": {"type": "text", "text": "List"}}],
        },
        id="PowerShell-1",
    ),
    # reporters/bash.js BashReporter
    pytest.param(
        "Bash",
        {"command": "ls", "description": "", "command_description": "x"},
        CWD,
        {"title": "ls", "kind": "execute", "content": []},
        id="Bash-3",
    ),
    # reporters/read.js ReadReporter
    pytest.param(
        "Read",
        {"file_path": "/work/proj/README.md", "offset": 1, "limit": 10},
        CWD,
        {
            "title": "Read README.md (1 - 10)",
            "kind": "read",
            "content": [],
            "locations": [{"path": "/work/proj/README.md", "line": 1}],
        },
        id="Read-1",
    ),
    pytest.param(
        "Read",
        {"file_path": "/work/proj/README.md", "offset": 5},
        CWD,
        {
            "title": "Read README.md (from line 5)",
            "kind": "read",
            "content": [],
            "locations": [{"path": "/work/proj/README.md", "line": 5}],
        },
        id="Read-2",
    ),
    pytest.param(
        "Read",
        {"file_path": "/etc/hosts"},
        CWD,
        {"title": "Read /etc/hosts", "kind": "read", "content": [], "locations": [{"path": "/etc/hosts", "line": 1}]},
        id="Read-3",
    ),
    pytest.param(
        "Read",
        {"file_path": "/work/proj/a", "offset": 0, "limit": 10},
        CWD,
        {"title": "Read a (0 - 9)", "kind": "read", "content": [], "locations": [{"path": "/work/proj/a", "line": 1}]},
        id="Read-4",
    ),
    pytest.param("Read", {}, CWD, {"title": "Read File", "kind": "read", "content": [], "locations": []}, id="Read-5"),
    pytest.param(
        "Read",
        {"file_path": "/work/proj/a", "limit": 5},
        CWD,
        {"title": "Read a (1 - 5)", "kind": "read", "content": [], "locations": [{"path": "/work/proj/a", "line": 1}]},
        id="Read-6",
    ),
    pytest.param(
        "Read",
        {"file_path": "/work/proj/a", "offset": -3},
        CWD,
        {
            "title": "Read a (from line -3)",
            "kind": "read",
            "content": [],
            "locations": [{"path": "/work/proj/a", "line": 1}],
        },
        id="Read-7",
    ),
    # reporters/search.js GrepReporter
    pytest.param(
        "Grep",
        {
            "pattern": "TODO",
            "path": "/work/proj/src",
            "-i": True,
            "-n": True,
            "output_mode": "content",
            "glob": "*.py",
            "-C": 2,
            "head_limit": 20,
        },
        CWD,
        {"title": 'grep -i -n -C 2 | head -20 --include="*.py" "TODO" /work/proj/src', "kind": "search", "content": []},
        id="Grep-1",
    ),
    pytest.param(
        "Grep",
        {"pattern": "x", "-l": True, "type": "py", "multiline": True, "-A": 1, "-B": 0},
        CWD,
        {"title": 'grep -A 1 -B 0 -l --type=py -P "x"', "kind": "search", "content": []},
        id="Grep-2",
    ),
    pytest.param(
        "Grep",
        {"pattern": "y", "-c": "true", "file_path": "/f"},
        CWD,
        {"title": 'grep -c "y" /f', "kind": "search", "content": []},
        id="Grep-3",
    ),
    pytest.param("Grep", {}, CWD, {"title": "grep", "kind": "search", "content": []}, id="Grep-4"),
    pytest.param(
        "Grep",
        {"pattern": "p", "output_mode": "count", "-l": True, "-A": None},
        CWD,
        {"title": 'grep -A null -c "p"', "kind": "search", "content": []},
        id="Grep-5",
    ),
    # reporters/search.js GlobReporter
    pytest.param(
        "Glob",
        {"pattern": "**/*.py", "path": "/work/proj"},
        CWD,
        {
            "title": "Find `/work/proj` `**/*.py`",
            "kind": "search",
            "content": [],
            "locations": [{"path": "/work/proj"}],
        },
        id="Glob-1",
    ),
    pytest.param(
        "Glob",
        {"pattern": "*.md"},
        CWD,
        {"title": "Find `*.md`", "kind": "search", "content": [], "locations": []},
        id="Glob-2",
    ),
    pytest.param("Glob", {}, CWD, {"title": "Find", "kind": "search", "content": [], "locations": []}, id="Glob-3"),
    # reporters/web.js WebFetchReporter
    pytest.param(
        "WebFetch",
        {"url": "https://example.com", "prompt": "Summarize", "offset": 100},
        CWD,
        {
            "title": "Fetch https://example.com (from char 100)",
            "kind": "fetch",
            "content": [{"type": "content", "content": {"type": "text", "text": "Summarize"}}],
        },
        id="WebFetch-1",
    ),
    pytest.param("WebFetch", {}, CWD, {"title": "Fetch", "kind": "fetch", "content": []}, id="WebFetch-2"),
    # reporters/web.js WebSearchReporter
    pytest.param(
        "WebSearch",
        {"query": "acp protocol"},
        CWD,
        {"title": 'Search "acp protocol"', "kind": "fetch", "content": []},
        id="WebSearch-1",
    ),
    pytest.param("WebSearch", {}, CWD, {"title": "Web search", "kind": "fetch", "content": []}, id="WebSearch-2"),
    # reporters/interaction.js PlanToolReporter
    pytest.param(
        "TodoWrite",
        {
            "todos": [
                {"content": "Write tests", "status": "in_progress", "activeForm": "Writing tests"},
                {"content": "Ship", "status": "pending", "activeForm": "Shipping"},
                {"content": "Plan", "status": "completed"},
            ]
        },
        CWD,
        {"title": "Update TODOs: Write tests, Ship, Plan", "kind": "think", "content": []},
        id="TodoWrite-1",
    ),
    pytest.param("TodoWrite", {}, CWD, {"title": "Update TODOs", "kind": "think", "content": []}, id="TodoWrite-2"),
    # reporters/agent.js AgentReporter
    pytest.param(
        "Task",
        {"description": "Explore repo", "prompt": "Look around", "subagent_type": "Explore"},
        CWD,
        {
            "title": "Explore repo",
            "kind": "think",
            "content": [{"type": "content", "content": {"type": "text", "text": "Look around"}}],
        },
        id="Task-1",
    ),
    # reporters/agent.js AgentReporter
    pytest.param(
        "Agent",
        {"description": "Review", "prompt": "Check", "effort": "high", "subagent_type": "general-purpose"},
        CWD,
        {
            "title": "Review (high effort)",
            "kind": "think",
            "content": [{"type": "content", "content": {"type": "text", "text": "Check"}}],
        },
        id="Agent-1",
    ),
    pytest.param(
        "Agent",
        {"description": "Fork", "prompt": "p", "effort": "high", "subagent_type": "fork"},
        CWD,
        {"title": "Fork", "kind": "think", "content": [{"type": "content", "content": {"type": "text", "text": "p"}}]},
        id="Agent-2",
    ),
    pytest.param(
        "Agent",
        {"prompt": ""},
        CWD,
        {"title": "Task", "kind": "think", "content": [{"type": "content", "content": {"type": "text", "text": ""}}]},
        id="Agent-3",
    ),
    # reporters/interaction.js ExitPlanModeReporter
    pytest.param(
        "ExitPlanMode",
        {"plan": "1. do it"},
        CWD,
        {
            "title": "Approve Plan",
            "kind": "switch_mode",
            "content": [{"type": "content", "content": {"type": "text", "text": "1. do it"}}],
        },
        id="ExitPlanMode-1",
    ),
    pytest.param(
        "ExitPlanMode", {}, CWD, {"title": "Approve Plan", "kind": "switch_mode", "content": []}, id="ExitPlanMode-2"
    ),
    # reporters/interaction.js EnterPlanModeReporter
    pytest.param(
        "EnterPlanMode", {}, CWD, {"title": "EnterPlanMode", "kind": "switch_mode", "content": []}, id="EnterPlanMode-1"
    ),
    # reporters/interaction.js AskUserQuestionReporter
    pytest.param(
        "AskUserQuestion",
        {"questions": [{"question": "Which one?", "options": []}]},
        CWD,
        {
            "title": "Which one?",
            "kind": "other",
            "content": [{"type": "content", "content": {"type": "text", "text": "Which one?"}}],
        },
        id="AskUserQuestion-1",
    ),
    pytest.param(
        "AskUserQuestion",
        {"questions": [{"question": "A?"}, {"question": "B?"}]},
        CWD,
        {
            "title": "Asking for your input",
            "kind": "other",
            "content": [
                {"type": "content", "content": {"type": "text", "text": "A?"}},
                {"type": "content", "content": {"type": "text", "text": "B?"}},
            ],
        },
        id="AskUserQuestion-2",
    ),
    pytest.param(
        "AskUserQuestion",
        {},
        CWD,
        {"title": "Asking for your input", "kind": "other", "content": []},
        id="AskUserQuestion-3",
    ),
    # reporters/interaction.js SkillReporter
    pytest.param(
        "Skill", {"skill": "pdf"}, CWD, {"title": "Load skill: pdf", "kind": "other", "content": []}, id="Skill-1"
    ),
    pytest.param("Skill", {}, CWD, {"title": "Load skill", "kind": "other", "content": []}, id="Skill-2"),
    # reporters/index.js reporterFor -> interaction.js GenericReporter
    pytest.param(
        "mcp__github__create_issue",
        {"title": "x"},
        CWD,
        {"title": "mcp__github__create_issue", "kind": "other", "content": []},
        id="mcp__github__create_issue-1",
    ),
    # interaction.js GenericReporter
    pytest.param("FooBar", {"a": 1}, CWD, {"title": "FooBar", "kind": "other", "content": []}, id="FooBar-1"),
    # interaction.js GenericReporter (the "Other" branch)
    pytest.param(
        "Other",
        {"a": [1, 2], "b": {"c": "d"}},
        CWD,
        {
            "title": "Other",
            "kind": "other",
            "content": [
                {
                    "type": "content",
                    "content": {
                        "type": "text",
                        "text": '```json\n{\n  "a": [\n    1,\n    2\n  ],\n  "b": {\n    "c": "d"\n  }\n}```',
                    },
                }
            ],
        },
        id="Other-1",
    ),
    # interaction.js GenericReporter ("Unknown Tool")
    pytest.param("", {}, CWD, {"title": "Unknown Tool", "kind": "other", "content": []}, id="no-name-1"),
    # reporters/interaction.js PlanToolReporter
    pytest.param(
        "TaskCreate",
        {"subject": "Do it"},
        CWD,
        {"title": "Create task: Do it", "kind": "think", "content": []},
        id="TaskCreate-1",
    ),
    # reporters/interaction.js PlanToolReporter
    pytest.param("TaskUpdate", {}, CWD, {"title": "Update task", "kind": "think", "content": []}, id="TaskUpdate-1"),
    # reporters/interaction.js PlanToolReporter
    pytest.param("TaskList", {}, CWD, {"title": "List tasks", "kind": "think", "content": []}, id="TaskList-1"),
    # reporters/interaction.js PlanToolReporter
    pytest.param("TaskGet", {}, CWD, {"title": "Get task", "kind": "think", "content": []}, id="TaskGet-1"),
]


@pytest.mark.parametrize(("name", "tool_input", "cwd", "fields"), START_CASES)
def test_tool_call_start_renders_like_the_reference(
    name: str, tool_input: dict[str, Any], cwd: str, fields: dict[str, Any]
) -> None:
    update = tool_call_start("toolu_1", name, tool_input, cwd=cwd)
    assert update == started("toolu_1", name, tool_input, fields)
    assert wire(update) == update


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
    # reporters/read.js ReadReporter
    pytest.param(
        "Read",
        {"file_path": "/work/proj/a.txt", "offset": 3},
        "     3\talpha\n<system-reminder>x</system-reminder>",
        {
            "type": "text",
            "file": {
                "filePath": "/work/proj/a.txt",
                "content": "alpha\nbeta\n",
                "numLines": 2,
                "startLine": 3,
                "totalLines": 4,
            },
        },
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "```\n3\talpha\n4\tbeta\n```"}}]},
        id="Read-1",
    ),
    pytest.param(
        "Read",
        {"file_path": "/work/proj/a.txt"},
        "x",
        {
            "type": "text",
            "file": {
                "filePath": "/work/proj/a.txt",
                "content": "a",
                "numLines": 1,
                "startLine": 1,
                "totalLines": 900,
                "truncatedByTokenCap": True,
            },
        },
        False,
        "completed",
        SAME,
        {
            "content": [
                {
                    "type": "content",
                    "content": {"type": "text", "text": "```\n1\ta\n[File truncated: showing 1 of 900 lines]\n```"},
                }
            ]
        },
        id="Read-2",
    ),
    pytest.param(
        "Read",
        {"file_path": "/work/proj/a.md"},
        "```\ncode\n```",
        None,
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "````\n```\ncode\n```\n````"}}]},
        id="Read-3",
    ),
    pytest.param(
        "Read",
        {"file_path": "/work/proj/i.png"},
        [
            {"type": "image", "source": {"type": "base64", "data": "iVBORw0K", "media_type": "image/png"}},
            {"type": "text", "text": "caption"},
        ],
        None,
        False,
        "completed",
        SAME,
        {
            "content": [
                {"type": "content", "content": {"type": "image", "data": "iVBORw0K", "mimeType": "image/png"}},
                {"type": "content", "content": {"type": "text", "text": "```\ncaption\n```"}},
            ]
        },
        id="Read-4",
    ),
    pytest.param(
        "Read",
        {"file_path": "/nope"},
        "File does not exist.",
        None,
        True,
        "failed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "```\nFile does not exist.\n```"}}]},
        id="Read-5",
    ),
    pytest.param(
        "Read",
        {"file_path": "/work/proj/e.txt"},
        "<system-reminder>empty</system-reminder>",
        {
            "type": "text",
            "file": {"filePath": "/work/proj/e.txt", "content": "", "numLines": 0, "startLine": 1, "totalLines": 0},
        },
        False,
        "completed",
        SAME,
        {
            "content": [
                {
                    "type": "content",
                    "content": {"type": "text", "text": "```\n<system-reminder>empty</system-reminder>\n```"},
                }
            ]
        },
        id="Read-6",
    ),
    pytest.param(
        "Read",
        {"file_path": "/work/proj/a.txt", "offset": 7},
        "x",
        {"type": "text", "file": {"content": "q\n\nz"}},
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "```\n7\tq\n8\t\n9\tz\n```"}}]},
        id="Read-7",
    ),
    pytest.param(
        "Read",
        {"file_path": "/work/proj/a.pdf"},
        [
            {
                "type": "document",
                "title": "Spec",
                "source": {"type": "base64", "media_type": "application/pdf", "data": "A" * 4000},
            }
        ],
        None,
        False,
        "completed",
        SAME,
        {
            "content": [
                {"type": "content", "content": {"type": "text", "text": '[document "Spec": application/pdf, 2.9 KB]'}}
            ]
        },
        id="Read-8",
    ),
    pytest.param(
        "Read",
        {"file_path": "/work/proj/d"},
        [
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "B" * 1280}},
            {"type": "document", "source": {"type": "url", "url": "https://x/y.pdf"}},
            {"type": "image", "source": {"type": "url", "url": "https://x/i.png"}},
            {"type": "image", "source": {"type": "file", "file_id": "f"}},
        ],
        None,
        False,
        "completed",
        SAME,
        {
            "content": [
                {"type": "content", "content": {"type": "text", "text": "[document: text/plain, 1.3 KB]"}},
                {"type": "content", "content": {"type": "text", "text": "[document: https://x/y.pdf]"}},
                {"type": "content", "content": {"type": "text", "text": "[image: https://x/i.png]"}},
                {"type": "content", "content": {"type": "text", "text": "[image: file reference]"}},
            ]
        },
        id="Read-9",
    ),
    # reporters/search.js GrepReporter
    pytest.param(
        "Grep",
        {"pattern": "TODO"},
        "src/a.py:3:TODO",
        None,
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "src/a.py:3:TODO"}}]},
        id="Grep-1",
    ),
    # reporters/search.js GlobReporter
    pytest.param(
        "Glob",
        {"pattern": "*.py"},
        "a.py\nb.py",
        None,
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "a.py\nb.py"}}]},
        id="Glob-1",
    ),
    pytest.param("Glob", {"pattern": "*.py"}, "", None, False, "completed", SAME, {}, id="Glob-2"),
    # reporters/web.js WebFetchReporter
    pytest.param(
        "WebFetch",
        {"url": "https://example.com"},
        "Example Domain summary",
        None,
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "Example Domain summary"}}]},
        id="WebFetch-1",
    ),
    # reporters/web.js WebSearchReporter
    pytest.param(
        "WebSearch",
        {"query": "acp"},
        'Web search results for query: "acp"\n...',
        {
            "query": "acp",
            "results": [
                {
                    "tool_use_id": "s",
                    "content": [{"title": "ACP", "url": "https://agentclientprotocol.com"}, {"title": 7}],
                },
                "Summary text",
            ],
            "durationSeconds": 1,
        },
        False,
        "completed",
        SAME,
        {
            "content": [
                {
                    "type": "content",
                    "content": {"type": "text", "text": "ACP (https://agentclientprotocol.com)\nSummary text"},
                }
            ]
        },
        id="WebSearch-1",
    ),
    pytest.param(
        "WebSearch",
        {"query": "acp"},
        "raw results",
        None,
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "raw results"}}]},
        id="WebSearch-2",
    ),
    pytest.param(
        "WebSearch",
        {"query": "acp"},
        "raw results",
        {"results": []},
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "raw results"}}]},
        id="WebSearch-3",
    ),
    # reporters/agent.js AgentReporter
    pytest.param(
        "Task",
        {"description": "Explore"},
        [{"type": "text", "text": "Report body"}],
        {"status": "completed", "content": [{"type": "text", "text": "Report body"}], "totalTokens": 5},
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "Report body"}}]},
        id="Task-1",
    ),
    pytest.param(
        "Task",
        {"description": "Explore"},
        [
            {
                "type": "text",
                "text": "Found it.\nagentId: a1b2 (use SendMessage with to: a1b2 to continue)\n"
                "<usage>total_tokens: 10\ntool_uses: 2</usage>",
            }
        ],
        None,
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "Found it."}}]},
        id="Task-2",
    ),
    pytest.param(
        "Task",
        {"description": "Explore"},
        "NOTE: this agent stopped at its 5-turn limit before finishing. Send it a message.\n\nPartial report",
        None,
        False,
        "completed",
        SAME,
        {
            "content": [
                {
                    "type": "content",
                    "content": {
                        "type": "text",
                        "text": "[Agent stopped at its turn limit — the output below is partial]\n\nPartial report",
                    },
                }
            ]
        },
        id="Task-3",
    ),
    # reporters/agent.js AgentReporter
    pytest.param(
        "Agent",
        {"description": "Explore"},
        "x",
        {
            "status": "completed",
            "content": [
                {"type": "text", "text": "  NOTE: this agent stopped at its 12-turn limit before finishing."},
                {"type": "text", "text": "NOTE: this agent stopped at its 1-turn limit before finishing."},
            ],
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
                        "text": "[Agent stopped at its turn limit — the output below is partial]",
                    },
                },
                {
                    "type": "content",
                    "content": {
                        "type": "text",
                        "text": "NOTE: this agent stopped at its 1-turn limit before finishing.",
                    },
                },
            ]
        },
        id="Agent-1",
    ),
    pytest.param(
        "Agent",
        {},
        "only\nagentId: abc (x)",
        None,
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "only"}}]},
        id="Agent-2",
    ),
    pytest.param("Agent", {}, "<usage>a</usage>", None, False, "completed", SAME, {}, id="Agent-3"),
    pytest.param(
        "Agent",
        {},
        "failed hard",
        None,
        True,
        "failed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "```\nfailed hard\n```"}}]},
        id="Agent-4",
    ),
    # reporters/interaction.js ExitPlanModeReporter
    pytest.param(
        "ExitPlanMode",
        {"plan": "1. do it"},
        "User has approved your plan. You can now start coding.",
        None,
        False,
        "completed",
        SAME,
        {"title": "Exited Plan Mode"},
        id="ExitPlanMode-1",
    ),
    pytest.param(
        "ExitPlanMode",
        {"plan": "1. do it"},
        "```\nNo, change step 1\n```",
        None,
        True,
        "failed",
        "No, change step 1",
        {
            "content": [
                {"type": "content", "content": {"type": "text", "text": "```\n```\nNo, change step 1\n```\n```"}}
            ]
        },
        id="ExitPlanMode-2",
    ),
    pytest.param(
        "ExitPlanMode",
        {},
        "  ```text\r\nbody\r\n```  \n",
        None,
        True,
        "failed",
        "body",
        {
            "content": [
                {"type": "content", "content": {"type": "text", "text": "```\n  ```text\r\nbody\r\n```  \n\n```"}}
            ]
        },
        id="ExitPlanMode-3",
    ),
    pytest.param(
        "ExitPlanMode",
        {},
        "```\n```",
        None,
        True,
        "failed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "```\n```\n```\n```"}}]},
        id="ExitPlanMode-4",
    ),
    # reporters/index.js reporterFor -> interaction.js GenericReporter
    pytest.param(
        "mcp__github__create_issue",
        {"title": "x"},
        [{"type": "text", "text": "Created #1"}],
        None,
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "Created #1"}}]},
        id="mcp__github__create_issue-1",
    ),
    pytest.param(
        "mcp__github__create_issue",
        {"title": "x"},
        [{"type": "text", "text": "denied"}],
        None,
        True,
        "failed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "```\ndenied\n```"}}]},
        id="mcp__github__create_issue-2",
    ),
    # interaction.js GenericReporter
    pytest.param(
        "FooBar",
        {},
        "ok",
        None,
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "ok"}}]},
        id="FooBar-1",
    ),
    pytest.param("FooBar", {}, None, None, False, "completed", ABSENT, {}, id="FooBar-2"),
    pytest.param(
        "FooBar",
        {},
        [
            {"type": "weird", "x": 1},
            {"type": "tool_reference", "tool_name": "Grep"},
            {"type": "web_search_result", "title": "T", "url": "U"},
        ],
        None,
        False,
        "completed",
        SAME,
        {
            "content": [
                {"type": "content", "content": {"type": "text", "text": '{"type":"weird","x":1}'}},
                {"type": "content", "content": {"type": "text", "text": "Tool: Grep"}},
                {"type": "content", "content": {"type": "text", "text": "T (U)"}},
            ]
        },
        id="FooBar-3",
    ),
    # reporters/interaction.js SkillReporter
    pytest.param("Skill", {"skill": "pdf"}, "Launching skill: pdf", None, False, "completed", SAME, {}, id="Skill-1"),
    # reporters/interaction.js AskUserQuestionReporter
    pytest.param(
        "AskUserQuestion",
        {},
        "User answered",
        None,
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "User answered"}}]},
        id="AskUserQuestion-1",
    ),
    # interaction.js GenericReporter
    pytest.param(
        "FooBar",
        {},
        {"type": "text", "text": "single block object"},
        None,
        False,
        "completed",
        SAME,
        {"content": [{"type": "content", "content": {"type": "text", "text": "single block object"}}]},
        id="FooBar-4",
    ),
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


# --------------------------------------------------------------------------------------- plan

# dist/tools.js planEntries (acp-agent.js toAcpNotifications: a TodoWrite tool_use whose todos are a list)
PLAN_CASES = [
    (
        {
            "todos": [
                {"content": "Write tests", "status": "in_progress", "activeForm": "Writing tests"},
                {"content": "Ship", "status": "pending", "activeForm": "Shipping"},
                {"content": "Plan", "status": "completed"},
            ]
        },
        {
            "sessionUpdate": "plan",
            "entries": [
                {"content": "Writing tests", "status": "in_progress", "priority": "medium"},
                {"content": "Ship", "status": "pending", "priority": "medium"},
                {"content": "Plan", "status": "completed", "priority": "medium"},
            ],
        },
    ),
    ({}, None),
    ({"todos": []}, {"sessionUpdate": "plan", "entries": []}),
]


@pytest.mark.parametrize(("tool_input", "expected"), PLAN_CASES)
def test_plan_update_renders_like_the_reference(tool_input: dict[str, Any], expected: dict[str, Any] | None) -> None:
    update = plan_update(tool_input)
    assert update == expected
    assert update is None or wire(update) == update


@pytest.mark.parametrize("tool_input", [None, [], "todos", {"todos": "x"}, {"todos": None}, {"todos": {"a": 1}}])
def test_plan_update_is_none_without_a_todo_list(tool_input: Any) -> None:
    # acp-agent.js toAcpNotifications sends a plan only when `Array.isArray(chunk.input?.todos)`.
    assert plan_update(tool_input) is None


def test_plan_update_leaves_out_malformed_todos() -> None:
    # DEVIATION: planEntries maps every todo as it is; the ACP schema then silently drops an entry
    # without a text or with a status outside pending / in_progress / completed. Left out here.
    todos = [
        None,
        "x",
        {"content": 5, "status": "pending"},
        {"content": "a", "status": "done"},
        {"status": "pending"},
        {"content": "b", "status": "in_progress", "activeForm": ""},
        {"content": "c", "status": "in_progress", "activeForm": 7},
    ]
    assert plan_update({"todos": todos}) == {
        "sessionUpdate": "plan",
        "entries": [
            {"content": "b", "status": "in_progress", "priority": "medium"},
            {"content": "c", "status": "in_progress", "priority": "medium"},
        ],
    }


def test_plan_update_is_bounded() -> None:
    todos = [{"content": f"t{i}", "status": "pending"} for i in range(MAX_ITEMS + 50)]
    todos[0]["content"] = "p" * (MAX_TITLE + 7)
    update = plan_update({"todos": todos})
    assert update is not None
    assert len(update["entries"]) == MAX_ITEMS
    assert update["entries"][0]["content"] == "p" * MAX_TITLE + "… [7 characters cut]"
    assert update["entries"][-1]["content"] == f"t{MAX_ITEMS - 1}"


# ------------------------------------------------------------------------------- progress, kinds


def test_tool_call_progress_is_the_status_alone() -> None:
    # renderer.js progress(): {sessionUpdate: "tool_call_update", toolCallId, status: "in_progress", _meta}.
    # Its _meta (tool name, elapsed seconds) comes from a tool_progress message, not from this call.
    assert tool_call_progress("toolu_1", "in_progress") == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "toolu_1",
        "status": "in_progress",
    }
    assert tool_call_progress("toolu_1", "failed")["status"] == "failed"
    assert tool_call_progress("toolu_1", "running")["status"] == "in_progress"
    assert tool_call_progress(None, None) == {  # type: ignore[arg-type]
        "sessionUpdate": "tool_call_update",
        "toolCallId": "",
        "status": "in_progress",
    }


# The `kind` each reporter gives (dist/tool-calls/reporters/*.js), for a plain client.
KINDS = {
    "Read": "read",  # read.js
    "Write": "edit",  # file-edit.js WriteReporter
    "Edit": "edit",  # file-edit.js EditReporter
    "MultiEdit": "edit",  # the reference: "other" (GenericReporter); docs/parity
    "NotebookEdit": "edit",  # the reference: "other" unless AIR; docs/parity
    "Bash": "execute",  # bash.js
    "PowerShell": "execute",  # bash.js
    "Grep": "search",  # search.js
    "Glob": "search",  # search.js
    "WebFetch": "fetch",  # web.js
    "WebSearch": "fetch",  # web.js
    "TodoWrite": "think",  # interaction.js PlanToolReporter
    "TaskCreate": "think",
    "TaskUpdate": "think",
    "TaskList": "think",
    "TaskGet": "think",
    "Task": "think",  # agent.js
    "Agent": "think",  # agent.js
    "ReportFindings": "think",  # interaction.js ReportFindingsReporter
    "ExitPlanMode": "switch_mode",  # interaction.js
    "EnterPlanMode": "switch_mode",  # interaction.js
    "AskUserQuestion": "other",
    "Skill": "other",
    "SendMessage": "other",  # AgentControlReporter
    "mcp__github__create_issue": "other",  # GenericReporter
    "FooBar": "other",
    "": "other",
}


@pytest.mark.parametrize(("name", "kind"), KINDS.items())
def test_tool_kind_is_the_reporters_kind(name: str, kind: str) -> None:
    assert tool_kind(name) == kind
    assert tool_call_start("t", name, {})["kind"] == kind


def test_tool_kind_of_a_non_string_is_other() -> None:
    assert tool_kind(None) == "other"  # type: ignore[arg-type]
    assert tool_kind(["Read"]) == "other"  # type: ignore[arg-type]


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
