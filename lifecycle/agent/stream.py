"""What a coding turn shows the client besides the ledger's records: streamed text and thinking,
tool calls and their results, the plan, usage.

Rules
-----
* Partial messages are on (``include_partial_messages``): a top-level ``text_delta`` becomes an
  ``agent_message_chunk`` and a ``thinking_delta`` an ``agent_thought_chunk`` the moment it
  arrives. A subagent's text and thinking (``parent_tool_use_id`` set) stay internal. Each chunk
  carries ``messageId``: Claude's id of its message (``message_start``'s ``message.id``, the
  consolidated message's ``message_id``), the same on every chunk of one message, as the
  reference adapter groups them (``messageIdForGrouping``).
* Nothing is shown twice: the consolidated ``assistant`` message that follows the deltas is
  compared with what was streamed. The part already shown is marked ``shown`` for the ledger
  (which still classifies it: a real answer recovers what waits for one, but it forwards nothing);
  a remainder that never streamed is sent here; a message that did not stream at all (Claude
  Code's own ``<synthetic>`` texts: errors, limits) goes to the ledger untouched, which decides
  whether a capable client sees the prose or a record.
* Every ``tool_use`` block becomes one ``tool_call`` (:mod:`lifecycle.agent.tool_calls`), once:
  from the consolidated message, or earlier when a permission question needs it
  (:meth:`StreamRenderer.ensure_tool_call`). ``TodoWrite`` becomes a ``plan`` update instead. A
  subagent's tool call (its message has ``parent_tool_use_id``) is shown like any other, and each
  of its updates names the Agent/Task tool call of that subagent
  (``_meta.claudeCode.parentToolUseId``, the reference's key). A command (``Bash``,
  ``PowerShell``) is a terminal card for a renderer built with ``terminal`` (the client declared
  ``_meta.terminal_output``: :mod:`lifecycle.agent.terminal`). For a renderer built with ``plan``
  (the client declared ACP plan operations), a top-level ``ExitPlanMode`` that succeeded is
  followed by the approved plan as a Markdown ``plan_update`` (the reference's ``planModeUpdate``:
  the plan of the structured result, else of the input, trimmed; id ``plan-mode``, for AIR
  ``plan-mode:<tool use id>``; none for a subagent's plan or one awaiting its team lead).
* A ``tool_result`` block (in a ``user`` message) ends its tool call: ``in_progress`` first if
  nothing said it was running (an allowed permission question says so when it is answered; a
  denied tool, or one Claude Code refused to run (``<tool_use_error>``: invalid input, a deny rule),
  never ran and gets none), then ``completed`` or ``failed`` with the rendered content.
* A tool call still open when the turn's result arrives, or when Claude Code is gone, is
  ``failed`` (:meth:`StreamRenderer.close_open_tools`): no tool call is left running. Except, at a
  result, a background subagent's (its Agent call already ended: Claude Code 2.1.332 runs an
  Agent in the background by default), which ends with its own result after the turn. So is one
  made by a message Claude Code replaced (:meth:`StreamRenderer.replaced`: CLI 2.1.337's
  ``supersedes``), as soon as the replacing message arrives.
* The turn's ``result`` gives one ``usage_update`` (tokens in context of the last top-level
  answer, the context window, the session's cost in USD) and the ``usage`` of the
  ``PromptResponse`` (:attr:`StreamRenderer.turn_usage`). Every ``usage_update`` names, as the
  reference does (``attachUsageModel``), the model of the turn's last top-level answer in
  ``_meta["_claude/model"]`` (when one answered: never ``<synthetic>``), and a result's with an
  ``origin`` (a turn Claude Code started itself) that origin in ``_meta["_claude/origin"]``
  (:meth:`StreamRenderer.usage_meta`).
* Before a tool result's update, a client other than AIR gets Claude Code's structured result
  (the message's ``tool_use_result``) as the reference sends its ``PostToolUse`` report:
  ``_meta.claudeCode.toolResponse`` on a ``tool_call_update`` of its own.

Theory of operation
-------------------
The renderer is sans-I/O: each method takes one SDK message (an object of ``claude_agent_sdk``,
read by attribute, never imported; a content block may also be its stored dict form, for
:mod:`lifecycle.agent.replay`) and returns the ``session/update`` objects to send, in order.
:mod:`lifecycle.agent.runtime` sends them through the session's publisher (one lock with the
ledger's sends, so order holds) and feeds the ledger what it must judge. Memory is bounded:
streamed text is kept only until its consolidated message arrives (and capped), and at most
:data:`MAX_TOOLS` tool uses are remembered (the oldest forgotten first); a result for a forgotten
tool use is rendered generically.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from ..intents import text_update
from . import tool_calls
from .terminal import COMMANDS, BackgroundTerminals, terminal_closed, terminal_content, terminal_result

__all__ = ["MAX_MESSAGE_ID", "MAX_STREAMED_CHARS", "MAX_TOOLS", "StreamRenderer", "TurnUsage"]

#: Tool uses remembered per session (for their results and to announce each once).
MAX_TOOLS: Final = 512
#: Streamed characters kept per block kind while waiting for the consolidated message.
MAX_STREAMED_CHARS: Final = 4 * 1024 * 1024
#: Characters of a ``messageId`` (Claude's ids are ~30).
MAX_MESSAGE_ID: Final = 256

_TEXT = "agent_message_chunk"
_THOUGHT = "agent_thought_chunk"


class TurnUsage(Mapping[str, int]):
    """Token counts of one prompt turn, summed over its results: a live mapping of the ACP
    ``Usage`` object's keys (:meth:`to_wire`), read when the turn is settled."""

    __slots__ = ("cached_read", "cached_write", "input", "output")

    def __getitem__(self, key: str) -> int:
        return self.to_wire()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_wire())

    def __len__(self) -> int:
        return len(self.to_wire())

    def __init__(self) -> None:
        self.input = 0
        self.output = 0
        self.cached_read = 0
        self.cached_write = 0

    def add(self, usage: object) -> None:
        if not isinstance(usage, Mapping):
            return
        self.input += _count(usage.get("input_tokens"))
        self.output += _count(usage.get("output_tokens"))
        self.cached_read += _count(usage.get("cache_read_input_tokens"))
        self.cached_write += _count(usage.get("cache_creation_input_tokens"))

    def to_wire(self) -> dict[str, int]:
        """The ACP ``Usage`` object (camelCase keys)."""
        total = self.input + self.output + self.cached_read + self.cached_write
        return {
            "totalTokens": total,
            "inputTokens": self.input,
            "outputTokens": self.output,
            "cachedReadTokens": self.cached_read,
            "cachedWriteTokens": self.cached_write,
        }


def _context(usage: Mapping[str, Any]) -> int:
    """Tokens in context after a message: its input (cached or not) and output."""
    keys = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    return sum(_count(usage.get(k)) for k in keys)


def _parent(message: object) -> str | None:
    parent = getattr(message, "parent_tool_use_id", None)
    return parent if isinstance(parent, str) and parent else None


def _stamped(update: dict[str, Any], tool: _Tool | None) -> dict[str, Any]:
    """``update`` naming the subagent's Agent/Task tool call it belongs to, as the reference
    does (``_meta.claudeCode.parentToolUseId``)."""
    if tool is not None and tool.parent is not None:
        meta = dict(update.get("_meta") or {})
        meta["claudeCode"] = {**(meta.get("claudeCode") or {}), "parentToolUseId": tool.parent}
        update["_meta"] = meta
    return update


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class _Tool:
    __slots__ = ("announced", "input", "name", "origin", "parent", "refused", "running")

    def __init__(self, name: str, tool_input: Mapping[str, Any], parent: str | None) -> None:
        self.name = name
        self.input = tool_input
        self.parent = parent  # the Agent/Task tool use of the subagent that made it
        self.origin: str | None = None  # the uuid of the assistant message that made it
        self.announced = False
        self.running = False
        self.refused = False  # its permission was denied: it never ran


class StreamRenderer:
    """One session's rendering of Claude Code's messages as ACP updates (see the module).

    Args:
        cwd: the session's working directory (titles show paths relative to it).
        terminal: the client draws terminal cards (``_meta.terminal_output``): a command's tool
            call is one (:mod:`lifecycle.agent.terminal`).
        air: the client is JetBrains AIR (a terminal's exit code, a plan's id as AIR reads them).
        plan: the client declared ACP plan operations (an approved plan as ``plan_update``).
    """

    def __init__(self, cwd: str, *, terminal: bool = False, air: bool = False, plan: bool = False) -> None:
        self.cwd = cwd
        self.terminal = terminal
        self.air = air
        self.background_terminals = BackgroundTerminals()  # commands' terminals kept running (terminal.py)
        self.plan = plan
        self._streamed = {_TEXT: "", _THOUGHT: ""}  # top-level deltas not yet consolidated
        self._tools: OrderedDict[str, _Tool] = OrderedDict()
        self._last_context: int | None = None  # tokens in context after the last top-level answer
        self._stream_usage: dict[str, Any] = {}  # the streamed top-level message's usage so far
        self._window: int | None = None
        self._refusal: str | None = None  # the streamed message's refusal explanation (stop_details)
        self._message_id: str | None = None  # Claude's id of the top-level message streaming
        self.model: str | None = None  # the model of the turn's last top-level answer (_claude/model)
        self.turn_usage = TurnUsage()

    # -------------------------------------------------------------- turns

    def start_turn(self) -> None:
        """A prompt starts: its usage is counted from zero; stale streamed text and the tool uses
        of an earlier (cancelled) turn are dropped, but for a background subagent's (their Agent
        call ended: the subagent still works)."""
        self.turn_usage = TurnUsage()
        self.model = None
        self._streamed = {_TEXT: "", _THOUGHT: ""}
        tools = self._tools
        self._tools = OrderedDict((k, t) for k, t in tools.items() if t.parent is not None and t.parent not in tools)

    # -------------------------------------------------------------- messages

    def stream_event(self, message: object) -> list[dict[str, Any]]:
        """A ``StreamEvent``: text and thinking deltas of the top-level stream as chunks, and the
        start of a tool use as its ``tool_call``."""
        event = getattr(message, "event", None)
        if not isinstance(event, Mapping):
            return []
        kind = event.get("type")
        top = getattr(message, "parent_tool_use_id", None) is None
        if kind == "message_start" and top:
            # A new message: what streamed before and never consolidated (a cancelled or cut
            # stream) must not be matched against this one.
            self._streamed = {_TEXT: "", _THOUGHT: ""}
            self._refusal = None
            started = event.get("message")
            self._message_id = _message_id(started.get("id") if isinstance(started, Mapping) else None)
            self._stream_usage = dict(started.get("usage") or {}) if isinstance(started, Mapping) else {}
            self._saw_model(started.get("model") if isinstance(started, Mapping) else None)
            if self._stream_usage:
                self._last_context = _context(self._stream_usage)
            return []
        if kind == "message_delta" and top:
            # The final counts of the streamed message (the consolidated message repeats
            # ``message_start``'s, whose output count is the first token's).
            usage = event.get("usage")
            if isinstance(usage, Mapping):
                self._stream_usage.update(usage)
                self._last_context = _context(self._stream_usage)
            # A refusal's explanation travels in ``stop_details``, which the SDK's consolidated
            # message leaves out: kept for it (:meth:`refusal`).
            delta = event.get("delta")
            details = delta.get("stop_details") if isinstance(delta, Mapping) else None
            if isinstance(delta, Mapping) and delta.get("stop_reason") == "refusal" and isinstance(details, Mapping):
                explanation = details.get("explanation")
                self._refusal = explanation[:4096] if isinstance(explanation, str) and explanation else None
            return []
        if kind == "content_block_start":
            # A tool use starts streaming: announced at once (its input is still empty), refined
            # when the consolidated message brings the whole input (as the reference does).
            block = event.get("content_block")
            if isinstance(block, Mapping) and block.get("type") == "tool_use":
                tool_id, name = block.get("id"), block.get("name")
                if isinstance(tool_id, str) and tool_id and isinstance(name, str) and name != "TodoWrite":
                    update = self.ensure_tool_call(tool_id, name, {}, parent=_parent(message))
                    return [] if update is None else [update]
            return []
        if kind != "content_block_delta" or getattr(message, "parent_tool_use_id", None) is not None:
            return []
        delta = event.get("delta")
        if not isinstance(delta, Mapping):
            return []
        if delta.get("type") == "text_delta":
            target, text = _TEXT, delta.get("text")
        elif delta.get("type") == "thinking_delta":
            target, text = _THOUGHT, delta.get("thinking")
        else:
            return []
        if not isinstance(text, str) or not text:
            return []
        kept = self._streamed[target]
        if len(kept) < MAX_STREAMED_CHARS:
            self._streamed[target] = kept + text
        return [_chunk(target, text, self._message_id)]

    def refusal(self) -> str | None:
        """The refusal explanation the streamed top-level message carried (once)."""
        explanation, self._refusal = self._refusal, None
        return explanation

    def assistant(self, message: object) -> tuple[list[dict[str, Any]], bool]:
        """An ``AssistantMessage``: the updates to send before the ledger sees it (a remainder
        that did not stream, tool calls, a plan) and whether its text was already shown."""
        top = getattr(message, "parent_tool_use_id", None) is None
        content = getattr(message, "content", None)
        blocks = content if isinstance(content, list) else []
        updates: list[dict[str, Any]] = []
        shown = False
        if top:
            message_id = _message_id(getattr(message, "message_id", None)) or self._message_id
            text = "".join(_get(b, "text") for b in blocks if _kind(b) == "text" and isinstance(_get(b, "text"), str))
            thinking = "".join(
                _get(b, "thinking") for b in blocks if _kind(b) == "thinking" and isinstance(_get(b, "thinking"), str)
            )
            if thinking:
                rest = self._consume(_THOUGHT, thinking)
                if rest:
                    updates.append(_chunk(_THOUGHT, rest, message_id))
            if text and self._streamed[_TEXT]:
                rest = self._consume(_TEXT, text)
                if rest is not None:
                    shown = True
                    if rest:
                        updates.append(_chunk(_TEXT, rest, message_id))
            usage = getattr(message, "usage", None)
            # A streamed message's counts come from its stream (``message_delta`` has the final
            # ones; the consolidated message repeats ``message_start``'s).
            synthetic = getattr(message, "model", None) == "<synthetic>"
            self._saw_model(getattr(message, "model", None))
            if isinstance(usage, Mapping) and not synthetic and not self._stream_usage:
                self._last_context = _context(usage)
        for block in blocks:
            if _kind(block) != "tool_use":
                continue
            tool_id, name, tool_input = _tool_use(block)
            if tool_id is None:
                continue
            update = self.ensure_tool_call(tool_id, name, tool_input, parent=_parent(message))
            if update is not None:
                updates.append(update)
            origin = getattr(message, "uuid", None)
            if tool_id in self._tools and isinstance(origin, str):
                self._tools[tool_id].origin = origin
        return updates, shown

    def subagent_text(self, message: object) -> list[dict[str, Any]]:
        """A subagent's ``AssistantMessage`` text as one ``agent_message_chunk`` with Claude's
        ``messageId``, naming its Agent/Task call like its tool calls: for a child session
        (:mod:`lifecycle.agent.subagents`); other clients never see a subagent's text."""
        parent = _parent(message)
        content = getattr(message, "content", None)
        blocks = content if isinstance(content, list) else []
        text = "".join(_get(b, "text") for b in blocks if _kind(b) == "text" and isinstance(_get(b, "text"), str))
        if parent is None or not text:
            return []
        update = _chunk(_TEXT, text, _message_id(getattr(message, "message_id", None)))
        update["_meta"] = {"claudeCode": {"parentToolUseId": parent}}
        return [update]

    def tool_input(self, tool_id: str) -> tuple[str, Mapping[str, Any]] | None:
        """The name and input of a tool use still remembered (None: unknown or ended)."""
        tool = self._tools.get(tool_id)
        return (tool.name, tool.input) if tool is not None else None

    def replaced(self, uuids: Iterable[str]) -> list[dict[str, Any]]:
        """Claude Code replaced the messages ``uuids`` (CLI 2.1.337's ``supersedes``): it dropped
        them from the conversation, so a tool call one of them made and that is still open will
        never get a result: it ends ``failed`` now, then is forgotten."""
        gone = set(uuids)
        return self._fail([tool_id for tool_id, tool in self._tools.items() if tool.origin in gone])

    def user(self, message: object) -> list[dict[str, Any]]:
        """A ``UserMessage``: every ``tool_result`` block ends its tool call."""
        content = getattr(message, "content", None)
        if not isinstance(content, list):
            return []
        structured = getattr(message, "tool_use_result", None)
        results = [b for b in content if _kind(b) == "tool_result"]
        updates: list[dict[str, Any]] = []
        for block in results:
            tool_id = _get(block, "tool_use_id")
            if not isinstance(tool_id, str) or not tool_id:
                continue
            tool = self._tools.pop(tool_id, None)
            if tool is not None and tool.name == "TodoWrite":
                continue  # shown as the plan
            name = tool.name if tool is not None else ""
            tool_input: Mapping[str, Any] = tool.input if tool is not None else {}
            is_error = _get(block, "is_error") is True
            never_ran = is_error and _tool_use_error(_get(block, "content"))
            if not never_ran and (tool is None or not (tool.running or tool.refused)):
                updates.append(_stamped(tool_calls.tool_call_progress(tool_id, "in_progress"), tool))
            data = structured if isinstance(structured, Mapping) and len(results) == 1 else None
            if data is not None and not self.air:  # the reference's PostToolUse report
                updates.append(_stamped(tool_calls.tool_response_update(tool_id, name, data), tool))
            elif data is not None and (markers := tool_calls.tool_response_markers(tool_id, name, data)):
                updates.append(_stamped(markers, tool))  # AIR's: the status and isAsync markers only
            ended = self._terminal_result(tool_id, name, _get(block, "content"), is_error, data)
            if ended is not None and not self.air:  # a command sent to the background runs on
                self.background_terminals.keep_running(ended, data, tool.parent if tool is not None else None)
            if ended is not None:
                updates.extend(_stamped(update, tool) for update in ended)
                continue
            result = tool_calls.tool_call_result(
                tool_id,
                name,
                tool_input,
                _get(block, "content"),
                is_error=is_error,
                structured=data,
                cwd=self.cwd,
            )
            updates.append(_stamped(result, tool))
            if name == "ExitPlanMode" and self.plan and not is_error and tool is not None and tool.parent is None:
                updates.extend(self._approved_plan(tool_id, tool_input, data))
        return updates

    def result(self, message: object) -> list[dict[str, Any]]:
        """A ``ResultMessage``: counts the turn's usage; one ``usage_update`` when known."""
        self.turn_usage.add(getattr(message, "usage", None))
        model_usage = getattr(message, "model_usage", None)
        if isinstance(model_usage, Mapping):
            windows = [_count(v.get("contextWindow")) for v in model_usage.values() if isinstance(v, Mapping)]
            if windows and max(windows) > 0:
                self._window = max(windows)
        if self._last_context is None or self._window is None:
            return []
        update: dict[str, Any] = {
            "sessionUpdate": "usage_update",
            "used": self._last_context,
            "size": self._window,
        }
        cost = getattr(message, "total_cost_usd", None)
        if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0:
            update["cost"] = {"amount": float(cost), "currency": "USD"}
        if meta := self.usage_meta(getattr(message, "origin", None)):
            update["_meta"] = meta
        return [update]

    def _saw_model(self, model: object) -> None:
        if isinstance(model, str) and model and model != "<synthetic>":
            self.model = model[:MAX_MESSAGE_ID]

    def usage_meta(self, origin: object = None) -> dict[str, Any]:
        """The ``_meta`` of a ``usage_update``: the model of the turn's last top-level answer
        (``_claude/model``) and a result's ``origin`` (``_claude/origin``: its plain values, at
        most 16), each when known (the reference's keys)."""
        meta: dict[str, Any] = {}
        if self.model is not None:
            meta["_claude/model"] = self.model
        if isinstance(origin, Mapping) and isinstance(origin.get("kind"), str):
            plain = (str, int, float, bool)
            fields = [(k, v) for k, v in origin.items() if isinstance(k, str) and isinstance(v, plain)][:16]
            meta["_claude/origin"] = {k: v[:MAX_MESSAGE_ID] if isinstance(v, str) else v for k, v in fields}
        return meta

    def compacted(self, message: object) -> list[dict[str, Any]]:
        """A ``system``/``compact_boundary``: the context now holds the ``post_tokens`` Claude
        Code kept (0 when it did not say; the next result corrects it), shown at once as a
        ``usage_update`` when the window is known (the reference's, so the meter does not keep the
        size from before the compaction)."""
        if getattr(message, "subtype", None) != "compact_boundary":
            return []
        data = getattr(message, "data", None)
        metadata = data.get("compact_metadata") if isinstance(data, Mapping) else None
        kept = metadata.get("post_tokens") if isinstance(metadata, Mapping) else None
        self._last_context = _count(kept)
        if self._window is None:
            return []
        update: dict[str, Any] = {"sessionUpdate": "usage_update", "used": self._last_context, "size": self._window}
        if meta := self.usage_meta():
            update["_meta"] = meta
        return [update]

    def context(self) -> tuple[int, int] | None:
        """The last known ``(used, size)``: tokens in context after the last top-level answer
        and the context window; None until both are known."""
        if self._last_context is None or self._window is None:
            return None
        return self._last_context, self._window

    # -------------------------------------------------------------- tool calls

    def ensure_tool_call(
        self, tool_id: str, name: str, tool_input: Mapping[str, Any], *, parent: str | None = None
    ) -> dict[str, Any] | None:
        """The update announcing tool use ``tool_id`` (a ``tool_call``, or a ``plan`` for
        ``TodoWrite``), or None when it was announced already. ``parent``: the Agent/Task tool
        use of the subagent that made it (every update of the tool call then names it)."""
        tool = self._tools.get(tool_id)
        if tool is None:
            tool = _Tool(name, tool_input, parent)
            self._tools[tool_id] = tool
            while len(self._tools) > MAX_TOOLS:
                self._tools.popitem(last=False)
        elif parent is not None and tool.parent is None:
            tool.parent = parent
        if tool_input and not tool.input and tool.announced:
            # Announced while its input streamed: the whole input refines it (once).
            tool.input = tool_input
            refined = self.announcement(tool_id, name, tool_input)
            refined["sessionUpdate"] = "tool_call_update"
            refined.pop("status", None)
            return _stamped(refined, tool)
        if tool_input and not tool.input:
            tool.input = tool_input
        if tool.announced:
            return None
        tool.announced = True
        if name == "TodoWrite":
            return tool_calls.plan_update(tool_input)
        update = self.announcement(tool_id, name, tool_input)
        if self._is_terminal(name):
            update["_meta"] = {**update.get("_meta", {}), "terminal_info": {"terminal_id": update["toolCallId"]}}
        return _stamped(update, tool)

    def announcement(self, tool_id: str, name: str, tool_input: Mapping[str, Any]) -> dict[str, Any]:
        """The ``tool_call`` announcing tool use ``tool_id`` (a command's shows its terminal, for
        a terminal client: :mod:`lifecycle.agent.terminal`); a permission question asks with its
        fields."""
        update = tool_calls.tool_call_start(tool_id, name, tool_input, cwd=self.cwd)
        return terminal_content(update) if self._is_terminal(name) else update

    def mark_running(self, tool_id: str) -> dict[str, Any] | None:
        """The ``in_progress`` update of an allowed tool call (None when already sent or unknown)."""
        tool = self._tools.get(tool_id)
        if tool is None or tool.running or tool.name == "TodoWrite":
            return None
        tool.running = True
        return _stamped(tool_calls.tool_call_progress(tool_id, "in_progress"), tool)

    def close_open_tools(self, *, background: bool = True) -> list[dict[str, Any]]:
        """The turn is over (its result arrived, or Claude Code is gone): every tool call announced
        and never ended is ``failed`` (a client would show it running forever), then forgotten.
        ``background=False`` (a result: Claude Code still runs) keeps the tool calls of a
        background subagent, whose Agent call already ended ("launched") while it goes on
        working past the turn; they end with their own results, or when Claude Code is gone."""
        closing = [
            tool_id
            for tool_id, tool in self._tools.items()
            if background or tool.parent is None or tool.parent in self._tools
        ]
        return self._fail(closing)

    def _fail(self, tool_ids: list[str]) -> list[dict[str, Any]]:
        """Tool calls that will never end by themselves: each announced one ``failed``, then all
        forgotten (a ``TodoWrite`` is a plan, never a tool call)."""
        updates = []
        for tool_id in tool_ids:
            tool = self._tools.pop(tool_id)
            if tool.announced and tool.name != "TodoWrite":
                failed = tool_calls.tool_call_progress(tool_id, "failed")
                if self._is_terminal(tool.name):
                    terminal_closed(failed, air=self.air)
                updates.append(_stamped(failed, tool))
        return updates

    def _approved_plan(
        self, tool_id: str, tool_input: Mapping[str, Any], result: Mapping[str, Any] | None
    ) -> list[dict[str, Any]]:
        """The ``plan_update`` of a plan Claude had approved (exit-plan.js ``approvedPlan``,
        ``planModeUpdate``); none for a subagent's plan, one awaiting its team lead, or an empty one."""
        result = result or {}
        if result.get("isAgent") is True or result.get("awaitingLeaderApproval") is True:
            return []
        plan = result.get("plan") if isinstance(result.get("plan"), str) else tool_input.get("plan")
        if not isinstance(plan, str) or not plan.strip():
            return []
        plan_id = f"plan-mode:{tool_id}" if self.air else "plan-mode"
        content = tool_calls.bounded_text(plan.strip())
        return [{"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": plan_id, "content": content}}]

    def _is_terminal(self, name: str) -> bool:
        """A tool call of ``name`` is a terminal card (a command, for a terminal client)."""
        return self.terminal and name in COMMANDS

    def _terminal_result(
        self, tool_id: str, name: str, content: Any, is_error: bool, structured: Mapping[str, Any] | None
    ) -> list[dict[str, Any]] | None:
        """The updates ending a command's terminal card (None: not one, or image output)."""
        if not self._is_terminal(name):
            return None
        return terminal_result(tool_id, name, content, is_error=is_error, structured=structured, air=self.air)

    def mark_refused(self, tool_id: str) -> None:
        """The tool's permission was denied: its result is not preceded by ``in_progress``."""
        tool = self._tools.get(tool_id)
        if tool is not None:
            tool.refused = True

    @property
    def tools_remembered(self) -> int:
        return len(self._tools)

    # -------------------------------------------------------------- internals

    def _consume(self, kind: str, consolidated: str) -> str | None:
        """The part of ``consolidated`` that did not stream (``""``: all of it did); None when
        what streamed does not match it (then nothing streamed is taken as its)."""
        streamed = self._streamed[kind]
        if streamed.startswith(consolidated):
            self._streamed[kind] = streamed[len(consolidated) :]
            return ""
        if consolidated.startswith(streamed):
            self._streamed[kind] = ""
            return consolidated[len(streamed) :]
        self._streamed[kind] = ""
        return None if kind == _TEXT else consolidated


def _tool_use_error(content: object) -> bool:
    """Whether a failed result is Claude Code's refusal to run the tool at all (its input was
    invalid, a rule denied it): ``<tool_use_error>…</tool_use_error>``."""
    if isinstance(content, list):
        content = next((b.get("text") for b in content if isinstance(b, Mapping) and b.get("type") == "text"), None)
    return isinstance(content, str) and content.lstrip().startswith("<tool_use_error>")


def _kind(block: object) -> str | None:
    """The content block's type, from the SDK's class name (``TextBlock`` -> ``text``)."""
    name = type(block).__name__
    if name == "TextBlock":
        return "text"
    if name == "ThinkingBlock":
        return "thinking"
    if name == "ToolUseBlock":
        return "tool_use"
    if name == "ToolResultBlock":
        return "tool_result"
    if isinstance(block, Mapping):
        kind = block.get("type")
        return kind if isinstance(kind, str) else None
    return None


def _message_id(value: object) -> str | None:
    return value[:MAX_MESSAGE_ID] if isinstance(value, str) and value else None


def _chunk(kind: str, text: str, message_id: str | None) -> dict[str, Any]:
    """A text or thought chunk, with the ``messageId`` of Claude's message when known."""
    update = text_update(kind, text)
    if message_id is not None:
        update["messageId"] = message_id
    return update


def _get(block: object, name: str) -> Any:
    """A content block's field: an SDK object's attribute, or a stored message's key (its dict
    form, as ``get_session_messages`` returns it: :mod:`lifecycle.agent.replay`)."""
    return block.get(name) if isinstance(block, Mapping) else getattr(block, name, None)


def _tool_use(block: object) -> tuple[str | None, str, Mapping[str, Any]]:
    tool_id, name, tool_input = _get(block, "id"), _get(block, "name"), _get(block, "input")
    return (
        tool_id if isinstance(tool_id, str) and tool_id else None,
        name if isinstance(name, str) else "",
        tool_input if isinstance(tool_input, Mapping) else {},
    )
