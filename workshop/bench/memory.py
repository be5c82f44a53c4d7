"""Section ``memory``: ledger size after few vs many recovered incidents, and the memory of idle sessions.

Sizes are tracemalloc's, after ``gc.collect()``. The ledgers share one
:class:`~lifecycle.answers.MachineAnswers` owned by the section (as an agent's sessions share
theirs), so a ledger's size is its own, not its owner's answers.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
import uuid
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from lifecycle.answers import MachineAnswers
from lifecycle.events import Assistant, Event, PromptStarted, Result
from lifecycle.ledger import SessionLedger

from .config import BenchConfig, Figure, Say, SectionResult, noop, timed
from .incident import ANSWER, RETRY, NullObserver

__all__ = ["bench_memory"]


def _recovered_life(turn: str) -> list[Event]:
    """prompt, api_retry warning, real answer, success: one recovered incident."""
    return [
        PromptStarted(turn_id=turn),
        RETRY,
        Assistant(text=ANSWER, model="claude-opus-5-5", uuid=turn + "-a"),
        Result(subtype="success", is_error=False, result=ANSWER, stop_reason="end_turn", terminal_reason="completed"),
    ]


def _lives_iter(start: int, stop: int) -> Iterator[list[Event]]:
    for i in range(start, stop):
        yield _recovered_life(f"t{i:08d}")


def _run_iter(ledger: SessionLedger, lives: Iterable[Sequence[Event]]) -> None:
    process = ledger.process
    for life in lives:
        for ev in life:
            process(ev, noop)


def bench_memory(cfg: BenchConfig, progress: Say) -> SectionResult:
    few, many = cfg.memory_few, cfg.memory_many
    answers = MachineAnswers()
    # Warm every cache (python-statemachine class registries, pydantic validators, the answers) first.
    warm = SessionLedger("warm", negotiated=True, epoch="w", answers=answers)
    _run_iter(warm, _lives_iter(0, 50))
    # Per-incident cost, untraced.
    probe = SessionLedger("probe", negotiated=True, epoch="p", answers=answers)
    n_probe = 200 if cfg.quick else 1000
    t = timed(lambda: _run_iter(probe, _lives_iter(0, n_probe)))
    per_life = t / n_probe
    progress(
        f"memory: {per_life * 1e6:.0f} µs per recovered incident -> 1,000,000 would take "
        f"{per_life * 1e6 / 60:.1f} min; measuring {few} vs {many}"
    )
    gc.collect()
    tracemalloc.start()
    try:
        gc.collect()
        m0 = tracemalloc.get_traced_memory()[0]
        ledger = SessionLedger("mem", negotiated=True, epoch="m", answers=answers)
        _run_iter(ledger, _lives_iter(0, few))
        gc.collect()
        m_few = tracemalloc.get_traced_memory()[0] - m0
        t1 = time.perf_counter()
        _run_iter(ledger, _lives_iter(few, many))
        traced_s = time.perf_counter() - t1
        gc.collect()
        m_many = tracemalloc.get_traced_memory()[0] - m0
        assert not ledger.active
    finally:
        tracemalloc.stop()
    figures = [
        Figure(
            "memory.ledger_ratio",
            f"ledger size after {many} / after {few} recovered incidents (tracemalloc)",
            "ratio",
            m_many / m_few,
            target=("<=", 2.0),
            note=(
                f"{many:,} incidents recovered under tracemalloc in {traced_s:.0f} s"
                + ("" if many >= 1_000_000 else "; the target is stated for 1,000,000 (--incidents 1000000)")
            ),
        ),
        Figure(f"memory.ledger_bytes_after_{few}", f"ledger size after {few} recovered incidents", "B", float(m_few)),
        Figure(
            f"memory.ledger_bytes_after_{many}", f"ledger size after {many} recovered incidents", "B", float(m_many)
        ),
        Figure(
            "memory.us_per_recovered_incident",
            "prompt + api_retry warning + real answer + success, untraced",
            "µs",
            per_life * 1e6,
            note=f"1,000,000 incidents would take {per_life * 1e6 / 60:.1f} min",
        ),
    ]
    detail: dict[str, Any] = {"traced_seconds": traced_s, "extrapolated_1m_minutes": per_life * 1e6 / 60}

    n = cfg.idle_sessions
    progress(f"memory: {n} idle sessions")
    observer = NullObserver()
    per_session: dict[str, float] = {}
    for variant in ("fresh", "after_one_turn", "after_one_turn_with_observer"):
        gc.collect()
        tracemalloc.start()
        try:
            gc.collect()
            base = tracemalloc.get_traced_memory()[0]
            sessions = []
            for i in range(n):
                sid = f"{uuid.UUID(int=i, version=4)}"
                led = SessionLedger(
                    sid,
                    negotiated=True,
                    epoch=f"e{i}",
                    observer=observer if variant.endswith("observer") else None,
                    answers=answers,
                )
                if variant != "fresh":
                    _run_iter(
                        led,
                        [
                            [
                                PromptStarted(turn_id=f"{sid}-t1"),
                                Assistant(text=ANSWER, model="claude-opus-5-5"),
                                Result(subtype="success", is_error=False, result=ANSWER, stop_reason="end_turn"),
                            ]
                        ],
                    )
                sessions.append(led)
            gc.collect()
            used = tracemalloc.get_traced_memory()[0] - base
        finally:
            tracemalloc.stop()
        per_session[variant] = used / n
        del sessions
    figures.append(
        Figure(
            "memory.idle_session_bytes",
            f"{n} idle sessions: bytes per session (one completed turn, observer attached)",
            "B",
            per_session["after_one_turn_with_observer"],
            target=("<=", 4096.0),
            note="includes the session id and epoch strings and the list holding the sessions",
        )
    )
    figures.append(Figure("memory.fresh_session_bytes", "bytes per fresh SessionLedger", "B", per_session["fresh"]))
    detail["idle_per_session_bytes"] = per_session
    return figures, detail
