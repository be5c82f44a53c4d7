"""Invariants on recovery: an incident leaves the active set only through its own policy's event,
never comes back, and recovers silently; and the state property that no active incident is
trapped (:data:`RECOVERY_REACHABLE`, checked by :func:`check_escape` on every new state).

Rules: the escape scripts are the spec's table of which events end an incident under each
policy, run on a clone; a notice (``never``) has none.
"""

from __future__ import annotations

from lifecycle.answers import RECOVERY_EVENTS
from lifecycle.conditions import Recovery
from lifecycle.events import (
    Assistant,
    AuthStatus,
    Cancelled,
    Event,
    PromptStarted,
    RateLimitWindow,
    Result,
    RuntimeReplaced,
)

from ..registry import REGISTRY, Invariant
from ..steps import Step, drain
from ..world import ANSWER_TEXT, Recorder, World

__all__ = ["RECOVERY_REACHABLE", "check_escape"]

FAMILY = "recovery"
invariant = REGISTRY.invariant(FAMILY)


@invariant
def recovery_by_own_policy(s: Step) -> str | None:
    """An incident leaves the active set only through its own recovery policy's event: restored
    quota at a real model answer, authentication at a successful ``auth_status``, transport loss
    at runtime replacement, other turn-scoped failures at a later confirmed attempt; notices are
    not cleared by generic success. Publishing another incident is not evidence that an older
    one recovered."""
    if s.action is None:
        return None
    for inc in s.left:
        if inc.recovery not in s.action.recovers:
            return f"{inc.id} ({inc.recovery.value}) left the active set on {s.name}"
        event = RECOVERY_EVENTS[inc.recovery]
        if not any(t[0] == inc.id and t[2] == "historical" and t[3] == event for t in s.recorder.transitions):
            return f"{inc.id} left the active set without its machine's {event} transition"
    return None


@invariant
def historical_never_back(s: Step) -> str | None:
    """Resolved records remain in transcript history. Recovery removes only the adapter's internal
    active state; it does not delete or rewrite the historical entry."""
    if s.before is None:
        return None
    active = {a.id for a in s.after.active}
    back = active & s.before.closed
    if back:
        return f"{sorted(back)} came back into the active set"
    before = {r.id: r for r in s.before.client.records}
    after = {r.id: r for r in s.after.client.records}
    for rid in s.before.closed:
        if rid in before and after.get(rid) != before[rid]:
            return f"the historical entry {rid} was deleted or rewritten"
    return None


@invariant
def recovery_publishes_nothing(s: Step) -> str | None:
    """Recovery removes only the adapter's internal active state; it does not publish a clear
    tombstone."""
    left = {a.id for a in s.left}
    for _, _, rec in s.records():
        if rec.id in left:
            return f"{rec.id} was published in the step it recovered"
    if s.action is not None and s.action.publishes_nothing and s.sent:
        return f"{s.name} sent {len(s.sent)} message(s)"
    return None


#: Escape scripts: the events that, per the spec, end an incident under each policy (a notice,
#: ``never``, has none: notices are not cleared by generic success, and another notice is not
#: evidence that an older one recovered).
def _escape_events(policy: Recovery) -> tuple[Event, ...]:
    prompt = PromptStarted(turn_id="t-escape")
    answer = Assistant(text=ANSWER_TEXT, model="claude-opus-4-5")
    ok = Result(subtype="success", is_error=False, stop_reason="end_turn")
    scripts: dict[Recovery, tuple[Event, ...]] = {
        Recovery.AUTH_STATUS: (AuthStatus(ok=True),),
        Recovery.RUNTIME_REPLACED: (RuntimeReplaced(),),
        Recovery.REAL_MODEL_ANSWER: (prompt, answer),
        Recovery.CONFIRMED_ATTEMPT: (prompt, answer, ok),
        Recovery.NEVER: (),
        Recovery.WINDOW_RESET: (RateLimitWindow(window="five_hour", status="allowed"),),
    }
    return scripts[policy]


RECOVERY_REACHABLE = Invariant(
    "recovery_reachable",
    "No trap: every active incident still leaves the active set through its own policy's event "
    "(restored quota remains active until a real model answer; authentication until successful "
    "auth_status; transport loss until runtime replacement; other turn-scoped failures until a "
    "later confirmed attempt; a notice has no recovery event).",
    lambda s: None,  # a state property: see Explorer._state_ok
    FAMILY,
)


def check_escape(world: World) -> str | None:
    """The escape check of one configuration: None, or why an active incident cannot recover."""
    active = world.active
    for policy in sorted({a.recovery for a in active}, key=lambda p: p.value):
        events: tuple[Event, ...] = _escape_events(policy)
        if not events:
            continue
        recorder = Recorder()
        w = world.clone(recorder)
        if w.running:
            events = (Cancelled(), *events)
        try:
            for ev in events:
                w.ledger.feed(ev)
                drain(w, [])
        except Exception as exc:
            return f"recovering {policy.value} incidents raised {type(exc).__name__}: {exc}"
        remaining = {a.id for a in w.ledger.active}
        stuck = [a.id for a in active if a.recovery is policy and a.id in remaining]
        if stuck:
            names = " ".join(type(e).__name__ for e in events)
            return f"{stuck} ({policy.value}) stay active after {names}"
    return None
