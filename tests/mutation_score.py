#!/usr/bin/env python3
"""The core's mutation score, from a finished ``mutmut run`` (the "Honest tests" issue).

usage (from the repository root, after ``mutmut run --max-children 1`` with pyproject's
``[tool.mutmut]``)::

    python tests/mutation_score.py            # the figure, per module and in total
    python tests/mutation_score.py --survivors  # and the surviving mutants per function

Killed = killed or timed out (the mutant made the tests fail or hang); every other status
(survived, no tests, suspicious, skipped, not checked) counts against the score, so the figure is
killed / all mutants of the core modules pyproject names.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

MUTMUT = str(Path(sys.executable).parent / "mutmut")
LINE = re.compile(r"^\s*(?P<name>\S+?)__mutmut_\d+: (?P<status>.+)$")
KILLED = {"killed", "timeout"}


def main(argv: list[str]) -> int:
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
    if not by_module:
        print("no mutmut results here (run `mutmut run --max-children 1` first)")
        return 2
    total: Counter[str] = Counter()
    print(f"{'module':32} {'mutants':>8} {'killed':>8} {'score':>7}  other")
    for module in sorted(by_module):
        c = by_module[module]
        total += c
        n, k = sum(c.values()), sum(c[s] for s in KILLED)
        other = ", ".join(f"{s} {v}" for s, v in sorted(c.items()) if s not in KILLED)
        print(f"{module:32} {n:8} {k:8} {100 * k / n:6.1f}%  {other}")
    n, k = sum(total.values()), sum(total[s] for s in KILLED)
    other = ", ".join(f"{s} {v}" for s, v in sorted(total.items()) if s not in KILLED)
    print(f"{'total':32} {n:8} {k:8} {100 * k / n:6.1f}%  {other}")
    if "--survivors" in argv:
        print()
        for name, count in survivors.most_common():
            print(f"{count:4}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
