"""The reference adapter's environment variables, read as it reads them (issue 50.4). Standard
library only: the command line's parsing reads them.

Rules
-----
* ``MAX_THINKING_TOKENS`` and ``CLAUDE_CODE_THINKING_DISPLAY`` become Claude Code's ``thinking``
  option as the reference's ``resolveThinkingConfig`` (``dist/acp-agent.js``) makes it: ``0``
  disables thinking, a positive integer is a fixed budget, a display (``summarized`` or
  ``omitted``) alone asks for adaptive thinking with it; a value of another shape is ignored
  (the reference logs it; this agent logs the variable's name, never its value).
* ``CLAUDE_MODEL_CONFIG``: a JSON object whose ``modelOverrides`` and ``availableModels`` go to
  Claude Code's settings (its ``--settings``), as the reference's ``parseModelConfig``; one that
  is not a JSON object stops the agent at its start with the variable's name (the reference fails
  every session with it instead: docs/parity/README.md).
* ``ANTHROPIC_MODEL`` is the model a session starts with when ``--model`` names none (the
  reference preselects it in the picker; Claude Code runs it either way).
* ``CLAUDE_AGENT_LOGS``: a folder; the agent's log lines (ids and states, as on stderr) are also
  appended to ``agent.log`` in it, created private to the user (:class:`LogTee`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, Final

__all__ = ["LOG_FILE", "BadEnvironment", "LogTee", "model_config_settings", "open_log_dir", "thinking_option"]

#: The file ``CLAUDE_AGENT_LOGS`` names the folder of (the reference's).
LOG_FILE: Final = "agent.log"
_DISPLAYS: Final = ("summarized", "omitted")


class BadEnvironment(ValueError):
    """A variable of the environment this agent cannot start with; the message names it only."""


def thinking_option(env: Mapping[str, str]) -> dict[str, Any] | None:
    """Claude Code's ``thinking`` option (the Python SDK's shape) for ``MAX_THINKING_TOKENS`` and
    ``CLAUDE_CODE_THINKING_DISPLAY``, None for Claude Code's default."""
    raw_display, raw_tokens = env.get("CLAUDE_CODE_THINKING_DISPLAY"), env.get("MAX_THINKING_TOKENS")
    display = raw_display if raw_display in _DISPLAYS else None
    adaptive = {"type": "adaptive", "display": display} if display else None
    if raw_tokens is None:
        return adaptive
    tokens = raw_tokens.strip()
    if not (tokens.isascii() and tokens.isdigit()):  # parseInt's non-negative integers only
        return adaptive
    if int(tokens) == 0:
        return {"type": "disabled"}
    option: dict[str, Any] = {"type": "enabled", "budget_tokens": int(tokens)}
    if display:
        option["display"] = display
    return option


def model_config_settings(env: Mapping[str, str]) -> str | None:
    """Claude Code's ``--settings`` JSON for ``CLAUDE_MODEL_CONFIG`` (its ``modelOverrides`` and
    ``availableModels``), None when unset or naming neither; raises :class:`BadEnvironment`
    for one that is not a JSON object."""
    raw = env.get("CLAUDE_MODEL_CONFIG")
    if not raw:
        return None
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise BadEnvironment("CLAUDE_MODEL_CONFIG must be a JSON object")
    kept = {k: parsed[k] for k in ("modelOverrides", "availableModels") if k in parsed}
    return json.dumps(kept, separators=(",", ":")) if kept else None


class LogTee:
    """A text stream writing to ``stream`` and to ``file`` (the log lines of both are the same)."""

    def __init__(self, stream: IO[str], file: IO[str]) -> None:
        self._stream, self._file = stream, file

    def write(self, text: str) -> int:
        self._stream.write(text)
        try:
            self._file.write(text)
            self._file.flush()
        except (OSError, ValueError):  # a full disk, a closed file: stderr still gets it
            pass
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return bool(getattr(self._stream, "isatty", lambda: False)())


def open_log_dir(folder: str) -> IO[str]:
    """``folder``/``agent.log`` opened for appending (the folder created, the file readable by the
    user only); raises ``OSError`` when it cannot be."""
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    fd = os.open(path / LOG_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    return os.fdopen(fd, "a", encoding="utf-8")
