"""End-to-end tests: the real bundled Claude Code CLI against the fake API in ``fakeapi``."""

from __future__ import annotations

from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
_FIXTURE_NAME = "claude-cli-2.1.332"


def fixtures_dir() -> Path:
    """The recorded runs vendored in this repository (``tests/fixtures/claude-cli-2.1.332``)."""
    path = _HERE.parent / "fixtures" / _FIXTURE_NAME
    if not (path / "README.md").is_file():
        raise FileNotFoundError(f"recorded fixtures missing: {path}")
    return path


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "e2e: runs the real bundled Claude Code CLI against a fake Anthropic API on 127.0.0.1",
    )


@pytest.fixture(scope="session")
def recorded() -> Path:
    return fixtures_dir()
