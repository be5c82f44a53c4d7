"""Invariants on issue 21's contract rules: a stop reason wins over ``is_error`` (rule 4), runtime
loss is never swallowed (rule 6), a notice's identity is its text and a newer one retires none
(rule 3), and a cancelled turn makes no record (rule 7); and issue 49.3's: a failure printed in a
message the provider replaced is superseded.
"""

from __future__ import annotations

from lifecycle.conditions import Recovery
from lifecycle.events import Outbound, PromptErrorOut, PromptResponseOut, SessionUpdateOut
from lifecycle.ids import IdKind
from lifecycle.wire import Category

from ..registry import REGISTRY
from ..steps import Step, outcome
from .reading import is_loss_record, kind_of

__all__: list[str] = []

FAMILY = "contract"
invariant = REGISTRY.invariant(FAMILY)


@invariant
def stop_reason_wins(s: Step) -> str | None:
    """A stop reason wins over ``is_error`` (contract rule 4): a result whose stop reason is
    ``max_tokens`` or ``refusal`` settles the prompt with exactly that stop reason, even when
    ``is_error`` is true and whatever Claude said before, and no record is published for it."""
    action = s.action
    if action is None or action.stop_reason is None:
        return None
    for _, _, rec in s.records():
        return f"{s.name} published {rec.id} r{rec.revision} ({rec.category.value})"
    before = {a.id for a in s.before_active}
    if new := [a.id for a in s.after.active if a.id not in before]:
        return f"{s.name} made {new} active"
    settles = [out for out, _ in s.sent if isinstance(out, (PromptResponseOut, PromptErrorOut))]
    settled_with = [out.stop_reason if isinstance(out, PromptResponseOut) else outcome(out) for out in settles]
    if s.was_running and settled_with != [action.stop_reason]:
        return f"{s.name} settled the prompt with {[outcome(o) for o in settles]}, expected {action.stop_reason}"
    return None


@invariant
def runtime_loss_never_swallowed(s: Step) -> str | None:
    """Runtime loss is never swallowed (contract rule 6): a query transport loss
    (``query_error``) or a worker-shutdown EOF is a ``connection`` failure with ``new_session``,
    whatever came before (a running, answered or failing turn, right after an error result, a
    cancelled turn still draining, no turn at all), and it stays active until
    ``runtime_replaced``."""
    action = s.action
    if action is None:
        return None
    for a in s.left:
        if a.category is Category.CONNECTION and a.recovery is Recovery.RUNTIME_REPLACED and not (
            action.recovers >= {Recovery.RUNTIME_REPLACED}
        ):
            return f"the connection failure {a.id} left the active set on {s.name}"
    if not action.loss or not s.after.ledger.negotiated:
        return None  # legacy: the JSON-RPC error of a running turn (legacy_unchanged)
    losses = [(ok, rec) for _, ok, rec in s.records() if is_loss_record(rec)]
    if not losses:
        shown = [f"{rec.id} ({rec.category.value}, {[a.value for a in rec.actions]})" for _, _, rec in s.records()]
        return f"{s.name} published no connection failure with new_session (published: {shown})"
    active = {a.id: a for a in s.after.active}
    for ok, rec in losses:
        got = active.get(rec.id)
        if ok and (got is None or got.recovery is not Recovery.RUNTIME_REPLACED):
            return f"{rec.id} was delivered for {s.name} but is not active until runtime_replaced"
    return None


@invariant
def notice_identity_is_its_text(s: Step) -> str | None:
    """"Consecutive updates for the same notice may reuse one id and increment its revision"; a
    notice with other text is a new occurrence with a new id, and "publishing another incident is
    not evidence that an older one recovered": a newer notice retires no older one (contract rule
    3, issue 21 rule 2; the explorer's notice bound stays far below
    ``lifecycle.ledger.MAX_ACTIVE_NOTICES``)."""
    if s.before is None:
        return None
    shown = {r.id: r for r in s.before.client.records}
    for _, ok, rec in s.records():
        if not ok or kind_of(rec.id) is not IdKind.NOTICE:
            continue
        old = shown.get(rec.id)
        if old is not None and (old.title, old.details) != (rec.title, rec.details):
            return f"notice {rec.id} r{rec.revision} reused for other text ({old.title!r} -> {rec.title!r})"
    for a in s.left:
        if a.state == "noticed":
            return f"{s.name} retired the notice {a.id}"
    return None


@invariant
def cancelled_turn_makes_no_record(s: Step) -> str | None:
    """A cancelled turn makes no record (contract rule 7): ``cancel`` answers the prompt
    ``cancelled`` and publishes nothing, and nothing the cancelled turn sends afterwards (Claude's
    failure, its error result, a late answer), until its result arrives or the next prompt
    starts, creates or changes a record or reaches the client as an ``agent_message_chunk``
    (issue 21, rule 8)."""
    action, before = s.action, s.before
    if action is None or before is None:
        return None
    cancelling = action.name == "cancel" and s.was_running
    draining = action.turn_frame and before.flow == "cancelled"
    if not (cancelling or draining):
        return None
    for _, _, rec in s.records():
        return f"{s.name} {'at' if cancelling else 'after'} cancel published {rec.id} r{rec.revision}"
    was = {a.id: a for a in s.before_active}
    for a in s.after.active:
        old = was.get(a.id)
        if old is None or (old.state, old.revision) != (a.state, a.revision):
            return f"{s.name} after cancel made {a.id} {a.state} r{a.revision}"
    if draining and (settled := [o.turn_id for o, _ in s.sent if isinstance(o, (PromptResponseOut, PromptErrorOut))]):
        return f"{s.name} after cancel settled {settled} again"
    if draining and any(_chunk(o) for o, _ in s.sent):
        return f"{s.name} after cancel forwarded the cancelled turn's text"
    return None


def _chunk(out: Outbound) -> bool:
    return isinstance(out, SessionUpdateOut) and out.update.get("sessionUpdate") == "agent_message_chunk"


@invariant
def replaced_failure_is_superseded(s: Step) -> str | None:
    """A failure printed in a message the provider then replaced is superseded (issue 49.3): it no
    longer settles the turn. A turn that holds no failure (none came, or the message that carried
    it was replaced) and ends with a successful result settles with no record and no error."""
    before = s.before
    if s.name != "result_success" or before is None or not s.was_running or before.turn_failure is not None:
        return None
    for out, _ in s.sent:
        if isinstance(out, PromptErrorOut) or (isinstance(out, PromptResponseOut) and out.record is not None):
            return f"result_success settled a turn that holds no failure with {outcome(out)}"
    return None


REGISTRY.add_targets(
    FAMILY,
    (
        "replaced_failure_superseded",
        "an answer replaced the message that carried the turn's held failure: the turn runs on, answered",
        lambda s: s.name == "replacing_answer" and s.before is not None and s.before.flow == "failing"
        and s.after.ledger.flow == "answered",
    ),
)
