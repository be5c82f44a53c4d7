"""Counters of the hostile-input suite, printed at the end of the pytest run.

tests/conftest.py is not ours, so instead of a ``pytest_terminal_summary`` hook there this module
registers a tiny plugin object at run time (pluggy accepts late registration); its
``pytest_terminal_summary`` prints every section the suite's modules filled in. Each test also
gets its own counts in the test report through ``record_property`` (see :func:`record_delta`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

__all__ = ["COUNTS", "SECTIONS", "install", "record_delta", "tally"]

#: "<target>|<what>" -> number; what is examples, inputs, typed (a documented typed error),
#: ignored (a documented no-op), crashes (an input that broke a property).
COUNTS: Counter[str] = Counter()

#: section title -> lines, filled by the modules (leak matrix, fault runs, ...).
SECTIONS: dict[str, list[str]] = {}

_PLUGIN_NAME = "lifecycle-hostile-input-report"


def tally(target: str, *, inputs: int = 1, **outcomes: int) -> None:
    """One example of ``target`` tried, made of ``inputs`` hostile inputs."""
    COUNTS[f"{target}|examples"] += 1
    COUNTS[f"{target}|inputs"] += inputs
    for what, n in outcomes.items():
        COUNTS[f"{target}|{what}"] += n


def crashed(target: str) -> None:
    COUNTS[f"{target}|crashes"] += 1


def _fuzz_lines() -> list[str]:
    targets = sorted({k.split("|")[0] for k in COUNTS})
    if not targets:
        return []
    head = f"{'target':<28}{'examples':>10}{'inputs':>12}{'typed':>9}{'ignored':>9}{'crashes':>9}"
    lines = [head]
    tot: Counter[str] = Counter()
    for t in targets:
        row = {w: COUNTS[f"{t}|{w}"] for w in ("examples", "inputs", "typed", "ignored", "crashes")}
        tot.update(row)
        lines.append(
            f"{t:<28}{row['examples']:>10}{row['inputs']:>12}{row['typed']:>9}{row['ignored']:>9}{row['crashes']:>9}"
        )
    lines.append(
        f"{'TOTAL':<28}{tot['examples']:>10}{tot['inputs']:>12}{tot['typed']:>9}{tot['ignored']:>9}"
        f"{tot['crashes']:>9}"
    )
    return lines


class _Reporter:
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        fuzz = _fuzz_lines()
        sections = ({"fuzz: inputs tried and outcomes": fuzz} if fuzz else {}) | SECTIONS
        for title, lines in sections.items():
            terminalreporter.write_sep("-", title)
            for line in lines:
                terminalreporter.write_line(line)


def install(config: pytest.Config) -> None:
    """Register the summary printer once per pytest run."""
    if not config.pluginmanager.has_plugin(_PLUGIN_NAME):
        config.pluginmanager.register(_Reporter(), _PLUGIN_NAME)


class record_delta:
    """Context manager: ``record_property`` the counters a test added."""

    def __init__(self, record_property: Any) -> None:
        self._record = record_property
        self._before: Counter[str] = Counter()

    def __enter__(self) -> record_delta:
        self._before = COUNTS.copy()
        return self

    def __exit__(self, *exc: object) -> None:
        delta = COUNTS - self._before
        for what in ("examples", "inputs", "typed", "ignored", "crashes"):
            n = sum(v for k, v in delta.items() if k.endswith(f"|{what}"))
            if n:
                self._record(f"fuzz_{what}", n)
