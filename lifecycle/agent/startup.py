"""Process entry of the agent (``lifecycle acp``, ``python -m lifecycle.agent``) and its fast
``initialize``.

An editor spawns the agent for every new chat and waits for the ``initialize`` answer, but the
ACP SDK (hundreds of pydantic models) and the Claude SDK (with ``mcp``) take about a second to
import the ordinary way (half that the way :mod:`lifecycle.agent.imports` does it). So this
module imports neither: :func:`serve` reads the first message through
:class:`lifecycle.agent.transport.StdioTransport` and, when it is an ``initialize`` request of the
usual shape, answers it from the raw JSON (:func:`initialize_result`: exactly what
:meth:`lifecycle.agent.server.ClaudeAcpAgent.initialize` answers). Meanwhile, from the process's
start, a thread imports :mod:`lifecycle.agent.server` (the SDKs and the agent, the fast way of
:mod:`lifecycle.agent.imports`); once both are done the connection is handed to the ACP SDK for
every later message, with the negotiated state given to the agent. Any other first message, or
an ``initialize`` this module does not recognise as ordinary, goes to the SDK unchanged.

The message after ``initialize`` is read while the SDKs are imported; a ``session/new`` launches
its Claude Code at once (:mod:`lifecycle.agent.launch`). The import thread first imports what that
launch runs, then waits (at most :data:`LAUNCH_WINDOW_S`) until the launch is done or no launch
comes: a launch beside the import would wait for the interpreter lock at every step of opening a
process and its pipes.

The import thread then checks the SDKs it imported (:mod:`lifecycle.agent.sdk`: their versions
against the pins, and every private name the agent uses); on a mismatch every request after
``initialize`` is answered with an error naming the installed and the supported versions, and
``lifecycle acp`` exits 1 once the client goes away (:class:`_SdkRefusal`).

The raw ``initialize`` is also where ``clientCapabilities.session.notices`` (ACP session notices)
is read: the SDK's model drops keys it does not know.

Signals: SIGTERM ends the agent at once (every runtime closed). SIGINT, which a terminal's Ctrl-C
sends to the whole foreground group (a headless client such as acpx and this agent alike, while
the client sends ``session/cancel``), first settles what is pending: every running prompt is
answered ``cancelled`` and the answers written (at most :data:`lifecycle.agent.server.DRAIN_S`),
then the agent exits (:func:`lifecycle.agent.server.run`). A second SIGINT, or one before the
agent serves, ends it at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import signal
import sys
import threading
import warnings
from collections.abc import Coroutine, Mapping, MutableMapping
from typing import Any, Final

import structlog

from .. import __version__
from ..log import configure_logging
from ..negotiation import ClientState, agent_capabilities_meta
from ..redaction import redact
from .config import (
    AGENT_CAPABILITIES,
    INITIALIZE_META,
    AgentConfig,
    auth_methods,
    build_parser,
    claude_cli,
    cli_from_env,
    config_from_args,
)
from .environment import BadEnvironment, LogTee, open_log_dir
from .imports import import_server
from .launch import EarlyCli, launch_early, warm
from .transport import StdioTransport, StreamSink, StreamSource, open_stdio

__all__ = ["PROTOCOL_VERSION", "RESERVED_KWARGS", "ClientState", "cli_main", "initialize_result", "serve"]

log = structlog.get_logger("lifecycle.agent")

#: ``acp.PROTOCOL_VERSION`` of the ACP SDK this agent is built on (a test checks they agree).
PROTOCOL_VERSION: Final = 1

#: :func:`lifecycle.agent.transport.reserved_kwargs` of :class:`ClaudeAcpAgent` (a test checks
#: they agree): known before the agent's module is imported.
RESERVED_KWARGS: Final = frozenset(
    {
        "self", "protocol_version", "client_capabilities", "client_info", "method_id", "cwd",
        "additional_directories", "mcp_servers", "session_id", "prompt", "mode_id", "config_id", "value",
        "cursor", "system_prompt", "method", "params",
    }
)  # fmt: skip

_AGENT_INFO: Final = {"name": "lifecycle-claude-acp", "title": "Claude (lifecycle)", "version": __version__}

# Capability sub-objects whose fields the fast path checks, and those it only checks are objects.
_BOOL_FIELDS: Final = ("readTextFile", "writeTextFile")
_OBJECT_FIELDS: Final = ("session", "plan", "auth", "elicitation", "nes")


def _optional_object(value: object) -> bool:
    return value is None or isinstance(value, dict)


def _optional_str(value: object) -> bool:
    return value is None or isinstance(value, str)


def _ordinary(params: object) -> bool:
    """Whether the SDK's ``InitializeRequest`` model surely accepts ``params`` (conservative: an
    unusual shape goes to the SDK, which validates it and answers ``-32602`` when it must)."""
    if not isinstance(params, dict):
        return False
    version = params.get("protocolVersion")
    if type(version) is not int or not 0 <= version <= 65535:
        return False
    if not _optional_object(params.get("_meta")):
        return False
    caps = params.get("clientCapabilities")
    if caps is not None:
        if not isinstance(caps, dict) or not _optional_object(caps.get("_meta")):
            return False
        fs = caps.get("fs")
        if fs is not None:
            if not isinstance(fs, dict) or not _optional_object(fs.get("_meta")):
                return False
            if any(fs.get(k) is not None and type(fs.get(k)) is not bool for k in _BOOL_FIELDS):
                return False
        terminal = caps.get("terminal")
        if terminal is not None and type(terminal) is not bool:
            return False
        encodings = caps.get("positionEncodings")
        if encodings is not None and not (isinstance(encodings, list) and all(isinstance(e, str) for e in encodings)):
            return False
        for key in _OBJECT_FIELDS:
            sub = caps.get(key)
            # Their own fields are optional flags and objects; a sub-object holding only objects,
            # booleans and nulls is what clients send. Anything else: let the SDK decide.
            if sub is not None and not (
                isinstance(sub, dict) and all(v is None or isinstance(v, (bool, dict)) for v in sub.values())
            ):
                return False
    info = params.get("clientInfo")
    if info is not None:
        if not isinstance(info, dict) or not _optional_object(info.get("_meta")):
            return False
        if not isinstance(info.get("name"), str) or not isinstance(info.get("version"), str):
            return False
        if not _optional_str(info.get("title")):
            return False
    return True


def initialize_result(
    params: object, *, hide_claude_auth: bool = False
) -> tuple[dict[str, Any], ClientState] | None:
    """The ``result`` of an ``initialize`` request with ``params`` (raw JSON) and what it
    negotiated, or None when ``params`` is not of the usual shape (the SDK must judge it).

    The result is exactly what ``ClaudeAcpAgent.initialize`` returns as serialised by the SDK
    (``tests/test_agent_startup.py`` compares both for capable, legacy and malformed clients).
    """
    if not _ordinary(params):
        return None
    assert isinstance(params, dict)
    state = ClientState.parse(params.get("clientCapabilities"))
    agent_caps: dict[str, Any] = copy.deepcopy(AGENT_CAPABILITIES)
    meta = agent_capabilities_meta(state.negotiated)
    if meta:
        agent_caps["_meta"] = {**agent_caps.get("_meta", {}), **meta}
    result = {
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": agent_caps,
        "authMethods": auth_methods(state, hide_claude_auth=hide_claude_auth),
        "agentInfo": dict(_AGENT_INFO),
        "_meta": copy.deepcopy(dict(INITIALIZE_META)),
    }
    return result, state


def log_initialize(negotiated: bool, client_info: object, protocol_version: object) -> None:
    name = client_info.get("name") if isinstance(client_info, Mapping) else getattr(client_info, "name", None)
    log.info(
        "agent.initialize",
        negotiated=negotiated,
        client=redact(name[:80]) if isinstance(name, str) else None,  # the client's own words
        protocol_version=protocol_version,
    )


async def _answer_initialize(transport: StdioTransport, hide_claude_auth: bool = False) -> ClientState | None:
    """Read the first message; answer it when it is an ordinary ``initialize`` request, else give
    it back to the transport for the SDK. None at the end of input."""
    message = await transport.receive()
    if message is None:
        return None
    if message.get("method") == "initialize" and "id" in message:
        params = message.get("params")
        with contextlib.suppress(Exception):  # anything unexpected: the SDK answers it
            answer = initialize_result(params, hide_claude_auth=hide_claude_auth)
            if answer is not None:
                result, state = answer
                assert isinstance(params, dict)
                log_initialize(state.negotiated, params.get("clientInfo"), params.get("protocolVersion"))
                # A client already gone: the SDK sees the end of input.
                with contextlib.suppress(ConnectionError):
                    await transport.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
                return state
    transport.unread(message)
    return ClientState()


async def serve(
    config: AgentConfig, input_stream: Any = None, output_stream: Any = None, *, pause_gc: bool = False
) -> None:
    """Run the agent until the client disconnects (stdio by default), then close every runtime.

    ``input_stream`` / ``output_stream`` (the SDK's convention: the ``asyncio.StreamWriter`` to
    the client and the ``asyncio.StreamReader`` from it) replace stdio; either way the client is
    read and written through :class:`lifecycle.agent.transport.StdioTransport`. The first
    ``initialize`` is answered before the SDKs are imported (see the module's docstring).
    ``pause_gc`` (the process's entry, :func:`cli_main`, which owns the process): no cyclic garbage
    collection during that import (:func:`lifecycle.agent.imports.import_server`).
    """
    if input_stream is None and output_stream is None:
        source, sink = await open_stdio()
        # The protocol owns file descriptor 1 now; anything printed by accident goes to stderr.
        sys.stdout = sys.stderr
    else:
        source, sink = StreamSource(output_stream), StreamSink(input_stream)
    transport = StdioTransport(source, sink, reserved=RESERVED_KWARGS)
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    interrupted = asyncio.Event()  # set by SIGINT while the agent serves: settle, then exit
    serving = False

    def on_sigint() -> None:
        if serving and not interrupted.is_set():
            interrupted.set()
        elif main is not None:
            main.cancel()

    with contextlib.suppress(NotImplementedError, RuntimeError):
        if main is not None:
            loop.add_signal_handler(signal.SIGTERM, main.cancel)
            loop.add_signal_handler(signal.SIGINT, on_sigint)
    log.info("agent.start", version=__version__)
    # The SDKs and the agent, imported off the event loop from the start (the first session/new
    # waits for them, the initialize answer does not).
    window = threading.Event()
    if not config.start_early:
        window.set()
    importing = asyncio.ensure_future(asyncio.to_thread(_import_agent, window, pause_gc))
    early: EarlyCli | None = None
    try:
        state = await _answer_initialize(transport, config.hide_claude_auth)
        if state is not None and config.start_early and not importing.done():
            early = await _launch_for_next(transport, importing, config, window)
        window.set()
        server = await importing
    except BaseException:
        window.set()
        if early is not None:
            await early.close()
        raise
    finally:
        importing.cancel()
    serving = True
    if isinstance(server, _SdkRefusal):
        await server.refuse(transport, early, interrupted)
    await server.run(config, transport, state, early, interrupted=interrupted)


#: How long the SDK import waits, after importing what a launch runs, for the early launch of a
#: ``session/new`` read right after ``initialize`` (the launch opens a process and its pipes; beside
#: the import it would wait for the interpreter lock at each step: measured 0.25 s instead of 0.03 s).
LAUNCH_WINDOW_S: Final = 0.1


def _import_agent(window: threading.Event, pause_gc: bool) -> Any:
    """The import thread: what an early launch runs, then (once the launch window closes) the SDKs
    and the agent, checked against the supported SDKs (:mod:`lifecycle.agent.sdk`: their versions
    and every private name the agent uses); on a mismatch, :class:`_SdkRefusal` in the agent's
    place. The checks run after the import, which loads ``importlib.metadata`` anyway; an import
    that fails is explained by a version mismatch when there is one."""
    warm()
    window.wait(LAUNCH_WINDOW_S)
    from . import sdk

    try:
        try:
            server = import_server(pause_gc=pause_gc)
        except Exception:
            sdk.check_versions()  # a wrong SDK explains the failed import
            raise
        sdk.check_versions()
        sdk.check_names()
    except sdk.SdkMismatch as mismatch:
        for m in mismatch.mismatches:
            log.error(
                "agent.sdk_mismatch",
                sdk=m.distribution,
                installed=m.installed,
                supported=m.supported,
                missing=list(m.missing),
            )
        return _SdkRefusal(mismatch)
    return server


class _SdkRefusal:
    """The agent when the installed SDKs are not the supported ones: every request after
    ``initialize`` is answered with a JSON-RPC error (``-32603``) whose message says what is
    installed, what is supported and what is missing (an editor shows it where the session would
    have opened); notifications are ignored. Once the client goes away (or SIGINT), the mismatch
    is raised: ``lifecycle acp`` exits 1."""

    def __init__(self, mismatch: Exception) -> None:
        self.mismatch = mismatch

    async def refuse(self, transport: StdioTransport, early: EarlyCli | None, interrupted: asyncio.Event) -> None:
        """Refuse every request until the end of input, then raise the mismatch."""
        if early is not None:
            await early.close()  # the SDK that would adopt it cannot run
        stop = asyncio.ensure_future(interrupted.wait())
        try:
            while True:
                reading = asyncio.ensure_future(transport.receive())
                await asyncio.wait({reading, stop}, return_when=asyncio.FIRST_COMPLETED)
                if not reading.done():
                    reading.cancel()
                    break
                message = reading.result()
                if message is None:
                    break
                if isinstance(message.get("method"), str) and "id" in message:
                    error = {"code": -32603, "message": str(self.mismatch)}
                    with contextlib.suppress(ConnectionError):
                        await transport.send({"jsonrpc": "2.0", "id": message["id"], "error": error})
        finally:
            stop.cancel()
        raise self.mismatch


async def _launch_for_next(
    transport: StdioTransport, importing: asyncio.Future[Any], config: AgentConfig, window: threading.Event
) -> EarlyCli | None:
    """Read the next message while the SDKs are imported; a ``session/new`` launches its Claude Code
    now (:mod:`lifecycle.agent.launch`). The message goes to the SDK either way: given back, or,
    when the imports finish first, still being read (the SDK's first read takes it). ``window`` is
    set once nothing is launched in it (no message within :data:`LAUNCH_WINDOW_S`, or one that
    launches nothing) or the launch is done."""
    reading = asyncio.ensure_future(transport.receive())
    try:
        await asyncio.wait({reading}, timeout=LAUNCH_WINDOW_S)
        if not reading.done():
            window.set()
            await asyncio.wait({reading, importing}, return_when=asyncio.FIRST_COMPLETED)
        if not reading.done():
            transport.unread_later(reading)
            return None
        message = reading.result()
        if message is None:
            return None
        transport.unread(message)
        if message.get("method") != "session/new" or "id" not in message:
            return None
        return await launch_early(config, message.get("params"))
    finally:
        window.set()


# ------------------------------------------------------------------ logging


class _StdlibToStructlog(logging.Handler):
    """Routes the SDKs' stdlib logging through structlog, so every stderr line is one JSON object."""

    def emit(self, record: logging.LogRecord) -> None:
        fields: dict[str, Any] = {"logger": record.name, "message": record.getMessage()[:500]}
        if record.exc_info and record.exc_info[0] is not None:
            fields["error_type"] = record.exc_info[0].__name__
        try:
            structlog.get_logger(record.name).log(record.levelno, "stdlib.log", **fields)
        except Exception:  # logging must never take the agent down
            self.handleError(record)


def _log_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None, line: Any = None
) -> None:
    """``warnings.showwarning``: a Python warning (an SDK's advice) as one log line, with its
    category only (the text may name the client's tools; no file name, no source line)."""
    log.warning("python.warning", category=category.__name__)


def _log_loop_exception(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The event loop's exception handler: what asyncio would print (a task's exception never
    retrieved, a callback that raised) as one log line: where it was (``task``, ``future``,
    ``handle``: asyncio's context keys) and the exception's type, never its text or traceback."""
    exc = context.get("exception")
    where = next((k for k in ("task", "future", "handle") if k in context), "loop")
    log.error("asyncio.unhandled", where=where, error_type=type(exc).__name__ if exc is not None else None)


async def _logged_loop(main: Coroutine[Any, Any, None]) -> None:
    """Run ``main`` with :func:`_log_loop_exception` as the loop's exception handler."""
    asyncio.get_running_loop().set_exception_handler(_log_loop_exception)
    await main


def _redact_log_fields(logger: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """A structlog processor: no credential, path or long text reaches a log line, whatever a
    field holds (a client's name, an SDK's log message)."""
    for key, value in event.items():
        if isinstance(value, str) and key != "event":
            event[key] = redact(value if len(value) <= 500 else value[:500] + "…")
    return event


# ------------------------------------------------------------------ process entry


def _run_claude_code(args: list[str]) -> int:
    """Replace this process by Claude Code with ``args`` (the terminal it runs in is the user's)."""
    import os

    cli = claude_cli(cli_from_env())
    if cli is None:
        sys.stderr.write("lifecycle acp --cli: Claude Code was not found (set LIFECYCLE_ACP_CLI)\n")
        return 127
    sys.stdout.flush()
    os.execv(cli, [cli, *args])
    return 0  # pragma: no cover (execv does not return)


def _log_stream() -> Any:
    """Where the log lines go: stderr, and ``$CLAUDE_AGENT_LOGS/agent.log`` too when the variable
    names a folder (the reference's; a folder that cannot be written is said once, on stderr)."""
    import os

    folder = os.environ.get("CLAUDE_AGENT_LOGS")
    if not folder:
        return sys.stderr
    try:
        return LogTee(sys.stderr, open_log_dir(folder))
    except OSError:
        sys.stderr.write("lifecycle acp: CLAUDE_AGENT_LOGS cannot be written; logging to stderr\n")
        return sys.stderr


def cli_main(argv: list[str]) -> int:
    """``lifecycle acp [options]``: serve ACP on stdin/stdout until the client goes away;
    ``lifecycle acp --cli ARGS``: run Claude Code itself with ``ARGS`` (a terminal login)."""
    if "--cli" in argv:
        return _run_claude_code([a for a in argv if a != "--cli"])
    if "--version" in argv or "-v" in argv:  # whatever else is given, as the reference's index.js
        sys.stdout.write(f"{__version__}\n")
        return 0
    args = build_parser().parse_args(argv)
    try:
        config = config_from_args(args)
    except BadEnvironment as bad:  # the variable's name, never its value
        sys.stderr.write(f"lifecycle acp: {bad}\n")
        return 2
    level = getattr(logging, str(args.log_level).upper())
    configure_logging(_log_stream(), level=level)
    structlog.configure(processors=[_redact_log_fields, *structlog.get_config()["processors"]])
    root = logging.getLogger()
    root.handlers[:] = [_StdlibToStructlog()]
    root.setLevel(max(level, logging.WARNING))
    warnings.showwarning = _log_warning
    try:
        asyncio.run(_logged_loop(serve(config, pause_gc=True)))
    except (KeyboardInterrupt, asyncio.CancelledError):
        return 0
    except RuntimeError as exc:
        from .sdk import SdkMismatch

        if isinstance(exc, SdkMismatch):
            return 1  # logged (agent.sdk_mismatch) and answered to every request
        raise
    return 0
