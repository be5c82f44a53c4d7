"""Claude Code tool uses and results as ACP ``session/update`` dicts (wire keys), as the reference
adapter ``@agentclientprotocol/claude-agent-acp`` 0.101.0 renders them for a plain client (no
terminal, AIR or v2 capabilities): its ``dist/tool-calls/`` reporters, function by function.

Rules
-----
* ``Write``: "Write <path>" (relative to ``cwd``), ``edit``, located at the file, a creation diff
  (``oldText: null``); ``Edit``: "Edit <path>", ``edit``, the ``old_string`` -> ``new_string`` diff.
  Their result: one diff per hunk of ``structured`` (the SDK's ``tool_use_result``, the object the
  reference reads from the PostToolUse hook), each located at its line.
* ``Bash`` / ``PowerShell``: the command as title, ``execute``, the description as content; result:
  the output (``structured`` stdout/stderr when present) in a ````console`` block.
* ``Read``: "Read <path> (1 - 10)", ``read``, located at the offset; result: the numbered lines.
* ``Grep``: the grep command line, ``search``; ``Glob``: "Find `path` `pattern`", ``search``;
  ``WebFetch``: "Fetch <url>", ``fetch``, the prompt; ``WebSearch``: 'Search "<query>"', ``fetch``.
* ``Task`` / ``Agent``: the description, ``think``, the prompt; result: the subagent's report.
* ``ExitPlanMode``: "Approve Plan", ``switch_mode``, the plan; result title "Exited Plan Mode".
* ``MultiEdit``: "Edit <path>", ``edit``, one diff per edit; its result like ``Edit``'s.
  ``NotebookEdit``: "Edit <notebook>", ``edit``, the new cell source as a diff. (The reference shows
  both as ``other`` with the tool name and no diff; docs/parity says why we differ.)
* ``mcp__*`` and unknown tools: the tool name, ``other``, the result text. ``TodoWrite`` is a
  ``plan`` (:func:`plan_update`), not a tool call.
* A failed call shows its error text in a fence; ``rawOutput`` is the raw result.

Theory of operation
-------------------
:func:`tool_call_start` announces a tool use (``pending``), :func:`tool_call_progress` says it runs,
:func:`tool_call_result` ends it (``completed`` / ``failed``); a client replaces only the fields an
update carries, so a result without ``content`` keeps the announced diff. Each is a pure function
and never raises: malformed input degrades to the generic rendering, an unexpected failure to a
bare update. Everything is bounded: a text at :data:`MAX_TEXT`, the content of an update at
:data:`MAX_SHOWN` characters (images included), ``rawInput`` / ``rawOutput`` at :data:`MAX_RAW`
(a string in them at :data:`MAX_RAW_STRING`), lists at :data:`MAX_ITEMS`, titles, paths and ids at
:data:`MAX_TITLE`. A cut text says how many characters were cut; an image over budget is a text.
"""

from __future__ import annotations

import json
import math
import posixpath
import re
from collections.abc import Callable, Mapping
from itertools import islice
from typing import Any, Final

__all__ = [
    "bounded_text", "command_output", "plan_update", "tool_call_progress", "tool_call_result", "tool_call_start",
    "tool_kind", "tool_response_markers", "tool_response_update",
]  # fmt: skip

#: Characters of one shown text: a file, a command's output, one side of a diff.
MAX_TEXT: Final = 100_000
#: Characters of all content of one update (image data included).
MAX_SHOWN: Final = 200_000
#: Characters of one string in ``rawInput`` / ``rawOutput`` (a file's text, a command's output) ...
MAX_RAW_STRING: Final = 10_000
#: ... and of all strings in one of them.
MAX_RAW: Final = 50_000
#: Content items, diff hunks, plan entries, list items and keys of a raw value.
MAX_ITEMS: Final = 100
#: Characters of a title, a path, a tool name, an id or a plan entry.
MAX_TITLE: Final = 1_000

_MISSING: Final = object()  # JavaScript's `undefined`
_PLAN_TOOLS: Final = frozenset({"TodoWrite", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet"})
_KINDS: Final[Mapping[str, str]] = {
    **dict.fromkeys(("Write", "Edit", "MultiEdit", "NotebookEdit"), "edit"),
    **dict.fromkeys(("Bash", "PowerShell"), "execute"),
    **dict.fromkeys(("Glob", "Grep"), "search"),
    **dict.fromkeys(("WebFetch", "WebSearch"), "fetch"),
    **dict.fromkeys(("Agent", "Task", "ReportFindings", *_PLAN_TOOLS), "think"),
    **dict.fromkeys(("ExitPlanMode", "EnterPlanMode"), "switch_mode"),
    "Read": "read",
}
_AGENT_ID_LINE: Final = re.compile(r"agentId: [A-Za-z0-9_-]+ \([^)]*\)")
_PARTIAL_NOTE: Final = re.compile(r"(?: {2})?NOTE: this agent stopped at its [0-9]+-turn limit before finishing\.")
_PARTIAL_LABEL: Final = "[Agent stopped at its turn limit — the output below is partial]"

Content = list[dict[str, Any]]


def tool_kind(name: str) -> str:
    """The ACP ``ToolKind`` of a Claude Code tool as the reference's reporters give it (``MultiEdit``
    and ``NotebookEdit``, ``other`` there, are ``edit`` here: docs/parity), ``other`` for ``mcp__*``
    and unknown tools."""
    return _KINDS.get(name, "other") if isinstance(name, str) else "other"


def tool_call_start(
    tool_use_id: str, name: str, tool_input: Mapping[str, Any], *, cwd: str | None = None
) -> dict[str, Any]:
    """The ``tool_call`` announcing a tool use: ``pending``, ``title``, ``kind``, ``rawInput``, ``content``
    (a diff, a description, a prompt, a plan) and, for a tool naming a file, ``locations``."""
    try:
        nm, inp = name if isinstance(name, str) else "", tool_input if isinstance(tool_input, Mapping) else {}
        title, locations, content = _facts(nm, inp, cwd if isinstance(cwd, str) else None, _Budget(MAX_SHOWN))
        update: dict[str, Any] = {"_meta": {"claudeCode": {"toolName": _cap(nm, MAX_TITLE)}}}
        update["toolCallId"] = _id(tool_use_id)
        if tool_input is not None:
            update["rawInput"] = _raw(tool_input, _Budget(MAX_RAW))
        update.update(sessionUpdate="tool_call", status="pending", title=_cap(title, MAX_TITLE), kind=tool_kind(nm))
        update["content"] = content
        if locations is not None:
            update["locations"] = [{**loc, "path": _cap(loc["path"], MAX_TITLE)} for loc in locations]
        return update
    except Exception:
        title = _id(name) or "Unknown Tool"
        return {"sessionUpdate": "tool_call", "toolCallId": _id(tool_use_id), "title": title, "status": "pending"}


def tool_call_progress(tool_use_id: str, status: str) -> dict[str, Any]:
    """A status-only ``tool_call_update`` (an unknown status becomes ``in_progress``)."""
    known = ("pending", "in_progress", "completed", "failed")
    status = status if isinstance(status, str) and status in known else "in_progress"
    return {"sessionUpdate": "tool_call_update", "toolCallId": _id(tool_use_id), "status": status}


def tool_call_result(
    tool_use_id: str,
    name: str,
    tool_input: Mapping[str, Any],
    result: Any,
    *,
    is_error: bool,
    structured: Mapping[str, Any] | None = None,
    cwd: str | None = None,
) -> dict[str, Any]:
    """The ``tool_call_update`` ending a tool call: ``completed`` / ``failed``, ``rawOutput`` and the result
    as the tool shows it. ``result`` is the ``tool_result`` block's content (a str, a list of text /
    image blocks, or None), ``structured`` the message's ``tool_use_result``; ``cwd`` is unused."""
    status = "failed" if is_error is True else "completed"
    update: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": _id(tool_use_id), "status": status}
    try:
        nm = name if isinstance(name, str) else ""
        update["_meta"] = {"claudeCode": {"toolName": _cap(nm, MAX_TITLE)}}
        if nm in _PLAN_TOOLS:
            return update  # shown as the plan: the status alone (acp-agent.js, case "tool_result")
        inp, data = tool_input if isinstance(tool_input, Mapping) else {}, structured
        fields = _result_fields(nm, inp, result, is_error is True, data if isinstance(data, Mapping) else None)
        if result is not None:
            update["rawOutput"] = _raw(_unfence_plan(nm, result), _Budget(MAX_RAW))
        update.update(fields)
    except Exception:
        update.pop("rawOutput", None)
    return update


def tool_response_update(tool_use_id: str, name: str, response: Mapping[str, Any]) -> dict[str, Any]:
    """The ``tool_call_update`` carrying Claude Code's structured result of a tool as the reference
    sends it to a plain client (``renderer.js`` ``hookResult``: ``_meta.claudeCode.toolResponse``
    and ``toolName``), bounded as ``rawOutput`` is (:data:`MAX_RAW`)."""
    response_meta = {"toolResponse": _raw(response, _Budget(MAX_RAW)), "toolName": _cap(name, MAX_TITLE)}
    return {"_meta": {"claudeCode": response_meta}, "toolCallId": _id(tool_use_id), "sessionUpdate": "tool_call_update"}


def tool_response_markers(tool_use_id: str, name: str, response: Mapping[str, Any]) -> dict[str, Any] | None:
    """For JetBrains AIR, the reference's ``hookResult`` for a client that keeps a tool call's
    ``_meta`` (``content.js`` ``toolResponseMarkers``): only ``status`` (a string) and ``isAsync``
    (a boolean) of the structured result, which AIR reads to tell an async subagent's launch; None
    when it has neither (no update)."""
    status, is_async = response.get("status"), response.get("isAsync")
    markers: dict[str, Any] = {}
    if isinstance(status, str):
        markers["status"] = _cap(status, MAX_TITLE)
    if isinstance(is_async, bool):
        markers["isAsync"] = is_async
    if not markers:
        return None
    meta = {"toolResponse": markers, "toolName": _cap(name, MAX_TITLE)}
    return {"_meta": {"claudeCode": meta}, "toolCallId": _id(tool_use_id), "sessionUpdate": "tool_call_update"}


def bounded_text(text: str) -> str:
    """``text`` as a shown text is bounded (at most :data:`MAX_TEXT` characters, saying how many
    were cut; a lone surrogate as U+FFFD)."""
    return _Budget(MAX_TEXT).text(text)


def command_output(result: Any, structured: Any, *, is_error: bool) -> str | None:
    """A ``Bash`` / ``PowerShell`` result's output as bash.js ``BashReporter.toolResult`` reads it
    (``structured`` stdout and stderr when present, else the result's text), at most
    :data:`MAX_TEXT` characters; None for image output, which is shown as content. Never raises."""
    try:
        budget = _Budget(MAX_SHOWN)
        data = structured if isinstance(structured, Mapping) else None
        output = _bash_output(result, data, is_error is True, budget)
        return budget.text(output) if isinstance(output, str) else None
    except Exception:
        return None


def plan_update(tool_input: Mapping[str, Any]) -> dict[str, Any] | None:
    """``TodoWrite``'s input as a ``plan`` update (``tools.js`` ``planEntries``): one entry per todo, its
    ``activeForm`` while ``in_progress``, priority ``medium``. None when ``todos`` is not a list; a
    todo without a text or a plan status is left out, and so is every todo past :data:`MAX_ITEMS`."""
    try:
        todos = tool_input.get("todos") if isinstance(tool_input, Mapping) else None
        if not isinstance(todos, list):
            return None
        entries = []
        for todo in todos[:MAX_ITEMS]:
            if not isinstance(todo, Mapping):
                continue
            status, text, active = todo.get("status"), todo.get("content"), todo.get("activeForm")
            if status == "in_progress" and isinstance(active, str) and active:
                text = active
            if isinstance(text, str) and status in ("pending", "in_progress", "completed"):
                entries.append({"content": _cap(text, MAX_TITLE), "status": status, "priority": "medium"})
        return {"sessionUpdate": "plan", "entries": entries}
    except Exception:
        return None


def _clean(text: str) -> str:
    # A lone surrogate cannot be encoded as UTF-8 JSON: it becomes U+FFFD.
    return text if text.isascii() else text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _cap(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many were cut."""
    return _clean(text) if len(text) <= limit else f"{_clean(text[:limit])}… [{len(text) - limit} characters cut]"


class _Budget:
    """The characters an update may still show; a text over the budget is cut and says so."""

    __slots__ = ("left",)

    def __init__(self, total: int) -> None:
        self.left = total

    def text(self, text: str, limit: int = MAX_TEXT) -> str:
        keep = max(0, min(limit, self.left))
        if len(text) <= keep:
            self.left -= len(text)
            return _clean(text)
        self.left -= keep
        return _clean(text[:keep]) + ("\n" if keep else "") + f"[… {len(text) - keep} characters cut]"


def _raw(value: Any, budget: _Budget, depth: int = 0) -> Any:
    """A JSON copy of ``value`` (the reference's ``JSON.parse(JSON.stringify(...))``), bounded."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**64 else None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return budget.text(value, MAX_RAW_STRING)
    if depth >= 12 or budget.left <= 0:
        return None
    if isinstance(value, Mapping):
        pairs = islice(value.items(), MAX_ITEMS)
        out = {_cap(k if isinstance(k, str) else _js(k), 200): _raw(v, budget, depth + 1) for k, v in pairs}
        return out | ({"…": f"{len(value) - MAX_ITEMS} more keys cut"} if len(value) > MAX_ITEMS else {})
    if isinstance(value, (list, tuple)):
        items = [_raw(item, budget, depth + 1) for item in value[:MAX_ITEMS]]
        return [*items, f"[… {len(value) - MAX_ITEMS} items cut]"] if len(value) > MAX_ITEMS else items
    return f"<{type(value).__name__}>"


def _dump(value: Any, indent: int | None = None) -> str:
    """``JSON.stringify`` of a bounded copy of ``value``."""
    separators = None if indent else (",", ":")
    return json.dumps(_raw(value, _Budget(MAX_RAW)), ensure_ascii=False, indent=indent, separators=separators)


def _id(value: object) -> str:
    return _cap(value, MAX_TITLE) if isinstance(value, str) else ""


def _truthy(value: object) -> bool:
    """JavaScript truthiness (``[]`` and ``{}`` are truthy, ``0`` and ``""`` are not)."""
    if isinstance(value, (int, float, str)) or value is None or value is _MISSING:
        return value is not _MISSING and bool(value) and value == value
    return True


def _js(value: object) -> str:
    """JavaScript's ``String(value)``, as a template literal interpolates it."""
    if isinstance(value, str):
        return value
    if value is None or value is _MISSING or isinstance(value, bool):
        return "null" if value is None else "undefined" if value is _MISSING else str(value).lower()
    if isinstance(value, int):
        return str(value) if abs(value) < 10**21 else "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, float):
        text = str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
        return {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}.get(text, text)
    if isinstance(value, (list, tuple)):
        return ",".join("" if item is None else _js(item) for item in value[:MAX_ITEMS])
    return "[object Object]"


def _str(inp: Mapping[str, Any], key: str) -> str | None:
    value = inp.get(key)
    return value if isinstance(value, str) else None


def _int(inp: Mapping[str, Any], key: str) -> int | None:
    value = inp.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10**15 else None


def _text(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def _diff(path: str, old: str | None, new: str) -> dict[str, Any]:
    return {"type": "diff", "path": _cap(path, MAX_TITLE), "oldText": old, "newText": new}


def _display_path(path: str, cwd: str | None) -> str:
    """content.js ``toDisplayPath``: relative to ``cwd`` when inside it (for absolute paths only)."""
    if not (cwd and cwd.startswith("/") and path.startswith("/")):
        return path
    root, file = (re.sub("^/+", "/", posixpath.normpath(p)) for p in (cwd, path))
    return "" if file == root else file[len(root) + 1 :] if file.startswith(root + "/") else path


def _md_escape(text: str) -> str:
    """content.js ``markdownEscape``: a fence longer than any fence inside."""
    fence = "```"
    for match in re.finditer(r"^```+", text, re.MULTILINE):
        fence = "`" * (len(match.group()) + 1) if len(match.group()) >= len(fence) else fence
    return fence + "\n" + text + ("" if text.endswith("\n") else "\n") + fence


def _size(size: int) -> str:
    # content.js formatByteSize; toFixed(1) rounds a tie up.
    scale, unit = (1024 * 1024, "MB") if size >= 1024 * 1024 else (1024, "KB")
    return f"{size} B" if size < 1024 else f"{math.floor(size * 10 / scale + 0.5) / 10:.1f} {unit}"


def _facts(name: str, inp: Mapping[str, Any], cwd: str | None, budget: _Budget) -> tuple[str, Content | None, Content]:
    """Title, locations (None: not sent) and content of a tool use (the ``toolUse`` of ``reporters/``)."""
    content: Content = []
    locations: Content | None = None

    def show(text: object) -> None:
        content.extend([_text(budget.text(text))] if isinstance(text, str) and text else [])

    if name in ("Write", "Edit"):  # file-edit.js WriteReporter (normalizeWriteInput), EditReporter
        path = _str(inp, "file_path") if name == "Edit" or isinstance(inp.get("file_path"), str) else _str(inp, "path")
        locations = [{"path": path}] if path else []
        if name == "Write":
            text = next((inp[k] for k in ("content", "file_text", "file_content") if inp.get(k) is not None), None)
            if path and isinstance(text, str):
                content.append(_diff(path, None, budget.text(text)))
            else:
                show(text)
            title = f"Write {shown}" if (shown := _display_path(path or "", cwd)) else "Preparing file…"
        else:
            old, new = _str(inp, "old_string"), _str(inp, "new_string")
            if path and (old or new):
                content.append(_diff(path, budget.text(old) if old else None, budget.text(new or "")))
            title = f"Edit {shown}" if (shown := _display_path(path or "", cwd)) else "Edit"
    elif name == "MultiEdit":  # not the reference's (docs/parity): an edit, one diff per edit
        path = _str(inp, "file_path")
        locations = [{"path": path}] if path else []
        edits = inp["edits"][:MAX_ITEMS] if isinstance(inp.get("edits"), list) else []
        for edit in (e for e in edits if isinstance(e, Mapping)):
            old, new = _str(edit, "old_string"), _str(edit, "new_string")
            if path and (old or new):
                content.append(_diff(path, budget.text(old) if old else None, budget.text(new or "")))
        title = f"Edit {shown}" if (shown := _display_path(path or "", cwd)) else "Edit"
    elif name == "NotebookEdit":  # not the reference's (docs/parity): an edit of one cell
        path = _str(inp, "notebook_path")
        locations = [{"path": path}] if path else []
        source = _str(inp, "new_source")
        if path and source is not None and inp.get("edit_mode") != "delete":
            content.append(_diff(path, None, budget.text(source)))
        title = f"Edit {shown}" if (shown := _display_path(path or "", cwd)) else "Edit Notebook"
    elif name in ("Bash", "PowerShell"):  # bash.js BashReporter, shellDescription
        show(inp.get("description") if isinstance(inp.get("description"), str) else inp.get("command_description"))
        title = _str(inp, "command") or "Terminal"
    elif name == "Read":  # read.js ReadReporter
        path, offset, limit = _str(inp, "file_path"), _int(inp, "offset"), _int(inp, "limit")
        first = 1 if offset is None else offset
        span = f" (from line {offset})" if offset else ""
        span = f" ({first} - {first + limit - 1})" if limit and limit > 0 else span
        title = "Read " + (_display_path(path, cwd) if path else "File") + span
        locations = [{"path": path, "line": max(first, 1)}] if path else []
    elif name == "Grep":  # search.js GrepReporter
        title = _grep_title(inp)
    elif name == "Glob":  # search.js GlobReporter
        title = "Find" + "".join(f" `{_js(inp[k])}`" for k in ("path", "pattern") if _truthy(inp.get(k)))
        locations = [{"path": inp["path"]}] if _str(inp, "path") else []
    elif name == "WebFetch":  # web.js WebFetchReporter
        show(inp.get("prompt"))
        start = f" (from char {_js(inp['offset'])})" if _truthy(inp.get("offset")) else ""
        title = f"Fetch {_js(inp['url'])}{start}" if _truthy(inp.get("url")) else "Fetch"
    elif name == "WebSearch":  # web.js WebSearchReporter
        title = f'Search "{_js(inp["query"])}"' if _truthy(inp.get("query")) else "Web search"
    elif name in ("Agent", "Task"):  # agent.js AgentReporter
        effort = inp.get("effort")
        suffix = f" ({_js(effort)} effort)" if _truthy(effort) and inp.get("subagent_type") != "fork" else ""
        content += [_text(budget.text(inp["prompt"]))] if isinstance(inp.get("prompt"), str) else []
        title = (_js(inp["description"]) if _truthy(inp.get("description")) else "Task") + suffix
    elif name == "ExitPlanMode":  # interaction.js ExitPlanModeReporter
        show(inp.get("plan"))
        title = "Approve Plan"
    elif name in _PLAN_TOOLS:  # interaction.js PlanToolReporter (a tool call only in a permission request)
        title = _plan_tool_title(name, inp)
    elif name == "AskUserQuestion":  # interaction.js AskUserQuestionReporter
        questions: list[Any] = inp["questions"][:MAX_ITEMS] if isinstance(inp.get("questions"), list) else []
        asked = [q["question"] for q in questions if isinstance(q, Mapping) and isinstance(q.get("question"), str)]
        content += [_text(budget.text(question)) for question in asked]
        title = asked[0] if len(questions) == 1 and asked and asked[0] else "Asking for your input"
    elif name == "Skill":  # interaction.js SkillReporter
        title = f"Load skill: {_js(inp['skill'])}" if _truthy(inp.get("skill")) else "Load skill"
    elif name in ("SetGoal", "ProposeGoal"):  # not the reference's (docs/parity): CLI 2.1.337's SetGoal
        show(inp.get("condition"))  # the whole condition, as Claude Code's approval dialog shows it
        title = "Set goal"
    else:  # interaction.js GenericReporter: "Other" alone shows its input
        if name == "Other":
            show("```json\n" + _dump(dict(inp), indent=2) + "```")
        title = _cap(name, MAX_TITLE) or "Unknown Tool"
    return title, locations, content


def _grep_title(inp: Mapping[str, Any]) -> str:
    label = "grep" + "".join(f" {flag}" for flag in ("-i", "-n") if _truthy(inp.get(flag)))
    label += "".join(f" {flag} {_js(inp[flag])}" for flag in ("-A", "-B", "-C") if flag in inp)
    mode = inp.get("output_mode")
    if not isinstance(mode, str):
        mode = next((m for f, m in (("-l", "files_with_matches"), ("-c", "count")) if inp.get(f) in (True, "true")), "")
    label += {"files_with_matches": " -l", "count": " -c"}.get(mode, "")
    label += f" | head -{_js(inp['head_limit'])}" if "head_limit" in inp else ""
    label += f' --include="{_js(inp["glob"])}"' if _truthy(inp.get("glob")) else ""
    label += f" --type={_js(inp['type'])}" if _truthy(inp.get("type")) else ""
    label += " -P" if _truthy(inp.get("multiline")) else ""
    label += f' "{_js(inp["pattern"])}"' if _truthy(inp.get("pattern")) else ""
    path = _str(inp, "path") if isinstance(inp.get("path"), str) else _str(inp, "file_path")
    return label + (f" {path}" if path else "")


def _plan_tool_title(name: str, inp: Mapping[str, Any]) -> str:
    if name == "TodoWrite":
        todos = inp.get("todos")
        if not isinstance(todos, list):
            return "Update TODOs"
        texts = (todo.get("content") if isinstance(todo, Mapping) else None for todo in todos[:MAX_ITEMS])
        return "Update TODOs: " + ", ".join("" if text is None else _js(text) for text in texts)
    subject = f": {_js(inp['subject'])}" if _truthy(inp.get("subject")) else ""
    titles = {"TaskCreate": f"Create task{subject}", "TaskUpdate": f"Update task{subject}", "TaskList": "List tasks"}
    return titles.get(name, "Get task")


def _result_fields(name: str, inp: Mapping[str, Any], result: Any, is_error: bool, data: Any) -> dict[str, Any]:
    """The fields a result adds (renderer.js ``resultFacts``, ``fieldsOfResult``)."""
    budget = _Budget(MAX_SHOWN)
    if is_error and isinstance(result, (str, list)) and len(result) > 0:
        return _content(result, True, budget)  # no reporter renders a plain client's error text itself
    if name in ("Write", "Edit", "MultiEdit"):  # the result text only confirms; the change is the hook's
        return _diff_fields(data, budget) if data is not None and not is_error else {}
    if name in ("Bash", "PowerShell"):
        output = _bash_output(result, data, is_error, budget)
        if not isinstance(output, str):
            return output
        return {"content": [_text("```console\n" + budget.text(output.rstrip()) + "\n```")]} if output.strip() else {}
    if name == "Read":
        return _read_fields(inp, result, data, budget)
    if name == "WebSearch" and data is not None and isinstance(data.get("results"), list):
        lines: list[str] = []
        for entry in data["results"][:MAX_ITEMS]:
            hits = entry["content"] if isinstance(entry, Mapping) and isinstance(entry.get("content"), list) else []
            lines += [entry] if isinstance(entry, str) else []
            for hit in hits[:MAX_ITEMS]:
                if isinstance(hit, Mapping) and isinstance(hit.get("title"), str) and isinstance(hit.get("url"), str):
                    lines.append(f"{hit['title']} ({hit['url']})")
        if lines:
            return {"content": [_text(budget.text("\n".join(lines)))]}
    if name in ("Agent", "Task"):
        report = data.get("content") if data is not None and data.get("status") == "completed" else None
        if not (isinstance(report, list) and report):
            report = _agent_text(result, _strip_agent_trailer)
        return _content(_agent_text(report, _replace_partial_note, first_only=True), is_error, budget)
    if name in ("ExitPlanMode", "Skill"):
        return {"title": "Exited Plan Mode"} if name == "ExitPlanMode" else {}
    return _content(result, is_error, budget)


def _content(content: Any, is_error: bool, budget: _Budget) -> dict[str, Any]:
    """content.js ``toAcpContentUpdate``: the result blocks as content (fenced for an error)."""
    if isinstance(content, list) and content:
        items = [{"type": "content", "content": _block(block, is_error, budget)} for block in content[:MAX_ITEMS]]
        cut = [_text(f"[… {len(content) - MAX_ITEMS} more blocks cut]")] if len(content) > MAX_ITEMS else []
        return {"content": items + cut}
    if isinstance(content, Mapping) and "type" in content:
        return {"content": [{"type": "content", "content": _block(content, is_error, budget)}]}
    if isinstance(content, str) and content:
        return {"content": [_text(f"```\n{budget.text(content)}\n```" if is_error else budget.text(content))]}
    return {}


def _block(block: Any, is_error: bool, budget: _Budget) -> dict[str, Any]:
    """content.js ``toAcpContentBlock``: one result block as an ACP content block."""
    kind = block.get("type") if isinstance(block, Mapping) else None
    source = block.get("source") if isinstance(block, Mapping) else None
    source = source if isinstance(source, Mapping) else {}
    data, stype, url = source.get("data"), source.get("type"), _cap(_js(source.get("url", _MISSING)), MAX_TITLE)
    if kind == "text":
        text = budget.text(block["text"]) if isinstance(block.get("text"), str) else ""
    elif kind == "image" and stype == "base64" and isinstance(data, str) and isinstance(source.get("media_type"), str):
        if len(data) <= budget.left:
            budget.left -= len(data)
            return {"type": "image", "data": data, "mimeType": _cap(source["media_type"], 200)}
        text = f"[image: {_cap(source['media_type'], 200)}, {_size(len(data) * 3 // 4)}, too large to show]"
    elif kind == "image":
        text = f"[image: {url}]" if stype == "url" else "[image: file reference]"
    elif kind == "document":
        title = block.get("title")
        label = f' "{_cap(title, MAX_TITLE)}"' if isinstance(title, str) and title else ""
        if stype == "url":
            text = f"[document{label}: {url}]"
        elif stype in ("base64", "text") and isinstance(data, str):
            size = _size(len(data) * 3 // 4 if stype == "base64" else len(data))
            text = f"[document{label}: {_cap(_js(source.get('media_type', _MISSING)), 200)}, {size}]"
        else:
            text = f"[document{label}]"
    elif kind == "tool_reference":
        text = f"Tool: {_cap(_js(block.get('tool_name', _MISSING)), MAX_TITLE)}"
    elif kind == "web_search_result":
        text = _cap(f"{_js(block.get('title', _MISSING))} ({_js(block.get('url', _MISSING))})", MAX_TITLE)
    else:
        text = budget.text(_dump(block))
    return {"type": "text", "text": f"```\n{text}\n```" if is_error else text}


def _diff_fields(data: Mapping[str, Any], budget: _Budget) -> dict[str, Any]:
    """diff.js ``toolUpdateFromDiffToolResponse``: one diff per hunk of ``structuredPatch``."""
    path, hunks = data.get("filePath"), data.get("structuredPatch")
    if not isinstance(path, str) or not path or not isinstance(hunks, list):
        return {}
    path, content, locations = _cap(path, MAX_TITLE), [], []
    for hunk in (h if isinstance(h, Mapping) else {} for h in hunks[:MAX_ITEMS]):
        lines = hunk["lines"] if isinstance(hunk.get("lines"), list) else []
        lines = [line for line in lines if isinstance(line, str) and line != "\\ No newline at end of file"]
        old = "\n".join(line[1:] for line in lines if not line.startswith("+"))
        new = "\n".join(line[1:] for line in lines if not line.startswith("-"))
        if lines:
            start = hunk.get("newStart")
            line_known = isinstance(start, int) and not isinstance(start, bool)
            locations.append({"path": path, "line": start} if line_known else {"path": path})
            content.append(_diff(path, budget.text(old) if old else None, budget.text(new)))
    text, original = data.get("content"), data.get("originalFile")
    if not content and data.get("type") == "update" and isinstance(text, str):
        # A Write whose hunks are unknown (e.g. the old file too large to diff): no creation diff stays.
        locations.append({"path": path})
        note = _text(f"Updated `{path}` (previous content too large to diff)")
        content.append(_diff(path, budget.text(original), budget.text(text)) if isinstance(original, str) else note)
    return {"content": content, "locations": locations} if content else {}


def _bash_output(result: Any, data: Mapping[str, Any] | None, is_error: bool, budget: _Budget) -> str | dict[str, Any]:
    """bash.js ``BashReporter.toolResult``: the command's output (content fields for image output)."""
    data = data if data is not None and "backgroundTaskId" not in data and not _truthy(data.get("isImage")) else {}
    stdout, stderr, saved, size = map(data.get, ("stdout", "stderr", "persistedOutputPath", "persistedOutputSize"))
    if isinstance(stdout, str) and isinstance(stderr, str):
        parts = [stdout, stderr, "[Command was aborted before completion]" if _truthy(data.get("interrupted")) else ""]
        if isinstance(saved, str):
            sized = isinstance(size, (int, float)) and not isinstance(size, bool)
            parts.append(
                f"[Output truncated{f' ({_js(size)} bytes total)' if sized else ''}: full output saved to {saved}]"
            )
        return "\n".join(filter(None, parts))
    if isinstance(result, Mapping) and result.get("type") == "bash_code_execution_result":
        return "\n".join(p for p in (result.get("stdout"), result.get("stderr")) if isinstance(p, str) and p)
    if isinstance(result, list) and result:
        if not all(isinstance(block, Mapping) and isinstance(block.get("text"), str) for block in result):
            return _content(result, is_error, budget)  # image output is shown as content
        return "\n".join(block["text"] for block in result[:MAX_ITEMS])
    return result if isinstance(result, str) else ""


def _read_fields(inp: Mapping[str, Any], result: Any, data: Any, budget: _Budget) -> dict[str, Any]:
    """read.js ``ReadReporter.toolResult``: the numbered lines of the structured file, else the raw text."""
    file = data.get("file") if data is not None and data.get("type") == "text" else None
    text = file.get("content") if isinstance(file, Mapping) else None
    if isinstance(file, Mapping) and isinstance(text, str) and text:
        start = next((n for n in (_int(file, "startLine"), _int(inp, "offset")) if n is not None), 1)
        numbered = _numbered(text.removesuffix("\n"), start, min(MAX_TEXT, budget.left))
        if _truthy(file.get("truncatedByTokenCap")):
            shown, total = file.get("numLines"), file.get("totalLines")
            numbers = all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in (shown, total))
            numbered += "\n[File truncated" + (f": showing {_js(shown)} of {_js(total)} lines" if numbers else "") + "]"
        budget.left -= len(numbered)
        return {"content": [_text(_md_escape(_clean(numbered)))]}
    if isinstance(result, list) and result:
        return {
            "content": [
                _text(_md_escape(budget.text(block["text"] if isinstance(block.get("text"), str) else "")))
                if isinstance(block, Mapping) and block.get("type") == "text"
                else {"type": "content", "content": _block(block, False, budget)}
                for block in result[:MAX_ITEMS]
            ]
        }
    return {"content": [_text(_md_escape(budget.text(result)))]} if isinstance(result, str) and result else {}


def _numbered(text: str, start: int, limit: int) -> str:
    """``text`` with its line numbers (``N<tab>line``), cut at about ``limit`` characters."""
    parts: list[str] = []
    used, pos, number = 0, 0, start
    while True:
        end = text.find("\n", pos)
        end = len(text) if end == -1 else end
        prefix = f"{number}\t"
        room = limit - used - len(prefix)
        if end - pos > room:
            parts += [prefix + text[pos : pos + room]] if room > 0 else []
            return "\n".join(parts) + f"\n[… {len(text) - pos - max(room, 0)} characters cut]"
        parts.append(prefix + text[pos:end])
        used += len(prefix) + end - pos + 1
        if end == len(text):
            return "\n".join(parts)
        pos, number = end + 1, number + 1


def _unfence_plan(name: str, content: Any) -> Any:
    """exit-plan.js ``exitPlanModeRawOutput``: one outer code fence of ExitPlanMode's text removed."""
    if name != "ExitPlanMode" or not isinstance(content, str):
        return content
    text = content.lstrip()
    newline = text.find("\n")
    if not text.startswith("```") or newline < 0 or "\r" in text[3:newline].removesuffix("\r"):
        return content
    rest = text[newline + 1 :].rstrip()
    return rest[:-4].removesuffix("\r") if rest.endswith("\n```") else content


def _agent_text(content: Any, transform: Callable[[str], str], first_only: bool = False) -> Any:
    """``transform`` applied to a plain string, or to the text blocks of a block list (the first only)."""
    if not isinstance(content, list):
        return transform(content) if isinstance(content, str) else content
    return [
        {**block, "text": transform(block["text"])} if _is_text(block) and not (first_only and index) else block
        for index, block in enumerate(content)
    ]


def _is_text(block: object) -> bool:
    return isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str)


def _strip_agent_trailer(text: str) -> str:
    """agent.js ``stripAgentTrailer``: a final ``<usage>`` block and ``agentId: …`` line removed."""
    body = text.rstrip()
    start = body.rfind("<usage>", 0, len(body) - len("</usage>")) if body.endswith("</usage>") else -1
    if start != -1:
        text = body[: start - 1 if start > 0 and body[start - 1] == "\n" else start]
    body = text.rstrip()
    line_start = body.rfind("\n") + 1
    return body[: max(line_start - 1, 0)] if _AGENT_ID_LINE.fullmatch(body[line_start:]) else text


def _replace_partial_note(text: str) -> str:
    """agent.js ``replacePartialNoteInText``: the maxTurns note as a short label."""
    if not _PARTIAL_NOTE.match(text):
        return text
    end = text.find("\n\n")
    report = "" if end == -1 else text[end + 2 :].lstrip()
    return f"{_PARTIAL_LABEL}\n\n{report}" if report else _PARTIAL_LABEL
