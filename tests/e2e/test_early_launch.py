"""Claude Code launched while the SDKs are imported (issue 20, item 9), end to end: through the real
ACP SDK client (or raw JSON lines), ``python -m lifecycle.agent`` and the real bundled Claude Code
CLI against the fake Anthropic API.

* The first ``session/new`` runs on the Claude Code launched for it before the agent existed: the
  process launched is the session's Claude Code, and the prompt is answered by it.
* A ``session/new`` with MCP servers launches nothing early (its servers start only after the SDK
  checked the request) and still works.
* A Claude Code launched for a ``session/new`` the SDK then refuses is stopped: when the client
  goes, no Claude Code of this run is left.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .claude_cli import AgentWorkspace, cli_pids, session_cli_pid
from .fakeapi import FakeAnthropicAPI, text_reply
from .harness import Script, agent, echo_server, run_async, select

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]


def events(workspace: AgentWorkspace, name: str) -> list[dict[str, Any]]:
    return [e for e in workspace.log() if e.get("event") == name]


def test_the_first_session_runs_on_the_claude_code_launched_for_it(tmp_path: Path) -> None:
    async def go() -> None:
        async with agent(tmp_path, Script(text_reply("Hello from the early one.")), select("reject")) as run:
            (launched,) = events(run.workspace, "runtime.early_launch")
            assert launched["session_id"] == run.sid  # the agent gave the session its id
            # The SDKs were imported the fast way (lifecycle.agent.imports) in the real process.
            (imported,) = events(run.workspace, "agent.imported")
            assert imported["docstrings_one_pass"] > 250 and imported["models_deferred"] > 400
            assert imported["gc_paused"] is True
            response = await run.prompt("hello")
            assert response.stop_reason == "end_turn"
            assert run.texts() == ["Hello from the early one."]
            (adopted,) = events(run.workspace, "runtime.early_adopted")
            assert adopted["pid"] == launched["pid"] == session_cli_pid(run.workspace.config_dir, run.sid)
            assert events(run.workspace, "runtime.early_discarded") == []
            assert len(run.api.message_requests) == 1
            # The ACP models deferred at the import are built once the first prompt is answered.
            deadline = time.monotonic() + 20
            while not events(run.workspace, "agent.models_built") and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            (built,) = events(run.workspace, "agent.models_built")
            assert built["built"] > 200

    run_async(go())


def test_a_session_new_with_mcp_servers_launches_nothing_early(tmp_path: Path) -> None:
    async def go() -> None:
        async with agent(tmp_path, Script(text_reply("Fine.")), select("reject"), mcp_servers=[echo_server()]) as run:
            response = await run.prompt("hello")
            assert response.stop_reason == "end_turn" and run.texts() == ["Fine."]
            assert events(run.workspace, "runtime.early_launch") == []
            assert len(events(run.workspace, "runtime.start")) == 1

    run_async(go())


def _line(proc: subprocess.Popen[bytes], deadline: float) -> dict[str, Any]:
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        raw = proc.stdout.readline()
        if raw.strip():
            message: dict[str, Any] = json.loads(raw)
            return message
        if not raw:
            break
    raise AssertionError("no reply from the agent")


def test_one_launched_for_a_refused_session_new_is_stopped(tmp_path: Path) -> None:
    ws = AgentWorkspace()
    ws._workspace(tmp_path)
    api = FakeAnthropicAPI(Script())
    ws.api = api
    api.start()
    try:
        with ws.stderr_path.open("w") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "lifecycle.agent"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=err, env=ws.agent_env(0), cwd=str(ws.cwd),
            )  # fmt: skip
            assert proc.stdin is not None
            deadline = time.monotonic() + 60
            init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
            # ``additionalDirectories`` must be a list: the SDK refuses the request after the launch.
            bad = {"cwd": str(ws.cwd), "mcpServers": [], "additionalDirectories": 5}
            new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": bad}
            for message in (init, new):
                proc.stdin.write(json.dumps(message).encode() + b"\n")
                proc.stdin.flush()
            assert _line(proc, deadline)["id"] == 0
            refused = _line(proc, deadline)
            assert refused["id"] == 1 and refused["error"]["code"] == -32602
            (launched,) = events(ws, "runtime.early_launch")
            proc.stdin.close()  # the client goes
            assert proc.wait(30) == 0
        (discarded,) = events(ws, "runtime.early_discarded")
        assert discarded["reason"] == "agent_stopped"
        assert not os.path.exists(f"/proc/{launched['pid']}") or _state(launched["pid"]) == "Z"
        assert cli_pids(ws.config_dir) == []
    finally:
        api.stop()


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"
