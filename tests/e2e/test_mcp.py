"""MCP servers from ``session/new`` end to end: the real ACP SDK client spawns
``python -m lifecycle.agent``, which runs the real bundled Claude Code CLI against the fake
Anthropic API on 127.0.0.1.

* A stdio server that exists (``mcp_echo_server.py``, a tiny MCP server speaking stdio) is started
  by Claude Code: its tool reaches the model as ``mcp__<server>__echo`` (named in the API request:
  CLI 2.1.332 defers MCP tools behind ``ToolSearch``), and a call of it, asked about and allowed,
  returns the server's answer to the model. The same for an ``http`` and an ``sse`` server
  (``HttpEchoServer``, on 127.0.0.1).
* A server that fails to start (a command that exits at once) is shown as the reference adapter
  shows it, per client kind: an ACP ``notice`` for a client that declared ``session.notices``, a
  ``sessionFailure`` notice record for a capable client, the reference's bold-label line for a
  legacy client; the prompt still ends ``end_turn``, and no turn failure is published.

Expected titles and texts are written out (the reference's ``reportMcpServerStartupFailures`` in
``dist/acp-agent.js``; the description differs, docs/parity/README.md).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from acp.schema import HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer

from lifecycle import read_record

from .fakeapi import RequestRecord, text_reply
from .harness import AIR, Run, Script, body_of, echo_server, select, tool_results, tool_turn, tool_use
from .harness import agent as coding_agent
from .mcp_echo_server import HttpEchoServer

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

#: Claude Code's list of deferred tools (in a JSON-encoded message text: newlines are ``\\n``)
DEFERRED = re.compile(r"deferred tools are now available via ToolSearch\..*?:\\n((?:[A-Za-z0-9_]+\\n)+)")
SECRET = "mcp-token-7f3a9c1e"  # an MCP server's credential (a header value)
#: the raw ``clientCapabilities`` of each client kind (the SDK's model drops ``session.notices``)
CLIENTS: dict[str, dict[str, Any]] = {
    "capable": {"_meta": AIR},
    "legacy": {},
    "notices": {"session": {"notices": {}}},
}


def broken_server(name: str = "broken") -> McpServerStdio:
    """A stdio server whose command exits at once (status 3) without a word of MCP."""
    return McpServerStdio(name=name, command=sys.executable, args=["-c", "import sys; sys.exit(3)"], env=[])


def agent(tmp_path: Path, script: Script, client: str, servers: list[Any]) -> Any:
    return coding_agent(tmp_path, script, select("allow-once"), raw_caps=CLIENTS[client], mcp_servers=servers)


def offered_tools(rec: RequestRecord) -> set[str]:
    """The tools a request offers the model: its ``tools`` list, and the deferred tools Claude Code
    names in its system-reminder text (loaded with ``ToolSearch``), one name a line."""
    body = body_of(rec)
    names = {str(t.get("name")) for t in body.get("tools") or []}
    for match in DEFERRED.finditer(json.dumps(body["messages"])):
        names.update(match.group(1).split("\\n"))
    return names


def run_async(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 150))


def test_a_stdio_server_reaches_claude_code_and_its_tool_runs(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(
            tool_turn(tool_use("mcp__files__echo", "toolu_echo1", text="ping")),
            text_reply("The server said pong."),
        )
        async with agent(tmp_path, script, "capable", [echo_server("files")]) as run:
            response = await run.prompt("use the echo tool")
            assert response.stop_reason == "end_turn"
            first, second = run.api.message_requests[:2]
            # Claude Code 2.1.332 defers MCP tools: named in the request, loaded via ToolSearch.
            assert "mcp__files__echo" in offered_tools(first)
            # Asked first (a tool is never allowed by default), then run by the server.
            assert [q["toolCall"]["toolCallId"] for q in run.client.questions] == ["toolu_echo1"]
            (result,) = tool_results(second)
            assert result["tool_use_id"] == "toolu_echo1"
            assert not result.get("is_error")
            content = result["content"]
            text = content if isinstance(content, str) else "".join(c.get("text", "") for c in content)
            assert text == "echo: ping"
            assert run.records() == []
            assert run.of("notice") == []

    run_async(go())


@pytest.mark.parametrize("kind", ["http", "sse"])
def test_an_http_or_sse_server_reaches_claude_code_and_its_tool_runs(kind: str, tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(
            tool_turn(tool_use("mcp__web__echo", "toolu_echo2", text="over the wire")),
            text_reply("It echoed."),
        )
        with HttpEchoServer() as web:
            header = [HttpHeader(name="Authorization", value=f"Bearer {SECRET}")]
            server: Any = (
                HttpMcpServer(type="http", name="web", url=f"{web.url}/mcp", headers=header)
                if kind == "http"
                else SseMcpServer(type="sse", name="web", url=f"{web.url}/sse", headers=header)
            )
            async with agent(tmp_path, script, "capable", [server]) as run:
                response = await run.prompt("use the echo tool")
                assert response.stop_reason == "end_turn"
                first, second = run.api.message_requests[:2]
                assert "mcp__web__echo" in offered_tools(first)
                (result,) = tool_results(second)
                content = result["content"]
                text = content if isinstance(content, str) else "".join(c.get("text", "") for c in content)
                assert (result["tool_use_id"], text) == ("toolu_echo2", "echo: over the wire")
                assert run.of("notice") == [] and run.records() == []
            assert {"initialize", "tools/list", "tools/call"} <= set(web.requests)
            # The client's header reached the server, and nowhere else (the agent's log, its frames).
            assert web.authorizations == {f"Bearer {SECRET}"}
            assert SECRET not in run.workspace.stderr_path.read_text()
            assert SECRET not in json.dumps(run.incoming())  # nothing the agent sent the client

    run_async(go())


def _failure_frames(run: Run) -> list[dict[str, Any]]:
    """Every update that mentions the broken server (notice, record carrier or text)."""
    return [u for u in run.updates() if "broken" in str(u)]


TITLE = 'MCP server "broken" failed to start'
DESCRIPTION = "Its tools are unavailable in this session."
#: what each client kind is shown (once, though the server is reported at every turn's init)
EXPECTED: dict[str, dict[str, Any]] = {
    "notices": {"sessionUpdate": "notice", "severity": "warning", "title": TITLE, "description": DESCRIPTION},
    "capable": {
        "sessionUpdate": "session_info_update",
        "record": {
            "category": "unknown",
            "severity": "warning",
            "title": f"{TITLE}. {DESCRIPTION}",
            "actions": [],
        },
    },
    "legacy": {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": f"**{TITLE}:** {DESCRIPTION}"},
        "_meta": {"claudeCode": {"kind": "mcpServerStatus", "server": "broken", "status": "failed"}},
    },
}


@pytest.mark.parametrize("client", ["notices", "capable", "legacy"])
def test_a_server_that_fails_to_start_is_a_notice_not_a_turn_failure(client: str, tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(text_reply("Hello."), text_reply("Hello again."))
        async with agent(tmp_path, script, client, [echo_server("files"), broken_server("broken")]) as run:
            first = await run.prompt("hi")
            second = await run.prompt("hi again")
            # Not a failure of the turn: both prompts end normally, Claude answers both.
            assert first.stop_reason == "end_turn" and second.stop_reason == "end_turn"
            assert first.field_meta is None and second.field_meta is None
            # The working server still reached Claude Code.
            assert "mcp__files__echo" in offered_tools(run.api.message_requests[0])
            (shown,) = _failure_frames(run)
            expected = EXPECTED[client]
            if client == "capable":
                record = read_record(shown["_meta"])
                assert record is not None
                wire = record.to_wire()
                assert wire["id"].startswith(f"{run.sid}:notice:")
                assert wire["revision"] == 1
                assert {k: wire[k] for k in expected["record"]} == expected["record"]
                assert "details" not in wire
                assert shown["sessionUpdate"] == expected["sessionUpdate"]
                assert run.texts() == ["Hello.", "Hello again."]
            else:
                assert shown == expected
                legacy_line = [expected["content"]["text"]] if client == "legacy" else []
                assert run.texts() == [*legacy_line, "Hello.", "Hello again."]
                assert run.records() == []

    run_async(go())
