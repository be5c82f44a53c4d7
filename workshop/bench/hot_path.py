"""Section ``hot_path``: stream-json lines through ``from_stream_json`` and ``SessionLedger.process``.

Baseline: ``json.loads`` of the same lines. The ledgers of this section share one
:class:`~lifecycle.answers.MachineAnswers`, as an agent's sessions share theirs
(:class:`lifecycle.agent` keeps one per agent), warmed by an untimed pass: the figures are a
session's steady state. ``hot_path.ratio_cold_answers`` gives every repetition a ledger with fresh
answers instead (an agent process's first session, every question asked of a real machine).
"""

from __future__ import annotations

import cProfile
import functools
import json
import os
import pstats
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeAlias

from lifecycle.answers import MachineAnswers
from lifecycle.claude import from_stream_json
from lifecycle.events import Event, Outbound
from lifecycle.ledger import SessionLedger

from .config import BenchConfig, Say, SectionResult, best_of, measured, noop, serialise, timed
from .inputs import load_recordings
from .mixes import (
    REALISTIC_MIX,
    HotPathSession,
    build_failure_dense_session,
    build_realistic_session,
    line_kind,
)

__all__ = ["bench_hot_path"]

Items: TypeAlias = Sequence[dict[str, Any] | Event]


def _ledger(answers: MachineAnswers | None) -> SessionLedger:
    """A fresh session's ledger; ``answers`` None gives it fresh machine answers of its own."""
    return SessionLedger("bench-session", negotiated=True, epoch="bench", answers=answers)


def _drive(items: Items, deliver: Callable[[Outbound], object], answers: MachineAnswers) -> SessionLedger:
    ledger = _ledger(answers)
    _feed_items(ledger, items, deliver)
    return ledger


def _feed_items(ledger: SessionLedger, items: Items, deliver: Callable[[Outbound], object]) -> None:
    process = ledger.process
    for item in items:
        if type(item) is dict:
            ev = from_stream_json(item)
            if ev is None:
                continue
        else:
            ev = item  # type: ignore[assignment]
        process(ev, deliver)  # type: ignore[arg-type]


def _translate_items(items: Items) -> None:
    """The same loop with translation only (no ledger): what the ledger adds is the difference."""
    for item in items:
        if type(item) is dict:
            from_stream_json(item)


def _count_outbound(items: Items, answers: MachineAnswers) -> dict[str, int]:
    """What one pass produces, for the report: events, sends, records, incidents, active at the end.

    Untimed; it also warms ``answers`` with every question the session's incidents ask.
    """
    sends = records = 0
    ids: set[str] = set()

    def deliver(msg: Outbound) -> None:
        nonlocal sends, records
        sends += 1
        if msg.record is not None:
            records += 1
            ids.add(msg.record.id)

    events = sum(1 for i in items if not isinstance(i, dict) or from_stream_json(i) is not None)
    ledger = _drive(items, deliver, answers)
    return {
        "events": events,
        "sends": sends,
        "records": records,
        "incidents": len(ids),
        "active_at_end": len(ledger.active),
    }


def _hot_ratio(
    session: HotPathSession, reps: int, deliver: Callable[[Outbound], object], answers: MachineAnswers | None
) -> tuple[list[float], list[float], list[float]]:
    """Interleaved repetitions: (baseline seconds, lifecycle seconds, per-rep ratio).

    Each repetition feeds a new ledger sharing ``answers``; None gives each one fresh answers.
    """
    lines, items = session.lines, session.items
    loads = json.loads

    def baseline() -> None:
        for line in lines:
            loads(line)

    base: list[float] = []
    life: list[float] = []
    ratio: list[float] = []
    for _ in range(reps):
        b = timed(baseline)
        ledger = _ledger(answers)
        t = timed(lambda ledger=ledger: _feed_items(ledger, items, deliver))  # type: ignore[misc]
        base.append(b)
        life.append(t)
        ratio.append(t / b)
    return base, life, ratio


def _loads_all(texts: Sequence[str]) -> None:
    for t in texts:
        json.loads(t)


def _translate_all(dicts: Sequence[Mapping[str, Any]]) -> None:
    for d in dicts:
        from_stream_json(d)


def _per_type(session: HotPathSession, reps: int) -> dict[str, dict[str, float]]:
    """µs per line of each stream-json kind: json.loads vs from_stream_json (translation only)."""
    groups: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for line, d in zip(session.lines, session.dicts, strict=True):
        groups.setdefault(line_kind(d), []).append((line, d))
    out: dict[str, dict[str, float]] = {}
    for kind, pairs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        sample = pairs[:500]
        texts = [p[0] for p in sample]
        dicts = [p[1] for p in sample]
        n = len(sample)
        loads = best_of(functools.partial(_loads_all, texts), reps) / n
        trans = best_of(functools.partial(_translate_all, dicts), reps) / n
        out[kind] = {
            "lines": len(pairs),
            "bytes_mean": sum(len(p[0]) for p in pairs) / len(pairs),
            "json_loads_us": loads * 1e6,
            "from_stream_json_us": trans * 1e6,
        }
    return out


def _hot_profile(session: HotPathSession, answers: MachineAnswers) -> dict[str, Any]:
    """cProfile of one lifecycle pass over ``session``: where the hot path's time goes.

    Shares are of the profiled total (the profiler inflates small calls, so they are indicative);
    the un-profiled decomposition is in ``details.hot_path.decomposition``.
    """
    ledger = _ledger(answers)
    prof = cProfile.Profile()
    prof.enable()
    _feed_items(ledger, session.items, noop)
    prof.disable()
    raw: dict[tuple[str, int, str], tuple[Any, ...]] = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in raw.values())

    def cum(path_part: str, func: str) -> float:
        return float(sum(v[3] for k, v in raw.items() if k[0].endswith(path_part) and k[2] == func))

    sm = os.sep + "statemachine" + os.sep
    parts = {
        "from_stream_json": cum(os.sep + "claude.py", "from_stream_json"),
        "ledger_process": cum(os.sep + "ledger.py", "process"),
        "ledger_feed": cum(os.sep + "ledger.py", "feed"),
        "ledger_materialise": cum(os.sep + "ledger.py", "_materialise"),
        "ledger_commit": cum(os.sep + "ledger.py", "_commit"),
        "ledger_recover": cum(os.sep + "ledger.py", "_recover"),
        "statemachine_creation": float(
            sum(v[3] for k, v in raw.items() if sm in k[0] and k[0].endswith("statemachine.py") and k[2] == "__init__")
        ),
        "statemachine_send": float(
            sum(v[3] for k, v in raw.items() if sm in k[0] and k[0].endswith("statemachine.py") and k[2] == "send")
        ),
    }
    return {
        "profiled_total_s": total,
        "seconds": parts,
        "share_of_total": {k: (v / total if total else 0.0) for k, v in parts.items()},
    }


def _decompose(
    session: HotPathSession, traffic: HotPathSession, reps: int, answers: MachineAnswers, *, incidents: int
) -> dict[str, Any]:
    """Where the realistic hot path's time goes, un-profiled: medians of interleaved repetitions of
    the translation loop alone, the whole lifecycle, and the lifecycle over the same mix without
    incident turns (scaled to the same number of lines); the incidents cost the difference."""
    items, quiet = session.items, traffic.items
    loop: list[float] = []
    whole: list[float] = []
    plain: list[float] = []
    for _ in range(reps):
        loop.append(timed(lambda: _translate_items(items)))
        ledger = _ledger(answers)
        whole.append(timed(lambda ledger=ledger: _feed_items(ledger, items, noop)))  # type: ignore[misc]
        ledger = _ledger(answers)
        plain.append(timed(lambda ledger=ledger: _feed_items(ledger, quiet, noop)))  # type: ignore[misc]
    t_loop, t_whole = statistics.median(loop), statistics.median(whole)
    t_plain = statistics.median(plain) * len(session.lines) / len(traffic.lines)
    t_incidents = t_whole - t_plain
    return {
        "repetitions": reps,
        "lifecycle_s": t_whole,
        "translate_loop_s": t_loop,
        "ledger_traffic_s": t_plain - t_loop,
        "incidents_s": t_incidents,
        "incidents": incidents,
        "ms_per_incident": t_incidents / incidents * 1e3 if incidents else None,
        "traffic_only_lifecycle_s_scaled": t_plain,
        "share": {
            "translate_loop": t_loop / t_whole,
            "ledger_traffic": (t_plain - t_loop) / t_whole,
            "incidents": t_incidents / t_whole,
        },
    }


def _mix_label(session: HotPathSession, incidents: int) -> str:
    kinds = ", ".join(f"{n:,} {k}" for k, n in session.by_type.items())
    return (
        f"{len(session.lines):,} lines ({kinds}); {session.turns:,} turns, {incidents} incidents "
        f"({session.failing_turns} failing + {session.retry_turns} retry-then-success turns)"
    )


def bench_hot_path(cfg: BenchConfig, progress: Say) -> SectionResult:
    progress(f"hot path: building the realistic and failure-dense sessions (>= {cfg.hot_lines} lines each)")
    recordings = load_recordings(cfg.recordings)
    session = build_realistic_session(recordings, cfg.hot_lines)
    traffic = build_realistic_session(
        recordings, cfg.hot_lines, mix=replace(REALISTIC_MIX, failures_per_10k=0, retries_per_10k=0)
    )
    init_once = build_realistic_session(recordings, cfg.hot_lines, mix=replace(REALISTIC_MIX, init_per_turn=False))
    dense = build_failure_dense_session(recordings, cfg.hot_lines)
    # One owner's machine answers for every ledger of the section (as an agent shares one across its
    # sessions), warmed by the untimed counting passes.
    answers = MachineAnswers()
    counts = _count_outbound(session.items, answers)
    dense_counts = _count_outbound(dense.items, answers)
    n = len(session.lines)
    reps = cfg.repetitions
    progress(
        f"hot path: realistic {n} lines, {session.turns} turns, {counts['incidents']} incidents; {reps} repetitions"
    )
    base, life, ratio = _hot_ratio(session, reps, noop, answers)
    _, _, ratio_ser = _hot_ratio(session, reps, serialise, answers)
    _, _, ratio_cold = _hot_ratio(session, reps, noop, None)
    _, tl, ratio_traffic = _hot_ratio(traffic, reps, noop, answers)
    _, _, ratio_init_once = _hot_ratio(init_once, reps, noop, answers)
    progress(f"hot path: failure-dense {len(dense.lines)} lines, {dense_counts['incidents']} incidents")
    _, dl, ratio_dense = _hot_ratio(dense, reps, noop, answers)
    decomposition = _decompose(session, traffic, reps, answers, incidents=counts["incidents"])
    what = (
        "lifecycle = from_stream_json(dict) for every line + SessionLedger.process(event, deliver) for every "
        "event (incl. the adapter-only PromptStarted event per turn, building every outbound message, "
        "SessionFailure records, incident transitions answered by IncidentMachine through "
        "lifecycle.answers.MachineAnswers, commit); deliver is a no-op "
        "(no to_jsonrpc, no JSON encoding, no transport); baseline = json.loads of the same lines; "
        "each repetition is a new ledger, all sharing one MachineAnswers warmed by an untimed pass, as an "
        "agent's sessions share theirs (hot_path.ratio_cold_answers: fresh answers per ledger)"
    )
    figures = [
        measured(
            "hot_path.ratio",
            f"hot path, realistic mix: lifecycle / json.loads, {_mix_label(session, counts['incidents'])}",
            "ratio",
            ratio,
            target=("<=", 0.10),
            note=what + "; mix: workshop.bench.REALISTIC_MIX",
        ),
        measured(
            "hot_path.baseline_us_per_line",
            "hot path baseline (realistic mix): json.loads per line",
            "µs",
            [b / n * 1e6 for b in base],
        ),
        measured(
            "hot_path.lifecycle_us_per_line",
            "hot path (realistic mix): lifecycle per line",
            "µs",
            [t / n * 1e6 for t in life],
        ),
        measured(
            "hot_path.ratio_serialised",
            "hot path, realistic mix, with wire serialisation: deliver = json.dumps(msg.to_jsonrpc())",
            "ratio",
            ratio_ser,
        ),
        measured(
            "hot_path.ratio_cold_answers",
            "hot path, realistic mix, every repetition a ledger with fresh machine answers (an agent "
            "process's first session: each question its incidents ask goes to a real IncidentMachine)",
            "ratio",
            ratio_cold,
        ),
        measured(
            "hot_path.ratio_traffic_only",
            f"hot path, realistic mix without incident turns: {_mix_label(traffic, 0)}",
            "ratio",
            ratio_traffic,
        ),
        measured(
            "hot_path.traffic_only_lifecycle_us_per_line",
            "hot path, realistic mix without incident turns: lifecycle per line",
            "µs",
            [t / len(traffic.lines) * 1e6 for t in tl],
        ),
        measured(
            "hot_path.ratio_init_once_per_runtime",
            "hot path, realistic mix but system/init only at the first turn (the CLI prints it every turn), "
            f"{len(init_once.lines):,} lines",
            "ratio",
            ratio_init_once,
        ),
        measured(
            "hot_path.ratio_failure_dense",
            "hot path, failure-dense mix (1 failing + 1 retry-then-success turn in every 20 tiny recorded "
            f"turns, 3 text deltas per answer): {_mix_label(dense, dense_counts['incidents'])}",
            "ratio",
            ratio_dense,
        ),
        measured(
            "hot_path.failure_dense_lifecycle_us_per_line",
            "hot path, failure-dense mix: lifecycle per line",
            "µs",
            [t / len(dense.lines) * 1e6 for t in dl],
        ),
    ]
    detail = {
        "lines": n,
        "bytes": sum(len(x) for x in session.lines),
        "turns": session.turns,
        "failing_turns": session.failing_turns,
        "retry_turns": session.retry_turns,
        **counts,
        "lines_by_type": session.by_type,
        "generated": session.stats,
        "per_type": _per_type(session, reps),
        "decomposition": decomposition,
        "profile": _hot_profile(session, answers),
        "traffic_only": {"lines": len(traffic.lines), "turns": traffic.turns, "lines_by_type": traffic.by_type},
        "init_once": {"lines": len(init_once.lines), "lines_by_type": init_once.by_type},
        "failure_dense": {
            "lines": len(dense.lines),
            "turns": dense.turns,
            "failing_turns": dense.failing_turns,
            "retry_turns": dense.retry_turns,
            **dense_counts,
            "lines_by_type": dense.by_type,
            "mix": dense.stats,
        },
    }
    return figures, detail
