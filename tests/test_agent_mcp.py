"""MCP servers of a session (lifecycle.agent.mcp): mapped into Claude Code's options as the
reference adapter maps them (its ``createSession``, dist/acp-agent.js), and a client server that
fails to start shown once, per client kind, never as a failure of the turn. Expected values are
written out."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import AcpMcpServer, EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer
from acp_harness import FakeClaude, Wire, recording_agent

from lifecycle import read_record
from lifecycle.agent.mcp import MCP_CAPABILITIES, McpServers, mcp_capabilities, mcp_config
from lifecycle.events import Informational, McpServerNotStarted


def test_the_advertised_mcp_capabilities_are_http_and_sse() -> None:
    assert dict(MCP_CAPABILITIES) == {"http": True, "sse": True, "acp": False}
    # the ACP SDK's model of it (server.py's initialize) dumps the same JSON (startup's fast one)
    assert mcp_capabilities().model_dump(by_alias=True, exclude_none=True) == {"http": True, "sse": True, "acp": False}


def test_stdio_http_and_sse_servers_are_mapped_as_the_reference_maps_them() -> None:
    servers = [
        McpServerStdio(
            name="files",
            command="/usr/bin/files-mcp",
            args=["--root", "/src"],
            env=[EnvVariable(name="TOKEN", value="t0ken"), EnvVariable(name="MODE", value="ro")],
        ),
        McpServerStdio(name="bare", command="bare-mcp", args=[], env=[]),
        HttpMcpServer(
            type="http",
            name="web",
            url="https://mcp.example.com/mcp",
            headers=[HttpHeader(name="Authorization", value="Bearer x")],
        ),
        SseMcpServer(type="sse", name="events", url="http://127.0.0.1:9/sse", headers=[]),
        AcpMcpServer(type="acp", name="inproc", server_id="srv-1"),
    ]
    assert mcp_config(servers) == {
        "files": {
            "type": "stdio",
            "command": "/usr/bin/files-mcp",
            "args": ["--root", "/src"],
            "env": {"TOKEN": "t0ken", "MODE": "ro"},
        },
        "bare": {"type": "stdio", "command": "bare-mcp", "args": []},
        "web": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer x"}},
        "events": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
    }


def test_json_servers_and_a_repeated_name() -> None:
    servers: list[dict[str, Any]] = [
        {"name": "a", "command": "one", "args": ["x"], "env": []},
        {"type": "stdio", "name": "a", "command": "two"},
        {"type": "http", "name": "h", "url": "http://127.0.0.1:1/", "headers": [{"name": "K", "value": "V"}]},
        {"type": "ws", "name": "unknown-kind", "url": "ws://x"},
        {"name": "", "command": "nameless"},
    ]
    assert mcp_config(servers) == {
        "a": {"type": "stdio", "command": "two", "args": []},
        "h": {"type": "http", "url": "http://127.0.0.1:1/", "headers": {"K": "V"}},
    }
    assert mcp_config(None) == {} and mcp_config([]) == {}


# ------------------------------------------------------------------ startup failures

AUTH_TEXT = "Its tools are unavailable until the server is authenticated."
STATUSES = [
    {"name": "files", "status": "connected"},
    {"name": "broken", "status": "failed"},
    {"name": "from-user-settings", "status": "failed"},  # not the client's: left to Claude Code
    {"name": "oauth", "status": "needs-auth"},
    {"name": "slow", "status": "pending"},
]
CLIENT_SERVERS = [{"name": n, "command": "x"} for n in ("files", "broken", "oauth", "slow")]


def test_a_notices_client_gets_acp_notices_through_the_ledgers_notice_lane() -> None:
    mcp = McpServers(CLIENT_SERVERS, negotiated=True, notices=True)
    assert mcp.startup_notices(STATUSES) == [
        Informational(
            content='MCP server "broken" failed to start\nIts tools are unavailable in this session.', level="warning"
        ),
        Informational(
            content=f'MCP server "oauth" needs authentication\n{AUTH_TEXT}',
            level="notice",
        ),
    ]
    assert mcp.startup_notices(STATUSES) == []  # once per server per session


def test_a_capable_client_gets_notice_records() -> None:
    mcp = McpServers(CLIENT_SERVERS, negotiated=True)
    assert mcp.startup_notices(STATUSES) == [
        McpServerNotStarted(content='MCP server "broken" failed to start. Its tools are unavailable in this session.'),
        McpServerNotStarted(content=f'MCP server "oauth" needs authentication. {AUTH_TEXT}'),
    ]


def test_a_legacy_client_gets_the_references_transcript_line() -> None:
    mcp = McpServers(CLIENT_SERVERS)
    assert mcp.startup_notices(STATUSES) == [
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {
                "type": "text",
                "text": '**MCP server "broken" failed to start:** Its tools are unavailable in this session.',
            },
            "_meta": {"claudeCode": {"kind": "mcpServerStatus", "server": "broken", "status": "failed"}},
        },
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {
                "type": "text",
                "text": f'**MCP server "oauth" needs authentication:** {AUTH_TEXT}',
            },
            "_meta": {"claudeCode": {"kind": "mcpServerStatus", "server": "oauth", "status": "needs-auth"}},
        },
    ]


@pytest.mark.parametrize("statuses", [None, "failed", [None, 3, {"name": "broken"}], [{"status": "failed"}]])
def test_malformed_statuses_report_nothing(statuses: Any) -> None:
    assert McpServers(CLIENT_SERVERS).startup_notices(statuses) == []


# ------------------------------------------------------------------ through the agent


class InitClaude(FakeClaude):
    """Claude Code whose every turn begins with a ``system``/``init`` naming the MCP statuses."""

    async def query(self, prompt: Any) -> None:
        from claude_agent_sdk import SystemMessage

        self.queue.put_nowait(SystemMessage(subtype="init", data={"mcp_servers": STATUSES[:3]}))
        await super().query(prompt)


@pytest.mark.parametrize("capable", [True, False])
def test_the_agent_passes_the_servers_and_reports_a_failed_one_once(
    capable: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent, clients = recording_agent(tmp_path, monkeypatch, InitClaude)
    servers = [
        McpServerStdio(name="files", command="files-mcp", args=[], env=[EnvVariable(name="K", value="v")]),
        McpServerStdio(name="broken", command="false", args=[], env=[]),
    ]

    async def go() -> tuple[Wire, list[Any]]:
        wire = Wire(agent)  # type: ignore[arg-type]
        from acp.schema import ClientCapabilities
        from acp_harness import AIR

        caps = ClientCapabilities(field_meta=AIR) if capable else None
        await wire.conn.initialize(protocol_version=1, client_capabilities=caps)
        sid = (await wire.conn.new_session(cwd=str(tmp_path), mcp_servers=servers)).session_id
        answers = [await wire.conn.prompt(session_id=sid, prompt=[acp.text_block(t)]) for t in ("one", "two")]
        return wire, answers

    wire, answers = asyncio.run(asyncio.wait_for(go(), 10))
    (client,) = clients
    assert client.options.mcp_servers == {
        "files": {"type": "stdio", "command": "files-mcp", "args": [], "env": {"K": "v"}},
        "broken": {"type": "stdio", "command": "false", "args": []},
    }
    # not a failure of the turn: both answers end_turn without a record
    assert [(a.stop_reason, a.field_meta) for a in answers] == [("end_turn", None), ("end_turn", None)]
    updates = [f["params"]["update"] for f in wire.frames if f.get("method") == "session/update"]
    texts = [u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
    records = [read_record(u.get("_meta")) for u in updates if u["sessionUpdate"] == "session_info_update"]
    if capable:
        (record,) = records
        assert record is not None
        assert record.to_wire() == {
            "id": record.id,
            "revision": 1,
            "category": "unknown",
            "severity": "warning",
            "title": 'MCP server "broken" failed to start. Its tools are unavailable in this session.',
            "actions": [],
        }
        assert ":notice:" in record.id
        assert texts == ["hello", "hello"]
    else:
        assert records == []
        assert texts == [
            '**MCP server "broken" failed to start:** Its tools are unavailable in this session.',
            "hello",
            "hello",
        ]


def test_no_servers_no_option() -> None:
    from lifecycle.agent import ClaudeAcpAgent

    agent = ClaudeAcpAgent(client_factory=lambda options: FakeClaude(options))
    session = asyncio.run(agent._open("s", "/tmp", None))
    assert session.claude_options(resume=False).mcp_servers == {}


def test_session_load_passes_its_servers_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import lifecycle.agent as agent_module

    stored = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "earlier"}},
    ]
    monkeypatch.setattr(agent_module, "get_session_messages", lambda session_id, directory: stored)
    agent, clients = recording_agent(tmp_path, monkeypatch)
    servers = [SseMcpServer(type="sse", name="events", url="http://127.0.0.1:9/sse", headers=[])]

    async def go() -> Any:
        wire = Wire(agent)  # type: ignore[arg-type]
        await wire.conn.initialize(protocol_version=1)
        await wire.conn.load_session(cwd=str(tmp_path), session_id="stored-session", mcp_servers=servers)
        return await wire.conn.prompt(session_id="stored-session", prompt=[acp.text_block("again")])

    answer = asyncio.run(asyncio.wait_for(go(), 10))
    assert answer.stop_reason == "end_turn"
    (client,) = clients
    assert client.options.mcp_servers == {"events": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}
