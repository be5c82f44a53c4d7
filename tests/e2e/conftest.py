"""End-to-end tests: the real bundled Claude Code CLI against the fake API in ``fakeapi``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
_FIXTURE_NAME = "claude-cli-2.1.332"


def fixtures_dir() -> Path:
    """Recorded runs: ``$CC_E2E_FIXTURES`` or ``shared/fixtures/claude-cli-2.1.332`` next to the repo."""
    env = os.environ.get("CC_E2E_FIXTURES")
    candidates = [Path(env)] if env else []
    candidates += [
        _HERE.parents[2] / "shared" / "fixtures" / _FIXTURE_NAME,  # <work>/shared beside <work>/main
        Path("/work/shared/fixtures") / _FIXTURE_NAME,
    ]
    for c in candidates:
        if (c / "README.md").is_file():
            return c
    raise FileNotFoundError(f"recorded fixtures not found in any of {candidates}")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "e2e: runs the real bundled Claude Code CLI against a fake Anthropic API on 127.0.0.1",
    )


@pytest.fixture(scope="session")
def recorded() -> Path:
    return fixtures_dir()
