"""A fake Claude Code CLI that plays one conformance case's Claude Code side
(``python -m lifecycle.conformance.fake_cli``).

Rules
-----
* It is launched by an adapter exactly like Claude Code (``LIFECYCLE_ACP_CLI`` for ``lifecycle
  acp``, ``CLAUDE_CODE_EXECUTABLE`` for the reference adapter) and speaks what Claude Code speaks
  on stdio with ``--input-format stream-json --output-format stream-json``: JSON lines in, JSON
  lines out, and the SDK control protocol. Every ``control_request`` is answered: ``initialize``
  with a small but complete description of the CLI (commands, models, account), ``mcp_status``
  with no servers, ``get_context_usage`` and ``get_settings`` with empty figures, ``interrupt``
  noted, every other subtype (``set_permission_mode``, ``set_model``, ``set_max_thinking_tokens``,
  ``apply_flag_settings``, ...) with success. ``control_response`` frames answer its own
  ``can_use_tool`` questions.
* The case's steps come from ``script.json`` in the folder named by ``--conformance-dir`` (or the
  ``LIFECYCLE_CONFORMANCE_DIR`` environment variable); the kit writes it
  (:mod:`lifecycle.conformance.runner`). The Claude Code part of each step is: wait for the
  user message (``prompt``; its ``uuid`` is noted in ``turns.jsonl``, the adapter's turn id),
  print an SDK line, wait for an ``interrupt`` (``cancel``), send ``can_use_tool``
  (``permission_asked``) and wait for its answer (``permission_answered``), exit 1
  (``query_error``), end the stream and exit 0 (``query_end``). ``runtime_replaced`` has no
  Claude Code part (:mod:`lifecycle.conformance.cases`): after a process ended, the next one
  the adapter starts goes on from the shared counter (first an ``auth_status`` the case put
  between the two, then the prompt's user message).
* Numbers are printed as the case wrote them: a case line is parsed with :func:`loads_raw`, which
  keeps every non-integer number token (``1e400`` is no float's ``inf``), and written back with
  :func:`dumps_raw`, which prints that token.
* An SDK line's ``session_id`` is rewritten to the session this process was started for
  (``--session-id`` / ``--resume``), and a top-level ``uuid`` or ``user_message_uuid`` equal to
  one of the case's turn ids to the uuid of the user message the adapter sent for that prompt,
  as the real CLI would print them.
* Waits for the adapter (an interrupt, an answer) are bounded (``WAIT_SECONDS``): on timeout the
  step is done anyway and the miss is written to ``cli.log``; the checked frames then show it.
* The process never outlives its stdin (the adapter closing it, or dying) nor ``LIFETIME_SECONDS``.
  One that ends by the case (``query_error``, ``query_end``) first adds its pid to ``ended`` in
  the folder, so the kit can wait until the adapter has seen it go.

Theory of operation
-------------------
A reader thread takes stdin line by line: control requests are answered at once (a lock keeps
output lines whole), user messages and control responses are handed to the step loop through a
condition. The step loop, in the main thread, follows the lock step with the kit: the counters
``client.step`` (written by the kit) and ``cli.step`` (written here) say how far each side got;
a step with a Claude Code part starts only once the kit finished every earlier client part
(:mod:`lifecycle.conformance.cases`). Several processes may serve one case (a replaced
runtime, several sessions): each takes only the steps of its own session, from the shared
``cli.step`` on.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import sys
import termios
import threading
import time
from pathlib import Path
from typing import Any, TextIO

__all__ = [
    "LIFETIME_SECONDS",
    "WAIT_SECONDS",
    "RawNumber",
    "dumps_raw",
    "loads_raw",
    "main",
    "read_counter",
    "write_counter",
]

WAIT_SECONDS = 5.0
LIFETIME_SECONDS = 300.0
_POLL = 0.01
VERSION = "2.1.999 (lifecycle conformance fake)"


class RawNumber(float):
    """A JSON number token as the case wrote it (``token``), with the float it names as value:
    ``1e400`` stays ``1e400`` (its float is ``inf``, which ``json.dumps`` would print as the
    non-JSON ``Infinity``), ``1.0E2`` stays ``1.0E2``. ``NaN``/``Infinity`` (which ``json``
    accepts though they are not JSON) are kept as written too."""

    __slots__ = ("token",)
    token: str

    def __new__(cls, token: str) -> RawNumber:
        self = super().__new__(cls, token)
        self.token = token
        return self


def loads_raw(text: str) -> Any:
    """``json.loads`` that keeps every non-integer number as a :class:`RawNumber` (integers are
    exact as Python ``int`` already)."""
    return json.loads(text, parse_float=RawNumber, parse_constant=RawNumber)


def dumps_raw(obj: Any, *, ensure_ascii: bool = True) -> str:
    """``json.dumps`` (same separators) that prints a :class:`RawNumber` as its token."""
    if isinstance(obj, RawNumber):
        return obj.token
    if isinstance(obj, dict):
        items = (
            f"{json.dumps(str(k), ensure_ascii=ensure_ascii)}: {dumps_raw(v, ensure_ascii=ensure_ascii)}"
            for k, v in obj.items()
        )
        return "{" + ", ".join(items) + "}"
    if isinstance(obj, (list, tuple)):
        return "[" + ", ".join(dumps_raw(v, ensure_ascii=ensure_ascii) for v in obj) + "]"
    return json.dumps(obj, ensure_ascii=ensure_ascii)


def read_counter(path: Path) -> int:
    try:
        return int(path.read_text() or "0")
    except (OSError, ValueError):
        return 0


def write_counter(path: Path, value: int) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(str(value))
    os.replace(tmp, path)


def _initialize_response() -> dict[str, Any]:
    return {
        "commands": [],
        "agents": [],
        "output_style": "default",
        "available_output_styles": ["default"],
        "models": [
            {"value": "default", "displayName": "Default (recommended)", "description": "the case's model"},
        ],
        "account": {"apiKeySource": "ANTHROPIC_API_KEY", "apiProvider": "firstParty"},
        "pid": os.getpid(),
    }


_RESPONSES: dict[str, dict[str, Any]] = {
    "mcp_status": {"mcpServers": []},
    "get_context_usage": {"categories": [], "totalTokens": 0, "maxTokens": 200000, "percentage": 0},
    "get_settings": {"effective": {}, "sources": []},
    "mcp_set_servers": {"added": [], "removed": [], "errors": {}},
}


# Fields Claude Code prints on every ``result`` line: a case that leaves them out gets these
# (an SDK may read them unconditionally; none of them bears on a sessionFailure record).
_RESULT_DEFAULTS: dict[str, Any] = {
    "duration_ms": 0,
    "duration_api_ms": 0,
    "num_turns": 1,
    "total_cost_usd": 0,
    "usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    "modelUsage": {},
    "permission_denials": [],
}


# Top-level keys of an SDK line that name the user message of a turn: a case's turn id there
# is printed as the uuid the adapter gave that prompt's user message (the echo Claude Code sends
# with ``--replay-user-messages`` carries the adapter's own uuid).
_TURN_KEYS = ("uuid", "user_message_uuid")


def _stream_of(line: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``stream_event`` lines Claude Code prints (with ``--include-partial-messages``) before
    an API answer whose ``stop_details`` only the stream carries to an SDK that drops it from the
    consolidated message (a refusal's explanation): ``message_start``, ``message_delta`` with the
    stop reason and details, ``message_stop``. Other lines get none (their stream would only
    repeat what the consolidated message says)."""
    message = line.get("message")
    if line.get("type") != "assistant" or not isinstance(message, dict) or "stop_details" not in message:
        return []
    common = {
        "type": "stream_event",
        "session_id": line.get("session_id"),
        "parent_tool_use_id": line.get("parent_tool_use_id"),
        "uuid": f"{line.get('uuid')}-stream",
    }
    start = {k: v for k, v in message.items() if k not in ("content", "stop_details")}
    delta = {
        "stop_reason": message.get("stop_reason"),
        "stop_sequence": None,
        "stop_details": message.get("stop_details"),
    }
    return [
        {**common, "event": {"type": "message_start", "message": {**start, "content": []}}},
        {**common, "event": {"type": "message_delta", "delta": delta, "usage": message.get("usage") or {}}},
        {**common, "event": {"type": "message_stop"}},
    ]


class FakeCli:
    def __init__(self, folder: Path, argv: list[str], out: TextIO) -> None:
        self.folder = folder
        self.steps: list[dict[str, Any]] = loads_raw((folder / "script.json").read_text())["steps"]
        self.out = out
        self.session = _arg(argv, "--session-id") or _arg(argv, "--resume")
        self.partial = "--include-partial-messages" in argv
        self.cond = threading.Condition()
        self.write_lock = threading.Lock()
        self.initialized = False
        self.eof = False
        self.users: list[dict[str, Any]] = []
        self.taken = 0  # user messages consumed by ``prompt`` steps
        self.interrupts = 0
        self.interrupts_used = 0
        self.answers: dict[str, dict[str, Any]] = {}
        self.asked: dict[str, str] = {}  # toolUseId -> request id
        self.log_path = folder / "cli.log"
        with (folder / "pids").open("a") as f:
            f.write(f"{os.getpid()}\n")
        self.log(f"start argv={argv[1:]}")

    # ------------------------------------------------------------ output, log
    def log(self, text: str) -> None:
        with self.log_path.open("a") as f:
            f.write(f"[{os.getpid()}] {text}\n")

    def send(self, obj: dict[str, Any]) -> None:
        with self.write_lock:
            self.out.write(dumps_raw(obj, ensure_ascii=False) + "\n")
            self.out.flush()

    def drained(self) -> None:
        """Wait (bounded) until the adapter has read all we wrote: the step is done only when the
        line left the pipe, so the kit's next action comes after the adapter took it."""
        try:
            fd = self.out.fileno()
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                return
        except (OSError, ValueError):
            return
        end = time.monotonic() + WAIT_SECONDS
        buf = bytearray(4)
        while time.monotonic() < end:
            try:
                fcntl.ioctl(fd, termios.FIONREAD, buf)
            except OSError:
                return
            if int.from_bytes(buf, sys.byteorder) == 0:
                return
            time.sleep(_POLL / 2)

    # ------------------------------------------------------------ reader thread
    def read(self, stream: TextIO) -> None:
        for raw in stream:
            try:
                msg = json.loads(raw)
            except json.JSONDecodeError:
                self.log("stdin: a line that is not JSON")
                continue
            if not isinstance(msg, dict):
                continue
            kind = msg.get("type")
            if kind == "control_request":
                self.control(msg)
            elif kind == "control_response":
                response = msg.get("response") or {}
                with self.cond:
                    self.answers[str(response.get("request_id"))] = response
                    self.cond.notify_all()
            elif kind == "user":
                with self.cond:
                    self.users.append(msg)
                    self.cond.notify_all()
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def control(self, msg: dict[str, Any]) -> None:
        request = msg.get("request") or {}
        subtype = str(request.get("subtype"))
        self.log(f"control_request {subtype}")
        body = _initialize_response() if subtype == "initialize" else dict(_RESPONSES.get(subtype, {}))
        self.send(
            {
                "type": "control_response",
                "response": {"subtype": "success", "request_id": msg.get("request_id"), "response": body},
            }
        )
        with self.cond:
            if subtype == "initialize":
                self.initialized = True
            elif subtype == "interrupt":
                self.interrupts += 1
            self.cond.notify_all()

    # ------------------------------------------------------------ step loop
    def wait(self, ready: Any, timeout: float) -> bool:
        end = time.monotonic() + timeout
        with self.cond:
            while not ready():
                left = end - time.monotonic()
                if left <= 0 or self.eof:
                    return bool(ready())
                self.cond.wait(min(left, 0.1))
        return True

    def my_session(self) -> str | None:
        if self.session is None:
            return None
        try:
            mapping: dict[str, str] = json.loads((self.folder / "sessions.json").read_text())
        except (OSError, ValueError):
            return None
        return mapping.get(self.session)

    def run(self) -> int:
        started = time.monotonic()
        if not self.wait(lambda: self.initialized, 60):
            self.log("no initialize request")
        cli_step = self.folder / "cli.step"
        client_step = self.folder / "client.step"
        # Like Claude Code, stdin closing ends the process once nothing more can be done without
        # input: the steps that need none are still played.
        while time.monotonic() - started < LIFETIME_SECONDS:
            n = read_counter(cli_step)
            if n >= len(self.steps):
                if self.eof:
                    break
                self.wait(lambda: False, 0.2)
                continue
            step = self.steps[n]
            if "cli" not in step["sides"]:
                write_counter(cli_step, n + 1)
                continue
            mine = self.my_session()
            other = mine is not None and step["session"] != mine
            waiting = other or read_counter(client_step) < step["client_before"]
            if waiting:  # another process serves that session, or the client is not there yet
                if self.eof:
                    break
                time.sleep(_POLL)
                continue
            if self.eof and step["kind"] == "prompt" and len(self.users) <= self.taken:
                break
            code = self.play(n, step)
            if code is not None:  # noted as ended before the step counts as done: the kit waits for the reaping
                self.mark_ended()
            write_counter(cli_step, n + 1)
            self.log(f"step {n} {step['kind']} done")
            if code is not None:
                self.finish(code)
        self.wait(lambda: False, LIFETIME_SECONDS - (time.monotonic() - started))
        return 0

    def play(self, n: int, step: dict[str, Any]) -> int | None:
        kind, data = step["kind"], step["data"]
        if kind == "sdk":
            line = dict(data)
            if self.session is not None and "session_id" in line:
                line["session_id"] = self.session
            received = self.turn_uuids()
            for key in _TURN_KEYS:
                if isinstance(line.get(key), str) and line[key] in received:
                    line[key] = received[line[key]]
            if line.get("type") == "result":
                line = {**_RESULT_DEFAULTS, **line}
            if self.partial:
                for event in _stream_of(line):
                    self.send(event)
            self.send(line)
            self.drained()
        elif kind == "prompt":
            seen = self.taken
            if self.wait(lambda: len(self.users) > seen, 60):
                user = self.users[seen]
                self.taken += 1
                with (self.folder / "turns.jsonl").open("a") as f:
                    f.write(json.dumps({"step": n, "turnId": data["turnId"], "uuid": user.get("uuid")}) + "\n")
            else:
                self.log(f"step {n}: no user message arrived")
        elif kind == "cancel":
            if self.wait(lambda: self.interrupts > self.interrupts_used, WAIT_SECONDS):
                self.interrupts_used += 1
            else:
                self.log(f"step {n}: no interrupt arrived")
        elif kind == "permission_asked":
            tool = data["toolUseId"]
            name, tool_input = self.tool_use(n, tool)
            request_id = f"perm-{n}"
            self.asked[tool] = request_id
            self.send(
                {
                    "type": "control_request",
                    "request_id": request_id,
                    "request": {
                        "subtype": "can_use_tool",
                        "tool_name": name,
                        "input": tool_input,
                        "tool_use_id": tool,
                        "permission_suggestions": [],
                    },
                }
            )
        elif kind == "permission_answered":
            asked = self.asked.get(data["toolUseId"])
            if asked is not None and not self.wait(lambda: asked in self.answers, WAIT_SECONDS):
                self.log(f"step {n}: the permission question was not answered")
        elif kind == "query_error":
            return 1
        elif kind == "query_end":
            return 0
        return None

    def turn_uuids(self) -> dict[str, str]:
        """The case's turn id -> the uuid of the user message received for it (any process)."""
        found: dict[str, str] = {}
        try:
            rows = (self.folder / "turns.jsonl").read_text().splitlines()
        except OSError:
            return found
        for row in rows:
            data = json.loads(row)
            if isinstance(data.get("uuid"), str):
                found[data["turnId"]] = data["uuid"]
        return found

    def tool_use(self, n: int, tool: str) -> tuple[str, dict[str, Any]]:
        for step in reversed(self.steps[:n]):
            if step["kind"] != "sdk":
                continue
            message = step["data"].get("message")
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("id") == tool:
                    return str(block.get("name", "Bash")), dict(block.get("input") or {})
        return "Bash", {}

    def mark_ended(self) -> None:
        with (self.folder / "ended").open("a") as f:
            f.write(f"{os.getpid()}\n")

    def finish(self, code: int) -> None:
        self.log(f"exit {code}")
        with self.write_lock:
            self.out.flush()
        if code:
            sys.stderr.write("Error: the conformance case ends this Claude Code process here\n")
            sys.stderr.flush()
        os._exit(code)


def _arg(argv: list[str], name: str) -> str | None:
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def _without(argv: list[str], name: str) -> list[str]:
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == name:
            skip = True
        elif not a.startswith(name + "="):
            out.append(a)
    return out


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv if argv is None else argv)
    if "-v" in args[1:] or "--version" in args[1:]:
        print(VERSION)
        return 0
    rest = _without(args[1:], "--conformance-dir")
    if rest[:2] == ["auth", "status"]:  # ``claude auth status --json``: the placeholder key of the kit
        print(
            json.dumps(
                {
                    "loggedIn": False,
                    "authMethod": "api_key",
                    "apiProvider": "firstParty",
                    "apiKeySource": "ANTHROPIC_API_KEY",
                }
            )
        )
        return 0
    folder = _arg(args, "--conformance-dir") or os.environ.get("LIFECYCLE_CONFORMANCE_DIR")
    if not folder:
        print("fake_cli: give --conformance-dir DIR or LIFECYCLE_CONFORMANCE_DIR", file=sys.stderr)
        return 2
    cli = FakeCli(Path(folder), args, sys.stdout)
    reader = threading.Thread(target=cli.read, args=(sys.stdin,), daemon=True)
    reader.start()
    code = cli.run()
    os._exit(code)  # the reader thread may still block on stdin


if __name__ == "__main__":
    sys.exit(main())
