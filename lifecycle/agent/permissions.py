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
  an answer that still arrives is not honoured. A question Claude Code withdraws itself (its
  ``control_cancel_request``, e.g. a ``PermissionRequest`` hook of the user's settings decided
  first) is withdrawn at the client the same way.
* A question that comes while no prompt's turn is open (a background subagent asking after its
  turn ended) is **late**: it is asked all the same, under the same rules, and open until it is
  answered or withdrawn (a ``session/cancel`` of the session or of its child, the session's close:
  :meth:`PermissionBroker.withdraw_late`, :meth:`PermissionBroker.withdraw`); the turn machine
  never sees it. Where each question is asked (a subagent's on its child session, with the child
  ``requires_action``) is :mod:`lifecycle.agent.question_routes`'s.
* The adapter never grants a permission itself: nothing is remembered here, and every
  ``can_use_tool`` call is asked. Claude Code calls it only for what its own permission engine
  does not allow; a rule the user approved reaches that engine and is decided there
  (:mod:`lifecycle.agent.always`).
* The options are the reference adapter's: ``allow-once`` ("Yes", ``allow_once``),
  ``allow-with-updates`` (``allow_always``, named after exactly what it allows, offered only when
  that can be named and no ``ask`` rule or safety check forced the question) and ``reject``
  ("No", ``reject_once``). "Always" gives Claude Code its own suggested updates (or the generated
  WebFetch host / own-tool rule) with the destination ``session``: never written to a settings
  file, never broader than Claude Code proposed.
* ``ExitPlanMode`` (Claude asks to leave plan mode with its plan) has the reference's options:
  "Yes, and use auto mode" (``exit-plan-auto``), "Yes, and bypass permissions" where Claude Code
  allows that mode, "Yes, manually approve edits" (``exit-plan-default``), "No, keep planning".
  A yes gives Claude Code the new mode (``setMode``, destination ``session``) and the editor a
  ``current_mode_update``; so does an "always" answer whose rules switch the mode.
* ``AskUserQuestion`` is a question to the user, not a permission: it is asked as a form
  elicitation (:mod:`lifecycle.agent.questions`), open and withdrawn as a permission question is.
* Reject gives Claude "User refused permission to run tool", which it can react to; a
  ``cancelled`` outcome cancels the turn (as ``session/cancel`` does) and interrupts Claude.
* The question carries the tool call (title, kind, locations, raw input and, for an edit, its
  diff). Its ``rawInput`` is exactly the input that would run, never cut or masked (an input
  too large to show whole, over :data:`MAX_QUESTION_INPUT`, is refused without asking); the
  transport sends the question verbatim. The tool call itself is announced first, so a client
  that expects to know the tool call it is asked about does.

Theory of operation
-------------------
:class:`PermissionBroker` is one session's. It keeps one record per question
(:class:`Question`), from Claude Code's request to the client's answer, and nothing else about
questions: Claude Code's raw ``can_use_tool`` request opens it (:meth:`PermissionBroker.saw_permission_request`,
the flags the SDK's context drops), the SDK's call of :meth:`PermissionBroker.can_use_tool` asks it,
the request that goes out to the client is noted on it (its JSON-RPC id:
:meth:`PermissionBroker.saw_request`), and the answer, or the withdrawal
(:meth:`PermissionBroker.withdraw`, called by the session with the questions the ledger reports
withdrawn: its turn left ``in_turn``), closes it. ``can_use_tool`` feeds
:class:`~lifecycle.events.PermissionAsked`, sends the request as its own task and waits for the
first of the two; then it feeds :class:`~lifecycle.events.PermissionAnswered`, drops the record and
returns the SDK's allow or deny.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

import structlog
from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny, PermissionUpdate, ToolPermissionContext

from ..events import PermissionAnswered, PermissionAsked
from . import questions, sdk
from .always import always_option, always_updates
from .question_routes import LATE_WITHDRAWN_MESSAGE, Route

if TYPE_CHECKING:
    from ..acp import SessionPublisher
    from .modes import SessionSettings
    from .question_routes import QuestionRoutes
    from .stream import StreamRenderer

__all__ = [
    "ALLOW_ALWAYS",
    "ALLOW_ONCE",
    "DENIED_MESSAGE",
    "REJECT",
    "UNREADABLE_MESSAGE",
    "WITHDRAWN_MESSAGE",
    "PermissionBroker",
    "Question",
    "forced_ask",
    "permission_options",
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
#: The largest tool input a question shows (JSON characters); a larger one is refused unasked,
#: since a question must show all of what would run.
MAX_QUESTION_INPUT: Final = 1_000_000
#: Questions Claude Code requested and the SDK has not asked yet (their raw flags kept); past it
#: the oldest is let go (asked later, it counts as forced: no "always").
MAX_PENDING_FLAGS: Final = 256
PLAN_REJECTED_MESSAGE: Final = "User chose to keep planning"
#: The options that leave plan mode, and the mode each switches to.
EXIT_PLAN_MODES: Final = {
    "exit-plan-auto": "auto",
    "exit-plan-bypass": "bypassPermissions",
    "exit-plan-default": "default",
}


@dataclass(slots=True)
class Question:
    """One permission question, from Claude Code's request to the client's answer (see the
    module): the broker's one record of it."""

    tool_use_id: str
    #: Claude Code's raw request forbade a persistent option (:func:`forced_ask`); a question
    #: whose request the transport did not see counts as forced.
    forced_ask: bool = True
    #: The client's answer while it is awaited (``session/request_permission`` or
    #: ``elicitation/create``); None before it is sent and once it is answered or withdrawn.
    asked: asyncio.Future[Any] | None = None
    #: The JSON-RPC id of that request on the wire (a withdrawal cancels it by this id).
    request_id: object = None
    #: Where it is asked (:mod:`lifecycle.agent.question_routes`); None: the parent session,
    #: the turn's question.
    route: Route | None = None
    #: A late question (its route's ``late``) is open until answered or withdrawn here.
    late_open: bool = False

    @property
    def late(self) -> bool:
        return self.route is not None and self.route.late


class _Connection(Protocol):
    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any: ...


def forced_ask(request: Mapping[str, Any]) -> bool:
    """Whether a raw ``can_use_tool`` control request forbids a persistent option: a user's
    ``ask`` rule matched (``matched_ask_rule``) or Claude Code says so
    (``suppress_always_allow_rule``). The SDK's ``ToolPermissionContext`` drops both fields."""
    return request.get("matched_ask_rule") is not None or request.get("suppress_always_allow_rule") is True


def permission_options(
    tool_name: str, tool_input: Mapping[str, Any], *, always: str | None = None, bypass_allowed: bool = False
) -> list[dict[str, str]]:
    """The options of a question: allow once, allow always (named ``always``, when given), reject
    (ACP ``PermissionOption``); leaving plan mode has its own."""
    if tool_name == "ExitPlanMode":
        options = [{"optionId": "exit-plan-auto", "name": "Yes, and use auto mode", "kind": "allow_always"}]
        if bypass_allowed:
            options.append(
                {"optionId": "exit-plan-bypass", "name": "Yes, and bypass permissions", "kind": "allow_always"}
            )
        options.append({"optionId": "exit-plan-default", "name": "Yes, manually approve edits", "kind": "allow_once"})
        options.append({"optionId": REJECT, "name": "No, keep planning", "kind": "reject_once"})
        return options
    options = [{"optionId": ALLOW_ONCE, "name": "Yes", "kind": "allow_once"}]
    if always is not None:
        options.append({"optionId": ALLOW_ALWAYS, "name": always, "kind": "allow_always"})
    options.append({"optionId": REJECT, "name": "No", "kind": "reject_once"})
    return options


class PermissionBroker:
    """One session's permission questions (see the module)."""

    def __init__(
        self,
        publisher: SessionPublisher,
        renderer: StreamRenderer,
        settings: SessionSettings,
        conn: _Connection | None,
        *,
        cwd: str,
        on_cancelled: Callable[[], Awaitable[None]],
        elicitation_form: bool = False,
        routes: QuestionRoutes | None = None,
    ) -> None:
        self._publisher = publisher
        self._renderer = renderer
        self._settings = settings
        self._conn = conn
        self._cwd = cwd
        self._on_cancelled = on_cancelled  # a ``cancelled`` answer cancels the turn (ACP)
        self._questions: dict[str, Question] = {}  # tool use id -> its question (oldest first)
        self._tasks: set[asyncio.Future[None]] = set()  # cancels a ``cancelled`` answer started
        self._form = elicitation_form  # the client shows form elicitations (questions.py)
        self._routes = routes  # where each question is asked (question_routes.py); None: here, the turn's

    @property
    def _id(self) -> str:
        return self._publisher.session_id

    def _open(self, question: Question) -> bool:
        if question.late:
            return question.late_open
        return self._publisher.ledger.question_open(question.tool_use_id)

    def _sid(self, question: Question) -> str:
        """The session the question is asked on (a child's, or this one)."""
        return question.route.session_id if question.route is not None else self._id

    async def _show(self, updates: list[dict[str, Any]], session_id: str | None = None) -> None:
        if updates and session_id is not None and session_id != self._id:
            await self._publisher.emit(updates, session_id=session_id)  # a child's session
        elif updates:
            await self._publisher.show(updates)

    async def _mode_changed(self, mode: str) -> None:
        """Claude Code switched its own mode (a plan was accepted, an "always" set one): tell the
        editor."""
        if mode == self._settings.mode:
            return
        self._settings.mode = mode
        await self._show(
            [
                {"sessionUpdate": "current_mode_update", "currentModeId": mode},
                {"sessionUpdate": "config_option_update", "configOptions": self._settings.config_options()},
            ]
        )

    @property
    def open_requests(self) -> int:
        """Requests sent to the client and not answered or withdrawn yet."""
        return sum(q.asked is not None for q in self._questions.values())

    def saw_permission_request(self, request: Mapping[str, Any]) -> None:
        """Claude Code's raw ``can_use_tool`` request (the transport reports it before the SDK
        calls :meth:`can_use_tool`): opens the question's record with the flags the SDK's context
        drops."""
        tool_use_id = request.get("tool_use_id")
        if not isinstance(tool_use_id, str) or not tool_use_id:
            return
        question = self._questions.get(tool_use_id)
        if question is not None and question.asked is not None:
            return  # the same id while its question is asked: the ledger refuses the second ask
        if question is None and len(self._questions) >= MAX_PENDING_FLAGS:
            oldest = next((t for t, q in self._questions.items() if q.asked is None), None)
            if oldest is not None:
                del self._questions[oldest]
        self._questions[tool_use_id] = Question(tool_use_id, forced_ask=forced_ask(request))

    def saw_request(self, request_id: object, tool_use_id: object) -> None:
        """A ``session/request_permission`` or ``elicitation/create`` went out with
        ``request_id`` (the connection's observer reports it): noted on its question, so a
        withdrawal can cancel it on the wire."""
        question = self._questions.get(tool_use_id) if isinstance(tool_use_id, str) else None
        if question is not None and question.asked is not None:
            question.request_id = request_id

    async def can_use_tool(
        self, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        """The SDK's ``can_use_tool``: ask the client (see the module's rules)."""
        result = await self._decide(tool_name, tool_input, context)
        if isinstance(result, PermissionResultDeny) and isinstance(context.tool_use_id, str):
            self._renderer.mark_refused(context.tool_use_id)
        return result

    async def _decide(
        self, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        sid = self._id
        tool_input = tool_input if isinstance(tool_input, dict) else {}
        tool_id = context.tool_use_id if isinstance(context.tool_use_id, str) and context.tool_use_id else None
        if tool_id is None:
            log.warning("permission.no_tool_use_id", session_id=sid)
            return PermissionResultDeny(message=WITHDRAWN_MESSAGE)
        route = self._routes.route(context.agent_id) if self._routes is not None else None
        question = self._questions.get(tool_id)
        if route is not None and route.late:  # no turn owns it (question_routes.py)
            if question is not None and (question.asked is not None or question.late_open):
                log.warning("permission.refused", session_id=sid, tool_use_id=tool_id, error_type="asked_twice")
                return PermissionResultDeny(message=WITHDRAWN_MESSAGE)
            log.info("permission.late", session_id=sid, tool_use_id=tool_id, child=route.child is not None)
        elif not await self._turn_asks(tool_id):
            return PermissionResultDeny(message=WITHDRAWN_MESSAGE)
        if question is None or question.asked is not None:  # a request the transport did not see
            question = self._questions[tool_id] = Question(tool_id)
        question.route = route
        question.late_open = route is not None and route.late
        try:
            return await self._decide_asked(question, tool_name, tool_input, context)
        finally:
            if self._questions.get(tool_id) is question:
                del self._questions[tool_id]

    async def _turn_asks(self, tool_id: str) -> bool:
        """The turn machine opens the question (:class:`PermissionAsked`); False when it refuses."""
        try:
            await self._publisher.feed(PermissionAsked(tool_use_id=tool_id))
        except Exception as exc:  # e.g. the same id asked twice: the machine refuses it
            log.warning("permission.refused", session_id=self._id, tool_use_id=tool_id, error_type=type(exc).__name__)
            return False
        return True

    async def _decide_asked(
        self, question: Question, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        sid, tool_id = self._id, question.tool_use_id
        if not self._open(question):
            log.info("permission.not_asked", session_id=sid, tool_use_id=tool_id)
            return PermissionResultDeny(message=WITHDRAWN_MESSAGE, interrupt=True)
        if tool_name == "AskUserQuestion":  # a question to the user, not a permission (questions.py)
            return await self._question(question, tool_input)
        forced = question.forced_ask  # unknown flags count as forced: no "always"
        updates = always_updates(tool_name, tool_input, context.suggestions, forced_ask=forced)
        always = always_option(tool_name, tool_input, updates, cwd=self._cwd, display_name=context.display_name)
        log.info(
            "permission.ask", session_id=sid, tool_use_id=tool_id, forced_ask=forced, always=always is not None
        )
        try:
            option = await self._ask(question, tool_name, tool_input, always)
            still_open = self._open(question)
        finally:
            await self._answered(question)
        if not still_open:
            log.info("permission.withdrawn", session_id=sid, tool_use_id=tool_id)
            return _withdrawn(question)
        log.info("permission.answered", session_id=sid, tool_use_id=tool_id, option=option)
        if option == ALLOW_ONCE:
            await self._running(question)
            return PermissionResultAllow(updated_input=tool_input)
        if option in EXIT_PLAN_MODES and tool_name == "ExitPlanMode":
            mode = EXIT_PLAN_MODES[option]
            await self._running(question)
            await self._mode_changed(mode)
            update = PermissionUpdate(type="setMode", mode=mode, destination="session")  # type: ignore[arg-type]
            return PermissionResultAllow(updated_input=tool_input, updated_permissions=[update])
        if option == ALLOW_ALWAYS and always is not None and updates:
            await self._running(question)
            for update in updates:
                if update.type == "setMode" and isinstance(update.mode, str):
                    await self._mode_changed(update.mode)
            return PermissionResultAllow(updated_input=tool_input, updated_permissions=list(updates))
        if option == "cancelled" and question.late:  # no turn to cancel: the user's refusal
            return PermissionResultDeny(message=DENIED_MESSAGE)
        if option == "cancelled":
            # The client cancelled the question: the turn is cancelled (ACP: the client sends
            # ``cancelled`` for a prompt turn it cancels).
            task = asyncio.ensure_future(self._on_cancelled())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return PermissionResultDeny(message=WITHDRAWN_MESSAGE, interrupt=True)
        if option == REJECT:
            return PermissionResultDeny(
                message=PLAN_REJECTED_MESSAGE if tool_name == "ExitPlanMode" else DENIED_MESSAGE
            )
        return PermissionResultDeny(message=UNREADABLE_MESSAGE)

    async def _question(
        self, question: Question, tool_input: dict[str, Any]
    ) -> PermissionResultAllow | PermissionResultDeny:
        """An ``AskUserQuestion`` use, asked as a form elicitation (:mod:`lifecycle.agent.questions`)
        while its turn holds it open."""
        tool_id = question.tool_use_id
        announce = self._renderer.ensure_tool_call(tool_id, "AskUserQuestion", tool_input)
        if announce is not None:
            await self._show([announce], self._sid(question))
        send = self._elicit if self._conn is not None and self._form else None
        try:
            await self._waiting(question, True)
            answer = await questions.ask(send, self._sid(question), question, tool_input)
            still_open = self._open(question)
        finally:
            await self._waiting(question, False)
            await self._answered(question)
        log.info("question.answered", session_id=self._id, tool_use_id=tool_id, answered=isinstance(answer, dict))
        if not still_open:
            return _withdrawn(question)
        if isinstance(answer, str):
            return PermissionResultDeny(message=answer)
        await self._running(question)
        return PermissionResultAllow(updated_input=answer)

    async def _elicit(self, params: dict[str, Any]) -> Any:
        return await sdk.send_raw_request(self._conn, "elicitation/create", params)  # sent verbatim

    async def _answered(self, question: Question) -> None:
        """The question ended: the turn machine is told (a late question is not its own)."""
        question.late_open = False
        if not question.late:
            with contextlib.suppress(Exception):
                await self._publisher.feed(PermissionAnswered(tool_use_id=question.tool_use_id))

    async def _waiting(self, question: Question, opened: bool) -> None:
        """A child's question opened or ended: its ``requires_action`` / ``running``
        (:mod:`lifecycle.agent.question_routes`), on this session."""
        routes, route = self._routes, question.route
        if routes is None or route is None or route.child is None:
            return
        with contextlib.suppress(Exception):  # a state update never decides the question
            await self._show(routes.opened(route) if opened else routes.closed(route))

    async def _running(self, question: Question) -> None:
        update = self._renderer.mark_running(question.tool_use_id)
        if update is not None:
            await self._show([update], self._sid(question))

    async def _ask(
        self, question: Question, tool_name: str, tool_input: dict[str, Any], always: str | None
    ) -> str | None:
        """The option the client selected, ``"cancelled"``, or None (no usable answer)."""
        sid, tool_id = self._sid(question), question.tool_use_id
        announce = self._renderer.ensure_tool_call(tool_id, tool_name, tool_input)
        if announce is not None:
            await self._show([announce], sid)
        if self._conn is None or not self._open(question):
            return None
        from acp.schema import PermissionOption, ToolCallUpdate

        fields = self._renderer.announcement(tool_id, tool_name, tool_input)  # a command's terminal too
        fields.pop("sessionUpdate", None)
        fields.pop("status", None)
        exact = _exact_input(tool_input)
        if exact is None:  # never ask with part of what would run
            log.warning("permission.input_too_large", session_id=sid, tool_use_id=tool_id)
            return None
        fields["rawInput"] = exact
        try:
            tool_call = ToolCallUpdate.model_validate(fields)
            bypass = self._settings.allow_bypass
            offered = permission_options(tool_name, tool_input, always=always, bypass_allowed=bypass)
            options = [PermissionOption.model_validate(o) for o in offered]
        except Exception as exc:  # a rendering the schema refuses: never ask with half a question
            log.error("permission.unrenderable", session_id=sid, error_type=type(exc).__name__)
            return None
        await self._waiting(question, True)
        request = asyncio.ensure_future(self._conn.request_permission(sid, tool_call, options))
        question.asked = request
        try:
            response = await request
        except asyncio.CancelledError:
            if request.cancelled() and question.asked is None:
                return None  # withdrawn
            # Claude Code withdrew the question itself (its ``control_cancel_request``: a
            # ``PermissionRequest`` hook decided first): the client's request is withdrawn too.
            await self._cancel_on_wire(tool_id, question.request_id)
            raise
        except Exception as exc:  # an error reply, a client that is gone
            log.warning(
                "permission.request_failed", session_id=sid, tool_use_id=tool_id, error_type=type(exc).__name__
            )
            return None
        finally:
            question.asked, question.request_id = None, None
            if not request.done():
                request.cancel()
            await self._waiting(question, False)
        return _selected(response, tool_id, [o["optionId"] for o in offered])

    async def _cancel_on_wire(self, tool_use_id: str, request_id: Any) -> None:
        """``$/cancel_request`` for the question's request, if it went out (never raises)."""
        notify = sdk.raw_notifier(self._conn)
        log.info("permission.withdraw", session_id=self._id, tool_use_id=tool_use_id)
        if notify is not None and request_id is not None:
            with contextlib.suppress(Exception):
                await notify("$/cancel_request", {"requestId": request_id})

    async def withdraw(self, tool_use_ids: Iterable[str] | None = None) -> None:
        """Withdraw the questions of ``tool_use_ids`` (the ledger's
        :meth:`~lifecycle.ledger.SessionLedger.take_withdrawn`; None: every open one, the session
        is closing): each request is cancelled on the wire with ``$/cancel_request`` (a raw
        notification on the client connection) and stops being awaited."""
        if tool_use_ids is None:
            waiting = list(self._questions.values())
        else:
            waiting = [q for t in tool_use_ids if (q := self._questions.get(t)) is not None]
        await self._withdraw(waiting)

    async def withdraw_late(self, child: str | None = None) -> None:
        """Withdraw the late questions (:mod:`lifecycle.agent.question_routes`): every one (a
        ``session/cancel`` of this session), or those of the child session ``child`` (its
        cancel). Each is answered denied."""
        late = [q for q in self._questions.values() if q.late_open]
        await self._withdraw([q for q in late if child is None or (q.route is not None and q.route.child == child)])

    async def _withdraw(self, waiting: list[Question]) -> None:
        for question in waiting:
            question.late_open = False
            request, request_id = question.asked, question.request_id
            if request is None:
                continue  # not sent (or already answered): nothing to cancel
            question.asked, question.request_id = None, None
            request.cancel()
            await self._cancel_on_wire(question.tool_use_id, request_id)


def _withdrawn(question: Question) -> PermissionResultDeny:
    """The denial of a question withdrawn before an answer that counts: the turn's interrupts
    Claude (its turn is over); a late one's only refuses the tool (no turn is running for it)."""
    if question.late:
        return PermissionResultDeny(message=LATE_WITHDRAWN_MESSAGE)
    return PermissionResultDeny(message=WITHDRAWN_MESSAGE, interrupt=True)


def _exact_input(tool_input: dict[str, Any]) -> dict[str, Any] | None:
    """The tool's input exactly as Claude Code will run it (a JSON copy), or None when it is not
    JSON or larger than :data:`MAX_QUESTION_INPUT` characters."""
    try:
        text = json.dumps(tool_input, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    if len(text) > MAX_QUESTION_INPUT:
        return None
    copy: dict[str, Any] = json.loads(text)
    return copy


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
