"""The reference adapter as an oracle: both agents (ours and the reference
``@agentclientprotocol/claude-agent-acp`` 0.101.0) behind the same real ACP client, each on the
same Claude Code CLI 2.1.332 against its own loopback fake API answering the same script, and what
each client received, normalised so the two can be compared field by field.

* :class:`OracleAgent`, :func:`pair`: one agent of each (:data:`IMPLS`) for a client kind of
  :data:`CLIENTS`;
* :func:`norm`, :func:`seen`, :class:`Seen`: an exchange normalised (session ids, UUIDs, epochs,
  ports) into its answer, records, notices and text;
* :data:`Check`, :func:`exactly`, :func:`unexplained`: a documented difference and the facets
  that differ without one;
* :data:`MCP_DIFFERENCES`, :data:`PROMPT_DIFFERENCES`: the rows of docs/parity/README.md's table
  "Where the coding turn differs from the reference" that ``test_reference_oracle_mcp.py`` and
  ``test_reference_oracle_prompt.py`` explain (``test_reference_oracle_tools.py`` checks the table
  holds exactly the rows the oracle files list).

Rules: not a test module (it imports no ``test_*`` module); the oracle files decide what must
agree; nothing here excuses a difference. The fixture ``reference_package`` is ``conftest.py``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import acp
from acp.connection import StreamDirection

from lifecycle import read_record

from .agent_under_test import AgentUnderTest
from .claude_cli import BUNDLED_CLI, AgentWorkspace
from .fakeapi import FakeAnthropicAPI
from .harness import AIR, MAX_RETRIES, ROOT, Client, Outcome, Script, select
from .reference import ensure_reference, node_binary

IMPLS = ("ours", "reference")
#: client kinds: their raw ``clientCapabilities``
CLIENTS: dict[str, dict[str, Any]] = {
    "capable": {"_meta": AIR},
    "plain": {},
    "notices": {"session": {"notices": {}}},
}


class OracleAgent(AgentUnderTest):
    """One agent (ours or the reference) behind the same ACP client, CLI and fake-API script."""

    def __init__(self, impl: str, client: str, root: Path, package: Path | None) -> None:
        super().__init__("capable" if client == "capable" else "legacy", root)
        self.impl, self.client, self.package = impl, client, package
        #: the ACP client's handlers (test_reference_oracle_tools.py answers permission questions)
        self.handler: Any = _Client()

    async def _start(self) -> None:
        env = self.agent_env(MAX_RETRIES)  # PYTHONPATH names this checkout; node ignores it
        env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
        if self.impl == "ours":
            env["LIFECYCLE_ACP_CLI"] = str(BUNDLED_CLI)
            command = [sys.executable, "-m", "lifecycle.agent"]
        else:
            assert self.package is not None
            env["CLAUDE_CODE_EXECUTABLE"] = str(BUNDLED_CLI)
            command = [node_binary(), str(self.package / "dist" / "index.js")]
        self._stderr = self.stderr_path.open("w")
        self._stack = contextlib.AsyncExitStack()
        self.conn, self.proc = await self._stack.enter_async_context(
            acp.spawn_agent_process(
                self.handler,
                *command,
                env=env,
                cwd=str(self.cwd),
                transport_kwargs={"stderr": self._stderr},
                observers=[self._observe],
            )
        )
        await self.initialize(CLIENTS[self.client])

    async def initialize(self, caps: dict[str, Any]) -> None:
        # raw: the SDK's ClientCapabilities model drops ``session.notices``
        start = len(self.frames)
        params = {"protocolVersion": 1, "clientCapabilities": caps}
        await asyncio.wait_for(self.conn._conn.send_request("initialize", params), 60)
        self.init = next(m for d, m in self.frames[start:] if d == StreamDirection.INCOMING and "result" in m)

    def run_prompt(self, sid: str, text: str, *replies: Any, then: Any = "success") -> Outcome:
        self.script.load(*replies, then=then)
        return self.exchange(sid, self.conn.prompt(session_id=sid, prompt=[acp.text_block(text)]), 90)


class _Client:
    """The ACP client's handlers; frames are recorded raw by the observer. A ``notice`` update
    fails the SDK's model here, which only logs: the frame itself was observed."""

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        return None

    async def request_permission(self, *args: Any, **kw: Any) -> Any:
        raise acp.RequestError.method_not_found("session/request_permission")


@contextlib.contextmanager
def pair(
    client: str, tmp: Path, package: Path, prepare: Callable[[OracleAgent], None] | None = None
) -> Iterator[dict[str, OracleAgent]]:
    """Both agents (:data:`IMPLS`) for the client kind ``client``, each prepared by ``prepare``
    (its handler, settings, files) before it starts; both stopped after."""
    agents = {impl: OracleAgent(impl, client, tmp / impl, package) for impl in IMPLS}
    try:
        for agent in agents.values():
            if prepare is not None:
                prepare(agent)
            agent.start()
        yield agents
    finally:
        for agent in agents.values():
            agent.stop()


# ------------------------------------------------------------------ normalisation

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_EPOCH = re.compile(r":[0-9a-f]{16}:")
_PORT = re.compile(r"127\.0\.0\.1:\d+")
#: the CLI's token estimate includes each agent's own system prompt and tools
_TOKENS = re.compile(r"conversation is only ~\d+ tokens")
#: a session-scoped id's epoch: a hex token (ours) or a UUID (the reference)
_SCOPED = re.compile(r"<sid>:(notice:)?<uuid>:")


def norm(value: Any, sid: str) -> Any:
    text = json.dumps(value, sort_keys=True)
    text = text.replace(sid, "<sid>")
    text = _UUID.sub("<uuid>", text)
    text = _EPOCH.sub(":<epoch>:", text)
    text = _PORT.sub("127.0.0.1:<port>", text)
    text = _TOKENS.sub("conversation is only ~<n> tokens", text)
    text = _SCOPED.sub(lambda m: f"<sid>:{m.group(1) or ''}<epoch>:", text)
    return json.loads(text)


@dataclass
class Seen:
    """What one client received in one exchange, normalised."""

    answer: Any
    records: list[Any] = field(default_factory=list)
    notices: list[Any] = field(default_factory=list)
    text: list[str] = field(default_factory=list)  # the agent_message_chunk texts, in order


def _record(carrier: str, meta: Any) -> Any:
    record = read_record(meta)
    if record is None:
        return None
    return [carrier, *json.loads(record.model_dump_json(by_alias=True)).values()]


def seen(out: Outcome) -> Seen:
    if out.error is not None:
        answer: Any = {"error": {k: out.error.get(k) for k in ("code", "message", "data")}}
    else:
        assert out.result is not None
        answer = {"stopReason": out.result.get("stopReason")}
    result = Seen(answer)
    for update in out.updates:
        kind = update.get("sessionUpdate")
        if kind == "notice":
            result.notices.append({k: update.get(k) for k in ("severity", "title", "description")})
        elif kind == "agent_message_chunk":
            result.text.append(update.get("content", {}).get("text", ""))
        record = _record(kind, update.get("_meta"))
        if record is not None:
            result.records.append(record)
    if out.result is not None:
        record = _record("prompt_response", out.result.get("_meta"))
        if record is not None:
            result.records.append(record)
    return Seen(**norm(result.__dict__, out.sid))


# ------------------------------------------------------------------ documented differences

Check = Callable[[Any, Any], bool]  # (ours, the reference's) -> the difference is the documented one


def exactly(ours_value: Any, ref_value: Any) -> Check:
    """The difference is exactly ``ours_value`` (ours) against ``ref_value`` (the reference's)."""
    return lambda ours, ref: ours == ours_value and ref == ref_value


def unexplained(
    ours: dict[str, Any], ref: dict[str, Any], names: tuple[str, ...], listed: Callable[[str], tuple[str, Check] | None]
) -> list[str]:
    """Each facet of ``names`` that differs without ``listed(name)`` describing the difference
    exactly, or that is listed and no longer differs."""
    problems = []
    for name in names:
        mine, theirs, known = ours[name], ref[name], listed(name)
        if mine == theirs and known is not None:
            problems.append(f"{name}: listed ({known[0]}) but both agree now: {mine!r}")
        elif mine != theirs and (known is None or not known[1](mine, theirs)):
            problems.append(
                f"{name}: {'un' if known is None else 'not the '}listed difference\n"
                f"  ours:      {mine!r}\n  reference: {theirs!r}"
            )
    return problems


#: docs/parity/README.md, "Where the coding turn differs from the reference": the rows
#: test_reference_oracle_mcp.py explains.
MCP_DIFFERENCES: tuple[str, ...] = (
    "an MCP server that failed to start: the description",
    "an MCP server that failed to start, capable client",
)

#: docs/parity/README.md, "Where the coding turn differs from the reference": the rows
#: test_reference_oracle_prompt.py explains.
PROMPT_DIFFERENCES: tuple[str, ...] = (
    "a prompt of text alone",
    "a `resource_link` in a prompt",
    "prompt content Claude cannot be sent",
)


@contextlib.asynccontextmanager
async def reference_agent(
    ws: AgentWorkspace, script: Script, env_change: Callable[[AgentWorkspace, dict[str, str]], None] | None = None
) -> AsyncIterator[tuple[Any, list[tuple[Any, dict[str, Any]]]]]:
    """The reference adapter 0.101.0 on ``ws``'s folders and the bundled Claude Code, its fake API
    answering ``script``, initialized as a legacy client: its connection and every frame seen."""
    package = ensure_reference()
    api = FakeAnthropicAPI(script)
    ws.api = api
    api.start()
    env = ws.agent_env(2)
    env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
    env["CLAUDE_CODE_EXECUTABLE"] = str(BUNDLED_CLI)
    if env_change is not None:
        env_change(ws, env)
    frames: list[tuple[Any, dict[str, Any]]] = []
    try:
        with (ws.tmp / "reference.stderr").open("w") as stderr:
            async with acp.spawn_agent_process(
                Client(select("allow-once")),  # type: ignore[arg-type]
                node_binary(),
                str(package / "dist" / "index.js"),
                env=env,
                cwd=str(ws.cwd),
                transport_kwargs={"stderr": stderr},
                observers=[lambda ev: frames.append((ev.direction, ev.message))],
            ) as (conn, _proc):
                await conn.initialize(protocol_version=1)
                yield conn, frames
    finally:
        api.stop()


#: docs/parity/README.md's table of the whole conformance suite through both agents
SUITE_HEADING = "## The whole conformance suite through both agents (`lifecycle conformance`)"


def suite_table() -> dict[str, tuple[str, str, str]]:
    """case -> (ours, the reference, why) from docs/parity/README.md."""
    text = (ROOT / "docs" / "parity" / "README.md").read_text()
    assert SUITE_HEADING in text, "the suite-scale table is missing from docs/parity/README.md"
    section = text.split(SUITE_HEADING, 1)[1]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\| `([a-z0-9-]+)` \| (.*?) \| (PASS|FAIL) \| (.*?) \|$", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3), m.group(4))
    return rows
