"""The ``peer`` section: ``lifecycle acp`` against the reference TypeScript adapter
(``@agentclientprotocol/claude-agent-acp``), measured side by side in the same run.

Both agents are spawned in turn (interleaved: ours, reference, ours, ...), in the same isolated
environment (Claude Code's ``default`` permission mode set in its user settings, so both ask the
client before a Write), against one loopback fake Messages API
(:mod:`workshop.bench.fakeapi`), on the same Claude Code CLI (the one the Python SDK
bundles, or ``LIFECYCLE_BENCH_CLI``: ``LIFECYCLE_ACP_CLI`` for ours, ``CLAUDE_CODE_EXECUTABLE`` for
the reference).

Per spawn: spawn -> ``initialize`` answered; spawn -> first prompt answered (``session/new`` +
``session/prompt``); a second prompt on the warm session; a tool turn on the warm session (the
fake API answers with one ``Write`` of ``<cwd>/bench-<n>.txt``, the agent asks
``session/request_permission``, this client selects the ``allow_once`` option, Claude Code writes
the file and the fake API answers the tool result with text: prompt sent -> ``PromptResponse``,
and the spawn counts as failed unless the file holds the content); peak RSS (``VmHWM``) of the
agent and the sum over the agent and its children, read at the end of the spawn. The bare CLI
(``claude -p``) answering one prompt is measured too, as what a prompt costs without any adapter.

Ratios (``peer.*_ratio``) are the median of per-pair ratios: ours and the reference of the same
spawn round, for the rounds where both measured the figure.

The reference is installed from npm into ``~/.cache/lifecycle/reference/<version>`` on first use
(``npm pack`` + ``npm install --omit=dev``); without node, npm or network the section reports
itself unavailable with the reason, and never fails the run.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from .config import BenchConfig, Figure, Say, SectionResult, child_env, measured, unavailable
from .fakeapi import FakeMessagesAPI, tool_turn_prompt

__all__ = ["REFERENCE_PACKAGE", "REFERENCE_VERSION", "bench_peer", "reference_entry"]

REFERENCE_PACKAGE = "@agentclientprotocol/claude-agent-acp"
REFERENCE_VERSION = "0.101.0"
#: Seconds one agent has to answer ``initialize`` / a prompt before the spawn counts as failed.
INIT_TIMEOUT = 30.0
PROMPT_TIMEOUT = 90.0


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lifecycle" / "reference" / REFERENCE_VERSION


def reference_entry(install: bool = True) -> tuple[Path | None, str]:
    """The reference adapter's ``dist/index.js`` (installed on first use), or None and why not."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None:
        return None, "node is not installed"
    root = _cache_dir()
    entry = root / "package" / "dist" / "index.js"
    if entry.is_file() and (root / "package" / "node_modules").is_dir():
        return entry, ""
    if not install:
        return None, f"the reference adapter is not installed in {root}"
    if npm is None:
        return None, "npm is not installed"
    try:
        root.mkdir(parents=True, exist_ok=True)
        spec = f"{REFERENCE_PACKAGE}@{REFERENCE_VERSION}"
        packed = subprocess.run(
            [npm, "pack", spec, "--silent"], cwd=root, capture_output=True, text=True, timeout=300, check=False
        )
        tgz = [p for p in root.glob("*.tgz")]
        if packed.returncode != 0 or not tgz:
            return None, f"npm pack {spec} failed: {(packed.stderr or packed.stdout).strip()[:200]}"
        with tarfile.open(tgz[0]) as tar:
            tar.extractall(root, filter="data")
        installed = subprocess.run(
            [npm, "install", "--omit=dev", "--no-audit", "--no-fund", "--silent"],
            cwd=root / "package",
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if installed.returncode != 0:
            return None, f"npm install failed: {installed.stderr.strip()[:200]}"
    except (OSError, subprocess.SubprocessError, tarfile.TarError) as exc:
        return None, f"installing the reference failed: {type(exc).__name__}: {exc}"[:240]
    return (entry, "") if entry.is_file() else (None, f"no {entry} after npm install")


def _bundled_cli() -> Path | None:
    """The CLI both agents run: ``LIFECYCLE_BENCH_CLI`` when set (another Claude Code, e.g. the
    previous pin's, to compare figures across CLI versions), else the one the Python SDK bundles."""
    other = os.environ.get("LIFECYCLE_BENCH_CLI")
    if other:
        return Path(other) if Path(other).is_file() else None
    try:
        import claude_agent_sdk
    except ImportError:
        return None
    cli = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    return cli if cli.is_file() else None


def _environment(base_url: str, root: Path, cli: Path) -> dict[str, str]:
    home, config = root / "home", root / "config"
    for d in (home, config, root / "tmp", root / "project"):
        d.mkdir(parents=True, exist_ok=True)
    # Both agents in Claude Code's ``default`` permission mode, so the tool turn's Write is asked
    # of the client: without a ``defaultMode`` the reference starts its sessions in ``auto``, where
    # Claude Code allows an edit in the working directory without asking.
    (config / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "default"}}))
    env = child_env()
    for key in list(env):
        if key.startswith(("ANTHROPIC_", "CLAUDE_")) or key.endswith(("_PROXY", "_proxy")):
            del env[key]
    env.update(
        {
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": "sk-test",
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(config),
            "TMPDIR": str(root / "tmp"),
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "NO_PROXY": "127.0.0.1,localhost",
            # Claude Code refuses to skip permissions as root unless told it runs in a sandbox
            # (the reference starts it that way when root; this benchmark's own temp dirs are one).
            "IS_SANDBOX": "1",
            "LIFECYCLE_ACP_CLI": str(cli),
            "CLAUDE_CODE_EXECUTABLE": str(cli),
        }
    )
    return env


def _vm_hwm_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux ``/proc``)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out, stack = [], [pid]
    while stack:
        p = stack.pop()
        out.append(p)
        stack.extend(children.get(p, []))
    return out


class ToolTurnFailed(RuntimeError):
    """The tool turn was answered, but not as a tool turn whose ``Write`` was allowed and done."""


class _Agent:
    """One spawned agent process spoken to over newline-delimited JSON-RPC.

    Requests of the agent's are answered: ``session/request_permission`` with the option whose
    kind is ``allow_once`` (each one is noted in :attr:`permission_requests`), any other method with
    the JSON-RPC error -32601.
    """

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, stderr: IO[bytes]) -> None:
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env, cwd=cwd
        )
        self._buf = b""
        self.peak_tree_kb = 0
        #: ``(tool call title, option ids and kinds offered)`` of every permission request answered.
        self.permission_requests: list[tuple[str, list[str]]] = []
        #: Why a permission request could not be answered with ``allow_once``, if one could not.
        self.permission_problems: list[str] = []

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def _line(self, deadline: float) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError("no answer in time")
            ready, _, _ = select.select([fd], [], [], min(left, 0.2))
            self._sample_tree()
            if ready:
                data = os.read(fd, 65536)
                if not data:
                    raise EOFError("the agent exited")
                self._buf += data
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def _sample_tree(self) -> None:
        total = sum(_vm_hwm_kb(p) for p in _tree(self.proc.pid))
        self.peak_tree_kb = max(self.peak_tree_kb, total)

    def call(self, msg_id: int, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        deadline = time.perf_counter() + timeout
        while True:
            try:
                msg = json.loads(self._line(deadline))
            except ValueError:
                continue
            if not isinstance(msg, dict):
                continue
            if "method" in msg and "id" in msg:  # a request of the agent's
                self._answer(msg)
            elif msg.get("id") == msg_id and "method" not in msg:
                if "error" in msg:
                    raise RuntimeError(f"{method} failed: {json.dumps(msg['error'])[:200]}")
                return msg

    def _answer(self, msg: dict[str, Any]) -> None:
        if msg["method"] != "session/request_permission":
            self.send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}})
            return
        params = msg.get("params")
        params = params if isinstance(params, dict) else {}
        options = [o for o in params.get("options") or [] if isinstance(o, dict)]
        tool_call = params.get("toolCall")
        title = tool_call.get("title") if isinstance(tool_call, dict) else None
        self.permission_requests.append((str(title)[:120], [f"{o.get('optionId')} ({o.get('kind')})" for o in options]))
        chosen = next((o.get("optionId") for o in options if o.get("kind") == "allow_once"), None)
        if not isinstance(chosen, str):
            self.permission_problems.append(f"no allow_once option in {json.dumps(options)[:160]}")
            self.send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32602, "message": "no allow_once option"}})
            return
        self.send(
            {"jsonrpc": "2.0", "id": msg["id"], "result": {"outcome": {"outcome": "selected", "optionId": chosen}}}
        )

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


_INIT = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}}}


def _tool_turn(agent: _Agent, sid: str, target: Path) -> float:
    """Seconds from the tool turn's prompt sent to its ``PromptResponse``; raises
    :class:`ToolTurnFailed` unless one permission was asked and allowed and ``target`` was written."""
    content = f"written by a workshop bench tool turn: {target.name}\n"
    prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": tool_turn_prompt(str(target), content)}]}
    asked = len(agent.permission_requests)
    t0 = time.perf_counter()
    answer = agent.call(4, "session/prompt", prompt, PROMPT_TIMEOUT)
    seconds = time.perf_counter() - t0
    stop = answer.get("result", {}).get("stopReason") if isinstance(answer.get("result"), dict) else None
    if agent.permission_problems:
        raise ToolTurnFailed(agent.permission_problems[0])
    if len(agent.permission_requests) == asked:
        raise ToolTurnFailed(f"no session/request_permission for the Write (stopReason {stop})")
    try:
        written = target.read_text()
    except OSError:
        raise ToolTurnFailed(f"{target.name} was not written (stopReason {stop})") from None
    if written != content:
        raise ToolTurnFailed(f"{target.name} holds {written[:60]!r}, not what the Write asked for")
    if stop != "end_turn":
        raise ToolTurnFailed(f"the tool turn ended with stopReason {stop}")
    return seconds


def _one_spawn(
    argv: list[str],
    env: dict[str, str],
    root: Path,
    prompts: bool,
    out: dict[str, float] | None = None,
    write: Path | None = None,
    agent_out: list[_Agent] | None = None,
) -> dict[str, float]:
    """Measure one spawn into ``out`` (what was measured before a failure stays there); with
    ``prompts``, ``write`` is the file of its tool turn (none without one)."""
    out = {} if out is None else out
    with (root / "agent.stderr").open("ab") as err:
        agent = _Agent(argv, env, root / "project", err)
        if agent_out is not None:
            agent_out.append(agent)
        try:
            agent.call(0, "initialize", _INIT, INIT_TIMEOUT)
            out["init_s"] = time.perf_counter() - agent.t0
            if not prompts:
                out["rss_mb"] = _vm_hwm_kb(agent.proc.pid) / 1024
                return out
            new = agent.call(1, "session/new", {"cwd": str(root / "project"), "mcpServers": []}, PROMPT_TIMEOUT)
            sid = new["result"]["sessionId"]
            prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "Say hello."}]}
            agent.call(2, "session/prompt", prompt, PROMPT_TIMEOUT)
            out["first_prompt_s"] = time.perf_counter() - agent.t0
            t1 = time.perf_counter()
            agent.call(3, "session/prompt", prompt, PROMPT_TIMEOUT)
            out["prompt_s"] = time.perf_counter() - t1
            failed: Exception | None = None
            if write is not None:
                try:
                    out["tool_turn_s"] = _tool_turn(agent, sid, write)
                except Exception as exc:  # the peak RSS is still read: then the failure is reported
                    failed = exc
            agent._sample_tree()
            rss = _vm_hwm_kb(agent.proc.pid)
            if rss and agent.peak_tree_kb:
                out["rss_mb"] = rss / 1024
                out["tree_rss_mb"] = agent.peak_tree_kb / 1024
            if failed is not None:
                raise failed
        finally:
            agent.close()
    return out


def _bare_cli(cli: Path, env: dict[str, str], root: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [str(cli), "-p", "Say hello.", "--output-format", "json"],
        env=env,
        cwd=root / "project",
        capture_output=True,
        timeout=PROMPT_TIMEOUT,
        check=True,
    )
    return time.perf_counter() - t0


#: The peer figures: key -> (label, unit, gated by ``--check``: ours / reference <= 1).
FIGURES: dict[str, tuple[str, str, bool]] = {
    "init_s": ("spawn -> initialize answered", "s", True),
    "first_prompt_s": ("spawn -> first prompt answered (session/new + prompt)", "s", True),
    "prompt_s": ("one prompt on a warm session", "s", False),
    "tool_turn_s": (
        "one tool turn on a warm session (a Write, permission asked and allowed once, file written)",
        "s",
        True,
    ),
    "rss_mb": ("peak RSS (VmHWM) of the agent process", "MB", True),
    "tree_rss_mb": ("peak of the summed VmHWM of the agent and its children", "MB", False),
}


def _figures(
    ours: list[dict[str, float]], ref: list[dict[str, float]], quick: bool, why_missing: str = ""
) -> list[Figure]:
    """The figures of spawn rounds ``ours[i]`` / ``ref[i]`` (per-pair ratios: round by round)."""
    import statistics

    figs: list[Figure] = []
    for key, (label, unit, gate) in FIGURES.items():
        a = [run[key] for run in ours if key in run]
        b = [run[key] for run in ref if key in run]
        ratios = [x[key] / y[key] for x, y in zip(ours, ref, strict=True) if key in x and y.get(key, 0) > 0]
        target = ("<=", 1.0) if gate and not quick else None
        if not a or not b or not ratios:
            if target is not None:  # a gated figure that was not measured misses its target
                why = why_missing or "no pair of spawns measured it"
                figs.append(
                    unavailable(
                        f"peer.{key}_ratio", f"peer: {label}, lifecycle acp / reference", "ratio", why, target=target
                    )
                )
            continue
        figs.append(
            measured(f"peer.{key}_ratio", f"peer: {label}, lifecycle acp / reference", "ratio", ratios, target=target)
        )
        figs.append(measured(f"peer.ours_{key}", f"peer: {label}, lifecycle acp", unit, a))
        figs.append(measured(f"peer.reference_{key}", f"peer: {label}, reference adapter {REFERENCE_VERSION}", unit, b))
        if key == "init_s":
            # The ratio of the medians, as the issue states the goal (per-pair ratios above).
            figs.append(
                measured(
                    "peer.init_median_ratio",
                    "peer: median spawn -> initialize, lifecycle acp / reference (ratio of the medians)",
                    "ratio",
                    [statistics.median(a) / statistics.median(b)],
                )
            )
    return figs


def bench_peer(cfg: BenchConfig, say: Say) -> SectionResult:
    """Both agents side by side (see the module's docstring)."""
    details: dict[str, Any] = {"reference": f"{REFERENCE_PACKAGE}@{REFERENCE_VERSION}"}
    label = "peer: spawn -> initialize answered, lifecycle acp / reference"
    target = None if cfg.quick else ("<=", 1.0)
    if not sys.platform.startswith("linux"):
        return [unavailable("peer.init_s_ratio", label, "ratio", "needs Linux /proc", target=target)], details
    cli = _bundled_cli()
    if cli is None:
        return [
            unavailable(
                "peer.init_s_ratio", label, "ratio", "claude-agent-sdk (bundled CLI) is not installed", target=target
            )
        ], details
    say("peer: locating the reference adapter (installed from npm on first use)")
    entry, reason = reference_entry()
    if entry is None:
        details["reason"] = reason
        return [
            unavailable("peer.init_s_ratio", label, "ratio", f"reference unavailable: {reason}", target=target)
        ], details
    node = shutil.which("node") or "node"
    spawns = 3 if cfg.quick else 7
    prompts = not cfg.quick
    if not prompts:
        details["prompts_skipped"] = "--quick: only spawn -> initialize and the agent's RSS at that point"
    details.update(
        spawns=spawns,
        cli=str(cli),
        node=subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout.strip(),
    )
    if prompts:
        details["tool_turn"] = (
            "a third prompt on the warm session; the fake API answers it with one Write of <cwd>/bench-<n>.txt "
            "(stop_reason tool_use), the client selects the allow_once option of session/request_permission, "
            "and the tool result gets a short text answer: prompt sent -> PromptResponse, file content verified"
        )
    ours: list[dict[str, float]] = []
    ref: list[dict[str, float]] = []
    failures: list[str] = []
    permissions: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="lifecycle-peer-", dir=cfg.tmpdir) as tmp, FakeMessagesAPI() as api:
        root = Path(tmp)
        env = _environment(api.base_url, root, cli)
        agents: list[tuple[str, list[str], list[dict[str, float]]]] = [
            ("ours", [sys.executable, "-m", "lifecycle.agent"], ours),
            ("reference", [node, str(entry)], ref),
        ]
        # One warm-up spawn each (disk cache), not counted.
        for _name, argv, _ in agents:
            with contextlib.suppress(Exception):
                _one_spawn(argv, env, root, prompts=False)
        writes = 0
        for i in range(spawns):
            for name, argv, into in agents if i % 2 == 0 else agents[::-1]:
                got: dict[str, float] = {}
                spawned: list[_Agent] = []
                writes += 1
                write = root / "project" / f"bench-{writes}.txt"
                try:
                    _one_spawn(argv, env, root, prompts, got, write if prompts else None, spawned)
                except Exception as exc:
                    failures.append(f"{name} (spawn {i + 1}): {type(exc).__name__}: {exc}"[:240])
                into.append(got)
                seen = permissions.setdefault(name, {"requests": 0})
                for title, options in (a for agent in spawned for a in agent.permission_requests):
                    seen["requests"] += 1
                    seen.setdefault("first", {"title": title, "options": options})
            say(f"peer: spawn {i + 1}/{spawns}")
        cli_s: list[float] = []
        if prompts:
            for _ in range(3):
                try:
                    cli_s.append(_bare_cli(cli, env, root))
                except (OSError, subprocess.SubprocessError) as exc:
                    failures.append(f"bare CLI: {type(exc).__name__}"[:200])
        details["message_calls"] = api.messages
        details["write_answers"] = api.writes
    details["failures"] = failures
    if prompts:
        details["permission_requests"] = permissions
    figs = _figures(ours, ref, cfg.quick, "; ".join(failures))
    if cli_s:
        figs.append(
            measured("peer.bare_cli_prompt_s", "peer: bare CLI (claude -p) answering one prompt, cold", "s", cli_s)
        )
    if not any(f.id == "peer.init_s_ratio" for f in figs):
        why = "; ".join(failures) or "no spawn answered"
        figs.insert(0, unavailable("peer.init_s_ratio", label, "ratio", why, target=target))
    return figs, details


Runner = Callable[[BenchConfig, Say], SectionResult]
