"""The real opencode 1.18.33 (npm ``opencode-ai``, pinned) behind ``lifecycle proxy`` (issue 53.4).

``opencode acp`` runs against the fake OpenAI Chat Completions API on 127.0.0.1
(tests/e2e/fakeopenai.py) through a provider in ``OPENCODE_CONFIG_CONTENT``, its ``small_model``
(session titles) a model the fake answers apart from the script, in a private HOME and XDG folders.
What opencode answers (recorded here; issue 53): a normal answer streams ``agent_message_chunk``s
and ends ``end_turn``; a 401 is ``-32603 "Internal error: <the provider's message>"`` with
``data: {"service": "session", "errorName": "APIError"}``. (Without ``retry-after`` it retries a 429
or a 5xx forever without a word: not driven here.)

* A plain client gets from the proxy exactly the lines it gets from opencode alone (byte for byte,
  once opencode's random session and message ids are set aside).
* A capable client gets the failure as a record: ``APIError`` is the opencode table's
  ``service`` / ``retry`` (the error names no status), the title the provider's words without
  JSON-RPC's "Internal error: ".
* The session loaded again (issue 53.2): opencode replays each user message as one chunk with its
  own ``messageId``; a plain client gets the replay as opencode sends it, a capable one also gets
  the kept record again, after the failed prompt's user message, with the same id and revision.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from .fakemodel import Text
from .fakeopenai import SIDE_MODEL, FakeOpenAIAPI, openai_error
from .proxy_agents import CAPABLE, OPENCODE, LineClient, checkout_env, ensure_npm_agent, proxy_command

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

ANSWER = "Hello from the fake Chat Completions API."
KEY_MESSAGE = "Incorrect API key provided."
SCRIPT = [Text(ANSWER), openai_error(401, KEY_MESSAGE, "invalid_api_key")]
_RANDOM_RE = re.compile(rb"\b(?:ses|msg|prt)_[A-Za-z0-9]+")


@pytest.fixture(scope="module")
def opencode() -> Path:
    return ensure_npm_agent(OPENCODE)


def _env(root: Path, base_url: str) -> dict[str, str]:
    models = {"fake-model": {"name": "Fake"}, SIDE_MODEL: {"name": "Fake small"}}
    provider = {"npm": "@ai-sdk/openai-compatible", "name": "Fake", "options": {"baseURL": base_url, "apiKey": "k"}}
    config = {
        "provider": {"fake": {**provider, "models": models}},
        "model": "fake/fake-model",
        "small_model": f"fake/{SIDE_MODEL}",
    }
    env = {"PATH": os.environ["PATH"], "HOME": str(root), "OPENCODE_CONFIG_CONTENT": json.dumps(config)}
    for name in ("MODELS_FETCH", "AUTOUPDATE", "LSP_DOWNLOAD", "DEFAULT_PLUGINS"):
        env[f"OPENCODE_DISABLE_{name}"] = "true"
    for name in ("DATA", "CONFIG", "CACHE", "STATE"):
        env[f"XDG_{name}_HOME"] = str(root / name.lower())
    return checkout_env(env)


def _run(root: Path, command: list[str], caps: dict[str, Any]) -> tuple[list[bytes], list[dict[str, Any]]]:
    (root / "project").mkdir(parents=True)
    with FakeOpenAIAPI(SCRIPT) as api:
        client = LineClient(command, env=_env(root, api.base_url), cwd=root / "project", stderr=root / "stderr")
        try:
            assert "result" in client.request("initialize", {"protocolVersion": 1, "clientCapabilities": caps})
            sid = client.request("session/new", {"cwd": str(root / "project"), "mcpServers": []})["result"]["sessionId"]
            params = {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}
            answers = [client.request("session/prompt", params) for _ in SCRIPT]
            # the session loaded again in the same process: opencode replays it (issue 53.2)
            load = {"sessionId": sid, "cwd": str(root / "project"), "mcpServers": []}
            assert "result" in client.request("session/load", load)
            assert client.close() == 0
        finally:
            client.kill()
    return [_RANDOM_RE.sub(b"<id>", line) for line in client.lines], answers


def test_a_plain_client_gets_the_same_lines_through_the_proxy(opencode: Path, tmp_path: Path) -> None:
    direct, answers = _run(tmp_path / "direct", [str(opencode), "acp"], {})
    assert answers[1]["error"] == {
        "code": -32603,
        "message": f"Internal error: {KEY_MESSAGE}",
        "data": {"service": "session", "errorName": "APIError"},
    }
    proxied, _ = _run(tmp_path / "proxied", proxy_command(str(opencode), "acp"), {})
    assert proxied == direct


def test_a_capable_client_gets_a_record(opencode: Path, tmp_path: Path) -> None:
    lines, answers = _run(tmp_path, proxy_command(str(opencode), "acp"), CAPABLE)
    assert json.loads(lines[0])["result"]["agentCapabilities"]["_meta"]["jetbrains"]["air"]["capabilities"] == [
        "sessionFailure"
    ]
    assert answers[0]["result"]["stopReason"] == "end_turn" and answers[0]["result"]["_meta"] == {}
    record = answers[1]["result"]["_meta"]["jetbrains"]["air"]["sessionFailure"]
    assert answers[1]["result"]["stopReason"] == "end_turn"
    assert (record["category"], record["severity"], record["title"], record["actions"]) == (
        "service",
        "error",
        KEY_MESSAGE,
        ["retry"],
    )
    # session/load: opencode 1.18.33 replays each user message (one chunk, its own messageId) and
    # the answer's text; the proxy sends the kept record again at its place, after the failed
    # prompt's user message, with the same id and revision (issue 53.2; docs/proxy.md "session/load")
    messages = [json.loads(line) for line in lines]
    # request ids: initialize 1, session/new 2, the prompts 3 and 4, session/load 5
    ends = [i for i, m in enumerate(messages) if m.get("id") in (4, 5) and "method" not in m]
    replay = [m["params"]["update"] for m in messages[ends[0] + 1 : ends[1]] if m.get("method") == "session/update"]
    replay = [u for u in replay if u["sessionUpdate"] != "available_commands_update"]
    assert [u["sessionUpdate"] for u in replay] == [
        "user_message_chunk",
        "agent_message_chunk",
        "user_message_chunk",
        "session_info_update",
    ]
    assert replay[3]["_meta"]["jetbrains"]["air"]["sessionFailure"] == record
