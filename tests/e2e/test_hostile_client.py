"""``lifecycle acp`` against a hostile client and hostile faults, end to end.

The real agent process (``python -m lifecycle.agent``, as in ``test_acp_e2e.py``) gets raw lines
on its stdin, written here byte for byte; its stdout is read frame by frame. Prompts run the real
bundled Claude Code CLI against the fake Anthropic API on 127.0.0.1, whose error bodies can echo
the request back (``fakeapi.echo_reply``: every request header, the gateway token, an upstream
API key, a ``user:password@host`` URL, the password again in prose, a home path and a stack
trace). One test per item of the hardening issue; the in-process counterparts (every
interleaving of a cancel, the transport's guards one by one) are in ``tests/test_agent_session.py``
and ``tests/test_agent_transport.py``.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lifecycle import ClientProjection, SessionFailure, read_record

from .agent_under_test import Script
from .claude_cli import AgentWorkspace, session_cli_pid
from .fakeapi import (
    ECHO_API_KEY,
    ECHO_HOME_PATH,
    ECHO_URL_PASSWORD,
    SUCCESS_CHUNKS,
    SUCCESS_TEXT,
    FakeAnthropicAPI,
    RequestRecord,
    StallReply,
    echo_reply,
    gateway_jwt,
)
from .harness import AIR, MAX_RETRIES, SUCCESS_KINDS, SUCCESS_RESULT, is_title_update, turn_frame

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

#: What must never reach a client frame or a log line: the URL password, the upstream key, the
#: gateway token (its payload segment).
SECRETS = (ECHO_URL_PASSWORD, ECHO_API_KEY.split("-")[2], gateway_jwt().split(".")[1])
ECHO_TRACEBACK_LINE = "UpstreamError: upstream refused the request"


def echo() -> Any:
    return echo_reply(400, "invalid_request_error", "bad request from the gateway")


class Gate:
    """A reply that holds the request until :meth:`open` (then the API answers ``success``)."""

    def __init__(self) -> None:
        self._open = threading.Event()

    def open(self) -> None:
        self._open.set()

    def __call__(self, request: RequestRecord) -> Any:
        self._open.wait(60)
        return "success"


# ------------------------------------------------------------------ the raw client


class RawAgent(AgentWorkspace):
    """``python -m lifecycle.agent`` with stdin written byte for byte and stdout read line by line."""

    def __init__(self, root: Path, *, capable: bool = True, stdout_file: Path | None = None) -> None:
        self.root = root
        self.capable = capable
        self._workspace(root)
        self.script = Script()
        self.api = FakeAnthropicAPI(self.script)
        self.stdout_file = stdout_file
        self.frames: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        self.reading = threading.Event()
        self.reading.set()
        self.state: dict[str, Any] = {}
        self._cond = threading.Condition()
        self._next_id = 1000
        self._reader: threading.Thread | None = None
        self.returncode: int | None = None

    def start(self, *, initialize: bool = True) -> RawAgent:
        self.api.start()
        env = self.agent_env(MAX_RETRIES)
        env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
        self._stderr = self.stderr_path.open("w")
        self._stdout = self.stdout_file.open("wb") if self.stdout_file else subprocess.PIPE
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lifecycle.agent"],
            stdin=subprocess.PIPE,
            stdout=self._stdout,
            stderr=self._stderr,
            cwd=str(self.cwd),
            env=env,
        )
        if self.stdout_file is None:
            self._reader = threading.Thread(target=self._read, name="raw-agent-stdout", daemon=True)
            self._reader.start()
        if initialize:
            caps = {"_meta": AIR} if self.capable else {}
            reply = self.call("initialize", {"protocolVersion": 1, "clientCapabilities": caps})
            assert "result" in reply, reply
        return self

    def _read(self) -> None:
        assert self.proc.stdout is not None
        while True:
            self.reading.wait()
            line = self.proc.stdout.readline()
            if not line:
                break
            with self._cond:
                self.raw.append(line)
                try:
                    self.frames.append(json.loads(line))
                except ValueError:
                    self.frames.append({"unparseable": line[:200].decode("utf-8", "replace")})
                self._cond.notify_all()

    # -------------------------------------------------------------- writing

    def write(self, *lines: bytes) -> None:
        """Write ``lines`` (each gets its newline) in one ``write``."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"".join(line + b"\n" for line in lines))
        self.proc.stdin.flush()

    def message(self, method: str, params: Any, *, request: bool = True) -> tuple[int | None, bytes]:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        msg_id = None
        if request:
            msg_id = self._next_id = self._next_id + 1
            msg["id"] = msg_id
        return msg_id, json.dumps(msg).encode()

    def send(self, method: str, params: Any) -> int:
        msg_id, line = self.message(method, params)
        self.write(line)
        assert msg_id is not None
        return msg_id

    def call(self, method: str, params: Any, timeout: float = 60) -> dict[str, Any]:
        return self.reply(self.send(method, params), timeout)

    def prompt_line(self, sid: str, text: str) -> tuple[int, bytes]:
        msg_id, line = self.message("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]})
        assert msg_id is not None
        return msg_id, line

    def cancel_line(self, sid: str) -> bytes:
        return self.message("session/cancel", {"sessionId": sid}, request=False)[1]

    def new_session(self) -> str:
        reply = self.call("session/new", {"cwd": str(self.cwd), "mcpServers": []})
        return str(reply["result"]["sessionId"])

    # -------------------------------------------------------------- reading

    def wait(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 60, start: int = 0) -> dict[str, Any]:
        with self._cond:
            found: list[dict[str, Any]] = []

            def ready() -> bool:
                found[:] = [f for f in self.frames[start:] if predicate(f)]
                return bool(found)

            assert self._cond.wait_for(ready, timeout), "the agent never sent the expected frame"
            return found[0]

    def reply(self, msg_id: int, timeout: float = 60) -> dict[str, Any]:
        return self.wait(lambda f: f.get("id") == msg_id and "method" not in f, timeout)

    def null_errors(self) -> list[dict[str, Any]]:
        with self._cond:
            return [f["error"] for f in self.frames if "id" in f and f["id"] is None and "error" in f]

    def expect_null_errors(self, lines: list[bytes], timeout: float = 30) -> list[int]:
        """Write each line; the codes of the ``id: null`` errors they got, in order."""
        before = len(self.null_errors())
        for line in lines:
            self.write(line)
        with self._cond:
            assert self._cond.wait_for(lambda: len(self.null_errors()) >= before + len(lines), timeout)
        errors = self.null_errors()[before:]
        assert len(errors) == len(lines), errors
        return [e["code"] for e in errors]

    def session_frames(self, sid: str, start: int = 0) -> list[dict[str, Any]]:
        with self._cond:
            return [f for f in self.frames[start:] if f.get("params", {}).get("sessionId") == sid and turn_frame(f)]

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_log(self, predicate: Callable[[dict[str, Any]], bool], timeout: float) -> dict[str, Any]:
        """The first log line (stderr JSON) ``predicate`` accepts, waiting for it to be written."""
        deadline = time.monotonic() + timeout
        while True:
            found = [e for e in self.log() if predicate(e)]
            if found:
                return found[0]
            assert time.monotonic() < deadline, "the agent never logged the expected line"
            time.sleep(0.05)  # polls a file for a line: what is waited for is the line itself

    def wait_stdin_full(self, timeout: float) -> bool:
        """Whether the agent's stdin pipe fills up to its capacity (less than one line free): the
        agent has stopped reading it."""
        assert self.proc.stdin is not None
        fd = self.proc.stdin.fileno()
        capacity = fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
        unread = array.array("i", [0])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            fcntl.ioctl(fd, termios.FIONREAD, unread, True)
            if unread[0] > capacity - 512:
                return True
            time.sleep(0.05)
        return False

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS")

    # -------------------------------------------------------------- what it left behind

    def stop(self) -> int:
        if self.returncode is None:
            with contextlib.suppress(Exception):
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            self.reading.set()
            try:
                self.returncode = self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.returncode = self.proc.wait(10)
            if self._reader is not None:
                self._reader.join(10)
            self.api.stop()
            self._stderr.close()
            if self.stdout_file is not None and not isinstance(self._stdout, int):
                self._stdout.close()
        return self.returncode


@pytest.fixture(scope="module")
def raw_agents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], RawAgent]]:
    started: dict[str, RawAgent] = {}

    def get(kind: str) -> RawAgent:
        if kind not in started:
            started[kind] = RawAgent(tmp_path_factory.mktemp(f"hostile-{kind}"), capable=kind == "capable").start()
        return started[kind]

    yield get
    for agent in started.values():
        agent.stop()


def in_flight(agent: RawAgent) -> tuple[str, int, Gate]:
    """A session whose prompt is in flight (Claude Code waits on the API until the gate opens)."""
    sid = agent.new_session()
    gate = Gate()
    agent.script.load(gate)
    before = len(agent.api.message_requests)
    prompt_id, line = agent.prompt_line(sid, "a prompt in flight")
    agent.write(line)
    assert agent.api.wait_for_requests(before + 1, 60), "the prompt never reached the API"
    return sid, prompt_id, gate


def finish(agent: RawAgent, prompt_id: int, gate: Gate) -> None:
    gate.open()
    answer = agent.reply(prompt_id)
    assert answer.get("result", {}).get("stopReason") == "end_turn", answer
    agent.script.load()


def frames_of(agent: RawAgent, start: int) -> str:
    with agent._cond:
        return b"".join(agent.raw[start:]).decode("utf-8", "replace")


# ------------------------------------------------------------------ 1. JSON that is not an object


def test_json_that_is_not_an_object_is_answered_and_the_prompt_in_flight_completes(raw_agents: Any) -> None:
    agent = raw_agents("capable")
    _sid, prompt_id, gate = in_flight(agent)
    batch = b'[{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}]'
    codes = agent.expect_null_errors([b"[1,2,3]", b"5", b'"hello"', batch, b"[]", b"true", b"{}"])
    assert codes == [-32600] * 7
    assert agent.alive
    finish(agent, prompt_id, gate)  # the prompt in flight is answered
    assert "result" in agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {"_meta": AIR}})


# ------------------------------------------------------------------ 2. null is not the end of input


def test_a_null_line_is_answered_and_reading_goes_on(raw_agents: Any) -> None:
    agent = raw_agents("capable")
    _sid, prompt_id, gate = in_flight(agent)
    assert agent.expect_null_errors([b"null", b"  null  "]) == [-32600, -32600]
    assert agent.alive
    finish(agent, prompt_id, gate)
    assert agent.new_session()  # later requests are answered


# ------------------------------------------------------------------ 3. lines that do not parse


def test_unparseable_lines_get_a_parse_error_with_a_null_id(raw_agents: Any) -> None:
    agent = raw_agents("capable")
    invalid_utf8 = b'{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"/tmp/\xff\xfe","mcpServers":[]}}'
    deep = b"[" * 50_000 + b"]" * 50_000
    deep_object = b'{"a":' * 50_000 + b"1" + b"}" * 50_000
    truncated = b'{"jsonrpc":"2.0","id":6,"method":"initialize","params":'
    not_json = b'{"jsonrpc":"2.0","id":8,"method":"initialize","params":{"protocolVersion":NaN}}'
    codes = agent.expect_null_errors([invalid_utf8, deep, deep_object, truncated, not_json])
    assert codes == [-32700] * 5
    assert agent.alive
    assert agent.new_session()
    assert not any(f.get("id") in (5, 6, 8) for f in agent.frames)  # no id was made up


# ------------------------------------------------------------------ 4.-6. an error body that echoes secrets


def echo_exchange(agent: RawAgent) -> dict[str, Any]:
    """One prompt whose every API request is answered with the echoing 400 (cached per agent)."""
    if "echo" not in agent.state:
        sid = agent.new_session()
        agent.script.load(then=echo())
        start = len(agent.raw)
        prompt_id, line = agent.prompt_line(sid, "echo my secrets")
        agent.write(line)
        answer = agent.reply(prompt_id, timeout=90)
        agent.script.load()
        stored = agent.claude_text(sid)
        agent.state["echo"] = {
            "sid": sid,
            "answer": answer,
            "frames": agent.session_frames(sid, 0),
            "wire": frames_of(agent, start),
            "stored": stored,
            "headers": dict(agent.api.message_requests[-1].headers),
        }
    result: dict[str, Any] = agent.state["echo"]
    # the fake API really echoed the secrets, and Claude Code really put them in its message
    stored = result["stored"]
    assert all(secret in stored for secret in SECRETS) and ECHO_HOME_PATH in stored, stored
    return result


def assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} leaked: ...{text[max(0, text.find(secret) - 200) :][:400]}..."


def test_a_legacy_client_gets_claudes_text_with_credentials_masked_and_the_rest_byte_for_byte(raw_agents: Any) -> None:
    agent = raw_agents("legacy")
    ex = echo_exchange(agent)
    assert_no_secret(ex["wire"])  # not in any frame of the exchange, capable or legacy
    error = ex["answer"]["error"]
    assert error["code"] == -32603
    (chunk,) = [
        f["params"]["update"]["content"]["text"]
        for f in ex["frames"]
        if f.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
    ]
    # the one deliberate change to legacy prose: credentials masked, nothing else touched. The
    # expectation is written here from what the fake API echoed (fakeapi.echo_text), not computed
    # by the masking under test: each credential it put in, replaced by the placeholder.
    stored, jwt = ex["stored"], gateway_jwt()
    # Claude Code's session id header counts as a credential too (a session token by its name)
    (session_header,) = [(k, v) for k, v in ex["headers"].items() if k.lower() == "x-claude-code-session-id"]
    expected = stored
    for secret, masked in (
        (f"Bearer {jwt}", "Bearer [redacted credential]"),
        (f"alice:{ECHO_URL_PASSWORD}@", "[redacted credential]@"),
        (ECHO_API_KEY, "[redacted key]"),  # an Anthropic key is named as one
        (f"(cookie {ECHO_URL_PASSWORD})", "(cookie [redacted credential])"),
        (f"{session_header[0]}: {session_header[1]}", f"{session_header[0]}: [redacted credential]"),
    ):
        assert secret in expected, secret
        expected = expected.replace(secret, masked)
    assert chunk == expected
    assert ECHO_HOME_PATH in chunk and ECHO_TRACEBACK_LINE in chunk and "Traceback (most recent call last)" in chunk
    assert "https://[redacted credential]@gateway.internal:8443/v1/messages" in chunk
    assert "Authorization: Bearer [redacted credential]" in chunk
    # the JSON-RPC error of the same turn carries Claude's first line, without headers or paths
    texts = [error["message"], *(v for v in (error.get("data") or {}).values() if isinstance(v, str))]
    assert any("API Error: 400 bad request from the gateway" in text for text in texts), error
    shown = json.dumps(error)
    assert ECHO_HOME_PATH not in shown and "HTTP/1.1" not in shown and "X-Stainless" not in shown
    assert not any(f"{name}:" in shown for name in ex["headers"]), shown


@pytest.mark.parametrize("kind", ["capable", "legacy"])
def test_a_secret_found_once_is_masked_wherever_it_recurs(kind: str, raw_agents: Any) -> None:
    agent = raw_agents(kind)
    ex = echo_exchange(agent)
    assert f"(cookie {ECHO_URL_PASSWORD})" in ex["stored"]  # the password recurs as plain prose
    assert_no_secret(ex["wire"])
    assert "(cookie [redacted credential])" in ex["wire"]


def test_header_lines_are_never_title_material(raw_agents: Any) -> None:
    agent = raw_agents("capable")
    ex = echo_exchange(agent)
    record = read_record(ex["answer"]["result"].get("_meta"))
    assert record is not None and record.severity.value == "error"
    shown = record.title + "\n" + (record.details or "")
    for name in ex["headers"]:
        assert f"{name}:" not in shown, name
        assert f"{name.lower()}:" not in shown.lower(), name
    assert "HTTP/1.1" not in shown and "127.0.0.1" not in shown and "X-Stainless" not in shown
    # what is left is Claude's message: its first line and the gateway's own words, the
    # credentials masked and the home path shortened (docs/security.md)
    assert record.title.startswith("API Error: 400 bad request from the gateway")
    assert ECHO_TRACEBACK_LINE in record.title
    assert "https://[redacted credential]@gateway.internal:8443/v1/messages" in shown
    assert ECHO_HOME_PATH not in shown
    assert_no_secret(shown)


# ------------------------------------------------------------------ 7. a cancel right behind its prompt


def test_a_cancel_right_behind_its_prompt_is_never_lost(raw_agents: Any) -> None:
    agent = raw_agents("capable")
    sid = agent.new_session()
    agent.script.load(then=StallReply(30))  # Claude never answers by itself
    for gap in (0.0, 0.0, 0.01, 0.1, 0.5, 1.5):
        prompt_id, line = agent.prompt_line(sid, f"cancel after {gap}s")
        if gap == 0:
            agent.write(line, agent.cancel_line(sid))  # one write: the cancel right behind
        else:
            agent.write(line)
            time.sleep(gap)
            agent.write(agent.cancel_line(sid))
        answer = agent.reply(prompt_id, timeout=30)
        assert answer.get("result", {}).get("stopReason") == "cancelled", (gap, answer)
    # a cancelled turn is still winding down when the next prompt and its cancel arrive
    before = len(agent.api.message_requests)
    first_id, first = agent.prompt_line(sid, "winding down")
    agent.write(first)
    assert agent.api.wait_for_requests(before + 1, 60)
    agent.write(agent.cancel_line(sid))
    second_id, second = agent.prompt_line(sid, "behind the winding-down turn")
    agent.write(second, agent.cancel_line(sid))
    for msg_id in (first_id, second_id):
        assert agent.reply(msg_id, timeout=30)["result"]["stopReason"] == "cancelled"
    # then a prompt Claude answers gets its own answer, nothing of the cancelled turns
    agent.script.load(then="success")
    start = len(agent.frames)
    prompt_id, line = agent.prompt_line(sid, "after the cancels")
    agent.write(line)
    assert agent.reply(prompt_id, timeout=60)["result"] == SUCCESS_RESULT
    updates = [f["params"]["update"] for f in agent.session_frames(sid, start)]
    assert [u["sessionUpdate"] for u in updates] == SUCCESS_KINDS
    texts = [u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
    assert texts == list(SUCCESS_CHUNKS) and "".join(texts) == SUCCESS_TEXT


# ------------------------------------------------------------------ 8. the smaller ones


def test_stdout_to_a_regular_file(tmp_path: Path) -> None:
    out = tmp_path / "frames.jsonl"
    agent = RawAgent(tmp_path, stdout_file=out).start(initialize=False)
    _, init = agent.message("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    _, new = agent.message("session/new", {"cwd": str(agent.cwd), "mcpServers": []})
    agent.write(init, b"null", new)
    deadline = time.monotonic() + 30
    def answered() -> int:
        lines = out.read_text().splitlines()
        return sum(1 for line in lines if line.endswith("}") and "method" not in json.loads(line))

    while answered() < 3 and time.monotonic() < deadline:
        time.sleep(0.05)  # polls a file for the three answers (nothing else to wait on)
    assert agent.stop() == 0
    frames = [json.loads(line) for line in out.read_text().splitlines()]
    # Besides the answers, only the session's state updates (Claude Code's models and commands,
    # sent once it started) and who is signed in (issue 52.4) may be there.
    answers = [f for f in frames if "method" not in f]
    assert {f["method"] for f in frames if "method" in f} <= {"session/update", "_auth/status_update"}
    assert sorted(str(f.get("id")) for f in answers) == ["1001", "1002", "None"]
    assert all("result" in f for f in answers if f["id"] is not None)


def test_a_huge_invalid_request_gets_a_short_error(raw_agents: Any) -> None:
    agent = raw_agents("capable")
    sid = agent.new_session()
    msg_id, line = agent.message("session/prompt", {"sessionId": sid, "prompt": "x " * 10_000_000})  # 20 MB
    agent.write(line)
    reply = agent.reply(msg_id, timeout=60)
    assert reply["error"]["code"] == -32602
    assert len(json.dumps(reply)) < 2_000
    msg_id, line = agent.message("y" * 1_000_000, {})  # an unknown method, a megabyte long
    agent.write(line)
    reply = agent.reply(msg_id)
    assert reply["error"]["code"] == -32601 and len(json.dumps(reply)) < 2_000
    assert agent.new_session()


def test_a_method_that_is_not_a_string_is_an_invalid_request(raw_agents: Any) -> None:
    agent = raw_agents("capable")
    for method in (["session/new"], {"a": 1}, 7, None):
        reply = agent.call(method, {"cwd": str(agent.cwd), "mcpServers": []})  # type: ignore[arg-type]
        assert reply["error"]["code"] == -32600, reply
        assert "unhashable" not in json.dumps(reply)


def test_meta_keys_cannot_override_handler_arguments(raw_agents: Any) -> None:
    agent = raw_agents("capable")
    elsewhere = agent.root / "elsewhere"
    reply = agent.call(
        "session/new",
        {"cwd": str(agent.cwd), "mcpServers": [], "_meta": {"cwd": str(elsewhere), "self": 1, "mcp_servers": 5}},
    )
    assert "result" in reply, reply  # no internal error text
    sid = reply["result"]["sessionId"]
    agent.script.load("success")
    before = len(agent.api.message_requests)
    prompt_id, line = agent.prompt_line(sid, "where am I")
    agent.write(line)
    assert agent.reply(prompt_id)["result"] == SUCCESS_RESULT
    body = json.dumps(agent.api.message_requests[before].body)
    assert f"Primary working directory: {agent.cwd}" in body and str(elsewhere) not in body
    # a cancel's _meta cannot name another session either
    agent.write(agent.message("session/cancel", {"sessionId": "nope", "_meta": {"session_id": sid}}, request=False)[1])
    assert agent.new_session() and agent.alive


def test_the_output_backlog_is_bounded_when_the_client_stops_reading(tmp_path: Path) -> None:
    agent = RawAgent(tmp_path).start()  # initialize answered: the agent is up and idle
    try:
        baseline = agent.rss_mb()
        first_id = max(f["id"] for f in agent.frames if "id" in f) + 1  # (not a pushed notification)
        done = len(agent.frames)
        agent.reading.clear()  # the client stops reading
        total = 16_000  # ~5.6 MB of replies: the 1 MiB backlog, then a full pipe, well before half of them
        accepted = [0]

        def spam() -> None:
            with contextlib.suppress(OSError, ValueError):
                for i in range(total):
                    agent.write(agent.message("initialize", {"protocolVersion": 1})[1])
                    accepted[0] = i + 1

        writer = threading.Thread(target=spam, daemon=True)
        writer.start()
        # the agent says it stopped reading (about 1 MiB of replies waits), then its stdin pipe
        # fills up and stays full: the writer is stalled, where the agent used to take everything
        # and buffer every reply
        paused = agent.wait_log(lambda e: e.get("event") == "transport.input_paused", timeout=120)
        assert paused["backlog"] > 1024 * 1024
        assert agent.wait_stdin_full(timeout=120), "the agent kept reading its stdin"
        stalled = accepted[0]
        assert stalled < total // 2, stalled
        assert agent.rss_mb() - baseline < 64
        assert writer.is_alive() and accepted[0] == stalled  # nothing was read in the meantime
        agent.reading.set()  # the client reads again: every request is answered, in order
        writer.join(120)
        assert not writer.is_alive()
        # (beside them, ``_auth/status_update``: who is signed in, pushed after an initialize)
        def replies() -> list[dict[str, Any]]:
            return [f for f in agent.frames[done:] if "id" in f]

        with agent._cond:
            assert agent._cond.wait_for(lambda: len(replies()) >= total, 120)
        ids = sorted(f["id"] for f in replies())
        assert ids == list(range(first_id, first_id + total)) and all("result" in f for f in replies())
        assert any(e.get("event") == "transport.input_resumed" for e in agent.log())
    finally:
        assert agent.stop() == 0


# ------------------------------------------------------------------ 9. the connection-lost record


def test_the_connection_lost_record_says_what_the_agent_does(raw_agents: Any) -> None:
    agent = raw_agents("capable")
    sid = agent.new_session()
    agent.script.load("success")
    prompt_id, line = agent.prompt_line(sid, "before the crash")
    agent.write(line)
    assert agent.reply(prompt_id)["result"] == SUCCESS_RESULT
    start = len(agent.frames)
    os.kill(session_cli_pid(agent.config_dir, sid), signal.SIGKILL)
    # the session_info_update that carries a record (the session's title or Claude Code's
    # predicted next prompt may come first, whenever Claude Code has them)
    lost = agent.wait(
        lambda f: (
            f.get("params", {}).get("sessionId") == sid
            and f["params"]["update"]["sessionUpdate"] == "session_info_update"
            and not is_title_update(f["params"]["update"])
        ),
        start=start,
    )
    record = read_record(lost["params"]["update"]["_meta"])
    assert isinstance(record, SessionFailure)
    # the record: the spec's action, and a title that says what the agent does next
    assert [a.value for a in record.actions] == ["new_session"] and record.category.value == "connection"
    assert record.title == (
        "The connection to Claude Code was lost. Send a message to restart it, or start a new session."
    )
    # ... which is what happens: the next prompt restarts Claude Code on the same session
    agent.script.load("success")
    prompt_id, line = agent.prompt_line(sid, "after the crash")
    agent.write(line)
    assert agent.reply(prompt_id)["result"] == SUCCESS_RESULT
    starts = [e for e in agent.log() if e.get("session_id") == sid and e.get("event") == "runtime.start"]
    assert [(e["generation"], e["resume"]) for e in starts] == [(0, False), (1, True)]
    assert "before the crash" in json.dumps(agent.api.message_requests[-1].body["messages"])
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if any(e.get("incident_id") == record.id and e.get("transition") == "runtime_replaced" for e in agent.log()):
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the incident did not end with the runtime's replacement")
    view = ClientProjection()
    view.receive_all(agent.session_frames(sid, start))
    assert [r.id for r in view.records] == [record.id]


# ------------------------------------------------------------------ and afterwards


@pytest.mark.parametrize("kind", ["capable", "legacy"])
def test_the_agent_exits_cleanly_and_no_secret_reached_its_log(kind: str, tmp_path: Path) -> None:
    """An agent of its own (the module's shared agents stay up for the other tests): the echoing
    exchange puts every secret in front of it, then it is stopped and its log read."""
    agent = RawAgent(tmp_path, capable=kind == "capable").start()
    try:
        echo_exchange(agent)  # asserts that Claude Code's message really carried every secret
        assert agent.alive
    finally:
        code = agent.stop()
    assert code == 0
    text = agent.stderr_path.read_text()
    assert_no_secret(text)
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == len(agent.log())  # every stderr line is one JSON object
    assert agent.log()[-1]["event"] == "agent.stop"
    assert not [f for f in agent.frames if "unparseable" in f]
