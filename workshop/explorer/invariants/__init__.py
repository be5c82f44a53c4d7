"""The explorer's invariants (one spec sentence each) and reachability targets, one module per
family of checks.

Rules
-----
* An invariant restates *what* the spec requires, never *how* the ledger decides: it reads one
  :class:`~workshop.explorer.steps.Step` (the configurations before and after, what was sent
  and delivered, the machine transitions that fired) and returns ``None`` or why it fails. Its
  docstring is the spec sentence it checks. A target is something the exploration must reach, so
  that it is not vacuous.
* Each family module registers its invariants and targets with
  :data:`~workshop.explorer.registry.REGISTRY`; :data:`INVARIANTS` and :data:`TARGETS` are the
  registry's, in the order of :data:`FAMILIES` (each family's in the order it declares them):
  the explorer checks the invariants in that order, so the first that fails on an edge names the
  violation. Do not reorder.
* ``recovery_reachable`` is a state property (no trap): :func:`check_escape` runs each active
  policy's escape script on a clone (:mod:`.recovery`).
* Ids are read with :func:`lifecycle.ids.parse_id` (:mod:`.reading`) and records with
  :mod:`lifecycle.wire`.

Families
--------
======================  ===========================================================================
:mod:`.refusals`        what any step may do: raise nothing undocumented, refused events change nothing
:mod:`.identity`        revisions, ids (new per occurrence, never merged, namespaced), the wire form
:mod:`.carriers`        which message carries a record; a prompt settled once
:mod:`.recovery`        recovery by the incident's own policy, silently, never back; no trap
:mod:`.client`          what the client is shown: the ledger's belief, legacy clients, no secrets
:mod:`.replay`          History replay: every occurrence typed, the latest one active
:mod:`.contract`        issue 21's contract rules 3, 4, 6 and 7
:mod:`.questions`       Claude Code's permission questions
:mod:`.flow`            the turn moves only as ``SessionFlow`` declares
:mod:`.reachability`    the targets of the families above; transitions beyond the bounds
:mod:`.classification`  issue 21's rules 1, 2, 3 and 7: what a failure is; notices kept
:mod:`.windows`         issue 32's usage-limit windows
:mod:`.subagents`       issue 31's subagent traffic
======================  ===========================================================================

:mod:`.reading` holds what several families read (an id's kind, a runtime-loss record).
"""

from __future__ import annotations

from ..registry import REGISTRY, Invariant, Target, in_order
from . import (  # noqa: F401 (each family registers what it declares)
    carriers,
    classification,
    client,
    contract,
    flow,
    identity,
    questions,
    reachability,
    refusals,
    replay,
    subagents,
    windows,
)
from .reachability import beyond_bounds
from .recovery import RECOVERY_REACHABLE, check_escape

__all__ = [
    "FAMILIES",
    "INVARIANTS",
    "RECOVERY_REACHABLE",
    "TARGETS",
    "Invariant",
    "Target",
    "beyond_bounds",
    "check_escape",
]

#: The families, in the explorer's order.
FAMILIES = (
    "refusals",
    "identity",
    "carriers",
    "recovery",
    "client",
    "replay",
    "contract",
    "questions",
    "flow",
    "reachability",
    "classification",
    "windows",
    "subagents",
)
INVARIANTS: tuple[Invariant, ...] = in_order(REGISTRY.invariants, FAMILIES)
TARGETS: tuple[Target, ...] = in_order(REGISTRY.targets, FAMILIES)
