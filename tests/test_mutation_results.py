"""``tests/mutation-results.json`` (the last measured mutation score of the core) is consistent with
``pyproject.toml``'s ``[tool.mutmut]``, with its own arithmetic, with the command docs/checking.md
documents, and with the repository's history; every module measured in full meets the floor, and
one that is not is named as such in docs/checking.md (docs/checking.md, "Mutation testing").
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import mutation_score as ms  # noqa: E402

RESULTS = json.loads(ms.RESULTS.read_text())


def test_the_module_list_and_test_selection_are_pyprojects() -> None:
    cfg = ms.pyproject_mutmut()
    assert RESULTS["only_mutate"] == cfg["only_mutate"]
    assert RESULTS["test_selection"] == cfg["test_selection"]
    assert list(RESULTS["modules"]) == [ms.module_name(p) for p in cfg["only_mutate"]]
    assert all((ROOT / p).is_file() for p in cfg["only_mutate"] + cfg["test_selection"])


def test_the_selection_holds_the_tests_of_every_mutated_module() -> None:
    """Each mutated module's own test file (house style: tests/test_<module>.py) is selected, and
    so is the turn machine's (it covers ``answers``)."""
    selected = set(RESULTS["test_selection"])
    for path in RESULTS["only_mutate"]:
        own = f"tests/test_{ms.module_name(path).split('.')[-1]}.py"
        if (ROOT / own).is_file():
            assert own in selected, own
    assert "tests/test_session_flow.py" in selected


def test_the_figures_add_up() -> None:
    for name, f in RESULTS["modules"].items():
        assert f["mutants"] > 0, name
        assert f["killed"] + sum(f["other"].values()) == f["mutants"], name
        assert f["score"] == round(100 * f["killed"] / f["mutants"], 1), name
        assert not set(f["other"]) & ms.KILLED, name


def test_every_module_measured_in_full_meets_the_floor_or_the_docs_say_it_does_not() -> None:
    """The floor is 90 %; a module the recorded run found below it is named so in docs/checking.md;
    CI (``--ci``, a full run) fails on it until its tests kill enough."""
    assert RESULTS["floor"] == ms.FLOOR == 90.0
    page = " ".join((ROOT / "docs" / "checking.md").read_text().split())
    for name, f in RESULTS["modules"].items():
        if "not checked" in f["other"] or f["score"] >= RESULTS["floor"]:
            continue
        assert f"`{name}` is below the floor" in page, (name, f)


def test_a_module_not_measured_in_full_is_said_so_in_the_docs() -> None:
    """The docs name every module whose run was not finished (CI's full run measures it again)."""
    page = " ".join((ROOT / "docs" / "checking.md").read_text().split())
    unfinished = [n for n, f in RESULTS["modules"].items() if "not checked" in f["other"]]
    for name in unfinished:
        assert f"`{name}` was not measured in full" in page, name


def test_the_command_and_figures_are_the_documented_ones() -> None:
    """docs/checking.md shows the recorded command and every module's recorded score."""
    page = (ROOT / "docs" / "checking.md").read_text()
    assert RESULTS["command"] == list(ms.COMMAND)
    for line in RESULTS["command"]:
        assert line in page, line
    assert f"mutmut {RESULTS['mutmut']}" in page and RESULTS["date"] in page and RESULTS["commit"][:12] in page
    for name, f in RESULTS["modules"].items():
        assert f"| `{name}` | {f['mutants']} | {f['killed']} | {f['score']} % |" in page, name


def test_the_recorded_commit_is_in_the_history() -> None:
    try:
        res = subprocess.run(
            ["git", "merge-base", "--is-ancestor", RESULTS["commit"], "HEAD"], cwd=ROOT, capture_output=True, timeout=60
        )
    except OSError:
        pytest.fail("git is needed to check the recorded commit")
    assert res.returncode == 0, f"{RESULTS['commit']} is not an ancestor of HEAD"


def test_ci_installs_the_pinned_mutmut_and_measures_the_whole_core() -> None:
    """A full run fits CI's budget (docs/checking.md), so the test extras pin the mutmut version
    the figures come from, and ``.ci/run`` installs them, then runs ``--ci`` (a full run, two
    workers, the per-module floor) before README's test command and removes ``mutants/``."""
    with (ROOT / "pyproject.toml").open("rb") as fh:
        extras = tomllib.load(fh)["project"]["optional-dependencies"]["test"]
    assert f"mutmut=={ms.MUTMUT_VERSION}" in extras
    assert RESULTS["mutmut"] == ms.MUTMUT_VERSION
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    install = lines.index(".venv/bin/python -m pip install -q -e '.[test]'")
    run = lines.index(".venv/bin/python tests/mutation_score.py --ci || mutation=$?")
    tests = lines.index(".venv/bin/python -m pytest -n 4 --dist loadfile")
    assert install < run < tests
    assert lines[run + 1] == "rm -rf mutants" and lines[run + 2] == '[ "$mutation" -eq 0 ]'
