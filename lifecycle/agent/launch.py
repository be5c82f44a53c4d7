"""How a session's Claude Code is launched, without the Claude SDK: its options, its command line
and environment, and the *early launch* that starts it while the SDKs are still being imported.

Rules
-----
* One home for a session's Claude Code options: :func:`cli_options` (plain values; the agent adds
  its callbacks and builds ``ClaudeAgentOptions`` from them).
* :func:`cli_argv` and :func:`cli_env` are what ``claude-agent-sdk`` 0.2.190's subprocess
  transport runs for those options (its command line, :func:`lifecycle.agent.sdk.cli_command`, and ``connect``);
  ``tests/test_agent_launch.py`` compares both with the SDK's own for every option this agent
  sets. An option they do not know makes :func:`cli_argv` answer None: no early launch.
* A session's first mode is the agent's ``--permission-mode``, else the one Claude Code starts in
  by itself: ``permissions.defaultMode`` of its settings, read as Claude Code documents their
  precedence (managed > local project > project > user; :func:`claude_settings_mode`). Only a mode
  that differs from that one is passed on the command line (Claude Code reads its settings itself).
* An early launch is only a head start. The runtime adopts the process only when the command line
  the SDK builds for the session is the early one, word for word, in the same directory, and the
  process still runs; otherwise the process is stopped and the SDK starts Claude Code as usual.
  It is launched only for a ``session/new`` without MCP servers (nothing the client asks to run is
  started before the SDK has checked the request), and one that no session takes is stopped.
* Every Claude Code of this agent is started by :func:`spawn_cli` (the early launch and the
  runtime's transport, :mod:`lifecycle.agent.adopt`) and stopped by :func:`stop_cli`: nothing it
  started outlives it. It runs in a session (and process group) of its own, with an environment
  variable of its own (:data:`OWNER_ENV`), which its Bash commands, their background jobs and its
  MCP servers inherit. :func:`stop_cli` stops at once (SIGTERM, SIGKILL after
  :data:`STOP_GRACE_S`) Claude Code and every process started after it that is its descendant,
  in its group or session, or carries its variable: that finds them after Claude Code died (they
  are then another's children) and after they left its group (Claude Code runs each Bash command
  in a session of its own). A process that both left and cleared its environment is not found.

Theory of operation
-------------------
Importing the ACP SDK and the Claude SDK takes about a second, and Claude Code about half a
second to start; the reference adapter (TypeScript) has neither import. So
:mod:`lifecycle.agent.startup` reads the message after ``initialize`` while the imports run; a
``session/new`` there launches Claude Code at once (:func:`launch_early`) with the session id the
agent will give the session. When the agent opens that session, it takes the :class:`EarlyCli`
(:meth:`EarlyCli.take`), and the session's runtime hands it to the SDK client as a transport that
adopts the process (:mod:`lifecycle.agent.adopt`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import json
import os
import re
import signal
import sys
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import structlog

from .config import AgentConfig, claude_cli
from .modes import MODE_IDS, SessionSettings, bypass_allowed
from .session_request import BadSessionRequest, session_options

__all__ = [
    "OWNER_ENV", "ClaudeProcess", "EarlyCli", "claude_settings_mode", "cli_argv", "cli_env", "cli_options",
    "initial_settings", "launch_early", "spawn_cli", "stop_cli", "warm",
]  # fmt: skip

log = structlog.get_logger("lifecycle.agent")

#: Setting sources Claude Code reads (user, project and local settings: CLAUDE.md, permission
#: rules), as the reference adapter runs it.
SETTING_SOURCES: Final = ("user", "project", "local")
#: The Claude SDK sets these in Claude Code's environment (``SubprocessCLITransport.connect``).
_ENTRYPOINT: Final = ("CLAUDE_CODE_ENTRYPOINT", "sdk-py")
_SDK_VERSION_ENV: Final = "CLAUDE_AGENT_SDK_VERSION"
_DERIVED_CLIENT_APP_ENV: Final = "CLAUDE_AGENT_SDK_DERIVED_CLIENT_APP"
_SESSION_STATE_ENV: Final = "CLAUDE_CODE_SDK_READS_SESSION_STATE"
#: Claude Code writes a start-up failure as an error result with its reason (the reference's
#: ``STARTUP_FAILURE_RESULTS_ENV``, ``dist/startup-failure.js``).
STARTUP_FAILURE_RESULTS_ENV: Final = "CLAUDE_CODE_STARTUP_FAILURE_RESULTS"
#: Claude Code reports its session state (``session_state_changed``: running, idle) to the agent,
#: as the reference adapter asks it to (without it the Claude SDK drops the frames it asked for):
#: the hold and steering lanes end a turn at its ``idle``.
SESSION_STATE_EVENTS_ENV: Final = "CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS"
# Options :func:`cli_argv` renders (anything else: no early launch).
_KNOWN: Final = frozenset(
    {
        "cwd", "system_prompt", "setting_sources", "include_partial_messages", "extra_args", "resume",
        "session_id", "model", "effort", "max_turns", "cli_path", "permission_mode", "mcp_servers",
    }
)  # fmt: skip
#: Seconds an early Claude Code that no session took may run.
UNCLAIMED_SECONDS: Final = 60.0
#: The variable marking a Claude Code's environment (a value of its own), inherited by what it starts.
OWNER_ENV: Final = "LIFECYCLE_CLAUDE_OWNER"  # a marker, not a setting (docs/security.md)
#: Seconds Claude Code and what it started have after SIGTERM, before SIGKILL.
STOP_GRACE_S: Final = 0.5
#: Seconds :func:`stop_cli` waits after SIGKILL for the processes to be gone.
_KILL_WAIT_S: Final = 3.0
_POLL_S: Final = 0.02


#: Claude Code's managed (policy) settings file on this platform (its documentation's path).
MANAGED_SETTINGS: Final = {
    "darwin": "/Library/Application Support/ClaudeCode/managed-settings.json",
    "win32": "C:\\Program Files\\ClaudeCode\\managed-settings.json",
}.get(sys.platform, "/etc/claude-code/managed-settings.json")
_MAX_SETTINGS_BYTES: Final = 1 << 20


def _settings_files(cwd: str, env: Mapping[str, str], managed: str) -> list[Path]:
    """Claude Code's settings files for ``cwd``, highest precedence first (managed, local
    project, project, user: ``$CLAUDE_CONFIG_DIR/settings.json`` or ``~/.claude/settings.json``)."""
    config_dir = env.get("CLAUDE_CONFIG_DIR")
    home = env.get("HOME")
    user = Path(config_dir) if config_dir else (Path(home) if home else Path.home()) / ".claude"
    project = Path(cwd) / ".claude"
    return [Path(managed), project / "settings.local.json", project / "settings.json", user / "settings.json"]


def claude_settings_mode(cwd: str, env: Mapping[str, str], *, managed: str = MANAGED_SETTINGS) -> str | None:
    """The ``permissions.defaultMode`` Claude Code starts a session in ``cwd`` with (its settings,
    in their documented precedence; a file that cannot be read or holds no known mode is passed
    over), None when none sets one."""
    for path in _settings_files(cwd, env, managed):
        try:
            with path.open("rb") as f:
                data = json.loads(f.read(_MAX_SETTINGS_BYTES))
        except (OSError, ValueError):
            continue
        permissions = data.get("permissions") if isinstance(data, dict) else None
        mode = permissions.get("defaultMode") if isinstance(permissions, dict) else None
        if isinstance(mode, str) and mode in MODE_IDS:
            return mode
    return None


def initial_settings(config: AgentConfig, env: Mapping[str, str], cwd: str | None = None) -> SessionSettings:
    """A new session's mode, model and effort before Claude Code reports what it offers: the
    agent's ``--permission-mode`` wins over the mode of Claude Code's settings for ``cwd``."""
    allow_bypass = bypass_allowed(env)
    own = (claude_settings_mode(cwd, env) if cwd else None) or "default"
    if own == "bypassPermissions" and not allow_bypass:
        own = "default"  # not launched allowing it: Claude Code does not start in it
    # ``ANTHROPIC_MODEL``: the model Claude Code runs when ``--model`` names none, preselected in the
    # picker as the reference does (environment.py).
    model = config.model or env.get("ANTHROPIC_MODEL") or "default"
    settings = SessionSettings(
        mode=config.permission_mode or own, settings_mode=own, model=model,
        allow_bypass=allow_bypass,
    )  # fmt: skip
    if settings.mode == "bypassPermissions" and not settings.allow_bypass:
        # Claude Code would refuse to start: the session starts in its own mode, as the reference's.
        settings.mode = own
    return settings


def cli_options(
    config: AgentConfig,
    settings: SessionSettings,
    *,
    cwd: str,
    session_id: str,
    resume: bool,
    mcp_servers: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A session's ``ClaudeAgentOptions`` keywords, without callbacks (the agent adds
    ``can_use_tool`` and ``stderr``)."""
    kw: dict[str, Any] = {
        "cwd": cwd,
        # Claude Code's own system prompt and the user's, project's and local settings.
        "system_prompt": {"type": "preset", "preset": "claude_code"},
        "setting_sources": list(SETTING_SOURCES),
        "include_partial_messages": True,
    }
    if settings.allow_bypass:
        kw["extra_args"] = {"allow-dangerously-skip-permissions": None}
    kw["resume" if resume else "session_id"] = session_id
    if settings.model != "default":
        kw["model"] = settings.model
    if settings.effort != "default":
        kw["effort"] = settings.effort
    if config.max_turns is not None:
        kw["max_turns"] = config.max_turns
    if config.thinking is not None:  # MAX_THINKING_TOKENS, CLAUDE_CODE_THINKING_DISPLAY
        kw["thinking"] = dict(config.thinking)
    if config.settings is not None:  # CLAUDE_MODEL_CONFIG
        kw["settings"] = config.settings
    if config.cli_path:
        kw["cli_path"] = config.cli_path
    if settings.mode != settings.settings_mode:
        kw["permission_mode"] = settings.mode
    if mcp_servers:
        kw["mcp_servers"] = dict(mcp_servers)
    if settings.add_dirs:  # working directories besides ``cwd``, under Claude Code's own rules
        kw["add_dirs"] = list(settings.add_dirs)
    kw.update(settings.claude_options)  # the client's system prompt and tools (session_request.py)
    return kw


def cli_argv(cli: str, options: Mapping[str, Any]) -> list[str] | None:
    """The command line the Claude SDK runs for ``options`` (:func:`cli_options`) with a
    ``can_use_tool`` callback; None for an option this function does not render."""
    if not _KNOWN.issuperset(options) or options.get("system_prompt") != {"type": "preset", "preset": "claude_code"}:
        return None
    # 0.2.190: every valued option is one ``--flag=value`` argument, except ``--mcp-config``
    # (the flag, then the JSON) and the fixed ``stream-json`` values.
    argv = [cli, "--output-format", "stream-json", "--verbose"]
    if options.get("max_turns"):
        argv.append(f"--max-turns={options['max_turns']}")
    if options.get("model"):
        argv.append(f"--model={options['model']}")
    argv.append("--permission-prompt-tool=stdio")  # can_use_tool: questions over the control protocol
    if options.get("permission_mode"):
        argv.append(f"--permission-mode={options['permission_mode']}")
    if options.get("resume"):
        argv.append(f"--resume={options['resume']}")
    if options.get("session_id"):
        argv.append(f"--session-id={options['session_id']}")
    if options.get("mcp_servers"):
        argv += ["--mcp-config", json.dumps({"mcpServers": options["mcp_servers"]})]
    if options.get("include_partial_messages"):
        argv.append("--include-partial-messages")
    sources = options.get("setting_sources")
    if sources is not None:
        argv.append(f"--setting-sources={','.join(sources)}")
    for flag, value in (options.get("extra_args") or {}).items():
        if value is not None:
            return None  # only valueless flags are rendered here
        argv.append(f"--{flag}")
    if options.get("effort") is not None:
        argv.append(f"--effort={options['effort']}")
    argv += ["--input-format", "stream-json"]
    return argv


def cli_env(environ: Mapping[str, str], cwd: str, sdk_version: str) -> dict[str, str]:
    """Claude Code's environment as the Claude SDK sets it (no ``env`` option, no client app
    label, no active trace), and, as the reference adapter sets them, ``CLAUDE_CODE_STARTUP_FAILURE_RESULTS``
    (a Claude Code that cannot start writes an error result with its ``startup_failure_reason``
    before it exits: the agent answers with it, :mod:`lifecycle.agent.startup_failures`) and
    ``CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS`` (its ``session_state_changed`` frames reach the agent)."""
    env = {k: v for k, v in environ.items() if k != "CLAUDECODE"}
    env[_ENTRYPOINT[0]] = _ENTRYPOINT[1]
    env[_SDK_VERSION_ENV] = sdk_version
    env.pop(_DERIVED_CLIENT_APP_ENV, None)
    if not any(k.upper() == _SESSION_STATE_ENV for k in env):
        env[_SESSION_STATE_ENV] = "1"
    env["PWD"] = cwd
    env[STARTUP_FAILURE_RESULTS_ENV] = "1"
    env[SESSION_STATE_EVENTS_ENV] = "1"
    return env


class EarlyCli:
    """A Claude Code launched for a ``session/new`` before the agent existed.

    Attributes:
        session_id: the id the agent gives the session (Claude Code runs with it).
        cwd: the session's working directory.
        argv: the command line it runs.
        process: the ``anyio`` process, until a runtime takes it or it is stopped.
    """

    __slots__ = ("_reaper", "_stopping", "argv", "cwd", "process", "session_id")

    def __init__(self, session_id: str, cwd: str, argv: list[str], process: Any) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.argv = argv
        self.process: Any = process
        self._reaper: asyncio.TimerHandle | None = None
        self._stopping: asyncio.Future[None] | None = None

    @property
    def pid(self) -> int | None:
        return getattr(self.process, "pid", None)

    def expire_after(self, seconds: float) -> None:
        """Stop the process if no runtime took it within ``seconds``."""
        self._reaper = asyncio.get_running_loop().call_later(seconds, lambda: self.discard("unclaimed"))

    def take(self, argv: list[str], cwd: str | None) -> Any:
        """The process, for a runtime whose command line is ``argv`` in ``cwd``; None (and the
        process stopped) when it is another or no longer runs."""
        process, self.process = self.process, None
        if self._reaper is not None:
            self._reaper.cancel()
        if process is None:
            return None
        reason = None
        if argv != self.argv or cwd != self.cwd:
            reason = "command_differs"
        elif process.returncode is not None:
            reason = "exited"
        if reason is not None:
            self.process = process
            self.discard(reason)
            return None
        log.info("runtime.early_adopted", session_id=self.session_id, pid=process.pid)
        return process

    def discard(self, reason: str) -> None:
        """Stop the process (in the background); a later :meth:`take` gets None."""
        process, self.process = self.process, None
        if self._reaper is not None:
            self._reaper.cancel()
        if process is None:
            return
        log.info("runtime.early_discarded", session_id=self.session_id, reason=reason)
        self._stopping = asyncio.ensure_future(_stop(process))

    async def close(self) -> None:
        """Stop the process unless a runtime took it, and wait until it is gone."""
        self.discard("agent_stopped")
        if self._stopping is not None:
            await asyncio.shield(self._stopping)


async def _stop(process: Any) -> None:
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(Exception):
                await stream.aclose()
    await stop_cli(process)


# ------------------------------------------------------------------ Claude Code's processes

class ClaudeProcess:
    """A Claude Code :func:`spawn_cli` started: the ``anyio`` process (every attribute not named
    here is its) with what :func:`stop_cli` needs to find what it started after it is gone: its
    :data:`OWNER_ENV` value and its start time (clock ticks)."""

    def __init__(self, process: Any, owner: str, since: int) -> None:
        self.process = process
        self.owner = owner
        self.since = since

    def __getattr__(self, name: str) -> Any:
        return getattr(self.process, name)


async def spawn_cli(argv: list[str], cwd: str | None, env: Mapping[str, str]) -> ClaudeProcess:
    """Start Claude Code (an ``anyio`` process, its three pipes open) in a session of its own, with
    its :data:`OWNER_ENV`; raises what ``anyio.open_process`` raised."""
    import subprocess

    import anyio

    owner = uuid.uuid4().hex
    process = await anyio.open_process(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
        env={**env, OWNER_ENV: owner}, start_new_session=True,
    )  # fmt: skip
    stat = _stat(process.pid)
    return ClaudeProcess(process, owner, stat[4] if stat is not None else 0)


async def stop_cli(process: Any, grace: float = STOP_GRACE_S) -> None:
    """Stop Claude Code ``process`` (from :func:`spawn_cli`) and everything it started, at once:
    SIGTERM, then SIGKILL for what still runs after ``grace`` seconds; returns once all of it is
    gone (or, bounded, gave up waiting). Also for a Claude Code that already exited."""
    owner, since = getattr(process, "owner", ""), getattr(process, "since", 0)
    loop = asyncio.get_running_loop()
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, _KILL_WAIT_S)):
        _signal(process, _started_by(process, owner, since), sig)
        deadline = loop.time() + wait
        while process.returncode is None or _started_by(process, owner, since):
            if loop.time() >= deadline:
                break
            await asyncio.sleep(_POLL_S)
        else:
            return
    log.warning("runtime.stop_incomplete", pid=process.pid)


def _signal(process: Any, started: dict[int, int], sig: int) -> None:
    if process.returncode is None:  # not reaped: its pid (and group) is still its own
        if hasattr(os, "killpg"):
            with contextlib.suppress(OSError):
                os.killpg(process.pid, sig)  # its group (pgid = pid: a session of its own)
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(sig)
    for pid, start in started.items():
        stat = _stat(pid)
        if stat is not None and stat[4] == start:  # the same process, not a reused pid
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
    _reap(started)


def _reap(started: dict[int, int]) -> None:
    """Collect the exit status of those of ``started`` that became this process's children (orphans
    adopted by a subreaper) and exited: never a process this process started itself."""
    me = os.getpid()
    for pid in started:
        stat = _stat(pid)
        if stat is not None and stat[0] == "Z" and stat[1] == me:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def _stat(pid: int) -> tuple[str, int, int, int, int] | None:
    """State, parent, process group, session and start time (clock ticks) of ``pid`` (Linux's
    ``/proc/<pid>/stat``); None when it is gone or unknown here."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    fields = raw[raw.rindex(b")") + 2 :].split()
    return fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19])


def _started_by(process: Any, owner: str, since: int) -> dict[int, int]:
    """Every live (not zombie) process started at or after ``since`` that Claude Code ``process``
    started: those whose environment has ``owner`` as :data:`OWNER_ENV`, its descendants and the
    members of its group and session while its pid is its own (not reaped: a pid, group or
    session id of a reaped process may be another's), and their descendants (pid -> start time).
    Empty without ``/proc``."""
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return {}
    root = process.pid if process.returncode is None else -1
    me, mark = os.getpid(), f"{OWNER_ENV}={owner}".encode()
    table = {pid: stat for pid in pids if pid not in (me, process.pid) and (stat := _stat(pid)) is not None}
    children: dict[int, list[int]] = {}
    found: dict[int, int] = {}
    for pid, (state, ppid, pgrp, sid, start) in table.items():
        if state == "Z" or start < since:
            continue
        children.setdefault(ppid, []).append(pid)
        if pgrp == root or sid == root or (owner and _environ_has(pid, mark)):
            found[pid] = start
    stack = [root, *found]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found[child] = table[child][4]
                stack.append(child)
    return found


def _environ_has(pid: int, entry: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read()
    except OSError:
        return False
    return entry in environ and entry in environ.split(b"\0")


_VERSION_LINE: Final = re.compile(r"""^__version__\s*=\s*["']([^"'\s]+)["']\s*$""", re.MULTILINE)


@functools.cache
def _sdk_version() -> str | None:
    """The Claude SDK's ``__version__`` (what its transport sets as ``CLAUDE_AGENT_SDK_VERSION``),
    read from its ``_version.py`` without importing the SDK: ``importlib.metadata`` would read
    every installed distribution's metadata (tens of milliseconds on the early launch's path).
    The distribution's metadata only when that file cannot be read."""
    from importlib.util import find_spec

    try:
        spec = find_spec("claude_agent_sdk")
        folder = spec.submodule_search_locations if spec is not None else None
        for root in folder or ():
            with open(os.path.join(root, "_version.py"), encoding="utf-8") as f:
                found = _VERSION_LINE.search(f.read(4096))
            if found is not None:
                return found.group(1)
    except (ImportError, OSError, ValueError):
        pass
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("claude-agent-sdk")
    except PackageNotFoundError:
        return None


def warm() -> None:
    """Import what :func:`launch_early` runs and read the Claude SDK's version, so the launch
    itself imports nothing (the agent's import thread calls this first, :mod:`lifecycle.agent.startup`:
    a launch importing modules while the SDKs are imported waits for the interpreter lock at every
    file it opens). Whatever is missing is left to the import that needs it, and its error."""
    import shutil  # noqa: F401  (claude_cli)
    import subprocess  # noqa: F401
    from importlib.util import find_spec  # noqa: F401  (claude_cli)

    with contextlib.suppress(ImportError):
        import anyio  # noqa: F401

        # anyio loads its event-loop backend when a process is first opened; load it now.
        importlib.import_module("anyio._backends._asyncio")
    _sdk_version()


def _asks_more(params: Mapping[str, Any]) -> bool:
    """Whether a raw ``session/new`` asks Claude Code for more than the defaults (a system
    prompt, tools: another command line) or is refused (:mod:`lifecycle.agent.session_request`):
    no early launch for it."""
    try:
        return bool(session_options(params.get("systemPrompt"), params.get("_meta")).claude)
    except BadSessionRequest:
        return True


async def launch_early(
    config: AgentConfig, params: object, environ: Mapping[str, str] | None = None
) -> EarlyCli | None:
    """Launch Claude Code for a raw ``session/new``'s ``params``, or None when this one is not for
    an early launch (MCP servers, an unusual shape, no Claude Code, a start that fails: the agent
    then starts it as usual)."""
    if not isinstance(params, dict) or not isinstance(params.get("cwd"), str) or params.get("mcpServers"):
        return None
    env = os.environ if environ is None else environ
    cwd = config.cwd or params["cwd"]
    cli, version = claude_cli(config.cli_path), _sdk_version()
    if cli is None or version is None or not os.path.isabs(cwd) or not os.path.isdir(cwd) or _asks_more(params):
        return None
    session_id = str(uuid.uuid4())
    options = cli_options(config, initial_settings(config, env, cwd), cwd=cwd, session_id=session_id, resume=False)
    argv = cli_argv(cli, options)
    if argv is None:
        return None
    try:
        process = await spawn_cli(argv, cwd, cli_env(env, cwd, version))
    except OSError as exc:
        log.info("runtime.early_launch_failed", error_type=type(exc).__name__)
        return None
    log.info("runtime.early_launch", session_id=session_id, pid=process.pid)
    early = EarlyCli(session_id, cwd, argv, process)
    early.expire_after(UNCLAIMED_SECONDS)
    return early
