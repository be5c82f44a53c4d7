"""A turn's answers and results: a real model answer, a local command's ``<synthetic>`` answer, and
the results (success, error, a stop reason that wins over ``is_error``, a budget limit, a login
request only in the result's text, a Claude Code that could not start for a sign-in reason), and
an answer that replaces earlier messages (issue 49.3).

Rules: ``recovers`` is the spec's table of what each may end ("Internal recovery"); a result
arrives from a live runtime whose turn is not waiting for a permission answer.
"""

from __future__ import annotations

from lifecycle.conditions import Recovery

from ..alphabet import Action, alive, assistant_line, result_line, unless_waiting, while_running
from ..registry import REGISTRY
from ..world import (
    ANSWER_TEXT,
    LIMIT_RESULT_TEXT,
    LOCAL_COMMAND_TEXT,
    LOGIN_RESULT_TEXT,
    MAX_TOKENS_TEXT,
    REFUSAL_TEXT,
    RESULT_ERROR_TEXT,
    STARTUP_SIGNIN_REASON,
    STARTUP_SIGNIN_TEXT,
)

__all__: list[str] = []

FAMILY = "results"

_ANSWER_RECOVERS = frozenset({Recovery.REAL_MODEL_ANSWER, Recovery.CONFIRMED_ATTEMPT})
_ATTEMPT_RECOVERS = frozenset({Recovery.CONFIRMED_ATTEMPT})


REGISTRY.add_actions(
    FAMILY,
    Action(
        "real_answer",
        lambda w: (assistant_line(ANSWER_TEXT, "claude-opus-4-5"),),
        unless_waiting(alive),  # also a cancelled turn's late answer, and one outside a prompt
        "real_answer",
        recovers=_ANSWER_RECOVERS,
        turn_frame=True,
    ),
    # Issue 49.3: an answer that replaces the message ``a1`` (CLI 2.1.337's ``supersedes``, after a
    # refusal fallback or a tool call it could not parse). Every failure letter's message is
    # ``a1``: a held failure is superseded (``failure_replaced``), then the answer is the turn's.
    Action(
        "replacing_answer",
        lambda w: (assistant_line(ANSWER_TEXT, "claude-opus-4-5", uuid="a2", supersedes=("a1",)),),
        unless_waiting(alive),
        "failure_replaced",
        flow_then="real_answer",
        recovers=_ANSWER_RECOVERS,
        turn_frame=True,
    ),
    # A ``<synthetic>`` local-command answer proves nothing: no turn event at all.
    Action(
        "local_command",
        lambda w: (assistant_line(LOCAL_COMMAND_TEXT, "<synthetic>"),),
        unless_waiting(while_running),
        turn_frame=True,
    ),
    Action(
        "result_success",
        lambda w: (result_line(ANSWER_TEXT, is_error=False, stop_reason="end_turn"),),
        unless_waiting(alive),
        "result_success",
        recovers=_ATTEMPT_RECOVERS,
        turn_frame=True,
    ),
    Action(
        "result_error",
        lambda w: (result_line(RESULT_ERROR_TEXT, is_error=True, api_error_status=529, terminal_reason="api_error"),),
        unless_waiting(alive),
        "result_error",
        settles_with_failure=True,
        turn_frame=True,
    ),
    # Rule 4: the stop reason wins over ``is_error`` (both as the CLI sends them: is_error true).
    Action(
        "result_max_tokens",
        lambda w: (result_line(MAX_TOKENS_TEXT, is_error=True, stop_reason="max_tokens"),),
        unless_waiting(alive),
        "result_stop",
        recovers=_ATTEMPT_RECOVERS,
        stop_reason="max_tokens",
        turn_frame=True,
    ),
    Action(
        "result_refusal",
        lambda w: (result_line(REFUSAL_TEXT, is_error=True, stop_reason="refusal", terminal_reason="api_error"),),
        unless_waiting(alive),
        "result_stop",
        recovers=_ATTEMPT_RECOVERS,
        stop_reason="refusal",
        turn_frame=True,
    ),
    # Issue 21 rule 1: a budget limit is a limit failure even with stop_reason max_tokens.
    Action(
        "result_limit_max_tokens",
        lambda w: (
            {
                "type": "result",
                "subtype": "error_max_budget_usd",
                "is_error": True,
                "stop_reason": "max_tokens",
                "errors": [LIMIT_RESULT_TEXT],
            },
        ),
        unless_waiting(alive),
        "result_error",
        settles_with_failure=True,
        turn_frame=True,
    ),
    # Issue 49 point 2: Claude Code could not start (its result, with CLAUDE_CODE_STARTUP_FAILURE_RESULTS=1).
    Action(
        "startup_failure",
        lambda w: (
            {
                "type": "result",
                "subtype": "error_during_execution",
                "is_error": True,
                "errors": [STARTUP_SIGNIN_TEXT],
                "startup_failure_reason": STARTUP_SIGNIN_REASON,
            },
        ),
        unless_waiting(alive),
        "result_error",
        settles_with_failure=True,
        turn_frame=True,
    ),
    # Issue 21 rule 7: a login request only in the error result's text (no assistant frame).
    Action(
        "login_result",
        lambda w: (result_line(LOGIN_RESULT_TEXT, is_error=True, terminal_reason="api_error"),),
        unless_waiting(alive),
        "result_error",
        settles_with_failure=True,
        turn_frame=True,
    ),
)
