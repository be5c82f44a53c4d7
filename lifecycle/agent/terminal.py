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
* A command that went to the background (its structured result names a ``backgroundTaskId``)
  keeps its terminal running (:class:`BackgroundTerminals`, the reference's
  ``withRunningTerminal`` and ``SessionBackgroundWork.taskEnded``): its result's end update has
  no ``terminal_exit``, and the terminal ends when its task ends (``task_notification``, a
  ``task_updated`` whose status is ``completed``, ``failed`` or ``killed``, or a
  ``background_tasks_changed`` level that no longer lists it) with a ``tool_call_update`` of
  nothing but ``_meta.terminal_exit`` (``exit_code`` ``null``: Claude Code reports none for a
  background command; the subagent's ``claudeCode.parentToolUseId`` when it ran in one). A task
  that ended before the command's result leaves the result's ``terminal_exit`` as it is. The
  output is not streamed meanwhile: the reference reads a background command's output file only
  for an ACP v2 session that lists its background work. Not for AIR (the reference's choice).
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

__all__ = [
    "COMMANDS", "MAX_BACKGROUND", "BackgroundTerminals", "terminal_closed", "terminal_content", "terminal_result",
]  # fmt: skip

#: The tools whose calls are commands (the reference's ``facts.command``).
COMMANDS: Final = frozenset({"Bash", "PowerShell"})
#: How many running background terminals (and ended tasks) a session remembers (a hostile stream
#: cannot grow them).
MAX_BACKGROUND: Final = 256
#: A ``task_updated`` patch status that ends the task.
_ENDED: Final = frozenset({"completed", "failed", "killed"})
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


class BackgroundTerminals:
    """The terminals of the commands that went to the background, running until their task ends
    (see the module)."""

    __slots__ = ("ended", "running")

    def __init__(self) -> None:
        self.running: dict[str, tuple[str, str | None]] = {}  # task id -> (tool use id, parent tool use)
        self.ended: dict[str, None] = {}  # tasks whose end came (insertion order, bounded)

    def keep_running(self, ended: list[dict[str, Any]], structured: Any, parent: str | None) -> None:
        """``ended`` (a command's result updates, :func:`terminal_result`) for a command that went to
        the background: its terminal stays running (no ``terminal_exit``) until its task ends."""
        task = structured.get("backgroundTaskId") if isinstance(structured, Mapping) else None
        if not isinstance(task, str) or not task or task in self.ended or not ended:
            return
        end = ended[-1]
        meta = dict(end.get("_meta") or {})
        exit_ = meta.pop("terminal_exit", None)
        if not isinstance(exit_, Mapping):
            return
        end["_meta"] = meta
        self.running[task] = (str(exit_.get("terminal_id")), parent)
        if len(self.running) > MAX_BACKGROUND:
            del self.running[next(iter(self.running))]

    def task_message(self, subtype: str | None, data: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The ``terminal_exit`` updates a task message (``task_notification``, ``task_updated``,
        ``background_tasks_changed``) brings: the terminals whose task ended."""
        if subtype == "background_tasks_changed":
            tasks = data.get("tasks")
            if not isinstance(tasks, list):
                return []
            listed = {t.get("task_id") for t in tasks if isinstance(t, Mapping)}
            return [u for task in list(self.running) if task not in listed for u in self._end(task)]
        task = data.get("task_id")
        if not isinstance(task, str):
            return []
        if subtype == "task_notification":
            return self._end(task)
        patch = data.get("patch")
        if subtype == "task_updated" and isinstance(patch, Mapping) and patch.get("status") in _ENDED:
            return self._end(task)
        return []

    def _end(self, task: str) -> list[dict[str, Any]]:
        self.ended.pop(task, None)
        self.ended[task] = None
        if len(self.ended) > MAX_BACKGROUND:
            del self.ended[next(iter(self.ended))]
        running = self.running.pop(task, None)
        if running is None:
            return []
        terminal_id, parent = running
        meta: dict[str, Any] = {"claudeCode": {"parentToolUseId": parent}} if parent else {}
        meta["terminal_exit"] = {"terminal_id": terminal_id, "exit_code": None, "signal": None}
        return [{"toolCallId": terminal_id, "sessionUpdate": "tool_call_update", "_meta": meta}]
