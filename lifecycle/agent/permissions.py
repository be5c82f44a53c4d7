"""Permission questions: Claude Code's ``can_use_tool`` callback as an ACP
``session/request_permission`` to the client.

Rules
-----
* A tool is never allowed by default. Only an ``allow_once`` or ``allow_always`` option the client
  selected, while the question is still open, allows it; everything else denies it: ``reject``,
  an error reply, a malformed or unknown option, a client that is gone, a question withdrawn.
* The turn machine decides whether a question may be asked and whether its answer may still be
  honoured (:meth:`lifecycle.ledger.SessionLedger.question_open`): a question is asked only while
  the turn runs; once the turn leaves ``in_turn`` (a cancel, Claude Code dying, any settlement)
  every open question is withdrawn: the client's request is cancelled (``$/cancel_request``), and
  an answer that still arrives is not honoured.
* The options are the reference adapter's: ``allow-once`` ("Yes", ``allow_once``),
  ``allow-with-updates`` (``allow_always``, named after what it allows) and ``reject`` ("No",
  ``reject_once``). "Always" is remembered for the session: Claude Code is given its own
  suggested rules with the destination ``session`` (never written to a settings file), and the
  session keeps the rule itself, so the same tool and rule are not asked about again.
* ``ExitPlanMode`` (Claude asks to leave plan mode with its plan) has the reference's options:
  "Yes, and use auto mode" (``exit-plan-auto``), "Yes, and bypass permissions" where Claude Code
  allows that mode, "Yes, manually approve edits" (``exit-plan-default``), "No, keep planning".
  A yes gives Claude Code the new mode (``setMode``, destination ``session``) and the editor a
  ``current_mode_update``; so does an "always" answer whose rules switch the mode.
* Reject gives Claude "User refused permission to run tool", which it can react to; a
  ``cancelled`` outcome cancels the turn (as ``session/cancel`` does) and interrupts Claude.
* The question carries the tool call (title, kind, locations, raw input and, for an edit, its
  diff), and the tool call itself is announced first, so a client that expects to know the tool
  call it is asked about does.

Theory of operation
-------------------
:class:`PermissionBroker` is one session's. :meth:`PermissionBroker.can_use_tool` is given to the
SDK; it feeds :class:`~lifecycle.events.PermissionAsked`, sends the request as its own task and
waits for the first of: the answer, or the withdrawal (:meth:`PermissionBroker.withdraw`, called
by the session whenever its turn leaves ``in_turn``). Then it feeds
:class:`~lifecycle.events.PermissionAnswered` and returns the SDK's allow or deny.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any, Final, Protocol

import structlog
from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny, PermissionUpdate, ToolPermissionContext

from ..events import Event, PermissionAnswered, PermissionAsked

__all__ = [
    "ALLOW_ALWAYS",
    "ALLOW_ONCE",
    "DENIED_MESSAGE",
    "REJECT",
    "UNREADABLE_MESSAGE",
    "WITHDRAWN_MESSAGE",
    "PermissionBroker",
    "permission_options",
    "rule_key",
]

log = structlog.get_logger("lifecycle.agent.permissions")

ALLOW_ONCE: Final = "allow-once"
ALLOW_ALWAYS: Final = "allow-with-updates"
REJECT: Final = "reject"
#: What Claude is told when the user rejects (the reference adapter's words).
DENIED_MESSAGE: Final = "User refused permission to run tool"
#: What Claude is told when the question ended without an answer that counts.
WITHDRAWN_MESSAGE: Final = "Tool use aborted"
#: What Claude is told when the client's answer could not be read.
UNREADABLE_MESSAGE: Final = "The permission request failed; the tool was not run"
#: Rules remembered per session ("allow always").
MAX_RULES: Final = 256
PLAN_REJECTED_MESSAGE: Final = "User chose to keep planning"
#: The options that leave plan mode, and the mode each switches to.
EXIT_PLAN_MODES: Final = {
    "exit-plan-auto": "auto",
    "exit-plan-bypass": "bypassPermissions",
    "exit-plan-default": "default",
}

_EDIT_TOOLS: Final = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
_READ_TOOLS: Final = frozenset({"Read", "Glob", "Grep", "LS"})


class _Session(Protocol):
    """What the broker uses of its session (:class:`lifecycle.agent.session._Session`)."""

    id: str

    async def feed(self, event: Event, *, runtime: int | None = None) -> bool: ...

    def question_open(self, tool_use_id: str) -> bool: ...

    async def show(self, updates: list[dict[str, Any]]) -> None: ...

    def tool_call_for_question(self, tool_use_id: str, name: str, tool_input: Mapping[str, Any]) -> dict[str, Any]: ...

    def announce_tool_call(
        self, tool_use_id: str, name: str, tool_input: Mapping[str, Any]
    ) -> dict[str, Any] | None: ...

    def tool_running(self, tool_use_id: str) -> dict[str, Any] | None: ...

    def tool_refused(self, tool_use_id: str) -> None: ...

    async def cancel(self) -> None: ...

    @property
    def bypass_allowed(self) -> bool: ...

    async def mode_changed_by_claude(self, mode: str) -> None: ...


class _Connection(Protocol):
    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any: ...


def rule_key(tool_name: str, tool_input: Mapping[str, Any]) -> tuple[str, str]:
    """What an "allow always" answer covers: every edit, every read, one exact command, one web
    host, or one tool."""
    if tool_name in _EDIT_TOOLS:
        return ("edit", "")
    if tool_name in _READ_TOOLS:
        return ("read", "")
    if tool_name == "Bash":
        command = tool_input.get("command")
        return ("Bash", command if isinstance(command, str) else "")
    if tool_name == "WebFetch":
        from urllib.parse import urlsplit

        url = tool_input.get("url")
        host = ""
        if isinstance(url, str):
            with contextlib.suppress(ValueError):
                host = urlsplit(url).hostname or ""
        return ("WebFetch", host)
    return (tool_name, "")


def _always_name(tool_name: str, tool_input: Mapping[str, Any]) -> str:
    kind, detail = rule_key(tool_name, tool_input)
    if kind == "edit":
        return "Yes, allow all edits during this session"
    if kind == "read":
        return "Yes, during this session"
    if kind == "Bash" and detail:
        short = detail if len(detail) <= 60 else detail[:57] + "…"
        return f"Yes, and don't ask again for `{short}` during this session"
    if kind == "WebFetch" and detail:
        return f"Yes, and don't ask again for {detail}"
    return f"Yes, and don't ask again for {tool_name} during this session"


def permission_options(
    tool_name: str, tool_input: Mapping[str, Any], *, bypass_allowed: bool = False
) -> list[dict[str, str]]:
    """The options of a question: allow once, allow always, reject (ACP ``PermissionOption``);
    leaving plan mode has its own."""
    if tool_name == "ExitPlanMode":
        options = [{"optionId": "exit-plan-auto", "name": "Yes, and use auto mode", "kind": "allow_always"}]
        if bypass_allowed:
            options.append(
                {"optionId": "exit-plan-bypass", "name": "Yes, and bypass permissions", "kind": "allow_always"}
            )
        options.append({"optionId": "exit-plan-default", "name": "Yes, manually approve edits", "kind": "allow_once"})
        options.append({"optionId": REJECT, "name": "No, keep planning", "kind": "reject_once"})
        return options
    return [
        {"optionId": ALLOW_ONCE, "name": "Yes", "kind": "allow_once"},
        {"optionId": ALLOW_ALWAYS, "name": _always_name(tool_name, tool_input), "kind": "allow_always"},
        {"optionId": REJECT, "name": "No", "kind": "reject_once"},
    ]


def _session_rules(suggestions: list[PermissionUpdate], tool_name: str) -> list[PermissionUpdate]:
    """Claude Code's suggested updates, kept to this session; a plain rule for the tool when it
    suggested none."""
    kept: list[PermissionUpdate] = []
    for update in suggestions:
        if not isinstance(update, PermissionUpdate):
            continue
        if update.type == "addRules" and update.behavior == "allow":
            kept.append(PermissionUpdate(type="addRules", rules=update.rules, behavior="allow", destination="session"))
        elif update.type == "addDirectories" and update.directories:
            kept.append(PermissionUpdate(type="addDirectories", directories=update.directories, destination="session"))
        elif update.type == "setMode" and update.mode == "acceptEdits":
            kept.append(PermissionUpdate(type="setMode", mode="acceptEdits", destination="session"))
    return kept


class PermissionBroker:
    """One session's permission questions (see the module)."""

    def __init__(self, session: _Session, conn: _Connection | None) -> None:
        self._session = session
        self._conn = conn
        self._waiting: dict[str, asyncio.Future[Any]] = {}  # tool use id -> the client's answer
        self._request_ids: dict[str, object] = {}  # tool use id -> the JSON-RPC id of its request
        self._rules: set[tuple[str, str]] = set()
        self._tasks: set[asyncio.Future[None]] = set()  # cancels a ``cancelled`` answer started

    @property
    def open_requests(self) -> int:
        """Requests sent to the client and not answered or withdrawn yet."""
        return len(self._waiting)

    def remembered(self, tool_name: str, tool_input: Mapping[str, Any]) -> bool:
        return rule_key(tool_name, tool_input) in self._rules

    def saw_request(self, request_id: object, tool_use_id: object) -> None:
        """A ``session/request_permission`` went out with ``request_id`` (the connection's
        observer reports it): kept so a withdrawal can cancel it on the wire."""
        if isinstance(tool_use_id, str) and tool_use_id in self._waiting:
            self._request_ids[tool_use_id] = request_id

    async def can_use_tool(
        self, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        """The SDK's ``can_use_tool``: ask the client (see the module's rules)."""
        result = await self._decide(tool_name, tool_input, context)
        if isinstance(result, PermissionResultDeny) and isinstance(context.tool_use_id, str):
            self._session.tool_refused(context.tool_use_id)
        return result

    async def _decide(
        self, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        session = self._session
        tool_input = tool_input if isinstance(tool_input, dict) else {}
        tool_id = context.tool_use_id if isinstance(context.tool_use_id, str) and context.tool_use_id else None
        if tool_id is None:
            log.warning("permission.no_tool_use_id", session_id=session.id)
            return PermissionResultDeny(message=WITHDRAWN_MESSAGE)
        try:
            await session.feed(PermissionAsked(tool_use_id=tool_id))
        except Exception as exc:  # e.g. the same id asked twice: the machine refuses it
            log.warning("permission.refused", session_id=session.id, tool_use_id=tool_id, error_type=type(exc).__name__)
            return PermissionResultDeny(message=WITHDRAWN_MESSAGE)
        if not session.question_open(tool_id):
            log.info("permission.not_asked", session_id=session.id, tool_use_id=tool_id)
            return PermissionResultDeny(message=WITHDRAWN_MESSAGE, interrupt=True)
        try:
            if self.remembered(tool_name, tool_input):  # "always": not asked again (the turn still runs)
                log.info("permission.remembered", session_id=session.id, tool_use_id=tool_id)
                option: str | None = ALLOW_ONCE
            else:
                option = await self._ask(tool_id, tool_name, tool_input)
            still_open = session.question_open(tool_id)
        finally:
            with contextlib.suppress(Exception):
                await session.feed(PermissionAnswered(tool_use_id=tool_id))
        if not still_open:
            log.info("permission.withdrawn", session_id=session.id, tool_use_id=tool_id)
            return PermissionResultDeny(message=WITHDRAWN_MESSAGE, interrupt=True)
        log.info("permission.answered", session_id=session.id, tool_use_id=tool_id, option=option)
        if option == ALLOW_ONCE:
            await self._running(tool_id)
            return PermissionResultAllow(updated_input=tool_input)
        if option in EXIT_PLAN_MODES and tool_name == "ExitPlanMode":
            mode = EXIT_PLAN_MODES[option]
            await self._running(tool_id)
            await session.mode_changed_by_claude(mode)
            update = PermissionUpdate(type="setMode", mode=mode, destination="session")  # type: ignore[arg-type]
            return PermissionResultAllow(updated_input=tool_input, updated_permissions=[update])
        if option == ALLOW_ALWAYS:
            if len(self._rules) < MAX_RULES:
                self._rules.add(rule_key(tool_name, tool_input))
            await self._running(tool_id)
            updates = _session_rules(list(context.suggestions or ()), tool_name)
            for update in updates:
                if update.type == "setMode" and isinstance(update.mode, str):
                    await session.mode_changed_by_claude(update.mode)
            return PermissionResultAllow(updated_input=tool_input, updated_permissions=updates or None)
        if option == "cancelled":
            # The client cancelled the question: the turn is cancelled (ACP: the client sends
            # ``cancelled`` for a prompt turn it cancels).
            task = asyncio.ensure_future(session.cancel())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return PermissionResultDeny(message=WITHDRAWN_MESSAGE, interrupt=True)
        if option == REJECT:
            return PermissionResultDeny(
                message=PLAN_REJECTED_MESSAGE if tool_name == "ExitPlanMode" else DENIED_MESSAGE
            )
        return PermissionResultDeny(message=UNREADABLE_MESSAGE)

    async def _running(self, tool_id: str) -> None:
        update = self._session.tool_running(tool_id)
        if update is not None:
            await self._session.show([update])

    async def _ask(self, tool_id: str, tool_name: str, tool_input: dict[str, Any]) -> str | None:
        """The option the client selected, ``"cancelled"``, or None (no usable answer)."""
        session = self._session
        announce = session.announce_tool_call(tool_id, tool_name, tool_input)
        if announce is not None:
            await session.show([announce])
        if self._conn is None or not session.question_open(tool_id):
            return None
        from acp.schema import PermissionOption, ToolCallUpdate

        fields = session.tool_call_for_question(tool_id, tool_name, tool_input)
        try:
            tool_call = ToolCallUpdate.model_validate(fields)
            offered = permission_options(tool_name, tool_input, bypass_allowed=session.bypass_allowed)
            options = [PermissionOption.model_validate(o) for o in offered]
        except Exception as exc:  # a rendering the schema refuses: never ask with half a question
            log.error("permission.unrenderable", session_id=session.id, error_type=type(exc).__name__)
            return None
        request = asyncio.ensure_future(self._conn.request_permission(session.id, tool_call, options))
        self._waiting[tool_id] = request
        try:
            response = await request
        except asyncio.CancelledError:
            if request.cancelled() and tool_id not in self._waiting:
                return None  # withdrawn
            raise
        except Exception as exc:  # an error reply, a client that is gone
            log.warning(
                "permission.request_failed", session_id=session.id, tool_use_id=tool_id, error_type=type(exc).__name__
            )
            return None
        finally:
            self._waiting.pop(tool_id, None)
            self._request_ids.pop(tool_id, None)
            if not request.done():
                request.cancel()
        return _selected(response, tool_id, [o["optionId"] for o in offered])

    async def withdraw(self, notify: Any = None) -> None:
        """Withdraw every open question (the turn left ``in_turn``): each request is cancelled on
        the wire with ``$/cancel_request`` (``notify(method, params)``) and stops being awaited."""
        waiting = list(self._waiting.items())
        for tool_id, request in waiting:
            self._waiting.pop(tool_id, None)
            request_id = self._request_ids.pop(tool_id, None)
            request.cancel()
            log.info("permission.withdraw", session_id=self._session.id, tool_use_id=tool_id)
            if notify is not None and request_id is not None:
                with contextlib.suppress(Exception):
                    await notify("$/cancel_request", {"requestId": request_id})


def _selected(response: object, tool_id: str, offered: list[str]) -> str | None:
    """The selected option id, ``"cancelled"``, or None for anything unreadable or unknown."""
    outcome = getattr(response, "outcome", None)
    kind = getattr(outcome, "outcome", None)
    if kind == "cancelled":
        return "cancelled"
    if kind != "selected":
        log.warning("permission.malformed_answer", tool_use_id=tool_id)
        return None
    option = getattr(outcome, "option_id", None)
    if isinstance(option, str) and option in offered:
        return option
    log.warning("permission.unknown_option", tool_use_id=tool_id)
    return None
