"""The breadth-first search behind ``workshop check``, its result and its report.

Rules
-----
* :class:`Explorer` owns one run's :class:`~lifecycle.answers.MachineAnswers` (made fresh by
  every :meth:`Explorer.run`, so a machine class patched since the last run is asked afresh) and
  hands it to every root; clones share it.
* Every edge is checked against every invariant, every new state for traps; the first violation
  of each invariant is kept with its shortest path, as ``lifecycle trace`` input lines.
* :func:`run_path` replays a reported path outside the search (with answers of its own).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lifecycle.answers import MachineAnswers
from lifecycle.incident import IncidentMachine
from lifecycle.session_flow import flow_transitions

from .actions import ACTIONS, ACTIONS_BY_NAME
from .alphabet import Action, Line, adapter_line
from .invariants import INVARIANTS, RECOVERY_REACHABLE, TARGETS, Invariant, beyond_bounds, check_escape
from .roots import ROOTS, root_lines
from .steps import Step, make_root, run_step
from .world import Bounds, World, ledger_view

__all__ = [
    "CheckResult",
    "Explorer",
    "PathReplay",
    "Violation",
    "declared_incident_transitions",
    "explore",
    "render_report",
    "run_path",
]

def declared_incident_transitions() -> list[tuple[str, str, str]]:
    """Every declared ``IncidentMachine`` transition as ``(source, event, target)``."""
    out: list[tuple[str, str, str]] = []
    for state in IncidentMachine.states:
        for t in state.transitions:
            for ev in t.events:
                out.append((state.id, str(ev.id), t.target.id))
    return out


@dataclass(slots=True)
class Violation:
    """The first (shortest) violation of one invariant."""

    invariant: str
    spec: str
    message: str
    depth: int
    steps: list[str]
    trace: list[str]

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(slots=True)
class CheckResult:
    """What one exploration found."""

    bounds: Bounds
    states: int = 0
    edges: int = 0
    depth: int = 0
    roots: int = 0
    beyond_bound: int = 0
    seconds: float = 0.0
    complete: bool = False
    invariants: list[str] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    coverage: dict[str, int] = field(default_factory=dict)
    flow_coverage: dict[str, int] = field(default_factory=dict)
    targets: dict[str, int | None] = field(default_factory=dict)
    #: declared IncidentMachine transitions no path within the bounds can fire -> why
    beyond_bounds: dict[str, str] = field(default_factory=dict)

    @property
    def uncovered(self) -> list[str]:
        return [k for k, v in self.coverage.items() if v == 0 and k not in self.beyond_bounds]

    @property
    def flow_uncovered(self) -> list[str]:
        return [k for k, v in self.flow_coverage.items() if v == 0]

    @property
    def unreached(self) -> list[str]:
        return [k for k, v in self.targets.items() if v is None]

    @property
    def ok(self) -> bool:
        return (
            self.complete
            and not self.violations
            and not self.uncovered
            and not self.flow_uncovered
            and not self.unreached
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "bounds": dataclasses.asdict(self.bounds),
            "states": self.states,
            "edges": self.edges,
            "depth": self.depth,
            "roots": self.roots,
            "beyond_bound": self.beyond_bound,
            "seconds": round(self.seconds, 3),
            "complete": self.complete,
            "invariants": self.invariants,
            "violations": [v.to_json() for v in self.violations],
            "coverage": self.coverage,
            "uncovered": self.uncovered,
            "beyond_bounds": self.beyond_bounds,
            "flow_coverage": self.flow_coverage,
            "flow_uncovered": self.flow_uncovered,
            "targets": self.targets,
            "unreached": self.unreached,
        }


def _label(t: tuple[str, str, str]) -> str:
    return f"{t[0]} --{t[1]}--> {t[2]}"


_FAIL_LINE: Line = adapter_line("deliver_fails", count=1)


@dataclass(slots=True)
class _Node:
    world: World | None
    parent: _Node | None
    lines: tuple[Line, ...]
    step: str
    depth: int


class Explorer:
    """Breadth-first exploration of one session's abstract state space within ``bounds``.

    Args:
        bounds: the bounds (:class:`Bounds`).
        stop_at_first: stop at the first violation (the mutation self-test).
        max_states: give up (``complete`` False) beyond this many states.
        actions: the alphabet (:data:`~workshop.explorer.actions.ACTIONS` unless given).
    """

    def __init__(
        self,
        bounds: Bounds | None = None,
        *,
        stop_at_first: bool = False,
        max_states: int = 2_000_000,
        actions: Sequence[Action] | None = None,
    ):
        self.bounds = bounds or Bounds()
        self.stop_at_first = stop_at_first
        self.max_states = max_states
        self.actions: tuple[Action, ...] = ACTIONS if actions is None else tuple(actions)
        self._escaped: set[Hashable] = set()

    def run(self) -> CheckResult:
        started = time.perf_counter()
        # Fresh answers for every run: the machine class may be a mutant's since the last one.
        answers = MachineAnswers()
        b = self.bounds
        result = CheckResult(bounds=b, invariants=[i.name for i in INVARIANTS] + [RECOVERY_REACHABLE.name])
        result.coverage = {_label(t): 0 for t in declared_incident_transitions()}
        result.beyond_bounds = {k: v for k, v in beyond_bounds(b).items() if k in result.coverage}
        flow_table = flow_transitions()
        result.flow_coverage = {_label((src, ev, dst)): 0 for (src, ev), dst in flow_table.items()}
        result.targets = {t.name: None for t in TARGETS}
        failed: set[str] = set()
        seen: set[Hashable] = set()
        queue: deque[_Node] = deque()

        def record(step: Step, node: _Node) -> bool:
            """Check one edge; returns False when exploration must stop."""
            for t in step.recorder.transitions:
                label = _label((t[1], t[3], t[2]))
                if label in result.coverage:
                    result.coverage[label] += 1
            if step.action is not None and step.action.flow_event and step.before is not None:
                key = (step.before.flow, step.action.flow_event)
                then = step.action.flow_then
                middle = flow_table.get(key)
                end = flow_table.get((middle, then), middle) if middle is not None and then else middle
                if middle is not None and step.after.flow == end:
                    result.flow_coverage[_label((key[0], key[1], middle))] += 1
            for target in TARGETS:
                if result.targets[target.name] is None and step.error is None and target.reached(step):
                    result.targets[target.name] = node.depth
            bad = False
            for inv in INVARIANTS:
                if inv.name in failed:
                    continue
                try:
                    msg = inv.check(step)
                except Exception as exc:  # an invariant that cannot even be evaluated fails
                    msg = f"evaluating the invariant raised {type(exc).__name__}: {exc}"
                if msg is not None:
                    bad = True
                    failed.add(inv.name)
                    result.violations.append(self._violation(inv, msg, node))
                    if self.stop_at_first:
                        return False
            return not bad

        for root in ROOTS:
            step = make_root(root, answers)
            node = _Node(step.after, None, root_lines(root), root.name, 0)
            result.roots += 1
            if not record(step, node):
                if self.stop_at_first:
                    return self._done(result, started, complete=False, states=len(seen))
                continue
            key = step.after.key()
            if key not in seen:
                seen.add(key)
                queue.append(node)
                if not self._state_ok(step.after, node, result, failed) and self.stop_at_first:
                    return self._done(result, started, complete=False, states=len(seen))

        while queue:
            node = queue.popleft()
            world = node.world
            assert world is not None
            node.world = None  # keep only the frontier's configurations in memory
            result.depth = max(result.depth, node.depth)
            if len(world.active) > b.incidents:
                result.beyond_bound += 1
                continue
            for action in self.actions:
                if not action.enabled(world, b):
                    continue
                lines = action.lines(world)
                sent_record = False
                for fail_first in (False, True):
                    if fail_first and not (b.failed_sends and sent_record):
                        break  # fail a send only where it matters: a record that must not be committed
                    step = run_step(world, action, fail_first=fail_first)
                    sent_record = bool(step.sent) and step.sent[0][0].record is not None
                    result.edges += 1
                    name = action.name + _FAILING if fail_first else action.name
                    child = _Node(step.after, node, (_FAIL_LINE, *lines) if fail_first else lines, name, node.depth + 1)
                    if not record(step, child):
                        if self.stop_at_first:
                            return self._done(result, started, complete=False, states=len(seen))
                        continue  # do not explore beyond a violation
                    key = step.after.key()
                    if key in seen:
                        continue
                    seen.add(key)
                    if len(seen) > self.max_states:
                        return self._done(result, started, complete=False, states=len(seen))
                    if not self._state_ok(step.after, child, result, failed) and self.stop_at_first:
                        return self._done(result, started, complete=False, states=len(seen))
                    queue.append(child)
        return self._done(result, started, complete=True, states=len(seen))

    def _state_ok(self, world: World, node: _Node, result: CheckResult, failed: set[str]) -> bool:
        if RECOVERY_REACHABLE.name in failed or not world.active:
            return True
        # The escape depends on the ledger alone: states that differ only in the environment's
        # counters or the client's history share one check.
        key = ledger_view(world.ledger)
        if key in self._escaped:
            return True
        msg = check_escape(world)
        if msg is None:
            self._escaped.add(key)
            return True
        failed.add(RECOVERY_REACHABLE.name)
        result.violations.append(self._violation(RECOVERY_REACHABLE, msg, node))
        return False

    def _done(self, result: CheckResult, started: float, *, complete: bool, states: int | None = None) -> CheckResult:
        result.complete = complete
        if states is not None:
            result.states = states
        result.seconds = time.perf_counter() - started
        return result

    @staticmethod
    def _violation(inv: Invariant, msg: str, node: _Node) -> Violation:
        chain: list[_Node] = []
        cur: _Node | None = node
        while cur is not None:
            chain.append(cur)
            cur = cur.parent
        chain.reverse()
        trace = [_dumps(line) for n in chain for line in n.lines]
        return Violation(inv.name, inv.spec, msg, node.depth, [n.step for n in chain], trace)


_FAILING = " (first send fails)"


@dataclass(slots=True)
class PathReplay:
    """A path replayed outside the explorer (see :func:`run_path`)."""

    steps: list[Step]
    delivered: list[dict[str, Any]]  # every JSON-RPC message the client received, in order
    lines: list[str]  # the path as ``lifecycle trace`` input

    @property
    def world(self) -> World:
        return self.steps[-1].after


def run_path(root_name: str, steps: list[str]) -> PathReplay:
    """Replay a path the explorer reports (``Violation.steps[0]`` is the root, the rest actions).

    Raises ``ValueError`` for an unknown root or action, or an action that is not enabled where
    the path uses it.
    """
    root = next((r for r in ROOTS if r.name == root_name), None)
    if root is None:
        raise ValueError(f"no root {root_name!r}")
    step = make_root(root, MachineAnswers())  # this replay's own: the machine class as it is now
    delivered = [out.to_jsonrpc() for out, ok in step.sent if ok]
    replay = PathReplay([step], delivered, [_dumps(x) for x in root_lines(root)])
    unbounded = Bounds(turns=99, replacements=99, retries=99, notices=99)
    for name in steps:
        fail_first = name.endswith(_FAILING)
        action = ACTIONS_BY_NAME.get(name.removesuffix(_FAILING))
        if action is None:
            raise ValueError(f"no action {name!r}")
        world = replay.world
        if not action.enabled(world, unbounded):
            raise ValueError(f"{name} is not enabled after {replay.lines[-1]}")
        replay.lines += [_dumps(x) for x in ((_FAIL_LINE,) if fail_first else ()) + action.lines(world)]
        step = run_step(world, action, fail_first=fail_first)
        replay.steps.append(step)
        replay.delivered += [out.to_jsonrpc() for out, ok in step.sent if ok]
    return replay


def _dumps(line: Line) -> str:
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


def explore(bounds: Bounds | None = None, *, stop_at_first: bool = False) -> CheckResult:
    """Explore the whole abstract state space within ``bounds`` and check every invariant."""
    return Explorer(bounds, stop_at_first=stop_at_first).run()


# ---------------------------------------------------------------------------- report


def render_report(result: CheckResult, *, verbose: bool = False) -> str:
    """A short human-readable report of ``result``."""
    b = result.bounds
    lines = [
        f"workshop check: bounds turns={b.turns} active-incidents<={b.incidents} replacements={b.replacements} "
        f"warnings/turn={b.retries} notice-revisions={b.notices} failed-sends={'yes' if b.failed_sends else 'no'}",
        f"explored {result.states} states, {result.edges} edges, depth {result.depth}, from {result.roots} roots "
        f"in {result.seconds:.1f} s ({'complete' if result.complete else 'INCOMPLETE'}; "
        f"{result.beyond_bound} states beyond the incident bound not expanded)",
    ]
    n_inv = len(result.invariants)
    if result.violations:
        lines.append(f"invariants: {len(result.violations)} of {n_inv} VIOLATED")
    else:
        lines.append(f"invariants: all {n_inv} hold in every state and on every edge")
    required = len(result.coverage) - len(result.beyond_bounds)
    covered = required - len(result.uncovered)
    beyond = f" ({len(result.beyond_bounds)} more not reachable within the bounds)" if result.beyond_bounds else ""
    lines.append(f"IncidentMachine transitions: {covered}/{required} fired{beyond}")
    if verbose or result.uncovered:
        for label, n in result.coverage.items():
            if label in result.beyond_bounds and n == 0:
                lines.append(f"  {label}: beyond the bounds: {result.beyond_bounds[label]}")
            else:
                lines.append(f"  {'NEVER ' if n == 0 else ''}{label}: {n}")
    fcovered = len(result.flow_coverage) - len(result.flow_uncovered)
    lines.append(f"SessionFlow transitions: {fcovered}/{len(result.flow_coverage)} fired")
    if verbose or result.flow_uncovered:
        for label, n in result.flow_coverage.items():
            lines.append(f"  {'NEVER ' if n == 0 else ''}{label}: {n}")
    reached = len(result.targets) - len(result.unreached)
    lines.append(f"reachability targets: {reached}/{len(result.targets)} reached")
    descriptions = {t.name: t.description for t in TARGETS}
    if verbose or result.unreached:
        for name, depth in result.targets.items():
            where = "NOT REACHED" if depth is None else f"depth {depth}"
            lines.append(f"  {name} ({where}): {descriptions[name]}")
    for v in result.violations:
        lines.append("")
        lines.append(f"VIOLATED {v.invariant}: {v.message}")
        lines.append(f"  spec: {v.spec}")
        lines.append(f"  shortest counterexample ({v.depth} steps): {' -> '.join(v.steps)}")
        lines.append("  as `lifecycle trace` input:")
        lines.extend(f"    {t}" for t in v.trace)
    lines.append("OK" if result.ok else "FAILED")
    return "\n".join(lines)

