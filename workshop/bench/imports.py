"""The ``imports`` section: what ``import lifecycle`` (the core) costs a fresh interpreter, and what
its first use adds.

Each figure is timed inside a fresh ``python`` child (``time.perf_counter()`` around the statements,
so interpreter start is not counted), the children interleaved (core, pydantic, first use, core, ...)
after one uncounted warm-up child each, which also leaves the bytecode cache written (the warm-up
children run without ``PYTHONDONTWRITEBYTECODE``). Figures:

* ``imports.core_s``: ``import lifecycle``. Target ≤ 0.10 s (issue 12). It loads the errors; every
  other re-export is loaded on its first read (issue 49), the wire record (``lifecycle.wire``, with
  pydantic) included: python-statemachine and pydantic are not imported, and the record's pydantic
  schema is not built: all of that waits for the first use (``imports.first_use_s``).
* ``imports.pydantic_s``: ``from pydantic import BaseModel`` alone, the one heavy dependency the
  core needs for its first record (the wire record is a pydantic model);
  ``imports.core_ratio_to_pydantic`` is the core's import over it.
* ``imports.first_use_s``: ``import lifecycle``, then one healthy prompt turn and one ``api_retry``
  warning published through a :class:`~lifecycle.ledger.SessionLedger`: what the deferred imports
  (the machines, python-statemachine, the record with pydantic, its schema) add before the first
  record.

* ``imports.agent_sdks_s`` / ``imports.agent_sdks_fast_s``: after ``import lifecycle.agent.startup``
  (what the agent's entry has loaded when its import thread starts), ``lifecycle.agent.server`` (the
  ACP SDK, the Claude SDK with ``mcp``, the agent) imported the ordinary way, and the way the
  agent's entry imports it (:func:`lifecycle.agent.imports.import_server` with the collector
  paused); ``imports.agent_sdks_fast_ratio`` is the second over the first, per pair of children.
  Fewer children (the imports take a second); unavailable without the ``acp`` and ``claude``
  extras.

``details.imports.breakdown_ms`` is one ``python -X importtime -c "import lifecycle"`` child, read
back as self time per module of the package and per other top-level package (:func:`breakdown`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .config import BenchConfig, Figure, Say, SectionResult, child_env, measured, unavailable

__all__ = ["bench_imports"]

_CORE = "import time\nt0 = time.perf_counter()\nimport lifecycle\nprint(time.perf_counter() - t0)\n"
_PYDANTIC = "import time\nt0 = time.perf_counter()\nfrom pydantic import BaseModel\nprint(time.perf_counter() - t0)\n"
_FIRST_USE = """import time
t0 = time.perf_counter()
import lifecycle
from lifecycle import ApiRetry, PromptStarted, Result, SessionLedger
sent = []
ledger = SessionLedger("bench-session", negotiated=True, epoch="bench")
ledger.process(PromptStarted(turn_id="t1"), sent.append)
ledger.process(Result(subtype="success", is_error=False, result="ok"), sent.append)
ledger.process(PromptStarted(turn_id="t2"), sent.append)
ledger.process(ApiRetry(attempt=1, max_retries=10, error_status=529, error="overloaded"), sent.append)
elapsed = time.perf_counter() - t0
assert [m.record.severity.value for m in sent if m.record is not None] == ["warning"], sent
print(elapsed)
"""
_AGENT = (
    "import time\nimport lifecycle.agent.startup\nt0 = time.perf_counter()\n"
    "import lifecycle.agent.server\nprint(time.perf_counter() - t0)\n"
)
_AGENT_FAST = (
    "import time\nimport lifecycle.agent.startup\nfrom lifecycle.agent.imports import import_server\n"
    "t0 = time.perf_counter()\nimport_server(pause_gc=True)\nprint(time.perf_counter() - t0)\n"
)
#: Seconds one child may take before the figure counts as failed.
CHILD_TIMEOUT = 60.0


def _env(write_bytecode: bool) -> dict[str, str]:
    env = child_env()
    if write_bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _child(args: list[str], cwd: Path, *, write_bytecode: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``python ARGS`` in ``cwd``; a child that fails raises with its last line of stderr."""
    res = subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=_env(write_bytecode),
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
        check=False,
    )
    if res.returncode != 0:
        last = (res.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RuntimeError(f"the child failed: {last[:200]}")
    return res


def _seconds(code: str, cwd: Path, *, write_bytecode: bool = False) -> float:
    return float(_child(["-c", code], cwd, write_bytecode=write_bytecode).stdout.strip().splitlines()[-1])


def _stdlib(top: str) -> bool:
    return top in sys.stdlib_module_names or (top.startswith("_") and not top.startswith("__"))


def breakdown(cwd: Path) -> dict[str, float]:
    """``-X importtime`` of ``import lifecycle``, as milliseconds of *self* time: per module of the
    package, per top-level third-party package (``pydantic`` holds every ``pydantic.*`` module), and
    the standard library's modules together. The values add up to the import's total (``total``)."""
    res = _child(["-X", "importtime", "-c", "import lifecycle"], cwd)
    rows: list[tuple[int, str, float, float]] = []  # (depth, module, self ms, cumulative ms), in print order
    for line in res.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue  # the header, or not an importtime line
        name = parts[2].rstrip()
        depth = (len(name) - len(name.lstrip(" "))) // 2
        rows.append((depth, name.strip(), int(parts[0]) / 1000, int(parts[1]) / 1000))
    # A module is printed after everything it imported: lifecycle's subtree is the run of deeper
    # rows just above its own row.
    root = next((i for i, (d, n, _, _) in enumerate(rows) if d == 0 and n == "lifecycle"), None)
    if root is None:
        return {}
    out: dict[str, float] = {"total": rows[root][3]}
    i = root
    while i >= 0 and (i == root or rows[i][0] > 0):
        _, name, self_ms, _ = rows[i]
        top = name.split(".")[0]
        key = name if top == "lifecycle" else "(standard library)" if _stdlib(top) else top
        out[key] = out.get(key, 0.0) + self_ms
        i -= 1
    small = [k for k, v in out.items() if v < 0.5 and not k.startswith("lifecycle") and k != "total"]
    for k in small:  # a package's probe of an optional module, a tiny helper: summed as "(other)"
        out["(other)"] = out.get("(other)", 0.0) + out.pop(k)
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def bench_imports(cfg: BenchConfig, say: Say) -> SectionResult:
    """Fresh interpreters importing the core (see the module's docstring)."""
    children = 5 if cfg.quick else 15
    runs: dict[str, list[float]] = {"core": [], "pydantic": [], "first_use": []}
    codes = {"core": _CORE, "pydantic": _PYDANTIC, "first_use": _FIRST_USE}
    say(f"imports: {children} fresh interpreters per figure, interleaved")
    with tempfile.TemporaryDirectory(prefix="lifecycle-imports-", dir=cfg.tmpdir) as tmp:
        cwd = Path(tmp)
        for code in codes.values():
            _seconds(code, cwd, write_bytecode=True)  # warm-up: the bytecode cache is written
        for _ in range(children):
            for name, code in codes.items():
                runs[name].append(_seconds(code, cwd))
        parts = breakdown(cwd)
        agent = _agent_figures(cfg, cwd, say)
    ratio = [c / p for c, p in zip(runs["core"], runs["pydantic"], strict=True)]
    details: dict[str, Any] = {
        "children_per_figure": children,
        "python": sys.executable,
        "bytecode_writes_disabled_in_this_environment": bool(os.environ.get("PYTHONDONTWRITEBYTECODE")),
        "breakdown_ms": {k: round(v, 2) for k, v in parts.items()},
    }
    figures = [
        measured(
            "imports.core_s",
            "import lifecycle (the core) in a fresh interpreter; python-statemachine, the record with "
            "pydantic and its schema wait for their first use",
            "s",
            runs["core"],
            target=("<=", 0.10),
        ),
        measured(
            "imports.pydantic_s",
            "from pydantic import BaseModel alone in a fresh interpreter (the record's dependency)",
            "s",
            runs["pydantic"],
        ),
        measured(
            "imports.core_ratio_to_pydantic",
            "import lifecycle / from pydantic import BaseModel, per pair of children",
            "ratio",
            ratio,
        ),
        measured(
            "imports.first_use_s",
            "import lifecycle + one healthy turn + one api_retry warning published through a SessionLedger "
            "(the machines, python-statemachine, the record with pydantic and its schema loaded on the way)",
            "s",
            runs["first_use"],
        ),
        *agent,
    ]
    return figures, details


_AGENT_LABELS = {
    "imports.agent_sdks_s": "lifecycle.agent.server (ACP SDK, Claude SDK, mcp, the agent) imported the ordinary way",
    "imports.agent_sdks_fast_s": "the same, the way the agent's entry imports it (lifecycle.agent.imports)",
    "imports.agent_sdks_fast_ratio": "the agent's entry's import of its SDKs / the ordinary import, per pair",
}


def _agent_figures(cfg: BenchConfig, cwd: Path, say: Say) -> list[Figure]:
    """The agent's SDK import both ways (see the module's docstring)."""
    try:
        _seconds(_AGENT, cwd, write_bytecode=True)  # warm-up, and: are the extras installed?
        _seconds(_AGENT_FAST, cwd, write_bytecode=True)
    except RuntimeError as exc:
        reason = f"the agent's SDKs could not be imported ({exc})"
        return [
            unavailable(k, label, "ratio" if k.endswith("ratio") else "s", reason) for k, label in _AGENT_LABELS.items()
        ]
    children = 3 if cfg.quick else 7
    say(f"imports: the agent's SDKs, {children} fresh interpreters each way, interleaved")
    plain: list[float] = []
    fast: list[float] = []
    for _ in range(children):
        plain.append(_seconds(_AGENT, cwd))
        fast.append(_seconds(_AGENT_FAST, cwd))
    samples = {
        "imports.agent_sdks_s": plain,
        "imports.agent_sdks_fast_s": fast,
        "imports.agent_sdks_fast_ratio": [f / p for f, p in zip(fast, plain, strict=True)],
    }
    return [
        measured(k, label, "ratio" if k.endswith("ratio") else "s", samples[k]) for k, label in _AGENT_LABELS.items()
    ]
