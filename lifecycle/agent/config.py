"""The agent's settings (``lifecycle acp --help``): standard library only, so that parsing the
command line imports nothing heavy."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from ..negotiation import ClientState

__all__ = [
    "AGENT_CAPABILITIES",
    "AUTH_METHOD_ID",
    "CLI_ENV",
    "INITIALIZE_META",
    "MCP_CAPABILITIES",
    "PROMPT_CAPABILITIES",
    "TERMINAL_AUTH_IDS",
    "AgentConfig",
    "auth_methods",
    "build_parser",
    "claude_cli",
    "cli_from_env",
    "config_from_args",
]

#: The authentication method every client is offered: it checks for credentials (``authenticate``
#: with it feeds ``AuthStatus``).
AUTH_METHOD_ID = "claude-login"
_AGENT_METHOD: dict[str, object] = {
    "id": AUTH_METHOD_ID,
    "name": "Log in to Claude",
    "description": "Checks for Claude credentials: run `claude auth login` in a terminal (or set "
    "ANTHROPIC_API_KEY), then continue.",
}
#: Terminal logins (ACP ``type: terminal``), the reference adapter's: the client runs this agent's
#: own command with these arguments in a terminal, which runs Claude Code's login. ``label``: the
#: terminal's title under the ``_meta["terminal-auth"]`` capability (the reference's words).
_TERMINAL_METHODS: tuple[dict[str, object], ...] = (
    {
        "id": "claude-ai-login",
        "name": "Claude Subscription",
        "description": "Use Claude subscription",
        "type": "terminal",
        "args": ["--cli", "auth", "login", "--claudeai"],
    },
    {
        "id": "console-login",
        "name": "Anthropic Console",
        "description": "Use Anthropic Console (API usage billing)",
        "type": "terminal",
        "args": ["--cli", "auth", "login", "--console"],
    },
)
_TERMINAL_LABELS: Mapping[str, str] = {"claude-ai-login": "Claude Login", "console-login": "Anthropic Console Login"}
TERMINAL_AUTH_IDS = frozenset(str(m["id"]) for m in _TERMINAL_METHODS)
#: The Claude subscription login, which ``--hide-claude-auth`` leaves out.
CLAUDE_AI_LOGIN: Final = "claude-ai-login"


def _agent_command() -> tuple[str, list[str]]:
    """The command that starts this agent again (the interpreter running it, ``-m lifecycle.agent``),
    which a client runs in a terminal with a login's ``args``; Claude Code is the one
    ``LIFECYCLE_ACP_CLI`` or ``CLAUDE_CODE_EXECUTABLE`` names, else the bundled one (:func:`claude_cli`)."""
    import sys

    return sys.executable, ["-m", "lifecycle.agent"]


#: The reference's gateway logins (``authenticate`` with ``_meta.gateway {baseUrl, headers}``:
#: :mod:`lifecycle.agent.providers`), offered to a client that declares ``auth._meta.gateway``;
#: the protocol each routes through.
GATEWAY_METHODS: Final[Mapping[str, str]] = {"gateway": "anthropic", "gateway-bedrock": "bedrock"}


def _gateway_methods() -> list[dict[str, object]]:
    """The gateway logins' ``authMethods`` entries, the reference's word for word."""
    return [
        {
            "id": method_id,
            "name": "Custom model gateway",
            "description": "Use a custom gateway to authenticate and access models",
            "_meta": {"gateway": {"protocol": protocol}},
        }
        for method_id, protocol in GATEWAY_METHODS.items()
    ]


def auth_methods(client: ClientState, *, hide_claude_auth: bool = False) -> list[dict[str, object]]:
    """The ``authMethods`` of an ``initialize`` answer: the terminal logins for a client that runs
    them (:attr:`~lifecycle.negotiation.ClientState.terminal_auth`; declared by
    ``_meta["terminal-auth"]``, as Zed, JetBrains and the ACP registry's validator send it, each
    also carries ``_meta["terminal-auth"]`` ``{command, args, label}``, the full command, as the
    reference adapter does), then the credentials check."""
    methods: list[dict[str, object]] = []
    for method in _TERMINAL_METHODS if client.terminal_auth else ():
        if hide_claude_auth and method["id"] == CLAUDE_AI_LOGIN:
            continue  # ``--hide-claude-auth``: no Claude subscription login (the reference's)
        args = [str(a) for a in method["args"]]  # type: ignore[attr-defined]
        entry: dict[str, object] = dict(method, args=args)
        if client.terminal_auth_meta:
            command, prefix = _agent_command()
            label = _TERMINAL_LABELS[str(method["id"])]
            entry["_meta"] = {"terminal-auth": {"command": command, "args": [*prefix, *args], "label": label}}
        methods.append(entry)
    gateway = _gateway_methods() if client.gateway_auth else []  # after the terminal logins, as the reference
    return [*methods, *gateway, dict(_AGENT_METHOD)]


#: The environment variables naming the Claude Code executable, first wins: this agent's own, then
#: the reference adapter's (``CLAUDE_CODE_EXECUTABLE``, which it passes to its SDK as
#: ``pathToClaudeCodeExecutable``). ``--cli-path`` overrides both.
CLI_ENV: Final = ("LIFECYCLE_ACP_CLI", "CLAUDE_CODE_EXECUTABLE")


def cli_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """The Claude Code executable the environment names (:data:`CLI_ENV`, first set wins), None
    when neither is set (the bundled one then: :func:`claude_cli`)."""
    env = os.environ if environ is None else environ
    return next((value for name in CLI_ENV if (value := env.get(name))), None)


def claude_cli(cli_path: str | None = None) -> str | None:
    """The Claude Code executable sessions run: ``cli_path``, else the one bundled with
    ``claude-agent-sdk``, else ``claude`` on the PATH."""
    import shutil
    from importlib.util import find_spec

    if cli_path:
        return cli_path
    spec = find_spec("claude_agent_sdk")
    if spec is not None and spec.origin:
        from pathlib import Path

        bundled = Path(spec.origin).parent / "_bundled" / "claude"
        if bundled.is_file():
            return str(bundled)
    return shutil.which("claude")


#: ``agentCapabilities`` as ``initialize`` answers them (before the ``sessionFailure`` ``_meta``):
#: exactly what works. Kept here, in plain JSON, for the fast ``initialize`` and the agent alike.
#: Prompts: images and embedded context (:mod:`lifecycle.agent.prompt`), no audio.
PROMPT_CAPABILITIES: Mapping[str, bool] = {"image": True, "audio": False, "embeddedContext": True}
#: MCP servers over HTTP and SSE (stdio always), not ACP-transported ones (:mod:`lifecycle.agent.mcp`).
MCP_CAPABILITIES: Mapping[str, bool] = {"http": True, "sse": True, "acp": False}
AGENT_CAPABILITIES: dict[str, object] = {
    "loadSession": True,
    "promptCapabilities": dict(PROMPT_CAPABILITIES),
    "mcpCapabilities": dict(MCP_CAPABILITIES),
    # The reference's: ``additionalDirectories`` (Claude Code's ``--add-dir``), ``fork`` and
    # ``delete`` (the Claude SDK's ``fork_session`` and ``delete_session``).
    "sessionCapabilities": {
        "list": {},
        "resume": {},
        "close": {},
        "fork": {},
        "delete": {},
        "additionalDirectories": {},
        # The client's system prompt, appended or in place of Claude Code's (the reference's
        # ``SYSTEM_PROMPT_CAPABILITY``: both modes; :mod:`lifecycle.agent.session_request`).
        "systemPrompt": {"mode": {"override": {}}},
    },
    "auth": {"logout": {}},
    # The reference's: a ``session/prompt`` sent while a turn runs waits its turn (Claude Code
    # queues it) and is answered with its own reply.
    # ``authStatus``: the reference's marker, "this agent pushes ``_auth/status_update``"
    # (:mod:`lifecycle.agent.auth_status`); always empty.
    "_meta": {"claudeCode": {"promptQueueing": True}, "authStatus": {}},
    # The reference's: ``providers/list``, ``set`` and ``disable`` (:mod:`lifecycle.agent.providers`).
    "providers": {},
}
#: The ``initialize`` result's own ``_meta`` (beside ``agentCapabilities``), the reference's:
#: ``_session/steering`` injects a message into the running turn (:mod:`lifecycle.agent.steering`).
INITIALIZE_META: Mapping[str, object] = {"steering": {"supported": True}}


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """How the agent runs Claude Code (``lifecycle acp --help``; environment variables in brackets).

    Attributes:
        model: Claude model for every session [``LIFECYCLE_ACP_MODEL``]; default: the CLI's.
        cwd: working directory for every session, overriding the client's
            [``LIFECYCLE_ACP_CWD``].
        max_turns: Claude's turn limit per prompt [``LIFECYCLE_ACP_MAX_TURNS``].
        cli_path: the Claude Code executable [``LIFECYCLE_ACP_CLI``, else ``CLAUDE_CODE_EXECUTABLE``];
            default: the one bundled with ``claude-agent-sdk``.
        permission_mode: Claude's permission mode [``LIFECYCLE_ACP_PERMISSION_MODE``].
        connect_timeout: seconds to wait for Claude Code to start.
        idle_timeout: seconds a prompt waits for a cancelled turn to wind down before the runtime
            is replaced.
        cli_stderr: forward Claude Code's stderr lines to this process's stderr.
        start_early: start a session's Claude Code in the background when the session is
            created, loaded or resumed (its models and commands reach the editor before the
            first prompt, which then finds it running) rather than at the first prompt.
        thinking: Claude Code's ``thinking`` option [``MAX_THINKING_TOKENS``,
            ``CLAUDE_CODE_THINKING_DISPLAY``: :func:`lifecycle.agent.environment.thinking_option`].
        settings: Claude Code's ``--settings`` JSON [``CLAUDE_MODEL_CONFIG``:
            :func:`lifecycle.agent.environment.model_config_settings`].
        hide_claude_auth: offer no Claude subscription login, and refuse a session or a turn a
            claude.ai subscription would pay for (``--hide-claude-auth``).
    """

    model: str | None = None
    cwd: str | None = None
    max_turns: int | None = None
    cli_path: str | None = None
    permission_mode: str | None = None
    connect_timeout: float = 60.0
    idle_timeout: float = 30.0
    cli_stderr: bool = False
    start_early: bool = True
    thinking: Mapping[str, Any] | None = None
    settings: str | None = None
    hide_claude_auth: bool = False


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    return int(value) if value else None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="lifecycle acp",
        description="Run the reference Claude ACP agent over stdio (sessionFailure extension embedded). "
        "Claude's environment (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, CLAUDE_CONFIG_DIR, ...) passes through.",
    )
    p.add_argument("--model", default=os.environ.get("LIFECYCLE_ACP_MODEL"), help="Claude model")
    p.add_argument("--cwd", default=os.environ.get("LIFECYCLE_ACP_CWD"), help="working directory for every session")
    p.add_argument("--max-turns", type=int, default=_env_int("LIFECYCLE_ACP_MAX_TURNS"), help="turn limit per prompt")
    p.add_argument(
        "--cli-path",
        default=cli_from_env(),
        help="Claude Code executable (default: $LIFECYCLE_ACP_CLI, else $CLAUDE_CODE_EXECUTABLE, else the bundled one)",
    )
    p.add_argument(
        "--permission-mode",
        default=os.environ.get("LIFECYCLE_ACP_PERMISSION_MODE"),
        choices=["default", "acceptEdits", "plan", "dontAsk", "auto", "bypassPermissions"],
        help="the permission mode sessions start in (an editor can change it per session)",
    )
    p.add_argument(
        "--log-level",
        default=os.environ.get("LIFECYCLE_ACP_LOG_LEVEL", "info"),
        choices=["debug", "info", "warning", "error"],
        help="stderr log level",
    )
    p.add_argument("--cli-stderr", action="store_true", help="forward Claude Code's stderr to stderr")
    p.add_argument(
        "--hide-claude-auth",
        action="store_true",
        help="offer no Claude subscription login and refuse a session or turn it would pay for (API keys and the "
        "Console login only)",
    )
    p.add_argument("-v", "--version", action="version", version=_version(), help="print the version and exit")
    p.add_argument(
        "--cli",
        action="store_true",
        help="run Claude Code itself with the other arguments (an editor's terminal login runs "
        "`lifecycle acp --cli auth login --console`)",
    )
    return p


def _version() -> str:
    from .. import __version__

    return __version__


def config_from_args(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> AgentConfig:
    """The agent's settings from its parsed command line and the environment (the reference's
    variables: :mod:`lifecycle.agent.environment`); raises ``BadEnvironment`` for a variable it
    cannot start with."""
    from .environment import model_config_settings, thinking_option

    env = os.environ if environ is None else environ
    return replace(
        AgentConfig(),
        thinking=thinking_option(env),
        settings=model_config_settings(env),
        hide_claude_auth=bool(getattr(args, "hide_claude_auth", False)),
        model=args.model or None,
        cwd=args.cwd or None,
        max_turns=args.max_turns,
        cli_path=args.cli_path or None,
        permission_mode=args.permission_mode or None,
        cli_stderr=bool(args.cli_stderr),
    )
