"""``workshop check``: the exhaustive explorer and its mutation self-test, through the Python API.

The full exploration and the full self-test run once per suite run (``workshop check --json``
and ``--mutants --json``, the fixtures ``exploration`` and ``mutants_report`` of conftest.py:
CI's own steps, read from their files, or run once here); the tests below read their reports.
Smaller bounds and single mutants run here, in this process.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from lifecycle.cli.trace import run_trace
from lifecycle.incident import IncidentMachine
from lifecycle.session_flow import flow_transitions
from workshop import explorer as check
from workshop.explorer import (
    ACTIONS,
    INVARIANTS,
    TARGETS,
    Bounds,
    CheckResult,
    Explorer,
    Violation,
    declared_incident_transitions,
    explore,
    make_root,
    run_path,
    run_step,
)
from workshop.explorer import cli as check_cli
from workshop.explorer.cli import cli_main
from workshop.mutants import MUTANTS, MutantReport, MutantResult, applied, run_mutant, run_mutants


@pytest.fixture(scope="module")
def full(exploration: dict[str, Any]) -> CheckResult:
    """The shared run's report as the :class:`CheckResult` it was written from."""
    r = exploration
    result = CheckResult(
        bounds=Bounds(**r["bounds"]),
        states=r["states"],
        edges=r["edges"],
        depth=r["depth"],
        roots=r["roots"],
        beyond_bound=r["beyond_bound"],
        seconds=r["seconds"],
        complete=r["complete"],
        invariants=r["invariants"],
        violations=[Violation(**v) for v in r["violations"]],
        coverage=r["coverage"],
        flow_coverage=r["flow_coverage"],
        targets=r["targets"],
        beyond_bounds=r["beyond_bounds"],
    )
    assert result.bounds == Bounds()  # the whole default space, not a smaller one
    assert result.to_json() == r  # nothing of the report is lost or made up on the way
    return result


def test_the_whole_bounded_space_is_explored_and_every_invariant_holds(full: CheckResult) -> None:
    assert full.complete and full.ok, check.render_report(full)
    assert full.violations == []
    assert full.invariants == [i.name for i in INVARIANTS] + ["recovery_reachable"]


def test_the_reported_numbers_are_sane(full: CheckResult) -> None:
    # Floors, each with its reason:
    # * every root is a state, and every action of the alphabet is enabled somewhere: at least
    #   one edge per action per capable root;
    # * the second turn repeats the first one's space with every leftover incident set, so the
    #   default bounds (2 turns) must explore strictly more than 1 turn (checked below), and the
    #   one-turn space alone has more than 4 flow states x 4 failure policies x 2 runtime
    #   generations x 6 roots = 192 views; 1000 is a conservative floor for two turns.
    assert full.roots == len(check.ROOTS) == 7  # issue 32 added the window root
    assert full.states >= 1000
    assert full.edges >= full.states  # each state has several successors (most are self-loops)
    assert full.edges >= len(ACTIONS) * 4
    # A session of two failed turns with warnings and a replacement is more than 8 events deep.
    assert full.depth >= 8
    # How long it takes is the benchmark's business (workshop bench: explorer.*), not a unit test's.


def test_more_turns_explore_strictly_more() -> None:
    # Only the turn bound differs; the others are small so that two explorations take seconds
    # (the full space is explored once, by the ``full`` fixture).
    small = dict(incidents=1, replacements=0, retries=1, notices=1, failed_sends=False)
    one, two = explore(Bounds(turns=1, **small)), explore(Bounds(turns=2, **small))  # type: ignore[arg-type]
    for r in (one, two):
        assert r.complete and r.violations == [], check.render_report(r)
    assert "second_turn" in one.unreached and "second_turn" not in two.unreached  # one turn cannot reach a second
    assert one.states < two.states and one.edges < two.edges


def test_every_declared_transition_of_both_machines_fires(full: CheckResult) -> None:
    declared = {f"{s} --{e}--> {t}" for s, e, t in declared_incident_transitions()}
    assert set(full.coverage) == declared and len(declared) == sum(len(s.transitions) for s in IncidentMachine.states)
    # A transition the bounds cannot reach is named with its reason, never silently skipped.
    assert set(full.beyond_bounds) <= declared and all(full.beyond_bounds.values())
    assert full.uncovered == [] and all(n > 0 for k, n in full.coverage.items() if k not in full.beyond_bounds)
    flow = {f"{s} --{e}--> {t}" for (s, e), t in flow_transitions().items()}
    assert set(full.flow_coverage) == flow and full.flow_uncovered == []
    assert all(n > 0 for n in full.flow_coverage.values())


def test_every_reachability_target_is_reached(full: CheckResult) -> None:
    assert set(full.targets) == {t.name for t in TARGETS}
    assert full.unreached == []
    # The roots already hold a restored replay; live incidents need at least a prompt.
    assert full.targets["replay_restored"] == 0
    assert all(d is not None and d >= 1 for n, d in full.targets.items() if n.startswith(("warning", "auth")))


def test_an_explorer_that_explores_nothing_fails() -> None:
    # No prompts and no retries: whole targets and transitions are unreachable, so it must fail.
    result = explore(Bounds(turns=0))
    assert not result.ok
    assert "second_turn" in result.unreached and "warning_active" in result.unreached
    assert "pending --warn--> retrying" in result.uncovered


def test_an_explorer_over_an_empty_alphabet_fails() -> None:
    result = Explorer(actions=()).run()
    assert not result.ok and result.edges == 0 and result.unreached


# ---------------------------------------------------------------------------- mutants


@pytest.fixture(scope="module")
def mutants(mutants_report: dict[str, Any]) -> MutantReport:
    """The shared self-test's report as the :class:`MutantReport` it was written from (a
    counterexample's depth is its steps after the root, as :func:`run_mutant` makes it)."""
    spec = {i.name: i.spec for i in INVARIANTS}
    results = []
    for r in mutants_report["results"]:
        caught_by = r["caught_by"]
        violation = None
        if r["steps"]:
            invariant = caught_by or ""
            depth = len(r["steps"]) - 1
            violation = Violation(invariant, spec.get(invariant, ""), r["message"], depth, r["steps"], r["trace"])
        results.append(MutantResult(r["name"], r["bug"], caught_by, r["message"], violation, r["states"], r["seconds"]))
    report = MutantReport(results, mutants_report["seconds"])
    assert report.to_json() == mutants_report
    return report


def test_every_seeded_bug_is_caught(mutants: Any) -> None:
    assert mutants.ok, [(r.name, r.message) for r in mutants.results if r.caught_by is None]
    assert len(mutants.results) >= 10 and len({m.name for m in MUTANTS}) == len(MUTANTS)
    names = {i.name for i in INVARIANTS} | {"recovery_reachable"}
    for r in mutants.results:
        assert r.caught_by in names and r.violation is not None and r.violation.trace
    # The self-test is meaningful only if different invariants do the catching.
    assert len({r.caught_by for r in mutants.results}) >= 8


def test_mutants_are_restored_after_the_self_test() -> None:
    # In this process: two mutants (one caught by an invariant, one by a state property), then
    # the real code again.
    by_name = {m.name: m for m in MUTANTS}
    report = run_mutants(Bounds(turns=1), (by_name["tombstone_on_recovery"], by_name["quota_guard_wrong"]))
    assert report.ok
    again = explore(Bounds(turns=1, incidents=1, failed_sends=False))
    assert again.complete and again.violations == []


def test_a_counterexample_is_real_and_replays_through_lifecycle_trace(mutants: Any) -> None:
    by_name = {m.name: m for m in MUTANTS}
    for r in mutants.results:
        v = r.violation
        assert v is not None and v.steps[0] in {root.name for root in check.ROOTS}
        inv = next((i for i in INVARIANTS if i.name == v.invariant), None)
        if inv is None:
            continue  # recovery_reachable is a state property, checked by the escape script
        with applied(by_name[r.name]):
            replay = run_path(v.steps[0], v.steps[1:])
            assert inv.check(replay.steps[-1]) is not None, r.name  # the bug shows on the last step
            out: list[str] = []
            crashed = v.invariant == "no_crash"  # the bug is a crash: the trace of its path crashes the same way
            if crashed:
                with pytest.raises(type(replay.steps[-1].error)):  # type: ignore[arg-type]
                    run_trace(replay.lines, out.append, lambda msg: None)
            else:
                run_trace(replay.lines, out.append, lambda msg: None)
        # A trace cannot tag an event with its runtime, nor say the adapter failed: it skips those lines.
        if not crashed and not {"late_event", "internal_error"} & set(v.steps):
            assert [json.loads(x) for x in "".join(out).splitlines()][:-1] == replay.delivered, r.name
        fixed = run_path(v.steps[0], v.steps[1:])  # the same path without the bug
        assert all(i.check(s) is None for s in fixed.steps for i in INVARIANTS), r.name


def test_a_mutant_caught_by_a_state_property_is_reported_too() -> None:
    quota = next(m for m in MUTANTS if m.name == "quota_guard_wrong")
    r = run_mutant(quota)
    assert r.caught_by is not None and "real_model_answer" in r.message
    assert r.violation is not None and r.violation.depth == len(r.violation.steps) - 1  # as the fixture reads it


#: The contract-parity mutants and the invariant that restates the rule each one breaks.
_RULE_MUTANTS = {
    "is_error_beats_stop_reason": "stop_reason_wins",  # rule 4
    "held_failure_beats_stop_reason": "stop_reason_wins",  # rule 4
    "loss_after_error_result_swallowed": "runtime_loss_never_swallowed",  # rule 6
    "held_failure_beats_loss": "runtime_loss_never_swallowed",  # rule 6
    "cancelled_turn_failure_published": "cancelled_turn_makes_no_record",  # rule 7
}


def test_each_contract_rule_mutant_is_caught_by_the_rules_own_invariant(mutants: Any) -> None:
    by_name = {r.name: r for r in mutants.results}
    assert {name: by_name[name].caught_by for name in _RULE_MUTANTS} == _RULE_MUTANTS
    for name in _RULE_MUTANTS:
        v = by_name[name].violation
        assert v is not None and v.depth <= 3, (name, v)


def test_the_first_violation_is_the_shortest(mutants: Any) -> None:
    # BFS: no shorter path exists; a counterexample is as short as the bug allows.
    tomb = next(r for r in mutants.results if r.name == "tombstone_on_recovery")
    assert tomb.violation is not None and tomb.violation.depth <= 3


#: Issue 49.3: a failure whose message an answer replaced, then the turn's successful result.
_REPLACED = ["prompt", "server_error", "replacing_answer", "result_success"]


@pytest.mark.parametrize("root", ["capable/new", "legacy/new"])
def test_a_replaced_failure_mutant_is_also_caught_by_its_own_invariant(root: str) -> None:
    # The explorer reports session_flow_is_the_truth first (the turn stays failing); the rule's own
    # invariant catches the same bug one step later, at the result the kept failure settles.
    (invariant,) = [i for i in INVARIANTS if i.name == "replaced_failure_is_superseded"]
    assert run_path(root, _REPLACED).steps[-1].sent and all(
        invariant.check(s) is None for s in run_path(root, _REPLACED).steps
    )
    with applied(next(m for m in MUTANTS if m.name == "replaced_failure_still_settles")):
        replay = run_path(root, _REPLACED)
    assert invariant.check(replay.steps[-1]) is not None


# ---------------------------------------------------------------------------- the machinery


def _paths() -> Iterator[tuple[str, list[str]]]:
    yield "capable/new", [*_REPLACED, "prompt", "usage_limit_error", "replacing_answer", "usage_limit_error",
                          "result_error"]
    yield "legacy/new", _REPLACED
    yield "capable/new", ["prompt", "api_retry", "api_retry (first send fails)", "api_retry", "usage_limit_error",
                          "result_error", "query_error", "runtime_replaced", "late_event", "prompt",
                          "model_fallback", "real_answer", "model_fallback", "result_success"]
    yield "capable/load-latest-limit-active", ["prompt", "api_retry", "real_answer", "auth_error",
                                               "worker_shutdown_eof", "auth_ok", "runtime_replaced", "late_event"]
    yield "legacy/new", ["prompt", "auth_error", "result_error", "query_error", "runtime_replaced", "prompt",
                         "cancel"]
    yield "capable/new", ["permission_asked_outside_turn", "prompt", "api_retry", "permission_asked",
                          "permission_answered", "real_answer", "permission_asked", "query_error",
                          "permission_answered_late", "runtime_replaced", "prompt", "permission_asked", "cancel",
                          "permission_asked_outside_turn", "permission_answered_late"]


@pytest.mark.parametrize(("root", "steps"), list(_paths()))
def test_explored_paths_mean_what_lifecycle_trace_does(root: str, steps: list[str]) -> None:
    replay = run_path(root, steps)
    out: list[str] = []
    run_trace(replay.lines, out.append, lambda msg: None)
    lines = [json.loads(x) for x in "".join(out).splitlines()]
    assert lines[:-1] == replay.delivered
    trailer = lines[-1]["sessions"]["s1"]
    assert [a["id"] for a in trailer] == [a.id for a in replay.world.active]
    assert all(i.check(s) is None for s in replay.steps for i in INVARIANTS)


def test_a_clone_is_independent_of_its_original() -> None:
    replay = run_path("capable/new", ["prompt", "api_retry", "auth_error", "result_error", "prompt", "api_retry"])
    world = replay.world
    before = (check.ledger_fingerprint(world.ledger), [(r.id, r.revision) for r in world.client.records])
    for action in ACTIONS:
        if action.enabled(world, Bounds()):
            run_step(world, action)
            run_step(world, action, fail_first=True)
    after = (check.ledger_fingerprint(world.ledger), [(r.id, r.revision) for r in world.client.records])
    assert after == before


def test_roots_are_checked_like_any_step() -> None:
    for root in check.ROOTS:
        step = make_root(root)
        assert step.error is None
        assert all(i.check(step) is None for i in INVARIANTS), root.name


# ---------------------------------------------------------------------------- the command


def test_cli_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli_main(["--json", "--turns", "1", "--incidents", "1", "--no-failed-sends"])
    data = json.loads(capsys.readouterr().out)
    assert data["complete"] and data["states"] > 0 and data["violations"] == []
    assert code == (0 if data["ok"] else 1)
    assert "second_turn" in data["unreached"] and code == 1  # one turn cannot reach a second one


def test_cli_mutants(mutants_report: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    # The whole self-test is the shared run of the command itself (`--mutants --json`) ...
    assert mutants_report["ok"] and mutants_report["mutants"] == mutants_report["caught"] == len(MUTANTS)
    assert [r["name"] for r in mutants_report["results"]] == [m.name for m in MUTANTS]
    # ... and its text form is the same report: the command's output for its first two mutants.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(check_cli, "run_mutants", lambda bounds: run_mutants(bounds, MUTANTS[:2]))
        assert cli_main(["--mutants"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("workshop check --mutants: 2/2 seeded bugs caught in ")
    assert out.rstrip().endswith("OK") and f"caught {MUTANTS[1].name} " in out


def test_cli_reports_a_violation_with_a_trace(capsys: pytest.CaptureFixture[str]) -> None:
    legacy = next(m for m in MUTANTS if m.name == "legacy_gets_meta")
    with applied(legacy):
        code = cli_main(["--turns", "1", "--incidents", "1", "--no-failed-sends"])
    out = capsys.readouterr().out
    assert code == 1 and "VIOLATED legacy_unchanged" in out and "as `lifecycle trace` input:" in out
    trace = [line.strip() for line in out.splitlines() if line.startswith("    {")]
    assert json.loads(trace[0])["event"] == "initialize"


def test_explorer_stops_beyond_max_states() -> None:
    result = Explorer(Bounds(), max_states=50).run()
    assert not result.complete and not result.ok


# ---------------------------------------------------------------------------- core bugs the explorer found


def test_core_bug_a_refused_prompt_leaves_the_ledger_unchanged() -> None:
    """Regression: found by ``workshop check`` (``refusals_change_nothing``), fixed in the core.

    ``SessionLedger.feed`` reset ``_expect_result_error`` before the handler refused a prompt
    that reused a turn id ("The ledger is unchanged" was false). That timing guess is gone (the
    SDK's own ``ResultError`` becomes the ``Result`` it repeats at the Claude edge, which no
    running turn takes); the refusal must still change nothing, and a real runtime loss after the
    error result is a connection failure with ``new_session`` (contract rule 6). Trace:
    initialize, session, prompt t1, an error result, prompt t1 again (refused), query_error.
    """
    replay = run_path("capable/new", ["prompt", "result_error"])
    world = replay.world
    refused = run_step(world, check.ACTIONS_BY_NAME["prompt_reusing_turn_id"])
    assert refused.refused is not None  # the prompt is refused, as documented
    assert check.ledger_fingerprint(refused.after.ledger) == check.ledger_fingerprint(world.ledger)
    after = run_step(refused.after, check.ACTIONS_BY_NAME["query_error"])
    active = {a.id: a for a in after.after.active}
    assert list(active) == ["t1:error", "s1:e1:1"]
    loss = next(rec for _, ok, rec in after.records() if ok)
    assert (loss.id, loss.category.value, [a.value for a in loss.actions]) == ("s1:e1:1", "connection", ["new_session"])
    assert active["s1:e1:1"].recovery.value == "runtime_replaced"


# ---------------------------------------------------------------------------- the contract-parity rules


def _settled(replay: check.PathReplay) -> list[tuple[str, Any]]:
    return [(m["result"]["stopReason"], m["result"].get("_meta")) for m in replay.delivered if "result" in m]


@pytest.mark.parametrize("root", ["capable/new", "legacy/new"])
def test_rule_4_a_stop_reason_wins_over_is_error_and_over_claudes_failure(root: str) -> None:
    for before, stop in ((["prompt"], "max_tokens"), (["prompt", "rate_limit_error"], "refusal")):
        replay = run_path(root, [*before, f"result_{stop}"])
        assert _settled(replay) == [(stop, None)], (root, before)
        assert replay.world.active == () and not any("error" in m for m in replay.delivered)


def test_rule_6_a_runtime_loss_is_a_connection_failure_whatever_came_before() -> None:
    paths = (
        ["prompt", "result_error", "query_error"],  # right after an error result
        ["prompt", "result_error", "worker_shutdown_eof"],
        ["prompt", "usage_limit_error", "query_error"],  # between Claude's failure and its result
        ["prompt", "cancel", "worker_shutdown_eof"],  # a cancelled turn still draining
    )
    for steps in paths:
        replay = run_path("capable/new", steps)
        loss = [a for a in replay.world.active if a.recovery.value == "runtime_replaced"]
        assert len(loss) == 1 and loss[0].category.value == "connection", steps
        record = replay.world.client.records[-1]
        assert record.id == loss[0].id and [a.value for a in record.actions] == ["new_session"], steps
        replaced = run_path("capable/new", [*steps, "runtime_replaced"])
        assert loss[0].id not in {a.id for a in replaced.world.active}, steps


def test_rule_7_a_cancelled_turn_makes_no_record() -> None:
    replay = run_path("capable/new", ["prompt", "cancel", "cancelled_turn_failure", "result_error", "prompt"])
    assert _settled(replay) == [("cancelled", None)]
    assert replay.world.client.records == [] and replay.world.active == ()
    assert replay.world.flow == replay.world.ledger.flow == "running"


def test_issue_21_rule_6_a_stream_without_a_result_answers_a_legacy_client_end_turn() -> None:
    replay = run_path("legacy/new", ["prompt", "real_answer", "query_end"])
    assert _settled(replay) == [("end_turn", None)]
    assert not any("error" in m for m in replay.delivered)
    replay = run_path("capable/new", ["prompt", "real_answer", "query_end"])
    ((stop, meta),) = _settled(replay)
    record = meta["jetbrains"]["air"]["sessionFailure"]
    assert (stop, record["id"], record["title"]) == (
        "end_turn",
        "t1:error",
        "Claude Code ended the turn without a result. Try again.",
    )


@pytest.mark.parametrize("root", ["capable/new", "legacy/new"])
def test_issue_21_rule_8_a_cancelled_turn_shows_nothing_after_cancelled(root: str) -> None:
    replay = run_path(root, ["prompt", "cancel", "cancelled_turn_failure", "real_answer", "result_error"])
    assert _settled(replay) == [("cancelled", None)]
    assert [m for m in replay.delivered if "params" in m] == []  # no text, no record
    assert replay.world.ledger.flow == "idle"


# ---------------------------------------------------------------------------- permission questions

#: The permission-question mutants and the invariant that restates the rule each one breaks.
_QUESTION_MUTANTS = {
    "questions_outlive_their_turn": "question_open_only_while_its_turn_runs",
    "refused_question_published": "permission_events_publish_nothing",
}


def test_each_question_mutant_is_caught_by_the_rules_own_invariant(mutants: Any) -> None:
    by_name = {r.name: r for r in mutants.results}
    assert {name: by_name[name].caught_by for name in _QUESTION_MUTANTS} == _QUESTION_MUTANTS


def test_a_question_open_at_cancel_is_withdrawn_and_its_late_answer_not_honoured() -> None:
    replay = run_path("capable/new", ["prompt", "permission_asked", "cancel", "permission_answered_late", "prompt"])
    assert _settled(replay) == [("cancelled", None)]
    assert replay.world.client.records == [] and replay.world.active == ()
    assert not any(replay.world.ledger.question_open(q) for q in ("toolu-t1", "toolu-t2"))
    assert all(i.check(s) is None for s in replay.steps for i in INVARIANTS)


def test_an_answer_honoured_after_its_turn_is_caught_by_its_own_invariant() -> None:
    """``answer_after_its_turn_not_honoured`` is not vacuous: with the questions outliving their
    turn, the late answer finds its question open."""
    late = next(i for i in INVARIANTS if i.name == "answer_after_its_turn_not_honoured")
    outlive = next(m for m in MUTANTS if m.name == "questions_outlive_their_turn")
    with applied(outlive):
        replay = run_path("capable/new", ["prompt", "permission_asked", "cancel", "permission_answered_late"])
        message = late.check(replay.steps[-1])
    assert message is not None and "toolu-t1 was still open" in message
