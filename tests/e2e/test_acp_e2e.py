"""The reference ACP agent end to end: a real ACP client spawns ``python -m lifecycle.agent``,
which drives the real bundled Claude Code CLI against the fake Anthropic API on 127.0.0.1.

One agent process per client kind (a capable client that negotiated ``sessionFailure``, and a
legacy one) serves every scenario, each in a fresh ACP session (so a fresh Claude Code process).
No test depends on another having run: a failed session that two tests look at (the usage limit,
the rate limit) is made by whichever of them runs first (:func:`failed_session`), and the tests
that stop an agent start their own.
The agent runs with the gateway-token environment (``ANTHROPIC_BASE_URL`` + an
``ANTHROPIC_AUTH_TOKEN`` JWT, see ``claude_cli.cli_env``), the only route to the CLI's usage-limit
texts; the other faults behave as with an API key, with the gateway's wording.

Assertions are on what the client actually received: every incoming frame, in wire order, from
a connection observer (handlers finish out of order), read back with
:class:`lifecycle.client.ClientProjection`. Titles are compared with the text Claude Code itself
stored in its transcript, never with a copy of an earlier run's output.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import acp
import pytest
from acp import RequestError
from acp.connection import StreamDirection, StreamEvent
from acp.schema import ClientCapabilities

from lifecycle import ClientProjection, SessionFailure, read_record

from .claude_cli import AgentWorkspace, cli_pids, sanitize_path, session_cli_pid
from .fakeapi import (
    SUCCESS_CHUNKS,
    SUCCESS_TEXT,
    CloseReply,
    FakeAnthropicAPI,
    RequestRecord,
    StallReply,
    error_reply,
    text_reply,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

ROOT = Path(__file__).resolve().parents[2]
AIR = {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}
KINDS = ["capable", "legacy"]
MAX_RETRIES = 2  # CLAUDE_CODE_MAX_RETRIES in cli_env: 3 requests per failing prompt
#: The adapter's retry progress titles for MAX_RETRIES = 2, written out (Claude supplies no text
#: for ``api_retry``): with an HTTP response as README.md's first trace shows them, without one
#: (``error_status: null``) in the project's wording (tests/test_titles.py).
RETRY_TITLES = {
    True: ["Retrying Claude, attempt 1 of 2.", "Retrying Claude, attempt 2 of 2."],
    False: ["Reconnecting to Claude, attempt 1 of 2.", "Reconnecting to Claude, attempt 2 of 2."],
}

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


def loaded_state(result: dict[str, Any] | None) -> bool:
    """A session/load answer: the session's modes (in the default mode) and its config options,
    nothing else (no record: a load replays, it does not fail)."""
    assert result is not None and set(result) == {"modes", "configOptions"}, result
    assert result["modes"]["currentModeId"] == "default"
    assert [o["id"] for o in result["configOptions"]][:2] == ["mode", "model"]
    return True


def turn_frame(m: dict[str, Any]) -> bool:
    """Whether an incoming frame belongs to what a turn shows: not a session state update, nor a
    rate-limit window's ``usage_update`` (the session's, sent whenever Claude Code reports a
    window; tests/e2e/test_rate_limits.py checks those)."""
    update = m.get("params", {}).get("update") if m.get("method") == "session/update" else None
    if not isinstance(update, dict):
        return True
    rate_limit = update.get("sessionUpdate") == "usage_update" and "rateLimits" in (update.get("_meta") or {})
    return not (update.get("sessionUpdate") in SESSION_STATE_KINDS or rate_limit)

RATE_MESSAGE = "e2e: this key sent too many requests"
OVERLOAD_MESSAGE = "Overloaded"


def rate_limited() -> Any:
    return error_reply(429, "rate_limit_error", RATE_MESSAGE, {"retry-after": "0"})


def overloaded() -> Any:
    return error_reply(529, "overloaded_error", OVERLOAD_MESSAGE)


def unauthorized() -> Any:
    return error_reply(401, "authentication_error", "invalid x-api-key")


# ------------------------------------------------------------------ the fake API's script


class Script:
    """What the fake API answers, request by request; each test loads it before its prompt."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Any] = deque()
        self._then: Any = "success"
        self.suggestions = 0  # prompt-suggestion requests answered outside the script

    def load(self, *replies: Any, then: Any = "success") -> None:
        with self._lock:
            self._queue = deque(replies)
            self._then = then

    def __call__(self, request: RequestRecord) -> Any:
        if is_prompt_suggestion(request):
            # Claude Code's own background request after a turn (the reference adapter's CLI
            # makes it, sometimes): never part of a script, so it cannot take a scripted reply.
            with self._lock:
                self.suggestions += 1
            return text_reply("")
        with self._lock:
            return self._queue.popleft() if self._queue else self._then

    @property
    def left(self) -> int:
        with self._lock:
            return len(self._queue)


def is_prompt_suggestion(request: RequestRecord) -> bool:
    """Whether ``request`` is Claude Code's prompt-suggestion request (its last user message
    starts ``[SUGGESTION MODE``), which it sends on its own after a turn."""
    body = request.body
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        return False
    content = messages[-1].get("content")
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
        content = texts[-1] if texts else None
    return isinstance(content, str) and content.lstrip().startswith("[SUGGESTION MODE")


# ------------------------------------------------------------------ the client side


class LoopThread:
    """An event loop in a thread, so one agent process outlives a single test."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="acp-e2e-loop", daemon=True)
        self.thread.start()

    def call(self, coro: Coroutine[Any, Any, Any], timeout: float) -> Any:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except BaseException:
            future.cancel()
            raise

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        if not self.thread.is_alive():
            self.loop.close()


class RecordingClient:
    """The ACP client's handlers (frames are recorded by the observer, in wire order)."""

    def __init__(self) -> None:
        self.updates = 0

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        self.updates += 1

    async def request_permission(self, *args: Any, **kw: Any) -> Any:
        raise RequestError.method_not_found("session/request_permission")


class _ParseErrors(logging.Handler):
    """Counts the ACP SDK's "could not parse a line" reports: stdout that is not the protocol."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "Error parsing JSON-RPC message" in record.getMessage():
            self.count += 1


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
        assert (usage["used"], usage["size"]) == (21, 1_000_000) and "_meta" not in usage, usage
        assert usage["cost"]["currency"] == "USD" and usage["cost"]["amount"] > 0, usage

    def info_records(self) -> list[SessionFailure]:
        out = []
        for u in self.updates:
            if u["sessionUpdate"] == "session_info_update":
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


class AgentUnderTest(AgentWorkspace):
    """``python -m lifecycle.agent`` in a subprocess and a real ACP client connected to it."""

    def __init__(self, kind: str, root: Path, args: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self.args = args
        self.capable = kind == "capable"
        self.root = root
        self._workspace(root)
        self.script = Script()
        self.api = FakeAnthropicAPI(self.script)
        self.frames: list[tuple[StreamDirection, dict[str, Any]]] = []
        self.loop = LoopThread()
        self.parse_errors = _ParseErrors()
        self.state: dict[str, Any] = {}
        self.returncode: int | None = None
        self.stopped = False
        self.init: dict[str, Any] = {}
        self._frames_changed = threading.Condition()

    # -------------------------------------------------------------- lifecycle

    def start(self) -> None:
        logging.getLogger().addHandler(self.parse_errors)
        self.api.start()
        self.loop.call(self._start(), 60)

    async def _start(self) -> None:
        env = self.agent_env(MAX_RETRIES)
        self._stderr = self.stderr_path.open("w")
        self._stack = contextlib.AsyncExitStack()
        self.conn, self.proc = await self._stack.enter_async_context(
            acp.spawn_agent_process(
                RecordingClient(),  # type: ignore[arg-type]
                sys.executable,
                "-m",
                "lifecycle.agent",
                *self.args,
                env=env,
                cwd=str(self.cwd),
                transport_kwargs={"stderr": self._stderr},
                observers=[self._observe],
            )
        )
        caps = ClientCapabilities(field_meta=AIR) if self.capable else ClientCapabilities()
        start = len(self.frames)
        await self.conn.initialize(protocol_version=1, client_capabilities=caps)
        self.init = next(m for d, m in self.frames[start:] if d == StreamDirection.INCOMING and "result" in m)

    def _observe(self, ev: StreamEvent) -> None:
        with self._frames_changed:
            self.frames.append((ev.direction, ev.message))
            self._frames_changed.notify_all()

    def wait_frames(self, predicate: Any, timeout: float = 15) -> None:
        """Block until ``predicate()`` holds; re-checked on every frame the client sees."""
        with self._frames_changed:
            assert self._frames_changed.wait_for(predicate, timeout), "the expected frame never arrived"

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        if self.returncode is None:
            with contextlib.suppress(Exception):
                self.returncode = self.loop.call(self._stop(), 30)
        self.loop.close()
        self.api.stop()
        self._stderr.close()
        logging.getLogger().removeHandler(self.parse_errors)

    async def _stop(self) -> int:
        # The client goes away: stdin closes, the agent must close its runtimes and exit by itself.
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = await asyncio.wait_for(self.proc.wait(), 20)
        await self._stack.aclose()
        return code

    # -------------------------------------------------------------- exchanges

    def call(self, coro: Coroutine[Any, Any, Any], timeout: float = 60) -> Any:
        return self.loop.call(coro, timeout)

    def new_session(self) -> str:
        response = self.call(self.conn.new_session(cwd=str(self.cwd)))
        return str(response.session_id)

    def prompt(self, sid: str, text: str, *replies: Any, then: Any = "success", timeout: float = 60) -> Outcome:
        self.script.load(*replies, then=then)
        out = self.exchange(sid, self.conn.prompt(session_id=sid, prompt=[acp.text_block(text)]), timeout)
        assert self.script.left == 0, "the CLI sent fewer requests than scripted"
        return out

    def load(self, sid: str) -> Outcome:
        return self.exchange(sid, self.conn.load_session(cwd=str(self.cwd), session_id=sid))

    def exchange(self, sid: str, call: Coroutine[Any, Any, Any], timeout: float = 60) -> Outcome:
        start = len(self.frames)
        t0 = time.monotonic()
        model, error = None, None
        try:
            model = self.call(call, timeout)
        except RequestError as exc:
            error = exc
        elapsed = time.monotonic() - t0
        frames = self.frames[start:]
        request = next(m for d, m in frames if d == StreamDirection.OUTGOING and "method" in m and "id" in m)
        mine = [
            m
            for d, m in frames
            if d == StreamDirection.INCOMING
            and ((m.get("id") == request["id"] and "method" not in m) or m.get("params", {}).get("sessionId") == sid)
            and turn_frame(m)
        ]
        (answer,) = [m for m in mine if "method" not in m]
        out = Outcome(sid, mine, answer.get("result"), answer.get("error"), model, elapsed)
        assert (error is None) == (out.error is None)
        return out

    # -------------------------------------------------------------- what the agent left behind

    def turn_id(self, sid: str, text: str) -> str:
        """The uuid Claude stored the user message ``text`` under (the agent's turn id)."""
        (uid,) = [
            e["uuid"] for e in self.transcript(sid) if e.get("type") == "user" and e["message"].get("content") == text
        ]
        return str(uid)

    def claude_error_kind(self, sid: str) -> str | None:
        """The SDK error kind Claude stored with its last synthetic message (the transcript's
        top-level ``error``), which a legacy client gets as ``data.errorKind``."""
        kinds = [
            e.get("error")
            for e in self.transcript(sid)
            if e.get("type") == "assistant" and e["message"].get("model") == "<synthetic>"
        ]
        return kinds[-1] if kinds and isinstance(kinds[-1], str) else None

    def wait_log(self, predicate: Any, timeout: float = 15) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for entry in self.log():
                if predicate(entry):
                    return entry
            time.sleep(0.1)
        raise AssertionError("the agent never logged the expected line")


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    started: dict[str, AgentUnderTest] = {}

    def get(kind: str) -> AgentUnderTest:
        if kind not in started:
            agent = AgentUnderTest(kind, tmp_path_factory.mktemp(f"acp-{kind}"))
            started[kind] = agent
            agent.start()
        return started[kind]

    yield get
    for agent in started.values():
        agent.stop()


# ------------------------------------------------------------------ shared checks


def legacy_error(code: int, claude: str, kind: str | None) -> dict[str, Any]:
    """The reference adapter's legacy JSON-RPC error (docs/parity, item 8), written out:
    authentication is ``-32000 "Authentication required"`` with no data; anything else
    ``-32603 "Internal error: <Claude's text>"`` with ``data: {"errorKind": <SDK kind>}``."""
    if code == -32000:
        return {"code": -32000, "message": "Authentication required"}
    error: dict[str, Any] = {"code": -32603, "message": f"Internal error: {claude}"}
    if kind is not None:
        error["data"] = {"errorKind": kind}
    return error


def check_retried_failure(
    agent: AgentUnderTest,
    out: Outcome,
    text: str,
    *,
    category: str,
    warning_category: str,
    actions: list[str],
    legacy_code: int = -32603,
    has_response: bool = True,
) -> None:
    """Warnings revise the turn's record in place, then the error lands on the PromptResponse."""
    claude = agent.claude_text(out.sid)
    if not agent.capable:
        assert out.error is not None
        assert out.error == legacy_error(legacy_code, claude, agent.claude_error_kind(out.sid))
        if legacy_code == -32000:  # a login request: the -32000 alone, as the reference sends it
            assert out.kinds() == [] and out.texts() == []
        else:  # Claude's text stays in the transcript
            assert out.kinds() == ["agent_message_chunk"] and out.texts() == [claude]
        assert "jetbrains" not in json.dumps(out.frames)
        return
    turn = agent.turn_id(out.sid, text)
    incident = f"{turn}:error"
    warnings = out.info_records()
    assert [(w.id, w.revision, w.severity.value, w.category.value, w.title, w.actions) for w in warnings] == [
        (incident, i, "warning", warning_category, title, ())
        for i, title in enumerate(RETRY_TITLES[has_response], start=1)
    ]
    assert out.result is not None and out.result["stopReason"] == "end_turn"
    final = out.response_record()
    assert final is not None
    assert (final.id, final.revision, final.severity.value, final.category.value) == (
        incident,
        MAX_RETRIES + 1,
        "error",
        category,
    )
    assert [a.value for a in final.actions] == actions
    assert final.title == claude and final.details is None
    # the SDK model the client code got carries the same record
    assert read_record(out.model.field_meta) == final
    # one transcript entry, updated in place; Claude's prose is not duplicated as agent text
    view = out.projection()
    assert view.received == {incident: list(range(1, MAX_RETRIES + 2))}
    assert [(e.kind, e.carrier) for e in view.entries] == [("record", "prompt_response")]
    assert out.texts() == []


# ------------------------------------------------------------------ scenarios


@pytest.mark.parametrize("kind", KINDS)
def test_initialize_negotiates_the_extension(kind: str, agents: Any) -> None:
    agent = agents(kind)
    caps = agent.init["result"]["agentCapabilities"]
    assert caps["loadSession"] is True
    assert [m["id"] for m in agent.init["result"]["authMethods"]] == ["claude-login"]
    if agent.capable:
        assert caps["_meta"]["jetbrains"]["air"] == {"version": 1, "capabilities": ["sessionFailure"]}
    else:
        assert "_meta" not in caps
    (line,) = [e for e in agent.log() if e.get("event") == "agent.initialize"]
    assert line["negotiated"] is agent.capable


def failed_session(agent: AgentUnderTest, name: str) -> tuple[str, str, Outcome]:
    """A session whose one prompt failed (``name``: "usage_limit" or "rate_limit"): made once per
    agent, by whichever test asks first, and never prompted again by any test."""
    if name not in agent.state:
        sid = agent.new_session()
        text = f"{name.replace('_', ' ')} ({agent.kind})"
        if name == "usage_limit":
            out = agent.prompt(sid, text, "usage_limit_gateway")
        else:
            out = agent.prompt(sid, text, rate_limited(), rate_limited(), rate_limited())
        agent.state[name] = (sid, text, out)
    result: tuple[str, str, Outcome] = agent.state[name]
    return result


@pytest.mark.parametrize("kind", KINDS)
def test_rate_limit_retries_then_fails(kind: str, agents: Any) -> None:
    agent = agents(kind)
    sid, text, out = failed_session(agent, "rate_limit")
    assert RATE_MESSAGE in agent.claude_text(sid)
    check_retried_failure(agent, out, text, category="limit", warning_category="limit", actions=["retry"])


@pytest.mark.parametrize("kind", KINDS)
def test_overload(kind: str, agents: Any) -> None:
    agent = agents(kind)
    sid = agent.new_session()
    text = f"overload ({kind})"
    out = agent.prompt(sid, text, overloaded(), overloaded(), overloaded())
    assert OVERLOAD_MESSAGE in agent.claude_text(sid)
    check_retried_failure(agent, out, text, category="service", warning_category="service", actions=["retry"])


@pytest.mark.parametrize("kind", KINDS)
def test_connection_dropped(kind: str, agents: Any) -> None:
    agent = agents(kind)
    sid = agent.new_session()
    text = f"connection dropped ({kind})"
    out = agent.prompt(sid, text, CloseReply(), CloseReply(), CloseReply())
    # no HTTP response: the warnings are "connection"; the CLI ends the turn with server_error (no HTTP
    # status), which is "service" (issue 21 rule 3: "`server_error` … → `service`", as the reference says)
    check_retried_failure(
        agent, out, text, category="service", warning_category="connection", actions=["retry"], has_response=False
    )


@pytest.mark.parametrize("kind", KINDS)
def test_retry_then_success(kind: str, agents: Any) -> None:
    agent = agents(kind)
    sid = agent.new_session()
    text = f"retry then success ({kind})"
    out = agent.prompt(sid, text, overloaded(), "success")
    assert out.result == SUCCESS_RESULT  # no record on a success
    answer = [e for e in agent.transcript(sid) if e.get("type") == "assistant"][-1]["message"]
    real = "".join(b["text"] for b in answer["content"] if b.get("type") == "text")
    assert real and answer["model"] != "<synthetic>"
    # Claude's answer streamed chunk by chunk; joined, the text Claude stored
    assert out.texts() == ["Hello", " from the fake", " API."] and out.text() == real == SUCCESS_TEXT
    out.check_success_usage()
    if not agent.capable:
        assert out.kinds() == SUCCESS_KINDS
        return
    turn = agent.turn_id(sid, text)
    (warning,) = out.info_records()
    assert (warning.id, warning.revision, warning.severity.value) == (f"{turn}:error", 1, "warning")
    # the warning stays in the transcript, before the answer; recovery publishes nothing
    view = out.projection()
    assert [(e.kind, e.text) for e in view.entries] == [("record", ""), *(("agent", t) for t in SUCCESS_CHUNKS)]
    assert out.kinds() == ["session_info_update", *SUCCESS_KINDS]
    agent.wait_log(
        lambda e: (
            e.get("incident_id") == f"{turn}:error"
            and e.get("to_state") == "historical"
            and e.get("transition") == "confirmed_attempt"
        )
    )


@pytest.mark.parametrize("kind", KINDS)
def test_auth_failure_then_successful_auth(kind: str, agents: Any) -> None:
    agent = agents(kind)
    sid = agent.new_session()
    valid = threading.Event()

    def key(request: RequestRecord) -> Any:
        return "success" if valid.is_set() else unauthorized()

    text = f"auth ({kind})"
    out = agent.prompt(sid, text, key, key, key, then=key)
    check_retried_failure(
        agent, out, text, category="access", warning_category="access", actions=["login"], legacy_code=-32000
    )
    # the user fixes the credentials, the client runs the login action: ACP authenticate (with the
    # credentials check, or after the terminal login an editor ran)
    valid.set()
    method = "console-login" if agent.capable else "claude-login"
    assert agent.call(agent.conn.authenticate(method_id=method)) is not None
    again = agent.prompt(sid, f"after login ({kind})", then=key)
    assert again.result == SUCCESS_RESULT and again.info_records() == []
    assert again.kinds() == SUCCESS_KINDS and again.text() == SUCCESS_TEXT
    log = agent.log()
    auth_at = next(i for i, e in enumerate(log) if e.get("event") == "agent.authenticate")
    assert log[auth_at]["ok"] is True
    if agent.capable:
        turn = agent.turn_id(sid, text)
        recovered = [
            i
            for i, e in enumerate(log)
            if e.get("incident_id") == f"{turn}:error" and e.get("transition") == "auth_succeeded"
        ]
        assert len(recovered) == 1 and recovered[0] > auth_at
        assert log[recovered[0]]["to_state"] == "historical"


@pytest.mark.parametrize("kind", KINDS)
def test_usage_limit_gateway_route(kind: str, agents: Any) -> None:
    agent = agents(kind)
    sid, text, out = failed_session(agent, "usage_limit")
    claude = agent.claude_text(sid)
    assert claude.startswith("You've hit your")  # the CLI's own usage-limit message
    if not agent.capable:
        assert out.error == legacy_error(-32603, claude, agent.claude_error_kind(sid))
        assert out.texts() == [claude]
        return
    turn = agent.turn_id(sid, text)
    assert out.info_records() == []  # not retried: no warning
    record = out.response_record()
    assert record is not None
    assert (record.id, record.revision, record.category.value, record.severity.value) == (
        f"{turn}:error",
        1,
        "limit",
        "error",
    )
    assert record.title == claude and record.actions == ()
    assert out.texts() == []


@pytest.mark.parametrize("kind", KINDS)
def test_load_restores_the_failed_session(kind: str, agents: Any) -> None:
    agent = agents(kind)
    # a session of its own: this test prompts it again after the load
    sid = agent.new_session()
    text = f"usage limit to load ({kind})"
    live = agent.prompt(sid, text, "usage_limit_gateway")
    claude = agent.claude_text(sid)
    assert claude.startswith("You've hit your")
    out = agent.load(sid)
    assert loaded_state(out.result)
    restored_id = None
    if not agent.capable:
        # the original transcript, as prose, and no typed record
        assert out.kinds() == ["user_message_chunk", "agent_message_chunk"]
        assert out.texts("user_message_chunk") == [text] and out.texts() == [claude]
        assert "jetbrains" not in json.dumps(out.frames)
    else:
        live_record = live.response_record()
        assert live_record is not None
        # the typed record at its position (after the user's prompt), with the live id
        assert out.kinds() == ["user_message_chunk", "session_info_update"]
        (restored,) = out.info_records()
        assert (restored.id, restored.revision) == (live_record.id, 1)
        restored_id = restored.id
        assert (restored.title, restored.category, restored.severity, restored.actions) == (
            claude,
            live_record.category,
            live_record.severity,
            live_record.actions,
        )
        view = out.projection()
        assert [(e.kind, e.carrier) for e in view.entries] == [("user", None), ("record", "session_info_update")]
    # a fresh ledger: a new epoch for the loaded session
    epochs = [
        e["epoch"]
        for e in agent.log()
        if e.get("session_id") == sid and e.get("event") in ("session.new", "session.load")
    ]
    assert len(epochs) == 2 and epochs[0] != epochs[1]
    # later prompts resume the same Claude session (the history reaches the API)
    after = agent.prompt(sid, f"after load ({kind})", "success")
    assert after.result == SUCCESS_RESULT and after.kinds() == SUCCESS_KINDS
    assert text in json.dumps(agent.api.message_requests[-1].body["messages"])
    if restored_id is not None:  # the restored quota failure stays active until a real model answer
        agent.wait_log(lambda e: e.get("incident_id") == restored_id and e.get("transition") == "real_model_answer")


@pytest.mark.parametrize("kind", KINDS)
def test_load_gives_other_failures_back_as_prose(kind: str, agents: Any) -> None:
    """Only usage-limit messages are typed on replay (spec: "History replay"); other failures
    come back as the prose Claude stored, for either client."""
    agent = agents(kind)
    sid, text, _ = failed_session(agent, "rate_limit")
    other = agent.load(sid)
    assert loaded_state(other.result)
    assert other.kinds() == ["user_message_chunk", "agent_message_chunk"]
    assert other.texts("user_message_chunk") == [text]
    assert other.texts() == [agent.claude_text(sid)] and other.info_records() == []
    assert RATE_MESSAGE in agent.claude_text(sid)


@pytest.mark.parametrize("kind", KINDS)
def test_cancel_answers_cancelled(kind: str, agents: Any) -> None:
    agent = agents(kind)
    sid = agent.new_session()
    agent.script.load(StallReply(30), then="success")
    before = len(agent.api.message_requests)

    async def prompt_then_cancel() -> Any:
        task = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[acp.text_block("stall")]))
        await asyncio.to_thread(agent.api.wait_for_requests, before + 1, 30)
        await agent.conn.cancel(session_id=sid)
        return await asyncio.wait_for(task, 20)

    response = agent.call(prompt_then_cancel())
    assert response.stop_reason == "cancelled" and response.field_meta is None
    # the next prompt gets its own answer, nothing of the cancelled turn
    again = agent.prompt(sid, f"after cancel ({kind})", "success")
    assert again.result == SUCCESS_RESULT and again.info_records() == []
    assert again.kinds() == SUCCESS_KINDS and again.text() == SUCCESS_TEXT


def _session_frames(agent: AgentUnderTest, sid: str, start: int) -> list[dict[str, Any]]:
    return [
        m
        for d, m in agent.frames[start:]
        if d == StreamDirection.INCOMING and m.get("params", {}).get("sessionId") == sid and turn_frame(m)
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_runtime_replaced_after_claude_code_died(kind: str, agents: Any) -> None:
    agent = agents(kind)
    sid = agent.new_session()
    first = agent.prompt(sid, f"before the crash ({kind})", "success")
    assert first.result == SUCCESS_RESULT
    start = len(agent.frames)
    os.kill(session_cli_pid(agent.config_dir, sid), signal.SIGKILL)
    # the SDK's stream raises (ProcessError): the runtime is lost while idle
    lost = agent.wait_log(lambda e: e.get("session_id") == sid and e.get("event") == "runtime.failed")
    assert lost["generation"] == 0 and lost["error_type"] == "ProcessError"
    (epoch,) = [e["epoch"] for e in agent.log() if e.get("session_id") == sid and e.get("event") == "session.new"]
    incident = f"{sid}:{epoch}:1"  # a session-scoped incident: epoch + sequence
    if agent.capable:
        # the ledger logs the transition when it commits, after the send: then wait for the frame
        agent.wait_log(lambda e: e.get("incident_id") == incident and e.get("transition") == "fail")
        agent.wait_frames(lambda: bool(_session_frames(agent, sid, start)))
    else:
        agent.wait_log(
            lambda e: e.get("session_id") == sid and e.get("event") == "ledger.background_failure_legacy_not_shown"
        )
    after = agent.prompt(sid, f"after the crash ({kind})", "success")
    assert after.result == SUCCESS_RESULT and after.info_records() == []
    assert after.kinds() == SUCCESS_KINDS and after.text() == SUCCESS_TEXT
    # a new runtime (generation 1) resumed the same Claude session
    starts = [e for e in agent.log() if e.get("session_id") == sid and e.get("event") == "runtime.start"]
    assert [(e["generation"], e["resume"]) for e in starts] == [(0, False), (1, True)]
    assert "before the crash" in json.dumps(agent.api.message_requests[-1].body["messages"])
    # everything the client saw for the session since the kill, the next prompt's exchange included
    since_kill = _session_frames(agent, sid, start)
    before_prompt = [f for f in since_kill if f not in after.frames]
    if agent.capable:
        # the lost runtime is one record, sent at once, until the replacement recovers it silently
        view = ClientProjection()
        view.receive_all(since_kill)
        (record,) = view.records
        assert [e.carrier for e in view.entries if e.record is not None] == ["session_info_update"]
        sent_at_once = ClientProjection()
        sent_at_once.receive_all(before_prompt)
        assert sent_at_once.records == [record] and record.id == incident
        assert (record.category.value, record.severity.value, [a.value for a in record.actions]) == (
            "connection",
            "error",
            ["new_session"],
        )
        agent.wait_log(lambda e: e.get("incident_id") == incident and e.get("transition") == "runtime_replaced")
    else:
        assert before_prompt == []  # legacy: a background loss is not shown
        assert "jetbrains" not in json.dumps(since_kill)


def test_configuration_reaches_claude_code(tmp_path: Path) -> None:
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    agent = AgentUnderTest("capable", tmp_path, ("--model", "claude-e2e-model", "--cwd", str(workdir)))
    try:
        agent.start()
        sid = agent.new_session()  # the client's cwd (agent.cwd) is overridden by --cwd
        out = agent.prompt(sid, "configured", "success")
        assert out.result == SUCCESS_RESULT
        assert [r.model for r in agent.api.message_requests] == ["claude-e2e-model"]
        assert f"Primary working directory: {workdir}" in json.dumps(agent.api.message_requests[0].body)
        projects = agent.config_dir / "projects"
        assert (projects / sanitize_path(str(workdir)) / f"{sid}.jsonl").is_file()
    finally:
        agent.stop()
    assert agent.returncode == 0 and cli_pids(agent.config_dir) == []


@pytest.mark.parametrize("kind", KINDS)
def test_the_agent_exits_cleanly_and_kept_stdout_for_the_protocol(kind: str, tmp_path: Path) -> None:
    """An agent of its own (stopping the shared one would end the other tests' agent): one failed
    prompt, then the client goes away."""
    agent = AgentUnderTest(kind, tmp_path)
    try:
        agent.start()
        sid = agent.new_session()
        out = agent.prompt(sid, f"before the exit ({kind})", "usage_limit_gateway")
        assert (out.error is None) is agent.capable  # a record for the capable client, an error otherwise
    finally:
        agent.stop()
    assert agent.returncode == 0
    assert cli_pids(agent.config_dir) == [], "Claude Code processes left behind"
    assert agent.parse_errors.count == 0, "the agent wrote something other than JSON-RPC to stdout"
    log = agent.log()
    assert log and log[-1]["event"] == "agent.stop"
    # every line on stderr is a structured log line
    lines = [line for line in agent.stderr_path.read_text().splitlines() if line.strip()]
    assert len(lines) == len(log)
    assert any(e.get("event") == "incident.transition" for e in log) is agent.capable
