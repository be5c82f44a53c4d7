"""How the invariants and targets read what was published: an id as minted in the explored
session, and whether a record is a runtime loss.

Rules: ids are read only with :func:`lifecycle.ids.parse_id` (one home per concept), in the
explored session's id and epoch (:mod:`..world`); a record is recognised by what the spec says
it carries, never by how the ledger made it.
"""

from __future__ import annotations

from lifecycle.ids import IdKind, IncidentId, parse_id
from lifecycle.wire import Action as WireAction
from lifecycle.wire import Category, SessionFailure

from ..world import EPOCH, SESSION_ID

__all__ = ["is_loss_record", "kind_of", "parsed_id"]


def parsed_id(incident_id: str) -> IncidentId | None:
    """``incident_id`` read as minted in the explored session (its id and epoch)."""
    return parse_id(incident_id, session_id=SESSION_ID, epoch=EPOCH)


def kind_of(incident_id: str) -> IdKind | None:
    parsed = parsed_id(incident_id)
    return parsed.kind if parsed is not None else None


def is_loss_record(rec: SessionFailure) -> bool:
    """A runtime loss as the spec shows it: a ``connection`` failure that recommends ``new_session``."""
    return rec.category is Category.CONNECTION and WireAction.NEW_SESSION in rec.actions
