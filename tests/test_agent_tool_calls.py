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

from typing import Any

import pytest
from tool_call_oracle import CWD, started, wire

from lifecycle.agent.tool_calls import (
    MAX_ITEMS,
    MAX_TITLE,
    plan_update,
    tool_call_progress,
    tool_call_start,
    tool_kind,
)

# ---------------------------------------------------------------------------------- tool uses

#: Goal tool uses and the content shown (the condition: sdk-tools.d.ts's example).
GOAL = "all tests in test/auth pass (bun test exits 0)"
SHOWN = [{"type": "content", "content": {"type": "text", "text": GOAL}}]
GOALS = [("SetGoal", {"condition": GOAL, "ask_user": True}, SHOWN), ("SetGoal", {"ask_user": False}, []),
         ("ProposeGoal", {"condition": GOAL}, SHOWN)]  # fmt: skip

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
    # Not the reference's (0.101.0: GenericReporter's bare name): CLI 2.1.337's SetGoal, its input
    # ``ProposeGoalInput`` of sdk-tools.d.ts (npm @anthropic-ai/claude-agent-sdk 0.3.337), whose
    # ``condition`` the user "must be able to read whole in the approval dialog"; ProposeGoal before it.
    *(pytest.param(name, inp, CWD, {"title": "Set goal", "kind": "other", "content": out}, id=f"{name}-{n}")
      for n, (name, inp, out) in enumerate(GOALS)),
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
    "SetGoal": "other",
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
