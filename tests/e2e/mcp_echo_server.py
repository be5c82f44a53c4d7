"""A tiny MCP server over stdio (standard library only): one tool, ``echo``, that answers its
``text`` argument back. The e2e tests pass it to ``session/new`` as a stdio MCP server and check
that Claude Code started it (its tool reaches the model as ``mcp__<server>__echo``).

MCP's stdio transport is newline-delimited JSON-RPC 2.0: ``initialize`` (answered with the
protocol version the client asked for), ``notifications/initialized``, ``tools/list``,
``tools/call``, ``ping``; anything else is answered -32601 (requests) or ignored (notifications).

Run: ``python tests/e2e/mcp_echo_server.py``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOL = {
    "name": "echo",
    "description": "Echo the given text back.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "What to echo."}},
        "required": ["text"],
    },
}


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method, params = request.get("method"), request.get("params") or {}
    if "id" not in request:
        return None  # a notification
    result: Any
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "echo", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        text = str((params.get("arguments") or {}).get("text", ""))
        result = {"content": [{"type": "text", "text": f"echo: {text}"}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "Method not found"}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError:
            continue
        reply = answer(request) if isinstance(request, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
