"""Invariants on what the client is shown: the adapter's belief equals what the client received,
a legacy client is shown nothing new, no secret reaches a title, details or legacy error data,
and a warning recommends no action.
"""

from __future__ import annotations

import json

from lifecycle.events import PromptErrorOut, PromptResponseOut
from lifecycle.wire import Severity

from ..registry import REGISTRY
from ..steps import Step, outcome
from ..world import SECRET_MARKERS

__all__: list[str] = []

FAMILY = "client"
invariant = REGISTRY.invariant(FAMILY)


def _expected_severity(state: str) -> Severity | None:
    return Severity.WARNING if state in ("retrying", "noticed", "warned") else {"failed": Severity.ERROR}.get(state)


@invariant
def belief_equals_client(s: Step) -> str | None:
    """The adapter's belief (active set, revisions) equals what the client actually received,
    whatever sends failed: a failed send leaves the incident as the client last saw it."""
    client = {r.id: r for r in s.after.client.records if r.id not in s.after.closed}
    active = {a.id: a for a in s.after.active}
    if set(client) != set(active):
        return f"ledger active {sorted(active)} != client's open records {sorted(client)}"
    for rid, a in active.items():
        rec = client[rid]
        if rec.revision != a.revision:
            return f"{rid}: ledger revision {a.revision}, client revision {rec.revision}"
        if _expected_severity(a.state) is not rec.severity:
            return f"{rid}: ledger state {a.state}, client shows a {rec.severity.value}"
    return None


@invariant
def legacy_unchanged(s: Step) -> str | None:
    """If no capable client negotiated the extension, existing JSON-RPC errors and transcript
    text remain unchanged: no ``_meta.jetbrains``, no typed record, the legacy JSON-RPC outcome
    (a stream that ends without a result and without Claude's failure: ``end_turn``, as the
    reference answers it)."""
    if s.after.ledger.negotiated:
        return None
    for out, _ in s.sent:
        if out.record is not None or "jetbrains" in json.dumps(out.to_jsonrpc()):
            return f"a legacy client was sent _meta.jetbrains ({type(out).__name__})"
    if s.after.active:
        return "a legacy session holds active incidents"
    if s.failure_settle_expected:
        settles = [out for out, _ in s.sent if isinstance(out, (PromptResponseOut, PromptErrorOut))]
        if s.name == "query_end" and s.before is not None and s.before.turn_failure is None:
            if [outcome(o) for o in settles] != ["end_turn"]:  # issue 21, rule 6
                return f"{s.name} ended a legacy turn with {[outcome(o) for o in settles]}, expected end_turn"
            return None
        # Claude's authentication failure settles with -32000, unless the runtime was lost (rule 6).
        # ... and a login request only in the result's text (issue 21 rule 7) likewise.
        held = s.before.turn_failure if s.before is not None else None
        # (a start-up failure for a sign-in reason too: the reference's code for it, issue 49)
        fresh_auth = s.name in ("login_result", "startup_failure")
        auth = (held == "auth" or (held is None and fresh_auth)) and not (s.action and s.action.loss)
        code = -32000 if auth else -32603
        if len(settles) != 1 or not isinstance(settles[0], PromptErrorOut) or settles[0].code != code:
            got = [outcome(o) for o in settles]
            return f"{s.name} ended a legacy turn as a failure with {got}, expected JSON-RPC error {code}"
    return None


@invariant
def no_secrets(s: Step) -> str | None:
    """Raw thrown exceptions, stack traces, transport URLs, tokens, headers, environment values,
    and private paths are never used as titles (nor as details, nor as legacy error data)."""
    for out, _ in s.sent:
        texts: list[str] = []
        if out.record is not None:
            texts += [out.record.title, out.record.details or ""]
        if isinstance(out, PromptErrorOut):
            texts += [out.message, json.dumps(out.data or {})]
        for text in texts:
            for marker in SECRET_MARKERS:
                if marker in text:
                    return f"{type(out).__name__} title/details contain {marker!r}: {text[:120]!r}"
    return None


@invariant
def warnings_have_no_actions(s: Step) -> str | None:
    """``warning`` means the operation may still succeed and normally has no actions while
    recovery is in progress. Severity is always explicit."""
    for _, _, rec in s.records():
        if rec.severity is Severity.WARNING and rec.actions:
            return f"warning {rec.id} recommends {[a.value for a in rec.actions]}"
    return None
