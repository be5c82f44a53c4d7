"""The ``proxy`` section: what ``lifecycle proxy`` adds to an agent, beside the same agent run
directly, in the same run (issue 53.5: at most 1 ms per message, median; at most 30 MB over the
agent alone).

The agent is :mod:`workshop.bench.echo_agent`, which does as little per message as an agent can, so
the relay's share is not hidden in an agent's own work. Each round spawns it directly, then behind
``python -m lifecycle proxy --`` for a plain client, then for a client that negotiated
``sessionFailure`` (interleaved, so a slower minute of the machine falls on all three), and per
spawn:

* **latency**: the agent writes ``session/update`` notifications 2 ms apart, each stamped with
  ``time.monotonic_ns()`` (one clock for every process on the machine) just before it writes; the
  client stamps each line as it reads it. A spawn's figure is the median over its messages; the
  relay's cost per message is the proxied median minus the direct median of the same round.
* **throughput**: a burst of messages with no pause; the time from the prompt to its answer,
  divided by the messages, proxied minus direct: the relay's CPU per message when the agent is
  faster than it.
* **memory**: the peak RSS (``VmHWM``) of the proxy's own process, read at the end of the spawn,
  after a capable client's failed prompt made the relay build a record (the most the relay
  loads: the record's model loads pydantic, about 15 MB of it), and its private memory (USS)
  beside it; the agent's peak RSS alone for scale.

Targets: ``proxy.latency_added_ms`` (plain and capable, the larger) ≤ 1.0 and
``proxy.rss_mb`` ≤ 30.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

from .config import BenchConfig, Figure, Say, SectionResult, measured

__all__ = ["bench_proxy"]

_ECHO = Path(__file__).with_name("echo_agent.py")
_CAPABLE = {"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}}
#: Seconds one answer may take before the spawn counts as failed.
_TIMEOUT = 30.0


class _Client:
    """One spawned agent (direct or behind the proxy) driven over its stdio."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin: IO[bytes] = self.proc.stdin
        self.stdout: IO[bytes] = self.proc.stdout
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any], arrivals: list[tuple[int, int]] | None = None) -> Any:
        """Send one request and read up to its answer; each notification's (sent, read) stamps go to
        ``arrivals``."""
        self.next_id += 1
        rid = self.next_id
        self.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode() + b"\n")
        self.stdin.flush()
        deadline = time.monotonic() + _TIMEOUT
        while time.monotonic() < deadline:
            line = self.stdout.readline()
            read_ns = time.monotonic_ns()
            if not line:
                raise RuntimeError(f"the agent closed its stdout before answering {method}")
            msg = json.loads(line)
            if msg.get("id") == rid and "method" not in msg:
                return msg
            sent = ((msg.get("params") or {}).get("_meta") or {}).get("sentNs")
            if arrivals is not None and isinstance(sent, int):
                arrivals.append((sent, read_ns))
        raise RuntimeError(f"no answer to {method} within {_TIMEOUT} s")

    def close(self) -> None:
        self.stdin.close()
        try:
            self.proc.wait(timeout=_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM")


def _private_mb(pid: int) -> float:
    """What the process holds alone (USS: its private pages), which the machine gets back when it exits."""
    total = 0
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith(("Private_Clean:", "Private_Dirty:")):
            total += int(line.split()[1])
    return total / 1024


def _agent_pid(proxy_pid: int) -> int:
    children = Path(f"/proc/{proxy_pid}/task/{proxy_pid}/children").read_text().split()
    return int(children[0])


def _spawn(mode: str, latency_messages: int, burst_messages: int) -> dict[str, float]:
    agent = [sys.executable, str(_ECHO)]
    argv = agent if mode == "direct" else [sys.executable, "-m", "lifecycle", "proxy", "--", *agent]
    client = _Client(argv)
    try:
        caps = _CAPABLE if mode == "capable" else {}
        client.request("initialize", {"protocolVersion": 1, "clientCapabilities": caps})
        session = client.request("session/new", {"cwd": "/", "mcpServers": []})["result"]["sessionId"]

        def prompt(text: str, arrivals: list[tuple[int, int]] | None = None) -> Any:
            return client.request(
                "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": text}]}, arrivals
            )

        arrivals: list[tuple[int, int]] = []
        prompt(f"stream {latency_messages} 2000", arrivals)
        if len(arrivals) != latency_messages:
            raise RuntimeError(f"{len(arrivals)} of {latency_messages} messages arrived")
        latency_ms = statistics.median((read - sent) / 1e6 for sent, read in arrivals)
        t0 = time.perf_counter()
        prompt(f"stream {burst_messages} 0")
        burst_ms = (time.perf_counter() - t0) * 1000 / burst_messages
        answer = prompt("fail")
        if mode == "capable" and "result" not in answer:
            raise RuntimeError("a capable client's failed prompt was not answered with a record")
        rss, private = _peak_rss_mb(client.proc.pid), _private_mb(client.proc.pid)
        agent_rss = rss if mode == "direct" else _peak_rss_mb(_agent_pid(client.proc.pid))
        return {
            "latency_ms": latency_ms,
            "burst_ms": burst_ms,
            "rss_mb": rss,
            "private_mb": private,
            "agent_rss_mb": agent_rss,
        }
    finally:
        client.close()


def bench_proxy(cfg: BenchConfig, say: Say) -> SectionResult:
    """Direct, plain and capable spawns of the echo agent, interleaved (see the module's docstring)."""
    rounds = 3 if cfg.quick else 9
    latency_messages, burst_messages = (50, 500) if cfg.quick else (200, 5000)
    say(f"proxy: {rounds} rounds of direct / plain / capable spawns of the echo agent")
    runs: dict[str, list[dict[str, float]]] = {"direct": [], "plain": [], "capable": []}
    for _ in range(rounds):
        for mode in runs:
            runs[mode].append(_spawn(mode, latency_messages, burst_messages))
    added: dict[str, list[float]] = {}
    for mode in ("plain", "capable"):
        added[f"latency_{mode}"] = [
            p["latency_ms"] - d["latency_ms"] for p, d in zip(runs[mode], runs["direct"], strict=True)
        ]
        added[f"burst_{mode}"] = [
            p["burst_ms"] - d["burst_ms"] for p, d in zip(runs[mode], runs["direct"], strict=True)
        ]
    worst = max(("plain", "capable"), key=lambda m: statistics.median(added[f"latency_{m}"]))
    figures: list[Figure] = [
        measured(
            "proxy.latency_added_ms",
            f"what the relay adds to one message's way from the agent to the client, median per spawn, "
            f"proxied minus direct of the same round (the {worst} client, the larger of the two)",
            "ms",
            added[f"latency_{worst}"],
            target=("<=", 1.0),
        ),
        *(
            measured(
                f"proxy.latency_added_{mode}_ms",
                f"the same for a {mode} client",
                "ms",
                added[f"latency_{mode}"],
            )
            for mode in ("plain", "capable")
        ),
        *(
            measured(
                f"proxy.burst_added_{mode}_ms",
                f"a burst of {burst_messages} messages: time per message, proxied minus direct, {mode} client",
                "ms",
                added[f"burst_{mode}"],
            )
            for mode in ("plain", "capable")
        ),
        measured(
            "proxy.rss_mb",
            "peak RSS of the proxy's own process after a capable client's failed prompt became a record "
            "(what the proxy adds over the agent alone)",
            "MB",
            [r["rss_mb"] for r in runs["capable"]],
            target=("<=", 30.0),
        ),
        measured(
            "proxy.private_mb",
            "the proxy's private memory (USS) at the end of the same spawn: what the machine gets back when "
            "it exits (RSS also counts the shared libraries' pages)",
            "MB",
            [r["private_mb"] for r in runs["capable"]],
        ),
        measured(
            "proxy.plain_rss_mb",
            "the same for a plain client (nothing but passthrough)",
            "MB",
            [r["rss_mb"] for r in runs["plain"]],
        ),
        measured(
            "proxy.agent_rss_mb",
            "peak RSS of the echo agent alone, run directly",
            "MB",
            [r["rss_mb"] for r in runs["direct"]],
        ),
    ]
    details: dict[str, Any] = {
        "rounds": rounds,
        "latency_messages": latency_messages,
        "latency_pause_us": 2000,
        "burst_messages": burst_messages,
        "direct_latency_ms": [round(r["latency_ms"], 4) for r in runs["direct"]],
        "python": sys.executable,
        "cpus": os.cpu_count(),
    }
    return figures, details
