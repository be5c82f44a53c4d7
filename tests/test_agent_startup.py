"""``lifecycle acp`` answers ``initialize`` before the SDKs are imported (lifecycle.agent.startup):
the fast answer is exactly the SDK-based handler's, and nothing heavy is imported before it; the
log processor it installs (``_redact_log_fields``) redacts and bounds every field."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import pytest

AIR = {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}
CASES: dict[str, dict[str, Any]] = {
    "capable": {"protocolVersion": 1, "clientCapabilities": {"_meta": AIR}},
    "legacy": {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}, "terminal": False}},
    "none": {"protocolVersion": 1},
    "malformed": {
        "protocolVersion": 1,
        "clientCapabilities": {"_meta": {"jetbrains": {"air": {"version": "1", "capabilities": "sessionFailure"}}}},
    },
    "notices": {
        "protocolVersion": 1,
        "clientCapabilities": {"session": {"notices": {}}, "_meta": AIR},
        "clientInfo": {"name": "Zed", "version": "1"},
    },
    "terminal": {"protocolVersion": 1, "clientCapabilities": {"auth": {"terminal": True}}},
}
AUTH = [
    {
        "id": "claude-login",
        "name": "Log in to Claude",
        "description": "Checks for Claude credentials: run `claude auth login` in a terminal (or set "
        "ANTHROPIC_API_KEY), then continue.",
    }
]
# The reference adapter's terminal logins (dist/acp-agent.js, ``initialize``), for a client that
# runs them (``clientCapabilities.auth.terminal``).
TERMINAL_AUTH = [
    {
        "id": "claude-ai-login",
        "name": "Claude Subscription",
        "description": "Use Claude subscription",
        "type": "terminal",
        "args": ["--cli", "auth", "login", "--claudeai"],
    },
    {
        "id": "console-login",
        "name": "Anthropic Console",
        "description": "Use Anthropic Console (API usage billing)",
        "type": "terminal",
        "args": ["--cli", "auth", "login", "--console"],
    },
]
INFO = {"name": "lifecycle-claude-acp", "title": "Claude (lifecycle)", "version": "0.1.0"}
# Issue 20: exactly what works (images and embedded context, MCP over http and sse, session
# list/resume/close, load); issue 31: fork, delete and additional directories.
WORKS = {
    "loadSession": True,
    "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
    "mcpCapabilities": {"http": True, "sse": True, "acp": False},
    "sessionCapabilities": {"list": {}, "resume": {}, "close": {}}
    | {"fork": {}, "delete": {}, "additionalDirectories": {}}
    # Issue 50.2: the client's system prompt in both modes (the reference's SYSTEM_PROMPT_CAPABILITY,
    # dist/client-system-prompt.js).
    | {"systemPrompt": {"mode": {"override": {}}}},
    "auth": {"logout": {}},
    # Issue 50.B: the reference adapter 0.101.0's (dist/acp-agent.js, ``initialize``): a prompt sent
    # while a turn runs is queued, and answered with its own reply. Issue 52.4: its ``authStatus``
    # marker, always empty (dist/auth-status.js ``authStatusCapability``).
    "_meta": {"claudeCode": {"promptQueueing": True}, "authStatus": {}},
    # Issue 52.4: the reference's ``providers: {}`` (dist/acp-agent.js ``initialize``: "Advertised
    # unconditionally"): providers/list, set and disable are served.
    "providers": {},
}
CAPABLE = {**WORKS, "_meta": {"claudeCode": {"promptQueueing": True}, "authStatus": {}, **AIR}}
#: The result's own ``_meta``, the reference's (``_session/steering`` is served).
STEERING = {"steering": {"supported": True}}


def _expected(case: str) -> dict[str, Any]:
    caps = CAPABLE if case in ("capable", "notices") else WORKS
    auth = TERMINAL_AUTH + AUTH if case == "terminal" else AUTH
    return {"protocolVersion": 1, "agentCapabilities": caps, "authMethods": auth, "agentInfo": INFO, "_meta": STEERING}


class _Writer:
    def __init__(self) -> None:
        self.buf = b""

    def write(self, data: bytes) -> None:
        self.buf += data

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        pass


def _serve(lines: list[dict[str, Any]], *, start_early: bool = True) -> list[dict[str, Any]]:
    from lifecycle.agent import AgentConfig, serve

    async def go() -> bytes:
        reader, writer = asyncio.StreamReader(), _Writer()
        reader.feed_data(b"".join((json.dumps(m) + "\n").encode() for m in lines))
        reader.feed_eof()
        await serve(AgentConfig(start_early=start_early), writer, reader)
        return writer.buf

    return [json.loads(x) for x in asyncio.run(go()).splitlines()]


async def _sdk_answer(params: dict[str, Any]) -> dict[str, Any]:
    from acp.schema import InitializeRequest

    from lifecycle.agent import ClaudeAcpAgent

    req = InitializeRequest.model_validate(params)
    resp = await ClaudeAcpAgent().initialize(
        protocol_version=req.protocol_version, client_capabilities=req.client_capabilities, client_info=req.client_info
    )
    # A dict (the SDK's model has no sessionCapabilities.systemPrompt): sent as it is.
    out: dict[str, Any] = resp
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_initialize_is_the_sdk_handlers_answer(case: str) -> None:
    from lifecycle.agent.startup import initialize_result

    answer = initialize_result(CASES[case])
    assert answer is not None
    assert answer[0] == _expected(case) == asyncio.run(_sdk_answer(CASES[case]))
    assert answer[1].notices is (case == "notices")
    [reply] = _serve([{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": CASES[case]}])
    assert reply == {"jsonrpc": "2.0", "id": 0, "result": _expected(case)}


def test_constants_agree_with_the_sdk_and_the_agent() -> None:
    import acp

    from lifecycle.agent import ClaudeAcpAgent
    from lifecycle.agent.startup import PROTOCOL_VERSION, RESERVED_KWARGS
    from lifecycle.agent.transport import reserved_kwargs

    assert acp.PROTOCOL_VERSION == PROTOCOL_VERSION
    assert reserved_kwargs(ClaudeAcpAgent()) == RESERVED_KWARGS


#: What the ACP SDK's own handler answers to an initialize the fast path does not take (observed
#: with the installed SDK, then written out): it still answers the odd-but-parseable ones, as a
#: legacy client (no negotiated capability), and refuses missing params as invalid.
INVALID_PARAMS = {
    "code": -32602,
    "message": "Invalid params",
    "data": {
        "errors": [
            {
                "type": "model_type",
                "loc": [],
                "msg": "Input should be a valid dictionary or instance of InitializeRequest",
                "input": None,
                "ctx": {"class_name": "InitializeRequest"},
            }
        ]
    },
}


@pytest.mark.parametrize(
    ("params", "answer"),
    [
        ({"protocolVersion": "x"}, {"result": _expected("plain")}),
        ({"protocolVersion": 1, "clientCapabilities": "no"}, {"result": _expected("plain")}),
        ({"protocolVersion": True}, {"result": _expected("plain")}),
        (None, {"error": INVALID_PARAMS}),
    ],
)
def test_an_unusual_initialize_goes_to_the_sdk(params: Any, answer: dict[str, Any]) -> None:
    from lifecycle.agent.startup import initialize_result

    assert initialize_result(params) is None
    [reply] = _serve([{"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": params}])
    for error in [reply.get("error") or {}]:  # pydantic's documentation link carries its version
        for detail in (error.get("data") or {}).get("errors", []):
            assert detail.pop("url", "").startswith("https://errors.pydantic.dev/")
    assert reply == {"jsonrpc": "2.0", "id": 7, **answer}


def test_later_messages_reach_the_agent_with_the_negotiated_state(monkeypatch: pytest.MonkeyPatch) -> None:
    import lifecycle.agent.server as server

    made: list[dict[str, Any]] = []
    real = server.SessionLedger

    def ledger(*args: Any, **kwargs: Any) -> Any:
        made.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(server, "SessionLedger", ledger)
    replies = _serve(
        [
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": CASES["notices"]},
            {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}},
            # A second initialize goes through the SDK; the raw capabilities still count.
            {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": CASES["legacy"]},
            {"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}},
        ],
        # No Claude Code: a session/new would wait for its models (issue 30), and the input ends here
        # before they come (then nothing more is written).
        start_early=False,
    )
    assert [r["id"] for r in replies] == [0, 1, 2, 3]
    assert "sessionId" in replies[1]["result"] and "sessionId" in replies[3]["result"]
    assert replies[2]["result"] == _expected("legacy")
    assert [(m["negotiated"], m["notices"]) for m in made] == [(True, True), (False, False)]


def test_nothing_heavy_is_imported_before_initialize_is_answered() -> None:
    code = (
        "import sys, lifecycle.cli, lifecycle.agent, lifecycle.agent.startup;"
        "heavy = [m for m in ('acp', 'claude_agent_sdk', 'mcp', 'pydantic', 'lifecycle.acp', 'lifecycle.claude',"
        " 'lifecycle.agent.server') if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_log_fields_are_redacted_and_bounded() -> None:
    import io

    import structlog

    from lifecycle.agent import _redact_log_fields
    from lifecycle.log import configure_logging

    out = io.StringIO()
    saved = structlog.get_config()
    try:
        configure_logging(out)
        structlog.configure(processors=[_redact_log_fields, *structlog.get_config()["processors"]])
        structlog.get_logger("t").info(
            "agent.initialize", client="curl -H 'Authorization: Bearer abcdef123456' /home/bob", big="x" * 5000
        )
    finally:
        structlog.configure(**saved)
    line = json.loads(out.getvalue())
    assert "abcdef123456" not in line["client"] and "/home/bob" not in line["client"]
    assert len(line["big"]) <= 501 and line["event"] == "agent.initialize"
