"""Invariants on usage-limit windows (issue 32: "a rate-limit window is an incident of its own").

Rules
-----
* Each invariant restates one rule of the issue or the spec (its docstring) and reads one
  :class:`~workshop.explorer.steps.Step`, as in every family of :mod:`.invariants`. A window's
  entry is recognised by the title docs/acp-agent.md documents for the alphabet's 5-hour window
  (:data:`WINDOW_TITLES`, literals), never by how the ledger keeps it.
* Its reachability targets show each invariant was exercised (a warning shown, updated in place,
  ended by ``allowed``; beside a turn and its failure).
"""

from __future__ import annotations

from lifecycle.events import PromptErrorOut, PromptResponseOut, SessionUpdateOut
from lifecycle.ids import IdKind
from lifecycle.wire import Category, SessionFailure, Severity

from ..registry import REGISTRY
from ..steps import Step
from .reading import parsed_id

__all__ = ["WINDOW_TITLES"]

FAMILY = "windows"
invariant = REGISTRY.invariant(FAMILY)


#: The title of each of the alphabet's warnings (docs/acp-agent.md, "Rate-limit windows": the
#: window resets at 1796421723, 10:02 pm UTC, and the explorer's ledgers show UTC).
WINDOW_TITLES: dict[str, str] = {
    "window_warning": "You've used 90% of your 5-hour limit · resets 10:02 pm (UTC)",
    "window_warning_higher": "You've used 95% of your 5-hour limit · resets 10:02 pm (UTC)",
}
_WINDOW_ENTRY = "of your 5-hour limit"


def _is_window(rec: SessionFailure) -> bool:
    return _WINDOW_ENTRY in rec.title


def _open_window_entries(s: Step, before: bool = False) -> list[SessionFailure]:
    world = s.before if before else s.after
    if world is None:
        return []
    return [r for r in world.client.records if _is_window(r) and r.id not in world.closed]


@invariant
def one_active_entry_per_window(s: Step) -> str | None:
    """"One id per window (five-hour and weekly are two entries)": at most one entry of a window is
    open in the client, and the ledger holds at most one window warning active (where none is
    active, ``belief_equals_client`` already holds the client to no open entry)."""
    warned = [a.id for a in s.after.active if a.state == "warned"]
    if not warned and not (s.action is not None and s.action.window):
        return None
    shown = [r.id for r in _open_window_entries(s)]
    if len(shown) > 1 or len(warned) > 1:
        return f"the 5-hour window has open entries {shown} and active warnings {warned}"
    return None


@invariant
def window_warning_is_its_own_incident(s: Step) -> str | None:
    """A window in ``allowed_warning`` publishes a record to a capable client: category ``limit``,
    severity ``warning``, no actions, carrier ``session_info_update``, a session-scoped id; a new
    share is a higher revision of the same id; an identical repeat publishes nothing ("a producer
    may publish a higher revision only when it has a real new user-facing status to show")."""
    if s.action is None or s.name not in WINDOW_TITLES or not s.after.ledger.negotiated:
        return None
    title = WINDOW_TITLES[s.name]
    was = _open_window_entries(s, before=True)
    records = [(out, rec) for out, _, rec in s.records()]
    if was and was[0].title == title:
        return f"an identical repeat published {[r.id for _, r in records]}" if s.sent else None
    if len(records) != 1 or len(s.sent) != 1:
        return f"{s.name} sent {len(s.sent)} message(s) with {len(records)} record(s), expected one record"
    out, rec = records[0]
    kind = out.update.get("sessionUpdate") if isinstance(out, SessionUpdateOut) else None
    parsed = parsed_id(rec.id)
    shown = (rec.category, rec.severity, list(rec.actions), kind, parsed.kind if parsed else None, rec.title)
    want: tuple[object, ...] = (Category.LIMIT, Severity.WARNING, [], "session_info_update", IdKind.SESSION, title)
    if shown != want:
        return f"{s.name} published {shown}, expected {want}"
    if was and (rec.id, rec.revision) != (was[0].id, was[0].revision + 1):
        return f"{s.name} published {rec.id} r{rec.revision}, expected {was[0].id} r{was[0].revision + 1}"
    return None


@invariant
def allowed_ends_the_window(s: Step) -> str | None:
    """"The window's return to ``allowed`` ... ends the incident silently (no tombstone)", and
    "``allowed`` with no active incident publishes nothing": nothing is sent, and no window warning
    is active or open afterwards."""
    if s.name != "window_allowed":
        return None
    if s.sent:
        return f"window_allowed sent {len(s.sent)} message(s)"
    if still := [a.id for a in s.after.active if a.state == "warned"] + [r.id for r in _open_window_entries(s)]:
        return f"window_allowed left {still} active"
    return None


@invariant
def window_never_the_turns_failure(s: Step) -> str | None:
    """A window is the session's, "never the turn's failure": its report never settles a prompt,
    never changes the turn's flow, and ends no other incident."""
    if s.action is None or not s.action.window or s.before is None:
        return None
    if settled := [o.turn_id for o, _ in s.sent if isinstance(o, (PromptResponseOut, PromptErrorOut))]:
        return f"{s.name} settled {settled}"
    if s.after.ledger.flow != s.before.ledger.flow:
        return f"{s.name} moved the turn from {s.before.ledger.flow!r} to {s.after.ledger.flow!r}"
    if ended := [a.id for a in s.left if a.state != "warned"]:
        return f"{s.name} ended {ended}"
    return None


def _window_step(s: Step, flow: str) -> bool:
    """A window's warning delivered in a step that began with the turn in ``flow``."""
    delivered = any(ok and _is_window(rec) for _, ok, rec in s.records())
    return s.action is not None and s.action.window and s.before is not None and s.before.flow == flow and delivered


@invariant
def a_past_reset_is_never_titled_as_upcoming(s: Step) -> str | None:
    """Issue 52.5: a window whose reset is in the past is not titled as if it were upcoming, it is
    ended: a reading made after its window's reset publishes nothing, and no warning of the window
    stays open or active afterwards."""
    if s.name != "window_warning_past":
        return None
    if s.sent:
        return f"a reading of a past reset sent {len(s.sent)} message(s)"
    if _open_window_entries(s) or any(a.state == "warned" for a in s.after.active):
        return "a window's warning stays open after a reading of its past reset"
    return None


REGISTRY.add_targets(
    FAMILY,
    ("window_warning_active", "a usage-limit window's warning is active",
     lambda s: any(a.state == "warned" for a in s.after.active)),
    ("window_updated", "a window's warning was updated in place (revision 2)",
     lambda s: any(a.state == "warned" and a.revision >= 2 for a in s.after.active)),
    ("window_repeat_silent", "an identical window report published nothing",
     lambda s: s.name in WINDOW_TITLES and bool(_open_window_entries(s, before=True)) and not s.sent
     and _open_window_entries(s, before=True)[0].title == WINDOW_TITLES[s.name]),
    ("window_past_reset_ended", "a reading after its window's reset ended the window's warning",
     lambda s: s.name == "window_warning_past" and bool(_open_window_entries(s, before=True))
     and not _open_window_entries(s)),
    ("window_ended_by_allowed", "a window's return to allowed ended its warning",
     lambda s: any(t[3] == "window_reset" for t in s.recorder.transitions)),
    ("window_in_turn", "a window's warning was shown while a prompt ran", lambda s: _window_step(s, "running")),
    ("window_between_turns", "a window's warning was shown between turns", lambda s: _window_step(s, "idle")),
    ("window_while_draining", "a window's warning was shown while a cancelled turn drained",
     lambda s: _window_step(s, "cancelled")),
    ("window_beside_turn_failure", "a window's warning is active beside a turn's failure",
     lambda s: {"warned", "failed"} <= {a.state for a in s.after.active}),
)
