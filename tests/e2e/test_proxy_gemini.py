"""The real gemini-cli 0.61.0 (npm, pinned) behind ``lifecycle proxy`` (issue 53.1, 53.2, 53.4).

gemini-cli runs ``--experimental-acp`` against the fake Gemini API on 127.0.0.1
(``GOOGLE_GEMINI_BASE_URL``, tests/e2e/fakegemini.py), in a private HOME whose settings pick the
API-key login and one attempt per request (``general.maxAttempts: 1``: no minutes of back-off).
What gemini-cli answers (recorded here, and in issue 53): a normal answer streams an
``agent_message_chunk`` and ends ``end_turn``; an HTTP 429 is the JSON-RPC error ``{code: 429,
message: <Google's message>}``; a 500 is ``{code: 500, message: <Google's raw JSON body>}``.

* A plain client gets from the proxy exactly the lines it gets from gemini-cli alone (byte for
  byte, once the random session id is set aside), for an answer, a 429 and a 500.
* A capable client gets the prompt answered ``end_turn`` with a typed record for each failure
  (category and actions from the gemini family's table, the title Google's own words, out of the
  raw JSON body for the 500), the normal answer untouched, and the proxy's advertisement.
* gemini-cli killed during a prompt: the capable client's prompt is still answered, with a
  ``connection`` record offering ``new_session``, and the proxy exits.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from .fakegemini import FakeGeminiAPI, Stall, Text, google_error
from .proxy_agents import CAPABLE, GEMINI, LineClient, checkout_env, ensure_npm_agent, proxy_command

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

ANSWER = "Hello from the fake Gemini API."
RATE = "Resource has been exhausted (e.g. check quota)."
INTERNAL = "Internal error encountered."
SCRIPT = [
    Text(ANSWER),
    google_error(429, RATE, "RESOURCE_EXHAUSTED"),
    google_error(500, INTERNAL, "INTERNAL"),
    Text(ANSWER),
]


@pytest.fixture(scope="module")
def gemini() -> Path:
    return ensure_npm_agent(GEMINI)


def _env(root: Path, base_url: str) -> dict[str, str]:
    home = root / "home"
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "model": {"name": "gemini-2.5-flash"},
        "general": {"maxAttempts": 1},
    }
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "GOOGLE_GEMINI_BASE_URL": base_url,
        "GEMINI_API_KEY": "fake-gemini-key-for-tests",
        "GEMINI_CLI_NO_RELAUNCH": "true",
    }
    return checkout_env(env)


def _session(root: Path, command: list[str], base_url: str, caps: dict[str, Any]) -> tuple[LineClient, str]:
    (root / "project").mkdir(parents=True, exist_ok=True)
    client = LineClient(command, env=_env(root, base_url), cwd=root / "project", stderr=root / "stderr")
    init = client.request("initialize", {"protocolVersion": 1, "clientCapabilities": caps})
    assert "result" in init, init
    sid = client.request("session/new", {"cwd": str(root / "project"), "mcpServers": []})["result"]["sessionId"]
    return client, sid


def _prompt(client: LineClient, sid: str) -> dict[str, Any]:
    return client.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]})


def _run(root: Path, command: list[str], caps: dict[str, Any]) -> tuple[list[bytes], list[dict[str, Any]]]:
    """Every line a client got for SCRIPT's three prompts (the session id set aside), and the answers."""
    with FakeGeminiAPI(SCRIPT) as api:
        client, sid = _session(root, command, api.base_url, caps)
        try:
            answers = [_prompt(client, sid) for _ in range(3)]
        finally:
            assert client.close() == 0
        assert [m for m, _ in api.requests] == ["POST"] * 3
    return [line.replace(sid.encode(), b"<session>") for line in client.lines], answers


@pytest.fixture(scope="module")
def direct(gemini: Path, tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    lines, answers = _run(tmp_path_factory.mktemp("direct"), [str(gemini), "--experimental-acp"], {})
    # what gemini-cli 0.61.0 itself answers (issue 53): the HTTP status as the code, the raw body for a 500
    assert [a.get("error") for a in answers] == [
        None,
        {"code": 429, "message": RATE},
        {
            "code": 500,
            "message": json.dumps(
                {"error": {"code": 500, "message": INTERNAL, "status": "INTERNAL"}}, separators=(",", ":")
            ),
        },
    ]
    return lines


def test_a_plain_client_gets_the_same_lines_through_the_proxy(
    gemini: Path, direct: list[bytes], tmp_path: Path
) -> None:
    proxied, _ = _run(tmp_path, proxy_command(str(gemini), "--experimental-acp"), {})
    assert proxied == direct


def test_a_capable_client_gets_a_typed_record_for_each_failure(
    gemini: Path, direct: list[bytes], tmp_path: Path
) -> None:
    lines, answers = _run(tmp_path, proxy_command(str(gemini), "--experimental-acp"), CAPABLE)
    init = json.loads(lines[0])["result"]
    assert init["agentCapabilities"]["_meta"]["jetbrains"] == {
        "air": {"version": 1, "capabilities": ["sessionFailure"]}
    }
    assert init["agentInfo"]["name"] == "gemini-cli"
    # the normal answer as gemini-cli sent it
    assert answers[0]["result"]["stopReason"] == "end_turn" and "jetbrains" not in answers[0]["result"]["_meta"]
    records = [a["result"]["_meta"]["jetbrains"]["air"]["sessionFailure"] for a in answers[1:]]
    assert [a["result"]["stopReason"] for a in answers[1:]] == ["end_turn", "end_turn"]
    # spec "Categories": a rate limit is limit, a provider failure service; "Actions": retry for both
    assert [(r["revision"], r["category"], r["severity"], r["title"], r["actions"]) for r in records] == [
        (1, "limit", "error", RATE, ["retry"]),
        (1, "service", "error", INTERNAL, ["retry"]),
    ]
    # spec "Identity": two occurrences, two ids, each <turnId>:error
    assert len({r["id"] for r in records}) == 2 and all(r["id"].endswith(":error") for r in records)
    # every other line is the one a plain client gets from gemini-cli alone
    assert _others(lines) == _others(direct)


def _others(lines: list[bytes]) -> list[bytes]:
    """Lines other than initialize's answer and the failed prompts' answers."""
    out = []
    for line in lines:
        msg = json.loads(line)
        if msg.get("id") in (1, 4, 5) and "method" not in msg:
            continue
        out.append(line)
    return out


def _children(pid: int) -> list[int]:
    raw = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(p) for p in raw.split()]


def test_gemini_killed_mid_prompt_still_answers_the_prompt(gemini: Path, tmp_path: Path) -> None:
    with FakeGeminiAPI([Stall()]) as api:
        client, sid = _session(tmp_path, proxy_command(str(gemini), "--experimental-acp"), api.base_url, CAPABLE)
        try:
            params = {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}
            client.send_line(
                json.dumps({"jsonrpc": "2.0", "id": 99, "method": "session/prompt", "params": params}).encode()
            )
            assert api.stalled.wait(60), "gemini-cli sent no request"
            [agent] = _children(client.proc.pid)
            os.kill(agent, signal.SIGKILL)
            while (msg := client.next_message()).get("id") != 99:
                pass
            assert client.proc.wait(30) == 128 + signal.SIGKILL  # as a shell reports a killed child
        finally:
            client.kill()
    assert msg["result"]["stopReason"] == "end_turn"
    record = msg["result"]["_meta"]["jetbrains"]["air"]["sessionFailure"]
    # spec "Categories": lost transport is connection; "Actions": transport loss -> new_session
    assert (record["category"], record["severity"], record["actions"]) == ("connection", "error", ["new_session"])
    assert record["title"] == "The agent stopped during this turn. Start a new session to go on."
