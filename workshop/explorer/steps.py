"""The explorer's steps: one letter of the alphabet applied to a configuration, and what happened.

Rules
-----
* :func:`run_step` feeds one action to a clone of a world (the world itself is left untouched)
  and delivers what the ledger plans, failing the first send when asked; :func:`make_root` builds
  a root's world with the machine answers its caller owns.
* A :class:`Step` is what every invariant and target reads: the configurations before and after,
  every planned message and whether it was delivered, the machine transitions that fired.
* After a step the environment's counters and the explorer's own copy of the turn (stepped by
  ``SessionFlow``'s declared transitions from the action's declared flow event) are updated.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from lifecycle.answers import MachineAnswers
from lifecycle.claude import from_stream_json, stream_events
from lifecycle.client import ClientProjection
from lifecycle.errors import LocalProtocolError
from lifecycle.events import (
    AuthStatus,
    Cancelled,
    Event,
    InternalError,
    Outbound,
    PermissionAnswered,
    PermissionAsked,
    PromptErrorOut,
    PromptResponseOut,
    PromptStarted,
    QueryEnded,
    QueryError,
    RateLimitWindow,
    RuntimeReplaced,
)
from lifecycle.history import load_history
from lifecycle.ledger import ActiveIncident, SessionLedger
from lifecycle.negotiation import negotiate
from lifecycle.session_flow import flow_transitions
from lifecycle.wire import SessionFailure

from .alphabet import Action, Line
from .roots import Root, root_lines
from .world import EPOCH, SESSION_ID, Recorder, World

__all__ = ["Step", "drain", "make_root", "outcome", "run_step"]


@dataclass(slots=True)
class Step:
    """One edge: the action, the configurations before and after, and what happened."""

    action: Action | None  # None: the root's setup
    before: World | None
    after: World
    sent: list[tuple[Outbound, bool]]  # every planned message, and whether it was delivered
    recorder: Recorder
    accepted: bool = True
    refused: LocalProtocolError | None = None
    error: BaseException | None = None
    root: Root | None = None
    fail_first: bool = False

    @property
    def name(self) -> str:
        return self.action.name if self.action else "root"

    def records(self) -> Iterator[tuple[Outbound, bool, SessionFailure]]:
        for out, ok in self.sent:
            if out.record is not None:
                yield out, ok, out.record

    @property
    def before_active(self) -> tuple[ActiveIncident, ...]:
        return self.before.active if self.before else ()

    @property
    def left(self) -> list[ActiveIncident]:
        """Incidents active before this step and not after it."""
        now = {a.id for a in self.after.active}
        return [a for a in self.before_active if a.id not in now]

    @property
    def was_running(self) -> bool:
        return self.before.running if self.before else False

    @property
    def failure_settle_expected(self) -> bool:
        """Spec reference: this step ends the running turn as a failure."""
        if self.action is None or self.before is None or not self.was_running:
            return False
        if self.action.settles_with_failure:
            return True
        return self.action.name == "result_success" and self.before.turn_failure is not None


def _events_for(line: Line, world: World) -> tuple[Event, ...]:
    if line.get("type") != "adapter":
        return stream_events(line)  # an assistant line that replaces messages makes two
    event = _event_for(line, world)
    return () if event is None else (event,)


def _event_for(line: Line, world: World) -> Event | None:
    what = line["event"]
    if what == "prompt":
        return PromptStarted(turn_id=line["turnId"])
    if what == "cancel":
        return Cancelled()
    if what == "query_error":
        return QueryError(message=line.get("message", ""))
    if what == "query_end":
        return QueryEnded()
    if what == "runtime_replaced":
        return RuntimeReplaced()
    if what == "authenticated":
        return AuthStatus(ok=line.get("ok") is True)
    if what == "late_event":
        return from_stream_json(line["line"])
    if what == "internal_error":
        return InternalError()
    if what == "permission_asked":
        return PermissionAsked(tool_use_id=line["toolUseId"])
    if what == "permission_answered":
        return PermissionAnswered(tool_use_id=line["toolUseId"])
    raise ValueError(f"no event for adapter line {what!r}")  # pragma: no cover


def drain(world: World, sent: list[tuple[Outbound, bool]]) -> None:
    ledger = world.ledger
    while (out := ledger.next_outbound()) is not None:
        if world.fail_next > 0:
            world.fail_next -= 1
            ledger.delivery_failed()
            sent.append((out, False))
        else:
            world.client.receive(out.to_jsonrpc())
            ledger.delivered()
            sent.append((out, True))


def outcome(out: Outbound) -> str:
    if isinstance(out, PromptErrorOut):
        return f"error {out.code}"
    assert isinstance(out, PromptResponseOut)
    return f"{out.stop_reason}{' +record' if out.record is not None else ''}"


def _finish(step: Step) -> None:
    """Update the environment counters and the monitor after a step."""
    w, action = step.after, step.action
    if action is not None:
        if action.name == "prompt" and step.accepted and step.refused is None:
            w.turns += 1
            w.turn_failure = None
        elif action.name in ("model_fallback", "refusal_fallback"):
            w.notices += 1
        elif action.name == "runtime_replaced":
            w.dead = False
        if action.ends_runtime:
            w.dead = True
        if action.failure_kind and step.was_running and step.before and step.before.turn_failure is None:
            w.turn_failure = action.failure_kind
        if action.flow_event is not None and step.accepted and step.before is not None:
            w.flow = _FLOW.get((step.before.flow, action.flow_event), step.before.flow)
            if action.flow_event == "failure_replaced" and step.before.flow == "failing":
                w.turn_failure = None  # the held failure's message was replaced: it settles nothing
            if action.flow_then is not None:
                w.flow = _FLOW.get((w.flow, action.flow_then), w.flow)
    settled = [out.turn_id for out, _ in step.sent if isinstance(out, (PromptResponseOut, PromptErrorOut))]
    if settled:
        w.settled = w.settled + tuple(settled)
    closed = {t[0] for t in step.recorder.transitions if t[2] == "historical"}
    if closed:
        w.closed = w.closed | closed


_FLOW = flow_transitions()


def run_step(before: World, action: Action, *, fail_first: bool = False) -> Step:
    """Apply ``action`` to a clone of ``before`` (``before`` itself is left untouched).

    ``fail_first``: the step's first send fails (``deliver_fails`` before the action's lines).
    """
    recorder = Recorder()
    world = before.clone(recorder)
    step = Step(action, before, world, [], recorder, fail_first=fail_first)
    if fail_first:
        world.fail_next = 1
        world.failures_used += 1
    now: int | None = None  # the letter's clock: a ``clock`` line stamps its window readings (issue 52.5)
    for line in action.lines(before):
        if line.get("type") == "adapter" and line.get("event") == "clock":
            now = line.get("now")
            continue
        try:
            for event in _events_for(line, world):
                if now is not None and isinstance(event, RateLimitWindow):
                    event = replace(event, observed_at=now)
                runtime = world.ledger.runtime - 1 if action.late else None
                step.accepted = world.ledger.feed(event, runtime=runtime) and step.accepted
                drain(world, step.sent)
        except LocalProtocolError as exc:
            step.refused = exc
            step.accepted = False
        except Exception as exc:
            step.error = exc
            return step
    _finish(step)
    return step


def make_root(root: Root, answers: MachineAnswers | None = None) -> Step:
    """The root configuration: ``initialize``, then ``session`` or ``load`` (a fresh ledger).

    ``answers``: the exploration's machine answers (asked of the machine class as it is now);
    ``None`` gives the root's ledger answers of its own.
    """
    recorder = Recorder()
    lines = root_lines(root)
    negotiated = negotiate(lines[0]["clientCapabilities"])
    ledger = SessionLedger(SESSION_ID, negotiated=negotiated, epoch=EPOCH, observer=recorder, answers=answers)
    world = World(ledger=ledger, client=ClientProjection(), root=root.name, max_turns=root.turns, windows=root.windows)
    step = Step(None, None, world, [], recorder, root=root)
    if root.history is not None:
        try:
            ledger.feed(load_history(root.history))
            drain(world, step.sent)
        except Exception as exc:
            step.error = exc
            return step
    _finish(step)
    return step
