"""Claude conditions -> category, severity, actions and recovery policy, as one data table.

Spec sections: "Categories" (the condition table), "Severity", "Actions" (current Claude policies)
and "Internal recovery". Every row of the spec's tables has a row here; README's table is rendered
from :data:`CONDITIONS` (``workshop diagrams`` writes it), never copied by hand.

Classification is a pure function of what Claude emitted. Unknown SDK error kinds degrade to
``service``; nothing here can turn a failure into success. ``max_tokens``, ``refusal`` and
cancellation are ACP stop reasons, not failures (:data:`STOP_REASONS`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from .wire import Action, Category, Severity

__all__ = [
    "AUTH_REQUIRED",
    "CONDITIONS",
    "CONTEXT_LIMIT_PREFIXES",
    "INTERNAL_ERROR",
    "LEGACY_ADAPTER_ERRORS",
    "LEGACY_END_TURN",
    "LOGIN_MARKERS",
    "MAX_TOKENS_WINS_FOR",
    "STARTUP_AUTH_REQUIRED",
    "STARTUP_FAILURES",
    "STOP_REASONS",
    "USAGE_LIMIT_PREFIXES",
    "WINNING_STOP_REASONS",
    "Condition",
    "Recovery",
    "classify_assistant_error",
    "classify_result",
    "condition",
    "is_login_text",
    "is_synthetic_failure_text",
    "is_usage_limit_text",
    "render_conditions_markdown",
    "result_event",
    "retry_condition",
    "startup_failure_code",
    "startup_failure_condition",
    "stop_reason_for",
]


class Recovery(StrEnum):
    """Which event ends an active incident (spec: "Internal recovery"). Never serialised."""

    #: restored quota remains active until a real model answer
    REAL_MODEL_ANSWER = "real_model_answer"
    #: authentication remains active until a successful ``auth_status``
    AUTH_STATUS = "auth_status"
    #: transport loss and worker shutdown remain active until runtime replacement
    RUNTIME_REPLACED = "runtime_replaced"
    #: other turn-scoped failures stop being active at a later confirmed attempt boundary
    CONFIRMED_ATTEMPT = "confirmed_attempt"
    #: notices are not cleared by generic success (only a newer notice supersedes one)
    NEVER = "never"
    #: a usage-limit window's warning ends when the window resets: its return to ``allowed``, or
    #: a later event of the window showing a later reset time (issue 32)
    WINDOW_RESET = "window_reset"


@dataclass(frozen=True, slots=True)
class Condition:
    """One row of the table. ``legacy_code`` is the JSON-RPC error a legacy client gets."""

    key: str
    source: str
    category: Category
    severity: Severity
    actions: tuple[Action, ...]
    recovery: Recovery
    legacy_code: int
    note: str = ""


_E, _W = Severity.ERROR, Severity.WARNING
INTERNAL_ERROR = -32603
AUTH_REQUIRED = -32000


def _row(
    key: str,
    source: str,
    category: Category,
    actions: tuple[Action, ...],
    recovery: Recovery,
    severity: Severity = _E,
    note: str = "",
) -> Condition:
    legacy = AUTH_REQUIRED if recovery is Recovery.AUTH_STATUS else INTERNAL_ERROR
    return Condition(key, source, category, severity, actions, recovery, legacy, note)


_C, _A, _L, _R, _S, _U = (
    Category.CONNECTION,
    Category.ACCESS,
    Category.LIMIT,
    Category.REQUEST,
    Category.SERVICE,
    Category.UNKNOWN,
)
_RETRY, _LOGIN, _NEW = (Action.RETRY,), (Action.LOGIN,), (Action.NEW_SESSION,)
_AUTH, _ATTEMPT, _ANSWER, _RUNTIME = (
    Recovery.AUTH_STATUS,
    Recovery.CONFIRMED_ATTEMPT,
    Recovery.REAL_MODEL_ANSWER,
    Recovery.RUNTIME_REPLACED,
)

_ROWS: tuple[Condition, ...] = (
    # --- access: authentication required, rejected credentials, denied access
    _row("authentication_failed", "assistant `error`", _A, _LOGIN, _AUTH),
    _row("oauth_org_not_allowed", "assistant `error`", _A, _LOGIN, _AUTH),
    _row("verification_required", "assistant `error`", _A, _LOGIN, _AUTH),
    _row("login_required", "synthetic login message (`/login`)", _A, _LOGIN, _AUTH),
    _row("account_on_hold", "assistant `error`", _A, (), _ATTEMPT, note="no action the client can take"),
    _row("cloud_credential_error", "assistant `error`", _A, (), _ATTEMPT, note="cloud credentials, not /login"),
    # --- limit: rate, quota, token, context, turn or configured budget
    _row("usage_limit", "synthetic usage/spend-limit message", _L, (), _ANSWER, note="account quota"),
    _row("billing_error", "assistant `error`", _L, (), _ATTEMPT, note="account quota"),
    _row("rate_limit", "assistant `error`", _L, _RETRY, _ATTEMPT),
    _row("max_output_tokens", "assistant `error`", _L, _NEW, _ATTEMPT, note="context exhausted (reference)"),
    _row("context_limit", "`Prompt is too long` / `terminal_reason: prompt_too_long`", _L, _NEW, _ATTEMPT),
    _row("error_max_budget_usd", "result `subtype`", _L, _NEW, _ATTEMPT, note="configured session budget"),
    _row("error_max_turns", "result `subtype`", _L, _NEW, _ATTEMPT, note="turn limit: context exhausted (reference)"),
    # --- request: invalid input, unsupported model or operation
    _row("invalid_request", "assistant `error`", _R, (), _ATTEMPT),
    _row("model_not_found", "assistant `error`", _R, (), _ATTEMPT),
    # --- service: provider overload or failure, adapter/internal failure
    _row("overloaded", "assistant `error`", _S, _RETRY, _ATTEMPT),
    _row("server_error", "assistant `error`", _S, _RETRY, _ATTEMPT),
    _row("unknown", "assistant `error` `unknown`", _S, _RETRY, _ATTEMPT, note="unknown provider error"),
    _row("unrecognized_error", "any other `error` kind", _S, _RETRY, _ATTEMPT, note="degrades, never success"),
    _row("error_result", "`is_error` result without an error message", _S, _RETRY, _ATTEMPT),
    _row("error_during_execution", "result `subtype`", _S, _RETRY, _ATTEMPT),
    _row("error_max_structured_output_retries", "result `subtype`", _S, _RETRY, _ATTEMPT),
    _row("missing_result", "query ended without a result", _S, _RETRY, _ATTEMPT, note="internal invariant"),
    _row("internal_error", "adapter internal error", _S, _RETRY, _ATTEMPT, note="recoverable"),
    # --- Claude Code could not start (``startup_failure_reason``): one row per category, the
    # reason mapped by :data:`STARTUP_FAILURES`
    _row(
        "startup_failure_access",
        "result `startup_failure_reason`: sign-in, terms, organisation",
        _A,
        _LOGIN,
        _AUTH,
        note="legacy code by reason (`startup_failure_code`)",
    ),
    _row(
        "startup_failure_request",
        "result `startup_failure_reason`: `cwd_unavailable`, `config_file_invalid`",
        _R,
        (),
        _ATTEMPT,
        note="legacy code by reason (`startup_failure_code`)",
    ),
    _row(
        "startup_failure_service",
        "result `startup_failure_reason`: any other reason",
        _S,
        _RETRY,
        _ATTEMPT,
        note="legacy code by reason (`startup_failure_code`); an unknown reason too",
    ),
    # --- connection: lost transport, stopped worker, unavailable runtime
    _row("query_error", "SDK query iterator threw", _C, _NEW, _RUNTIME),
    _row("worker_shutdown", "`worker_shutting_down` then EOF", _C, _NEW, _RUNTIME),
    # --- warnings: the operation may still succeed
    _row("api_retry", "`api_retry` with an HTTP response", _S, (), _ATTEMPT, _W, note="category of its `error` kind"),
    _row("api_retry_no_response", "`api_retry` with `error_status: null`", _C, (), _ATTEMPT, _W),
    _row("model_fallback", "`model_fallback` notice", _U, (), Recovery.NEVER, _W, note="`:notice:` namespace"),
    _row(
        "mcp_server_not_started",
        "a client's MCP server Claude Code did not start",
        _U,
        (),
        Recovery.NEVER,
        _W,
        note="adapter-observed (`init` `mcp_servers`); `:notice:` namespace",
    ),
    _row(
        "rate_limit_window",
        "`rate_limit_event` `allowed_warning` or `rejected`",
        _L,
        (),
        Recovery.WINDOW_RESET,
        _W,
        note="session-scoped, one entry per window; never the turn's failure",
    ),
    _row(
        "model_refusal_fallback",
        "`model_refusal_fallback` notice",
        _U,
        (),
        Recovery.NEVER,
        _W,
        note="title composed as the reference does; ACP `notice` for a client that declared them",
    ),
)

#: Every condition by key.
CONDITIONS: Mapping[str, Condition] = MappingProxyType({c.key: c for c in _ROWS})

#: SDK error kinds that have their own row (anything else is ``unrecognized_error``).
_ERROR_KINDS = frozenset(
    {
        "authentication_failed",
        "oauth_org_not_allowed",
        "verification_required",
        "account_on_hold",
        "cloud_credential_error",
        "billing_error",
        "rate_limit",
        "max_output_tokens",
        "invalid_request",
        "model_not_found",
        "overloaded",
        "server_error",
        "unknown",
    }
)

#: Why Claude Code could not start (``startup_failure_reason``, CLI 2.1.337's ``sdk.d.ts`` and the
#: reference adapter's ``startup-failure.js``) -> its row: sign-in, terms and organisation reasons
#: are ``access``, the working directory and an invalid config file ``request``; any other reason,
#: an unknown one too, is ``service`` (:func:`startup_failure_condition`).
STARTUP_FAILURES: Mapping[str, str] = MappingProxyType(
    {
        "gateway_signin_required": "startup_failure_access",
        "org_pin_mismatch": "startup_failure_access",
        "org_config_refused": "startup_failure_access",
        "org_signin_ended": "startup_failure_access",
        "consumer_terms_review_in_terminal": "startup_failure_access",
        "consumer_terms_accept_on_web": "startup_failure_access",
        "cwd_unavailable": "startup_failure_request",
        "config_file_invalid": "startup_failure_request",
        "proxy_invalid": "startup_failure_service",
        "managed_settings_not_delivered": "startup_failure_service",
        "initialize_fields_not_delivered": "startup_failure_service",
        "sideload_flags_disabled": "startup_failure_service",
        "resume_target_not_found": "startup_failure_service",
    }
)
#: The JSON-RPC code of a start-up failure, as the reference adapter answers it
#: (``startup-failure.js``): auth required for these, invalid params for ``cwd_unavailable``,
#: internal error for every other reason.
STARTUP_AUTH_REQUIRED = frozenset({"gateway_signin_required", "org_pin_mismatch", "org_config_refused"})
INVALID_PARAMS = -32602

_RESULT_SUBTYPES = frozenset(
    {"error_max_budget_usd", "error_max_turns", "error_during_execution", "error_max_structured_output_retries"}
)

#: Stable prefixes of the SDK's synthetic usage-limit messages (spec: "History replay").
USAGE_LIMIT_PREFIXES: tuple[str, ...] = (
    "You've hit your",
    "You've reached your",
    "You're out of usage credits",
    "You're out of extra usage",
    "Your org is out of usage · add funds to continue",
    "Your org is out of usage · contact your admin",
    "Your seat type doesn't include usage credits",
    "Your seat type doesn't include usage",
    "Your seat type doesn't include extra usage",
    "Your usage allocation has been disabled by your admin",
    "Your group's usage limit is set to $0",
    "Fable 5 requires usage credits",
)

#: Synthetic text that is a context-window exhaustion.
CONTEXT_LIMIT_PREFIXES: tuple[str, ...] = ("Prompt is too long",)

#: Synthetic text that asks the user to log in (the "synthetic login message").
LOGIN_MARKERS: tuple[str, ...] = ("Please run /login", "Not logged in")
#: "run /login" anywhere in Claude's own failure text, whatever the error kind ("Login expired · Run
#: /login …" arrives as ``invalid_request``): the reference adapter's ``isLoginRequiredText``.
_RUN_LOGIN = re.compile(r"\brun /login\b", re.IGNORECASE)

#: What a legacy client's JSON-RPC error carries for the adapter's own conditions (the reference
#: adapter's ``errorKind`` names): ``(errorKind, whether the adapter's text follows "Internal error: ")``.
#: Claude's failures carry Claude's text and the SDK error kind it came with, if any.
LEGACY_ADAPTER_ERRORS: Mapping[str, tuple[str | None, bool]] = MappingProxyType(
    {
        "worker_shutdown": ("worker_shutdown", False),
        "query_error": ("transport_lost", False),
        "internal_error": (None, True),
    }
)

#: The adapter's own conditions a legacy client is never told of: the reference adapter answers
#: its prompt ``stopReason: end_turn`` (a stream that ends without a result, ``:4016-4021``); a
#: capable client still gets the typed record.
LEGACY_END_TURN: frozenset[str] = frozenset({"missing_result"})

#: Claude stop reasons that are ACP stop reasons, not failures.
STOP_REASONS: Mapping[str, str] = MappingProxyType(
    {"max_tokens": "max_tokens", "refusal": "refusal", "cancelled": "cancelled"}
)


def condition(key: str) -> Condition:
    """The row for ``key`` (``KeyError`` for a key that is not in the table)."""
    return CONDITIONS[key]


def is_usage_limit_text(text: str) -> bool:
    """True when ``text`` starts with one of the SDK's stable usage-limit prefixes."""
    return text.startswith(USAGE_LIMIT_PREFIXES)


def is_login_text(text: str) -> bool:
    """Claude's text asks the user to log in (a synthetic login message)."""
    return any(m in text for m in LOGIN_MARKERS) or _RUN_LOGIN.search(text) is not None


def is_synthetic_failure_text(text: str) -> bool:
    """CLI-authored text that is a failure even without an ``error`` kind (usage limit, login)."""
    return is_usage_limit_text(text) or is_login_text(text)


def classify_assistant_error(kind: str | None, text: str) -> Condition:
    """The condition of a top-level ``<synthetic>`` assistant failure.

    The text refines the kind where Claude's kind is coarser than its message (a usage limit
    arrives as ``rate_limit``; prompt-too-long as ``invalid_request``).
    """
    if is_usage_limit_text(text):
        return CONDITIONS["usage_limit"]
    if text.startswith(CONTEXT_LIMIT_PREFIXES):
        return CONDITIONS["context_limit"]
    if kind in _ERROR_KINDS and CONDITIONS[kind].recovery is Recovery.AUTH_STATUS:
        return CONDITIONS[kind]
    if is_login_text(text):
        return CONDITIONS["login_required"]
    if kind in _ERROR_KINDS:
        return CONDITIONS[kind]
    return CONDITIONS["unrecognized_error"]


def startup_failure_condition(reason: str) -> Condition:
    """The row of a start-up failure's ``reason`` (:data:`STARTUP_FAILURES`; unknown: ``service``)."""
    return CONDITIONS[STARTUP_FAILURES.get(reason, "startup_failure_service")]


def startup_failure_code(reason: str) -> int:
    """The JSON-RPC code the reference adapter answers a start-up failure's ``reason`` with."""
    if reason in STARTUP_AUTH_REQUIRED:
        return AUTH_REQUIRED
    return INVALID_PARAMS if reason == "cwd_unavailable" else INTERNAL_ERROR


def classify_result(
    subtype: object, terminal_reason: object, text: object = None, startup_failure: object = None
) -> Condition:
    """The condition of an ``is_error`` result that no assistant failure message explained.

    A result with a ``startup_failure_reason`` is a start-up failure, whatever else it says
    (:func:`startup_failure_condition`).

    A result whose own text asks the user to log in ("… run /login …", with no assistant frame
    before it) is the synthetic login message: ``access`` with ``login``, active until a successful
    ``auth_status`` (the reference adapter's ``isLoginRequiredText`` on ``result``, checked first).
    """
    if isinstance(startup_failure, str) and startup_failure:
        return startup_failure_condition(startup_failure)
    if isinstance(text, str) and is_login_text(text):
        return CONDITIONS["login_required"]
    if terminal_reason == "prompt_too_long":
        return CONDITIONS["context_limit"]
    if isinstance(subtype, str) and subtype in _RESULT_SUBTYPES:
        return CONDITIONS[subtype]
    return CONDITIONS["error_result"]


def retry_condition(error_status: object, kind: object) -> tuple[Condition, Category]:
    """The warning row of an ``api_retry`` and the category it is shown with.

    No HTTP response (``error_status`` null) is ``connection``; otherwise the category of the
    retried error kind (``rate_limit`` -> ``limit``; unknown kinds -> ``service``).
    """
    if error_status is None:
        row = CONDITIONS["api_retry_no_response"]
        return row, row.category
    row = CONDITIONS["api_retry"]
    if isinstance(kind, str) and kind in _ERROR_KINDS:
        return row, CONDITIONS[kind].category
    return row, Category.SERVICE


#: Claude stop reasons that settle a turn whatever ``is_error`` says (the reference adapter's
#: "stop reason propagation": a refusal or a token limit is how the turn ended, not a failure).
WINNING_STOP_REASONS = frozenset({"max_tokens", "refusal"})

#: Result subtypes for which ``max_tokens`` wins over ``is_error`` (the reference adapter checks
#: it only in its ``success`` and ``error_during_execution`` lanes, ``dist/acp-agent.js:5492-5495``,
#: ``:5539-5542``). A budget or turn limit (``error_max_budget_usd``, ``error_max_turns``) is a
#: ``limit`` failure whatever its ``stop_reason`` (spec: "budget/turn limit → ``limit``").
MAX_TOKENS_WINS_FOR = frozenset({"success", "error_during_execution"})


def result_event(is_error: object, stop_reason: object, subtype: object = "success", text: object = None) -> str:
    """The :class:`~lifecycle.session_flow.SessionFlow` event a ``result`` is.

    ``result_stop`` when the stop reason wins even with ``is_error``: ``refusal`` for any subtype,
    ``max_tokens`` only for :data:`MAX_TOKENS_WINS_FOR` and unless the ``is_error`` result's own
    text asks for a login (checked first, as the reference does); else ``result_error`` for an
    error result, else ``result_success``.
    """
    if stop_reason == "refusal":
        return "result_stop"
    login = bool(is_error) and isinstance(text, str) and is_login_text(text)
    if stop_reason == "max_tokens" and (subtype is None or subtype in MAX_TOKENS_WINS_FOR) and not login:
        return "result_stop"
    return "result_error" if is_error else "result_success"


def stop_reason_for(stop_reason: object, terminal_reason: object) -> str:
    """ACP stop reason of a successful result (``aborted_*`` terminal reasons are cancellations)."""
    if isinstance(terminal_reason, str) and terminal_reason.startswith("aborted_"):
        return "cancelled"
    if isinstance(stop_reason, str) and stop_reason in STOP_REASONS:
        return STOP_REASONS[stop_reason]
    return "end_turn"


def render_conditions_markdown() -> str:
    """The README table, rendered from :data:`CONDITIONS`."""
    lines = [
        "| condition | Claude emits | category | severity | actions | recovery | legacy JSON-RPC | note |",
        "| --- | --- | --- | --- | --- | --- | ---: | --- |",
    ]
    for c in _ROWS:
        actions = ", ".join(f"`{a.value}`" for a in c.actions) or "none"
        lines.append(
            f"| `{c.key}` | {c.source} | `{c.category.value}` | `{c.severity.value}` | {actions} "
            f"| `{c.recovery.value}` | {'`end_turn`' if c.key in LEGACY_END_TURN else c.legacy_code} | {c.note} |"
        )
    return "\n".join(lines) + "\n"
