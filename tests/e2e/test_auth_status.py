"""Who is signed in (issue 52.4), on the real bundled Claude Code through the real ACP SDK client,
side by side with the reference adapter 0.101.0, the fake Anthropic API on 127.0.0.1 the only fake:

* ``agentCapabilities._meta.authStatus`` is ``{}`` and ``_auth/status_update {authStatus}`` is
  pushed after ``initialize`` (after its answer), again only when the identity changed: after a
  ``logout``, at a prompt that finds a new login; an API key is named by its variable, its value is
  in no frame (the reference's payloads, ``dist/auth-status.js``, compared frame for frame);
* ``--hide-claude-auth`` refuses a session and a turn a claude.ai subscription would pay for with
  the reference's ``authRequired`` error and ``data.reason`` (``dist/hide-claude-auth.js``), and
  nothing reaches the model.

The claude.ai login is a throwaway ``.credentials.json`` in the run's own config folder (Claude
Code's ``auth status`` reads it offline); ``HTTPS_PROXY`` points at a closed loopback port, so the
token revocation ``claude auth logout`` tries fails at once and nothing leaves the machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.connection import StreamDirection

from .claude_cli import BUNDLED_CLI, AgentWorkspace
from .fakeapi import FakeAnthropicAPI, text_reply
from .harness import Client, Script, run_async, select
from .processes import until
from .reference import ensure_reference, node_binary

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

SECRET = "sk-ant-api03-secret-value-52-4"
#: The reference's payloads (dist/auth-status.js ``mapAuthFields``, ``planLabel``, ``NOT_LOGGED_IN``).
API_KEY = {"kind": "api_key", "label": "Anthropic API key", "detail": "ANTHROPIC_API_KEY"}
MAX = {"kind": "account", "label": "Claude Max", "account": {"plan": "max"}}
NONE = {"kind": "none", "label": "Not logged in"}
#: The reference's refusal (dist/hide-claude-auth.js ``claudeSubscriptionNotSupportedError``: the
#: SDK's ``RequestError.authRequired`` puts "Authentication required: " before it, as on its wire).
REFUSED_MESSAGE = "Authentication required: This integration does not support using claude.ai subscriptions."
REASON = "claude_subscription_not_supported"

Frames = list[tuple[Any, dict[str, Any]]]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _api_key(ws: AgentWorkspace, env: dict[str, str]) -> None:
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    env["ANTHROPIC_API_KEY"] = SECRET


def _subscription_login(config_dir: Path) -> None:
    """A claude.ai Max login as ``claude /login`` stores it (the fields CLI 2.1.337 reads)."""
    oauth = {
        "accessToken": "sk-ant-oat01-throwaway",
        "refreshToken": "sk-ant-ort01-throwaway",
        "expiresAt": int(time.time() * 1000) + 365 * 86_400_000,
        "scopes": ["user:inference", "user:profile"],
        "subscriptionType": "max",
    }
    (config_dir / ".credentials.json").write_text(json.dumps({"claudeAiOauth": oauth}))


def _subscription(ws: AgentWorkspace, env: dict[str, str]) -> None:
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    env["HTTPS_PROXY"] = f"http://127.0.0.1:{_closed_port()}"
    _subscription_login(ws.config_dir)


@contextlib.asynccontextmanager
async def _spawn(
    impl: str, ws: AgentWorkspace, script: Script, prepare: Callable[[AgentWorkspace, dict[str, str]], None],
    *args: str,
) -> AsyncIterator[tuple[Any, Frames]]:  # fmt: skip
    """Ours or the reference (``impl``) on ``ws``, initialized as a legacy client."""
    api = FakeAnthropicAPI(script)
    ws.api = api
    api.start()
    env = ws.agent_env(2)
    if impl == "ours":
        command = [sys.executable, "-m", "lifecycle.agent", *args]
    else:
        env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
        env["CLAUDE_CODE_EXECUTABLE"] = str(BUNDLED_CLI)
        command = [node_binary(), str(ensure_reference() / "dist" / "index.js"), *args]
    prepare(ws, env)
    frames: Frames = []
    try:
        with (ws.tmp / f"{impl}.stderr").open("w") as stderr:
            async with acp.spawn_agent_process(
                Client(select("reject")),  # type: ignore[arg-type]
                *command,
                env=env,
                cwd=str(ws.cwd),
                transport_kwargs={"stderr": stderr},
                observers=[lambda ev: frames.append((ev.direction, ev.message))],
            ) as (conn, _proc):
                await conn._conn.send_request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
                yield conn, frames
    finally:
        api.stop()


def _pushes(frames: Frames) -> list[Any]:
    return [
        m["params"]["authStatus"]
        for d, m in frames
        if d == StreamDirection.INCOMING and m.get("method") == "_auth/status_update"
    ]


async def _pushed(frames: Frames, count: int) -> list[Any]:
    await until(lambda: len(_pushes(frames)) >= count, 60, lambda: f"pushes: {_pushes(frames)}")
    return _pushes(frames)


async def _error(conn: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(acp.RequestError) as caught:
        await conn._conn.send_request(method, params)
    return {"code": caught.value.code, "message": str(caught.value), "data": caught.value.data}


def test_an_api_key_is_named_by_its_variable_pushed_once_as_the_references(tmp_path: Path) -> None:
    async def session(impl: str) -> tuple[list[Any], Frames, int]:
        ws = AgentWorkspace()
        ws._workspace(tmp_path / impl)
        async with _spawn(impl, ws, Script(text_reply("One."), text_reply("Two.")), _api_key) as (conn, frames):
            await _pushed(frames, 1)
            new = await conn._conn.send_request("session/new", {"cwd": str(ws.cwd), "mcpServers": []})
            for text in ("first", "second"):
                prompt = {"sessionId": new["sessionId"], "prompt": [{"type": "text", "text": text}]}
                assert (await conn._conn.send_request("session/prompt", prompt))["stopReason"] == "end_turn"
            assert ws.api is not None
            return _pushes(frames), list(frames), len(ws.api.message_requests)

    async def go() -> None:
        ours, frames, requests = await session("ours")
        assert requests >= 2  # both turns reached the model: the key was used
        assert ours == [API_KEY]  # unchanged at each prompt: pushed once
        wire = json.dumps([m for _, m in frames])
        assert SECRET not in wire and SECRET[-12:] not in wire
        (init,) = [m for d, m in frames if m.get("id") == 0 and "result" in m]
        assert init["result"]["agentCapabilities"]["_meta"]["authStatus"] == {}
        positions = [i for i, (_, m) in enumerate(frames) if m.get("method") == "_auth/status_update"]
        assert positions[0] > frames.index(next(f for f in frames if f[1] is init))  # after the answer
        theirs, their_frames, _ = await session("reference")
        assert theirs == ours
        (their_init,) = [m for d, m in their_frames if m.get("id") == 0 and "result" in m]
        assert their_init["result"]["agentCapabilities"]["_meta"]["authStatus"] == {}

    run_async(go())


def test_hide_claude_auth_refuses_a_subscription_as_the_reference_and_logout_shows(tmp_path: Path) -> None:
    async def go() -> None:
        ws = AgentWorkspace()
        ws._workspace(tmp_path / "ours")
        script = Script(text_reply("Never."))
        async with _spawn("ours", ws, script, _subscription, "--hide-claude-auth") as (conn, frames):
            assert await _pushed(frames, 1) == [MAX]  # no email, no organisation, no path
            new_params = {"cwd": str(ws.cwd), "mcpServers": []}
            refused = await _error(conn, "session/new", new_params)
            assert (refused["code"], refused["message"]) == (-32000, REFUSED_MESSAGE)
            assert refused["data"]["reason"] == REASON
            assert "--hide-claude-auth" in refused["data"]["details"]  # what to do about it
            # logout: the stored login is gone, and the client is told.
            assert await conn._conn.send_request("logout", {}) == {}
            assert not (ws.config_dir / ".credentials.json").exists()
            assert _pushes(frames) == [MAX, NONE]
            # A session opened signed out, then a claude.ai login made elsewhere: the next turn
            # is refused before anything reaches the model, and the new login is pushed.
            sid = (await conn._conn.send_request("session/new", new_params))["sessionId"]
            _subscription_login(ws.config_dir)
            prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "bill me"}]}
            turn = await _error(conn, "session/prompt", prompt)
            assert (turn["code"], turn["message"], turn["data"]["reason"]) == (-32000, REFUSED_MESSAGE, REASON)
            assert _pushes(frames) == [MAX, NONE, MAX]
            assert ws.api is not None and ws.api.message_requests == []
        reference = AgentWorkspace()
        reference._workspace(tmp_path / "reference")
        async with _spawn("reference", reference, script, _subscription, "--hide-claude-auth") as (conn, theirs):
            assert await _pushed(theirs, 1) == [MAX]
            new_params = {"cwd": str(reference.cwd), "mcpServers": []}
            their_refusal = await _error(conn, "session/new", new_params)
        assert (their_refusal["code"], their_refusal["message"]) == (refused["code"], refused["message"])
        assert their_refusal["data"] == {"reason": refused["data"]["reason"]}  # ours adds the hint

    run_async(go())
