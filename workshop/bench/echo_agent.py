"""A minimal ACP agent over stdio for the ``proxy`` section: as little work per message as an agent
can do, so what the relay adds stands out.

Rules:

* One JSON-RPC message per line on stdin, answers on stdout, nothing on stderr.
* ``initialize`` → protocol version 1, no capabilities; ``session/new`` → ``{"sessionId": "s-<n>"}``.
* ``session/prompt`` whose first text block is ``"stream N P"`` → N ``session/update``
  ``agent_message_chunk`` notifications, each stamped ``_meta.sentNs`` with
  :func:`time.monotonic_ns` (one clock for every process on the machine) just before it is written,
  ``P`` microseconds apart (0: a burst), then ``{"stopReason": "end_turn"}``.
* ``"fail"`` → the JSON-RPC error an agent gives a failed prompt (``-32603``, a rate-limit
  ``errorKind`` in ``data``), so a capable client's relay builds a record.
* Anything else → ``end_turn`` at once. EOF on stdin → exit 0.

Run it as ``python -m workshop.bench.echo_agent``.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def _write(out: Any, msg: dict[str, Any]) -> None:
    out.write(json.dumps(msg, separators=(",", ":")) + "\n")
    out.flush()


def _prompt_text(params: dict[str, Any]) -> str:
    for block in params.get("prompt") or []:
        if isinstance(block, dict) and block.get("type") == "text":
            return str(block.get("text", ""))
    return ""


def _stream(out: Any, session: str, count: int, pause_us: int) -> None:
    for n in range(count):
        if pause_us:
            deadline = time.monotonic_ns() + pause_us * 1000
            while time.monotonic_ns() < deadline:
                time.sleep(pause_us / 4e6)
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"chunk {n} "}}
        _write(
            out,
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": session, "update": update, "_meta": {"sentNs": time.monotonic_ns()}},
            },
        )


def main() -> int:
    out = sys.stdout
    sessions = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if rid is None:  # a notification (session/cancel): nothing to answer
            continue
        if method == "initialize":
            _write(out, {"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new":
            sessions += 1
            _write(out, {"jsonrpc": "2.0", "id": rid, "result": {"sessionId": f"s-{sessions}"}})
        elif method == "session/prompt":
            words = _prompt_text(params).split()
            if words[:1] == ["stream"]:
                _stream(out, str(params.get("sessionId")), int(words[1]), int(words[2]))
                _write(out, {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}})
            elif words[:1] == ["fail"]:
                error = {"code": -32603, "message": "Rate limit reached", "data": {"errorKind": "rate_limit"}}
                _write(out, {"jsonrpc": "2.0", "id": rid, "error": error})
            else:
                _write(out, {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}})
        else:
            _write(out, {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
