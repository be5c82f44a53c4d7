"""What an "always" answer hands Claude Code, and how its option is named.

Rules
-----
* The adapter never grants a permission itself. Claude Code calls ``can_use_tool`` exactly for
  what its own permission engine does not allow (a path outside the working directories, its own
  settings files, an ``ask`` rule, a safety check); an "always" answer is therefore never
  remembered here. It is handed to Claude Code as permission updates, and Claude Code's engine
  decides every later call by its documented rules (working directories, protected files,
  ``ask`` and ``deny`` rules, modes).
* Those updates are Claude Code's own suggestions for this call (``permission_suggestions``),
  validated (known update types, rule and directory shapes, bounded sizes, no control
  characters) and kept to the session: every destination becomes ``session``, so no answer
  writes a settings file. Two tools have a generated rule instead, as in the reference adapter:
  WebFetch (``WebFetch(domain:<host>)``) and a tool without file, shell or web semantics (its own
  rule, e.g. ``WebSearch``), neither broader than the call asked about.
* No "always" option is offered when the question was forced by a user's ``ask`` rule
  (``matched_ask_rule``) or Claude Code says a persistent rule must not be offered
  (``suppress_always_allow_rule``), when the suggestions are missing or invalid, or when their
  effect cannot be named truthfully. The name says what is allowed and that it lasts for the
  session; the labels are the reference adapter's (``permissions/options/*.js``), with "during
  this session" where the reference's rule would have been written to the project's settings.

Theory of operation
-------------------
:func:`durable_updates` turns the suggestions into a validated, session-only tuple (or None);
:func:`always_option` names that tuple for the tool and its input (or None: no option).
:func:`generated_updates` builds the two generated rules; :func:`always_updates` is the funnel
that picks one of the two for a tool. The broker
(:mod:`lifecycle.agent.permissions`) snapshots the tuple when it asks, so the effect returned to
Claude Code is exactly the one the user saw named.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

from claude_agent_sdk import PermissionUpdate
from claude_agent_sdk.types import PermissionRuleValue

from .modes import MODE_IDS

__all__ = [
    "MAX_UPDATES",
    "always_option",
    "always_updates",
    "durable_updates",
    "generated_updates",
]

#: Bounds of a suggestion set (the reference adapter's ``permissions/normalization.js``).
MAX_UPDATES: Final = 100
_MAX_RULES: Final = 100
_MAX_DIRECTORIES: Final = 100
_MAX_TOOL_NAME: Final = 512
_MAX_RULE_CONTENT: Final = 10_000
_MAX_DIRECTORY: Final = 4_096
_BEHAVIORS: Final = frozenset({"allow", "deny", "ask"})
_RULE_TYPES: Final = frozenset({"addRules", "replaceRules", "removeRules"})
_DIRECTORY_TYPES: Final = frozenset({"addDirectories", "removeDirectories"})

#: The tools whose "always" is a file read or write scope, and the input key naming the path.
_FILE_TOOLS: Final = {
    "Read": ("read", "file_path"),
    "Glob": ("read", "path"),
    "Grep": ("read", "path"),
    "Edit": ("write", "file_path"),
    "MultiEdit": ("write", "file_path"),
    "Write": ("write", "file_path"),
    "NotebookEdit": ("write", "notebook_path"),
}
_SHELL_TOOLS: Final = frozenset({"Bash", "PowerShell"})
#: Tools with no persistent option at all (the reference's).
_NO_ALWAYS: Final = frozenset({"EnterPlanMode", "ExitPlanMode", "AskUserQuestion"})


def _plain(value: object, limit: int) -> bool:
    """A non-blank string within ``limit`` with no control character but tab, newline, CR."""
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        return False
    return not any(ord(c) <= 0x08 or ord(c) in (0x0B, 0x0C, 0x7F) or 0x0E <= ord(c) <= 0x1F for c in value)


def _valid(update: object) -> bool:
    if not isinstance(update, PermissionUpdate):
        return False
    if update.type in _RULE_TYPES:
        rules = update.rules
        return (
            isinstance(rules, list)
            and len(rules) <= _MAX_RULES
            and (update.type == "replaceRules" or len(rules) > 0)
            and all(
                isinstance(r, PermissionRuleValue)
                and _plain(r.tool_name, _MAX_TOOL_NAME)
                and (r.rule_content is None or _plain(r.rule_content, _MAX_RULE_CONTENT))
                for r in rules
            )
            and update.behavior in _BEHAVIORS
        )
    if update.type == "setMode":
        return update.mode in MODE_IDS
    if update.type in _DIRECTORY_TYPES:
        dirs = update.directories
        return (
            isinstance(dirs, list)
            and 0 < len(dirs) <= _MAX_DIRECTORIES
            and all(_plain(d, _MAX_DIRECTORY) for d in dirs)
        )
    return False


def _session_copy(update: PermissionUpdate) -> PermissionUpdate:
    """The update with the destination ``session`` (a snapshot: later mutation does not leak in)."""
    rules = [PermissionRuleValue(r.tool_name, r.rule_content) for r in update.rules] if update.rules else None
    return PermissionUpdate(
        type=update.type,
        rules=rules,
        behavior=update.behavior,
        mode=update.mode,
        directories=list(update.directories) if update.directories else None,
        destination="session",
    )


def durable_updates(suggestions: object, *, forced_ask: bool = False) -> tuple[PermissionUpdate, ...] | None:
    """Claude Code's suggestions as session-only updates, or None when there are none, any is
    invalid, there are too many, or an ``ask`` rule / safety check forced the question."""
    if forced_ask or not isinstance(suggestions, Sequence) or isinstance(suggestions, str):
        return None
    if not 0 < len(suggestions) <= MAX_UPDATES or not all(_valid(u) for u in suggestions):
        return None
    return tuple(_session_copy(u) for u in suggestions)


def _host(tool_input: Mapping[str, Any]) -> str | None:
    url = tool_input.get("url")
    if not isinstance(url, str):
        return None
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return host if host and _plain(host, 253) and " " not in host else None


def generated_updates(
    tool_name: str, tool_input: Mapping[str, Any], *, forced_ask: bool = False
) -> tuple[PermissionUpdate, ...] | None:
    """The rule an "always" gives a tool Claude Code suggests nothing for: WebFetch's host, or a
    tool of its own kind (never a file, shell or MCP tool: those take Claude Code's suggestions)."""
    if forced_ask or tool_name in _NO_ALWAYS or tool_name in _FILE_TOOLS or tool_name in _SHELL_TOOLS:
        return None
    if tool_name.startswith("mcp__") or not _plain(tool_name, _MAX_TOOL_NAME):
        return None
    if tool_name == "WebFetch":
        host = _host(tool_input)
        if host is None:
            return None
        rule = PermissionRuleValue("WebFetch", f"domain:{host}")
    else:
        rule = PermissionRuleValue(tool_name)
    return (PermissionUpdate(type="addRules", rules=[rule], behavior="allow", destination="session"),)


def _rules(updates: Iterable[PermissionUpdate]) -> list[PermissionRuleValue]:
    return [r for u in updates if u.type == "addRules" for r in (u.rules or [])]


def _inside(directory: str, candidate: str) -> bool:
    relative = os.path.relpath(os.path.abspath(candidate), os.path.abspath(directory))
    return relative == "." or not (relative == ".." or relative.startswith(".." + os.sep))


def _rule_path(content: str | None) -> str | None:
    if not content or not content.strip():
        return None
    value = content.strip()
    for suffix in ("/**", "\\**"):
        if value.endswith(suffix):
            value = value[: -len(suffix)]
    return value


def _file_label(updates: Sequence[PermissionUpdate], operation: str, path: str | None, cwd: str) -> str | None:
    """The reference's ``fileSessionLabel``: a read or write scope, or None."""
    rule_tool = "Read" if operation == "read" else "Edit"
    for u in updates:
        if u.type == "setMode":
            if not (operation == "write" and u.mode == "acceptEdits"):
                return None
        elif u.type == "addDirectories":
            if operation != "write":
                return None
        elif u.type != "addRules" or u.behavior != "allow":
            return None
        if u.type == "addRules" and not all(r.tool_name == rule_tool for r in u.rules or []):
            return None
    broad = any(r.tool_name == rule_tool and not r.rule_content for r in _rules(updates))
    accept_edits = any(u.type == "setMode" and u.mode == "acceptEdits" for u in updates)
    resolved = os.path.normpath(os.path.join(cwd, path)) if path else None
    home = os.path.expanduser("~")
    claude_path = (
        operation == "write"
        and resolved is not None
        and (_inside(os.path.join(cwd, ".claude"), resolved) or _inside(os.path.join(home, ".claude"), resolved))
    )
    if resolved is not None:
        directory = os.path.dirname(resolved)
        scopes = [d for u in updates if u.type == "addDirectories" for d in u.directories or []]
        scopes += [p for r in _rules(updates) if r.tool_name == rule_tool and (p := _rule_path(r.rule_content))]
        covered = any(
            (full := os.path.normpath(os.path.join(cwd, s))) == directory or _inside(full, resolved) for s in scopes
        )
        # acceptEdits reaches the working directory only (the reference names it for any path).
        edits_here = operation == "write" and not claude_path and accept_edits and _inside(cwd, resolved)
        if not (covered or broad or edits_here):
            return None
    elif not broad and not (operation == "write" and accept_edits):
        return None
    if claude_path and any(r.tool_name == "Edit" for r in _rules(updates)):
        return "Yes, and allow Claude to edit its own settings for this session"
    if resolved is None or _inside(cwd, resolved):
        return "Yes, during this session" if operation == "read" else "Yes, allow all edits during this session"
    name = os.path.basename(os.path.dirname(resolved)) or "this directory"
    if operation == "read":
        return f"Yes, allow reading from {name}{os.sep} during this session"
    return f"Yes, allow all edits in {name}{os.sep} during this session"


def _display_list(values: Sequence[str]) -> str:
    if len(", ".join(values)) > 50:
        return "similar"
    if len(values) == 1:
        return values[0]
    if len(values) == 2:
        return f"{values[0]} and {values[1]}"
    return f"{', '.join(values[:-1])}, and {values[-1]}"


def _display_paths(paths: Sequence[str]) -> str:
    names = list(dict.fromkeys(os.path.basename(os.path.normpath(p)) or p for p in paths))
    names = [n if n.endswith(os.sep) else n + os.sep for n in names]
    if len(names) <= 2:
        return _display_list(names)
    return f"{names[0]}, {names[1]} and {len(names) - 2} more"


def _command_prefix(rule: str) -> str:
    """A shell rule's command: ``npm test:*`` and ``npm test *`` (both Claude Code's prefix
    syntaxes) name ``npm test``; an exact command names itself."""
    for suffix in (":*", " *"):
        if rule.endswith(suffix) and len(rule) > len(suffix):
            return rule[: -len(suffix)].rstrip()
    return rule


def _shell_label(updates: Sequence[PermissionUpdate], tool_name: str) -> str | None:
    """The reference's ``shellSuggestionsLabel`` (Claude Code's ``generateShellSuggestionsLabel``)."""
    for u in updates:
        if u.type == "addDirectories":
            continue
        if not (u.type == "addRules" and u.behavior == "allow"):
            return None
        if not all(r.tool_name in (tool_name, "Read") and (r.rule_content or "").strip() for r in u.rules or []):
            return None
    rules = _rules(updates)
    reads = [p for r in rules if r.tool_name == "Read" and (p := _rule_path(r.rule_content))]
    content = [r.rule_content.strip() for r in rules if r.tool_name == tool_name and r.rule_content]
    commands = list(dict.fromkeys(_command_prefix(c) for c in content))
    directories = [d for u in updates if u.type == "addDirectories" for d in u.directories or []]
    paths = [*directories, *reads]
    if commands and not paths:
        if _display_list(commands) == "similar" and all(_command_prefix(c) == c for c in content):
            # Exact commands too long to name: say so rather than "similar" (which reads wider).
            return (
                f"Yes, and don't ask again for {'this exact command' if len(commands) == 1 else 'these exact commands'}"
                " during this session"
            )
        return f"Yes, and don't ask again for {_display_list(commands)} commands during this session"
    if paths and not commands:
        if reads and not directories:
            return f"Yes, allow reading from {_display_paths(reads)} during this session"
        return f"Yes, and always allow access to {_display_paths(paths)} during this session"
    if paths and commands:
        if len(paths) == 1 and len(commands) == 1:
            return (
                f"Yes, and allow access to {_display_paths(paths)} and {_display_list(commands)} commands"
                " during this session"
            )
        return (
            f"Yes, and allow {_display_paths(paths)} access and {_display_list(commands)} commands during this session"
        )
    return None


def always_option(
    tool_name: str,
    tool_input: Mapping[str, Any],
    updates: Sequence[PermissionUpdate] | None,
    *,
    cwd: str,
    display_name: str | None = None,
) -> str | None:
    """The name of the "always" option that hands Claude Code ``updates``, or None when it must
    not be offered (see the module's rules)."""
    if not updates or tool_name in _NO_ALWAYS:
        return None
    if tool_name in _FILE_TOOLS:
        operation, key = _FILE_TOOLS[tool_name]
        path = tool_input.get(key)
        path = path.strip() if isinstance(path, str) and path.strip() else None
        if path is None and tool_name in ("Glob", "Grep"):
            path = cwd
        return _file_label(updates, operation, path, cwd)
    if tool_name in _SHELL_TOOLS:
        return _shell_label(updates, tool_name)
    if tool_name == "WebFetch":
        host = _host(tool_input)
        expected = [PermissionRuleValue("WebFetch", f"domain:{host}")]
        if host is None or len(updates) != 1 or updates[0].type != "addRules" or updates[0].rules != expected:
            return None
        return f"Yes, and don't ask again for {host} during this session"
    label = display_name.strip() if isinstance(display_name, str) and _plain(display_name, 200) else tool_name
    own = all(
        u.type == "addRules"
        and u.behavior == "allow"
        and bool(u.rules)
        and all(r.tool_name == tool_name and not r.rule_content for r in u.rules or [])
        for u in updates
    )
    if not own:
        return None
    return f"Yes, and don't ask again for {label} commands during this session"


def always_updates(
    tool_name: str, tool_input: Mapping[str, Any], suggestions: object, *, forced_ask: bool
) -> tuple[PermissionUpdate, ...] | None:
    """What an "always" answer to this call would hand Claude Code (None: no such option): the
    generated rule for WebFetch and tools of their own kind, Claude Code's suggestions otherwise."""
    generated = generated_updates(tool_name, tool_input, forced_ask=forced_ask)
    if generated is not None or tool_name == "WebFetch":
        return generated
    return durable_updates(suggestions, forced_ask=forced_ask)
