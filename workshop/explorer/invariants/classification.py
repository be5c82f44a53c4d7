"""Invariants on what a failure is (category, actions, recovery) and on notices being kept: issue
21's rules 1, 2, 3 and 7.

Rules
-----
* Each invariant restates one spec sentence (its docstring), as in every family of
  :mod:`.invariants`, and reads one :class:`~workshop.explorer.steps.Step`. A failure is
  recognised by the text the alphabet injected for it (:mod:`..world`), never by how the ledger
  classified it.
* Its reachability targets show each invariant was exercised (a turn settled by each of the
  alphabet's letters for these rules).
"""

from __future__ import annotations

from lifecycle.conditions import Recovery
from lifecycle.events import PromptErrorOut, PromptResponseOut
from lifecycle.ids import IdKind
from lifecycle.wire import Action as WireAction
from lifecycle.wire import Category, SessionFailure, Severity

from ..registry import REGISTRY
from ..steps import Step
from ..world import LIMIT_RESULT_TEXT, LOGIN_RESULT_TEXT, SERVER_ERROR_TEXT, STARTUP_SIGNIN_REASON, STARTUP_SIGNIN_TEXT
from .reading import kind_of

__all__: list[str] = []

FAMILY = "classification"
invariant = REGISTRY.invariant(FAMILY)


def _shown(rec: SessionFailure) -> tuple[Category, list[str]]:
    return rec.category, [a.value for a in rec.actions]


def _fresh_turn_settled(s: Step, name: str) -> bool:
    """``s`` is the letter ``name`` ending a running turn that held no Claude failure before it."""
    return s.name == name and s.was_running and s.before is not None and s.before.turn_failure is None


@invariant
def budget_or_turn_limit_is_a_limit_failure(s: Step) -> str | None:
    """The category table's "usage/spend limit, budget/turn limit" row is `limit`; "context or
    configured session-budget exhaustion: `new_session`": a budget or turn-limit result ends its
    turn as that failure even when its ``stop_reason`` is ``max_tokens`` (which wins only for ``success`` and
    ``error_during_execution``, as in the reference adapter)."""
    if s.name != "result_limit_max_tokens" or not s.was_running:
        return None
    settles = [o for o, _ in s.sent if isinstance(o, (PromptResponseOut, PromptErrorOut))]
    if any(isinstance(o, PromptResponseOut) and o.stop_reason == "max_tokens" for o in settles):
        return f"{s.name} settled the prompt max_tokens"
    if not _fresh_turn_settled(s, s.name) or not s.after.ledger.negotiated:
        return None  # Claude's held failure settles it; a legacy client: legacy_unchanged
    shown = [(_shown(r), r.title) for r in (o.record for o in settles) if r is not None]
    want = ((Category.LIMIT, [WireAction.NEW_SESSION.value]), LIMIT_RESULT_TEXT)
    if shown != [want]:
        return f"{s.name} settled with {shown}, expected {[want]}"
    return None


@invariant
def provider_error_is_service(s: Step) -> str | None:
    """The category table's "`overloaded`, `server_error`, unknown provider error" row is `service`;
    only "API retry without an HTTP response" is `connection`: Claude's provider error ends its turn as `service` with
    `retry`, whatever the turn's retries got ("provider overload/error …: `retry`")."""
    for _, _, rec in s.records():
        provider = rec.title == SERVER_ERROR_TEXT and rec.severity is Severity.ERROR
        if provider and _shown(rec) != (Category.SERVICE, [WireAction.RETRY.value]):
            return f"{rec.id} r{rec.revision} is {_shown(rec)}, expected service with retry"
    return None


@invariant
def login_request_in_result_is_access(s: Step) -> str | None:
    """ "synthetic login message → `access`"; "authentication: `login`"; "authentication remains
    active until successful `auth_status`": a login request that arrives only as an error result's
    text is that failure."""
    found = False
    for _, ok, rec in s.records():
        if rec.title != LOGIN_RESULT_TEXT:
            continue
        found = True
        if _shown(rec) != (Category.ACCESS, [WireAction.LOGIN.value]):
            return f"{rec.id} r{rec.revision} is {_shown(rec)}, expected access with login"
        got = {a.id: a for a in s.after.active}.get(rec.id)
        if ok and (got is None or got.recovery is not Recovery.AUTH_STATUS):
            return f"{rec.id} was delivered but is not active until auth_status"
    if _fresh_turn_settled(s, "login_result") and s.after.ledger.negotiated and not found:
        return f"{s.name} published no record for the login request"
    return None


@invariant
def startup_failure_is_its_reasons_row(s: Step) -> str | None:
    """Issue 49 point 2, by the spec's tables: a Claude Code that could not start for a sign-in
    reason is `access` with `login` ("authentication: `login`"), active until a successful
    `auth_status` ("authentication remains active until successful `auth_status`"); "If no capable
    client negotiated the extension, existing JSON-RPC errors … remain unchanged": a legacy client
    gets the reference's error (`-32000`, Claude Code's message, `data.startupFailureReason`)."""
    for _, ok, rec in s.records():
        if rec.title != STARTUP_SIGNIN_TEXT:
            continue
        if _shown(rec) != (Category.ACCESS, [WireAction.LOGIN.value]):
            return f"{rec.id} r{rec.revision} is {_shown(rec)}, expected access with login"
        got = {a.id: a for a in s.after.active}.get(rec.id)
        if ok and (got is None or got.recovery is not Recovery.AUTH_STATUS):
            return f"{rec.id} was delivered but is not active until auth_status"
    if _fresh_turn_settled(s, "startup_failure") and not s.after.ledger.negotiated:
        errors = [o for o, _ in s.sent if isinstance(o, PromptErrorOut)]
        want = (-32000, STARTUP_SIGNIN_TEXT, {"startupFailureReason": STARTUP_SIGNIN_REASON})
        if [(o.code, o.message, o.data) for o in errors] != [want]:
            return f"{s.name} answered a legacy client {[(o.code, o.message, o.data) for o in errors]}"
    return None


@invariant
def notices_never_forgotten(s: Step) -> str | None:
    """Notices "are not cleared merely by generic success", and "Publishing another incident is not
    evidence that an older one recovered": every notice the client was shown stays active, or, let
    go past the ledger's memory bound, is counted as active (no report claims fewer)."""
    shown = {r.id for r in s.after.client.records if _is_notice(r.id)}
    held = sum(a.state == "noticed" for a in s.after.active)
    if len(shown) != held + s.after.ledger.untracked_notices:
        return f"{len(shown)} notices shown, {held} active and {s.after.ledger.untracked_notices} counted"
    return None


def _is_notice(incident_id: str) -> bool:
    return kind_of(incident_id) is IdKind.NOTICE


def _settled_with(s: Step, title: str) -> bool:
    return any(ok and isinstance(o, PromptResponseOut) and rec.title == title for o, ok, rec in s.records())


REGISTRY.add_targets(
    FAMILY,
    (
        "limit_result_settled",
        "a budget limit with stop_reason max_tokens settled its turn as a limit failure",
        lambda s: _settled_with(s, LIMIT_RESULT_TEXT),
    ),
    (
        "provider_error_after_retries",
        "Claude's provider error settled a turn that had shown retry warnings",
        lambda s: _settled_with(s, SERVER_ERROR_TEXT) and any(r.revision >= 2 for _, _, r in s.records()),
    ),
    (
        "startup_failure_settled",
        "a Claude Code that could not start for a sign-in reason settled its turn with that record",
        lambda s: _settled_with(s, STARTUP_SIGNIN_TEXT),
    ),
    (
        "login_result_active",
        "a login request in the result text waits for auth_status",
        lambda s: _settled_with(s, LOGIN_RESULT_TEXT),
    ),
)
