"""The ACP agent itself (:class:`ClaudeAcpAgent`) and :func:`run`, which serves it over a
transport. Imports the ACP SDK and the Claude SDK: :mod:`lifecycle.agent.startup` imports this
module in the background once ``initialize`` is answered."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import os
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ParamSpec, TypeVar, cast

import acp
import structlog
from acp import RequestError
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    CloseSessionResponse,
    DeleteSessionResponse,
    ForkSessionResponse,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    ResumeSessionResponse,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)
from claude_agent_sdk import ClaudeSDKClient

from .. import __version__
from ..acp import SessionPublisher, advertise, new_epoch
from ..answers import MachineAnswers
from ..events import AuthStatus, Informational
from ..history import load_history, unreadable_notice
from ..ledger import SessionLedger
from ..log import StructlogObserver
from ..negotiation import ClientState
from . import sdk
from .auth_status import AuthStatus as Identity
from .auth_status import credentials_available
from .child_replay import replay_children
from .config import (
    AGENT_CAPABILITIES,
    AUTH_METHOD_ID,
    CLAUDE_AI_LOGIN,
    GATEWAY_METHODS,
    INITIALIZE_META,
    TERMINAL_AUTH_IDS,
    AgentConfig,
    auth_methods,
    claude_cli,
)
from .imports import build_deferred
from .launch import EarlyCli, initial_settings
from .modes import MODE_CONFIG_ID, Offered, SettingsError
from .prompt import PromptRefused, prompt_content
from .providers import Routing
from .replay import replay
from .runtime import ClientFactory, Launcher
from .session import _Session, sdk_function
from .session_request import BadSessionRequest, SessionOptions, check_cwd, route_session_requests, session_options
from .startup import log_initialize
from .startup_failures import request_error
from .steering import STEER_METHOD, steer
from .stored import session_info, stored_messages, stored_mode
from .translate import local_zone
from .transport import StdioTransport

__all__ = ["AUTH_METHOD_ID", "ClaudeAcpAgent", "run"]

log = structlog.get_logger("lifecycle.agent")

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _guarded(method: Callable[_P, Awaitable[_R]]) -> Callable[_P, Awaitable[_R]]:
    """An ACP handler whose unexpected exception becomes a bare ``-32603`` (the SDK would send the
    exception's text to the client); the log gets its type only."""

    @functools.wraps(method)
    async def handler(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return await method(*args, **kwargs)
        except RequestError:
            raise
        except Exception as exc:
            log.error("agent.handler_failed", method=method.__name__, error_type=type(exc).__name__)
            raise RequestError.internal_error({"details": "The agent hit an internal error."}) from None

    return handler


# ------------------------------------------------------------------ the agent


class ClaudeAcpAgent:
    """The ACP agent (an ``acp.Agent``): one Claude Code runtime per ACP session.

    Args:
        config: how Claude Code is run.
        client_factory: builds the SDK client for a runtime (tests may pass their own).
        env: the environment used to judge ``authenticate`` (default: this process's).
        identity: read and push who is signed in (:mod:`lifecycle.agent.auth_status`; :func:`run`
            turns it on; the ``--hide-claude-auth`` guard reads it either way).
    """

    def __init__(
        self,
        config: AgentConfig | None = None,
        *,
        client_factory: ClientFactory | None = None,
        env: Mapping[str, str] | None = None,
        identity: bool = False,
    ) -> None:
        self.config = config or AgentConfig()
        self._env = env if env is not None else os.environ
        self._offered = Offered(lambda: claude_cli(self.config.cli_path), self._env)
        self._launcher = Launcher(self.config, client_factory or ClaudeSDKClient, self._offered)
        self._conn: Any = None
        self._client = ClientState()  # what the client's initialize declared (one value)
        self._raw_caps: object = None  # the raw ``clientCapabilities`` of the initialize being handled
        self._sessions: dict[str, _Session] = {}
        self._closed: dict[str, None] = {}  # ids of sessions closed by the client (bounded, oldest first)
        self._early: EarlyCli | None = None  # Claude Code launched before the agent existed
        self._early_open = False  # ... and no session has taken or refused it yet
        self._building: asyncio.Future[int] | None = None  # the models deferred at the start (imports)
        self._answers = MachineAnswers()  # one agent's sessions share their incident machine's answers
        self._detached: set[asyncio.Future[Any]] = set()  # prompts a steer started (steering.py)
        self._auth = Identity(self.config.cli_path, self._env, push=identity)  # who is signed in
        self._answered = False  # an initialize answered before the agent existed (startup.py)
        self._routing = Routing(self._env)  # the backend a client set (providers.py)
        self._routing.bind(self._launcher.route, lambda: list(self._sessions.values()))
        # Who is signed in, from a session's Claude Code (not under a client's route: it is the route's).
        self._offered.listener = lambda info: None if self._routing.route else self._auth.saw_account(info)

    def on_connect(self, conn: Any) -> None:
        self._conn = conn
        self._auth.connect(conn)
        if self._answered:
            self._auth.refresh()  # the identity after that initialize
        sdk.route_unrouted(conn, self)  # logout, session/delete
        self._routing.serve(conn)  # providers/list, set, disable
        route_session_requests(conn, self)  # their ``systemPrompt``, which the SDK's models drop
        sdk.observe_frames(conn, self._observe)  # the SDK's JSON-RPC connection (request ids)

    def _observe(self, event: Any) -> None:
        """Every raw frame: an outgoing question's id is noted (a withdrawal cancels it by it)."""
        message = getattr(event, "message", None)
        method = message.get("method") if isinstance(message, dict) else None
        if method not in ("session/request_permission", "elicitation/create"):
            return
        assert isinstance(message, dict)
        params = message.get("params")
        if not isinstance(params, dict):
            return
        call = params.get("toolCall") if method == "session/request_permission" else params
        tool_id = call.get("toolCallId") if isinstance(call, dict) else None
        one = self._sessions.get(str(params.get("sessionId")))  # else a child's (question_routes.py):
        for session in [one] if one is not None else list(self._sessions.values()):  # its parent's
            session.permissions.saw_request(message.get("id"), tool_id)

    def accept_initialize(self, state: ClientState) -> None:
        """Take what an ``initialize`` answered before the agent existed declared
        (:mod:`lifecycle.agent.startup`)."""
        self._client, self._answered = state, True

    def saw_client_capabilities(self, raw: object) -> None:
        """The raw ``clientCapabilities`` of an ``initialize`` request about to reach
        :meth:`initialize` (the transport calls this: the SDK's model drops unknown keys such as
        ``session.notices``)."""
        self._raw_caps = raw

    # -------------------------------------------------------------- session plumbing

    def accept_early(self, early: EarlyCli | None) -> None:
        """Take a Claude Code launched for the first ``session/new`` before the agent existed
        (:mod:`lifecycle.agent.startup`): the first session opened takes it or stops it."""
        self._early, self._early_open = early, early is not None

    def _take_early(self, cwd: str, mcp_servers: Any) -> EarlyCli | None:
        """The early Claude Code for the first session (a ``session/new`` in its directory without
        MCP servers: the one it was launched for); for any other first session it is stopped."""
        if not self._early_open or self._early is None:
            return None
        self._early_open = False
        if self._early.cwd == cwd and not mcp_servers:
            return self._early
        self._early.discard("another_session")
        return None

    async def _open(
        self,
        session_id: str,
        cwd: str,
        mcp_servers: Any,
        directories: tuple[str, ...] = (),
        early: EarlyCli | None = None,
        options: SessionOptions | None = None,
        resumed_mode: str | None = None,
    ) -> _Session:
        """A fresh session under ``session_id``, built whole: its ledger, its settings (with the
        client's additional directories: Claude Code's ``add_dirs``), what the client declared,
        its MCP servers, and the Claude Code launched for it early; one already open under it
        (load or resume of an open session) is closed first. ``resumed_mode``: the mode a stored
        session last ran in (:func:`lifecycle.agent.stored.stored_mode`), which it comes back in."""
        self._take_early("", None)  # a first session that did not take it: stopped
        if self._subscription_guard:  # the reference's: no session on a subscription either
            await self._auth.refuse_subscription(early)
        old = self._sessions.pop(session_id, None)
        if old is not None:
            await old.close()
        epoch = new_epoch()
        observer = StructlogObserver(epoch=epoch)
        client = self._client
        ledger = SessionLedger(
            session_id,
            negotiated=client.negotiated,
            notices=client.notices,
            epoch=epoch,
            observer=observer,
            answers=self._answers,
            zone=local_zone,  # a window's reset time in the agent machine's local time (issue 32)
        )
        settings = initial_settings(self.config, self._env, cwd)  # Claude Code's own settings' mode too
        if self.config.permission_mode == "bypassPermissions" and settings.mode != "bypassPermissions":
            log.warning("session.bypass_not_available", session_id=session_id)
        settings.learn(self._offered.info)  # what an earlier session's Claude Code offered
        if not settings.models:  # else what a Claude Code of this machine offered
            settings.models = self._offered.cache.read()  # one small file, read in place
        settings.add_dirs = directories
        settings.claude_options = dict(options.claude) if options is not None else {}
        if resumed_mode is not None and (resumed_mode != "bypassPermissions" or settings.allow_bypass):
            settings.mode = resumed_mode  # the reference's: a loaded session comes back in its mode
        publisher = SessionPublisher(self._conn, ledger)
        session = _Session(
            self._launcher, session_id, cwd, publisher, self._conn, settings,
            client=client, mcp_servers=mcp_servers, early_cli=early,
        )  # fmt: skip
        self._sessions[session_id] = session
        self._closed.pop(session_id, None)
        return session

    def _session(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            details = "session closed" if session_id in self._closed else "unknown session"
            raise RequestError.invalid_params({"sessionId": session_id[:200], "details": details})
        return session

    def _started(self, session: _Session) -> _Session:
        if self.config.start_early:
            session.start_early()
        return session

    def _cwd(self, cwd: str) -> str:
        return self.config.cwd or cwd

    def _request(self, cwd: object, system_prompt: object, meta: Mapping[str, Any]) -> tuple[str, SessionOptions]:
        """A session request's working directory (checked: absolute, an existing directory) and
        what it asks of Claude Code (:mod:`lifecycle.agent.session_request`), else ``-32602`` at
        once: nothing is read or started for it."""
        try:
            checked = check_cwd(self.config.cwd or cwd)
            return checked, session_options(system_prompt, meta)
        except BadSessionRequest as bad:  # the reference's words (``RequestError.invalidParams``)
            raise RequestError(-32602, f"Invalid params: {bad.message}", bad.data) from None

    # -------------------------------------------------------------- ACP methods

    @_guarded
    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        raw, self._raw_caps = self._raw_caps, None
        # The raw JSON when the transport saw it (the SDK's model drops keys it does not know),
        # else the SDK's model.
        client = self._client = ClientState.parse(raw if raw is not None else client_capabilities)
        log_initialize(client.negotiated, client_info, protocol_version)
        answer = InitializeResponse.model_validate(
            {
                "protocolVersion": acp.PROTOCOL_VERSION,
                "agentCapabilities": advertise(
                    AgentCapabilities.model_validate(AGENT_CAPABILITIES), client.negotiated
                ).model_dump(by_alias=True, exclude_none=True),
                "authMethods": auth_methods(client, hide_claude_auth=self.config.hide_claude_auth),
                "agentInfo": {"name": "lifecycle-claude-acp", "title": "Claude (lifecycle)", "version": __version__},
                "_meta": dict(INITIALIZE_META),
            }
        ).model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True)
        # The SDK 0.12.1's model has no ``sessionCapabilities.systemPrompt`` (unstable): set as JSON.
        answer["agentCapabilities"]["sessionCapabilities"] = copy.deepcopy(AGENT_CAPABILITIES["sessionCapabilities"])
        self._auth.refresh()  # pushed once read: after this answer
        return answer

    @property
    def _subscription_guard(self) -> bool:
        """``--hide-claude-auth`` judges the login, unless a client's route pays (the reference's)."""
        return self.config.hide_claude_auth and self._routing.route is None

    @_guarded
    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        if method_id in GATEWAY_METHODS:  # the reference's gateway logins: a route (providers.py)
            host = await self._routing.login(method_id, kwargs.get("gateway"))
            if host is not None:  # the gateway holds the credentials: it is who is signed in
                await self._auth.pin({"kind": "gateway", "label": "Custom model gateway", "detail": host})
            return AuthenticateResponse()
        hidden = self.config.hide_claude_auth and method_id == CLAUDE_AI_LOGIN  # --hide-claude-auth
        if method_id != AUTH_METHOD_ID and (method_id not in TERMINAL_AUTH_IDS or hidden):
            raise RequestError.invalid_params({"methodId": method_id[:80], "details": "unknown auth method"})
        ok = credentials_available(self._env)
        log.info("agent.authenticate", method_id=method_id, ok=ok)
        for session in list(self._sessions.values()):
            await session.feed(AuthStatus(ok=ok))
        if not ok:
            raise RequestError.auth_required({"details": "No Claude credentials found. Run `claude /login`."})
        await self._auth.reread()
        return AuthenticateResponse()

    @_guarded
    async def logout(self, **kwargs: Any) -> dict[str, Any]:
        """ACP ``logout``: Claude Code's own ``auth logout`` (it clears the stored login); a
        client's route (providers.py) ends with it, as the reference's."""
        if self._routing.route is not None:
            await self._routing.apply(None)
        await self._auth.logout()  # then who is signed in is read again
        return {}

    @_guarded
    async def new_session(
        self,
        cwd: str,
        additional_directories: Any = None,
        mcp_servers: Any = None,
        system_prompt: Any = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        dirs = _directories(additional_directories)  # checked first, as the reference does
        cwd, options = self._request(cwd, system_prompt, kwargs)
        early = self._take_early(cwd, mcp_servers)
        session_id = early.session_id if early else str(uuid.uuid4())
        session = await self._open(session_id, cwd, mcp_servers, dirs, early, options)
        # The answer waits for Claude Code's start (as the reference's waits for its initialize), so
        # a Claude Code that cannot start fails this request (:meth:`_until_started`); with no
        # model known yet (a first run of this Claude Code here) for its models too (clients check
        # ``--model`` against them). The session's publisher is held meanwhile, so what the start
        # shows (models, commands) follows the answer: the client knows the session by then.
        # Released as the handler returns, before anything can run: the SDK queues the answer first.
        async with session.publisher.hold():
            self._started(session)
            if not session.settings.models and self.config.start_early:
                await self._until_reported(session)
            await self._until_started(session)
            log.info("session.new", session_id=session.id, epoch=session.publisher.ledger.epoch)
            return NewSessionResponse(session_id=session.id, **_session_state(session))

    async def _until_started(self, session: _Session) -> None:
        """Wait (at most :data:`STARTUP_WAIT_S`) for the session's start in the background; when
        Claude Code reported that it could not start, the request fails with its reason and
        message (:func:`lifecycle.agent.startup_failures.request_error`) and the session is not
        kept. A start that takes longer fails the first prompt the same way."""
        starting = session.starting
        if starting is not None and not starting.done():
            # Until Claude Code answered the SDK's initialize, or its start ended (a start-up
            # failure): not until the start's end, which shows what Claude Code reported through
            # the publisher that new_session holds (waiting for it would wait out the timeout).
            connected = asyncio.ensure_future(session.connected.wait())
            try:
                waits: set[asyncio.Future[Any]] = {starting, connected}
                await asyncio.wait(waits, timeout=STARTUP_WAIT_S, return_when=asyncio.FIRST_COMPLETED)
            finally:
                connected.cancel()
        failure = session.start_failure()
        if failure is None:
            return
        if self._sessions.get(session.id) is session:
            del self._sessions[session.id]
        await session.close()
        log.info("session.start_failed", session_id=session.id, reason=(failure.startup_failure or "")[:64])
        raise request_error(failure)

    async def _until_reported(self, session: _Session) -> None:
        """Wait (at most :data:`MODELS_WAIT_S`) until a Claude Code reported its models, or the
        session's own start failed (its first prompt reports how)."""
        reported = asyncio.ensure_future(self._offered.reported.wait())
        waits: set[asyncio.Future[Any]] = {reported}
        if session.starting is not None:  # the session's start in the background
            waits.add(session.starting)
        try:
            await asyncio.wait(waits, timeout=MODELS_WAIT_S, return_when=asyncio.FIRST_COMPLETED)
        finally:
            reported.cancel()
        if not self._offered.reported.is_set():
            log.info("session.models_not_reported", session_id=session.id)

    @_guarded
    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: Any = None,
        additional_directories: Any = None,
        system_prompt: Any = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        dirs = _directories(additional_directories)  # checked first, as the reference does
        cwd, options = self._request(cwd, system_prompt, kwargs)
        stored, read = await stored_messages(session_id, cwd)
        if not stored:
            raise RequestError.invalid_params({"sessionId": session_id, "details": "no stored Claude session"})
        mode = await stored_mode(session_id, cwd)
        session = await self._open(session_id, cwd, mcp_servers, dirs, options=options, resumed_mode=mode)
        history = load_history(stored)
        log.info(
            "session.load",
            session_id=session_id,
            epoch=session.publisher.ledger.epoch,
            entries=len(history.entries),
            skipped_lines=len(read.skipped) if read else 0,
            repaired_lines=len(read.repaired) if read else 0,
        )
        # Replayed through the fresh ledger before the answer (spec: session/load), one stored
        # message at a time, with the thinking and tool calls it showed live (.replay).
        for step in replay(stored, cwd):
            await session.show(step.before)
            if step.history.entries:
                await session.feed(step.history)
            await session.show(step.after)
        await replay_children(session, stored, cwd)  # a client with child sessions (child_replay.py)
        notice = unreadable_notice(read) if read else None
        if notice is not None:  # what could not be read, after what could (a notice, not a failure)
            await session.feed(Informational(content=notice, level="warning"))
        self._started(session)
        await self._until_started(session)
        return LoadSessionResponse(**_session_state(session))

    @_guarded
    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: Any = None,
        mcp_servers: Any = None,
        system_prompt: Any = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        """Like ``session/load`` without the replay: the stored Claude session continues."""
        dirs = _directories(additional_directories)  # checked first, as the reference does
        cwd, options = self._request(cwd, system_prompt, kwargs)
        info = await asyncio.to_thread(sdk_function("get_session_info"), session_id, directory=cwd)
        if info is None:
            # The reference's answer (its SDK's ``RequestError.sessionNotFound``): -32002.
            raise RequestError(-32002, "Resource not found", {"sessionId": session_id[:200]})
        mode = await stored_mode(session_id, cwd)
        session = await self._open(session_id, cwd, mcp_servers, dirs, options=options, resumed_mode=mode)
        self._started(session)
        await self._until_started(session)
        log.info("session.resume", session_id=session_id, epoch=session.publisher.ledger.epoch)
        return ResumeSessionResponse(**_session_state(session))

    @_guarded
    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Stop the session's Claude Code and free its ledger; a later request on it is refused."""
        session = self._session(session_id)
        del self._sessions[session_id]
        self._closed[session_id] = None
        while len(self._closed) > _MAX_CLOSED:
            del self._closed[next(iter(self._closed))]
        await session.close()
        log.info("session.close", session_id=session_id)
        return CloseSessionResponse()

    @_guarded
    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """The Claude sessions stored for ``cwd`` (every project without one), newest first."""
        offset = 0
        if cursor is not None:
            if not (cursor.isascii() and cursor.isdigit()) or len(cursor) > 9:  # "٣" is a digit too
                raise RequestError.invalid_params({"cursor": cursor[:80], "details": "invalid cursor"})
            offset = int(cursor)
        if cwd is not None and not os.path.isabs(cwd):  # the reference's check (a filter: no folder needed)
            message = f"Invalid params: `cwd` must be an absolute path, but received: {cwd}"
            raise RequestError(-32602, message, {"cwd": cwd})
        directory = self._cwd(cwd) if cwd is not None else None
        found = await asyncio.to_thread(
            sdk_function("list_sessions"), directory=directory, limit=_LIST_PAGE + 1, offset=offset
        )
        page = [session_info(s, directory) for s in found[:_LIST_PAGE]]
        more = len(found) > _LIST_PAGE
        return ListSessionsResponse(sessions=page, next_cursor=str(offset + _LIST_PAGE) if more else None)

    @_guarded
    async def fork_session(
        self,
        cwd: str,
        session_id: str,
        additional_directories: Any = None,
        mcp_servers: Any = None,
        system_prompt: Any = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        """ACP ``session/fork``: the Claude SDK's ``fork_session`` copies the stored transcript
        under a new id (the reference's ``forkSession``); the fork is then opened as a resumed
        session, ready for a prompt. The source session goes on unchanged."""
        from claude_agent_sdk import fork_session

        dirs = _directories(additional_directories)  # checked first, as the reference does
        cwd, options = self._request(cwd, system_prompt, kwargs)
        try:
            forked = await asyncio.to_thread(fork_session, session_id)
        except (ValueError, FileNotFoundError):  # not a UUID, no transcript: the reference's -32002
            raise RequestError(-32002, "Resource not found", {"sessionId": session_id[:200]}) from None
        session = await self._open(forked.session_id, cwd, mcp_servers, dirs, options=options)
        self._started(session)
        log.info("session.fork", session_id=session.id, source_id=session_id, epoch=session.publisher.ledger.epoch)
        return ForkSessionResponse(session_id=session.id, **_session_state(session))

    @_guarded
    async def delete_session(self, session_id: str, **kwargs: Any) -> DeleteSessionResponse:
        """ACP ``session/delete``: an open session is closed first (its Claude Code stopped, so
        nothing writes the transcript again), then the Claude SDK's ``delete_session`` removes the
        stored transcript. A session that was never stored is deleted already (the reference's)."""
        from claude_agent_sdk import delete_session

        if session_id in self._sessions:
            await self.close_session(session_id)
        with contextlib.suppress(ValueError, FileNotFoundError):  # not a UUID, not stored
            await asyncio.to_thread(delete_session, session_id)
        log.info("session.delete", session_id=session_id)
        return DeleteSessionResponse()

    @_guarded
    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        session = self._session(session_id)
        await self._set(session, MODE_CONFIG_ID, mode_id)
        # The mode picker follows (the reference's ``setSessionMode`` sends this one).
        await session.show(
            [{"sessionUpdate": "config_option_update", "configOptions": session.settings.config_options()}]
        )
        return SetSessionModeResponse()

    @_guarded
    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        session = self._session(session_id)
        await self._set(session, config_id, value)
        if config_id == MODE_CONFIG_ID:  # the mode selector follows (the reference's)
            await session.show([{"sessionUpdate": "current_mode_update", "currentModeId": session.settings.mode}])
        return SetSessionConfigOptionResponse.model_validate({"configOptions": session.settings.config_options()})

    async def _set(self, session: _Session, config_id: object, value: object) -> None:
        try:
            await session.set_config(config_id, value)  # checked there, once Claude Code runs
        except SettingsError as exc:
            raise RequestError.invalid_params({"details": str(exc)}) from None

    @_guarded
    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        try:
            content = prompt_content(prompt)
        except PromptRefused as refused:
            # The reference's words: "Invalid params: Content blocks of type audio are not supported".
            raise RequestError(-32602, f"Invalid params: {refused.message}", refused.data) from None
        async with self._auth.turn(self._subscription_guard):  # who is signed in (52.4)
            response = await session.run_prompt(content)
        if self._building is None:
            self._building = asyncio.ensure_future(build_deferred())
        return response

    @_guarded
    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """ACP extension requests (the SDK strips the leading ``_``): ``_session/steering``
        (:mod:`lifecycle.agent.steering`); any other is ``-32601``."""
        if method != STEER_METHOD:
            raise RequestError.method_not_found(f"_{method}"[:200])
        return await steer(params, self._session, self._detached)

    @_guarded
    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self._sessions.get(session_id)
        if session is not None:
            log.info("session.cancel", session_id=session_id)
            await session.cancel()
        else:  # a child session's id (subagents.py): that child stops, its parent's turn goes on
            await asyncio.gather(*(s.cancel_child(session_id) for s in list(self._sessions.values())))

    async def settle(self, timeout: float) -> None:
        """Answer every running prompt ``cancelled`` and wait (at most ``timeout`` seconds) until
        every prompt is answered (SIGINT: the client's ``session/cancel`` may be on its way too)."""
        sessions = list(self._sessions.values())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        cancels = asyncio.gather(*(s.cancel() for s in sessions if s.prompts), return_exceptions=True)
        while any(s.prompts for s in sessions) and loop.time() < deadline:
            await asyncio.sleep(0.01)  # the handlers return their answers, the SDK writes them
        cancels.cancel()  # Claude Code's interrupt may still be under way: shutdown stops it
        with contextlib.suppress(BaseException):
            await cancels

    async def shutdown(self) -> None:
        """Close every runtime (Claude Code processes exit)."""
        sessions = list(self._sessions.values())
        self._sessions.clear()
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
        if self._early is not None:
            await self._early.close()  # one no runtime took
        if self._building is not None:
            self._building.cancel()
        await self._auth.close()


#: How long a ``session/new`` waits for Claude Code's models when none are known (Claude Code
#: answers its ``initialize`` about half a second after it starts).
MODELS_WAIT_S = 5.0
#: How long ``session/new``, ``session/load`` and ``session/resume`` wait for Claude Code's start
#: (a start-up failure is reported within a second of the start; a start that takes longer is the
#: first prompt's to report).
STARTUP_WAIT_S = 5.0
#: Seconds a SIGINT waits for the running prompts' ``cancelled`` answers before the agent exits.
DRAIN_S = 2.0
_MAX_CLOSED = 1024  # closed session ids remembered (for "session closed" rather than "unknown")
_LIST_PAGE = 100  # sessions per session/list page


def _directories(value: object) -> tuple[str, ...]:
    """A request's ``additionalDirectories``: absolute paths (the reference checks only that; a
    missing one does not fail the session), else ``-32602``."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(d, str) and os.path.isabs(d) for d in value):
        raise RequestError.invalid_params({"details": "additionalDirectories entries must be absolute paths"})
    return tuple(dict.fromkeys(value))


def _session_state(session: _Session) -> dict[str, Any]:
    """The ``modes`` and ``configOptions`` of a session/new, load or resume answer."""
    return {"modes": session.settings.modes(), "config_options": session.settings.config_options()}


async def run(
    config: AgentConfig,
    transport: StdioTransport,
    state: ClientState | None = None,
    early: EarlyCli | None = None,
    *,
    interrupted: asyncio.Event | None = None,
) -> None:
    """Serve a :class:`ClaudeAcpAgent` over ``transport`` until the client disconnects, then close
    every runtime. ``state``: what an ``initialize`` answered before (:mod:`lifecycle.agent.startup`)
    negotiated; ``early``: Claude Code launched for the first ``session/new`` meanwhile;
    ``interrupted``: once set (SIGINT), every running prompt is answered ``cancelled``
    (:meth:`ClaudeAcpAgent.settle`), then the agent stops."""
    agent = ClaudeAcpAgent(config, identity=True)
    if state is not None:
        agent.accept_initialize(state)
    agent.accept_early(early)
    transport.on_initialize = agent.saw_client_capabilities
    # The SDK answers -32601 for the ``acp.Agent`` methods this agent leaves out.
    # ``use_unstable_protocol``: session/resume and session/close are unstable in this SDK.
    serving = asyncio.ensure_future(acp.run_agent(cast(acp.Agent, agent), transport, use_unstable_protocol=True))
    waits: set[asyncio.Future[Any]] = {serving}
    if interrupted is not None:
        waits.add(asyncio.ensure_future(interrupted.wait()))
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if not serving.done():
            log.info("agent.interrupted")
            await agent.settle(DRAIN_S)
    finally:
        for task in waits:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
        await agent.shutdown()
        log.info("agent.stop")
