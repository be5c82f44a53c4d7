"""Run one conformance case through a real ACP agent: the kit is the ACP client, the fake CLI
(:mod:`lifecycle.conformance.fake_cli`) is Claude Code.

Rules
-----
* Each case gets its own folder: ``home`` (``HOME``), ``config`` (``CLAUDE_CONFIG_DIR``, where
  ``load`` transcripts are written as Claude Code keeps them:
  ``projects/<sanitised realpath of cwd>/<session uuid>.jsonl``, a subagent's messages in
  ``<session uuid>/subagents/``: :func:`transcript_files`), ``project`` (the session's
  ``cwd``), the fake CLI's launcher ``claude`` (named by ``LIFECYCLE_ACP_CLI`` and
  ``CLAUDE_CODE_EXECUTABLE``; its folder is first on ``PATH``), ``script.json`` and the progress
  counters.
* The agent runs in its own process group with inherited ``ANTHROPIC_*``, ``CLAUDE_*`` and
  ``LIFECYCLE_ACP_*`` variables removed, a placeholder API key and an API URL on 127.0.0.1 that
  nothing serves (the fake CLI never calls it).
* Every wait is bounded: a step waits at most ``step_timeout`` for the other side, the case at
  most ``case_timeout``; an agent that does not start, hangs or exits early fails the case with
  the reason. At the end the agent's stdin is closed, then its process group is terminated and
  killed, and any fake CLI process still alive is killed by pid: nothing is left behind.
* Checked messages are the agent's ``session/update`` notifications and its responses to
  ``session/prompt``, in arrival order, after id mapping (:func:`map_ids`); ``forbid`` is held
  against their JSON text, as check.py holds it against ``lifecycle trace``'s output.
* What the client sends carries the case's numbers as the case wrote them
  (:func:`~lifecycle.conformance.fake_cli.dumps_raw`). An error answer whose id is null (the
  agent could not read a request: a parse error) answers the latest request still waiting, and is
  checked as that request's answer. An error answer to ``initialize`` does not stop the case: it
  is noted, and the case's expectations give the verdict.
* Before each client step the kit waits (bounded) until every fake CLI that ended by the case
  (``query_error``, ``query_end``) has been reaped by the agent, then until the agent is quiet
  (nothing since its last frame and since Claude Code's last step): the agent has seen its Claude
  Code go, and has said what it had to, before the client acts.
* Id mapping: the session id the agent returned (or the uuid the kit loaded) becomes the case's
  ``sessionId``; the response to the k-th ``session/prompt`` gets the k-th ``turnId`` as its id;
  the ``uuid`` of the user message the fake CLI received for that prompt (the adapter's turn id,
  FORMAT.md) becomes that ``turnId`` wherever it appears; a record id whose turn part is still
  unknown is bound, by first appearance, to the ``turnId`` of the prompt running when it arrived.
  ACP 0.12's ``session/prompt`` has no field for a client-chosen message id, so no adapter can
  be handed the case's ``turnId`` directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import shlex
import signal
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import fake_cli
from .cases import CLI, CLIENT, Case, Step
from .expect import check
from .fake_cli import dumps_raw, read_counter, write_counter

__all__ = ["Outcome", "RunOptions", "map_ids", "run_case", "transcript_files"]

_STRIPPED_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "LIFECYCLE_ACP_")
#: The clock the public cases were written at (Unix seconds, 2026-12-04T16:00:00Z), given to the
#: adapter as ``LIFECYCLE_CONFORMANCE_NOW`` (docs/conformance-kit.md).
CASES_NOW = "1796400000"
_REAP_SECONDS = 2.0
_SANITISE = re.compile(r"[^a-zA-Z0-9]")


@dataclass(frozen=True, slots=True)
class RunOptions:
    agent: list[str]
    step_timeout: float = 10.0
    case_timeout: float = 60.0
    quiet: float = 0.25  # the agent sent nothing for this long: it has handled what it got
    keep: Path | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    name: str
    status: str  # PASS, FAIL, N/A
    reason: str = ""
    seconds: float = 0.0

    def line(self) -> str:
        return f"{self.status} {self.name}" + (f": {self.reason}" if self.reason else "")


class CaseFailed(Exception):
    """The run of a case stopped: ``str()`` is the reason shown on its FAIL line."""


@dataclass
class _Frame:
    msg: Any
    prompt: int  # how many prompts had been sent when it arrived


@dataclass
class _Client:
    """The kit's side of one ACP connection."""

    proc: asyncio.subprocess.Process
    opts: RunOptions
    frames: list[_Frame] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    pending: dict[int, asyncio.Future[Any]] = field(default_factory=dict)
    prompt_ids: dict[int, str] = field(default_factory=dict)
    prompt_futures: list[asyncio.Future[Any]] = field(default_factory=list)
    questions: list[dict[str, Any]] = field(default_factory=list)
    answered: set[Any] = field(default_factory=set)
    not_json: int = 0
    last_frame: float = field(default_factory=time.monotonic)
    next_id: int = 0
    gone: asyncio.Event = field(default_factory=asyncio.Event)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def read(self) -> None:
        assert self.proc.stdout is not None
        try:
            while True:
                line = await self.proc.stdout.readline()
                if not line:
                    break
                text = line.decode("utf-8", errors="replace").strip()
                if not text:
                    continue
                self.last_frame = time.monotonic()
                self.raw.append(text)
                try:
                    msg = json.loads(text)
                except json.JSONDecodeError:
                    self.not_json += 1
                    continue
                msg = self._answering(msg)
                self.frames.append(_Frame(msg, len(self.prompt_ids)))
                await self._route(msg)
                self.changed.set()
        finally:
            self.gone.set()
            self.changed.set()
            for fut in self.pending.values():
                if not fut.done():
                    fut.set_exception(CaseFailed("the agent closed its stdout"))

    def _answering(self, msg: Any) -> Any:
        """An error answer with id null (JSON-RPC: the request could not be read) as the answer to
        the latest request still waiting (the kit's requests carry increasing ids)."""
        if isinstance(msg, dict) and "id" in msg and msg["id"] is None and "error" in msg and "method" not in msg:
            waiting = [k for k, fut in self.pending.items() if not fut.done()]
            if waiting:
                return {**msg, "id": max(waiting)}
        return msg

    async def _route(self, msg: Any) -> None:
        if not isinstance(msg, dict):
            return
        if "method" in msg and "id" in msg:  # a request from the agent
            if msg["method"] == "session/request_permission":
                self.questions.append(msg)
            else:
                await self.send({"jsonrpc": "2.0", "id": msg["id"],
                                 "error": {"code": -32601, "message": "not offered by the conformance client"}})
        elif "id" in msg and ("result" in msg or "error" in msg):
            fut = self.pending.pop(msg["id"], None) if isinstance(msg["id"], int) else None
            if fut is not None and not fut.done():
                fut.set_result(msg)

    async def send(self, obj: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((dumps_raw(obj) + "\n").encode())
            await self.proc.stdin.drain()
        except (ConnectionError, RuntimeError) as exc:
            raise CaseFailed(f"the agent stopped reading its stdin ({type(exc).__name__})") from None

    async def request(self, method: str, params: dict[str, Any]) -> asyncio.Future[Any]:
        self.next_id += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = fut
        await self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return fut

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        fut = await self.request(method, params)
        try:
            reply: dict[str, Any] = await asyncio.wait_for(fut, self.opts.step_timeout)
        except TimeoutError:
            raise CaseFailed(f"no answer to {method} within {self.opts.step_timeout:g}s") from None
        return reply

    async def until(self, ready: Any, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while not ready():
            left = end - time.monotonic()
            if left <= 0:
                return False
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), min(left, 0.02))
        return True

    async def settle(self, counter: Path | None = None) -> None:
        """Wait until the agent has been quiet for ``quiet`` seconds (bounded), counted from its
        last frame and, with ``counter``, from Claude Code's last step (the counter file's change):
        a frame still in the pipe, not read yet, must not pass for quiet."""
        end = time.monotonic() + self.opts.step_timeout
        since = self.last_frame
        if counter is not None:
            with contextlib.suppress(OSError):
                since = max(since, time.monotonic() - (time.time() - counter.stat().st_mtime))
        while time.monotonic() < end and not self.gone.is_set():
            idle = time.monotonic() - max(since, self.last_frame)
            if idle >= self.opts.quiet:
                return
            await asyncio.sleep(self.opts.quiet - idle)


def transcript_files(history: list[dict[str, Any]], session_id: str, cwd: str) -> dict[str, str]:
    """A ``load`` history as the files Claude Code keeps for a session: path (relative to the
    project's folder under ``projects/``) -> text, one JSON line a message, oldest first.

    As Claude Code 2.1.332 writes them (``tests/e2e/test_subagents.py`` checks the real layout):
    the top-level messages go to ``<session>.jsonl``, chained by ``parentUuid``; a subagent's
    messages (the case gives them ``parent_tool_use_id``, the id of the Agent tool use that ran
    the subagent) go to ``<session>/subagents/agent-<agentId>.jsonl``, chained on their own and
    marked ``isSidechain`` with the ``agentId``, beside an ``agent-<agentId>.meta.json`` whose
    ``toolUseId`` names that Agent call. The SDK's ``get_session_messages`` reads the first file
    only; its ``get_subagent_messages`` reads a subagent's.
    """
    files: dict[str, list[str]] = {}
    parents: dict[str, str | None] = {}
    for i, entry in enumerate(history):
        spawner = entry.get("parent_tool_use_id")
        agent = "a" + hashlib.sha256(str(spawner).encode()).hexdigest()[:16] if spawner is not None else None
        name = f"{session_id}.jsonl" if agent is None else f"{session_id}/subagents/agent-{agent}.jsonl"
        if agent is not None and name not in files:
            meta = {"agentType": "general-purpose", "toolUseId": spawner}
            files[f"{session_id}/subagents/agent-{agent}.meta.json"] = [json.dumps(meta, ensure_ascii=False)]
        row = {k: v for k, v in entry.items() if k not in ("session_id", "parent_tool_use_id")}
        row.update({
            "parentUuid": parents.get(name), "sessionId": session_id, "isSidechain": agent is not None,
            "userType": "external", "cwd": cwd, "version": "2.1.999",
            "timestamp": f"2026-01-01T00:00:{i % 60:02d}.000Z",
        })
        if agent is not None:
            row["agentId"] = agent
        files.setdefault(name, []).append(dumps_raw(row, ensure_ascii=False))
        parents[name] = entry["uuid"]
    return {name: "\n".join(lines) + "\n" for name, lines in files.items()}


def _deep_replace(obj: Any, mapping: dict[str, str]) -> Any:
    if isinstance(obj, str):
        for old, new in mapping.items():
            if old in obj:
                obj = obj.replace(old, new)
        return obj
    if isinstance(obj, list):
        return [_deep_replace(v, mapping) for v in obj]
    if isinstance(obj, dict):
        return {k: _deep_replace(v, mapping) for k, v in obj.items()}
    return obj


def map_ids(
    frames: list[tuple[Any, int]],
    prompt_ids: dict[int, str],
    known: dict[str, str],
    turns: list[str],
) -> list[dict[str, Any]]:
    """The checked messages with the case's ids (see the module's rules).

    Args:
        frames: every frame with the number of prompts sent when it arrived.
        prompt_ids: the kit's JSON-RPC id of each ``session/prompt`` -> the case's ``turnId``.
        known: agent id -> case id (sessions; the turn uuids the fake CLI saw).
        turns: the case's ``turnId`` of each prompt, in order.
    """
    mapping = dict(known)
    bound = set(mapping.values())
    out = []
    for msg, sent in frames:
        if not isinstance(msg, dict):
            continue
        if msg.get("method") == "session/update":
            pass
        elif msg.get("id") in prompt_ids and ("result" in msg or "error" in msg):
            msg = {**msg, "id": prompt_ids[msg["id"]]}
        else:
            continue
        meta = _record(msg)
        if meta is not None and isinstance(meta.get("id"), str) and ":" in meta["id"] and sent:
            turn = meta["id"].rsplit(":", 1)[0]
            if turn not in mapping and turn not in bound and turns[sent - 1] not in bound:
                mapping[turn] = turns[sent - 1]
                bound.add(turns[sent - 1])
        out.append(_deep_replace(msg, mapping))
    return out


def _record(msg: dict[str, Any]) -> dict[str, Any] | None:
    if msg.get("method") == "session/update":
        meta = ((msg.get("params") or {}).get("update") or {}).get("_meta")
    else:
        meta = (msg.get("result") or {}).get("_meta") if isinstance(msg.get("result"), dict) else None
    rec = ((meta or {}).get("jetbrains") or {}).get("air", {}).get("sessionFailure") if isinstance(meta, dict) else None
    return rec if isinstance(rec, dict) else None


def _launcher(folder: Path) -> Path:
    path = folder / "claude"
    path.write_text(
        "#!/bin/sh\n"
        # The module by its path: stdlib only, so it starts without importing the library.
        f"exec {shlex.quote(sys.executable)} {shlex.quote(str(Path(fake_cli.__file__).resolve()))} "
        f"--conformance-dir {shlex.quote(str(folder))} \"$@\"\n"
    )
    path.chmod(0o755)
    return path


def _agent_env(folder: Path, launcher: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_STRIPPED_PREFIXES)}
    env.update({
        "HOME": str(folder / "home"),
        "CLAUDE_CONFIG_DIR": str(folder / "config"),
        "LIFECYCLE_ACP_CLI": str(launcher),
        "CLAUDE_CODE_EXECUTABLE": str(launcher),
        # an adapter that takes no executable path finds `claude` on PATH: the launcher first
        "PATH": os.pathsep.join([str(launcher.parent), *filter(None, [os.environ.get("PATH")])]),
        "ANTHROPIC_API_KEY": "sk-conformance-placeholder",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "LIFECYCLE_CONFORMANCE_DIR": str(folder),
        "TZ": "UTC",  # a window's reset time reads in the agent's local zone: the cases' is UTC
        # the cases' clock (2026-12-04T16:00:00Z, before every reset they name): an adapter that
        # judges a reset past by the time it reads it reads them at this time, not today's
        "LIFECYCLE_CONFORMANCE_NOW": CASES_NOW,
    })
    return env


def _write_script(case: Case, folder: Path) -> None:
    steps = []
    last_client = last_cli = 0
    for step in case.plan.steps:
        row = step.to_json()
        row["client_before"], row["cli_before"] = last_client, last_cli
        steps.append(row)
        if CLIENT in step.sides:
            last_client = step.index + 1
        if CLI in step.sides and not step.deferred:
            last_cli = step.index + 1
    (folder / "script.json").write_text(dumps_raw({"case": case.name, "steps": steps}))
    write_counter(folder / "client.step", 0)
    write_counter(folder / "cli.step", 0)
    (folder / "sessions.json").write_text("{}")


class _Run:
    """One case against one agent process."""

    def __init__(self, case: Case, opts: RunOptions, folder: Path) -> None:
        self.case, self.opts, self.folder = case, opts, folder
        self.project = folder / "project"
        self.sessions: dict[str, str] = {}  # agent's session id -> case's
        self.actual: dict[str, str] = {}  # case's session id -> agent's
        self.auth_methods: list[Any] = []
        self.cancelled_prompt = False
        self.client: _Client | None = None
        self.notes: list[str] = []
        self.reaped: set[int] = set()  # fake CLIs that ended and were waited for

    async def drive(self, client: _Client) -> None:
        self.client = client
        for step in self.case.plan.steps:
            if CLIENT in step.sides:
                await self.wait_cli(self._cli_before(step), step)
                await self.wait_reaped()
                await client.settle(self.folder / "cli.step")
                await self.client_part(step)
            write_counter(self.folder / "client.step", step.index + 1)
        last_cli = max((s.index + 1 for s in self.case.plan.steps if CLI in s.sides), default=0)
        await self.wait_cli(last_cli, None)
        pending = [f for f in client.prompt_futures if not f.done()]
        if pending:
            done, _ = await asyncio.wait(pending, timeout=self.opts.step_timeout)
            if len(done) < len(pending):
                self.notes.append(f"{len(pending) - len(done)} prompt(s) never answered")
        await client.settle()

    def _cli_before(self, step: Step) -> int:
        earlier = self.case.plan.steps[: step.index]
        return max((s.index + 1 for s in earlier if CLI in s.sides and not s.deferred), default=0)

    async def wait_reaped(self) -> None:
        """Wait (at most ``_REAP_SECONDS``, once for each) until every fake CLI that ended by the
        case is gone from the process table: the agent reaped it, so it knows its Claude Code ended."""
        assert self.client is not None
        try:
            ended = {int(p) for p in (self.folder / "ended").read_text().split()} - self.reaped
        except (OSError, ValueError):
            return
        self.reaped |= ended
        if not await self.client.until(lambda: not any(_unreaped(pid, self.folder) for pid in ended), _REAP_SECONDS):
            self.notes.append("a Claude Code process that ended was not reaped by the agent")

    async def wait_cli(self, target: int, step: Step | None) -> None:
        assert self.client is not None
        counter = self.folder / "cli.step"
        if target == 0:
            return
        ok = await self.client.until(lambda: read_counter(counter) >= target or self.client.gone.is_set(),
                                     self.opts.step_timeout)
        if read_counter(counter) >= target:
            return
        done = read_counter(counter)
        blocked = next((s for s in self.case.plan.steps[done:] if CLI in s.sides), None)
        where = f"line {blocked.line} ({blocked.kind})" if blocked else "the end"
        before = f" before line {step.line} ({step.kind})" if step else " at the end of the case"
        if not ok:
            raise CaseFailed(f"Claude Code did not get past {where}{before} within {self.opts.step_timeout:g}s")
        raise CaseFailed(f"the agent exited (status {self.client.proc.returncode}) while Claude Code was at {where}")

    async def client_part(self, step: Step) -> None:
        client = self.client
        assert client is not None
        data = step.data
        if step.kind == "initialize":
            reply = await client.call("initialize", {
                "protocolVersion": 1, "clientCapabilities": data.get("clientCapabilities"),
                "clientInfo": {"name": "lifecycle-conformance", "version": "1"},
            })
            if "error" in reply:  # noted: the expectations give the verdict
                self.notes.append(f"initialize answered {json.dumps(reply['error'])[:200]}")
            self.auth_methods = list((reply.get("result") or {}).get("authMethods") or [])
        elif step.kind == "session":
            reply = await client.call("session/new", {"cwd": str(self.project), "mcpServers": []})
            sid = (reply.get("result") or {}).get("sessionId")
            if not isinstance(sid, str):
                raise CaseFailed(f"session/new failed: {json.dumps(reply.get('error'))[:200]}")
            self.bind(sid, data["sessionId"])
        elif step.kind == "load":
            sid = str(uuid.uuid4())
            cwd = os.path.realpath(self.project)
            where = self.folder / "config" / "projects" / _SANITISE.sub("-", cwd)
            where.mkdir(parents=True, exist_ok=True)
            for name, text in transcript_files(data["history"], sid, cwd).items():
                (where / name).parent.mkdir(parents=True, exist_ok=True)
                (where / name).write_text(text)
            self.bind(sid, data["sessionId"])
            reply = await client.call("session/load", {"sessionId": sid, "cwd": str(self.project), "mcpServers": []})
            if "error" in reply:
                raise CaseFailed(f"session/load failed: {json.dumps(reply['error'])[:200]}")
        elif step.kind == "prompt":
            self.cancelled_prompt = False
            fut = await client.request("session/prompt", {
                "sessionId": self.actual[step.session or ""],
                "prompt": [{"type": "text", "text": f"conformance turn {data['turnId']}"}],
            })
            client.prompt_ids[client.next_id] = data["turnId"]
            client.prompt_futures.append(fut)
        elif step.kind == "cancel":
            self.cancelled_prompt = True
            await client.send({"jsonrpc": "2.0", "method": "session/cancel",
                               "params": {"sessionId": self.actual[step.session or ""]}})
        elif step.kind == "permission_asked":
            if not await client.until(lambda: self.question(data["toolUseId"]) is not None, self.opts.step_timeout):
                self.notes.append(f"line {step.line}: no session/request_permission for {data['toolUseId']}")
        elif step.kind == "permission_answered":
            await self.answer(data["toolUseId"])
        elif step.kind == "authenticated":
            method = next((m.get("id") for m in self.auth_methods if isinstance(m, dict)), None)
            if method is None:
                raise CaseFailed("authenticate: the agent offers no auth method")
            await client.call("authenticate", {"methodId": method})

    def bind(self, agent_sid: str, case_sid: str) -> None:
        self.sessions[agent_sid] = case_sid
        self.actual[case_sid] = agent_sid
        tmp = self.folder / "sessions.json.tmp"
        tmp.write_text(json.dumps(self.sessions))
        os.replace(tmp, self.folder / "sessions.json")

    def question(self, tool: str) -> dict[str, Any] | None:
        assert self.client is not None
        open_ = [q for q in self.client.questions if q.get("id") not in self.client.answered]
        for q in open_:
            call = (q.get("params") or {}).get("toolCall") or {}
            if call.get("toolCallId") == tool:
                return q
        return open_[0] if open_ else None

    async def answer(self, tool: str) -> None:
        assert self.client is not None
        q = self.question(tool)
        if q is None:
            return
        self.client.answered.add(q.get("id"))
        if self.cancelled_prompt:
            outcome: dict[str, Any] = {"outcome": "cancelled"}
        else:
            options = (q.get("params") or {}).get("options") or []
            chosen = next((o for o in options if o.get("kind") == "reject_once"), options[0] if options else None)
            outcome = {"outcome": "selected", "optionId": (chosen or {}).get("optionId", "reject")}
        await self.client.send({"jsonrpc": "2.0", "id": q.get("id"), "result": {"outcome": outcome}})

    def turn_uuids(self) -> dict[str, str]:
        found = {}
        with contextlib.suppress(OSError):
            for line in (self.folder / "turns.jsonl").read_text().splitlines():
                row = json.loads(line)
                if isinstance(row.get("uuid"), str) and row["uuid"]:
                    found[row["uuid"]] = row["turnId"]
        return found


async def _stop(proc: asyncio.subprocess.Process, folder: Path) -> None:
    if proc.stdin is not None:
        with contextlib.suppress(Exception):
            proc.stdin.close()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), 3)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), 2)
            break
    _kill_fake_clis(folder)


def _unreaped(pid: int, folder: Path) -> bool:
    """Whether the fake CLI ``pid`` of ``folder`` is still in the process table (running or a
    zombie nobody waited for); a pid taken again by another process counts as reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state == "Z":
            return True
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, IndexError):
        return False
    return b"fake_cli" in cmdline and str(folder).encode() in cmdline


def _kill_fake_clis(folder: Path) -> None:
    """Kill by pid every fake CLI of this case still alive (its command line names the folder)."""
    try:
        pids = [int(p) for p in (folder / "pids").read_text().split()]
    except (OSError, ValueError):
        return
    for pid in pids:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "fake_cli" in cmdline and str(folder) in cmdline:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


async def run_case(case: Case, opts: RunOptions, folder: Path) -> Outcome:
    """Run ``case`` through the agent ``opts.agent`` in ``folder`` (created, left in place)."""
    started = time.monotonic()
    if case.plan.not_expressible:
        return Outcome(case.name, "N/A", case.plan.not_expressible)
    for sub in ("home", "config", "project"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    _write_script(case, folder)
    launcher = _launcher(folder)
    run = _Run(case, opts, folder)
    with (folder / "agent.stderr").open("wb") as stderr:  # the child has its own copy
        try:
            proc = await asyncio.create_subprocess_exec(
                *opts.agent, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=stderr, cwd=str(folder / "project"),
                env=_agent_env(folder, launcher), start_new_session=True, limit=1 << 24,
            )
        except OSError as exc:
            return Outcome(case.name, "FAIL", f"the agent did not start: {exc.strerror or type(exc).__name__}")
    client = _Client(proc, opts)
    reader = asyncio.create_task(client.read())
    failure: str | None = None
    try:
        await asyncio.wait_for(run.drive(client), opts.case_timeout)
    except TimeoutError:
        failure = f"the case did not finish within {opts.case_timeout:g}s"
    except CaseFailed as exc:
        failure = str(exc)
        with contextlib.suppress(TimeoutError):  # did it die? then that is the first thing to say
            await asyncio.wait_for(proc.wait(), 0.5)
        if proc.returncode is not None:
            failure = f"the agent exited with status {proc.returncode} ({failure})"
    finally:
        await _stop(proc, folder)
        reader.cancel()
        with contextlib.suppress(BaseException):
            await reader
    seconds = time.monotonic() - started
    known = {**run.sessions, **run.turn_uuids()}
    turns = [s.data["turnId"] for s in case.plan.steps if s.kind == "prompt"]
    messages = map_ids([(f.msg, f.prompt) for f in client.frames], client.prompt_ids, known, turns)
    (folder / "messages.jsonl").write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages))
    (folder / "frames.jsonl").write_text("".join(line + "\n" for line in client.raw))
    if failure is not None:
        return Outcome(case.name, "FAIL", "; ".join([failure, *run.notes]), seconds)
    if client.not_json:
        reason = f"the agent wrote {client.not_json} stdout line(s) that are not JSON"
        return Outcome(case.name, "FAIL", reason, seconds)
    raw = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages)
    failures = check(messages, raw, case.expect)
    if failures:
        return Outcome(case.name, "FAIL", "; ".join(failures + run.notes), seconds)
    return Outcome(case.name, "PASS", "", seconds)
