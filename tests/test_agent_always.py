"""What an "always" answer hands Claude Code, and its option's name
(:mod:`lifecycle.agent.always`). Expected names are the reference adapter's
(``dist/permissions/options/filesystem.js``, ``shell.js``, ``tools.js`` of
``@agentclientprotocol/claude-agent-acp`` 0.101.0), with "during this session" where the
reference's rule would have been written to a settings file; suggestions are the shapes Claude
Code 2.1.332 sends (seen in tests/e2e/test_permissions.py's runs)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from claude_agent_sdk import PermissionUpdate
from claude_agent_sdk.types import PermissionRuleValue

from lifecycle.agent.always import MAX_UPDATES, always_option, always_updates, durable_updates

CWD = "/work/p"


def rules(tool: str, *contents: str | None, destination: str = "localSettings") -> PermissionUpdate:
    return PermissionUpdate(
        type="addRules",
        rules=[PermissionRuleValue(tool, c) for c in contents],
        behavior="allow",
        destination=destination,  # type: ignore[arg-type]
    )


ACCEPT = PermissionUpdate(type="setMode", mode="acceptEdits", destination="session")


def dirs(*paths: str) -> PermissionUpdate:
    return PermissionUpdate(type="addDirectories", directories=list(paths), destination="session")


def name(tool: str, inp: dict[str, Any], suggestions: list[PermissionUpdate], *, forced: bool = False) -> str | None:
    updates = always_updates(tool, inp, suggestions, forced_ask=forced)
    return always_option(tool, inp, updates, cwd=CWD)


@pytest.mark.parametrize(
    ("tool", "inp", "suggestions", "expected"),
    [
        ("Write", {"file_path": f"{CWD}/a.txt"}, [ACCEPT], "Yes, allow all edits during this session"),
        ("Edit", {"file_path": "a.txt"}, [ACCEPT], "Yes, allow all edits during this session"),
        ("NotebookEdit", {"notebook_path": f"{CWD}/n.ipynb"}, [ACCEPT], "Yes, allow all edits during this session"),
        ("MultiEdit", {"file_path": f"{CWD}/a.txt"}, [ACCEPT], "Yes, allow all edits during this session"),
        (
            "Write",
            {"file_path": "/tmp/x/b.txt"},
            [ACCEPT, dirs("/tmp/x")],
            "Yes, allow all edits in x/ during this session",
        ),
        ("Write", {"file_path": "/tmp/x/b.txt"}, [ACCEPT], None),  # acceptEdits does not reach outside
        ("Write", {"file_path": f"{CWD}/.claude/settings.local.json"}, [ACCEPT], None),
        (
            "Write",
            {"file_path": f"{CWD}/.claude/settings.local.json"},
            [rules("Edit", f"{CWD}/.claude/**", destination="session")],
            "Yes, and allow Claude to edit its own settings for this session",
        ),
        ("Write", {"file_path": f"{CWD}/a.txt"}, [rules("Bash", "ls")], None),  # not a file scope
        (
            "Read",
            {"file_path": "/tmp/x/r.txt"},
            [rules("Read", "//tmp/x/**", destination="session")],
            "Yes, allow reading from x/ during this session",
        ),
        ("Read", {"file_path": "/tmp/x/r.txt"}, [rules("Read", "//tmp/y/**")], None),  # does not cover it
        ("Read", {"file_path": "/tmp/x/r.txt"}, [ACCEPT], None),  # a mode is no read scope
        ("Glob", {"pattern": "*"}, [rules("Read", None)], "Yes, during this session"),
        (
            "Bash",
            {"command": "npm test"},
            [rules("Bash", "npm test *")],
            "Yes, and don't ask again for npm test commands during this session",
        ),
        (
            "Bash",
            {"command": "git log"},
            [rules("Bash", "git log:*")],
            "Yes, and don't ask again for git log commands during this session",
        ),
        (
            "Bash",
            {"command": "ls"},
            [rules("Bash", "ls"), rules("Bash", "pwd")],
            "Yes, and don't ask again for ls and pwd commands during this session",
        ),
        (
            "Bash",
            {"command": "x" * 60},
            [rules("Bash", "x" * 60)],
            "Yes, and don't ask again for this exact command during this session",
        ),
        (
            "Bash",
            {"command": "npm i " + "y" * 60},
            [rules("Bash", "npm i " + "y" * 60 + " *")],
            "Yes, and don't ask again for similar commands during this session",
        ),
        ("Bash", {"command": "touch a"}, [rules("Bash", "touch a"), ACCEPT], None),  # a mode is not a command
        ("Bash", {"command": "ls"}, [rules("Bash", None)], None),  # every command: never named as one
        ("Bash", {"command": "cat /o/f"}, [rules("Read", "/o/**")], "Yes, allow reading from o/ during this session"),
        (
            "WebFetch",
            {"url": "https://docs.example.com/a"},
            [],
            "Yes, and don't ask again for docs.example.com during this session",
        ),
        ("WebFetch", {"url": "not a url"}, [], None),
        ("WebSearch", {"query": "q"}, [], "Yes, and don't ask again for WebSearch commands during this session"),
        (
            "mcp__srv__echo",
            {},
            [rules("mcp__srv__echo", None)],
            "Yes, and don't ask again for mcp__srv__echo commands during this session",
        ),
        ("mcp__srv__echo", {}, [rules("mcp__srv__other", None)], None),
        ("mcp__srv__echo", {}, [], None),
        ("ExitPlanMode", {"plan": "p"}, [ACCEPT], None),
        ("EnterPlanMode", {}, [], None),
    ],
)
def test_the_always_option_names_exactly_its_scope(
    tool: str, inp: dict[str, Any], suggestions: list[PermissionUpdate], expected: str | None
) -> None:
    if expected is not None:
        expected = expected.replace("/ during", f"{os.sep} during")
    assert name(tool, inp, suggestions) == expected


@pytest.mark.parametrize(
    ("tool", "inp", "suggestions"),
    [
        ("Write", {"file_path": f"{CWD}/a.txt"}, [ACCEPT]),
        ("Bash", {"command": "npm test"}, [rules("Bash", "npm test *")]),
        ("WebFetch", {"url": "https://example.com/"}, []),
        ("WebSearch", {"query": "q"}, []),
    ],
)
def test_no_always_when_an_ask_rule_or_safety_check_forced_the_question(
    tool: str, inp: dict[str, Any], suggestions: list[PermissionUpdate]
) -> None:
    assert always_updates(tool, inp, suggestions, forced_ask=True) is None
    assert name(tool, inp, suggestions, forced=True) is None


def test_suggestions_are_kept_to_the_session_and_snapshotted() -> None:
    suggestion = rules("Bash", "npm test *")
    updates = durable_updates([suggestion])
    assert updates is not None
    assert [u.to_dict() for u in updates] == [
        {
            "type": "addRules",
            "destination": "session",
            "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}],
            "behavior": "allow",
        }
    ]
    assert suggestion.rules is not None
    suggestion.rules[0].rule_content = "*"  # a later change to the callback's argument
    assert updates[0].rules is not None and updates[0].rules[0].rule_content == "npm test *"


def test_webfetch_always_is_the_host_rule_for_the_session() -> None:
    updates = always_updates("WebFetch", {"url": "https://a.example.org:8443/x?y=1"}, [], forced_ask=False)
    assert updates is not None
    assert [u.to_dict() for u in updates] == [
        {
            "type": "addRules",
            "destination": "session",
            "rules": [{"toolName": "WebFetch", "ruleContent": "domain:a.example.org"}],
            "behavior": "allow",
        }
    ]


@pytest.mark.parametrize(
    "suggestions",
    [
        [],
        None,
        "addRules",
        [rules("Bash", "ls\x07")],  # a control character
        [rules("Bash", " ")],  # blank content
        [rules("B" * 513, None)],  # tool name too long
        [PermissionUpdate(type="addRules", rules=[], behavior="allow")],
        [PermissionUpdate(type="setMode", mode="yolo")],  # type: ignore[arg-type]
        [PermissionUpdate(type="addDirectories", directories=[])],
        [PermissionUpdate(type="dropEverything")],  # type: ignore[arg-type]
        [{"type": "addRules"}],
        [rules("Bash", "ls")] * (MAX_UPDATES + 1),
    ],
    ids=[
        "empty",
        "none",
        "string",
        "control-char",
        "blank",
        "long-name",
        "no-rules",
        "bad-mode",
        "no-dirs",
        "unknown-type",
        "dict",
        "too-many",
    ],
)
def test_invalid_suggestions_give_no_always(suggestions: Any) -> None:
    assert durable_updates(suggestions) is None
    assert name("Bash", {"command": "ls"}, suggestions) is None
