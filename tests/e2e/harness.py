"""The end-to-end harness of a coding turn: one real ``python -m lifecycle.agent`` per test, driven by
the real ACP SDK client over stdio, running the real bundled Claude Code CLI against the fake
Anthropic API on 127.0.0.1 (``fakeapi.py``), and what the client saw of it.

* the fake API's :class:`Script` (replies given up front, then a plain text answer), model turns
  (:func:`tool_turn`, :func:`tool_use`), ``{cwd}`` in their inputs (:func:`_fill_cwd`);
* the client: :class:`Client` answering permission questions with an :data:`Answer`
  (:func:`select`, :func:`never`); :func:`agent` starts one agent and session and yields a
  :class:`Run` holding every frame in wire order; :func:`run_async` bounds a test's coroutine;
* the fake API's requests read back: :func:`body_of`, :func:`tool_results`, :func:`result_text`,
  :func:`system_text`, :func:`last_user_content`, :func:`is_prompt_suggestion`;
* what a turn shows: :func:`turn_frame`, and one exchange of a long-lived agent, :class:`Outcome`
  (``agent_under_test.py``);
* shared inputs and constants: :data:`AIR`, :data:`ROOT`, :data:`MAX_RETRIES`,
  :data:`SUCCESS_RESULT`, :data:`SUCCESS_KINDS`, :data:`PNG`, :func:`echo_server`.

Rules: not a test module (no tests; it imports no ``test_*`` module); nothing here is a fake but
the Anthropic API; expected values belong to the tests, the harness only reports what was seen.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import acp
from acp.connection import StreamDirection, StreamEvent
from acp.schema import ClientCapabilities, EnvVariable, McpServerStdio, TextContentBlock

from lifecycle import ClientProjection, SessionFailure, read_record

from .claude_cli import AgentWorkspace
from .fakeapi import SUCCESS_CHUNKS, FakeAnthropicAPI, MessageReply, RequestRecord, text_reply

ROOT = Path(__file__).resolve().parents[2]
AIR = {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}
MAX_RETRIES = 2  # CLAUDE_CODE_MAX_RETRIES in cli_env: 3 requests per failing prompt

#: The prompt's answer when the fake API's success reply ended the turn: ``end_turn``, no record
#: (no ``_meta``), and the turn's tokens as the fake API sends them (input 12, output 9, no cache).
SUCCESS_RESULT = {
    "stopReason": "end_turn",
    "usage": {"totalTokens": 21, "inputTokens": 12, "outputTokens": 9, "cachedReadTokens": 0, "cachedWriteTokens": 0},
}
#: The updates of that turn: Claude's text one chunk per text delta (fakeapi.SUCCESS_CHUNKS:
#: "Hello", " from the fake", " API."), then one ``usage_update`` for its result.
SUCCESS_KINDS = ["agent_message_chunk"] * len(SUCCESS_CHUNKS) + ["usage_update"]
# The session's own state (Claude Code's models and slash commands, the mode), sent when Claude Code
# starts (at session/new) and whenever it changes, not by a turn: left out of an exchange's frames
# here, checked in tests/e2e/test_session_settings.py.
SESSION_STATE_KINDS = frozenset({"available_commands_update", "config_option_update", "current_mode_update"})


def turn_frame(m: dict[str, Any]) -> bool:
    """Whether an incoming frame belongs to what a turn shows: not a session state update, nor a
    rate-limit window's ``usage_update`` (the session's, sent whenever Claude Code reports a
    window; tests/e2e/test_rate_limits.py checks those)."""
    update = m.get("params", {}).get("update") if m.get("method") == "session/update" else None
    if not isinstance(update, dict):
        return True
    # a window's: its neutral list, or (an event naming no window: issue 52.5) the reference's key alone
    meta = update.get("_meta") or {}
    rate_limit = update.get("sessionUpdate") == "usage_update" and ("rateLimits" in meta or "_claude/rateLimit" in meta)
    return not (update.get("sessionUpdate") in SESSION_STATE_KINDS or rate_limit or is_title_update(update))


def is_title_update(update: dict[str, Any]) -> bool:
    """Whether ``update`` is the session's title (a ``session_info_update`` with a ``title`` and
    no record; tests/e2e/test_titles.py checks those) or Claude Code's predicted next prompt (one
    whose ``_meta`` is only ``promptSuggestions``; tests/e2e/test_prompt_suggestions.py): each
    comes whenever Claude Code has it, not at a fixed point of a turn, and neither is a record."""
    if update.get("sessionUpdate") != "session_info_update":
        return False
    meta = update.get("_meta")
    return ("title" in update and meta is None) or (isinstance(meta, dict) and list(meta) == ["promptSuggestions"])


def is_prompt_suggestion(request: RequestRecord) -> bool:
    """Whether ``request`` is Claude Code's prompt-suggestion request (the fake API answers those
    itself: :attr:`tests.e2e.fakeapi.RequestRecord.is_prompt_suggestion`)."""
    return request.is_prompt_suggestion


@dataclass
class Outcome:
    """One exchange (a prompt or a load): the incoming frames of its session, in wire order."""

    sid: str
    frames: list[dict[str, Any]]
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    model: Any = None
    elapsed: float = 0.0

    @property
    def updates(self) -> list[dict[str, Any]]:
        return [f["params"]["update"] for f in self.frames if f.get("method") == "session/update"]

    def kinds(self) -> list[str]:
        return [u["sessionUpdate"] for u in self.updates]

    def texts(self, kind: str = "agent_message_chunk") -> list[str]:
        return [u["content"]["text"] for u in self.updates if u["sessionUpdate"] == kind]

    def text(self) -> str:
        """The agent text of the exchange, its chunks joined."""
        return "".join(self.texts())

    def check_success_usage(self) -> None:
        """One ``usage_update`` for the success reply's result: the tokens in context (12 + 9), the
        context window, the session's cost so far; no record in it."""
        (usage,) = [u for u in self.updates if u["sessionUpdate"] == "usage_update"]
        assert (usage["used"], usage["size"]) == (21, 1_000_000), usage
        # no record; the model of the answer under the reference's key (issue 50: attachUsageModel)
        assert set(usage.get("_meta") or {}) == {"_claude/model"}, usage
        assert usage["cost"]["currency"] == "USD" and usage["cost"]["amount"] > 0, usage

    def info_records(self) -> list[SessionFailure]:
        out = []
        for u in self.updates:
            if u["sessionUpdate"] == "session_info_update" and not is_title_update(u):
                record = read_record(u.get("_meta"))
                assert record is not None, u
                out.append(record)
        return out

    def response_record(self) -> SessionFailure | None:
        assert self.result is not None, self.error
        return read_record(self.result.get("_meta"))

    def projection(self) -> ClientProjection:
        view = ClientProjection()
        view.receive_all(self.frames)
        return view


# ------------------------------------------------------------------ the fake API's script


class Script:
    """What the fake API answers, request by request (then a plain text answer)."""

    def __init__(self, *replies: Any, then: Any = None) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Any] = deque(replies)
        self._then = then if then is not None else text_reply("Nothing more to do.")

    def __call__(self, request: RequestRecord) -> Any:
        with self._lock:
            return self._queue.popleft() if self._queue else self._then

    def add(self, *replies: Any) -> None:
        """Queue more answers (a test that scripts each prompt as it goes)."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def left(self) -> int:
        with self._lock:
            return len(self._queue)


#: What opens Claude Code's own turn after a background job ends (its last user message).
NOTIFICATION = "<task-notification>"


def last_user_text(request: RequestRecord) -> str:
    """The last user message of a Messages request, as JSON ("" when it has none)."""
    body = request.body if isinstance(request.body, dict) else {}
    users = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    return json.dumps(users[-1]) if users else ""


class Lanes:
    """The fake API's answers per conversation: a request whose last user message carries Claude
    Code's task notification gets ``notified`` (when given); a subagent's (its first message holds
    ``sub_prompt``) the next reply of ``sub``; every other one the next reply of ``main``. A
    subagent runs concurrently with its parent, so one queue would interleave at random."""

    def __init__(self, main: Script, *, sub: Script | None = None, sub_prompt: str = "", notified: Any = None) -> None:
        self.main, self.sub, self.sub_prompt, self.notified = main, sub, sub_prompt, notified

    def __call__(self, request: RequestRecord) -> Any:
        if self.notified is not None and NOTIFICATION in last_user_text(request):
            return self.notified
        messages = (request.body or {}).get("messages") or [{}]
        if self.sub is not None and self.sub_prompt in json.dumps(messages[0]):
            return self.sub(request)
        return self.main(request)


def first_model_refuses(refused: Callable[[], Any], answer: Any) -> Callable[[RequestRecord], Any]:
    """The fake API's answer for a refusal fallback: the first model asked refuses every request
    (``refused()``), any other (Claude Code's fallback model) gets ``answer``."""
    models: list[str | None] = []
    lock = threading.Lock()

    def reply(request: RequestRecord) -> Any:
        with lock:
            if not models:
                models.append(request.model)
        return refused() if request.model == models[0] else answer

    return reply


def tool_turn(*blocks: dict[str, Any], text: str | None = None, chunks: list[str] | None = None) -> MessageReply:
    """A model answer: optional thinking/text blocks, then tool uses."""
    out: list[dict[str, Any]] = []
    if text is not None:
        out.append({"type": "text", "text": text})
    out.extend(blocks)
    return MessageReply(out, stop_reason="tool_use", text_chunks=chunks)


def tool_use(name: str, tool_id: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


# ------------------------------------------------------------------ the client


Answer = Callable[[dict[str, Any]], Any]  # the request's params -> a response dict, or raises


class Client:
    """The ACP client's handlers: permission requests answered by ``answer`` (recorded)."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.questions: list[dict[str, Any]] = []
        self.asked = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        return None

    async def request_permission(self, options: Any, session_id: str, tool_call: Any, **kw: Any) -> Any:
        params = {
            "sessionId": session_id,
            "toolCall": tool_call.model_dump(by_alias=True, exclude_none=True),
            "options": [o.model_dump(by_alias=True, exclude_none=True) for o in options],
        }
        self.questions.append(params)
        self.asked.set()
        result = self.answer(params)
        if asyncio.iscoroutine(result):
            result = await result
        return acp.schema.RequestPermissionResponse.model_validate(result)


def select(option: str) -> Answer:
    return lambda params: {"outcome": {"outcome": "selected", "optionId": option}}


async def never(params: dict[str, Any]) -> Any:
    await asyncio.sleep(3600)


@dataclass
class Run:
    """One agent, one session, one or more prompts: every frame the client saw."""

    workspace: AgentWorkspace
    api: FakeAnthropicAPI
    client: Client
    conn: Any = None
    proc: Any = None
    sid: str = ""
    frames: list[tuple[StreamDirection, dict[str, Any]]] = field(default_factory=list)

    def observe(self, ev: StreamEvent) -> None:
        self.frames.append((ev.direction, ev.message))

    def incoming(self) -> list[dict[str, Any]]:
        return [m for d, m in self.frames if d == StreamDirection.INCOMING]

    def updates(self, *, state: bool = False) -> list[dict[str, Any]]:
        """The session updates received; without the session's state updates (models, commands,
        mode: see tests/e2e/test_session_settings.py) unless ``state``."""
        return [
            m["params"]["update"]
            for m in self.incoming()
            if m.get("method") == "session/update" and (state or turn_frame(m))
        ]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [u for u in self.updates(state=True) if u["sessionUpdate"] == kind]

    def texts(self, kind: str = "agent_message_chunk") -> list[str]:
        return [u["content"]["text"] for u in self.of(kind)]

    def tool(self, tool_id: str) -> list[dict[str, Any]]:
        return [u for u in self.updates() if u.get("toolCallId") == tool_id]

    def tool_state(self, tool_id: str) -> dict[str, Any]:
        """The tool call as a client holds it: its ``tool_call``, then every update's fields."""
        state: dict[str, Any] = {}
        for update in self.tool(tool_id):
            state.update({k: v for k, v in update.items() if k != "sessionUpdate"})
        return state

    def records(self) -> list[Any]:
        out = []
        for m in self.incoming():
            meta = (m.get("params", {}).get("update") or {}).get("_meta") if "method" in m else None
            if meta is None and "result" in m and isinstance(m["result"], dict):
                meta = m["result"].get("_meta")
            record = read_record(meta) if meta else None
            if record is not None:
                out.append(record)
        return out

    async def prompt(self, text: str) -> Any:
        return await self.conn.prompt(session_id=self.sid, prompt=[TextContentBlock(type="text", text=text)])


@contextlib.asynccontextmanager
async def agent(
    tmp_path: Path,
    script: Script,
    answer: Answer,
    *,
    capable: bool = True,
    raw_caps: dict[str, Any] | None = None,
    mcp_servers: list[Any] | None = None,
    project: Callable[[Path], None] | None = None,
    prepare: Callable[[AgentWorkspace, dict[str, str]], None] | None = None,
    args: tuple[str, ...] = (),
) -> AsyncIterator[Run]:
    """One agent and session. ``raw_caps``: ``clientCapabilities`` sent as raw JSON (the SDK's model
    drops ``session.notices``) instead of ``capable``'s; ``mcp_servers``: ``session/new``'s;
    ``project``: writes the project's files into the working directory before the agent starts
    (Claude Code reads its settings and CLAUDE.md as it starts, before the first prompt);
    ``prepare``: changes the workspace and the agent's environment before it starts; ``args``:
    the agent's command-line options."""
    ws = AgentWorkspace()
    ws._workspace(tmp_path)
    if project is not None:
        project(ws.cwd)
    api = FakeAnthropicAPI(script)
    ws.api = api
    api.start()
    env = ws.agent_env(2)
    if prepare is not None:
        prepare(ws, env)
    run = Run(ws, api, Client(answer))
    stderr = ws.stderr_path.open("w")
    try:
        async with acp.spawn_agent_process(
            run.client,  # type: ignore[arg-type]
            sys.executable,
            "-m",
            "lifecycle.agent",
            *args,
            env=env,
            cwd=str(ws.cwd),
            transport_kwargs={"stderr": stderr},
            observers=[run.observe],
        ) as (conn, proc):
            run.conn, run.proc = conn, proc
            if raw_caps is not None:
                params = {"protocolVersion": 1, "clientCapabilities": raw_caps}
                await asyncio.wait_for(conn._conn.send_request("initialize", params), 60)
            else:
                caps = ClientCapabilities(field_meta=AIR) if capable else ClientCapabilities()
                await conn.initialize(protocol_version=1, client_capabilities=caps)
            run.sid = (await conn.new_session(cwd=str(ws.cwd), mcp_servers=mcp_servers or [])).session_id
            yield run
    finally:
        stderr.close()
        api.stop()


def body_of(rec: RequestRecord) -> dict[str, Any]:
    assert isinstance(rec.body, dict)
    return rec.body


def tool_results(rec: RequestRecord) -> list[dict[str, Any]]:
    """The tool_result blocks of the last user message Claude Code sent in ``rec``."""
    messages = body_of(rec)["messages"]
    content = messages[-1]["content"]
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(c.get("text", "") for c in content or [] if isinstance(c, dict))


def system_text(rec: RequestRecord) -> str:
    system = body_of(rec).get("system")
    if isinstance(system, str):
        return system
    return "".join(b.get("text", "") for b in system or [] if isinstance(b, dict))


def last_user_content(run: Run, request: int = -1) -> list[dict[str, Any]]:
    """The content blocks of the last user message of the fake API's ``request``-th request
    (Claude Code sends its environment as a ``system`` message after it). Claude Code adds its own
    blocks around the prompt's: a ``<system-reminder>`` text before, an ``[Image: source: ...]``
    note after; the tests look at the prompt's run of blocks."""
    conversation = [r for r in run.api.message_requests if not is_prompt_suggestion(r)]
    messages = body_of(conversation[request])["messages"]
    content = [m for m in messages if m["role"] == "user"][-1]["content"]
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    # Claude Code's own cache marker is not the prompt's
    return [{k: v for k, v in b.items() if k != "cache_control"} for b in content]


def run_async(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 150))


def _fill_cwd(script: Script, run: Run) -> None:
    """Replace ``{cwd}`` in the scripted tool inputs by the session's folder."""
    cwd = str(run.workspace.cwd)
    for reply in list(script._queue):
        if isinstance(reply, MessageReply):
            for block in reply.blocks:
                if block.get("type") == "tool_use":
                    block["input"] = json.loads(json.dumps(block["input"]).replace("{cwd}", cwd))


# ------------------------------------------------------------------ shared inputs

#: a 1x1 red PNG
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
ECHO_SERVER = Path(__file__).with_name("mcp_echo_server.py")


def echo_server(name: str = "files") -> McpServerStdio:
    return McpServerStdio(
        name=name,
        command=sys.executable,
        args=[str(ECHO_SERVER)],
        env=[EnvVariable(name="ECHO_MARKER", value="1")],
    )
