"""Shared test configuration: hypothesis profiles and paths to ../shared."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("LIFECYCLE_SHARED", ROOT.parent / "shared"))
FIXTURES = SHARED / "fixtures" / "claude-cli-2.1.332"
CONFORMANCE = SHARED / "conformance"

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
