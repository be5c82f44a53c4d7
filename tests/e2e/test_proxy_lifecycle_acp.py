"""Our own ``lifecycle acp`` behind ``lifecycle proxy`` (issue 53.4): the real Claude Code CLI against
the fake Anthropic API on 127.0.0.1.

* A plain client (legacy mode) gets through the proxy the same lines it gets from ``lifecycle
  acp`` alone, for an answer and a 429 (the reference's legacy JSON-RPC error): byte for byte, once
  the random ids (the session's, Claude Code's message and tool ids) are set aside.
* A capable client: ``lifecycle acp`` advertises ``sessionFailure`` itself, so the proxy passes it
  through (issue 53.1): the initialize answer is the agent's, and the failure's record is the one
  ``lifecycle acp`` made, once.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from .claude_cli import AgentWorkspace
from .fakeapi import FakeAnthropicAPI, error_reply, text_reply
from .proxy_agents import CAPABLE, LineClient, proxy_command

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

AGENT = [sys.executable, "-m", "lifecycle.agent"]
_RANDOM_RE = re.compile(
    rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|toolu_[A-Za-z0-9]+|msg_[A-Za-z0-9]+"
)


def _run(root: Path, command: list[str], caps: dict[str, Any]) -> tuple[list[bytes], list[dict[str, Any]]]:
    ws = AgentWorkspace()
    ws._workspace(root)
    script = [text_reply("Hello through the proxy."), error_reply(429, "rate_limit_error", "Slow down, please.")]
    ws.api = api = FakeAnthropicAPI(script, then=error_reply(429, "rate_limit_error", "Slow down, please."))
    api.start()
    try:
        client = LineClient(command, env=ws.agent_env(0), cwd=ws.cwd, stderr=ws.stderr_path)
        try:
            assert "result" in client.request("initialize", {"protocolVersion": 1, "clientCapabilities": caps}, 120)
            # who is signed in (issue 52.4): pushed once the agent's bounded identity read lands,
            # which is waited for here so that both runs hold it, wherever it falls among the turns
            while not any(b'"_auth/status_update"' in line for line in client.lines):
                client.next_message(60)
            sid = client.request("session/new", {"cwd": str(ws.cwd), "mcpServers": []}, 120)["result"]["sessionId"]
            params = {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}
            answers = [client.request("session/prompt", params, 120) for _ in range(2)]
        finally:
            assert client.close(60) == 0
    finally:
        api.stop()
    return [_RANDOM_RE.sub(b"<id>", line) for line in client.lines], answers


def _turns(lines: list[bytes]) -> list[bytes]:
    # Claude Code names the session on its own time (a side request): the title update may come
    # before or after a turn's frames, so it is compared apart from them. So is who is signed in
    # (``_auth/status_update``, issue 52.4): pushed when the agent's identity read lands, which is
    # on the CLI's time too; the multiset below still holds both sides to the same pushes.
    return [
        line
        for line in lines
        if (b'"session_info_update"' not in line or b'"sessionFailure"' in line)
        and b'"_auth/status_update"' not in line
    ]


def test_a_plain_client_gets_the_same_lines_through_the_proxy(tmp_path: Path) -> None:
    direct, answers = _run(tmp_path / "direct", AGENT, {})
    # the legacy answers (docs/design.md "Legacy clients"): the text, then -32603 with Claude's words
    assert answers[0]["result"]["stopReason"] == "end_turn"
    assert answers[1]["error"]["code"] == -32603
    proxied, _ = _run(tmp_path / "proxied", proxy_command(*AGENT), {})
    assert _turns(proxied) == _turns(direct)
    assert sorted(proxied) == sorted(direct)
    # the identity pushed once on each side, the same: the workspace's gateway token (cli_env.py
    # ``auth="gateway"``), named by its variable
    pushed = [line for line in direct if b'"_auth/status_update"' in line]
    assert len(pushed) == 1 and b'"detail":"ANTHROPIC_AUTH_TOKEN"' in pushed[0], pushed


def test_a_capable_client_gets_lifecycle_acps_own_records_untouched(tmp_path: Path) -> None:
    lines, answers = _run(tmp_path, proxy_command(*AGENT), CAPABLE)
    assert b'"capabilities":["sessionFailure"]' in lines[0]
    record = answers[1]["result"]["_meta"]["jetbrains"]["air"]["sessionFailure"]
    # lifecycle acp's own record of a 429 (README's conditions table: rate_limit, limit, retry)
    assert (record["category"], record["actions"], record["revision"]) == ("limit", ["retry"], 1)
    assert sum(line.count(b'"sessionFailure":{') for line in lines) == 1
