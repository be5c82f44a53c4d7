"""``lifecycle.agent.tool_calls``: the results of the reading, searching, web, agent, interaction and
unknown tools against the reference adapter (oracle: ``test_agent_tool_calls.py``'s docstring; the
file-editing tools and Bash: ``test_agent_tool_calls_edits.py``)."""

from __future__ import annotations

from typing import Any

import pytest
from tool_call_oracle import ABSENT, CWD, SAME, ended, wire

from lifecycle.agent.tool_calls import (
    tool_call_result,
)

# ------------------------------------------------------------------------------------ results

RESULT_CASES = [
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
