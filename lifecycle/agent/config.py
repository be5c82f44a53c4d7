"""The agent's settings (``lifecycle acp --help``): standard library only, so that parsing the
command line imports nothing heavy."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, replace

__all__ = ["AUTH_METHOD_ID", "AgentConfig", "build_parser", "config_from_args"]

#: The one authentication method advertised (``authenticate`` with it feeds ``AuthStatus``).
AUTH_METHOD_ID = "claude-login"


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """How the agent runs Claude Code (``lifecycle acp --help``; environment variables in brackets).

    Attributes:
        model: Claude model for every session [``LIFECYCLE_ACP_MODEL``]; default: the CLI's.
        cwd: working directory for every session, overriding the client's
            [``LIFECYCLE_ACP_CWD``].
        max_turns: Claude's turn limit per prompt [``LIFECYCLE_ACP_MAX_TURNS``].
        cli_path: the Claude Code executable [``LIFECYCLE_ACP_CLI``]; default: the bundled one.
        permission_mode: Claude's permission mode [``LIFECYCLE_ACP_PERMISSION_MODE``].
        connect_timeout: seconds to wait for Claude Code to start.
        idle_timeout: seconds a prompt waits for a cancelled turn to wind down before the runtime
            is replaced.
        cli_stderr: forward Claude Code's stderr lines to this process's stderr.
    """

    model: str | None = None
    cwd: str | None = None
    max_turns: int | None = None
    cli_path: str | None = None
    permission_mode: str | None = None
    connect_timeout: float = 60.0
    idle_timeout: float = 30.0
    cli_stderr: bool = False


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
    p.add_argument("--cli-path", default=os.environ.get("LIFECYCLE_ACP_CLI"), help="Claude Code executable")
    p.add_argument(
        "--permission-mode",
        default=os.environ.get("LIFECYCLE_ACP_PERMISSION_MODE"),
        choices=["default", "acceptEdits", "plan", "bypassPermissions"],
        help="Claude's permission mode",
    )
    p.add_argument(
        "--log-level",
        default=os.environ.get("LIFECYCLE_ACP_LOG_LEVEL", "info"),
        choices=["debug", "info", "warning", "error"],
        help="stderr log level",
    )
    p.add_argument("--cli-stderr", action="store_true", help="forward Claude Code's stderr to stderr")
    return p


def config_from_args(args: argparse.Namespace) -> AgentConfig:
    return replace(
        AgentConfig(),
        model=args.model or None,
        cwd=args.cwd or None,
        max_turns=args.max_turns,
        cli_path=args.cli_path or None,
        permission_mode=args.permission_mode or None,
        cli_stderr=bool(args.cli_stderr),
    )
