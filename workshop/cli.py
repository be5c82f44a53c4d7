"""The workshop's command line: ``python -m workshop <command> [options]``, run from the repository root.

Rules: every command is a module with its own argument parsing (``cli_main(argv) -> int``),
imported only when it runs; ``python -m workshop <command> --help`` is that module's help. The
product's own commands (``trace``, ``replay``, ``acp``, ``conformance``, ...) stay in ``lifecycle``'s
command line; these are the developer tools of the source tree, in no wheel.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import import_module

__all__ = ["COMMANDS", "main"]

#: command -> (the module whose ``cli_main`` runs it, what it does)
COMMANDS: dict[str, tuple[str, str]] = {
    "check": (
        "workshop.explorer.cli",
        "exhaustively explore the abstract session state space and check invariants (--mutants: the self-test)",
    ),
    "diagrams": ("workshop.diagrams", "render the machines into diagrams/ (--check: fail when stale)"),
    "bench": ("workshop.bench", "measure the lifecycle against baselines in the same run"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m workshop",
        description="The developer tools of the acp-lifecycle repository (run from its root).",
    )
    sub = parser.add_subparsers(dest="command", metavar="command", required=True)
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``python -m workshop`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] and args[0] in COMMANDS:
        # the command parses its own options (``--help`` included)
        code: int = import_module(COMMANDS[args[0]][0]).cli_main(args[1:])
        return code
    build_parser().parse_args(args)  # --help, or an error naming the commands (exit 2)
    return 2
