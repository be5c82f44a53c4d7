#!/usr/bin/env python3
"""Coverage-guided fuzzing of the lifecycle parsers with atheris (libFuzzer).

    .venv/bin/python tests/fuzz/run_atheris.py --runs 100000           # every target, 100k inputs each
    .venv/bin/python tests/fuzz/run_atheris.py --max-time 300 trace    # one target, five minutes
    .venv/bin/python tests/fuzz/run_atheris.py --list

Each target is one entry of ``fuzz.harness.TARGETS``: the same hypothesis strategies and oracles
as tests/test_fuzz.py, fed libFuzzer's bytes through hypothesis's ``fuzz_one_input`` (so the
search is structure-aware and coverage-guided at once), with the ``lifecycle`` package
instrumented. Each target runs in its own process (libFuzzer exits the process when done); an
input that breaks a property is saved under ``--artifacts`` and the run exits non-zero.

Prints, per target and in total: examples executed (libFuzzer's count), examples checked (those
hypothesis could decode), hostile inputs inside them (a trace example holds many lines), and
crashes. Needs ``pip install atheris``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
ROOT = TESTS.parent


def _child(name: str, libfuzzer_args: list[str], counts_file: Path, runs: int) -> None:
    sys.path[:0] = [str(TESTS), str(ROOT)]
    import atheris
    from hypothesis import HealthCheck, given, settings

    with atheris.instrument_imports(include=["lifecycle"]):
        from fuzz import harness
    from fuzz.report import COUNTS

    target = harness.TARGETS[name]
    if target.raw:  # libFuzzer's bytes are the input itself
        run_one = target.check
    else:  # libFuzzer's bytes drive hypothesis's choices: structure-aware inputs
        test = settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))(
            given(**target.strategies)(target.check)
        )
        run_one = getattr(test, "hypothesis").fuzz_one_input  # noqa: B009 - set by @given
    calls = 0

    def dump() -> None:
        counts_file.write_text(json.dumps({"calls": calls, "counts": dict(COUNTS)}))

    def one_input(data: bytes) -> None:
        nonlocal calls
        try:
            run_one(data)
        finally:
            calls += 1
            if calls % 2000 == 0 or calls == runs:
                dump()

    atheris.Setup([sys.argv[0], *libfuzzer_args], one_input)
    atheris.Fuzz()


def _target_names() -> list[str]:
    sys.path[:0] = [str(TESTS), str(ROOT)]
    from fuzz.harness import TARGETS

    return list(TARGETS)


def _run(name: str, args: argparse.Namespace, artifacts: Path) -> dict[str, Any]:
    counts_file = artifacts / f"{name}.counts.json"
    libfuzzer = [
        f"-runs={args.runs}" if args.runs else "-runs=-1",
        "-print_final_stats=1",
        f"-artifact_prefix={artifacts}/{name}-",
        f"-max_len={args.max_len}",
        "-rss_limit_mb=4096",
        f"-dict={HERE / 'json.dict'}",
    ]
    if args.max_time:
        libfuzzer.append(f"-max_total_time={args.max_time}")
    cmd = [
        sys.executable,
        __file__,
        "--child",
        name,
        "--counts",
        str(counts_file),
        "--runs",
        str(args.runs),
        "--",
    ]
    proc = subprocess.run(cmd + libfuzzer, capture_output=True, text=True, cwd=artifacts)
    log = proc.stdout + proc.stderr
    (artifacts / f"{name}.log").write_text(log)
    executed = re.search(r"stat::number_of_executed_units:\s*(\d+)", log)
    counts: dict[str, int] = {}
    if counts_file.exists():
        counts = json.loads(counts_file.read_text())["counts"]
    crashed = proc.returncode != 0
    return {
        "target": name,
        "examples": int(executed.group(1)) if executed else 0,
        "checked": sum(v for k, v in counts.items() if k.endswith("|examples")),
        "inputs": sum(v for k, v in counts.items() if k.endswith("|inputs")),
        "crashes": int(crashed),
        "log": str(artifacts / f"{name}.log"),
        "detail": next((x for x in log.splitlines() if "Error" in x or "assert" in x.lower()), "")
        if crashed
        else "",
    }


def main(argv: list[str]) -> int:
    if "--child" in argv:
        i = argv.index("--")
        opts = argparse.ArgumentParser()
        opts.add_argument("--child")
        opts.add_argument("--counts", type=Path)
        opts.add_argument("--runs", type=int)
        ns = opts.parse_args(argv[:i])
        _child(ns.child, argv[i + 1 :], ns.counts, ns.runs)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="targets to run (default: all)")
    parser.add_argument("--runs", type=int, default=10_000, help="inputs per target (0: until --max-time)")
    parser.add_argument("--max-time", type=int, default=0, help="seconds per target")
    parser.add_argument("--max-len", type=int, default=4096, help="longest libFuzzer input in bytes")
    parser.add_argument("--artifacts", type=Path, help="where crash inputs and logs go (default: a temp dir)")
    parser.add_argument("--list", action="store_true", help="print the target names and exit")
    args = parser.parse_args(argv)
    names = _target_names()
    if args.list:
        print("\n".join(names))
        return 0
    unknown = set(args.targets) - set(names)
    if unknown:
        parser.error(f"unknown targets: {', '.join(sorted(unknown))}")
    artifacts = args.artifacts or Path(tempfile.mkdtemp(prefix="lifecycle-atheris-"))
    artifacts.mkdir(parents=True, exist_ok=True)
    rows = []
    cols = ("examples", "checked", "inputs", "crashes")
    print(f"{'target':<18}" + "".join(f"{c:>11}" for c in cols), flush=True)
    for name in args.targets or names:
        row = _run(name, args, artifacts)
        rows.append(row)
        print(f"{name:<18}" + "".join(f"{row[c]:>11}" for c in cols) + f"  {row['detail']}", flush=True)
    total = {c: sum(r[c] for r in rows) for c in cols}
    print(f"{'TOTAL':<18}" + "".join(f"{total[c]:>11}" for c in cols))
    print("examples: byte strings libFuzzer ran; checked: those hypothesis could decode into an example;")
    print("inputs: hostile inputs (lines, objects, messages) inside the checked examples")
    print(f"logs and crash inputs: {artifacts}{os.sep}")
    return 1 if total["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
