"""The real codex-acp 0.16.0 (npm, pinned) behind ``lifecycle proxy`` (issue 53.4, 53.5).

codex-acp runs against the fake OpenAI Responses API on 127.0.0.1 (tests/e2e/fakeopenai.py) through
a ``model_providers`` entry with its ``base_url`` and no retries, in a private ``CODEX_HOME``. What
codex-acp answers (recorded here; issue 53): every failure ``-32603 "Internal error"`` with the
words in ``data.message`` and the kind in ``data.codex_error_info``; a 429 is ``exceeded retry
limit, last status: 429 Too Many Requests`` (kind ``response_too_many_failed_attempts`` with
``http_status_code: 429``); a 500 is Codex's own "We're currently experiencing high demand, ..."
(kind ``internal_server_error``); a 401 is ``unexpected status 401 Unauthorized: <provider's
text>, url: <the API URL>`` (kind ``other``; not driven here: codex-acp 0.16.0 sometimes answers
no prompt after it, so tests/test_proxy_relay.py holds its recorded frame). Every prompt starts
with the notice "Model metadata for `fake-model` not found. ..." as agent text. codex-acp does not exit on stdin EOF.

* A plain client gets from the proxy exactly the lines it gets from codex-acp alone (byte for byte,
  once the session ids and the fake API's port are set aside, and codex-acp's commands updates,
  which come on their own time in any run).
* A capable client gets one record per failure and the answers as codex-acp sent them.
* The client going away stops codex-acp, which ignores EOF (the proxy's SIGTERM to its group).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from .fakemodel import Text
from .fakeopenai import FakeOpenAIAPI, openai_error
from .processes import descendants
from .proxy_agents import CAPABLE, CODEX, LineClient, checkout_env, ensure_npm_agent, gone_within, proxy_command

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

ANSWER = "Hello from the fake Responses API."
SCRIPT = [
    Text(ANSWER),
    openai_error(429, "Rate limit reached for requests.", "rate_limit_exceeded"),
    openai_error(500, "The server had an error while processing your request.", "server_error"),
]
_PORT_RE = re.compile(rb"127\.0\.0\.1:\d+")


@pytest.fixture(scope="module")
def codex() -> Path:
    return ensure_npm_agent(CODEX)


def _command(codex: Path, base_url: str) -> list[str]:
    provider = (
        f'model_providers.p={{name="P",base_url="{base_url}",wire_api="responses",env_key="P_KEY",'
        "request_max_retries=0,stream_max_retries=0}"
    )
    return [str(codex), "-c", 'model_provider="p"', "-c", 'model="fake-model"', "-c", provider]


def _run(root: Path, codex: Path, caps: dict[str, Any], *, proxied: bool) -> tuple[list[bytes], list[Any], int]:
    (root / "codex").mkdir(parents=True)
    (root / "project").mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(root), "CODEX_HOME": str(root / "codex"), "P_KEY": "fake-key"}
    with FakeOpenAIAPI(SCRIPT) as api:
        command = _command(codex, api.base_url)
        client = LineClient(
            proxy_command(*command) if proxied else command,
            env=checkout_env(env),
            cwd=root / "project",
            stderr=root / "stderr",
        )
        try:
            assert "result" in client.request("initialize", {"protocolVersion": 1, "clientCapabilities": caps})
            # one session per prompt: codex-acp 0.16.0 sometimes sends no request for a prompt that
            # follows a failed one in the same session (the failed turn still ending inside it)
            sids, answers = [], []
            for _ in SCRIPT:
                sid = client.request("session/new", {"cwd": str(root / "project"), "mcpServers": []})["result"][
                    "sessionId"
                ]
                sids.append(sid)
                params = {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}
                answers.append(client.request("session/prompt", params))
            tree = descendants(client.proc.pid)
            if proxied:
                code = client.close()
                assert gone_within(tree, 20) == [], "codex-acp or a descendant outlived the proxy"
            else:
                client.kill()  # codex-acp does not exit on EOF
                code = 0
        finally:
            client.kill()
    lines = [_PORT_RE.sub(b"127.0.0.1:<port>", line) for line in client.lines]
    for n, sid in enumerate(sids):
        lines = [line.replace(sid.encode(), f"<session {n}>".encode()) for line in lines]
    return lines, answers, code


def _in_order(lines: list[bytes]) -> list[bytes]:
    return [line for line in lines if b'"available_commands_update"' not in line]


def test_a_plain_client_gets_the_same_lines_and_codex_is_stopped_when_it_goes_away(codex: Path, tmp_path: Path) -> None:
    direct, answers, _ = _run(tmp_path / "direct", codex, {}, proxied=False)
    assert [a.get("error", {}).get("data", {}).get("codex_error_info") for a in answers] == [
        None,
        {"response_too_many_failed_attempts": {"http_status_code": 429}},
        "internal_server_error",
    ]
    proxied, _, code = _run(tmp_path / "proxied", codex, {}, proxied=True)
    # codex-acp sends a session's available_commands_update on its own time (before or after a
    # turn's lines, or after the last answer, when the client may be gone): set aside, every other
    # line in its order
    assert _in_order(proxied) == _in_order(direct)
    assert code == 128 + 15  # codex-acp ignored EOF: the proxy's SIGTERM ended it


def test_a_capable_client_gets_a_record_per_failure(codex: Path, tmp_path: Path) -> None:
    lines, answers, _ = _run(tmp_path, codex, CAPABLE, proxied=True)
    assert json.loads(lines[0])["result"]["agentCapabilities"]["_meta"]["jetbrains"]["air"]["capabilities"] == [
        "sessionFailure"
    ]
    assert answers[0]["result"] == {"stopReason": "end_turn"}
    records = [a["result"]["_meta"]["jetbrains"]["air"]["sessionFailure"] for a in answers[1:]]
    # spec "Categories"/"Actions": a rate limit limit/retry, a provider failure service/retry,
    # the titles are codex-acp's own words (Codex's, in place of the provider's: issue 53)
    assert [(r["category"], r["title"], r["actions"]) for r in records] == [
        ("limit", "exceeded retry limit, last status: 429 Too Many Requests", ["retry"]),
        ("service", "We're currently experiencing high demand, which may cause temporary errors.", ["retry"]),
    ]
