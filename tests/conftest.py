"""Shared test configuration: hypothesis profiles, the paths of the vendored test data, and the
one run of ``python -m workshop check`` (and of ``--mutants``) the tests read.

The exploration runs once per suite run: ``.ci/run`` runs ``python -m workshop check --json`` and
``python -m workshop check --mutants --json`` as its own steps and names the folder it wrote them
to in ``LIFECYCLE_CHECK_RESULTS``, with the digest of the ``lifecycle/`` and ``workshop/`` sources
they ran on; the fixtures below read those files, and refuse them (fail) if the sources changed
since. Without the variable (``pytest`` alone) a fixture runs the same command itself (from the
repository root, where ``python -m workshop`` finds the package), once per worker.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
#: The recorded Claude Code CLI runs (tests/fixtures/README.md says where they came from).
FIXTURES = ROOT / "tests" / "fixtures" / "claude-cli-2.1.337"
#: The public conformance cases, their checker, runner and format (tests/conformance/README.md).
CONFORMANCE = ROOT / "tests" / "conformance"

# "ci" (the default): derandomised, so every run of the suite explores the same examples.
settings.register_profile(
    "ci",
    max_examples=200,
    stateful_step_count=40,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
# "long": by hand, e.g. HYPOTHESIS_PROFILE=long pytest tests/test_stateful.py
settings.register_profile(
    "long",
    max_examples=5000,
    stateful_step_count=100,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def documented_count(what: str) -> int:
    """How many ``what`` tests/README.md says there are ("Case lists cannot shrink silently":
    ``conformance cases``, ``recordings``, ``transcripts``, ``histories``).

    The one place such a count is written: the files that run a folder's cases assert they found
    exactly this many, so a missing file fails and a new one must be counted there.
    """
    import re

    text = " ".join((ROOT / "tests" / "README.md").read_text().split())
    found = re.findall(rf"\b(\d+) {re.escape(what)}\b", text)
    assert len(found) == 1, f"tests/README.md should state the number of {what} once, found {found}"
    return int(found[0])


#: The folder ``.ci/run`` wrote ``check.json``, ``mutants.json`` and ``source.sha256`` to.
CHECK_RESULTS = "LIFECYCLE_CHECK_RESULTS"
#: result file -> the ``python -m workshop check`` arguments that write it (always with ``--json``).
CHECK_RUNS = {"check.json": [], "mutants.json": ["--mutants"]}


#: The source folders an exploration runs: the product and the explorer (with its mutants).
SOURCE_FOLDERS = ("lifecycle", "workshop")


def source_digest() -> str:
    """sha256 of every ``*.py`` under :data:`SOURCE_FOLDERS` (its path and bytes): the code an
    exploration ran on."""
    digest = hashlib.sha256()
    for path in sorted(p for folder in SOURCE_FOLDERS for p in (ROOT / folder).rglob("*.py")):
        digest.update(f"{path.relative_to(ROOT)}\0".encode() + path.read_bytes() + b"\0")
    return digest.hexdigest()


def check_report(name: str) -> dict[str, Any]:
    """The JSON report of ``python -m workshop check [--mutants] --json`` over today's sources: read from
    ``$LIFECYCLE_CHECK_RESULTS/<name>`` when set (the digest must match), else run here."""
    folder = os.environ.get(CHECK_RESULTS)
    if folder:
        where = Path(folder)
        recorded = (where / "source.sha256").read_text().strip()
        assert recorded == source_digest(), f"{where} holds a run of other sources: run python -m workshop check again"
        report: dict[str, Any] = json.loads((where / name).read_text())
        return report
    cmd = [sys.executable, "-m", "workshop", "check", *CHECK_RUNS[name], "--json"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert res.returncode in (0, 1) and res.stdout, res.stderr[-800:]
    report = json.loads(res.stdout)
    return report


@pytest.fixture(scope="session")
def exploration() -> dict[str, Any]:
    """``python -m workshop check --json`` at the default bounds: the whole space, run once."""
    return check_report("check.json")


@pytest.fixture(scope="session")
def mutants_report() -> dict[str, Any]:
    """``python -m workshop check --mutants --json`` at the default bounds: every seeded bug, run once."""
    return check_report("mutants.json")
