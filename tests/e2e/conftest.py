"""End-to-end tests: the real bundled Claude Code CLI against the fake API in ``fakeapi``.

``fakeapi`` (the fake Anthropic Messages API, 127.0.0.1 only) and ``claude_cli`` (the bundled CLI
run in an isolated home against it) are the project's own harness; the recordings they are
compared with are vendored in ``tests/fixtures/claude-cli-2.1.332`` (tests/fixtures/README.md:
where they came from, and how to check or re-record them with this harness). Every test here
needs the ``claude`` and ``acp`` extras (the ``test`` extra installs them), and
``test_cli_faults.py::test_cli_contacts_only_the_fake_server`` needs ``strace``: a missing one
fails the test, it is never skipped.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES


def fixtures_dir() -> Path:
    """The recorded runs vendored in this repository (``tests/conftest.py``'s ``FIXTURES``)."""
    if not (FIXTURES / "README.md").is_file():
        raise FileNotFoundError(f"recorded fixtures missing: {FIXTURES}")
    return FIXTURES


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "e2e: runs the real bundled Claude Code CLI against a fake Anthropic API on 127.0.0.1",
    )


@pytest.fixture(scope="session")
def recorded() -> Path:
    return fixtures_dir()
