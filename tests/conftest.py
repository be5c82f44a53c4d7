"""Shared test configuration: hypothesis profiles and the paths of the vendored test data."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
#: The recorded Claude Code CLI runs (tests/fixtures/README.md says where they came from).
FIXTURES = ROOT / "tests" / "fixtures" / "claude-cli-2.1.332"
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
