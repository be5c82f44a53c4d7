"""Claude Code launched while the SDKs are imported (issue 20, item 9; ``lifecycle.agent.launch``).

* The command line and the environment of an early launch are the Claude SDK's own for the same
  options: compared with ``SubprocessCLITransport._build_command`` and with what its ``connect``
  hands to ``anyio.open_process``, for every option the agent sets; one command line is also
  written out by hand.
* An early process is taken only for the command line it runs, in its directory, while it runs;
  otherwise (and when nobody takes it) it is stopped.
* What ``lifecycle.agent.adopt`` uses of the SDK's private transport still exists.
* The transport hands a read still under way to the SDK's first ``receive``.
* The launch window (``lifecycle.agent.startup``): the SDK import waits while a ``session/new``
  read after ``initialize`` launches its Claude Code, and no longer than ``LAUNCH_WINDOW_S``.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_agent_sdk import ClaudeAgentOptions, CLIConnectionError
from claude_agent_sdk._internal.transport import subprocess_cli
from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport
from claude_agent_sdk._version import __version__ as SDK_VERSION
from claude_agent_sdk.types import _configure_can_use_tool

from lifecycle.agent import startup
from lifecycle.agent.config import AgentConfig
from lifecycle.agent.launch import (
    EarlyCli,
    _sdk_version,
    cli_argv,
    cli_env,
    cli_options,
    initial_settings,
    launch_early,
)
from lifecycle.agent.modes import MODE_IDS, SessionSettings
from lifecycle.agent.transport import StdioTransport

CLI = "/opt/claude-code/claude"
SID = "0b7f3c9e-2d1a-4c5b-9e8f-1a2b3c4d5e6f"


async def _allow(*args: Any) -> Any:  # a can_use_tool callback (never called here)
    return None


def sdk_options(kw: dict[str, Any]) -> ClaudeAgentOptions:
    """The options the SDK client's own transport gets (``ClaudeSDKClient._connect_inner``)."""
    return _configure_can_use_tool(ClaudeAgentOptions(**kw, can_use_tool=_allow, stderr=lambda line: None))


def sdk_argv(kw: dict[str, Any]) -> list[str]:
    transport = SubprocessCLITransport(prompt="", options=sdk_options(kw))
    if transport._cli_path is None:
        transport._cli_path = CLI
    return transport._build_command()


MCP = {
    "echo": {"type": "stdio", "command": "/usr/bin/python3", "args": ["-m", "echo"], "env": {"A": "1"}},
    "web": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-Y": "z"}},
}

CASES: dict[str, tuple[AgentConfig, SessionSettings, bool, dict[str, Any] | None]] = {
    "defaults": (AgentConfig(), SessionSettings(), False, None),
    "bypass allowed": (AgentConfig(), SessionSettings(allow_bypass=True), False, None),
    "resume": (AgentConfig(), SessionSettings(), True, None),
    "every setting": (
        AgentConfig(max_turns=3, cli_path="/usr/local/bin/claude"),
        SessionSettings(mode="plan", model="haiku", effort="high", allow_bypass=True),
        False,
        None,
    ),
    "bypass mode": (AgentConfig(), SessionSettings(mode="bypassPermissions", allow_bypass=True), False, None),
    "mcp servers": (AgentConfig(), SessionSettings(mode="acceptEdits"), False, MCP),
}


def first_difference(ours: list[str] | None, theirs: list[str]) -> str | None:
    """None when the two command lines are the same, else the first argument where they differ
    (its position, ours and the SDK's)."""
    if ours is None:
        return "cli_argv renders no command line (no early launch) for options the agent sets"
    for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
        if a != b:
            return f"argument {i}: early launch {a!r}, SDK {b!r}"
    if len(ours) != len(theirs):
        i = min(len(ours), len(theirs))
        extra = ours[i:] if len(ours) > len(theirs) else theirs[i:]
        side = "early launch" if len(ours) > len(theirs) else "SDK"
        return f"argument {i}: only the {side} has {extra[0]!r}"
    return None


def test_first_difference_names_the_argument() -> None:
    # The counter-example: a check that could pass vacuously must fail on a real difference.
    differs = first_difference(["c", "--model", "x"], ["c", "--model=x"])
    assert differs == "argument 1: early launch '--model', SDK '--model=x'"
    assert first_difference(["c"], ["c", "--verbose"]) == "argument 1: only the SDK has '--verbose'"
    assert first_difference(["c", "--v"], ["c", "--v"]) is None


@pytest.mark.parametrize("name", list(CASES))
def test_the_command_line_is_the_sdks(name: str) -> None:
    config, settings, resume, mcp = CASES[name]
    kw = cli_options(config, settings, cwd="/work/project", session_id=SID, resume=resume, mcp_servers=mcp)
    cli = config.cli_path or CLI
    assert first_difference(cli_argv(cli, kw), sdk_argv(kw)) is None


def test_every_option_combination_is_the_sdks() -> None:
    """Every value the agent's options take (each mode of ``MODE_IDS`` as the session's and as its
    settings' own, a model, an effort, bypass allowed, resume, AgentConfig's max_turns and
    cli_path, MCP servers): the early launch's command line is the SDK's for every combination of what the agent sets
    (4 608 of them); a difference fails naming the first differing argument and the combination."""
    combos = itertools.product(
        MODE_IDS, MODE_IDS, ("default", "haiku"), ("default", "high"), (False, True), (False, True),
        (None, 3), (None, "/usr/local/bin/claude"), (None, MCP),
    )  # fmt: skip
    checked = 0
    for mode, own, model, effort, bypass, resume, turns, path, mcp in combos:
        settings = SessionSettings(mode=mode, settings_mode=own, model=model, effort=effort, allow_bypass=bypass)
        config = AgentConfig(max_turns=turns, cli_path=path)
        kw = cli_options(config, settings, cwd="/work/project", session_id=SID, resume=resume, mcp_servers=mcp)
        differs = first_difference(cli_argv(path or CLI, kw), sdk_argv(kw))
        assert differs is None, f"{differs} (options {sorted(kw)}, mode {mode}, settings mode {own})"
        checked += 1
    assert checked == len(MODE_IDS) ** 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2


def test_the_default_command_line_written_out() -> None:
    # claude-agent-sdk 0.2.190's _build_command: valued options as one --flag=value argument,
    # the fixed stream-json values as two.
    kw = cli_options(AgentConfig(), SessionSettings(), cwd="/work/project", session_id=SID, resume=False)
    assert cli_argv(CLI, kw) == [
        CLI, "--output-format", "stream-json", "--verbose", "--permission-prompt-tool=stdio",
        f"--session-id={SID}", "--include-partial-messages", "--setting-sources=user,project,local",
        "--input-format", "stream-json",
    ]  # fmt: skip


def test_an_option_it_does_not_render_means_no_early_launch() -> None:
    kw = cli_options(AgentConfig(), SessionSettings(), cwd="/w", session_id=SID, resume=False)
    assert cli_argv(CLI, {**kw, "add_dirs": ["/x"]}) is None
    assert cli_argv(CLI, {**kw, "system_prompt": "be brief"}) is None
    assert cli_argv(CLI, {**kw, "extra_args": {"debug-to-stderr": "yes"}}) is None


def test_initial_settings_follow_the_configuration() -> None:
    root_env = {"IS_SANDBOX": "0"}
    settings = initial_settings(AgentConfig(permission_mode="plan", model="haiku"), root_env)
    assert (settings.mode, settings.model, settings.effort) == ("plan", "haiku", "default")
    sandbox = initial_settings(AgentConfig(permission_mode="bypassPermissions"), {"IS_SANDBOX": "1"})
    assert sandbox.mode == "bypassPermissions" and sandbox.allow_bypass
    if os.geteuid() == 0:  # Claude Code refuses bypassPermissions to root outside a sandbox
        refused = initial_settings(AgentConfig(permission_mode="bypassPermissions"), root_env)
        assert refused.mode == "default" and not refused.allow_bypass


def test_the_environment_is_the_sdks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CLAUDECODE", "1")  # an outer Claude Code: not passed on
    monkeypatch.setenv("CLAUDE_AGENT_SDK_DERIVED_CLIENT_APP", "outer-app")  # an outer SDK's label: dropped
    monkeypatch.setenv("CLAUDE_CODE_ENTRYPOINT", "cli")  # overridden
    monkeypatch.delenv("CLAUDE_AGENT_SDK_CLIENT_APP", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_SDK_READS_SESSION_STATE", raising=False)
    seen: dict[str, Any] = {}

    async def capture(cmd: list[str], **kw: Any) -> Any:
        seen.update(kw, cmd=cmd)
        raise OSError("captured")

    monkeypatch.setattr(anyio, "open_process", capture)
    kw = cli_options(AgentConfig(), SessionSettings(), cwd=str(tmp_path), session_id=SID, resume=False)
    transport = SubprocessCLITransport(prompt="", options=sdk_options({**kw, "cli_path": CLI}))
    with pytest.raises(CLIConnectionError):
        asyncio.run(transport.connect())
    assert seen["cwd"] == str(tmp_path)
    # and the two variables the reference adapter adds (dist/startup-failure.js, issue 49 point 2;
    # dist/acp-agent.js "Opt-in to session state events", issue 50: the hold's idle fallback)
    expected = {**seen["env"], "CLAUDE_CODE_STARTUP_FAILURE_RESULTS": "1", "CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS": "1"}
    assert expected == cli_env(dict(os.environ), str(tmp_path), SDK_VERSION)
    assert seen["env"]["CLAUDE_CODE_ENTRYPOINT"] == "sdk-py" and "CLAUDECODE" not in seen["env"]
    assert "CLAUDE_AGENT_SDK_DERIVED_CLIENT_APP" not in seen["env"]
    assert seen["env"]["CLAUDE_CODE_SDK_READS_SESSION_STATE"] == "1" and seen["env"]["PWD"] == str(tmp_path)
    assert _sdk_version() == SDK_VERSION


def test_what_adopt_uses_of_the_sdk_still_exists() -> None:
    options = sdk_options({"cwd": "/w"})
    transport = SubprocessCLITransport(prompt="", options=options)
    for name in ("_process", "_stdout_stream", "_stdin_stream", "_stderr_stream", "_stderr_task", "_ready"):
        assert hasattr(transport, name), name
    for name in ("_build_command", "_find_cli", "_handle_stderr", "connect"):
        assert callable(getattr(SubprocessCLITransport, name)), name
    assert isinstance(subprocess_cli._ACTIVE_CHILDREN, set)
    from lifecycle.agent.adopt import AdoptingTransport  # imports the SDK's spawn_detached

    assert issubclass(AdoptingTransport, SubprocessCLITransport)
    adopting = AdoptingTransport(sdk_options({"cwd": "/w"}), EarlyCli(SID, "/w", [CLI], None))
    assert adopting._options.permission_prompt_tool_name == "stdio"


# ------------------------------------------------------------------ the early process

WAITER = [sys.executable, "-c", "import sys; sys.stdin.read()"]  # runs until its stdin closes


async def spawn(cwd: Path) -> Any:
    return await anyio.open_process(
        WAITER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(cwd)
    )


def test_taken_for_its_own_command_line_only(tmp_path: Path) -> None:
    async def go() -> None:
        process = await spawn(tmp_path)
        early = EarlyCli(SID, str(tmp_path), WAITER, process)
        assert early.take(WAITER, str(tmp_path)) is process
        assert early.take(WAITER, str(tmp_path)) is None  # once
        await early.close()
        assert process.returncode is None  # the runtime's now: not stopped here
        process.terminate()
        await process.wait()

        for argv, cwd in (([*WAITER, "x"], str(tmp_path)), (WAITER, "/")):
            other = await spawn(tmp_path)
            early = EarlyCli(SID, str(tmp_path), WAITER, other)
            assert early.take(argv, cwd) is None
            await early.close()
            assert other.returncode is not None  # stopped

    asyncio.run(go())


def test_not_taken_once_it_exited(tmp_path: Path) -> None:
    async def go() -> None:
        done = [sys.executable, "-c", "pass"]
        process = await anyio.open_process(done, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        await process.wait()
        early = EarlyCli(SID, str(tmp_path), WAITER, process)
        assert early.take(WAITER, str(tmp_path)) is None

    asyncio.run(go())


def test_one_nobody_takes_is_stopped(tmp_path: Path) -> None:
    async def go() -> None:
        process = await spawn(tmp_path)
        early = EarlyCli(SID, str(tmp_path), WAITER, process)
        early.expire_after(0.05)
        with anyio.fail_after(10):
            await process.wait()
        assert early.take(WAITER, str(tmp_path)) is None

    asyncio.run(go())


def test_launched_only_for_a_plain_session_new(tmp_path: Path) -> None:
    cli = tmp_path / "claude"
    cli.write_text(f"#!{sys.executable}\nimport sys\nsys.stdin.read()\n")
    cli.chmod(0o755)
    config = AgentConfig(cli_path=str(cli))

    async def go() -> None:
        for params in (
            None, [], {"cwd": 5}, {"cwd": "relative/dir", "mcpServers": []},
            {"cwd": str(tmp_path), "mcpServers": [{"name": "x", "command": "/bin/true", "args": [], "env": []}]},
        ):  # fmt: skip
            assert await launch_early(config, params) is None, params
        missing = await launch_early(config, {"cwd": str(tmp_path / "gone"), "mcpServers": []})
        assert missing is None  # the directory does not exist: the SDK reports it as usual
        early = await launch_early(config, {"cwd": str(tmp_path), "mcpServers": []})
        assert early is not None
        assert early.cwd == str(tmp_path) and early.argv[0] == str(cli)
        assert f"--session-id={early.session_id}" in early.argv
        process = early.process
        await early.close()
        assert process.returncode is not None

    asyncio.run(go())


# ------------------------------------------------------------------ the transport


class _Lines:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()

    async def read(self) -> bytes:
        return await self.queue.get()

    def close(self) -> None:
        pass


class _Sink:
    async def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_read_under_way_goes_to_the_next_receive() -> None:
    async def go() -> None:
        source = _Lines()
        transport = StdioTransport(source, _Sink())
        reading = asyncio.ensure_future(transport.receive())
        await asyncio.sleep(0)
        transport.unread_later(reading)
        nxt = asyncio.ensure_future(transport.receive())
        await asyncio.sleep(0)
        nxt.cancel()  # a cancelled receive loses nothing
        source.queue.put_nowait(b'{"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {}}\n')
        message = await asyncio.wait_for(transport.receive(), 5)
        assert message == {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {}}
        source.queue.put_nowait(b'{"jsonrpc": "2.0", "method": "x"}\n')
        assert await asyncio.wait_for(transport.receive(), 5) == {"jsonrpc": "2.0", "method": "x"}

    asyncio.run(go())


# ------------------------------------------------------------------ the launch window (lifecycle.agent.startup)


def _window_run(
    lines: list[bytes], monkeypatch: pytest.MonkeyPatch, importing_for: float = 5.0
) -> tuple[Any, threading.Event, list[bool], StdioTransport]:
    """``_launch_for_next`` with ``lines`` on the wire; the launch (faked) records whether the
    window was still open while it ran."""
    open_during_launch: list[bool] = []

    async def fake_launch(config: AgentConfig, params: object) -> None:
        open_during_launch.append(not window.is_set())
        await asyncio.sleep(0.01)

    monkeypatch.setattr(startup, "launch_early", fake_launch)
    window = threading.Event()

    async def go() -> tuple[Any, StdioTransport]:
        source = _Lines()
        transport = StdioTransport(source, _Sink())
        for line in lines:
            source.queue.put_nowait(line)
        importing = asyncio.ensure_future(asyncio.sleep(importing_for))
        try:
            got = await startup._launch_for_next(transport, importing, AgentConfig(), window)
        finally:
            importing.cancel()
        return got, transport

    got, transport = asyncio.run(go())
    return got, window, open_during_launch, transport


_NEW = b'{"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/p", "mcpServers": []}}\n'


def test_the_window_stays_closed_while_claude_code_is_launched(monkeypatch: pytest.MonkeyPatch) -> None:
    got, window, open_during_launch, _ = _window_run([_NEW], monkeypatch)
    assert open_during_launch == [True] and window.is_set() and got is None


def test_another_message_opens_the_window_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    line = b'{"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}}\n'
    got, window, open_during_launch, transport = _window_run([line], monkeypatch)
    assert open_during_launch == [] and window.is_set() and got is None

    async def again() -> Any:
        return await transport.receive()

    assert asyncio.run(again()) == {"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}}


def test_no_message_opens_the_window_after_its_time(monkeypatch: pytest.MonkeyPatch) -> None:
    started = time.monotonic()
    got, window, open_during_launch, _ = _window_run([], monkeypatch, importing_for=0.5)
    assert window.is_set() and got is None and open_during_launch == []
    assert time.monotonic() - started >= startup.LAUNCH_WINDOW_S


def test_the_import_waits_for_the_window_at_most_its_time(monkeypatch: pytest.MonkeyPatch) -> None:
    order: list[str] = []
    monkeypatch.setattr(startup, "warm", lambda: order.append("warm"))
    monkeypatch.setattr(startup, "import_server", lambda pause_gc: order.append(f"import pause_gc={pause_gc}"))
    started = time.monotonic()
    startup._import_agent(threading.Event(), True)  # nobody opens it
    assert time.monotonic() - started >= startup.LAUNCH_WINDOW_S
    opened = threading.Event()
    opened.set()
    started = time.monotonic()
    startup._import_agent(opened, False)
    assert time.monotonic() - started < startup.LAUNCH_WINDOW_S
    assert order == ["warm", "import pause_gc=True", "warm", "import pause_gc=False"]
