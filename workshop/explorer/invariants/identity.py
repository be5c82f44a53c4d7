"""Invariants on a record's identity and wire form: revisions only increase and never move an
entry, stale revisions are ignored, an id is never reused after its incident ended nor merged
with another, each id is in its namespace, and the wire record is the published one.

Rules: ids are read with :func:`lifecycle.ids.parse_id` (:mod:`.reading`), records with
:mod:`lifecycle.wire`.
"""

from __future__ import annotations

import itertools

from lifecycle.client import ClientProjection
from lifecycle.events import PromptResponseOut, SessionUpdateOut
from lifecycle.ids import IdKind, turn_error_id
from lifecycle.wire import AIR_VERSION, MalformedRecordError, SessionFailure, air_of, attach_record, read_record

from ..registry import REGISTRY
from ..steps import Step
from ..world import clone_value
from .reading import parsed_id

__all__: list[str] = []

FAMILY = "identity"
invariant = REGISTRY.invariant(FAMILY)


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
        parsed = parsed_id(rec.id)
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
