"""Expectations that two test files read: written out by hand, never computed from the code under test.

* :data:`EXPECTED`, :data:`RETRY_CATEGORY`, :func:`_title_ok`: the final record (category, actions,
  title) of each recorded failing turn of ``fixtures/claude-cli-2.1.337`` and the category of its
  retry warnings, each value with its basis (a verbatim spec quote or "project decision: ...").
  ``test_claude.py`` checks the recordings and the quotes against them; ``e2e/test_cli_lifecycle.py``
  checks the live CLI runs against the same table (imported, not copied).
* :data:`TURN_TABLE`: every point of the prompt turn's machine, (state, event) -> (target, effects)
  or None; ``test_session_flow.py`` checks the machine against it, ``test_workshop_diagrams.py`` the diagram.

Rules: nothing here imports ``lifecycle``; a row names its basis; changing a row changes what the
suite expects, so it follows the spec or a documented decision, never the code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# ------------------------------------------------------------------ the recorded failing turns

# The spec (docs/spec/session-failure.md, vendored) is quoted below, each quote verbatim from the
# section it names (``test_every_spec_quote_is_verbatim_in_its_section`` checks them: table rows
# with their cell padding collapsed, list items one by one); where it says nothing about a case,
# the row names it a project decision (the README's conditions table is where the project
# documents those).
SPEC_CATEGORY_ACCESS = (
    'spec, Categories: "`authentication_failed`, `oauth_org_not_allowed`, synthetic login message | `access`"'
)
SPEC_CATEGORY_LIMIT = (
    'spec, Categories: "`billing_error`, `rate_limit`, `max_output_tokens`, usage/spend limit, '
    'budget/turn limit | `limit`"'
)
SPEC_CATEGORY_REQUEST = 'spec, Categories: "`invalid_request`, `model_not_found` | `request`"'
SPEC_CATEGORY_SERVICE = (
    'spec, Categories: "`overloaded`, `server_error`, unknown provider error, adapter internal error | `service`"'
)
SPEC_CATEGORY_CONNECTION = (
    'spec, Categories: "API retry without an HTTP response, query transport loss, worker shutdown | `connection`"'
)
SPEC_LIMIT_WORDS = 'spec, Categories: "`limit` | Rate, quota, token, context, turn, or configured budget limit."'
SPEC_ACTION_LOGIN = 'spec, Actions: "authentication: `login`"'
SPEC_ACTION_RETRY = 'spec, Actions: "provider overload/error and recoverable internal error: `retry`"'
SPEC_ACTION_NEW_SESSION = 'spec, Actions: "context or configured session-budget exhaustion: `new_session`"'
SPEC_ACTION_NONE = 'spec, Actions: "account quota and invalid request: no action"'
SPEC_TITLE = (
    'spec, Title and details: "For Claude SDK failures the title is copied from the user-facing text Claude '
    'already emitted:" "top-level assistant error text, including synthetic usage-limit and login messages;" '
    '"otherwise the terminal SDK result or error text;"'
)


@dataclass(frozen=True)
class Expect:
    """The final record of a recorded failing turn, and where each expected value comes from."""

    category: str
    actions: list[str]
    title: str  # literal, or "re:<full-match regex>" where the CLI put a port or a count in it
    basis: tuple[str, ...]  # a spec sentence, or "project decision: ..." for each value


# scenario -> the final record, or None when the turn succeeds. Titles are what the CLI said
# (tests/fixtures/claude-cli-2.1.337, section A of claude-cli-2.1.332/README.md).
EXPECTED: dict[str, Expect | None] = {
    "success": None,
    "max_tokens_once": None,
    "retry_then_success": None,
    "http429": Expect(
        "limit",
        ["retry"],
        "API Error: Request rejected (429) · Number of requests has exceeded your rate limit",
        (
            SPEC_CATEGORY_LIMIT,
            "project decision: `rate_limit` is retryable (the spec's action list names no policy for a "
            "rate limit that is not an account quota); README, conditions table row `rate_limit`",
            SPEC_TITLE,
        ),
    ),
    "usage_limit_apikey": Expect(
        "limit",
        ["retry"],
        "re:API Error: Request rejected \\(429\\) · This request would .*",
        (
            SPEC_CATEGORY_LIMIT,
            "project decision: the CLI reports `rate_limit` and no usage-limit text here, so the "
            "`rate_limit` row applies (retry), as for http429",
            SPEC_TITLE,
        ),
    ),
    "usage_limit_gateway": Expect(
        "limit",
        [],
        "You've hit your 5-hour limit · resets 5pm (UTC)",
        (SPEC_CATEGORY_LIMIT, SPEC_ACTION_NONE, SPEC_TITLE),
    ),
    "http529": Expect(
        "service",
        ["retry"],
        "re:API Error: 529 Overloaded\\. .*",
        (SPEC_CATEGORY_SERVICE, SPEC_ACTION_RETRY, SPEC_TITLE),
    ),
    "http500": Expect(
        "service",
        ["retry"],
        "re:API Error: 500 Internal server error\\. .*",
        (SPEC_CATEGORY_SERVICE, SPEC_ACTION_RETRY, SPEC_TITLE),
    ),
    "sse_midstream_overloaded": Expect(
        "service",
        ["retry"],
        "re:API Error: 529 Overloaded\\. .*",
        (SPEC_CATEGORY_SERVICE, SPEC_ACTION_RETRY, SPEC_TITLE),
    ),
    "http401": Expect(
        "access",
        ["login"],
        "Invalid API key · Fix external API key",
        (SPEC_CATEGORY_ACCESS, SPEC_ACTION_LOGIN, SPEC_TITLE),
    ),
    "http403": Expect(
        "access",
        ["login"],
        "re:Failed to authenticate\\. API Error: 403 .*",
        (SPEC_CATEGORY_ACCESS, SPEC_ACTION_LOGIN, SPEC_TITLE),
    ),
    # the CLI's kind is `unknown`: an unknown provider error
    "http400": Expect(
        "service",
        ["retry"],
        "API Error: 400 messages: text content blocks must be non-empty",
        (SPEC_CATEGORY_SERVICE, SPEC_ACTION_RETRY, SPEC_TITLE),
    ),
    "http402_billing": Expect(
        "service",
        ["retry"],
        "API Error: 402 Your account has a billing problem.",
        (SPEC_CATEGORY_SERVICE, SPEC_ACTION_RETRY, SPEC_TITLE),
    ),
    "http400_credit": Expect(
        "limit",
        [],
        "Credit balance is too low",
        (
            SPEC_CATEGORY_LIMIT,
            "project decision: `billing_error` is an account quota, so " + SPEC_ACTION_NONE,
            SPEC_TITLE,
        ),
    ),
    "http402_credit": Expect(
        "limit",
        [],
        "Credit balance is too low",
        (
            SPEC_CATEGORY_LIMIT,
            "project decision: `billing_error` is an account quota, so " + SPEC_ACTION_NONE,
            SPEC_TITLE,
        ),
    ),
    "http404_model": Expect(
        "request",
        [],
        "re:There's an issue with the selected model .*",
        (
            SPEC_CATEGORY_REQUEST,
            "project decision: `model_not_found` is a rejected request, so " + SPEC_ACTION_NONE,
            SPEC_TITLE,
        ),
    ),
    # the CLI's kind is `invalid_request` for the next two
    "http400_org_disabled": Expect(
        "request",
        [],
        "re:Your ANTHROPIC_API_KEY belongs to a disabled organization .*",
        (SPEC_CATEGORY_REQUEST, SPEC_ACTION_NONE, SPEC_TITLE),
    ),
    "http413": Expect(
        "request",
        [],
        "re:Request too large \\(max 32MB\\)\\. .*",
        (SPEC_CATEGORY_REQUEST, SPEC_ACTION_NONE, SPEC_TITLE),
    ),
    # kind `invalid_request`, text "Prompt is too long": the context window is exhausted
    "http400_prompt_too_long": Expect(
        "limit",
        ["new_session"],
        "re:Prompt is too long · .*",
        (
            SPEC_LIMIT_WORDS,
            "project decision: the text \"Prompt is too long\" refines `invalid_request` to the context limit",
            SPEC_ACTION_NEW_SESSION,
            SPEC_TITLE,
        ),
    ),
    "max_tokens": Expect(
        "limit",
        ["new_session"],
        "re:API Error: Claude's response exceeded the 128000 output token maximum\\. .*",
        (
            SPEC_CATEGORY_LIMIT,
            "project decision: `max_output_tokens` is context exhaustion, as the reference adapter classifies "
            "it (docs/parity/evidence/controller-probe.txt: max_output_tokens -> context_exhausted), so "
            + SPEC_ACTION_NEW_SESSION,
            SPEC_TITLE,
        ),
    ),
    # server_error with no HTTP status after retries that got no response: the retries are
    # `connection` warnings, the terminal provider error is `service` (issue 21 rule 3)
    "conn_refused": Expect(
        "service",
        ["retry"],
        "re:API Error: Connection refused .*",
        (SPEC_CATEGORY_SERVICE, SPEC_ACTION_RETRY, SPEC_TITLE),
    ),
    "conn_closed": Expect(
        "service",
        ["retry"],
        "re:API Error: Connection dropped \\(ECONNRESET\\)\\. .*",
        (SPEC_CATEGORY_SERVICE, SPEC_ACTION_RETRY, SPEC_TITLE),
    ),
    "sse_truncated": Expect(
        "service",
        ["retry"],
        "re:API Error: Connection dropped \\(ECONNRESET\\)\\. .*",
        (SPEC_CATEGORY_SERVICE, SPEC_ACTION_RETRY, SPEC_TITLE),
    ),
    "max_turns": Expect(
        "limit",
        ["new_session"],
        "Reached maximum number of turns (2)",
        (
            SPEC_CATEGORY_LIMIT,
            "project decision: the turn limit is context exhaustion, as in the reference adapter (README, "
            "conditions table row `error_max_turns`), so " + SPEC_ACTION_NEW_SESSION,
            SPEC_TITLE,
        ),
    ),
    "max_budget": Expect(
        "limit",
        ["new_session"],
        "Reached maximum budget ($0.01)",
        (SPEC_CATEGORY_LIMIT, SPEC_ACTION_NEW_SESSION, SPEC_TITLE),
    ),
}

# api_retry warnings before the terminal state: scenario -> category of the warnings.
# Retries without an HTTP response: SPEC_CATEGORY_CONNECTION. Retries with one: project decision,
# the category of the retry's `error` kind (README, conditions table row `api_retry`).
RETRY_CATEGORY = {
    "http429": "limit",
    "http529": "service",
    "http500": "service",
    "http401": "access",
    "retry_then_success": "service",
    "sse_midstream_overloaded": "service",
    "conn_refused": "connection",
    "conn_closed": "connection",
    "sse_truncated": "connection",
}


def _title_ok(want: str, got: str) -> bool:
    """Whether the title ``got`` is ``want``: a literal, or ``re:<full-match regex>``."""
    return re.fullmatch(want[3:], got, re.S) is not None if want.startswith("re:") else want == got


# ------------------------------------------------------------------ the turn machine

# Every point of the turn machine written out by hand, from session_flow.py's "Rules" (the spec's
# delivery surfaces and severity, and the contract-parity decisions of docs/parity/README.md),
# not read from the class: (leaf state, event) -> (target leaf, effects), or None (refused).
# 5 states x 14 events = 70 points.
S = ("settle_stop",)
TURN_TABLE: dict[tuple[str, str], tuple[str, tuple[str, ...]] | None] = {
    # a prompt opens a turn from idle, or while a cancelled turn drains; one turn at a time
    ("idle", "prompt"): ("running", ("open_turn",)),
    ("running", "prompt"): None,
    ("answered", "prompt"): None,
    ("failing", "prompt"): None,
    ("cancelled", "prompt"): ("running", ("open_turn",)),
    # a real model answer recovers what waits for one; inside a turn it marks the turn answered
    # (a held failure stays held); a cancelled turn's answer still recovers, and shows nothing
    ("idle", "real_answer"): ("idle", ("recover_all",)),
    ("running", "real_answer"): ("answered", ("recover_answered",)),
    ("answered", "real_answer"): ("answered", ("recover_answered",)),
    ("failing", "real_answer"): ("failing", ("recover_answered",)),
    ("cancelled", "real_answer"): ("cancelled", ("recover_all",)),
    # Claude's first failure of a turn is held; a later one adds nothing; a cancelled turn makes
    # no record; outside a turn it is a session-scoped failure
    ("idle", "claude_failure"): ("idle", ("background_failure",)),
    ("running", "claude_failure"): ("failing", ("hold_failure",)),
    ("answered", "claude_failure"): ("failing", ("hold_failure",)),
    ("failing", "claude_failure"): ("failing", ()),
    ("cancelled", "claude_failure"): ("cancelled", ()),
    # a held failure whose message the provider replaced is superseded (issue 49.3): dropped, the
    # turn runs on (an answer that stands marks it answered); anywhere else nothing to drop
    ("idle", "failure_replaced"): ("idle", ()),
    ("running", "failure_replaced"): ("running", ()),
    ("answered", "failure_replaced"): ("answered", ()),
    ("failing", "failure_replaced"): ("running", ("drop_failure",)),
    ("cancelled", "failure_replaced"): ("cancelled", ()),
    # runtime loss is never swallowed: it settles a turn whatever Claude said (rule 6), and
    # outside a turn (or after the cancelled turn was answered) it is a session-scoped failure
    ("idle", "transport_lost"): ("idle", ("background_runtime_loss",)),
    ("running", "transport_lost"): ("idle", ("settle_runtime_loss",)),
    ("answered", "transport_lost"): ("idle", ("settle_runtime_loss",)),
    ("failing", "transport_lost"): ("idle", ("settle_runtime_loss",)),
    ("cancelled", "transport_lost"): ("idle", ("background_runtime_loss",)),
    # the stream ending without a result: a missing result, or the held failure's settlement
    ("idle", "stream_ended"): ("idle", ()),
    ("running", "stream_ended"): ("idle", ("settle_missing_result",)),
    ("answered", "stream_ended"): ("idle", ("settle_missing_result",)),
    ("failing", "stream_ended"): ("idle", ("settle_failure",)),
    ("cancelled", "stream_ended"): ("idle", ()),
    # the adapter's own failure: settles a turn (a held failure wins), else session-scoped
    ("idle", "internal_error"): ("idle", ("background_internal_error",)),
    ("running", "internal_error"): ("idle", ("settle_internal_error",)),
    ("answered", "internal_error"): ("idle", ("settle_internal_error",)),
    ("failing", "internal_error"): ("idle", ("settle_failure",)),
    ("cancelled", "internal_error"): ("cancelled", ("background_internal_error",)),
    # permission questions: opened only in a running turn, refused in idle and while a cancelled
    # turn drains, closed by their answer while the turn runs; never a move
    ("idle", "permission_asked"): ("idle", ("refuse_question",)),
    ("running", "permission_asked"): ("running", ("open_question",)),
    ("answered", "permission_asked"): ("answered", ("open_question",)),
    ("failing", "permission_asked"): ("failing", ("open_question",)),
    ("cancelled", "permission_asked"): ("cancelled", ("refuse_question",)),
    ("idle", "permission_answered"): ("idle", ()),
    ("running", "permission_answered"): ("running", ("close_question",)),
    ("answered", "permission_answered"): ("answered", ("close_question",)),
    ("failing", "permission_answered"): ("failing", ("close_question",)),
    ("cancelled", "permission_answered"): ("cancelled", ()),
    # a stop reason (max_tokens, refusal) wins over is_error and over a held failure (rule 4);
    # it confirms nothing; no result is expected outside a turn
    ("idle", "result_stop"): None,
    ("running", "result_stop"): ("idle", S),
    ("answered", "result_stop"): ("idle", S),
    ("failing", "result_stop"): ("idle", S),
    ("cancelled", "result_stop"): ("idle", ()),
    # a cancel answers a running turn cancelled (rule 7); there is nothing to cancel otherwise
    ("idle", "cancel"): None,
    ("running", "cancel"): ("cancelled", ("settle_cancelled",)),
    ("answered", "cancel"): ("cancelled", ("settle_cancelled",)),
    ("failing", "cancel"): ("cancelled", ("settle_cancelled",)),
    ("cancelled", "cancel"): None,
    # a warning never ends a turn; outside one (or in a cancelled one) it is no turn event
    ("idle", "api_retry"): None,
    ("running", "api_retry"): ("running", ("publish_retry",)),
    ("answered", "api_retry"): ("answered", ("publish_retry",)),
    ("failing", "api_retry"): ("failing", ("publish_retry",)),
    ("cancelled", "api_retry"): None,
    # a successful result settles the turn: with its stop reason (confirming the attempt only
    # after a real answer), or with the held failure; a cancelled turn's result ends the drain
    ("idle", "result_success"): None,
    ("running", "result_success"): ("idle", S),
    ("answered", "result_success"): ("idle", ("settle_stop", "confirm_attempt")),
    ("failing", "result_success"): ("idle", ("settle_failure",)),
    ("cancelled", "result_success"): ("idle", ()),
    # an error result settles with Claude's error, or with the held failure
    ("idle", "result_error"): None,
    ("running", "result_error"): ("idle", ("settle_result_error",)),
    ("answered", "result_error"): ("idle", ("settle_result_error",)),
    ("failing", "result_error"): ("idle", ("settle_failure",)),
    ("cancelled", "result_error"): ("idle", ()),
}
