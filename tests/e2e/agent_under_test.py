"""A long-lived agent under test: ``python -m lifecycle.agent`` in a subprocess, a real ACP client
connected to it from an event loop in its own thread, so one agent process serves the many
sessions of a test module (``test_acp_e2e.py``, ``test_contract_rules.py``; the oracle's
:class:`oracle.OracleAgent` runs the reference adapter the same way).

* :class:`Script`: what the fake API answers, loaded by each exchange before its prompt (Claude
  Code's own side requests are answered by the fake API itself);
* :class:`AgentUnderTest`: start, stop, one exchange (:meth:`AgentUnderTest.prompt`,
  :meth:`AgentUnderTest.load`) read back as a :class:`harness.Outcome`, and what the agent left
  behind (its log, Claude's transcript);
* the faults (:func:`rate_limited`, :func:`overloaded`, :func:`unauthorized`) and the shared
  checks of a retried failure (:func:`check_retried_failure`, :func:`legacy_error`), whose
  expected values are written out (the reference's legacy error, the retry titles).

Rules: not a test module (it imports no ``test_*`` module); the fixture ``agents`` that starts
one per client kind is ``conftest.py``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
import threading
import time
from collections import deque
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import acp
from acp import RequestError
from acp.connection import StreamDirection, StreamEvent
from acp.schema import ClientCapabilities

from lifecycle import read_record

from .claude_cli import AgentWorkspace
from .fakeapi import FakeAnthropicAPI, RequestRecord, error_reply
from .harness import AIR, MAX_RETRIES, Outcome, turn_frame

KINDS = ["capable", "legacy"]
#: The adapter's retry progress titles for MAX_RETRIES = 2, written out (Claude supplies no text
#: for ``api_retry``): with an HTTP response as README.md's first trace shows them, without one
#: (``error_status: null``) in the project's wording (tests/test_titles.py).
RETRY_TITLES = {
    True: ["Retrying Claude, attempt 1 of 2.", "Retrying Claude, attempt 2 of 2."],
    False: ["Reconnecting to Claude, attempt 1 of 2.", "Reconnecting to Claude, attempt 2 of 2."],
}

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

    def load(self, *replies: Any, then: Any = "success") -> None:
        with self._lock:
            self._queue = deque(replies)
            self._then = then

    def __call__(self, request: RequestRecord) -> Any:
        with self._lock:
            return self._queue.popleft() if self._queue else self._then

    @property
    def left(self) -> int:
        with self._lock:
            return len(self._queue)


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
