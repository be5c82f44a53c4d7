"""``tests/mutation_run.py`` (mutmut's run, each mutant's tests in a fork of one collected pytest
session) gives mutmut's verdicts: a mutant a test's call or teardown catches is killed, one that
hangs a test past pytest-timeout's limit is killed, one no test catches survives, and a clean run
that fails stops it before any mutant counts, naming the failing test.

Each case is a real run of the pinned mutmut over a small project written here; the verdicts
below follow from reading each mutant against the project's tests, not from the runner.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "tests" / "mutation_run.py"
MUTMUT = Path(sys.executable).parent / "mutmut"

PYPROJECT = """\
[tool.mutmut]
source_paths = ["calc"]
pytest_add_cli_args = ["--timeout=1", "-p", "no:cacheprovider"]
pytest_add_cli_args_test_selection = ["tests/test_calc.py"]
"""

CALC = """\
def sign(x):
    if x > 0:
        return 1
    return 0


def countdown(n):
    while n:
        n -= 1
    return n
"""

TESTS = """\
import os

import pytest

from calc import countdown, sign


@pytest.fixture
def negative_is_zero():
    yield
    assert sign(-1) == 0


def test_sign_of_a_positive_number(negative_is_zero):
    assert sign(5) == 1


def test_countdown_ends_at_zero():
    assert countdown(3) == 0
"""

#: A test that passes in mutmut's stats run (its first, a plain ``pytest.main``) and fails in
#: every later one: the clean run, the first through the runner's forked session, must stop it.
FAILS_AFTER_THE_STATS_RUN = """\


def test_only_in_the_stats_run():
    assert os.environ["MUTANT_UNDER_TEST"] == "stats"
"""

#: mutmut 3.8.1's mutants of CALC, in its numbering, and what the tests above make of each.
VERDICTS = {
    "calc.x_sign__mutmut_1": "survived",  # `x >= 0`: sign(5) is 1 and sign(-1) is 0 still
    "calc.x_sign__mutmut_2": "survived",  # `x > 1`: the same
    "calc.x_sign__mutmut_3": "killed",  # `return 2`: the test's call fails
    "calc.x_sign__mutmut_4": "killed",  # `return 1` for `return 0`: only the fixture's teardown fails
    "calc.x_countdown__mutmut_1": "killed",  # `n = 1`: never ends, pytest-timeout fails the test
    "calc.x_countdown__mutmut_2": "killed",  # `n += 1`: never ends
    "calc.x_countdown__mutmut_3": "killed",  # `n -= 2`: 3, 1, -1, ... never 0
}


def project(tmp_path: Path, *, extra: str = "") -> Path:
    (tmp_path / "calc").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "calc" / "__init__.py").write_text(CALC)
    (tmp_path / "tests" / "test_calc.py").write_text(TESTS + extra)
    return tmp_path


def run(where: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(RUNNER), "--max-children", "2"], cwd=where, capture_output=True, text=True, timeout=300
    )


def verdicts(where: Path) -> dict[str, str]:
    out = subprocess.run(
        [str(MUTMUT), "results", "--all", "true"], cwd=where, capture_output=True, text=True, timeout=120, check=True
    ).stdout
    return dict(line.strip().split(": ", 1) for line in out.splitlines() if "__mutmut_" in line)


def test_each_mutant_gets_the_verdict_its_tests_give(tmp_path: Path) -> None:
    where = project(tmp_path)
    done = run(where)
    assert done.returncode == 0, done.stdout + done.stderr
    assert verdicts(where) == VERDICTS


def test_a_failing_clean_run_stops_it_before_any_mutant_counts(tmp_path: Path) -> None:
    where = project(tmp_path, extra=FAILS_AFTER_THE_STATS_RUN)
    done = run(where)
    assert done.returncode != 0
    assert "Failed to run clean test" in done.stdout
    assert "tests/test_calc.py::test_only_in_the_stats_run failed" in done.stderr
    assert set(verdicts(where).values()) == {"not checked"}
