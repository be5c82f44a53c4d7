"""``workshop bench``: what the lifecycle costs, as ratios against baselines measured in the same run.

The driver: runs the sections (:data:`SECTIONS`), renders the table, decides the exit code, and
parses the command line (:func:`cli_main`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .config import BenchConfig, Figure, Progress, Say, SectionResult
from .explorer import bench_explorer
from .hot_path import bench_hot_path
from .imports import bench_imports
from .incident import bench_incident
from .inputs import FIXTURE_SET, Recordings, load_recordings, shipped_recordings, write_data
from .memory import bench_memory
from .peer import bench_peer
from .proxy import bench_proxy
from .replay import bench_replay

__all__ = ["SECTIONS", "cli_main", "exit_code", "render_table", "run_bench"]

SECTIONS: tuple[tuple[str, Callable[[BenchConfig, Say], SectionResult]], ...] = (
    ("hot_path", bench_hot_path),
    ("incident", bench_incident),
    ("replay", bench_replay),
    ("memory", bench_memory),
    ("explorer", bench_explorer),
    ("imports", bench_imports),
    ("peer", bench_peer),
    ("proxy", bench_proxy),
)


def _machine() -> dict[str, Any]:
    try:
        load = list(os.getloadavg())
    except OSError:  # pragma: no cover - not on Linux
        load = []
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg": load,
    }


def run_bench(cfg: BenchConfig, *, sections: Sequence[str] | None = None, progress: bool = True) -> dict[str, Any]:
    """Run the selected sections; the result is what ``--json`` prints."""
    say = Progress(progress)
    t0 = time.perf_counter()
    machine = _machine()
    # Read the recordings once for every section.
    recordings = load_recordings(cfg.recordings)
    cfg = replace(cfg, recordings=recordings)
    figures: list[Figure] = []
    details: dict[str, Any] = {}
    for name, fn in SECTIONS:
        if sections is not None and name not in sections:
            continue
        figs, detail = fn(cfg, say)
        figures.extend(figs)
        details[name] = detail
    machine["loadavg_end"] = _machine()["loadavg"]
    targets = [f for f in figures if f.target is not None]
    return {
        "lifecycle_bench": 1,
        "mode": "quick" if cfg.quick else "full",
        "command": "workshop bench" + (" --quick" if cfg.quick else ""),
        "machine": machine,
        "inputs": recordings.source,
        "elapsed_s": time.perf_counter() - t0,
        "figures": [f.to_json() for f in figures],
        "targets": {
            "enforced": not cfg.quick,
            "all_met": all(f.met for f in targets),
            "missed": [f.id for f in targets if not f.met],
        },
        "details": details,
    }


def _fmt(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    if abs(value) >= 0.1:
        return f"{value:.3f}"
    return f"{value:.4f}"


def _load(values: Sequence[float]) -> str:
    return " / ".join(f"{v:.2f}" for v in values) or "n/a"


def render_table(result: Mapping[str, Any]) -> str:
    """The human table (Markdown) of a :func:`run_bench` result."""
    rows = [
        "| figure | value | unit | spread (min – max) | target | met |",
        "| --- | ---: | --- | --- | --- | --- |",
    ]
    for f in result["figures"]:
        if f["available"]:
            value = _fmt(f["value"])
            s = f.get("spread")
            spread = f"{_fmt(s['min'])} – {_fmt(s['max'])} (n={f['repetitions']})" if s else ""
        else:
            value, spread = "not available", f["reason"]
        target = f.get("target")
        tgt = f"{target['op']} {_fmt(target['limit'])}" if target else ""
        met = "" if not target else ("yes" if target["met"] else "**no**")
        rows.append(f"| `{f['id']}` {f['label']} | {value} | {f['unit']} | {spread} | {tgt} | {met} |")
    m = result["machine"]
    rows.append("")
    rows.append(
        f"{result['command']}: {result['mode']} run, {result['elapsed_s']:.0f} s, Python {m['python']}, "
        f"{m['cpus']} CPUs, load average {_load(m['loadavg'])} -> {_load(m['loadavg_end'])}; "
        f"inputs: {result.get('inputs', 'n/a')}"
    )
    return "\n".join(rows)


def cli_main(argv: list[str]) -> int:
    """``workshop bench [--quick] [--json] [--check] [--only SECTION ...]``."""
    parser = argparse.ArgumentParser(prog="python -m workshop bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (CI), targets not enforced")
    parser.add_argument("--json", action="store_true", help="print the machine-readable result only")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed (not with --quick)")
    parser.add_argument("--only", nargs="+", choices=[s for s, _ in SECTIONS], help="run only these sections")
    parser.add_argument(
        "--fixtures",
        type=Path,
        default=None,
        metavar="DIR",
        help="build the inputs from this folder of recorded CLI runs (*.sdk.jsonl, *.transcript.jsonl) instead "
        f"of the ones shipped with the package (derived from tests/fixtures/{FIXTURE_SET})",
    )
    parser.add_argument("--repetitions", type=int, default=None, help="timing repetitions per figure")
    parser.add_argument("--incidents", type=int, default=None, help="recovered incidents for memory.ledger_ratio")
    parser.add_argument("--replay-lines", type=int, default=None, help="lines of the large replay transcript")
    parser.add_argument("--explorer-timeout", type=float, default=None, help="seconds for the full workshop check")
    parser.add_argument("--tmpdir", type=Path, default=None, help="where the replay transcripts are written")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument(
        "--derive-inputs",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"maintainers, in a checkout: re-derive the shipped inputs from DIR (tests/fixtures/{FIXTURE_SET}) "
        "into the package, then exit",
    )
    args = parser.parse_args(argv)
    if args.derive_inputs is not None:
        try:
            dest = write_data(args.derive_inputs)
        except FileNotFoundError as exc:
            print(f"workshop bench: {exc}", file=sys.stderr)
            return 2
        print(f"workshop bench: wrote the inputs derived from {args.derive_inputs} to {dest}", file=sys.stderr)
        return 0
    try:
        if args.fixtures is None:
            recordings = shipped_recordings()
        elif not args.fixtures.is_dir():
            raise FileNotFoundError(f"fixtures folder not found: {args.fixtures}")
        else:
            recordings = Recordings.from_folder(args.fixtures)
    except FileNotFoundError as exc:
        print(f"workshop bench: {exc}", file=sys.stderr)
        return 2
    cfg = (BenchConfig.quick_config if args.quick else BenchConfig.full_config)(recordings, args.tmpdir)
    overrides: dict[str, Any] = {}
    if args.repetitions is not None:
        overrides["repetitions"] = overrides["replay_repetitions"] = max(2, args.repetitions)
    if args.incidents is not None:
        overrides["memory_many"] = max(cfg.memory_few * 2, args.incidents)
    if args.replay_lines is not None:
        overrides["replay_large"] = max(100, args.replay_lines)
        overrides["replay_small"] = max(10, args.replay_lines // 10)
    if args.explorer_timeout is not None:
        overrides["explorer_timeout"] = args.explorer_timeout
    if overrides:
        cfg = replace(cfg, **overrides)
    result = run_bench(cfg, sections=args.only, progress=not args.quiet)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print(render_table(result))
    code = exit_code(result, check=args.check, quick=cfg.quick)
    if args.check and result["targets"]["missed"]:
        verdict = "not enforced with --quick" if cfg.quick else "--check fails"
        print(f"workshop bench: targets missed ({verdict}): {', '.join(result['targets']['missed'])}", file=sys.stderr)
    return code


def exit_code(result: Mapping[str, Any], *, check: bool, quick: bool) -> int:
    """1 when ``--check`` is given, the run is not ``--quick`` and a target was missed (or unmeasured)."""
    return 1 if check and not quick and result["targets"]["missed"] else 0
