"""The explorer's alphabet: every letter the environment may play, one module per family.

Rules
-----
* Each family module declares its letters and registers them with
  :data:`~workshop.explorer.registry.REGISTRY` (:meth:`~workshop.explorer.registry.Registry.add_actions`).
* :data:`ACTIONS` is the registry's alphabet in the order of :data:`FAMILIES` (each family's
  letters in the order it declares them), which is the order the explorer tries the letters in
  (and so which of two shortest counterexamples it reports): do not reorder.

Families
--------
=======================  ==========================================================================
:mod:`.prompts`          the client's prompts (a new turn, a concurrent one, a reused turn id)
:mod:`.failures`         Claude's failures (API retries, assistant errors, a cancelled turn's, a
                         subagent's, a background one)
:mod:`.results`          a turn's answers and results
:mod:`.session`          authentication, the runtime's loss and replacement, the adapter's failure
:mod:`.notices`          Claude's model-fallback and refusal-fallback notices
:mod:`.interruptions`    the client's cancel, Claude Code's permission questions and their answers
:mod:`.windows`          Claude Code's usage-limit window reports (issue 32)
:mod:`.late`             events from a replaced runtime
=======================  ==========================================================================
"""

from __future__ import annotations

from collections.abc import Mapping

from ..alphabet import Action
from ..registry import REGISTRY, in_order
from . import failures, interruptions, late, notices, prompts, results, session, windows  # noqa: F401 (they register)

__all__ = ["ACTIONS", "ACTIONS_BY_NAME", "FAMILIES"]

#: The families, in the explorer's order.
FAMILIES = ("prompts", "failures", "results", "session", "notices", "interruptions", "windows", "late")
ACTIONS: tuple[Action, ...] = in_order(REGISTRY.actions, FAMILIES)
ACTIONS_BY_NAME: Mapping[str, Action] = {a.name: a for a in ACTIONS}
