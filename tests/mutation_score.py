#!/usr/bin/env python3
"""The core's mutation score, from a finished mutmut run (the "Honest tests" issues).

usage (from the repository root, after ``python tests/mutation_run.py --max-children 2``, mutmut's
run with pyproject's ``[tool.mutmut]``)::

    python tests/mutation_score.py              # the figure, per module and in total
    python tests/mutation_score.py --survivors  # and the surviving mutants per function
    python tests/mutation_score.py --write      # record it in tests/mutation-results.json
    python tests/mutation_score.py --table      # the recorded figures as docs/checking.md's table
    python tests/mutation_score.py --ci         # CI: a full run with two workers; fail if a
                                                # module is below the floor

Killed = killed or timed out (the mutant made the tests fail or hang); every other status
(survived, no tests, suspicious, skipped, not checked) counts against the score, so the figure is
killed / all mutants of the core modules pyproject names.

``tests/mutation-results.json`` holds the last measurement: the command, mutmut's version, the
date, the commit whose core modules were measured, pyproject's module list and test selection at
the time, the per-module floor and each module's figures. ``tests/test_mutation_results.py`` keeps
it consistent with ``pyproject.toml`` and with its own arithmetic.
"""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import sys
import time
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "tests" / "mutation-results.json"
MUTMUT = str(Path(sys.executable).parent / "mutmut")
#: pyproject's test extras pin it (the figures depend on its mutation operators).
MUTMUT_VERSION = "3.8.1"
#: The command the figures come from (docs/checking.md shows the same lines).
COMMAND = (
    ".venv/bin/python tests/mutation_run.py --max-children 2",
    ".venv/bin/python tests/mutation_score.py --write",
)
#: Every core module pyproject names must keep at least this score.
FLOOR = 90.0
LINE = re.compile(r"^\s*(?P<name>\S+?)__mutmut_\d+: (?P<status>.+)$")
KILLED = {"killed", "timeout"}


def pyproject_mutmut() -> dict[str, list[str]]:
    with (ROOT / "pyproject.toml").open("rb") as fh:
        cfg = tomllib.load(fh)["tool"]["mutmut"]
    return {"only_mutate": list(cfg["only_mutate"]), "test_selection": list(cfg["pytest_add_cli_args_test_selection"])}


def module_name(path: str) -> str:
    """``lifecycle/claude/__init__.py`` -> ``lifecycle.claude`` (mutmut's prefix of its mutants)."""
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def figures(counts: Counter[str]) -> dict[str, object]:
    n, k = sum(counts.values()), sum(counts[s] for s in KILLED)
    other = {s: v for s, v in sorted(counts.items()) if s not in KILLED}
    return {"mutants": n, "killed": k, "score": round(100 * k / n, 1) if n else 0.0, "other": other}


def measured() -> tuple[dict[str, Counter[str]], Counter[str]]:
    out = subprocess.run([MUTMUT, "results", "--all", "true"], capture_output=True, text=True, check=True).stdout
    by_module: dict[str, Counter[str]] = defaultdict(Counter)
    survivors: Counter[str] = Counter()
    for line in out.splitlines():
        m = LINE.match(line)
        if m is None:
            continue
        name, status = m["name"], m["status"].strip()
        module = name.split(".x_")[0].split(".xǁ")[0]
        by_module[module][status] += 1
        if status not in KILLED:
            survivors[f"{name} ({status})"] += 1  # per function and status
    return by_module, survivors


def show(by_module: dict[str, Counter[str]]) -> None:
    total: Counter[str] = Counter()
    print(f"{'module':32} {'mutants':>8} {'killed':>8} {'score':>7}  other")
    for module in sorted(by_module):
        c = by_module[module]
        total += c
        f = figures(c)
        other = ", ".join(f"{s} {v}" for s, v in f["other"].items())  # type: ignore[attr-defined]
        print(f"{module:32} {f['mutants']:8} {f['killed']:8} {f['score']:6.1f}%  {other}")
    f = figures(total)
    other = ", ".join(f"{s} {v}" for s, v in f["other"].items())  # type: ignore[attr-defined]
    print(f"{'total':32} {f['mutants']:8} {f['killed']:8} {f['score']:6.1f}%  {other}")


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def write(by_module: dict[str, Counter[str]]) -> None:
    """Record the figures of every module pyproject names (a module with mutants not checked yet
    is recorded as such: its score counts them against it)."""
    cfg = pyproject_mutmut()
    modules = {module_name(p): figures(by_module.get(module_name(p), Counter())) for p in cfg["only_mutate"]}
    results = {
        "command": list(COMMAND),
        "mutmut": MUTMUT_VERSION,
        "date": datetime.date.today().isoformat(),
        "commit": git("rev-parse", "HEAD"),
        "only_mutate": cfg["only_mutate"],
        "test_selection": cfg["test_selection"],
        "floor": FLOOR,
        "modules": modules,
    }
    RESULTS.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


def ci() -> int:
    """The whole core, as recorded, measured again (a full run fits CI's budget: docs/checking.md);
    1 if a module is below the floor or has no mutant."""
    results = json.loads(RESULTS.read_text())
    cfg = pyproject_mutmut()
    if (cfg["only_mutate"], cfg["test_selection"]) != (results["only_mutate"], results["test_selection"]):
        print("pyproject's [tool.mutmut] differs from tests/mutation-results.json: re-measure and --write")
        return 1
    started = time.monotonic()
    print(f"mutation: a full run with two workers (recorded: {results['commit'][:12]}, {results['date']})")
    runner = str(ROOT / "tests" / "mutation_run.py")
    subprocess.run([sys.executable, runner, "--max-children", "2"], cwd=ROOT, check=False)
    by_module, _ = measured()
    below = []
    for path in results["only_mutate"]:
        name = module_name(path)
        f = figures(by_module.get(name, Counter()))
        print(f"  {name}: {f['score']}% of {f['mutants']} mutants killed (floor {results['floor']}%)")
        if f["score"] < results["floor"] or f["mutants"] == 0:  # type: ignore[operator]
            below.append(name)
    print(f"mutation: {time.monotonic() - started:.0f} s")
    if below:
        print(f"mutation: below the floor: {', '.join(below)}")
        return 1
    return 0


def doc_table(results: dict[str, object]) -> str:
    """The Markdown table docs/checking.md shows (``--table``): the recorded figures per module."""
    lines = ["| module | mutants | killed | score | not killed |", "| --- | ---: | ---: | ---: | --- |"]
    modules: dict[str, dict[str, object]] = results["modules"]  # type: ignore[assignment]
    for name, f in modules.items():
        other = ", ".join(f"{s} {v}" for s, v in f["other"].items()) or "none"  # type: ignore[attr-defined]
        lines.append(f"| `{name}` | {f['mutants']} | {f['killed']} | {f['score']} % | {other} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if "--ci" in argv:
        return ci()
    if "--table" in argv:
        sys.stdout.write(doc_table(json.loads(RESULTS.read_text())))
        return 0
    by_module, survivors = measured()
    if not by_module:
        print("no mutmut results here (run `python tests/mutation_run.py --max-children 2` first)")
        return 2
    show(by_module)
    if "--survivors" in argv:
        print()
        for name, count in survivors.most_common():
            print(f"{count:4}  {name}")
    if "--write" in argv:
        write(by_module)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
