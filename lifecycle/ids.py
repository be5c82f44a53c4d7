"""Incident ids (spec: "Identity, revisions, and history"): built here and parsed here, nowhere else.

Rules
-----
``id`` identifies one occurrence, not an error type. Four namespaces, one builder each:

========================  =========================================  =================================
namespace                 shape                                      used for
========================  =========================================  =================================
turn                      ``<turnId>:error``                         a live turn failure (its
                                                                     ``api_retry`` warnings reuse it);
                                                                     a replayed failure whose user
                                                                     message is known (its UUID is the
                                                                     live turn id)
session                   ``<sessionId>:<epoch>:<seq>``              a session-scoped (background)
                                                                     incident
notice                    ``<sessionId>:notice:<epoch>:<seq>``       a notice
history                   ``<sessionId>:history-error:<messageId>``  a replayed failure without a
                                                                     preceding user message
========================  =========================================  =================================

The epoch is the adapter session's (fresh for every ``session/new`` or ``session/load``), so ids
never collide across adapter processes; ``seq`` counts within the epoch.

Theory of operation
-------------------
Turn ids, session ids and epochs are opaque strings that may themselves hold ``:``, so an id cannot
be parsed on its own. :func:`parse_id` is told the session id and epoch it was minted under (what
the ledger knows) and tries the namespaces from the most specific prefix to the least; anything else
is a turn id. The result is a small immutable :class:`IncidentId`; ``IncidentId.build()`` gives the
string back, so ``parse_id(i, ...).build() == i`` for every id this module builds.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "IdKind",
    "IncidentId",
    "history_error_id",
    "notice_id",
    "parse_id",
    "session_incident_id",
    "turn_error_id",
]

_ERROR = ":error"


def _text(part: str | int) -> str:
    # An id is shown to a client as JSON text: a lone surrogate (possible in a corrupt stored
    # uuid or a hostile turn id) cannot be encoded, so it becomes U+FFFD. Two parts that differ
    # only there may then build the same id; the ledger gives a repeated replay id a new sequence.
    text = str(part)
    if text.isascii():
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class IdKind(StrEnum):
    """The namespace an incident id belongs to."""

    TURN = "turn"
    SESSION = "session"
    NOTICE = "notice"
    HISTORY = "history"


def turn_error_id(turn_id: str) -> str:
    """``<turnId>:error``: a live turn failure, or a replayed one whose user message is known."""
    return f"{_text(turn_id)}{_ERROR}"


def session_incident_id(session_id: str, epoch: str, seq: int) -> str:
    """``<sessionId>:<epoch>:<seq>``: a session-scoped incident."""
    return f"{_text(session_id)}:{_text(epoch)}:{seq}"


def notice_id(session_id: str, epoch: str, seq: int) -> str:
    """``<sessionId>:notice:<epoch>:<seq>``: a notice (its own namespace)."""
    return f"{_text(session_id)}:notice:{_text(epoch)}:{seq}"


def history_error_id(session_id: str, message_id: str | int) -> str:
    """``<sessionId>:history-error:<messageUuid>``: replayed history with no preceding user message."""
    return f"{_text(session_id)}:history-error:{_text(message_id)}"


@dataclass(frozen=True, slots=True)
class IncidentId:
    """A parsed incident id. Fields not used by ``kind`` are ``None``."""

    kind: IdKind
    session_id: str | None = None
    epoch: str | None = None
    seq: int | None = None
    turn_id: str | None = None
    message_id: str | None = None

    def build(self) -> str:
        """The id string this value was parsed from."""
        if self.kind is IdKind.TURN:
            assert self.turn_id is not None
            return turn_error_id(self.turn_id)
        assert self.session_id is not None
        if self.kind is IdKind.HISTORY:
            assert self.message_id is not None
            return history_error_id(self.session_id, self.message_id)
        assert self.epoch is not None and self.seq is not None
        if self.kind is IdKind.NOTICE:
            return notice_id(self.session_id, self.epoch, self.seq)
        return session_incident_id(self.session_id, self.epoch, self.seq)


def _seq_after(text: str, prefix: str) -> int | None:
    if not text.startswith(prefix):
        return None
    rest = text[len(prefix) :]
    return int(rest) if rest.isascii() and rest.isdigit() and (rest == "0" or rest[0] != "0") else None


def parse_id(incident_id: str, *, session_id: str, epoch: str | None = None) -> IncidentId | None:
    """The namespace and parts of ``incident_id``, minted in ``session_id`` (and ``epoch``).

    Without ``epoch``, notice and session-scoped ids of any epoch are recognised (the epoch is what
    sits between the prefix and the last ``:``). Returns ``None`` when the id fits no namespace.
    """
    history = f"{session_id}:history-error:"
    if incident_id.startswith(history) and len(incident_id) > len(history):
        return IncidentId(IdKind.HISTORY, session_id=session_id, message_id=incident_id[len(history) :])
    for kind, prefix in ((IdKind.NOTICE, f"{session_id}:notice:"), (IdKind.SESSION, f"{session_id}:")):
        if not incident_id.startswith(prefix):
            continue
        rest = incident_id[len(prefix) :]
        if epoch is not None:
            seq = _seq_after(rest, f"{epoch}:")
            if seq is not None:
                return IncidentId(kind, session_id=session_id, epoch=epoch, seq=seq)
        else:
            head, sep, _ = rest.rpartition(":")
            seq = _seq_after(rest, f"{head}:") if sep and head else None
            if seq is not None:
                return IncidentId(kind, session_id=session_id, epoch=head, seq=seq)
    if incident_id.endswith(_ERROR) and len(incident_id) > len(_ERROR):
        return IncidentId(IdKind.TURN, turn_id=incident_id[: -len(_ERROR)])
    return None
