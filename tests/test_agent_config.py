"""The agent's settings module (``lifecycle.agent.config``): the ``authMethods`` a client is
offered, as the reference adapter 0.101.0 offers them (its two terminal logins, their arguments and
labels; the ACP registry's validator needs a method of type ``terminal`` or ``agent``), and which
Claude Code executable runs (``--cli-path``, then ``LIFECYCLE_ACP_CLI``, then the reference's
``CLAUDE_CODE_EXECUTABLE``, then the one bundled with the pinned SDK). The end-to-end check of the
executable's choice on the real CLI is ``tests/e2e/test_cli_executable.py``."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from lifecycle import __version__
from lifecycle.agent import config as agent_config
from lifecycle.agent.config import AUTH_METHOD_ID, TERMINAL_AUTH_IDS, auth_methods, claude_cli, cli_from_env
from lifecycle.agent.environment import (
    LOG_FILE,
    BadEnvironment,
    LogTee,
    model_config_settings,
    open_log_dir,
    thinking_option,
)
from lifecycle.agent.launch import cli_options, initial_settings
from lifecycle.agent.startup import cli_main
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


# ------------------------------------------------------------------ issue 50.4: the command line, the environment


def test_hide_claude_auth_leaves_out_the_subscription_login_only() -> None:
    # The reference's --hide-claude-auth (dist/acp-agent.js: the claude.ai login is not pushed).
    methods = auth_methods(ClientState.parse({"auth": {"terminal": True}}), hide_claude_auth=True)
    assert [m["id"] for m in methods] == ["console-login", "claude-login"]


def test_the_thinking_variables_become_claude_codes_thinking_option() -> None:
    # resolveThinkingConfig (dist/acp-agent.js), in the Python SDK's keys.
    assert thinking_option({}) is None
    assert thinking_option({"MAX_THINKING_TOKENS": "0"}) == {"type": "disabled"}
    assert thinking_option({"MAX_THINKING_TOKENS": "2048"}) == {"type": "enabled", "budget_tokens": 2048}
    both = {"MAX_THINKING_TOKENS": "2048", "CLAUDE_CODE_THINKING_DISPLAY": "omitted"}
    assert thinking_option(both) == {"type": "enabled", "budget_tokens": 2048, "display": "omitted"}
    display = {"CLAUDE_CODE_THINKING_DISPLAY": "summarized"}
    assert thinking_option(display) == {"type": "adaptive", "display": "summarized"}
    assert thinking_option({"MAX_THINKING_TOKENS": "-1"}) is None  # ignored, as the reference
    assert thinking_option({"MAX_THINKING_TOKENS": "many", **display}) == {"type": "adaptive", "display": "summarized"}
    assert thinking_option({"CLAUDE_CODE_THINKING_DISPLAY": "loud"}) is None


def test_the_model_config_goes_to_claude_codes_settings_and_a_bad_one_stops_the_start() -> None:
    # parseModelConfig (dist/acp-agent.js): modelOverrides and availableModels only.
    raw = json.dumps({"modelOverrides": {"opus": "x"}, "availableModels": ["opus"], "other": 1})
    assert json.loads(model_config_settings({"CLAUDE_MODEL_CONFIG": raw}) or "") == {
        "modelOverrides": {"opus": "x"},
        "availableModels": ["opus"],
    }
    assert model_config_settings({"CLAUDE_MODEL_CONFIG": "{}"}) is None
    assert model_config_settings({}) is None
    for bad in ("[1]", "not json", '"s"'):
        with pytest.raises(BadEnvironment, match=r"^CLAUDE_MODEL_CONFIG must be a JSON object$"):
            model_config_settings({"CLAUDE_MODEL_CONFIG": bad})


def test_the_environment_reaches_claude_codes_options_and_the_picker() -> None:
    env = {"MAX_THINKING_TOKENS": "0", "CLAUDE_MODEL_CONFIG": '{"availableModels": ["haiku"]}'}
    parsed = agent_config.build_parser().parse_args(["--hide-claude-auth"])
    config = agent_config.config_from_args(parsed, env)
    assert config.hide_claude_auth
    settings = initial_settings(config, {"ANTHROPIC_MODEL": "claude-haiku-9"})
    assert settings.model == "claude-haiku-9"  # the picker starts on it (the reference preselects it)
    kw = cli_options(config, settings, cwd="/p", session_id="s", resume=False)
    assert kw["thinking"] == {"type": "disabled"}
    assert kw["settings"] == '{"availableModels":["haiku"]}'
    assert kw["model"] == "claude-haiku-9"
    assert (
        initial_settings(agent_config.AgentConfig(model="opus"), {"ANTHROPIC_MODEL": "claude-haiku-9"}).model == "opus"
    )


def test_version_prints_the_version_and_exits_0_whatever_else_is_given(capsys: pytest.CaptureFixture[str]) -> None:
    # The reference's index.js: --version or -v anywhere (but after --cli) prints and exits 0.
    for argv in (["--version"], ["-v"], ["--permission-mode", "bogus", "--version"], ["--model", "x", "-v"]):
        assert cli_main(argv) == 0
        assert capsys.readouterr().out == f"{__version__}\n"


def test_claude_agent_logs_appends_the_log_lines_to_agent_log(tmp_path: Path) -> None:
    folder = tmp_path / "logs" / "nested"
    out = io.StringIO()
    tee = LogTee(out, open_log_dir(str(folder)))
    tee.write('{"event":"agent.start"}\n')
    tee.write('{"event":"agent.stop"}\n')
    assert out.getvalue() == (folder / LOG_FILE).read_text() == '{"event":"agent.start"}\n{"event":"agent.stop"}\n'
    assert (folder / LOG_FILE).stat().st_mode & 0o777 == 0o600
