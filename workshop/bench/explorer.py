"""Section ``explorer``: ``workshop check`` (:mod:`workshop.explorer`), states per second and total time.

The rate comes from a capped exploration in this process; the full space's total time from
``workshop check --json`` run as a child process in a temporary folder (not with ``--quick``).
"""

from __future__ import annotations

import gc
import importlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from .config import BenchConfig, Figure, Say, SectionResult, child_env, measured, module_available, unavailable

__all__ = ["bench_explorer"]

_CHECK_MODULE = "workshop.explorer"


def bench_explorer(cfg: BenchConfig, progress: Say) -> SectionResult:
    """States per second (in process, a capped exploration) and the full space's total time."""
    rate_id, rate_label = "explorer.states_per_s", "workshop check: abstract states explored per second"
    total_id, total_label = "explorer.total_s", "workshop check --json: total wall time for the full space"
    if not module_available(_CHECK_MODULE):
        reason = f"{_CHECK_MODULE} is not importable"
        return [
            unavailable(rate_id, rate_label, "states/s", reason),
            unavailable(total_id, total_label, "s", reason),
        ], {}
    check = importlib.import_module(_CHECK_MODULE)
    cap = cfg.explorer_states
    runs = 1 if cfg.quick else 3
    progress(f"explorer: {runs} capped explorations of {cap} states, in process")
    rates: list[float] = []
    detail: dict[str, Any] = {"cap_states": cap}
    for _ in range(runs):
        explorer = check.Explorer(check.Bounds(), max_states=cap)
        gc.collect()
        t0 = time.perf_counter()
        result = explorer.run()
        wall = time.perf_counter() - t0
        rates.append(int(result.states) / wall)
        detail["capped_run"] = {"states": int(result.states), "edges": int(result.edges), "wall_s": wall}
    figures = [measured(rate_id, f"{rate_label} (default bounds, first {cap} states)", "states/s", rates)]
    if cfg.explorer_timeout <= 0:
        figures.append(unavailable(total_id, total_label, "s", "not run with --quick (the full space takes minutes)"))
        return figures, detail
    progress(f"explorer: workshop check --json as a subprocess (timeout {cfg.explorer_timeout:.0f} s)")
    argv = [sys.executable, "-m", "workshop", "check", "--json"]
    t0 = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="lifecycle-bench-", dir=cfg.tmpdir) as cwd:
            proc = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                cwd=cwd,
                env=child_env(),
                check=False,
                timeout=cfg.explorer_timeout,
            )
    except subprocess.TimeoutExpired:
        figures.append(
            unavailable(
                total_id,
                total_label,
                "s",
                f"did not finish within {cfg.explorer_timeout:.0f} s (--explorer-timeout); at the measured rate "
                f"the space holds more than {statistics.median(rates) * cfg.explorer_timeout:,.0f} states",
            )
        )
        return figures, detail
    wall = time.perf_counter() - t0
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        report = {}
    detail["full_run"] = {
        "exit_code": proc.returncode,
        **{
            k: report.get(k)
            for k in ("ok", "complete", "states", "edges", "depth", "seconds", "beyond_bound", "unreached")
        },
    }
    if not isinstance(report.get("states"), int):
        figures.append(
            unavailable(total_id, total_label, "s", f"workshop check --json exited {proc.returncode} without a report")
        )
        return figures, detail
    verdict = (
        f"exit {proc.returncode}: ok={report.get('ok')}, complete={report.get('complete')}, "
        f"violations={len(report.get('violations') or [])}, unreached targets={report.get('unreached') or []}"
    )
    figures.append(Figure(total_id, f"{total_label} ({report['states']:,} states)", "s", wall, note=verdict))
    figures.append(
        Figure(
            "explorer.full_states_per_s",
            "workshop check --json: states per second over the full run",
            "states/s",
            report["states"] / wall,
        )
    )
    return figures, detail
