"""The stateful test is not vacuous: every seeded mutant of ``workshop check --mutants`` is caught
by ``tests/test_stateful.py``'s ``AdapterSession`` state machine, and the set it catches is
asserted exactly (README: "Stateful tests").

Whether a mutant is caught does not depend on how many examples a search runs: each mutant has
its own program of the machine in :data:`CATCHING` (the rules in order, with their arguments),
found by hypothesis with the mutant applied and shrunk, then written out. :func:`run_program`
runs one as hypothesis runs a program (the ``@initialize`` rule first, each rule only where its
precondition holds, every invariant whose precondition holds after each step, ``teardown`` at the
end). Each program must fail with its mutant applied (:func:`workshop.mutants.applied`,
undone afterwards whatever happens) and pass on the real code, so what catches the mutant is the
machine's rules and invariants, not the program. The random search of the real code is
tests/test_stateful.py's (run once per suite, not a second time here). Each run gets a
fresh ``MachineAnswers`` made with the mutant applied (as an agent shares one across its
sessions), so the machine classes are asked as they are now.

Only a failed assertion counts as caught: an invariant, a rule's own check, or the harness's
"the incident machine refused an event" (``AdapterSession.feed``). Any other exception (a
``KeyError`` in the harness, a precondition that does not hold, a hypothesis health check) fails
the test as a broken harness.

To write a program for a new mutant: run the machine with the mutant applied under hypothesis's
shrink phase (``run_state_machine_as_test(AdapterSession, settings=settings(BOUNDED,
phases=[Phase.generate, Phase.shrink]))``); the exception's notes print the shrunk program
("state.rule(...)" lines; leave out the invariant calls).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException
from stateful_session import SECRETS, AdapterSession

from lifecycle.answers import MachineAnswers
from workshop.mutants import MUTANTS, Mutant, applied

ROOT = Path(__file__).resolve().parent.parent

#: The settings a program runs under (explicit examples only), and a random search's bound when
#: one is run by hand to find a new mutant's program (the module docstring): derandomised, no
#: shrinking, the same examples on every run.
BOUNDED = settings(
    max_examples=1600,
    stateful_step_count=40,
    derandomize=True,
    database=None,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    print_blob=False,
)

#: Every seeded mutant, and whether the stateful test catches it (measured, then written out).
#: A mutant the stateful test does not catch would be listed here with ``False`` and a comment
#: saying why; today there is none.
EXPECTED_CAUGHT: dict[str, bool] = {
    "recovery_on_wrong_event": True,  # an_incident_leaves_the_active_set_only_through_its_own_policy
    "revision_not_bumped": True,  # revisions_strictly_increase_per_id
    "tombstone_on_recovery": True,  # historical_incidents_never_come_back_and_recovery_publishes_nothing
    "warning_settles_prompt": True,  # a_warning_never_settles_a_prompt
    "legacy_gets_meta": True,  # a_legacy_client_gets_the_legacy_outcome
    "id_reused": True,  # the machine refuses to fail an already failed incident (TransitionNotAllowed)
    "state_advanced_on_failed_send": True,  # the_adapters_belief_is_what_the_client_received
    "quota_guard_wrong": True,  # the guard refuses the quota's own recovery (TransitionNotAllowed)
    "synthetic_answer_recovers": True,  # an_incident_leaves_the_active_set_only_through_its_own_policy
    "stale_runtime_accepted": True,  # a_late_event_arrives_from_a_replaced_runtime asserts the refusal
    "terminal_failure_on_session_update": True,  # a_turn_terminal_failure_rides_the_prompt_response
    "replay_ignores_later_answer": True,  # the_client_loads_a_history_with_usage_limits
    "notice_cleared_by_success": True,  # an_incident_leaves_the_active_set_only_through_its_own_policy
    "client_applies_stale_revision": True,  # the_same_or_a_lower_revision_changes_nothing
    "titles_not_redacted": True,  # no_title_or_details_carries_an_injected_secret
    "cancel_answers_end_turn": True,  # the_client_cancels asserts stopReason cancelled
    "late_result_settles_again": True,  # feed: "answered twice"
    "warning_recommends_retry": True,  # a_warning_has_no_actions
    # contract parity rules 4, 6, 7
    "is_error_beats_stop_reason": True,  # the_turn_errs_but_its_stop_reason_wins
    "held_failure_beats_stop_reason": True,  # the_turn_succeeds(max_tokens/refusal) settles without a failure
    "loss_after_error_result_swallowed": True,  # _a_loss_is_a_connection_failure
    "held_failure_beats_loss": True,  # _a_loss_is_a_connection_failure
    "cancelled_turn_failure_published": True,  # claude_reports_a_failure while draining: no record
    # contract parity rule 3
    "notice_reused_whatever_its_text": True,  # claude_falls_back_to_another_model: an id keeps its text
    "newer_notice_retires_older": True,  # an_incident_leaves_the_active_set_only_through_its_own_policy
    # issue 21 rules 1, 2, 3, 7
    "max_tokens_beats_limit": True,  # the_turn_hits_a_configured_limit: limit with new_session, never max_tokens
    "notices_forgotten_past_a_small_bound": True,  # claude_falls_back_to_another_model: every notice kept or counted
    "unreachable_api_is_connection": True,  # the_provider_fails_after_retries_without_a_response: service
    "login_result_is_service": True,  # the_result_asks_for_a_login: access with login (legacy -32000)
    # permission questions
    "questions_outlive_their_turn": True,  # a_question_is_open_only_while_its_turn_runs
    "refused_question_published": True,  # permission_events_publish_nothing_and_change_no_incident
    # issue 32: usage-limit windows
    "window_repeat_published": True,  # claude_code_reports_a_window: an identical repeat publishes nothing
    "past_reset_titled": True,  # a_window_reading_arrives: a reading after its reset publishes nothing
    # issue 31: a subagent's failure
    "subagent_failure_is_the_turns": True,  # a_subagent_reports_a_failure: it changes nothing
    # issue 49.3: a replaced failure
    "replaced_failure_still_settles": True,  # claude_replaces_a_message: the turn no longer holds it
}


#: One program of :class:`AdapterSession`: (rule, its arguments), in order.
Program = tuple[tuple[str, dict[str, Any]], ...]

_FIVE_HOUR_AT_90: dict[str, Any] = {"period": 0, "share": 0.9, "status": "allowed_warning", "window": "five_hour"}

#: mutant -> a program the machine catches it with (hypothesis's shrunk counterexample).
CATCHING: dict[str, Program] = {
    "recovery_on_wrong_event": (
        ("open_session", {"negotiated": True}),
        ("the_worker_shuts_down_then_eof", {}),
        ("auth_status_reports", {"ok": True}),
    ),
    "revision_not_bumped": (
        ("open_session", {"negotiated": True}),
        ("a_prompt_starts", {}),
        ("the_provider_fails_after_retries_without_a_response", {"which": "server_error"}),
    ),
    "tombstone_on_recovery": (
        ("open_session", {"negotiated": True}),
        ("the_query_iterator_throws", {"secret": SECRETS[0]}),
        ("the_runtime_is_replaced", {}),
    ),
    "warning_settles_prompt": (
        ("open_session", {"negotiated": True}),
        ("a_prompt_starts", {}),
        ("claude_reports_a_failure", {"secret": "", "which": "auth"}),
        ("the_provider_fails_after_retries_without_a_response", {"which": "server_error"}),
    ),
    "legacy_gets_meta": (
        ("open_session", {"negotiated": False}),
        ("claude_falls_back_to_another_model", {"model": "Opus 5", "secret": ""}),
    ),
    "id_reused": (
        ("open_session", {"negotiated": True}),
        ("claude_falls_back_to_another_model", {"model": "Opus 5", "secret": ""}),
        ("claude_falls_back_to_another_model", {"model": "Opus 5", "secret": SECRETS[0]}),
    ),
    "state_advanced_on_failed_send": (
        ("open_session", {"negotiated": True}),
        ("the_next_send_fails", {"count": 1}),
        ("the_query_iterator_throws", {"secret": SECRETS[0]}),
    ),
    "quota_guard_wrong": (
        ("open_session", {"negotiated": True}),
        ("the_client_loads_a_history_with_usage_limits", {"limits": 1, "orphan": False, "recovered": True}),
    ),
    "synthetic_answer_recovers": (
        ("open_session", {"negotiated": True}),
        ("the_adapter_hits_an_internal_error", {}),
        ("a_local_command_answers", {}),
    ),
    "stale_runtime_accepted": (
        ("open_session", {"negotiated": False}),
        ("the_runtime_is_replaced", {}),
        ("a_late_event_arrives_from_a_replaced_runtime", {"which": "answer"}),
    ),
    "terminal_failure_on_session_update": (
        ("open_session", {"negotiated": True}),
        ("a_prompt_starts", {}),
        ("the_provider_fails_after_retries_without_a_response", {"which": "server_error"}),
    ),
    "replay_ignores_later_answer": (
        ("open_session", {"negotiated": True}),
        ("the_client_loads_a_history_with_usage_limits", {"limits": 1, "orphan": False, "recovered": True}),
    ),
    "notice_cleared_by_success": (
        ("open_session", {"negotiated": True}),
        ("claude_falls_back_to_another_model", {"model": "Opus 5", "secret": ""}),
        ("the_turn_succeeds", {"stop": "end_turn"}),
    ),
    "client_applies_stale_revision": (
        ("open_session", {"negotiated": True}),
        ("the_client_loads_a_history_with_usage_limits", {"limits": 1, "orphan": False, "recovered": False}),
    ),
    "titles_not_redacted": (
        ("open_session", {"negotiated": True}),
        ("claude_falls_back_to_another_model", {"model": "Opus 5", "secret": SECRETS[0]}),
    ),
    "cancel_answers_end_turn": (
        ("open_session", {"negotiated": False}),
        ("a_prompt_starts", {}),
        ("the_client_cancels_then_the_turns_late_frames_arrive", {"result": False, "which": "auth"}),
    ),
    "late_result_settles_again": (
        ("open_session", {"negotiated": True}),
        ("claude_falls_back_to_another_model", {"model": "Opus 5", "secret": ""}),
        ("claude_asks_permission", {}),
        ("the_runtime_dies_right_after_a_failed_turn", {}),
        ("a_prompt_starts", {}),
        ("the_adapter_hits_an_internal_error", {}),
        ("the_result_is_an_error", {"secret": ""}),
    ),
    "warning_recommends_retry": (
        ("open_session", {"negotiated": True}),
        ("a_prompt_starts", {}),
        ("the_provider_fails_after_retries_without_a_response", {"which": "server_error"}),
    ),
    "is_error_beats_stop_reason": (
        ("open_session", {"negotiated": False}),
        ("a_prompt_starts", {}),
        ("the_turn_hits_a_configured_limit", {"stop": "max_tokens", "subtype": "error_during_execution"}),
    ),
    "held_failure_beats_stop_reason": (
        ("open_session", {"negotiated": False}),
        ("a_prompt_starts", {}),
        ("claude_reports_a_failure", {"secret": "", "which": "auth"}),
        ("the_turn_hits_a_configured_limit", {"stop": "max_tokens", "subtype": "error_during_execution"}),
    ),
    "loss_after_error_result_swallowed": (
        ("open_session", {"negotiated": True}),
        ("a_prompt_starts", {}),
        ("the_adapter_hits_an_internal_error", {}),
        ("the_query_iterator_throws", {"secret": SECRETS[0]}),
    ),
    "held_failure_beats_loss": (
        ("open_session", {"negotiated": True}),
        ("a_prompt_starts", {}),
        ("claude_reports_a_failure", {"secret": "", "which": "auth"}),
        ("the_worker_shuts_down_then_eof", {}),
    ),
    "cancelled_turn_failure_published": (
        ("open_session", {"negotiated": True}),
        ("a_prompt_starts", {}),
        ("the_client_cancels", {}),
        ("claude_reports_a_failure", {"secret": "", "which": "auth"}),
    ),
    "notice_reused_whatever_its_text": (
        ("open_session", {"negotiated": True}),
        ("claude_falls_back_to_another_model", {"model": "Opus 5", "secret": ""}),
        ("claude_falls_back_to_another_model", {"model": "Opus 5", "secret": SECRETS[0]}),
    ),
    "newer_notice_retires_older": (
        ("open_session", {"negotiated": True}),
        ("claude_falls_back_to_another_model", {"model": "Opus 5", "secret": ""}),
        ("a_local_command_answers", {}),
        ("claude_falls_back_to_another_model", {"model": "Opus 5", "secret": ""}),
    ),
    "max_tokens_beats_limit": (
        ("open_session", {"negotiated": True}),
        ("a_prompt_starts", {}),
        ("the_turn_hits_a_configured_limit", {"stop": "max_tokens", "subtype": "error_max_turns"}),
    ),
    "notices_forgotten_past_a_small_bound": (
        ("open_session", {"negotiated": True}),
        ("claude_falls_back_to_another_model", {"model": "Opus 5", "secret": ""}),
        ("a_local_command_answers", {}),
        ("claude_falls_back_to_another_model", {"model": "Opus 5", "secret": ""}),
    ),
    "unreachable_api_is_connection": (
        ("open_session", {"negotiated": True}),
        ("a_prompt_starts", {}),
        ("the_provider_fails_after_retries_without_a_response", {"which": "server_error"}),
    ),
    "login_result_is_service": (
        ("open_session", {"negotiated": True}),
        ("a_prompt_starts", {}),
        ("the_result_asks_for_a_login", {}),
    ),
    "questions_outlive_their_turn": (
        ("open_session", {"negotiated": False}),
        ("a_prompt_starts", {}),
        ("claude_asks_permission", {}),
        ("the_client_cancels_then_the_turns_late_frames_arrive", {"result": False, "which": "auth"}),
    ),
    "refused_question_published": (
        ("open_session", {"negotiated": True}),
        ("claude_asks_permission", {}),
    ),
    "window_repeat_published": (
        ("open_session", {"negotiated": True}),
        ("claude_code_reports_a_window", _FIVE_HOUR_AT_90),
        ("claude_code_reports_a_window", _FIVE_HOUR_AT_90),
    ),
    "past_reset_titled": (
        ("open_session", {"negotiated": True}),
        ("a_window_reading_arrives", {**_FIVE_HOUR_AT_90, "read": "after_reset"}),
    ),
    "subagent_failure_is_the_turns": (
        ("open_session", {"negotiated": True}),
        ("a_prompt_starts", {}),
        ("a_subagent_reports_a_failure", {"which": "usage_limit"}),
    ),
    "replaced_failure_still_settles": (
        ("open_session", {"negotiated": True}),
        ("a_prompt_starts", {}),
        ("claude_reports_a_failure", {"which": "usage_limit", "secret": ""}),
        ("claude_replaces_a_message", {"held": True}),
    ),
}


class BrokenProgram(Exception):
    """A program that cannot run as written: an unknown rule, or a precondition that does not hold."""


def _caught(run: Any) -> BaseException | None:
    """Run ``run()`` with one fresh ``MachineAnswers`` for its ledgers: the failed assertion(s), or None."""
    # Made here, it asks the machine classes as they are now (a mutant's patched one included).
    shared, AdapterSession.answers = AdapterSession.answers, MachineAnswers()
    try:
        run()
    except HypothesisException:
        raise  # Flaky, Unsatisfiable, a health check: the harness is broken, not "caught"
    except AssertionError as exc:  # an invariant or a rule's check failed: caught
        return exc
    except BaseExceptionGroup as group:  # several distinct failures: caught only if all are assertions
        if group.subgroup(lambda e: not isinstance(e, (AssertionError, BaseExceptionGroup))) is not None:
            raise
        return group
    finally:
        AdapterSession.answers = shared
    return None


def _run_steps(program: Program) -> None:
    setup = AdapterSession.setup_state()
    rules = {r.function.__name__: r for r in (*setup.initializers, *setup.rules)}
    machine = AdapterSession()
    initializing = bool(setup.initializers)

    def check_invariants() -> None:
        for inv in setup.invariants:
            if (inv.check_during_init or not initializing) and all(p(machine) for p in inv.preconditions):
                inv.function(machine)

    try:
        check_invariants()
        for name, arguments in program:
            rule = rules.get(name)
            if rule is None or not all(p(machine) for p in rule.preconditions):
                raise BrokenProgram(f"{name}: no such rule, or its precondition does not hold")
            rule.function(machine, **arguments)
            initializing = initializing and rule not in setup.initializers
            check_invariants()
    finally:
        machine.teardown()


def run_program(program: Program) -> BaseException | None:
    """Run ``program`` as hypothesis runs one; the failed assertion it ends with, or None. It runs
    as a hypothesis test's one explicit ``@example`` (the rules' ``note()`` needs a test)."""

    @settings(BOUNDED, phases=[Phase.explicit])
    @example(program)
    @given(st.just(program))
    def explicit(steps: Program) -> None:
        _run_steps(steps)

    return _caught(explicit)


def test_every_seeded_mutant_is_listed() -> None:
    assert [m.name for m in MUTANTS] == list(EXPECTED_CAUGHT)


def test_every_mutant_has_a_program() -> None:
    assert list(CATCHING) == list(EXPECTED_CAUGHT)


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_the_unmutated_code_passes_each_program(mutant: Mutant) -> None:
    """Otherwise "caught" would mean nothing: the program alone fails nothing."""
    failure = run_program(CATCHING[mutant.name])
    assert failure is None, (mutant.name, repr(failure)[:300])


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_the_stateful_test_catches_exactly_the_expected_mutants(mutant: Mutant) -> None:
    with applied(mutant):
        failure = run_program(CATCHING[mutant.name])
    caught = failure is not None
    assert caught == EXPECTED_CAUGHT[mutant.name], (mutant.name, mutant.bug, repr(failure)[:300])


def test_a_broken_program_is_not_a_catch() -> None:
    """A rule whose precondition does not hold (no prompt runs, so no turn can be cancelled) is
    the harness's error, never "caught"."""
    with pytest.raises(BrokenProgram):
        run_program((("open_session", {"negotiated": True}), ("the_client_cancels", {})))


def test_the_documented_figure() -> None:
    """docs/checking.md says how many of the seeded mutants the stateful test catches ("all N" or
    "K of N"): the figure of :data:`EXPECTED_CAUGHT` and the mutants table, read from the page."""
    page = " ".join((ROOT / "docs" / "checking.md").read_text().split())
    found = re.findall(r"\(`EXPECTED_CAUGHT`\): (?:all (\d+)\b|(\d+) of (\d+)\b)", page)
    assert len(found) == 1, found
    all_n, k, n = found[0]
    documented = (int(all_n), int(all_n)) if all_n else (int(k), int(n))
    assert documented == (sum(EXPECTED_CAUGHT.values()), len(MUTANTS))
