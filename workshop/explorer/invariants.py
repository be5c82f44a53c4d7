"""The invariants (one spec sentence each) and the reachability targets of the explorer.

Rules
-----
* An invariant restates *what* the spec requires, never *how* the ledger decides: it reads one
  :class:`~workshop.explorer.actions.Step` (the configurations before and after, what was
  sent and delivered, the machine transitions that fired) and returns ``None`` or why it fails.
  Its docstring is the spec sentence it checks.
* ``recovery_reachable`` is a state property (no trap): :func:`check_escape` runs each active
  policy's escape script on a clone.
* A :class:`Target` is something the exploration must reach, so that it is not vacuous.
* Ids are read with :func:`lifecycle.ids.parse_id` and records with :mod:`lifecycle.wire`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass

from lifecycle import ledger as ledger_mod
from lifecycle.answers import RECOVERY_EVENTS
from lifecycle.client import ClientProjection
from lifecycle.conditions import Recovery
from lifecycle.events import (
    Assistant,
    AuthStatus,
    Cancelled,
    Event,
    Outbound,
    PromptErrorOut,
    PromptResponseOut,
    PromptStarted,
    RateLimitWindow,
    Result,
    RuntimeReplaced,
    SessionUpdateOut,
)
from lifecycle.ids import IdKind, IncidentId, parse_id, turn_error_id
from lifecycle.wire import (
    AIR_VERSION,
    Category,
    MalformedRecordError,
    SessionFailure,
    Severity,
    air_of,
    attach_record,
    read_record,
)
from lifecycle.wire import Action as WireAction

from .actions import Step, drain, outcome, question_id
from .classification import CLASSIFICATION_CHECKS, CLASSIFICATION_TARGETS
from .subagents import SUBAGENT_CHECKS, SUBAGENT_TARGETS
from .windows import WINDOW_CHECKS, WINDOW_TARGETS
from .world import (
    ANSWER_TEXT,
    EPOCH,
    SECRET_MARKERS,
    SESSION_ID,
    Bounds,
    Recorder,
    World,
    clone_value,
    ledger_fingerprint,
    ledger_flow_state,
)

__all__ = [
    "INVARIANTS",
    "RECOVERY_REACHABLE",
    "TARGETS",
    "Invariant",
    "Target",
    "beyond_bounds",
    "check_escape",
    "invariant",
]

# ---------------------------------------------------------------------------- invariants


@dataclass(frozen=True, slots=True)
class Invariant:
    name: str
    spec: str
    check: Callable[[Step], str | None]


INVARIANTS: list[Invariant] = []


def invariant(func: Callable[[Step], str | None]) -> Callable[[Step], str | None]:
    """Register ``func``; its docstring is the spec sentence it checks."""
    doc = " ".join((func.__doc__ or "").split())
    INVARIANTS.append(Invariant(func.__name__, doc, func))
    return func


@invariant
def no_crash(s: Step) -> str | None:
    """The core raises only its documented errors (``LocalProtocolError`` for an event that cannot
    apply now); anything else is a bug."""
    if s.error is not None:
        return f"{s.name} raised {type(s.error).__name__}: {s.error}"
    return None


@invariant
def refusals_change_nothing(s: Step) -> str | None:
    """An event from a replaced runtime is refused, never applied; an event that cannot apply now
    (a second concurrent prompt, a turn id already used) leaves the session unchanged
    (``SessionLedger.feed``: "The ledger is unchanged")."""
    if s.before is None or s.action is None:
        return None
    if s.action.late and s.accepted:
        return "an event from the replaced runtime was accepted"
    if s.action.name == "prompt_while_running" and s.refused is None:
        return "a second concurrent prompt was accepted"
    if s.action.name == "prompt_reusing_turn_id" and s.refused is None:
        return "a prompt reusing a turn id was accepted"
    if (not s.accepted or s.refused is not None) and (
        s.sent or ledger_fingerprint(s.after.ledger) != ledger_fingerprint(s.before.ledger)
    ):
        return "a refused event changed the session or sent something"
    return None


@invariant
def revisions_increase(s: Step) -> str | None:
    """The same ``id`` with a higher ``revision`` updates that entry in place without moving it:
    per id, delivered revisions strictly increase."""
    for rid, revs in s.after.client.received.items():
        if any(b <= a for a, b in itertools.pairwise(revs)):
            return f"{rid} delivered revisions {revs}"
    if s.before is not None:
        before = _positions(s.before.client)
        after = _positions(s.after.client)
        for rid, at in before.items():
            if after.get(rid) != at:
                return f"{rid} moved in the transcript from {at} to {after.get(rid)}"
    return None


def _positions(client: ClientProjection) -> dict[str, int]:
    return {e.record.id: i for i, e in enumerate(client.entries) if e.record is not None}


@invariant
def stale_revisions_ignored(s: Step) -> str | None:
    """The same or a lower revision is idempotently ignored by the client."""
    delivered = [(out, rec) for out, ok, rec in s.records() if ok]
    if not delivered:
        return None
    out, rec = delivered[-1]
    probe = s.after.client
    before = [(r.id, r.revision, r.title) for r in probe.records]
    replay = clone_value(probe, {}, s.recorder)
    replay.receive(out.to_jsonrpc())  # the same revision again
    if rec.revision > 1:
        lower = rec.model_copy(update={"revision": rec.revision - 1, "title": "stale"})
        replay.receive_meta(attach_record(None, lower), carrier="session_info_update")
    after = [(r.id, r.revision, r.title) for r in replay.records]
    return None if after == before else f"re-delivering {rec.id} r{rec.revision} changed the client: {after}"


@invariant
def new_id_per_occurrence(s: Step) -> str | None:
    """A later independent occurrence uses a new ``id``, even when its category and text are
    identical: no record is ever published again for an id whose incident ended."""
    if s.before is None:
        return None
    for _, _, rec in s.records():
        if rec.id in s.before.closed:
            return f"a record for {rec.id} (revision {rec.revision}) was published after it ended"
    return None


@invariant
def ids_never_merged(s: Step) -> str | None:
    """Different ids are never deduplicated by comparing title or category: every id the client
    received is its own transcript entry."""
    client = s.after.client
    if len(client.records) != len(client.received):
        return f"{len(client.received)} ids received but {len(client.records)} entries shown"
    return None


def _parsed(incident_id: str) -> IncidentId | None:
    """``incident_id`` read as minted in the explored session (its id and epoch)."""
    return parse_id(incident_id, session_id=SESSION_ID, epoch=EPOCH)


def _kind_of(incident_id: str) -> IdKind | None:
    parsed = _parsed(incident_id)
    return parsed.kind if parsed is not None else None


def _replayed_turn_ids(s: Step) -> frozenset[str]:
    """The live turn ids a replay may use: the UUIDs of the history's user messages."""
    history = s.root.history if s.root is not None else None
    return frozenset(h["uuid"] for h in history or () if h["type"] == "user")


@invariant
def id_namespaces(s: Step) -> str | None:
    """Live turn failures use ``<turnId>:error``. Session-scoped incidents use an adapter-session
    epoch plus an incident sequence. Notices have their own ``:notice:`` namespace."""
    for out, _, rec in s.records():
        name = s.name
        parsed = _parsed(rec.id)
        kind = parsed.kind if parsed is not None else None
        if isinstance(out, PromptResponseOut):
            ok, expected = rec.id == turn_error_id(out.turn_id), repr(turn_error_id(out.turn_id))
        elif name in ("model_fallback", "refusal_fallback"):
            ok, expected = kind is IdKind.NOTICE, f"a {IdKind.NOTICE} id"
        elif name == "api_retry":
            turn = s.after.ledger.turn
            want = turn_error_id(turn.turn_id) if turn else None
            ok, expected = want is not None and rec.id == want, repr(want) if want else "<no turn>"
        elif name == "root":
            # A replayed failure: the turn id of the user message before it, or the history namespace.
            users = _replayed_turn_ids(s)
            ok = kind is IdKind.HISTORY or (kind is IdKind.TURN and parsed is not None and parsed.turn_id in users)
            expected = f"a {IdKind.HISTORY} id or a {IdKind.TURN} id of a user message ({sorted(users)})"
        else:
            ok, expected = kind is IdKind.SESSION, f"a {IdKind.SESSION} id"
        if not ok:
            return f"{name} published id {rec.id!r} ({f'a {kind} id' if kind else 'no namespace'}), expected {expected}"
    return None


@invariant
def wire_valid(s: Step) -> str | None:
    """The record is placed under ``_meta.jetbrains.air.sessionFailure`` next to ``version: 1``,
    validates against the wire model, and the schema is identical on both carriers: every
    message's wire record (if any) is exactly the record the adapter published."""
    for out, _ in s.sent:
        msg = out.to_jsonrpc()
        if isinstance(out, PromptResponseOut):
            meta = msg.get("result", {}).get("_meta")
        elif isinstance(out, SessionUpdateOut):
            meta = msg.get("params", {}).get("update", {}).get("_meta")
        else:
            meta = msg.get("error", {}).get("_meta")
        try:
            parsed = read_record(meta)
        except MalformedRecordError as exc:
            return f"{type(out).__name__}: {exc}"
        rec = out.record
        if parsed != rec:
            shown = f"{parsed.id} r{parsed.revision}" if parsed else None
            return f"{type(out).__name__} carries {shown} on the wire but published {rec.id if rec else None}"
        if rec is None:
            continue
        air = air_of(meta)
        if air is None or air.get("version") != AIR_VERSION:
            return f"{rec.id}: not next to version {AIR_VERSION}"
        if SessionFailure.model_validate(rec.to_wire()) != rec:
            return f"{rec.id}: the record does not round-trip through the wire model"
    return None


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
        auth = (held == "auth" or (held is None and s.name == "login_result")) and not (s.action and s.action.loss)
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


@invariant
def replay_latest_only(s: Step) -> str | None:
    """Every recognized occurrence is replayed as a typed record at its original transcript
    position. The latest matching message stays active until a later real-model answer proves
    recovery; older and recovered records remain historical typed entries. Legacy clients
    receive the original transcript and no typed record."""
    root = s.root
    if root is None or root.history is None:
        return None
    records = [rec for _, _, rec in s.records()]
    if not root.negotiated:
        texts = [e.text for e in s.after.client.entries if e.kind == "agent"]
        expected = [
            h["message"]["content"][0]["text"] for h in root.history if h["type"] == "assistant"
        ]
        if records or texts != expected:
            return f"the legacy replay showed {texts} and {len(records)} record(s)"
        return None
    if len(records) != root.limits:
        return f"{len(records)} typed record(s) replayed for {root.limits} usage-limit message(s)"
    kinds = [e.kind for e in s.after.client.entries]
    expected_kinds = [
        "user" if h["type"] == "user" else ("record" if h["message"]["model"] == "<synthetic>" else "agent")
        for h in root.history
    ]
    if kinds != expected_kinds:
        return f"replayed transcript order {kinds}, expected {expected_kinds}"
    active = [a.id for a in s.after.active]
    want = [] if root.active_limit is None else [records[root.active_limit].id]
    if active != want:
        return f"after replay {active} are active, expected {want}"
    return None


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


def _is_loss_record(rec: SessionFailure) -> bool:
    return rec.category is Category.CONNECTION and WireAction.NEW_SESSION in rec.actions


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
    losses = [(ok, rec) for _, ok, rec in s.records() if _is_loss_record(rec)]
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
        if not ok or _kind_of(rec.id) is not IdKind.NOTICE:
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
def question_open_only_while_its_turn_runs(s: Step) -> str | None:
    """A question is open only while its turn runs: Claude Code's permission question is opened
    (the client may be asked) only inside a running turn and stays open until it is answered;
    leaving ``in_turn`` (cancel, runtime loss, any settlement) withdraws every open question, and
    a question asked outside a running turn (idle, a cancelled turn still draining) is refused
    without asking the client."""
    after = s.after
    ledger = after.ledger
    current = question_id(after)
    for qid in {question_id(s.before) if s.before else current, current}:
        if not ledger.question_open(qid):
            continue
        if not after.running:
            return f"the question {qid} is open after {s.name}, though no turn runs ({ledger.flow})"
        if qid != current:
            return f"the question {qid} of an earlier turn is open in {current}'s turn after {s.name}"
    if s.name == "permission_asked" and s.refused is None and not ledger.question_open(current):
        return f"the question {current} asked in a running turn was not opened"
    if s.name == "permission_answered" and ledger.question_open(current):
        return f"the question {current} is still open after its answer"
    return None


@invariant
def permission_events_publish_nothing(s: Step) -> str | None:
    """Permission events are never incidents: a question (asked or refused) and its answer publish
    nothing, settle no prompt, change no incident and move the turn nowhere."""
    if s.action is None or not s.action.permission or s.before is None:
        return None
    if s.sent:
        return f"{s.name} sent {[type(o).__name__ for o, _ in s.sent]}"
    if s.recorder.transitions:
        return f"{s.name} moved incidents: {[(t[0], t[3]) for t in s.recorder.transitions]}"
    before = [(a.id, a.state, a.revision) for a in s.before_active]
    after = [(a.id, a.state, a.revision) for a in s.after.active]
    if before != after:
        return f"{s.name} changed the active incidents from {before} to {after}"
    if s.after.ledger.flow != s.before.ledger.flow:
        return f"{s.name} moved the turn from {s.before.ledger.flow} to {s.after.ledger.flow}"
    return None


@invariant
def answer_after_its_turn_not_honoured(s: Step) -> str | None:
    """An answer after its turn left ``in_turn`` is not honoured: the question was withdrawn when
    the turn was cancelled, lost its runtime or settled, so the answer finds it closed and changes
    nothing."""
    action, before = s.action, s.before
    if action is None or before is None or action.flow_event != "permission_answered" or s.was_running:
        return None
    qid = question_id(before)
    if before.ledger.question_open(qid):
        return f"the question {qid} was still open for {s.name} after its turn left in_turn ({before.ledger.flow})"
    if ledger_fingerprint(s.after.ledger) != ledger_fingerprint(before.ledger):
        return f"{s.name} to {qid} changed the session after its turn left in_turn"
    return None


@invariant
def session_flow_is_the_truth(s: Step) -> str | None:
    """The prompt turn moves only as ``lifecycle.session_flow.SessionFlow`` declares: each input
    is the flow event the spec makes of it (a stop-reason result ``result_stop``, a thrown query or
    a worker-shutdown EOF ``transport_lost``, any other EOF ``stream_ended``, a local-command
    answer no event at all), and the ledger's flow state after every step is the declared
    transition's target (unchanged when none is declared)."""
    actual = ledger_flow_state(s.after.ledger)
    if s.after.flow != actual:
        return f"SessionFlow says {s.after.flow!r} after {s.name}, the ledger's turn is {actual!r}"
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
    lambda s: None,  # a state property: see Explorer._escape
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


# ---------------------------------------------------------------------------- reachability targets


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


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    description: str
    reached: Callable[[Step], bool]


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
    return any(ok and rec.id in active and _is_loss_record(rec) for _, ok, rec in s.records())


def _error_result_before(s: Step) -> bool:
    """The last turn was settled by its error result, whose record is still active."""
    turn = s.before.ledger.turn if s.before else None
    return turn is not None and any(a.id == turn_error_id(turn.turn_id) for a in s.before_active)


def _question_was_open(s: Step) -> bool:
    """The current turn's permission question was open before this step."""
    return s.before is not None and s.before.ledger.question_open(question_id(s.before))


def _outcomes(s: Step) -> list[str]:
    return [outcome(o) for o, ok in s.sent if ok and isinstance(o, (PromptResponseOut, PromptErrorOut))]


TARGETS: tuple[Target, ...] = (
    Target("warning_active", "an api_retry warning is active", lambda s: _active_with(s, "retrying")),
    Target("warning_updated", "a warning was updated in place (revision 2)",
           lambda s: _active_with(s, "retrying", None, 2)),
    Target("warning_became_error", "a terminal failure updated the turn's warning with a higher revision",
           lambda s: any(t[1:] == ("retrying", "failed", "fail") for t in s.recorder.transitions)),
    Target("quota_active", "a usage-limit failure waits for a real model answer",
           lambda s: _active_with(s, "failed", Recovery.REAL_MODEL_ANSWER)),
    Target("auth_active", "an authentication failure waits for auth_status",
           lambda s: _active_with(s, "failed", Recovery.AUTH_STATUS)),
    Target("transport_active", "a transport loss waits for runtime replacement",
           lambda s: _active_with(s, "failed", Recovery.RUNTIME_REPLACED)),
    Target("confirmed_attempt_active", "a turn-scoped failure waits for a confirmed attempt",
           lambda s: _active_with(s, "failed", Recovery.CONFIRMED_ATTEMPT)),
    Target(
        "background_failure",
        "a session-scoped (background) incident is active",
        lambda s: any(_kind_of(a.id) is IdKind.SESSION for a in s.after.active),
    ),
    Target("notice_active", "a model-fallback notice is active", lambda s: _active_with(s, "noticed")),
    Target("notice_updated", "consecutive notices reused one id", lambda s: _active_with(s, "noticed", None, 2)),
    Target(
        "notices_kept",
        "a newer notice left an older one active (another notice is not evidence that it recovered)",
        lambda s: sum(a.state == "noticed" for a in s.after.active) >= 2,
    ),
    Target("three_active", "three incidents are active at once", lambda s: len(s.after.active) >= 3),
    Target(
        "replay_restored",
        "a replayed usage limit is active",
        lambda s: s.root is not None and bool(s.after.active),
    ),
    Target(
        "replay_superseded",
        "an older replayed usage limit became history when a later one was restored",
        lambda s: s.root is not None and any(t[3] == "superseded" for t in s.recorder.transitions),
    ),
    Target(
        "replay_recovered",
        "a replayed usage limit was recovered by a later real answer in the history",
        lambda s: s.root is not None and any(t[3] == "real_model_answer" for t in s.recorder.transitions),
    ),
    Target(
        "failed_send",
        "a record's send failed and the client stayed behind",
        lambda s: any(not ok and out.record is not None for out, ok in s.sent),
    ),
    Target(
        "republished_after_failed_send",
        "a record was delivered for an id whose earlier send had failed",
        lambda s: any(ok and rec.revision >= 2 for out, ok, rec in s.records())
        and s.after.failures_used > 0
        and not s.fail_first,
    ),
    Target("late_event_refused", "an event from the replaced runtime was refused",
           lambda s: s.action is not None and s.action.late and not s.accepted),
    Target("prompt_cancelled", "a prompt was cancelled", lambda s: "cancelled" in _outcomes(s)),
    Target(
        "failure_on_prompt_response",
        "a turn-terminal failure rode the PromptResponse",
        lambda s: any(isinstance(o, PromptResponseOut) and o.record is not None and ok for o, ok in s.sent),
    ),
    Target("legacy_internal_error", "a legacy client got JSON-RPC -32603", lambda s: "error -32603" in _outcomes(s)),
    Target("legacy_auth_required", "a legacy client got JSON-RPC -32000", lambda s: "error -32000" in _outcomes(s)),
    Target("second_turn", "a second prompt ran", lambda s: s.after.turns >= 2),
    Target(
        "max_tokens_wins",
        "an is_error result with stop_reason max_tokens settled its prompt max_tokens",
        lambda s: s.name == "result_max_tokens" and "max_tokens" in _outcomes(s),
    ),
    Target(
        "refusal_wins_over_claude_failure",
        "a refusal result settled a turn holding Claude's failure with stopReason refusal",
        lambda s: s.before is not None and s.before.flow == "failing" and "refusal" in _outcomes(s),
    ),
    Target(
        "loss_after_error_result",
        "a runtime loss right after a turn's error result is an active connection failure",
        lambda s: _loss_after(s, "idle") and _error_result_before(s),
    ),
    Target(
        "loss_while_failing",
        "a runtime loss between a failed turn's assistant error and its result is an active connection failure",
        lambda s: _loss_after(s, "failing"),
    ),
    Target(
        "cancelled_turn_failure_absorbed",
        "a cancelled turn's late assistant error arrived and was absorbed",
        lambda s: s.name == "cancelled_turn_failure" and s.accepted,
    ),
    Target(
        "cancelled_turn_result_absorbed",
        "a cancelled turn's error result arrived and ended the draining turn",
        lambda s: s.name == "result_error" and s.before is not None and s.before.flow == "cancelled",
    ),
    Target("runtime_replaced", "the runtime was replaced", lambda s: s.after.ledger.runtime >= 1),
    Target(
        "question_withdrawn_by_cancel",
        "a cancel withdrew an open permission question",
        lambda s: s.name == "cancel" and _question_was_open(s),
    ),
    Target(
        "question_withdrawn_by_loss",
        "a runtime loss withdrew an open permission question",
        lambda s: s.action is not None and s.action.loss and _question_was_open(s),
    ),
    Target(
        "question_refused_while_draining",
        "a question asked while a cancelled turn drained was refused",
        lambda s: s.name == "permission_asked_outside_turn" and s.before is not None and s.before.flow == "cancelled",
    ),
)


# Issue 21's (.classification), issue 32's (.windows), issue 31's (.subagents):
for _check in CLASSIFICATION_CHECKS + WINDOW_CHECKS + SUBAGENT_CHECKS:
    invariant(_check)
TARGETS = TARGETS + tuple(Target(*t) for t in CLASSIFICATION_TARGETS + WINDOW_TARGETS + SUBAGENT_TARGETS)
