"""The agent installed as a user installs it (issue 33): the wheel ``pip wheel --no-deps .`` builds
from a copy of this checkout, installed (not editable) with its ``agent`` extra into a fresh venv,
run as ``acp-lifecycle acp`` from that venv with nothing of this checkout on its import path.

* the ACP registry's validator (agentclientprotocol/registry, ``.github/workflows/client.py``):
  its exact ``initialize``, its rule (an auth method of type ``agent`` or ``terminal``, the type
  read from ``type``, else from the ``_meta`` key, else ``agent``), and the terminal logins in the
  reference adapter's shape (dist/acp-agent.js 0.101.0: ``type: "terminal"``, ``args``,
  ``_meta["terminal-auth"]`` ``{command, args, label}``), whose command starts Claude Code;
* the real ACP SDK client through ``initialize``, ``session/new`` and one prompt against the fake
  Anthropic API on 127.0.0.1;
* a real third-party client, acpx 0.19.1 from npm (headless), through one prompt.

Rules: the venv and the wheel are built once per module (pip's cache keeps it to seconds after
the first run); acpx is installed once per machine (``~/.cache/lifecycle-tests``, as
``reference.py`` installs the reference); expected values are literals from the registry's
validator, the reference adapter and the fake API's script.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import ClientCapabilities, TextContentBlock
from product_wheel import build_wheel

from .claude_cli import AgentWorkspace
from .fakeapi import FakeAnthropicAPI, text_reply
from .reference import cache_dir, node_binary

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

ACPX = "acpx@0.19.1"
ANSWER = "Hello from the installed agent."
#: agentclientprotocol/registry .github/workflows/client.py, ``run_auth_check``: the params verbatim
VALIDATOR_INITIALIZE = {
    "protocolVersion": 1,
    "clientInfo": {"name": "ACP Registry Validator", "version": "1.0.0"},
    "clientCapabilities": {
        "terminal": True,
        "fs": {"readTextFile": True, "writeTextFile": True},
        "_meta": {"terminal_output": True, "terminal-auth": True},
    },
}


@dataclass(frozen=True)
class Installed:
    venv: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def script(self) -> Path:
        return self.venv / "bin" / "acp-lifecycle"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("installed")
    wheel = build_wheel(work)
    venv = Installed(work / "venv")
    for cmd in (
        [sys.executable, "-m", "venv", str(venv.venv)],
        [str(venv.python), "-m", "pip", "install", "-q", "--disable-pip-version-check", f"{wheel}[agent]"],
    ):
        res = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stderr[-2000:]
    return venv


def _env(home: Path) -> dict[str, str]:
    """A user's environment: PATH, a fresh HOME, no PYTHONPATH (nothing of this checkout)."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TERM": "dumb"}


def test_the_installed_package_is_the_wheel(installed: Installed, tmp_path: Path) -> None:
    code = (
        "import importlib.metadata as m, importlib.util as u, lifecycle, claude_agent_sdk, acp\n"
        "print(lifecycle.__file__)\n"
        "print(m.version('acp-lifecycle'))\n"
        "print(u.find_spec('lifecycle.conformance') is not None, u.find_spec('workshop'))\n"
    )
    res = subprocess.run(
        [str(installed.python), "-c", code], cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr[-2000:]
    site = installed.venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    assert res.stdout.splitlines() == [str(site / "lifecycle" / "__init__.py"), "0.1.0", "True None"]


def _read_line(proc: subprocess.Popen[str], deadline: float) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
    assert ready, "no answer before the deadline"
    return proc.stdout.readline()


def _validator_type(method: dict[str, Any]) -> str:
    """The registry validator's ``parse_auth_methods``: ``type``, else the ``_meta`` key, else agent."""
    meta = method.get("_meta") if isinstance(method.get("_meta"), dict) else {}
    if method.get("type"):
        return str(method["type"])
    if "terminal-auth" in meta:
        return "terminal"
    return "agent"


def test_the_registry_validators_initialize(installed: Installed, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.Popen(
        [str(installed.script), "acp"], cwd=tmp_path, env=_env(home), text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdin is not None
    try:
        proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": VALIDATOR_INITIALIZE})
        )
        proc.stdin.write("\n")
        proc.stdin.flush()
        response = json.loads(_read_line(proc, time.monotonic() + 60))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert response["id"] == 1 and "error" not in response
    result = response["result"]
    assert result["protocolVersion"] == 1
    methods = result["authMethods"]
    assert [_validator_type(m) for m in methods] == ["terminal", "terminal", "agent"]
    python = str(installed.python)
    assert methods[:2] == [
        {
            "id": "claude-ai-login",
            "name": "Claude Subscription",
            "description": "Use Claude subscription",
            "type": "terminal",
            "args": ["--cli", "auth", "login", "--claudeai"],
            "_meta": {
                "terminal-auth": {
                    "command": python,
                    "args": ["-m", "lifecycle.agent", "--cli", "auth", "login", "--claudeai"],
                    "label": "Claude Login",
                }
            },
        },
        {
            "id": "console-login",
            "name": "Anthropic Console",
            "description": "Use Anthropic Console (API usage billing)",
            "type": "terminal",
            "args": ["--cli", "auth", "login", "--console"],
            "_meta": {
                "terminal-auth": {
                    "command": python,
                    "args": ["-m", "lifecycle.agent", "--cli", "auth", "login", "--console"],
                    "label": "Anthropic Console Login",
                }
            },
        },
    ]
    assert methods[2]["id"] == "claude-login" and "type" not in methods[2]
    # The terminal command reaches Claude Code: the same command with `--version` for the login.
    login = methods[0]["_meta"]["terminal-auth"]
    cli_args = login["args"][: login["args"].index("--cli") + 1]
    res = subprocess.run(
        [login["command"], *cli_args, "--version"],
        cwd=tmp_path, env=_env(home), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (res.returncode, res.stdout) == (0, "2.1.337 (Claude Code)\n"), res.stderr[-1000:]


class _Client:
    """An ACP client that records the session updates."""

    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        self.updates.append(update.model_dump(by_alias=True, exclude_none=True))

    async def request_permission(self, *args: Any, **kw: Any) -> Any:
        raise AssertionError("the one prompt asks no permission")


def _workspace(tmp_path: Path, api: FakeAnthropicAPI) -> tuple[AgentWorkspace, dict[str, str]]:
    """The e2e harness's isolated Claude Code environment against ``api``, without this checkout
    on the import path (``AgentWorkspace.agent_env`` puts it there for the source-tree agent)."""
    ws = AgentWorkspace()
    ws._workspace(tmp_path)
    ws.api = api
    env = ws.agent_env(2)
    del env["PYTHONPATH"]
    return ws, env


def test_a_prompt_through_the_installed_agent(installed: Installed, tmp_path: Path) -> None:
    api = FakeAnthropicAPI([text_reply(ANSWER)])
    api.start()
    ws, env = _workspace(tmp_path, api)
    client = _Client()

    async def go() -> Any:
        with ws.stderr_path.open("w") as stderr:
            async with acp.spawn_agent_process(
                client,  # type: ignore[arg-type]
                str(installed.script), "acp",
                env=env, cwd=str(ws.cwd), transport_kwargs={"stderr": stderr},
            ) as (conn, _proc):  # fmt: skip
                init = await asyncio.wait_for(
                    conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities()), 60
                )
                assert init.agent_info is not None and init.agent_info.version == "0.1.0"
                sid = (await asyncio.wait_for(conn.new_session(cwd=str(ws.cwd), mcp_servers=[]), 120)).session_id
                prompt = [TextContentBlock(type="text", text="Say hello")]
                return await asyncio.wait_for(conn.prompt(session_id=sid, prompt=prompt), 120)

    try:
        response = asyncio.run(go())
    finally:
        api.stop()
    assert response.stop_reason == "end_turn"
    chunks = [u["content"]["text"] for u in client.updates if u["sessionUpdate"] == "agent_message_chunk"]
    assert "".join(chunks) == ANSWER
    assert len(api.message_requests) >= 1


def _acpx() -> Path:
    """acpx's CLI, installed once per machine with npm (like the reference adapter, reference.py)."""
    node_binary()
    root = cache_dir().parent / ACPX.replace("@", "-")
    cli = root / "node_modules" / "acpx" / "dist" / "cli.js"
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not cli.is_file():
            res = subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(root), ACPX],
                capture_output=True, text=True, timeout=420,
            )  # fmt: skip
            assert res.returncode == 0 and cli.is_file(), res.stderr[-2000:]
    return cli


def test_acpx_drives_the_installed_agent(installed: Installed, tmp_path: Path) -> None:
    cli = _acpx()
    api = FakeAnthropicAPI([text_reply(ANSWER)])
    api.start()
    ws, env = _workspace(tmp_path, api)
    env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
    cmd = [
        node_binary(), str(cli), "--agent", f"{installed.script} acp", "--cwd", str(ws.cwd),
        "--format", "json", "--approve-all", "--timeout", "120", "exec", "Say hello",
    ]  # fmt: skip
    try:
        res = subprocess.run(cmd, cwd=ws.cwd, env=env, capture_output=True, text=True, timeout=300)
    finally:
        api.stop()
    assert res.returncode == 0, res.stderr[-2000:]
    frames = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    methods = [f["method"] for f in frames if "method" in f and "id" in f]
    assert methods[:3] == ["initialize", "session/new", "session/prompt"]
    (prompt_id,) = [f["id"] for f in frames if f.get("method") == "session/prompt"]
    (result,) = [f["result"] for f in frames if f.get("id") == prompt_id and "result" in f]
    assert result["stopReason"] == "end_turn"
    chunks = [
        f["params"]["update"]["content"]["text"]
        for f in frames
        if f.get("method") == "session/update" and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert "".join(chunks) == ANSWER
