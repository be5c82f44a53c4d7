"""``workshop check``: an exhaustive, bounded explorer of one adapter session (TLC-style).

Rules
-----
* The explorer runs the real code: every step feeds real events (SDK lines translated by
  :func:`lifecycle.claude.from_stream_json`, adapter events as :mod:`lifecycle.cli.trace` makes them)
  into a real :class:`~lifecycle.ledger.SessionLedger` whose incidents and prompt turn move only
  by the answers of real :class:`~lifecycle.incident.IncidentMachine` and
  :class:`~lifecycle.session_flow.SessionFlow` instances, and delivers what it plans to a real
  :class:`~lifecycle.client.ClientProjection`. Nothing here restates *how* the ledger decides;
  the invariants restate *what* the spec requires, one spec sentence each.
* An abstract state is the root and the ledger's VIEW (see the comment at :func:`ledger_view`):
  a generic digest of every slot of the ledger and its incidents and turn, minus what cannot
  change what happens next (presentation text, revision numbers, id sequence numbers), plus
  whether the Claude runtime is dead. Two paths that reach the same abstract state are one state.
* The environment is realistic, not arbitrary: SDK messages come from a live runtime (a
  dead one, after its iterator threw or ended, is replaced before the next prompt), assistant
  messages and fallback notices arrive during a prompt, and any step may have its first record
  send fail (``deliver_fails``). Claude Code's permission question arrives during a prompt (one
  per turn open at a time; also outside a running turn, where it is refused); while it is open
  the turn's stream is quiet (Claude Code waits for the answer) and the turn may still be
  cancelled or lose its runtime; the client's answer may arrive after the turn left ``in_turn``.
* Bounds keep the space finite and small: see :class:`Bounds`. States with more active
  incidents than the bound are counted but not expanded (a TLC ``CONSTRAINT``).
* One home per concept: incident ids are built and read only with :mod:`lifecycle.ids`, and the
  ``_meta.jetbrains.air`` object only with :mod:`lifecycle.wire` (``air_of``, ``with_air``,
  ``attach_record``, ``read_record``).

Theory of operation
-------------------
Breadth-first search from the roots (a capable or legacy client; a fresh session or a
``session/load`` of a history holding usage-limit messages). Each node keeps its concrete
configuration only until it is expanded. To get a successor, the configuration is *cloned*
(a structural copy of the ledger's slots and the client's lists, ~tens of µs) and one action is
fed to the clone; re-running the shortest path to every frontier state would cost the whole
prefix per successor. An incident holds no machine instance (the ledger asks the run's
:class:`lifecycle.answers.MachineAnswers`, which asks a real ``IncidentMachine`` once per distinct
question), so cloning one is copying its slots; every run makes its own answers, so a patched
(mutant) machine class is asked afresh.

Every edge is checked against every invariant; every new state is also checked for traps (each
active incident must still be able to leave the active set through its own policy's event; a
notice has none).
The first violation of each invariant is reported with the shortest path to it (BFS order), as
``lifecycle trace`` input lines (``tests/conformance/FORMAT.md``). Coverage of every declared
``IncidentMachine`` and :class:`~lifecycle.session_flow.SessionFlow` transition (a transition the
bounds cannot reach is named with the reason: :func:`.invariants.beyond_bounds`), and a list of
expected reachability targets, make sure the explorer is not vacuous; the explorer steps its own
copy of the turn by ``SessionFlow``'s declared transitions from each action's declared flow event
and compares it with ``SessionLedger.flow`` on every edge; ``--mutants`` seeds real
bugs and requires each to be caught (:mod:`workshop.mutants`).

Modules
-------
=====================  =============================================================================
:mod:`.world`          bounds, injected secrets, the observer, clone and fingerprint, the VIEW,
                       :class:`World`
:mod:`.alphabet`       what a letter is (:class:`Action`) and what the families of letters share
:mod:`.roots`          the initial configurations (:data:`ROOTS`)
:mod:`.steps`          one letter applied (:class:`Step`, :func:`run_step`, :func:`make_root`)
:mod:`.registry`       the one registry of actions, invariants and targets, each with its family
:mod:`.actions`        the alphabet (:data:`ACTIONS`), one module per family of letters
:mod:`.invariants`     :data:`INVARIANTS`, the escape check, the reachability :data:`TARGETS`, one
                       module per family of checks
:mod:`.search`         :class:`Explorer`, :class:`CheckResult`, :func:`run_path`, the report
:mod:`.cli`            ``workshop check`` (``cli_main``): the one module that also imports
                       :mod:`workshop.mutants` (which imports the explorer); nothing else
                       here imports it
=====================  =============================================================================

Each module imports only the ones listed above it, so there is no import cycle; this package
re-exports what tests and the benchmark use (not ``cli_main``: see :mod:`.cli`).
"""

from __future__ import annotations

from .actions import ACTIONS, ACTIONS_BY_NAME
from .alphabet import Action
from .invariants import INVARIANTS, TARGETS, Invariant, Target, check_escape
from .roots import ROOTS, Root
from .search import (
    CheckResult,
    Explorer,
    PathReplay,
    Violation,
    declared_incident_transitions,
    explore,
    render_report,
    run_path,
)
from .steps import Step, make_root, run_step
from .world import Bounds, World, ledger_fingerprint, ledger_flow_state, ledger_view

__all__ = [
    "ACTIONS",
    "ACTIONS_BY_NAME",
    "INVARIANTS",
    "ROOTS",
    "TARGETS",
    "Action",
    "Bounds",
    "CheckResult",
    "Explorer",
    "Invariant",
    "PathReplay",
    "Root",
    "Step",
    "Target",
    "Violation",
    "World",
    "check_escape",
    "declared_incident_transitions",
    "explore",
    "ledger_fingerprint",
    "ledger_flow_state",
    "ledger_view",
    "make_root",
    "render_report",
    "run_path",
    "run_step",
]
