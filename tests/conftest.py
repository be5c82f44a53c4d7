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
