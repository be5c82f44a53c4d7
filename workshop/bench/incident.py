"""Section ``incident``: one incident's full life through a real ledger, against one ``SessionFailure``.

Where python-statemachine's time goes (cProfile, from a cold start); the first life of a process;
what a real machine instance per incident would cost. The steady-state figures use ledgers sharing
one :class:`~lifecycle.answers.MachineAnswers` (warmed first, as an agent's sessions share theirs);
a *cold* life or profile is a ledger given fresh answers, so every question it asks goes to a real
:class:`~lifecycle.incident.IncidentMachine`.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import timeit
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lifecycle.answers import Incident, MachineAnswers, TransitionListener
from lifecycle.conditions import Recovery
from lifecycle.events import ApiRetry, Assistant, Event, Outbound, PromptStarted, Result
from lifecycle.incident import IncidentMachine
from lifecycle.ledger import SessionLedger
from lifecycle.wire import Category, SessionFailure, Severity, attach_record

from .config import BenchConfig, Figure, Say, SectionResult, measured, serialise, timed

__all__ = ["ANSWER", "RETRY", "NullObserver", "bench_incident"]


class NullObserver:
    """A TransitionObserver that does nothing (so listener dispatch is measured, not logging)."""

    def transition(self, **fields: Any) -> None:
        return None

    def note(self, what: str, **fields: Any) -> None:
        return None


RETRY = ApiRetry(attempt=1, max_retries=2, error_status=529, error="overloaded")
_ERROR_TEXT = "API Error: Repeated 529 Overloaded errors · check status.claude.com"
ANSWER = "Hello from the fake API."


_ERROR_RESULT = Result(
    subtype="success", is_error=True, result=_ERROR_TEXT, api_error_status=529, terminal_reason="api_error"
)


def _incident_life_events(turn: str) -> list[Event]:
    """retry warning -> terminal error (turn 1), then a confirmed attempt (turn 2) -> historical."""
    return [
        PromptStarted(turn_id=turn),
        RETRY,
        Assistant(text=_ERROR_TEXT, model="<synthetic>", error="server_error", uuid=turn + "-a"),
        _ERROR_RESULT,
        _ERROR_RESULT,  # the SDK's ResultError, which the Claude edge turns into the result it repeats
        PromptStarted(turn_id=turn + "-next"),
        Assistant(text=ANSWER, model="claude-opus-5-5", uuid=turn + "-b"),
        Result(subtype="success", is_error=False, result=ANSWER, stop_reason="end_turn", terminal_reason="completed"),
    ]


def _two_turns_events(turn: str) -> list[Event]:
    """The same two turns without the failure: what the life costs beyond ordinary traffic."""
    return [
        PromptStarted(turn_id=turn),
        Assistant(text=ANSWER, model="claude-opus-5-5", uuid=turn + "-a"),
        Result(subtype="success", is_error=False, result=ANSWER, stop_reason="end_turn", terminal_reason="completed"),
        PromptStarted(turn_id=turn + "-next"),
        Assistant(text=ANSWER, model="claude-opus-5-5", uuid=turn + "-b"),
        Result(subtype="success", is_error=False, result=ANSWER, stop_reason="end_turn", terminal_reason="completed"),
    ]


def _run_lives(ledger: SessionLedger, lives: Sequence[Sequence[Event]], deliver: Callable[[Outbound], object]) -> None:
    process = ledger.process
    for life in lives:
        for ev in life:
            process(ev, deliver)


def _make_lives(
    n: int, start: int = 0, kind: Callable[[str], list[Event]] = _incident_life_events
) -> list[list[Event]]:
    return [kind(f"turn-{i:08d}") for i in range(start, start + n)]


def _sf() -> SessionFailure:
    return SessionFailure(
        id="turn-00000000:error",
        revision=2,
        category=Category.SERVICE,
        severity=Severity.ERROR,
        title=_ERROR_TEXT,
        actions=(),
    )


def _profile_split(n: int) -> dict[str, Any]:
    """cProfile of ``n`` lives (observer attached) from a cold start: where python-statemachine's time goes.

    The ledger gets fresh machine answers, so the profile includes asking every question once.
    """
    answers = MachineAnswers()
    ledger = SessionLedger("bench-session", negotiated=True, epoch="bench", observer=NullObserver(), answers=answers)
    lives = _make_lives(n)
    prof = cProfile.Profile()
    prof.enable()
    _run_lives(ledger, lives, serialise)
    prof.disable()
    asked, asked_turn = answers.incident_questions, answers.turn_questions
    stats = pstats.Stats(prof)
    raw: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in raw.values())  # total own time = profiled wall time

    def cum(path_part: str, func: str) -> float:
        return float(sum(v[3] for k, v in raw.items() if path_part in k[0] and k[2] == func))

    def own(path_part: str) -> float:
        return float(sum(v[2] for k, v in raw.items() if path_part in k[0]))

    sm = os.sep + "statemachine" + os.sep
    pyd = own(os.sep + "pydantic" + os.sep) + own("pydantic_core")
    parts = {
        "machine_creation": cum(sm + "statemachine.py", "__init__"),
        "machine_creation_listener_registration": cum(sm + "statemachine.py", "_add_listener"),
        "transitions_send": cum(sm + "statemachine.py", "send"),
        "statemachine_own_time_total": own(sm),
        "machine_answers_fire": cum("lifecycle" + os.sep + "incident.py", "fire"),
        "ledger_fire_with_observer": cum("lifecycle" + os.sep + "ledger.py", "_fire"),
        "pydantic_own_time": pyd,
        "attach_record": cum("lifecycle" + os.sep + "wire.py", "attach_record"),
        "json_dumps": cum("json" + os.sep + "__init__.py", "dumps"),
    }
    top = sorted(
        ((v[3], f"{Path(k[0]).name}:{k[1]}({k[2]})") for k, v in raw.items() if sm in k[0]),
        reverse=True,
    )[:8]
    return {
        "lives": n,
        "questions_asked_of_real_machines": asked,  # of IncidentMachine
        "turn_questions_asked_of_real_machines": asked_turn,  # of SessionFlow
        "profiled_total_s": total,
        "seconds": parts,
        "share_of_total": {k: (v / total if total else 0.0) for k, v in parts.items()},
        "calls_per_life": sum(v[1] for v in raw.values()) / n,
        "statemachine_top_cumulative": [{"function": name, "cumulative_s": t} for t, name in top],
    }


def _cold_life_ms(reps: int) -> list[float]:
    """One incident life in a ledger with fresh machine answers (a process's first incident: every
    question it asks goes to a real :class:`~lifecycle.incident.IncidentMachine`)."""
    out: list[float] = []
    for r in range(reps):
        life = _make_lives(1, start=10_000_000 + r)
        ledger = _ledger(MachineAnswers())
        out.append(timed(lambda ledger=ledger, life=life: _run_lives(ledger, life, serialise)) * 1e3)  # type: ignore[misc]
    return out


def _micro(reps: int, number: int) -> dict[str, float]:
    """µs per operation of python-statemachine pieces the ledger uses (best of ``reps``)."""
    listener = TransitionListener(NullObserver(), "bench-session")

    def best(fn: Callable[[], object]) -> float:
        return min(timeit.repeat(fn, number=number, repeat=reps)) / number * 1e6

    def new_machine() -> object:
        return IncidentMachine(model=Incident("x:error", "x"), state_field="state")

    def new_machine_listener() -> object:
        return IncidentMachine(model=Incident("x:error", "x"), state_field="state", listeners=[listener])

    def life_transitions() -> None:
        inc = Incident("x:error", "x")
        inc.recovery = Recovery.CONFIRMED_ATTEMPT
        m = IncidentMachine(model=inc, state_field="state")
        m.send("warn")
        m.send("fail")
        m.send("confirmed_attempt")

    def in_retrying(listeners: list[object]) -> IncidentMachine:
        m = IncidentMachine(model=Incident("x:error", "x"), state_field="state", listeners=listeners)
        m.send("warn")
        return m

    plain, observed = in_retrying([]), in_retrying([listener])
    record = _sf()
    return {
        "transition_self_loop_us": best(lambda: plain.send("warn")),
        "transition_self_loop_with_listener_us": best(lambda: observed.send("warn")),
        "machine_creation_us": best(new_machine),
        "machine_creation_with_listener_us": best(new_machine_listener),
        "machine_creation_plus_3_transitions_us": best(life_transitions),
        "session_failure_model_us": best(_sf),
        "attach_record_us": best(lambda: attach_record(None, record)),
        "record_to_wire_us": best(record.to_wire),
    }


def _ledger(answers: MachineAnswers) -> SessionLedger:
    return SessionLedger("bench-session", negotiated=True, epoch="bench", answers=answers)


def bench_incident(cfg: BenchConfig, progress: Say) -> SectionResult:
    n = cfg.incident_lives
    progress(f"incident: {n} full lives x {cfg.repetitions} repetitions")
    # The steady state: one owner's answers for every ledger (as an agent's sessions share theirs),
    # warmed by one untimed life. The cold figures below give their ledgers fresh answers.
    answers = MachineAnswers()
    _run_lives(_ledger(answers), _make_lives(1, start=20_000_000), serialise)
    per_life: list[float] = []
    per_two_turns: list[float] = []
    per_sf: list[float] = []
    ratios: list[float] = []
    for r in range(cfg.repetitions):
        lives = _make_lives(n, start=r * n)
        plain = _make_lives(n, start=r * n, kind=_two_turns_events)
        ledger = _ledger(answers)
        t = timed(lambda ledger=ledger, lives=lives: _run_lives(ledger, lives, serialise))  # type: ignore[misc]
        assert not ledger.active, "every bench incident must end historical"
        ledger = _ledger(answers)
        t2 = timed(lambda ledger=ledger, plain=plain: _run_lives(ledger, plain, serialise))  # type: ignore[misc]
        number = max(1000, n)
        sf = min(timeit.repeat(_sf, number=number, repeat=3)) / number
        per_life.append(t / n * 1e6)
        per_two_turns.append(t2 / n * 1e6)
        per_sf.append(sf * 1e6)
        ratios.append((t / n) / sf)
    progress("incident: cold start, cProfile split and micro-benchmarks")
    cold = _cold_life_ms(cfg.repetitions)
    split = _profile_split(max(100, n // 4))
    micro = _micro(5, 50 if cfg.quick else 200)
    figures = [
        measured(
            "incident.us_per_life",
            "one incident's life (retry warning -> error -> historical), serialised, real ledger",
            "µs",
            per_life,
            note="8 events over 2 turns: prompt, api_retry, synthetic error, error result, ResultError, "
            "next prompt, real answer, success result; every send json.dumps(to_jsonrpc()); the ledgers share "
            "one warmed MachineAnswers, as an agent's sessions do (incident.cold_life_ms: fresh answers)",
        ),
        measured(
            "incident.us_same_turns_without_incident",
            "the same two turns without the failure (prompt, answer, result x2)",
            "µs",
            per_two_turns,
        ),
        measured("incident.session_failure_us", "construct one pydantic SessionFailure", "µs", per_sf),
        measured(
            "incident.ratio_to_session_failure", "incident life / one SessionFailure construction", "ratio", ratios
        ),
        Figure(
            "incident.statemachine_share",
            f"share of {split['lives']} incident lives from a cold start spent inside python-statemachine (cProfile)",
            "ratio",
            split["share_of_total"]["machine_creation"] + split["share_of_total"]["transitions_send"],
            note=f"machine creation + send() of the {split['questions_asked_of_real_machines']} incident and "
            f"{split['turn_questions_asked_of_real_machines']} turn questions asked of real IncidentMachine and "
            "SessionFlow instances (lifecycle.answers.MachineAnswers); every other transition is a kept answer; "
            "see details.incident.profile for the split",
        ),
        measured(
            "incident.cold_life_ms",
            "the first incident life of a process (a ledger with fresh machine answers: every question asked "
            "of a real machine)",
            "ms",
            cold,
        ),
        Figure(
            "incident.us_machine_instance_per_incident",
            "what a real IncidentMachine instance per incident costs: creation + 3 transitions (no listener)",
            "µs",
            micro["machine_creation_plus_3_transitions_us"],
            note="best of 5 (details.incident.micro_us); the ledger asks such an instance only once per distinct "
            "question, which is what keeps this off the per-incident path",
        ),
    ]
    return figures, {"profile": split, "micro_us": micro}
