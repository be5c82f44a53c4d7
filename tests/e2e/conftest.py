"""End-to-end tests: the real bundled Claude Code CLI against the fake API in ``fakeapi``.

``fakeapi`` (the fake Anthropic Messages API, 127.0.0.1 only) and ``claude_cli`` (the bundled CLI
run in an isolated home against it) are the project's own harness; the recordings they are
compared with are vendored in ``tests/fixtures/claude-cli-2.1.337`` (tests/fixtures/README.md:
where they came from, and how to check or re-record them with this harness). Every test here
needs the ``claude`` and ``acp`` extras (the ``test`` extra installs them), and
``test_cli_faults.py::test_cli_contacts_only_the_fake_server`` needs ``strace``: a missing one
fails the test, it is never skipped.

The fixtures every file shares are here, each once: ``recorded`` (the recordings' folder),
``agents`` (one long-lived :class:`agent_under_test.AgentUnderTest` per client kind and
command-line options, for a module), ``oracle_pairs`` (one long-lived pair of ours and the
reference per client kind, for a module) and ``reference_package`` (the reference adapter,
installed once per machine by ``reference.py``). The helpers live in ``harness.py``, ``agent_under_test.py``,
``oracle.py`` and ``processes.py`` (tests/README.md); no module here imports a ``test_*`` module.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import FIXTURES

from .agent_under_test import AgentUnderTest
from .oracle import OracleAgent, pair
from .reference import ensure_reference


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


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., AgentUnderTest]]:
    """``agents(kind, *args)``: the module's agent for client ``kind`` ("capable" or "legacy") run
    with the options ``args``, started the first time a test asks; all stopped after the module."""
    started: dict[tuple[str, tuple[str, ...]], AgentUnderTest] = {}

    def get(kind: str, *args: str) -> AgentUnderTest:
        if (kind, args) not in started:
            agent = AgentUnderTest(kind, tmp_path_factory.mktemp(f"acp-{kind}"), args)
            started[kind, args] = agent
            agent.start()
        return started[kind, args]

    yield get
    for agent in started.values():
        agent.stop()


@pytest.fixture(scope="module")
def reference_package() -> Path:
    """The reference adapter's installed package (``reference.py`` fetches it once per machine)."""
    return ensure_reference()


@pytest.fixture(scope="module")
def oracle_pairs(
    tmp_path_factory: pytest.TempPathFactory, reference_package: Path
) -> Iterator[Callable[[str], dict[str, OracleAgent]]]:
    """``oracle_pairs(client)``: the module's two agents (``oracle.pair``: ours and the reference)
    for the client kind ``client``, started the first time a test asks; each test opens its own
    sessions on them, as an editor does. All stopped after the module."""
    with contextlib.ExitStack() as stack:
        started: dict[str, dict[str, OracleAgent]] = {}

        def get(client: str) -> dict[str, OracleAgent]:
            if client not in started:
                root = tmp_path_factory.mktemp(f"oracle-{client}")
                started[client] = stack.enter_context(pair(client, root, reference_package))
            return started[client]

        yield get
