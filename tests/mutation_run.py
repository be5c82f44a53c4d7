#!/usr/bin/env python3
"""``mutmut run``, with each mutant's tests run in a fork of one collected pytest session.

usage (from the repository root, with pyproject's ``[tool.mutmut]``; arguments are
``mutmut run``'s)::

    python tests/mutation_run.py --max-children 2              # every mutant
    python tests/mutation_run.py --max-children 2 "lifecycle.ledger*"

Theory of operation. mutmut 3 forks a worker per mutant from a process that has imported the
selected test modules, and each worker calls ``pytest.main`` on the tests that reach the mutated
function: a new configuration, plugin registration, conftest loading and collection every time,
about 0.06 s of CPU before the first test runs (the whole selection's 2,201 tests take 11 s of
test time by mutmut's own ``mutmut-stats.json``, against 3,500 such starts: docs/checking.md,
"Mutation testing of the core"). Here the runner mutmut
forks from collects the selection once, in the same way ``pytest.main`` does (the same
arguments: pyproject's ``pytest_add_cli_args`` and mutmut's ``-x -q``), and each worker runs its
tests' items through pytest's own ``pytest_runtest_protocol`` hook, the call pytest's test loop
makes: the same fixtures, set up in the worker, the same hooks (pytest-timeout's limit, capture,
the assertion rewriting done at collection), the same order (mutmut's, fastest first), the same
stop at the first failing test.

Rules:

- Everything else is mutmut's: which mutants, which tests reach each, the CPU and wall limits,
  the results in ``mutants/``; ``tests/mutation_score.py`` reads them as it reads any run's.
- The verdict is ``pytest.main``'s: exit 1 if a test failed or errored (setup, call or
  teardown), 2 if the run was stopped (``pytest.exit``), 3 if an exception escaped pytest's hooks
  (pytest's internal error; mutmut counts it killed, as it does for ``pytest.main``), else 0.
- mutmut's clean run and its forced-fail run go through the same path, each in a fork of the
  session: a clean run that fails stops mutmut, so the path is checked on every selected test
  before any mutant counts, and the forced-fail run checks it sees a failure.
- A test id the session did not collect makes that mutant ``suspicious`` (exit 35), which counts
  against the score; nothing is silently passed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

import mutmut.workers.isolation as isolation
from mutmut.__main__ import cli
from mutmut.configuration import config as mutmut_config
from mutmut.runners.harness import PytestRunner
from mutmut.utils.file_utils import change_cwd

TESTS_FAILED, INTERRUPTED, INTERNAL_ERROR, SUSPICIOUS = 1, 2, 3, 35


class _Failures:
    """The failing reports' ids and text, for the clean run's message."""

    def __init__(self) -> None:
        self.reports: list[tuple[str, str]] = []

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.failed:
            self.reports.append((report.nodeid, report.longreprtext))


class SessionRunner(PytestRunner):
    """mutmut's pytest runner, running each mutant's tests in a fork of one collected session."""

    def __init__(self) -> None:
        super().__init__()
        self._session: Any = None
        self._items: dict[str, Any] = {}
        self._failures = _Failures()

    def _open(self) -> None:
        """Collect the selection once, in the process mutmut forks its workers from."""
        from _pytest.config import _prepareconfig
        from _pytest.main import Session

        args = ["--rootdir=.", "--tb=native", *self._pytest_args_regular_run([]), *self._pytest_add_cli_args]
        with change_cwd("mutants"):
            config = _prepareconfig(args, plugins=[self._failures])
            config._do_configure()
            session = Session.from_config(config)
            config.hook.pytest_sessionstart(session=session)
            session.perform_collect()
        if session.testsfailed:
            raise SystemExit(f"mutation_run: collecting the selection failed ({session.testsfailed} errors)")
        self._session = session
        self._items = {item.nodeid: item for item in session.items}

    def _run_items(self, tests: Iterable[str]) -> int:
        """pytest's test loop over ``tests`` (all collected items if empty), in this process."""
        session = self._session
        names = list(tests)
        if any(name not in self._items for name in names):
            return SUSPICIOUS
        items = [self._items[name] for name in names] if names else list(self._items.values())
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None and not mutmut_config().debug:  # as mutmut's workers: no output
            from _pytest.config import create_terminal_writer

            reporter._tw = create_terminal_writer(session.config, open(os.devnull, "w"))  # noqa: SIM115
        try:
            with change_cwd("mutants"):
                for i, item in enumerate(items):
                    nextitem = items[i + 1] if i + 1 < len(items) else None
                    item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
                    if session.shouldfail:  # -x: the first failing test, as pytest's loop
                        break
                    if session.shouldstop:
                        return INTERRUPTED
        except (KeyboardInterrupt, SystemExit):
            return INTERRUPTED
        except BaseException:
            return INTERNAL_ERROR
        return TESTS_FAILED if session.testsfailed else 0

    def _in_fork(self, tests: Iterable[str]) -> int:
        """mutmut's clean and forced-fail runs, through the workers' path, in a fork."""
        if self._session is None:
            self._open()
        pid = os.fork()
        if pid == 0:
            code = self._run_items(tests)
            if code and os.environ.get("MUTANT_UNDER_TEST") != "fail":
                for nodeid, text in self._failures.reports:
                    os.write(2, f"\n{nodeid} failed:\n{text}\n".encode())
            os._exit(code)
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])

    def run_tests(self, *, mutant_name: str | None, tests: Iterable[str]) -> int:
        if mutant_name is None:
            return self._in_fork(tests)
        return self._run_items(tests)


def main(argv: list[str]) -> None:
    # Run as a script, this folder is first on sys.path: the tests must import mutmut's copies
    # in mutants/, not these.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    isolation.PytestRunner = SessionRunner  # type: ignore[misc]  # what get_mutant_runner makes
    if mutmut_config().process_isolation != isolation.ProcessIsolation.FORK:
        raise SystemExit("mutation_run: needs mutmut's process_isolation = 'fork' (its default)")
    cli(["run", *argv])


if __name__ == "__main__":
    main(sys.argv[1:])
