"""Invariants on a subagent's traffic (issue 31: "a subagent's or background job's failure is not
the prompt's failure").

Rules
-----
* A subagent's message names the ``Agent`` call that ran it (``parent_tool_use_id``); Claude Code
  keeps it out of the session's transcript (``<session>/subagents/``). It is not the top-level
  transcript, so it is neither the turn's failure nor a record of its own: its failure shows on
  its ``Agent`` tool call (``failed``, with Claude Code's message), and the parent's own request
  meets the same limit as the turn's failure if the limit holds (docs/acp-agent.md).
* Its reachability targets show the invariant was exercised: during a turn, and outside one (a
  background subagent).
"""

from __future__ import annotations

from ..registry import REGISTRY
from ..steps import Step
from ..world import ledger_fingerprint

__all__: list[str] = []

FAMILY = "subagents"
invariant = REGISTRY.invariant(FAMILY)

#: The action of the alphabet that is a subagent's message.
SUBAGENT_ACTION = "subagent_failure"


@invariant
def subagent_traffic_changes_nothing(s: Step) -> str | None:
    """A subagent's message is not the top-level transcript: its failure (a usage limit) neither
    sends anything to the client, nor starts, ends or revises an incident, nor settles or holds a
    failure for the running turn: the ledger is as it was."""
    if s.action is None or s.action.name != SUBAGENT_ACTION or s.before is None:
        return None
    if s.sent:
        return f"a subagent's failure sent {len(s.sent)} message(s)"
    if ledger_fingerprint(s.before.ledger) != ledger_fingerprint(s.after.ledger):
        active = [(a.id, a.state) for a in s.after.active]
        return f"a subagent's failure changed the ledger (active now {active}, turn failure {s.after.turn_failure})"
    return None


REGISTRY.add_targets(
    FAMILY,
    (
        "subagent_failure_in_a_turn",
        "a subagent met the usage limit while a prompt ran",
        lambda s: s.name == SUBAGENT_ACTION and s.was_running,
    ),
    (
        "subagent_failure_outside_a_turn",
        "a background subagent met the usage limit while no prompt ran",
        lambda s: s.name == SUBAGENT_ACTION and s.before is not None and s.before.flow == "idle",
    ),
)
