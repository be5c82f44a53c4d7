"""Other ACP agents' failures -> category, severity and actions, one data table per agent family.

The Claude conditions are :mod:`lifecycle.conditions`; this module is the same idea for the ACP
agents ``lifecycle proxy`` stands in front of (issue 53.2). An agent reports a failed prompt as a
JSON-RPC error whose ``code`` and ``data`` carry its kind, each family in its own way:

* **gemini** (gemini-cli, ``gemini --experimental-acp``): the provider's HTTP status *is* the
  JSON-RPC code (429, 500, 503, 401, 400, ...), the message is Google's text or its raw JSON body;
* **codex** (codex-acp): always ``-32603 "Internal error"``; the words are ``data.message`` and the
  kind ``data.codex_error_info`` (a name, or ``{name: {"http_status_code": N}}``; snake or camel case);
* **opencode** (``opencode acp``): ``-32603`` with the kind in ``data.errorName``.

A family's table maps the kind to a :class:`FamilyCondition`; a kind the table does not know, and
any agent whose family is unknown, degrades to the spec's ``service`` / ``retry`` (spec:
"Unknown SDK error kinds degrade to ``service``; they never become success"). The three ACP stop
reasons that end a turn short (``refusal``, ``max_tokens``, ``max_turn_requests``) are one table
for every family (:data:`STOP_CONDITIONS`), aligned with the Claude rows they mirror.

Pure data and pure functions: no I/O. Titles are made in :func:`agent_words` (the agent's own words,
with a raw JSON body reduced to its message and URLs taken out) and then :func:`lifecycle.titles.present`
(redaction, headers, length), by the caller.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from .air import Action, Category, Severity

if TYPE_CHECKING:  # the events bring the record's model (pydantic): a plain client's relay never needs them
    from .events import AgentFailure

__all__ = [
    "AGENT_EXITED",
    "AUTH_REQUIRED_CODE",
    "EMPTY_TURN",
    "FAMILIES",
    "HTTP_STATUS",
    "PROTOCOL_ERRORS",
    "STOP_CONDITIONS",
    "UNKNOWN_FAMILY",
    "Family",
    "FamilyCondition",
    "agent_failure",
    "agent_words",
    "classify_agent_error",
    "classify_stop_reason",
    "family_of",
    "is_notice",
    "is_protocol_error",
    "render_families_markdown",
]


@dataclass(frozen=True, slots=True)
class FamilyCondition:
    """What one kind of agent failure becomes (the spec's "Categories" and "Actions")."""

    key: str
    category: Category
    actions: tuple[Action, ...]
    #: the adapter's words when the agent gave none (spec: "Adapter-authored fallback text is
    #: allowed only when no ... user-facing message exists")
    fallback: str
    severity: Severity = Severity.ERROR


def _c(key: str, category: Category, actions: tuple[Action, ...], fallback: str) -> FamilyCondition:
    return FamilyCondition(key, category, actions, fallback)


_RETRY = (Action.RETRY,)
_LOGIN = (Action.LOGIN,)
_NEW = (Action.NEW_SESSION,)

RATE_LIMIT = _c("rate_limit", Category.LIMIT, _RETRY, "The model provider's rate limit was reached. Try again later.")
USAGE_LIMIT = _c("usage_limit", Category.LIMIT, (), "The account's usage limit was reached.")
CONTEXT_LIMIT = _c("context_limit", Category.LIMIT, _NEW, "The conversation is too long for the model.")
ACCESS = _c("access", Category.ACCESS, _LOGIN, "The model provider rejected the credentials. Log in again.")
DENIED = _c("denied", Category.ACCESS, (), "The model provider denied access to this request.")
INVALID_REQUEST = _c("invalid_request", Category.REQUEST, (), "The model provider rejected the request.")
MODEL_NOT_FOUND = _c("model_not_found", Category.REQUEST, (), "The model was not found.")
OVERLOADED = _c("overloaded", Category.SERVICE, _RETRY, "The model provider is overloaded. Try again.")
SERVER_ERROR = _c("server_error", Category.SERVICE, _RETRY, "The model provider reported an error. Try again.")
CONNECTION = _c("connection", Category.CONNECTION, _RETRY, "The connection to the model provider failed. Try again.")
#: the spec's fallback for anything unknown: ``service`` / ``retry``
UNKNOWN_ERROR = _c("unknown", Category.SERVICE, _RETRY, "The agent reported an error without a message. Try again.")
#: the agent process itself ended while a prompt ran (spec: transport loss -> ``connection``,
#: ``new_session``)
AGENT_EXITED = _c(
    "agent_exited", Category.CONNECTION, _NEW, "The agent stopped during this turn. Start a new session to go on."
)
#: a turn the agent ended ``end_turn`` having shown nothing at all (no text, thought, tool call or
#: plan): gemini-cli 0.61.0's SAFETY stop (issue 53). A failure the agent did not name: the spec's
#: ``unknown`` ("does not fit another group"), ``retry``, in the adapter's words (it gave none)
EMPTY_TURN = _c("empty_turn", Category.UNKNOWN, _RETRY, "The agent ended its turn without an answer. Try again.")


def agent_failure(cond: FamilyCondition, words: str = "") -> AgentFailure:
    """The provider-neutral event value of a family row (:class:`lifecycle.events.AgentFailure`),
    with the agent's ``words`` (already :func:`agent_words`)."""
    from .events import AgentFailure

    return AgentFailure(key=cond.key, category=cond.category, actions=cond.actions, fallback=cond.fallback, words=words)


@dataclass(frozen=True, slots=True)
class Family:
    """One agent family: how to recognise it and how it names its failures."""

    name: str
    #: ``agentInfo.name`` values (from ``initialize``) and command names that are this family
    agents: tuple[str, ...]
    #: where the kind is: ``code`` (the JSON-RPC code), ``codex_error_info`` or ``errorName``
    kind_from: str
    kinds: Mapping[str, FamilyCondition]
    #: the start of the agent's own notices that it sends as agent text (not the model's answer,
    #: never a failure): they stay in the transcript and are no real answer (issue 53.2)
    notices: tuple[str, ...] = ()


def _table(rows: dict[str, FamilyCondition]) -> Mapping[str, FamilyCondition]:
    return MappingProxyType(rows)


#: an HTTP status the provider answered -> the condition (gemini-cli's JSON-RPC code is that
#: status; codex-acp names it in ``http_status_code`` or its words)
HTTP_STATUS: Mapping[str, FamilyCondition] = MappingProxyType(
    {
        "400": INVALID_REQUEST,
        "401": ACCESS,
        "403": DENIED,
        "404": MODEL_NOT_FOUND,
        "429": RATE_LIMIT,
        "500": SERVER_ERROR,
        "502": SERVER_ERROR,
        "503": OVERLOADED,
        "504": SERVER_ERROR,
    }
)
GEMINI = Family("gemini", ("gemini-cli", "gemini"), "code", HTTP_STATUS)
CODEX = Family(
    "codex",
    ("codex-acp", "codex"),
    "codex_error_info",
    _table(
        {
            "context_window_exceeded": CONTEXT_LIMIT,
            "session_budget_exceeded": CONTEXT_LIMIT,
            "usage_limit_exceeded": USAGE_LIMIT,
            "rate_limit_exceeded": RATE_LIMIT,
            "server_overloaded": OVERLOADED,
            "internal_server_error": SERVER_ERROR,
            "unauthorized": ACCESS,
            "bad_request": INVALID_REQUEST,
            "invalid_prompt": INVALID_REQUEST,
            "http_connection_failed": CONNECTION,
            "response_stream_connection_failed": CONNECTION,
            "response_stream_disconnected": CONNECTION,
            "response_too_many_failed_attempts": SERVER_ERROR,
        }
    ),
    # codex-acp 0.16.0, at every prompt for a model it has no metadata for (measured, issue 53):
    # "Model metadata for `fake-model` not found. Defaulting to fallback metadata; this can
    # degrade performance and cause issues."
    notices=("Model metadata for `",),
)
OPENCODE = Family(
    "opencode",
    ("OpenCode", "opencode", "opencode-ai"),
    "errorName",
    _table(
        {
            "APIError": SERVER_ERROR,
            "ContextOverflowError": CONTEXT_LIMIT,
            "ProviderAuthError": ACCESS,
        }
    ),
)
#: an agent of no known family: every failure is the spec's ``service`` / ``retry``
UNKNOWN_FAMILY = Family("unknown", (), "code", _table({}))

FAMILIES: tuple[Family, ...] = (GEMINI, CODEX, OPENCODE)

#: ACP stop reasons that end a turn short, for every family (the Claude rows they mirror:
#: ``refusal`` a rejected request, ``max_tokens`` as ``max_output_tokens`` and
#: ``max_turn_requests`` as ``error_max_turns``, both context exhaustion: ``new_session``)
STOP_CONDITIONS: Mapping[str, FamilyCondition] = MappingProxyType(
    {
        "refusal": _c("refusal", Category.REQUEST, (), "The model declined to answer this request."),
        "max_tokens": _c("max_tokens", Category.LIMIT, _NEW, "The answer was cut off at the model's token limit."),
        "max_turn_requests": _c(
            "max_turn_requests", Category.LIMIT, _NEW, "The turn reached its limit of model requests."
        ),
    }
)


def family_of(agent_name: object, command: str = "") -> Family:
    """The family of an agent: its ``agentInfo.name`` first, else its command's file name."""
    base = command.replace("\\", "/").rsplit("/", 1)[-1]
    for candidate in (agent_name, base):
        if isinstance(candidate, str):
            for family in FAMILIES:
                if candidate in family.agents:
                    return family
    return UNKNOWN_FAMILY


def is_notice(family: Family, text: str) -> bool:
    """``text`` (one agent text chunk) is one of the family's own notices."""
    return text.lstrip().startswith(family.notices) if family.notices else False


_CAMEL_RE: Final = re.compile(r"(?<!^)(?=[A-Z])")


def _codex_kind(info: object) -> str | None:
    # A unit variant is a string; one with fields is {name: {...}} (serde's external tagging).
    if isinstance(info, Mapping) and len(info) == 1:
        info = next(iter(info))
    if isinstance(info, str) and info:
        return _CAMEL_RE.sub("_", info).lower()
    return None


def _kind(family: Family, code: object, data: object) -> str | None:
    if family.kind_from == "code":
        return str(code) if isinstance(code, int) and not isinstance(code, bool) else None
    if not isinstance(data, Mapping):
        return None
    if family.kind_from == "codex_error_info":
        return _codex_kind(data.get("codex_error_info", data.get("codexErrorInfo")))
    value = data.get(family.kind_from)
    return value if isinstance(value, str) else None


_STATUS_WORDS_RE: Final = re.compile(r"\bunexpected status (\d{3})\b")


def _codex_status(data: object) -> str | None:
    """The HTTP status codex-acp 0.16.0 names: ``http_status_code`` of its kind (a 429 is
    ``{"response_too_many_failed_attempts": {"http_status_code": 429}}``), else its own words
    ``unexpected status 401 Unauthorized: ...`` (a 401 is kind ``other``)."""
    if not isinstance(data, Mapping):
        return None
    info = data.get("codex_error_info", data.get("codexErrorInfo"))
    fields = next(iter(info.values())) if isinstance(info, Mapping) and len(info) == 1 else None
    if isinstance(fields, Mapping):
        status = fields.get("http_status_code", fields.get("httpStatusCode"))
        if isinstance(status, int) and not isinstance(status, bool):
            return str(status)
    words = data.get("message")
    if _codex_kind(info) in (None, "other") and isinstance(words, str):
        m = _STATUS_WORDS_RE.search(words)
        return m.group(1) if m else None
    return None


#: JSON-RPC's and ACP's protocol errors (parse error, invalid request, method not found, invalid
#: params; ACP's resource not found): the client's request was wrong, no model failed. They reach
#: the client as the agent sent them, never as a record.
PROTOCOL_ERRORS: frozenset[int] = frozenset((-32700, -32600, -32601, -32602, -32002))


#: ACP's "Authentication required" (the code the reference answers a login request with): for
#: every family, ``access`` / ``login``
AUTH_REQUIRED_CODE = -32000


def is_protocol_error(code: object) -> bool:
    """``code`` is one of :data:`PROTOCOL_ERRORS` (a bool is no code)."""
    return isinstance(code, int) and not isinstance(code, bool) and code in PROTOCOL_ERRORS


def classify_agent_error(family: Family, code: object, data: object) -> FamilyCondition:
    """The condition of a prompt's JSON-RPC error (``code``, ``data``) from an agent of ``family``;
    anything unknown is :data:`UNKNOWN_ERROR` (``service`` / ``retry``). For codex an HTTP status
    it names (:func:`_codex_status`) wins over its kind: the provider's answer is the more precise."""
    if code == AUTH_REQUIRED_CODE and not isinstance(code, bool):
        return ACCESS
    status = _codex_status(data) if family is CODEX else None
    if status is not None and status in HTTP_STATUS:
        return HTTP_STATUS[status]
    kind = _kind(family, code, data)
    if kind is not None and kind in family.kinds:
        return family.kinds[kind]
    return UNKNOWN_ERROR


def classify_stop_reason(stop_reason: object) -> FamilyCondition | None:
    """The condition of a turn that ended with ``stop_reason``, or None for a turn that did not
    end short (``end_turn``, ``cancelled``, anything else)."""
    return STOP_CONDITIONS.get(stop_reason) if isinstance(stop_reason, str) else None


# ------------------------------------------------------------------ the agent's words

# JSON-RPC's own generic messages say nothing about what happened: never a title by themselves.
_GENERIC: Final = frozenset(("internal error", "server error", "error", "unknown error"))
_URL_RE: Final = re.compile(r"""(?:,?\s*\b(?:url|uri|endpoint)\s*[:=]\s*)?\b[a-z][a-z0-9+.-]*://[^\s"'<>)\]]+""", re.I)
_SPACES_RE: Final = re.compile(r"[ \t]{2,}")
# JSON-RPC's generic words before the agent's own (opencode 1.18.33: "Internal error: <provider's text>")
_GENERIC_PREFIX_RE: Final = re.compile(r"^\s*(?:internal error|error)\s*:\s+(?=\S)", re.I)


def _json_message(text: str) -> str | None:
    """A raw JSON body's own message (Google's ``{"error": {"message": ...}}``, or a top-level
    ``message``); ``""`` for a JSON body without one; None when ``text`` is no JSON object."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        body: Any = json.loads(stripped)
    except ValueError:
        return None
    if isinstance(body, list) and body:
        body = body[0]
    if not isinstance(body, Mapping):
        return ""
    inner = body.get("error")
    for holder in (inner, body):
        if isinstance(holder, Mapping) and isinstance(holder.get("message"), str):
            return str(holder["message"])
    return inner if isinstance(inner, str) else ""


def _clean(text: str) -> str:
    words = _json_message(text)
    if words is not None:
        text = words
    text = _GENERIC_PREFIX_RE.sub("", _URL_RE.sub("", text))
    return _SPACES_RE.sub(" ", text).strip().rstrip(",:;").strip()


def agent_words(message: object, data: object) -> str:
    """The agent's own user-facing words for a failure, before :func:`lifecycle.titles.present`.

    Precedence: ``data.message`` (codex-acp puts the words there and a generic ``"Internal
    error"`` in ``message``), then the error's ``message``; a raw JSON body becomes the message it
    holds, URLs are taken out, a generic ``"Internal error: "`` before the words is dropped, and a
    generic JSON-RPC message alone counts as no words (``""``).
    """
    candidates: list[object] = []
    if isinstance(data, Mapping):
        candidates.append(data.get("message"))
    candidates.append(message)
    for cand in candidates:
        if isinstance(cand, str):
            words = _clean(cand)
            if words and words.lower().rstrip(".") not in _GENERIC:
                return words
    return ""


def render_families_markdown() -> str:
    """The families table as markdown (docs/proxy.md holds it, checked by the tests)."""
    lines = [
        "| family | recognised by | kind read from | kind | category | actions |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for family in FAMILIES:
        agents = ", ".join(f"`{a}`" for a in family.agents)
        for kind, cond in family.kinds.items():
            actions = ", ".join(f"`{a.value}`" for a in cond.actions) or "none"
            lines.append(
                f"| {family.name} | {agents} | `{family.kind_from}` | `{kind}` | `{cond.category.value}` | {actions} |"
            )
    lines.append(
        "| codex | | `http_status_code` of its kind, or `unexpected status N` in its words (kind `other`) "
        "| an HTTP status (wins over the kind) | as gemini's row for that status | |"
    )
    fallback = f"`{UNKNOWN_ERROR.category.value}` | `{UNKNOWN_ERROR.actions[0].value}` |"
    lines.append(f"| any, and an unknown agent | | | any other | {fallback}")
    for reason, cond in STOP_CONDITIONS.items():
        actions = ", ".join(f"`{a.value}`" for a in cond.actions) or "none"
        lines.append(f"| every family | | `stopReason` | `{reason}` | `{cond.category.value}` | {actions} |")
    lines.append(
        f"| every family | | `code` | `{AUTH_REQUIRED_CODE}` (ACP: authentication required) | `access` | `login` |"
    )
    codes = ", ".join(f"`{c}`" for c in sorted(PROTOCOL_ERRORS, reverse=True))
    lines.append(f"| every family | | `code` | {codes} (the request was wrong) | no record: passed on | |")
    lines.append(
        f"| every family | | the agent process | exits mid-prompt | `{AGENT_EXITED.category.value}` | `new_session` |"
    )
    lines.append(
        f"| every family | | `stopReason` | `end_turn` with nothing shown (no text, thought, tool call or plan) "
        f"| `{EMPTY_TURN.category.value}` | `{EMPTY_TURN.actions[0].value}` |"
    )
    for family in FAMILIES:
        for notice in family.notices:
            row = f"| {family.name} | | agent text | starts `` {notice} ``: its own notice | no record, no answer | |"
            lines.append(row)
    return "\n".join(lines) + "\n"
