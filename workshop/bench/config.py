"""What one run measures and how: :class:`BenchConfig`, :class:`Figure`, and the timing and process helpers.

Of the benchmark's own modules this imports only :mod:`~workshop.bench.inputs`, so every
section may import it.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import statistics
import sys
import time
import timeit
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import lifecycle
from lifecycle.events import Outbound

from .inputs import Recordings

__all__ = [
    "BenchConfig",
    "Figure",
    "Progress",
    "Say",
    "SectionResult",
    "best_of",
    "child_env",
    "measured",
    "module_available",
    "noop",
    "serialise",
    "timed",
    "unavailable",
]

#: How a section reports progress (a line on stderr, or nothing).
Say: TypeAlias = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class BenchConfig:
    """Sizes of one run. :meth:`quick_config` keeps the whole run well under 30 s on 2 cores.

    ``recordings`` is what the inputs are built from: a folder of recorded Claude Code CLI runs
    (``*.sdk.jsonl`` and ``*.transcript.jsonl``, like ``tests/fixtures/claude-cli-2.1.337``), the
    :class:`~workshop.bench.inputs.Recordings` read from one, or None (the default) for the
    inputs shipped with the package (:mod:`workshop.bench.inputs`).
    """

    quick: bool
    repetitions: int
    hot_lines: int
    incident_lives: int
    replay_small: int
    replay_large: int
    replay_repetitions: int
    memory_few: int
    memory_many: int
    idle_sessions: int
    explorer_states: int
    explorer_timeout: float
    recordings: Path | Recordings | None = None
    tmpdir: Path | None = None

    @classmethod
    def quick_config(cls, recordings: Path | Recordings | None = None, tmpdir: Path | None = None) -> BenchConfig:
        return cls(True, 3, 5_000, 200, 1_000, 10_000, 3, 10, 300, 1_000, 300, 0.0, recordings, tmpdir)

    @classmethod
    def full_config(cls, recordings: Path | Recordings | None = None, tmpdir: Path | None = None) -> BenchConfig:
        return cls(False, 7, 50_000, 1_000, 10_000, 100_000, 5, 10, 1_000_000, 10_000, 1_500, 300.0, recordings, tmpdir)


@dataclass(slots=True)
class Figure:
    """One measured figure. ``value`` is the median of ``samples`` (or the single measurement).

    ``target`` is ``(op, limit)`` with op ``<=``; ``met`` is None when the figure has no target.
    An unavailable figure has ``value`` None and says why in ``reason``.
    """

    id: str
    label: str
    unit: str
    value: float | None
    samples: list[float] = field(default_factory=list)
    target: tuple[str, float] | None = None
    note: str = ""
    reason: str = ""

    @property
    def available(self) -> bool:
        return self.value is not None

    @property
    def met(self) -> bool | None:
        if self.target is None:
            return None
        if self.value is None:
            return False
        op, limit = self.target
        assert op == "<="
        return self.value <= limit

    def spread(self) -> dict[str, float] | None:
        if len(self.samples) < 2:
            return None
        s = sorted(self.samples)
        q = statistics.quantiles(s, n=4, method="inclusive")
        return {"min": s[0], "q1": q[0], "q3": q[2], "max": s[-1]}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "label": self.label, "unit": self.unit, "available": self.available}
        if self.value is not None:
            out["value"] = self.value
            out["repetitions"] = max(1, len(self.samples))
            spread = self.spread()
            if spread is not None:
                out["spread"] = spread
        else:
            out["reason"] = self.reason
        if self.target is not None:
            out["target"] = {"op": self.target[0], "limit": self.target[1], "met": self.met}
        if self.note:
            out["note"] = self.note
        return out


#: What a section returns: its figures, and the details ``--json`` reports under its name.
SectionResult: TypeAlias = tuple[list[Figure], dict[str, Any]]


def measured(
    id_: str,
    label: str,
    unit: str,
    samples: Sequence[float],
    *,
    target: tuple[str, float] | None = None,
    note: str = "",
) -> Figure:
    """A figure whose value is the median of ``samples``."""
    vals = [float(x) for x in samples]
    return Figure(id_, label, unit, statistics.median(vals), vals, target, note)


def unavailable(id_: str, label: str, unit: str, reason: str, *, target: tuple[str, float] | None = None) -> Figure:
    """A figure that could not be measured, and why."""
    return Figure(id_, label, unit, None, [], target, reason=reason)


class Progress:
    """Progress lines on stderr, with the seconds since the run started (or nothing)."""

    def __init__(self, enabled: bool) -> None:
        self._enabled = enabled
        self._t0 = time.perf_counter()

    def __call__(self, msg: str) -> None:
        if self._enabled:
            print(f"bench [{time.perf_counter() - self._t0:6.1f}s] {msg}", file=sys.stderr, flush=True)


def noop(_msg: Outbound) -> None:
    """A ``deliver`` that does nothing."""
    return None


def serialise(msg: Outbound) -> None:
    """A ``deliver`` that encodes the message as the wire carries it."""
    json.dumps(msg.to_jsonrpc())


def best_of(fn: Callable[[], object], reps: int, number: int = 1) -> float:
    """Seconds per call, best of ``reps`` repetitions of ``number`` calls."""
    return min(timeit.repeat(fn, number=number, repeat=reps)) / number


def timed(fn: Callable[[], object]) -> float:
    """Seconds for one call of ``fn`` (gc collected first, left enabled: the adapter runs with it)."""
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def module_available(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


#: The folders holding the ``lifecycle`` package this process runs (site-packages, or a checkout) and
#: this ``workshop`` package (the checkout's root).
_PACKAGE_PARENTS = tuple(
    dict.fromkeys((Path(lifecycle.__file__).resolve().parents[1], Path(__file__).resolve().parents[2]))
)


def child_env() -> dict[str, str]:
    """The environment of a child ``python``: this one, with the folders of the ``lifecycle`` package this
    process runs and of this ``workshop`` first on ``PYTHONPATH``, so the child measures the same code
    whatever its cwd.

    Children run in a temporary folder, never in a checkout: the benchmark works the same from an
    installed package.
    """
    env = dict(os.environ)
    old = env.get("PYTHONPATH")
    env["PYTHONPATH"] = os.pathsep.join([*map(str, _PACKAGE_PARENTS), *([old] if old else [])])
    return env
