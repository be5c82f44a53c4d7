"""A command's tool call as a terminal card, for a client that draws one (it declared
``clientCapabilities._meta.terminal_output: true``, :attr:`lifecycle.negotiation.ClientState.terminal_output`),
as the reference adapter 0.101.0 renders it (``dist/tool-calls/renderer.js``: ``hasTerminal``,
``toolCall``, ``refinement``, ``fieldsOfResult``, ``result``, ``terminalExit``;
``reporters/bash.js``). Zed draws such a card with the command's output and its exit code.

Rules
-----
* A command is a ``Bash`` or ``PowerShell`` tool use (:data:`COMMANDS`); its terminal's id is the
  tool use id.
* Its ``tool_call`` carries ``content: [{type: "terminal", terminalId}]`` (no description text
  beside it) and ``_meta.terminal_info: {terminal_id}``; the refinement once its input is complete
  and a permission question's tool call carry the same content.
* Its result is two ``tool_call_update``s: the output (``_meta.terminal_output: {terminal_id,
  data}``, the text a ``console`` block would show, at most
  :data:`lifecycle.agent.tool_calls.MAX_TEXT` characters), then the end (``status``,
  ``_meta.claudeCode.toolName``, ``_meta.terminal_exit: {terminal_id, exit_code, signal: null}``;
  no ``content``: the client holds the terminal marker already, as the reference's field tracker
  leaves it out; no ``rawOutput``: the terminal carried it). A failed command
  goes to the terminal too. The exit code: ``0`` for a success, the ``Exit code N`` a failure's text
  starts with, Claude Code's ``return_code`` of a code-execution result, else ``null`` (an
  interrupted command, a success read by a ``returnCodeInterpretation``, a command sent to the
  background). JetBrains AIR (:attr:`~lifecycle.negotiation.ClientState.air`) always gets a number
  (``1`` for a failed or interrupted command, else the code or ``0``), as the reference gives it.
* A command whose output is an image is no terminal result: it is shown as content, as for every
  client (:func:`lifecycle.agent.tool_calls.tool_call_result`).
* A command's tool call that the turn closes without its result ends its terminal too
  (``terminal_exit`` with ``exit_code`` ``null``, ``1`` for AIR).
* Every other client keeps the ````console`` text block.

Theory of operation
-------------------
Pure functions over the updates :mod:`lifecycle.agent.tool_calls` builds; the session's renderer
(:class:`lifecycle.agent.stream.StreamRenderer`, built with the client's flags) calls them for a
command's tool call. Never raises.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from . import tool_calls

__all__ = ["COMMANDS", "terminal_closed", "terminal_content", "terminal_result"]

#: The tools whose calls are commands (the reference's ``facts.command``).
COMMANDS: Final = frozenset({"Bash", "PowerShell"})
#: The start of a failed command's result text naming its exit code (bash.js ``failureExitCode``).
_EXIT_CODE: Final = re.compile(r"Exit code (\d+)(?:\n|$)")


def _marker(tool_use_id: str) -> list[dict[str, Any]]:
    return [{"type": "terminal", "terminalId": tool_use_id}]


def terminal_content(update: dict[str, Any]) -> dict[str, Any]:
    """``update`` (a command's ``tool_call``, its refinement, a permission question's tool call)
    showing the terminal: its content the terminal marker (the caller adds ``_meta.terminal_info``
    to the ``tool_call``)."""
    tool_id = update.get("toolCallId")
    if isinstance(tool_id, str) and tool_id:
        update["content"] = _marker(tool_id)
    return update


def _exit_code(output: str, result: Any, structured: Any, is_error: bool) -> tuple[int | None, bool]:
    """The command's exit code (None: unknown) and whether it was interrupted (bash.js)."""
    code: int | None = None if is_error else 0
    interrupted = False
    data = structured if isinstance(structured, Mapping) else {}
    usable = (
        isinstance(data.get("stdout"), str) and isinstance(data.get("stderr"), str)
        and not data.get("isImage") and "backgroundTaskId" not in data
    )  # fmt: skip
    if usable:
        if data.get("interrupted"):
            code, interrupted = None, True
        if data.get("returnCodeInterpretation") is not None:
            code = None
    elif isinstance(result, Mapping) and result.get("type") == "bash_code_execution_result":
        returned = result.get("return_code")
        code = returned if isinstance(returned, int) and not isinstance(returned, bool) else None
    if is_error and code is None:
        match = _EXIT_CODE.match(output)
        code = int(match.group(1)) if match else None
    if "backgroundTaskId" in data:
        code = None
    return code, interrupted


def terminal_result(
    tool_use_id: str, name: str, result: Any, *, is_error: bool, structured: Any, air: bool
) -> list[dict[str, Any]] | None:
    """The two updates ending a command's tool call on its terminal (see the module); None when
    its output is an image (the caller shows it as content)."""
    output = tool_calls.command_output(result, structured, is_error=is_error)
    if output is None or not isinstance(tool_use_id, str) or not tool_use_id:
        return None
    code, interrupted = _exit_code(output, result, structured, is_error)
    if air:
        code = 1 if is_error or interrupted else (code if code is not None else 0)
    end: dict[str, Any] = {
        "_meta": {
            "claudeCode": {"toolName": name},
            "terminal_exit": {"terminal_id": tool_use_id, "exit_code": code, "signal": None},
        },
        "toolCallId": tool_use_id,
        "sessionUpdate": "tool_call_update",
        "status": "failed" if is_error else "completed",
    }
    shown = {"terminal_output": {"terminal_id": tool_use_id, "data": output}}
    return [{"_meta": shown, "toolCallId": tool_use_id, "sessionUpdate": "tool_call_update"}, end]


def terminal_closed(update: dict[str, Any], *, air: bool) -> dict[str, Any]:
    """``update`` (a command's tool call ended without its result) ending its terminal too."""
    tool_id = update.get("toolCallId")
    if isinstance(tool_id, str) and tool_id:
        ended = {"terminal_id": tool_id, "exit_code": 1 if air else None, "signal": None}
        update["_meta"] = {**(update.get("_meta") or {}), "terminal_exit": ended}
    return update
