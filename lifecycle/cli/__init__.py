"""The ``acp-lifecycle`` command (also ``lifecycle``, ``python -m lifecycle``).

Rules: every command imports its module only when it runs, and every command listed here works
from an installed wheel. The developer tools of the source tree (the explorer, the benchmark, the
diagrams) are no commands of the product: ``python -m workshop`` runs them from a checkout."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

__all__ = ["main"]

EXAMPLES = ("rate-limit-then-recovery", "usage-limit-replay", "rate-limit-window-then-reset")


def example_path(name: str) -> Path:
    """The bundled example trace ``name`` (see :data:`EXAMPLES`)."""
    from importlib import resources  # here, not at the top: it loads zipfile, tempfile and inspect

    return Path(str(resources.files("lifecycle") / "examples" / f"{name}.jsonl"))


def _lines(stream: BinaryIO) -> Iterator[str]:
    # Bytes in, text out: invalid UTF-8 becomes U+FFFD and then fails as JSON on that line only.
    for raw in stream:
        yield raw.decode("utf-8", errors="replace").lstrip("\ufeff").rstrip("\r\n")


def _cmd_trace(args: argparse.Namespace) -> int:
    from ..log import StructlogObserver, configure_logging
    from .trace import run_trace

    if args.example is not None:
        path = example_path(args.example)
    elif args.file is not None:
        path = Path(args.file)
    else:
        print("lifecycle trace: give a FILE or --example NAME", file=sys.stderr)
        return 2
    observer = None
    if args.log:
        configure_logging(sys.stderr)
        observer = StructlogObserver()

    def report(msg: str) -> None:
        print(f"lifecycle trace: {path.name}: {msg}", file=sys.stderr)

    try:
        stream = sys.stdin.buffer if str(path) == "-" else path.open("rb")
    except OSError as exc:
        print(f"lifecycle trace: cannot open {path}: {exc.strerror}", file=sys.stderr)
        return 2
    with stream:
        return run_trace(_lines(stream), sys.stdout.write, report, observer)


def _cmd_schema(args: argparse.Namespace) -> int:
    from ..wire import record_json_schema

    print(json.dumps(record_json_schema(), indent=2, sort_keys=True))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lifecycle", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("trace", help="run a conformance trace and print what the adapter sends")
    p.add_argument("file", nargs="?", help="trace input (.jsonl), or - for stdin")
    p.add_argument("--example", choices=EXAMPLES, help="run a bundled example trace instead")
    p.add_argument("--log", action="store_true", help="log every transition (structlog) to stderr")
    p.set_defaults(func=_cmd_trace)

    p = sub.add_parser("schema", help="print the JSON Schema of the sessionFailure record")
    p.set_defaults(func=_cmd_schema)

    # Commands whose module owns its own argument parsing: ``lifecycle NAME ...`` calls
    # ``lifecycle.<module>.cli_main(argv)``; the module is imported only when used.
    for name, module, help_text in _DELEGATED:
        p = sub.add_parser(name, help=help_text, add_help=False)
        p.add_argument("argv", nargs=argparse.REMAINDER)
        p.set_defaults(func=_delegate(module))
    return parser


_DELEGATED: tuple[tuple[str, str, str], ...] = (
    ("replay", "cli.replay", "show the typed records a capable client gets for a real transcript"),
    ("acp", "agent", "run the reference Claude ACP agent over stdio"),
    ("conformance", "conformance", "run the conformance cases through an ACP agent (--agent CMD)"),
    ("proxy", "proxy", "run any ACP agent behind the sessionFailure relay (proxy -- AGENT ...)"),
)


def _run_module(module: str, argv: list[str]) -> int:
    from importlib import import_module

    code: int = import_module(f"lifecycle.{module}").cli_main(argv)
    return code


def _delegate(module: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        return _run_module(module, list(args.argv))

    return run


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    # A delegated command parses its own options (argparse.REMAINDER would not pass "--x" on).
    for name, module, _ in _DELEGATED:
        if args_list[:1] == [name]:
            return _run_module(module, args_list[1:])
    args = build_parser().parse_args(args_list)
    code: int = args.func(args)
    return code
