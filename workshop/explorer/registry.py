"""The explorer's one registry: every letter of the alphabet, every invariant and every
reachability target, each registered with the family (the concern) whose module declares it.

Rules
-----
* A family is one module of :mod:`.actions` or :mod:`.invariants`, named after its concern (the
  turn's prompts, Claude's failures, the client's view, the permission questions, ...); it
  registers what it declares when it is imported, through :data:`REGISTRY` (:meth:`Registry.add_actions`,
  the :meth:`Registry.invariant` decorator, :meth:`Registry.add_targets`). Nothing else registers.
* The explorer's order is the families' order, as each package declares it (``FAMILIES`` of
  :mod:`.actions` and :mod:`.invariants`, read through :func:`in_order`), and within a family the
  order of registration: it tries the actions in that order (so the shortest counterexample it
  reports is the first one found), checks the invariants in that order (so the first one that
  fails on an edge names the violation) and lists the targets in that order. Import order plays
  no part; a registered family that the order does not name is an error.
* A name is registered once: a second action, invariant or target of the same name is an error.
* An invariant's docstring is the spec sentence it checks (its ``spec``).

Theory of operation
-------------------
This module imports :mod:`.alphabet` (:class:`Action`) and :mod:`.steps` (:class:`Step`) and no
family, so the families import it without a cycle; :mod:`.actions` and :mod:`.invariants` import
their families and then read :data:`REGISTRY`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from .alphabet import Action
from .steps import Step

__all__ = ["REGISTRY", "Check", "Invariant", "Registry", "Target", "in_order"]

#: An invariant's check: ``None``, or why the step violates it.
Check = Callable[[Step], str | None]


@dataclass(frozen=True, slots=True)
class Invariant:
    name: str
    spec: str
    check: Check
    family: str = ""


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    description: str
    reached: Callable[[Step], bool]
    family: str = ""


@dataclass(slots=True)
class Registry:
    """What the families declared, in registration order."""

    actions: list[Action] = field(default_factory=list)
    invariants: list[Invariant] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)

    def add_actions(self, family: str, *actions: Action) -> None:
        """Register ``actions`` (letters of the alphabet) of ``family``, in this order."""
        for action in actions:
            _unique(action.name, [a.name for a in self.actions], "action")
            self.actions.append(dataclasses.replace(action, family=family))

    def invariant(self, family: str) -> Callable[[Check], Check]:
        """Decorator: register the function as an invariant of ``family``; its docstring is the
        spec sentence it checks."""

        def register(func: Check) -> Check:
            _unique(func.__name__, [i.name for i in self.invariants], "invariant")
            doc = " ".join((func.__doc__ or "").split())
            self.invariants.append(Invariant(func.__name__, doc, func, family))
            return func

        return register

    def add_targets(self, family: str, *targets: tuple[str, str, Callable[[Step], bool]]) -> None:
        """Register reachability targets of ``family``, each ``(name, description, reached)``: the
        exploration must reach every one (a step where ``reached`` holds), in this order."""
        for name, description, reached in targets:
            _unique(name, [t.name for t in self.targets], "target")
            self.targets.append(Target(name, description, reached, family))


class _OfAFamily(Protocol):
    @property
    def family(self) -> str: ...


_T = TypeVar("_T", bound=_OfAFamily)


def in_order(items: Sequence[_T], families: Sequence[str]) -> tuple[_T, ...]:
    """``items`` in the order of ``families``, each family's in registration order.

    Raises:
        ValueError: an item's family is not in ``families``.
    """
    if unnamed := sorted({i.family for i in items} - set(families)):
        raise ValueError(f"families {unnamed} are registered but not in the order {list(families)}")
    return tuple(sorted(items, key=lambda i: families.index(i.family)))


def _unique(name: str, names: list[str], kind: str) -> None:
    if name in names:
        raise ValueError(f"the {kind} {name!r} is registered twice")


#: The registry every family registers with.
REGISTRY = Registry()
