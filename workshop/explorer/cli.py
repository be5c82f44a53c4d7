"""``workshop check [--mutants] [--json] [bounds...]``: the command of the explorer and its self-test.

This module is the only one that imports both the explorer and :mod:`workshop.mutants`
(which imports the explorer): the explorer's own modules never import the mutants.
"""

from __future__ import annotations

import argparse
import json

from ..mutants import render_mutants_report, run_mutants
from .search import Explorer, render_report
from .world import Bounds

__all__ = ["cli_main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m workshop check", description="Exhaustively explore one session's abstract state space."
    )
    p.add_argument("--mutants", action="store_true", help="self-test: seed known bugs, require each to be caught")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--verbose", "-v", action="store_true", help="list every transition and target")
    d = Bounds()
    p.add_argument("--turns", type=int, default=d.turns)
    p.add_argument("--incidents", type=int, default=d.incidents)
    p.add_argument("--replacements", type=int, default=d.replacements)
    p.add_argument("--retries", type=int, default=d.retries)
    p.add_argument("--notices", type=int, default=d.notices)
    p.add_argument("--no-failed-sends", action="store_true", help="do not explore failing sends")
    p.add_argument("--max-states", type=int, default=500_000, help="give up (FAILED, incomplete) beyond this")
    return p


def cli_main(argv: list[str]) -> int:
    """``workshop check [--mutants] [--json] [bounds...]``; exit 1 on any failure."""
    args = _parser().parse_args(argv)
    bounds = Bounds(
        turns=args.turns,
        incidents=args.incidents,
        replacements=args.replacements,
        retries=args.retries,
        notices=args.notices,
        failed_sends=not args.no_failed_sends,
    )
    if args.mutants:
        report = run_mutants(bounds)
        if args.json:
            print(json.dumps(report.to_json(), indent=2))
        else:
            print(render_mutants_report(report))
        return 0 if report.ok else 1
    result = Explorer(bounds, max_states=args.max_states).run()
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print(render_report(result, verbose=args.verbose))
    return 0 if result.ok else 1

