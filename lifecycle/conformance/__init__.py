"""``lifecycle conformance --agent CMD [CASES_DIR]``: the conformance cases as agent-level test
vectors, run end to end through a real ACP agent (docs/conformance-kit.md).

Rules
-----
* Each case spawns the agent command anew, drives it as an ACP client over stdio
  (:mod:`.runner`) with the fake Claude Code CLI (:mod:`.fake_cli`) in place of Claude Code,
  and checks what it sent with the case's expectations (:mod:`.expect`).
* One line per case, in case order: ``PASS name``, ``FAIL name: reason`` or ``N/A name: reason``
  (the agent level cannot express the case: :mod:`.cases`); the last line is
  ``conformance: N passed, M failed, K not expressible``. Exit status 1 on any failure, 2 when
  the cases folder is unusable or the command line is wrong.
* A malformed case fails with the file and the line; the run goes on with the other cases.
* Cases run in parallel (``--jobs``), each in its own folder, removed afterwards unless
  ``--keep DIR`` asks to keep them (the frames, the checked messages, the fake CLI's log).

Theory of operation
-------------------
The default cases folder is the repository's ``tests/conformance/cases`` beside the installed
package (an editable install or a checkout); an installed wheel has no cases, so CASES_DIR is
then required.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .cases import CaseError, find_cases, load_case

if TYPE_CHECKING:  # the runner is imported when used: ``python -m ...fake_cli`` imports this package first
    from .runner import Outcome, RunOptions

__all__ = ["cli_main", "default_cases_dir", "run_suite"]


def default_cases_dir() -> Path:
    """The public cases of the repository this package was installed from."""
    return Path(__file__).resolve().parents[2] / "tests" / "conformance" / "cases"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="lifecycle conformance",
        description="Run the conformance cases end to end through an ACP agent, with a fake Claude Code CLI.",
    )
    p.add_argument("--agent", required=True, help='the agent command, e.g. "lifecycle acp" (split like a shell)')
    p.add_argument("cases", nargs="?", help="folder of NAME.input.jsonl + NAME.expect.json (default: the public cases)")
    p.add_argument("--jobs", "-j", type=int, default=4, help="cases run at once (default 4)")
    p.add_argument("--step-timeout", type=float, default=10.0, help="seconds one side waits for the other")
    p.add_argument("--case-timeout", type=float, default=60.0, help="seconds one case may take")
    p.add_argument("-k", dest="pattern", help="only cases whose name matches this regular expression")
    p.add_argument("--keep", type=Path, help="keep each case's folder (frames, messages, logs) under this folder")
    p.add_argument("--times", action="store_true", help="show each case's duration")
    return p


async def run_suite(
    folder: Path,
    opts: RunOptions,
    *,
    jobs: int = 4,
    pattern: str | None = None,
    work: Path,
    out: list[Outcome] | None = None,
    show: bool = True,
    times: bool = False,
) -> list[Outcome]:
    """Run every case of ``folder``; print each line in case order as soon as it is known."""
    found = find_cases(folder)
    if pattern:
        found = [c for c in found if re.search(pattern, c[0])]
    from .runner import Outcome, run_case

    gate = asyncio.Semaphore(max(1, jobs))

    async def one(name: str, input_path: Path, expect_path: Path) -> Outcome:
        try:
            case = load_case(name, input_path, expect_path)
        except CaseError as exc:
            return Outcome(name, "FAIL", f"malformed case: {exc}")
        async with gate:
            return await run_case(case, opts, work / name)

    tasks = [asyncio.create_task(one(*c)) for c in found]
    results = out if out is not None else []
    for task in tasks:
        outcome = await task
        results.append(outcome)
        if show:
            suffix = f" ({outcome.seconds:.1f}s)" if times and outcome.seconds else ""
            print(outcome.line() + suffix, flush=True)
    return results


def summary(results: list[Outcome]) -> str:
    passed = sum(r.status == "PASS" for r in results)
    failed = sum(r.status == "FAIL" for r in results)
    na = sum(r.status == "N/A" for r in results)
    return f"conformance: {passed} passed, {failed} failed, {na} not expressible"


def cli_main(argv: list[str]) -> int:
    from .runner import RunOptions

    args = build_parser().parse_args(argv)
    agent = shlex.split(args.agent)
    if not agent:
        print("lifecycle conformance: --agent is empty", file=sys.stderr)
        return 2
    if "/" in agent[0]:  # the agent runs in each case's own folder: a relative path is made absolute
        agent[0] = str(Path(agent[0]).absolute())
    folder = Path(args.cases) if args.cases else default_cases_dir()
    opts = RunOptions(agent=agent, step_timeout=args.step_timeout, case_timeout=args.case_timeout)
    started = time.monotonic()
    try:
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            results = asyncio.run(run_suite(folder, opts, jobs=args.jobs, pattern=args.pattern, work=args.keep,
                                            times=args.times))
        else:
            with tempfile.TemporaryDirectory(prefix="lifecycle-conformance-") as tmp:
                results = asyncio.run(run_suite(folder, opts, jobs=args.jobs, pattern=args.pattern, work=Path(tmp),
                                                times=args.times))
    except CaseError as exc:
        print(f"lifecycle conformance: {exc}", file=sys.stderr)
        return 2
    if args.times:
        print(f"conformance: {len(results)} cases in {time.monotonic() - started:.1f}s", flush=True)
    print(summary(results), flush=True)
    return 1 if any(r.status == "FAIL" for r in results) else 0
