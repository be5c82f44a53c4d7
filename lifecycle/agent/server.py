"""The ACP agent itself (:class:`ClaudeAcpAgent`) and :func:`run`, which serves it over a
transport. Imports the ACP SDK and the Claude SDK: :mod:`lifecycle.agent.startup` imports this
module in the background once ``initialize`` is answered."""

from __future__ import annotations

import asyncio
import functools
import os
import sys
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, ParamSpec, TypeVar, cast

import acp
import structlog
from acp import RequestError
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthMethodAgent,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
)
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient

from .. import __version__
from ..acp import SessionPublisher, advertise, negotiate_client, new_epoch
from ..answers import MachineAnswers
from ..events import AuthStatus
from ..history import load_history
from ..ledger import SessionLedger
from ..log import StructlogObserver
from ..negotiation import notices_capable
from .config import AUTH_METHOD_ID, AgentConfig
from .mcp import McpServers
from .prompt import PromptRefused, prompt_content
from .runtime import ClientFactory
from .session import _Session, sdk_function
from .startup import ClientState, log_initialize
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


def _credentials_available(env: Mapping[str, str]) -> bool:
    """Whether Claude Code has something to authenticate with (best effort; keychains unseen)."""
    if any(
        env.get(k)
        for k in (
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "CLAUDE_CODE_USE_BEDROCK",
            "CLAUDE_CODE_USE_VERTEX",
            "CLAUDE_CODE_USE_FOUNDRY",
        )
    ):
        return True
    if sys.platform == "darwin":
        return True  # the login lives in the macOS keychain, which is not inspected here
    root = Path(env.get("CLAUDE_CONFIG_DIR") or Path(env.get("HOME", "~")).expanduser() / ".claude")
    return (root / ".credentials.json").is_file()


# ------------------------------------------------------------------ the agent


class ClaudeAcpAgent:
    """The ACP agent (an ``acp.Agent``): one Claude Code runtime per ACP session.

    Args:
        config: how Claude Code is run.
        client_factory: builds the SDK client for a runtime (tests may pass their own).
        env: the environment used to judge ``authenticate`` (default: this process's).
    """

    def __init__(
        self,
        config: AgentConfig | None = None,
        *,
        client_factory: ClientFactory | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config or AgentConfig()
        self.client_factory: ClientFactory = client_factory or ClaudeSDKClient
        self._env = env if env is not None else os.environ
        self._conn: Any = None
        self._negotiated = False
        self._notices = False  # the client declared ACP session notices
        self._raw_caps: object = None  # the raw ``clientCapabilities`` of the initialize being handled
        self._sessions: dict[str, _Session] = {}
        self._answers = MachineAnswers()  # one agent's sessions share their incident machine's answers

    def on_connect(self, conn: Any) -> None:
        self._conn = conn
        raw: Any = getattr(conn, "_conn", None)  # the SDK's JSON-RPC connection (request ids)
        if raw is not None and callable(getattr(raw, "add_observer", None)):
            raw.add_observer(self._observe)

    def _observe(self, event: Any) -> None:
        """Every raw frame: a ``session/request_permission`` going out has its id noted, so a
        withdrawn question can be cancelled on the wire."""
        message = getattr(event, "message", None)
        if not isinstance(message, dict) or message.get("method") != "session/request_permission":
            return
        params = message.get("params")
        if not isinstance(params, dict):
            return
        session = self._sessions.get(str(params.get("sessionId")))
        tool_call = params.get("toolCall")
        if session is not None and isinstance(tool_call, dict):
            session.permissions.saw_request(message.get("id"), tool_call.get("toolCallId"))

    async def cancel_request(self, method: str, params: Any) -> None:
        """Send a raw notification (``$/cancel_request`` of a withdrawn question)."""
        raw = getattr(self._conn, "_conn", None)
        if raw is not None:
            await raw.send_notification(method, params)

    def accept_initialize(self, state: ClientState) -> None:
        """Take what an ``initialize`` answered before the agent existed negotiated
        (:mod:`lifecycle.agent.startup`)."""
        self._negotiated = state.negotiated
        self._notices = state.notices

    def saw_client_capabilities(self, raw: object) -> None:
        """The raw ``clientCapabilities`` of an ``initialize`` request about to reach
        :meth:`initialize` (the transport calls this: the SDK's model drops unknown keys such as
        ``session.notices``)."""
        self._raw_caps = raw

    # -------------------------------------------------------------- session plumbing

    def claude_options(self, session: _Session, *, resume: bool) -> ClaudeAgentOptions:
        """The SDK options of a session's runtime (Claude's environment passes through)."""
        cfg = self.config
        kw: dict[str, Any] = {
            "cwd": session.cwd,
            # Claude Code's own system prompt and the user's, project's and local settings
            # (CLAUDE.md, permission rules), as the reference adapter runs it.
            "system_prompt": {"type": "preset", "preset": "claude_code"},
            "setting_sources": ["user", "project", "local"],
            "include_partial_messages": True,
            "can_use_tool": session.permissions.can_use_tool,
        }
        if resume:
            kw["resume"] = session.id
        else:
            kw["session_id"] = session.id
        if cfg.model:
            kw["model"] = cfg.model
        if cfg.max_turns is not None:
            kw["max_turns"] = cfg.max_turns
        if cfg.cli_path:
            kw["cli_path"] = cfg.cli_path
        if cfg.permission_mode:
            kw["permission_mode"] = cfg.permission_mode
        kw["stderr"] = _forward_stderr if cfg.cli_stderr else _cli_stderr_logger(session.id)
        if session.mcp.config:
            kw["mcp_servers"] = session.mcp.config
        return ClaudeAgentOptions(**kw)

    def _open(self, session_id: str, cwd: str) -> _Session:
        epoch = new_epoch()
        observer = StructlogObserver(epoch=epoch)
        ledger = SessionLedger(
            session_id,
            negotiated=self._negotiated,
            notices=self._notices,
            epoch=epoch,
            observer=observer,
            answers=self._answers,
        )
        session = _Session(self, session_id, cwd, SessionPublisher(self._conn, ledger), self._conn)
        self._sessions[session_id] = session
        return session

    def _session(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": session_id, "details": "unknown session"})
        return session

    def _cwd(self, cwd: str) -> str:
        return self.config.cwd or cwd

    # -------------------------------------------------------------- ACP methods

    @_guarded
    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self._negotiated = negotiate_client(client_capabilities)
        raw, self._raw_caps = self._raw_caps, None
        self._notices = notices_capable(raw if raw is not None else client_capabilities)
        log_initialize(self._negotiated, client_info, protocol_version)
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=advertise(AgentCapabilities(load_session=True), self._negotiated),
            auth_methods=[
                AuthMethodAgent(
                    id=AUTH_METHOD_ID,
                    name="Log in to Claude",
                    description="Run `claude /login` in a terminal (or set ANTHROPIC_API_KEY), then continue.",
                )
            ],
            agent_info=Implementation(name="lifecycle-claude-acp", title="Claude (lifecycle)", version=__version__),
        )

    @_guarded
    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        if method_id != AUTH_METHOD_ID:
            raise RequestError.invalid_params({"methodId": method_id, "details": "unknown auth method"})
        ok = _credentials_available(self._env)
        log.info("agent.authenticate", method_id=method_id, ok=ok)
        for session in list(self._sessions.values()):
            await session.feed(AuthStatus(ok=ok))
        if not ok:
            raise RequestError.auth_required({"details": "No Claude credentials found. Run `claude /login`."})
        return AuthenticateResponse()

    @_guarded
    async def new_session(
        self,
        cwd: str,
        additional_directories: Any = None,
        mcp_servers: Any = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        session = self._open(str(uuid.uuid4()), self._cwd(cwd))
        session.mcp = McpServers(mcp_servers, negotiated=self._negotiated, notices=self._notices)
        log.info("session.new", session_id=session.id, epoch=session.publisher.ledger.epoch)
        return NewSessionResponse(session_id=session.id)

    @_guarded
    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: Any = None,
        additional_directories: Any = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        cwd = self._cwd(cwd)
        stored = await asyncio.to_thread(sdk_function("get_session_messages"), session_id, directory=cwd)
        if not stored:
            raise RequestError.invalid_params({"sessionId": session_id, "details": "no stored Claude session"})
        old = self._sessions.pop(session_id, None)
        if old is not None:
            await old.close()
        session = self._open(session_id, cwd)
        session.mcp = McpServers(mcp_servers, negotiated=self._negotiated, notices=self._notices)
        history = load_history(stored)
        log.info(
            "session.load",
            session_id=session_id,
            epoch=session.publisher.ledger.epoch,
            entries=len(history.entries),
        )
        # Replayed through the fresh ledger before the answer (spec: session/load).
        await session.feed(history)
        return LoadSessionResponse()

    @_guarded
    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        try:
            content = prompt_content(prompt)
        except PromptRefused as refused:
            # The reference's words: "Invalid params: Content blocks of type audio are not supported".
            raise RequestError(-32602, f"Invalid params: {refused.message}", refused.data) from None
        return await session.run_prompt(content)

    @_guarded
    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self._sessions.get(session_id)
        if session is not None:
            log.info("session.cancel", session_id=session_id)
            await session.cancel()

    async def shutdown(self) -> None:
        """Close every runtime (Claude Code processes exit)."""
        sessions = list(self._sessions.values())
        self._sessions.clear()
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)


def _forward_stderr(line: str) -> None:
    sys.stderr.write(line if line.endswith("\n") else line + "\n")


def _cli_stderr_logger(session_id: str) -> Callable[[str], None]:
    # Claude Code's stderr is not ours to print (it may hold anything); only its presence is
    # logged unless ``--cli-stderr`` asks for the lines themselves.
    def note(line: str) -> None:
        log.debug("runtime.cli_stderr", session_id=session_id, chars=len(line))

    return note


async def run(config: AgentConfig, transport: StdioTransport, state: ClientState | None = None) -> None:
    """Serve a :class:`ClaudeAcpAgent` over ``transport`` until the client disconnects, then close
    every runtime. ``state``: what an ``initialize`` answered before (:mod:`lifecycle.agent.startup`)
    negotiated."""
    agent = ClaudeAcpAgent(config)
    if state is not None:
        agent.accept_initialize(state)
    transport.on_initialize = agent.saw_client_capabilities
    try:
        # The SDK answers -32601 for the ``acp.Agent`` methods this agent leaves out.
        await acp.run_agent(cast(acp.Agent, agent), transport)
    finally:
        await agent.shutdown()
        log.info("agent.stop")
