"""The reachability targets of the explorer's families above (warnings, failures by recovery
policy, notices, replay, failed sends, settlements, the runtime, the questions), and the declared
``IncidentMachine`` transitions no path within the bounds can fire.

Rules
-----
* A target is something the exploration must reach, so that it is not vacuous: each is
  ``(name, description, reached)``, ``reached`` reading one
  :class:`~workshop.explorer.steps.Step`; the run fails when one is never reached. The families of
  issues 21, 31 and 32 (:mod:`.classification`, :mod:`.subagents`, :mod:`.windows`) register their
  own beside their invariants; these are the ones of the families of the core's rules, in the
  order the report lists them.
* :func:`beyond_bounds` names each declared transition the bounds cannot reach, with the reason:
  the run requires every other declared transition to fire.
"""

from __future__ import annotations

from lifecycle import ledger as ledger_mod
from lifecycle.conditions import Recovery
from lifecycle.events import PromptErrorOut, PromptResponseOut
from lifecycle.ids import IdKind, turn_error_id

from ..alphabet import question_id
from ..registry import REGISTRY
from ..steps import Step, outcome
from ..world import Bounds
from .reading import is_loss_record, kind_of

__all__ = ["beyond_bounds"]

FAMILY = "reachability"


def beyond_bounds(bounds: Bounds) -> dict[str, str]:
    """Declared ``IncidentMachine`` transitions no path within ``bounds`` can fire, each with the
    reason (the run does not require them to fire; anything else declared must)."""
    out: dict[str, str] = {}
    limit = getattr(ledger_mod, "MAX_ACTIVE_NOTICES", None)
    if isinstance(limit, int) and limit >= bounds.incidents:
        out["noticed --superseded--> historical"] = (
            f"only past {limit} active notices is the oldest let go, and counted "
            f"(lifecycle.ledger.MAX_ACTIVE_NOTICES); states with more than {bounds.incidents} "
            "active incidents are not expanded"
        )
    return out


def _active_with(s: Step, state: str, recovery: Recovery | None = None, min_revision: int = 1) -> bool:
    return any(
        a.state == state and (recovery is None or a.recovery is recovery) and a.revision >= min_revision
        for a in s.after.active
    )


def _loss_after(s: Step, flow: str) -> bool:
    """A delivered runtime-loss record is active after a loss in flow state ``flow``."""
    if s.action is None or not s.action.loss or s.before is None or s.before.flow != flow:
        return False
    active = {a.id for a in s.after.active}
    return any(ok and rec.id in active and is_loss_record(rec) for _, ok, rec in s.records())


def _error_result_before(s: Step) -> bool:
    """The last turn was settled by its error result, whose record is still active."""
    turn = s.before.ledger.turn if s.before else None
    return turn is not None and any(a.id == turn_error_id(turn.turn_id) for a in s.before_active)


def _question_was_open(s: Step) -> bool:
    """The current turn's permission question was open before this step."""
    return s.before is not None and s.before.ledger.question_open(question_id(s.before))


def _outcomes(s: Step) -> list[str]:
    return [outcome(o) for o, ok in s.sent if ok and isinstance(o, (PromptResponseOut, PromptErrorOut))]


REGISTRY.add_targets(
    FAMILY,
    ("warning_active", "an api_retry warning is active", lambda s: _active_with(s, "retrying")),
    ("warning_updated", "a warning was updated in place (revision 2)",
           lambda s: _active_with(s, "retrying", None, 2)),
    ("warning_became_error", "a terminal failure updated the turn's warning with a higher revision",
           lambda s: any(t[1:] == ("retrying", "failed", "fail") for t in s.recorder.transitions)),
    ("quota_active", "a usage-limit failure waits for a real model answer",
           lambda s: _active_with(s, "failed", Recovery.REAL_MODEL_ANSWER)),
    ("auth_active", "an authentication failure waits for auth_status",
           lambda s: _active_with(s, "failed", Recovery.AUTH_STATUS)),
    ("transport_active", "a transport loss waits for runtime replacement",
           lambda s: _active_with(s, "failed", Recovery.RUNTIME_REPLACED)),
    ("confirmed_attempt_active", "a turn-scoped failure waits for a confirmed attempt",
           lambda s: _active_with(s, "failed", Recovery.CONFIRMED_ATTEMPT)),
    (
        "background_failure",
        "a session-scoped (background) incident is active",
        lambda s: any(kind_of(a.id) is IdKind.SESSION for a in s.after.active),
    ),
    ("notice_active", "a model-fallback notice is active", lambda s: _active_with(s, "noticed")),
    ("notice_updated", "consecutive notices reused one id", lambda s: _active_with(s, "noticed", None, 2)),
    (
        "notices_kept",
        "a newer notice left an older one active (another notice is not evidence that it recovered)",
        lambda s: sum(a.state == "noticed" for a in s.after.active) >= 2,
    ),
    ("three_active", "three incidents are active at once", lambda s: len(s.after.active) >= 3),
    (
        "replay_restored",
        "a replayed usage limit is active",
        lambda s: s.root is not None and bool(s.after.active),
    ),
    (
        "replay_superseded",
        "an older replayed usage limit became history when a later one was restored",
        lambda s: s.root is not None and any(t[3] == "superseded" for t in s.recorder.transitions),
    ),
    (
        "replay_recovered",
        "a replayed usage limit was recovered by a later real answer in the history",
        lambda s: s.root is not None and any(t[3] == "real_model_answer" for t in s.recorder.transitions),
    ),
    (
        "failed_send",
        "a record's send failed and the client stayed behind",
        lambda s: any(not ok and out.record is not None for out, ok in s.sent),
    ),
    (
        "republished_after_failed_send",
        "a record was delivered for an id whose earlier send had failed",
        lambda s: any(ok and rec.revision >= 2 for out, ok, rec in s.records())
        and s.after.failures_used > 0
        and not s.fail_first,
    ),
    ("late_event_refused", "an event from the replaced runtime was refused",
           lambda s: s.action is not None and s.action.late and not s.accepted),
    ("prompt_cancelled", "a prompt was cancelled", lambda s: "cancelled" in _outcomes(s)),
    (
        "failure_on_prompt_response",
        "a turn-terminal failure rode the PromptResponse",
        lambda s: any(isinstance(o, PromptResponseOut) and o.record is not None and ok for o, ok in s.sent),
    ),
    ("legacy_internal_error", "a legacy client got JSON-RPC -32603", lambda s: "error -32603" in _outcomes(s)),
    ("legacy_auth_required", "a legacy client got JSON-RPC -32000", lambda s: "error -32000" in _outcomes(s)),
    ("second_turn", "a second prompt ran", lambda s: s.after.turns >= 2),
    (
        "max_tokens_wins",
        "an is_error result with stop_reason max_tokens settled its prompt max_tokens",
        lambda s: s.name == "result_max_tokens" and "max_tokens" in _outcomes(s),
    ),
    (
        "refusal_wins_over_claude_failure",
        "a refusal result settled a turn holding Claude's failure with stopReason refusal",
        lambda s: s.before is not None and s.before.flow == "failing" and "refusal" in _outcomes(s),
    ),
    (
        "loss_after_error_result",
        "a runtime loss right after a turn's error result is an active connection failure",
        lambda s: _loss_after(s, "idle") and _error_result_before(s),
    ),
    (
        "loss_while_failing",
        "a runtime loss between a failed turn's assistant error and its result is an active connection failure",
        lambda s: _loss_after(s, "failing"),
    ),
    (
        "cancelled_turn_failure_absorbed",
        "a cancelled turn's late assistant error arrived and was absorbed",
        lambda s: s.name == "cancelled_turn_failure" and s.accepted,
    ),
    (
        "cancelled_turn_result_absorbed",
        "a cancelled turn's error result arrived and ended the draining turn",
        lambda s: s.name == "result_error" and s.before is not None and s.before.flow == "cancelled",
    ),
    ("runtime_replaced", "the runtime was replaced", lambda s: s.after.ledger.runtime >= 1),
    (
        "question_withdrawn_by_cancel",
        "a cancel withdrew an open permission question",
        lambda s: s.name == "cancel" and _question_was_open(s),
    ),
    (
        "question_withdrawn_by_loss",
        "a runtime loss withdrew an open permission question",
        lambda s: s.action is not None and s.action.loss and _question_was_open(s),
    ),
    (
        "question_refused_while_draining",
        "a question asked while a cancelled turn drained was refused",
        lambda s: s.name == "permission_asked_outside_turn" and s.before is not None and s.before.flow == "cancelled",
    ),
)
