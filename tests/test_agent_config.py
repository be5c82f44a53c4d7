"""The agent's settings module (``lifecycle.agent.config``): the ``authMethods`` a client is
offered, as the reference adapter 0.101.0 offers them (its two terminal logins, their arguments and
labels; the ACP registry's validator needs a method of type ``terminal`` or ``agent``), and which
Claude Code executable runs (``--cli-path``, then ``LIFECYCLE_ACP_CLI``, then the reference's
``CLAUDE_CODE_EXECUTABLE``, then the one bundled with the pinned SDK). The end-to-end check of the
executable's choice on the real CLI is ``tests/e2e/test_cli_executable.py``."""

from __future__ import annotations

import sys
from pathlib import Path

from lifecycle.agent.config import AUTH_METHOD_ID, TERMINAL_AUTH_IDS, auth_methods, claude_cli, cli_from_env
from lifecycle.negotiation import ClientState

CLAUDE_AI = ["--cli", "auth", "login", "--claudeai"]
CONSOLE = ["--cli", "auth", "login", "--console"]


def test_a_client_without_terminal_logins_gets_the_credentials_check_only() -> None:
    (only,) = auth_methods(ClientState())
    assert only["id"] == AUTH_METHOD_ID == "claude-login"
    assert "type" not in only  # an ``agent`` method: the agent checks for credentials itself


def test_a_client_that_runs_terminal_logins_gets_the_references_two_then_the_check() -> None:
    methods = auth_methods(ClientState.parse({"auth": {"terminal": True}}))
    assert [(m["id"], m.get("type"), m.get("args")) for m in methods] == [
        ("claude-ai-login", "terminal", CLAUDE_AI),
        ("console-login", "terminal", CONSOLE),
        ("claude-login", None, None),
    ]
    assert all("_meta" not in m for m in methods)
    assert {m["id"] for m in methods[:2]} == TERMINAL_AUTH_IDS


def test_the_registrys_terminal_auth_gets_each_login_as_a_full_command() -> None:
    # The ACP registry validator's ``initialize`` (and Zed's, JetBrains'): ``_meta["terminal-auth"]``.
    client = ClientState.parse({"terminal": True, "_meta": {"terminal_output": True, "terminal-auth": True}})
    claude_ai, console, check = auth_methods(client)
    assert claude_ai["_meta"] == {
        "terminal-auth": {
            "command": sys.executable,
            "args": ["-m", "lifecycle.agent", *CLAUDE_AI],
            "label": "Claude Login",
        }
    }
    assert console["_meta"] == {
        "terminal-auth": {
            "command": sys.executable,
            "args": ["-m", "lifecycle.agent", *CONSOLE],
            "label": "Anthropic Console Login",
        }
    }
    assert check["id"] == "claude-login"


def test_the_environment_names_the_executable_this_agents_variable_first() -> None:
    assert cli_from_env({}) is None
    assert cli_from_env({"CLAUDE_CODE_EXECUTABLE": "/opt/claude"}) == "/opt/claude"
    assert cli_from_env({"CLAUDE_CODE_EXECUTABLE": "/opt/claude", "LIFECYCLE_ACP_CLI": "/x/claude"}) == "/x/claude"
    # an empty value is no value
    assert cli_from_env({"LIFECYCLE_ACP_CLI": "", "CLAUDE_CODE_EXECUTABLE": "/opt/claude"}) == "/opt/claude"


def test_a_path_given_wins_else_the_bundled_claude_code() -> None:
    assert claude_cli("/given/claude") == "/given/claude"
    bundled = claude_cli()
    assert bundled is not None
    import claude_agent_sdk

    assert Path(bundled) == Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
