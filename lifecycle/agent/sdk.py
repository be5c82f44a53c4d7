"""The one seam to the SDKs' private parts: every use the agent makes of a name the ACP SDK
(``agent-client-protocol``) or the Claude SDK (``claude-agent-sdk``) does not publish, as a small
named function, and the check, at the agent's start, that the installed SDKs are the supported
ones and still have every such name.

Rules
-----
* Nothing else in ``lifecycle/`` touches a private name of either SDK: no import of a private
  module (``claude_agent_sdk._internal``, ``acp._transport``), no private attribute of an SDK
  object, no ``getattr`` with one (``tests/test_agent_sdk.py`` reads every module and fails naming
  the file and line). An SDK bump then breaks here, in one place, and loudly.
* Every private name used here is in :data:`PRIVATE_NAMES` (a module and an attribute path) or,
  for state an SDK constructor sets, :data:`INSTANCE_STATE`; :func:`check_names` resolves them all.
* The supported versions are :data:`SUPPORTED`, the pins of ``pyproject.toml`` (a test checks
  they agree). :func:`check_versions` compares the installed distributions'
  ``importlib.metadata`` versions with them.
* The process's entry (:func:`lifecycle.agent.startup.serve`) runs both checks once, in the
  thread that imports the SDKs, so ``initialize`` (answered before the SDKs are imported) is not
  slower; :func:`check_versions` before the import (a wrong SDK is not imported at all),
  :func:`check_names` after it. On a mismatch the agent logs ``agent.sdk_mismatch`` and answers
  every request after ``initialize`` with a JSON-RPC error whose message is
  :class:`SdkMismatch`'s text (installed version, supported version, missing names: what an editor
  shows its user), and exits 1 once the client goes away.
* A name missing at first use (an embedding that skipped the check) raises :class:`SdkMismatch`
  too. Functions that take an object from the caller (a connection, a client) read its private
  attribute leniently (``getattr``): tests' stand-ins keep working, and the start's check is what
  guards the real SDK objects.
* Error texts name distributions, versions and Python attribute names only: never a path, an
  environment value or a credential.
* No SDK at import time: this module imports the standard library only (the agent's entry imports
  it before the SDKs); each name is resolved on first use, once, and kept.
* pydantic's internals (the import hooks of :mod:`lifecycle.agent.imports`) are not here: pydantic
  is neither SDK, and those hooks fall back to pydantic's own code when their hook points are
  missing (a pydantic bump costs speed, never correctness), where a missing SDK name breaks the
  agent.
* Public names stay where they are used: the ACP SDK models' ``field_meta`` (their field for
  ``_meta``) and pydantic's ``model_extra`` (read by the core's :mod:`lifecycle.negotiation`,
  which imports no SDK), the Claude SDK's exported functions and classes.

Theory of operation
-------------------
Three things have no public API in the pinned SDKs. The ACP SDK's ``AgentSideConnection`` keeps
its JSON-RPC ``Connection`` as ``_conn``: the agent needs it to see request ids on the wire
(:func:`observe_frames`), to send what the SDK's schema lacks (:func:`send_raw_request`,
:func:`raw_notifier`, :func:`notification_sink`) and to route methods the SDK knows but does not
route (:func:`route_request`, through the connection's ``_handler``). The Claude SDK's subprocess
transport (``_internal``) is what the agent subclasses to adopt an early Claude Code
(:data:`CliTransport` and the ``cli_*`` hooks, :func:`adopt_process`); its client's query has no
public call for the control requests the reference adapter sends (:func:`control_request_sender`);
its message parser (:func:`parse_message`) and its transcript lookup (:func:`stored_session_path`)
are private too.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

if TYPE_CHECKING:
    from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport as CliTransport

__all__ = [
    "ACP_SDK", "CLAUDE_SDK", "INSTANCE_STATE", "PRIVATE_NAMES", "SUPPORTED", "CliTransport", "Mismatch",
    "NotificationSender", "PrivateName", "SdkMismatch", "adopt_process", "check_names", "check_versions",
    "cli_command", "cli_cwd", "cli_path", "cli_process", "client_query", "control_request_sender", "fail_start",
    "jsonrpc_connection", "memory_transport_pair", "notification_sink", "observe_frames", "parse_message",
    "raw_notifier", "route_request", "route_unrouted", "satisfies", "send_raw_request", "stored_session_path",
]  # fmt: skip

#: The distributions.
CLAUDE_SDK: Final = "claude-agent-sdk"
ACP_SDK: Final = "agent-client-protocol"

#: The versions this agent supports: ``pyproject.toml``'s pins (``tests/test_agent_sdk.py`` checks
#: they agree).
SUPPORTED: Final[Mapping[str, str]] = {CLAUDE_SDK: "==0.2.190", ACP_SDK: ">=0.12,<0.13"}


@dataclass(frozen=True, slots=True)
class PrivateName:
    """One private name the seam uses: ``module`` (imported) and ``path`` (attributes from it)."""

    distribution: str
    module: str
    path: str

    @property
    def label(self) -> str:
        """How an error names it (a Python name, no path)."""
        return f"{self.module}.{self.path}"


_SUBPROCESS_CLI: Final = "claude_agent_sdk._internal.transport.subprocess_cli"
_TRANSPORT: Final = PrivateName(CLAUDE_SDK, _SUBPROCESS_CLI, "SubprocessCLITransport")
_ACTIVE_CHILDREN: Final = PrivateName(CLAUDE_SDK, _SUBPROCESS_CLI, "_ACTIVE_CHILDREN")
_SPAWN_DETACHED: Final = PrivateName(CLAUDE_SDK, "claude_agent_sdk._internal._task_compat", "spawn_detached")
_PARSE_MESSAGE: Final = PrivateName(CLAUDE_SDK, "claude_agent_sdk._internal.message_parser", "parse_message")
_SESSION_FILE: Final = PrivateName(CLAUDE_SDK, "claude_agent_sdk._internal.sessions", "_resolve_session_file_path")
_NORMALIZE_RESULT: Final = PrivateName(ACP_SDK, "acp.utils", "normalize_result")
_MEMORY_PAIR: Final = PrivateName(ACP_SDK, "acp._transport", "memory_transport_pair")

#: Every private name (or public name of a private object) the seam uses.
PRIVATE_NAMES: Final = (
    _TRANSPORT,
    *(
        PrivateName(CLAUDE_SDK, _SUBPROCESS_CLI, f"SubprocessCLITransport.{m}")
        for m in ("_build_command", "_find_cli", "_handle_stderr", "connect", "close", "write", "read_messages")
    ),
    _ACTIVE_CHILDREN,
    _SPAWN_DETACHED,
    _PARSE_MESSAGE,
    _SESSION_FILE,
    PrivateName(CLAUDE_SDK, "claude_agent_sdk._internal.query", "Query._send_control_request"),
    PrivateName(CLAUDE_SDK, "claude_agent_sdk._internal.query", "Query.receive_messages"),
    *(
        PrivateName(ACP_SDK, "acp.connection", f"Connection.{m}")
        for m in ("add_observer", "send_notification", "send_request")
    ),
    PrivateName(ACP_SDK, "acp.router", "MessageRouter.route_request"),
    _NORMALIZE_RESULT,
    _MEMORY_PAIR,
)

_TRANSPORT_STATE: Final = (
    "_options", "_cwd", "_cli_path", "_process", "_stdout_stream", "_stdin_stream", "_stderr_stream", "_stderr_task",
    "_ready", "_exit_error",
)  # fmt: skip
#: State an SDK constructor sets that the seam reads: (distribution, class, attribute names).
INSTANCE_STATE: Final = (
    (CLAUDE_SDK, "SubprocessCLITransport", _TRANSPORT_STATE),
    (CLAUDE_SDK, "ClaudeSDKClient", ("_query",)),
    (ACP_SDK, "AgentSideConnection", ("_conn",)),
    (ACP_SDK, "Connection", ("_handler",)),
)


# ------------------------------------------------------------------ the check


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One SDK that is not the supported one: its installed version (None: not installed), the
    supported versions, and the names missing from it."""

    distribution: str
    installed: str | None
    supported: str
    missing: tuple[str, ...] = ()

    def describe(self) -> str:
        """One sentence: what is installed, what is supported, what is missing."""
        supported = f"{self.distribution}{self.supported}"
        if self.installed is None:
            return f"{self.distribution} is not installed; lifecycle acp needs {supported}"
        text = f"{self.distribution} {self.installed} is installed; lifecycle acp supports {supported}"
        if self.missing:
            text += " and needs " + ", ".join(self.missing) + ", missing from it"
        return text

    @property
    def fix(self) -> str:
        """What to do: install the supported version."""
        return f"install {self.distribution}{self.supported} (pip install 'acp-lifecycle[agent]' installs it)"


class SdkMismatch(RuntimeError):
    """The installed SDKs are not the supported ones (:class:`Mismatch` each). Its text is what
    the agent answers every request with; it names versions and Python names only."""

    def __init__(self, mismatches: tuple[Mismatch, ...]) -> None:
        self.mismatches = mismatches
        text = "; ".join(m.describe() for m in mismatches)
        fixes = "; ".join(m.fix for m in mismatches)
        super().__init__(f"{text}. To fix: {fixes}." if mismatches else "the SDKs do not match")


_RELEASE: Final = re.compile(r"^(\d+(?:\.\d+)*)(.*)$")
_CLAUSE: Final = re.compile(r"^\s*(==|>=|<=|<|>)\s*(.+?)\s*$")


def _release(version: str) -> tuple[tuple[int, ...], str]:
    """``version``'s release numbers, trailing zeros dropped, and what follows them."""
    found = _RELEASE.match(version.strip())
    if found is None:
        return (), version
    numbers = [int(n) for n in found.group(1).split(".")]
    while numbers and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers), found.group(2)


def satisfies(version: str, spec: str) -> bool:
    """Whether ``version`` meets ``spec`` (comma-separated ``==``, ``>=``, ``<``, ``<=``, ``>``
    clauses on release numbers; a pre-release, post-release or local suffix meets ``==`` never)."""
    installed, suffix = _release(version)
    if not installed and suffix:
        return False
    for clause in spec.split(","):
        found = _CLAUSE.match(clause)
        if found is None:
            return False
        op, bound = found.group(1), _release(found.group(2))[0]
        ok = {
            "==": installed == bound and not suffix,
            ">=": installed >= bound,
            "<=": installed <= bound,
            "<": installed < bound,
            ">": installed > bound,
        }[op]
        if not ok:
            return False
    return True


def _installed(distribution: str) -> str | None:
    import importlib.metadata

    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_versions() -> None:
    """Raise :class:`SdkMismatch` unless every SDK's installed version is in :data:`SUPPORTED`."""
    mismatches = []
    for distribution, spec in SUPPORTED.items():
        installed = _installed(distribution)
        if installed is None or not satisfies(installed, spec):
            mismatches.append(Mismatch(distribution, installed, spec))
    if mismatches:
        raise SdkMismatch(tuple(mismatches))


_resolved: dict[PrivateName, Any] = {}
_checked = False


def _lookup(name: PrivateName) -> Any:
    """The object ``name`` names (kept once found); raises :class:`SdkMismatch` when it is missing."""
    try:
        return _resolved[name]
    except KeyError:
        pass
    try:
        value: Any = importlib.import_module(name.module)
        for part in name.path.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError):
        raise _missing(name.distribution, name.label) from None
    _resolved[name] = value
    return value


def _missing(distribution: str, *labels: str) -> SdkMismatch:
    return SdkMismatch((Mismatch(distribution, _installed(distribution), SUPPORTED[distribution], labels),))


class _NoTransport:
    """A message-level ACP transport that is never used (the check's ``AgentSideConnection``)."""

    async def send(self, message: dict[str, Any]) -> None: ...

    async def receive(self) -> dict[str, Any] | None: ...

    async def close(self) -> None: ...


def _fresh(cls: str) -> Any:
    """One instance of ``cls`` (of :data:`INSTANCE_STATE`), built without I/O: no process, no
    listening."""
    if cls in ("AgentSideConnection", "Connection"):
        from acp.agent.connection import AgentSideConnection

        agent_conn = AgentSideConnection(cast(Any, object()), _NoTransport(), listening=False)
        return agent_conn if cls == "AgentSideConnection" else jsonrpc_connection(agent_conn)
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient

    if cls == "ClaudeSDKClient":
        return ClaudeSDKClient(ClaudeAgentOptions())
    return _lookup(_TRANSPORT)(prompt="", options=ClaudeAgentOptions())


def check_names() -> None:
    """Resolve every name of :data:`PRIVATE_NAMES` and check the state of :data:`INSTANCE_STATE`
    on fresh instances, once per process; raise :class:`SdkMismatch` naming each missing one."""
    global _checked
    if _checked:
        return
    missing: dict[str, list[str]] = {}
    for name in PRIVATE_NAMES:
        try:
            _lookup(name)
        except SdkMismatch:
            missing.setdefault(name.distribution, []).append(name.label)
    if not missing:
        for distribution, cls, attrs in INSTANCE_STATE:
            try:
                instance = _fresh(cls)
            except Exception as exc:  # a constructor that changed
                missing.setdefault(distribution, []).append(f"{cls}() ({type(exc).__name__})")
                continue
            gone = [f"{cls}().{attr}" for attr in attrs if not hasattr(instance, attr)]
            missing.setdefault(distribution, []).extend(gone)
        missing = {d: labels for d, labels in missing.items() if labels}
    if missing:
        raise SdkMismatch(
            tuple(Mismatch(d, _installed(d), SUPPORTED[d], tuple(labels)) for d, labels in missing.items())
        )
    _checked = True


# ------------------------------------------------------------------ the ACP SDK


class NotificationSender(Protocol):
    """A raw JSON-RPC notification sender (the ACP SDK's ``Connection``)."""

    async def send_notification(self, method: str, params: Any = None) -> None: ...


def jsonrpc_connection(conn: object) -> Any | None:
    """The ACP SDK's JSON-RPC ``Connection`` behind ``conn`` (an ``AgentSideConnection`` keeps it
    as ``_conn``), None when ``conn`` has none."""
    return getattr(conn, "_conn", None)


def observe_frames(conn: object, callback: Callable[[Any], object]) -> bool:
    """Have ``callback`` see every raw frame of ``conn``'s JSON-RPC connection (a ``StreamEvent``:
    ``direction``, ``message``); False when ``conn`` has no such connection."""
    raw = jsonrpc_connection(conn)
    add = getattr(raw, "add_observer", None)
    if not callable(add):
        return False
    add(callback)
    return True


def route_request(conn: object, method: str, model: type[Any], agent: object, attr: str) -> bool:
    """Route the ACP request ``method`` (params validated as ``model``) to ``agent.attr`` on
    ``conn``'s JSON-RPC connection, its result normalised as the SDK's own routes do; False when
    ``conn`` has no router (a stand-in)."""
    router = getattr(jsonrpc_connection(conn), "_handler", None)
    route = getattr(router, "route_request", None)
    if not callable(route):
        return False
    route(method, model, agent, attr, adapt_result=_lookup(_NORMALIZE_RESULT))
    return True


async def send_raw_request(conn: object, method: str, params: Any) -> Any:
    """Send the request ``method`` verbatim (no SDK model) through ``conn``'s JSON-RPC connection,
    or through ``conn`` itself when it is one; the client's result."""
    raw = jsonrpc_connection(conn)
    sender: Any = conn if raw is None else raw
    return await sender.send_request(method, params)


def raw_notifier(conn: object) -> Callable[[str, Any], Awaitable[None]] | None:
    """The ``send_notification`` of ``conn``'s JSON-RPC connection (a raw notification, no SDK
    model), None when ``conn`` has none."""
    notify = getattr(jsonrpc_connection(conn), "send_notification", None)
    return cast("Callable[[str, Any], Awaitable[None]]", notify) if callable(notify) else None


def notification_sink(conn: object) -> NotificationSender:
    """The raw sender behind ``conn``: ``conn`` itself when it can send notifications, else its
    JSON-RPC connection; raises ``TypeError`` when neither can."""
    for candidate in (conn, jsonrpc_connection(conn)):
        if callable(getattr(candidate, "send_notification", None)):
            return cast(NotificationSender, candidate)
    raise TypeError(f"{type(conn).__name__} cannot send a raw session/update (no send_notification)")


def memory_transport_pair() -> tuple[Any, Any]:
    """Two in-process ACP transports wired to each other (the SDK's private
    ``memory_transport_pair``): an agent's end and a client's."""
    pair: tuple[Any, Any] = _lookup(_MEMORY_PAIR)()
    return pair


# ------------------------------------------------------------------ the Claude SDK


def client_query(client: object) -> Any | None:
    """The SDK client's query (its control protocol), None before ``connect``."""
    return getattr(client, "_query", None)


def control_request_sender(client: object) -> Callable[[dict[str, Any]], Awaitable[Any]] | None:
    """The query's ``_send_control_request`` of a connected SDK client (a control request the SDK
    has no public call for; awaited, it answers Claude Code's response), None when it has none."""
    send = getattr(client_query(client), "_send_control_request", None)
    return cast("Callable[[dict[str, Any]], Awaitable[Any]]", send) if callable(send) else None


def parse_message(data: dict[str, Any]) -> Any | None:
    """One raw Claude Code message as the SDK's typed message (None: a type the SDK skips)."""
    return _lookup(_PARSE_MESSAGE)(data)


def stored_session_path(session_id: str, cwd: str) -> Path | None:
    """The transcript file of a stored session, found as the SDK finds it (project folder,
    worktrees); None when there is none."""
    path: Path | None = _lookup(_SESSION_FILE)(session_id, cwd)
    return path


def __getattr__(name: str) -> Any:
    """:data:`CliTransport`: the SDK's subprocess transport class, resolved on first use."""
    if name == "CliTransport":
        value = _lookup(_TRANSPORT)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def cli_process(transport: CliTransport) -> Any | None:
    """The Claude Code process of a subprocess transport, None before it connects."""
    return transport._process


def cli_cwd(transport: CliTransport) -> str | None:
    """The directory the transport runs Claude Code in (None: the agent's)."""
    return transport._cwd


def cli_path(transport: CliTransport) -> str | None:
    """The Claude Code executable the transport runs (None: not looked up yet)."""
    return transport._cli_path


def cli_command(transport: CliTransport) -> list[str]:
    """The command line the SDK runs for the transport's options (the executable looked up first,
    as the SDK's ``connect`` does)."""
    if transport._cli_path is None:
        transport._cli_path = transport._find_cli()
    return transport._build_command()


def fail_start(transport: CliTransport, error: Exception) -> Exception:
    """``error``, kept as the transport's exit error (what the SDK reports for a failed start)."""
    transport._exit_error = error
    return error


def adopt_process(transport: CliTransport, process: Any) -> None:
    """Make ``process`` (started with piped stdin, stdout and stderr) the transport's Claude Code,
    as the end of the SDK's ``connect`` does after its own spawn: reaped at exit like the SDK's own
    children, stdout read as text, stderr read always (the SDK's reader drops the lines without a
    callback), stdin written as text; the transport is then ready."""
    from anyio.streams.text import TextReceiveStream, TextSendStream

    transport._process = process
    _lookup(_ACTIVE_CHILDREN).add(process)
    transport._stdout_stream = TextReceiveStream(process.stdout)
    transport._stderr_stream = TextReceiveStream(process.stderr)
    transport._stderr_task = _lookup(_SPAWN_DETACHED)(transport._handle_stderr())
    transport._stdin_stream = TextSendStream(process.stdin)
    transport._ready = True


def route_unrouted(conn: object, agent: object) -> None:
    """Route ACP ``logout`` to ``agent.logout`` and ``session/delete`` to ``agent.delete_session``:
    the ACP SDK 0.12.1 knows both methods' models but routes neither."""
    from acp.schema import DeleteSessionRequest, LogoutRequest

    if route_request(conn, "logout", LogoutRequest, agent, "logout"):
        route_request(conn, "session/delete", DeleteSessionRequest, agent, "delete_session")

