"""Invariants on which message carries a record and how a prompt is settled: a warning never
settles a turn, a turn-terminal failure rides the successful ``PromptResponse``, every other
record a ``session_info_update``, and a prompt is settled exactly once.
"""

from __future__ import annotations

from lifecycle.events import PromptErrorOut, PromptResponseOut, SessionUpdateOut
from lifecycle.ids import turn_error_id
from lifecycle.wire import Severity

from ..registry import REGISTRY
from ..steps import Step, outcome

__all__: list[str] = []

FAMILY = "carriers"
invariant = REGISTRY.invariant(FAMILY)


@invariant
def warning_never_settles(s: Step) -> str | None:
    """A warning does not end a turn."""
    for out, _, rec in s.records():
        if rec.severity is Severity.WARNING and isinstance(out, PromptResponseOut):
            return f"warning {rec.id} rode the PromptResponse"
    if s.name in ("api_retry", "model_fallback"):
        if any(isinstance(out, (PromptResponseOut, PromptErrorOut)) for out, _ in s.sent):
            return f"{s.name} settled the prompt"
        if s.was_running and not s.after.running:
            return f"{s.name} ended the running turn"
    return None


@invariant
def terminal_failure_on_prompt_response(s: Step) -> str | None:
    """A turn-terminal failure is attached to the successful ACP ``PromptResponse`` in ``_meta``;
    the response uses ``stopReason: end_turn``."""
    if not s.after.ledger.negotiated:
        return None
    for out, _ in s.sent:
        if isinstance(out, PromptErrorOut):
            return f"a capable client got a JSON-RPC error for {out.turn_id}"
        if isinstance(out, PromptResponseOut) and out.record is not None:
            rec = out.record
            if out.stop_reason != "end_turn" or rec.severity is not Severity.ERROR:
                return f"{rec.id} rode a PromptResponse with stopReason {out.stop_reason}, severity {rec.severity}"
            if rec.id != turn_error_id(out.turn_id):
                return f"the PromptResponse of {out.turn_id} carried {rec.id}"
    if s.failure_settle_expected:
        settles = [out for out, _ in s.sent if isinstance(out, PromptResponseOut)]
        if len(settles) != 1 or settles[0].record is None:
            return f"{s.name} ended the turn as a failure without a record on its PromptResponse"
    return None


@invariant
def other_records_on_session_info_update(s: Step) -> str | None:
    """Session-scoped, replay-restored, warning, and background incidents use a
    ``session_info_update``."""
    for out, _, rec in s.records():
        if isinstance(out, PromptResponseOut):
            continue
        kind = out.update.get("sessionUpdate") if isinstance(out, SessionUpdateOut) else None
        if kind != "session_info_update":
            return f"{rec.id} rode {type(out).__name__} {kind!r}"
    return None


@invariant
def settled_once(s: Step) -> str | None:
    """A prompt is settled exactly once (tests/conformance/FORMAT.md); a cancelled prompt is
    answered with ``stopReason: cancelled``."""
    seen = list(s.before.settled if s.before else ())
    for out, _ in s.sent:
        if isinstance(out, (PromptResponseOut, PromptErrorOut)):
            if out.turn_id in seen:
                return f"{out.turn_id} was settled twice"
            seen.append(out.turn_id)
            turn = s.before.ledger.turn if s.before else None
            if not s.was_running or turn is None or turn.turn_id != out.turn_id:
                return f"{s.name} settled {out.turn_id}, which was not the running prompt"
            if s.name == "cancel" and not (isinstance(out, PromptResponseOut) and out.stop_reason == "cancelled"):
                return f"cancel settled {out.turn_id} with {outcome(out)}"
    return None
