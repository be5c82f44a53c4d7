"""Which Claude Code the agent runs (issue 49, point 6), end to end: ``python -m lifecycle.agent``
through the real ACP SDK client, the real bundled Claude Code CLI behind a wrapper script, the fake
Anthropic API.

* ``CLAUDE_CODE_EXECUTABLE`` names the Claude Code the agent runs, as it does for the reference
  adapter (``claude-code-acp`` passes it to its SDK as ``pathToClaudeCodeExecutable``): the wrapper
  it names is run, the early launch runs it too and is adopted, and the prompt is answered.
* The agent's own ``LIFECYCLE_ACP_CLI`` wins over it, and ``--cli-path`` over both
  (docs/acp-agent.md, "Which Claude Code").
* Without any of them the agent runs the CLI bundled with the pinned ``claude-agent-sdk``.

The wrapper records that it ran (one line in a file of the test's own: ``probe`` for the identity
probe ``auth status --json`` of issue 52.4, which runs the same executable as the reference's
``claudeCliPath()`` does, ``ran`` for anything else), then execs the bundled CLI with its arguments:
what runs is still the real Claude Code.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from lifecycle.agent.config import build_parser, claude_cli

from .claude_cli import AgentWorkspace
from .fakeapi import text_reply
from .harness import Script, agent, run_async, select

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]


def bundled() -> str:
    cli = claude_cli()
    assert cli is not None and "_bundled" in cli, "the claude-agent-sdk with its bundled CLI is not installed"
    return cli


def wrapper(folder: Path, name: str) -> tuple[Path, Path]:
    """A Claude Code executable that appends a line to its mark file (``probe`` when its arguments
    are the identity probe's, else ``ran``), then execs the bundled CLI."""
    folder.mkdir(parents=True, exist_ok=True)
    script, mark = folder / name, folder / f"{name}.ran"
    kind = 'case "$1 $2 $3" in "auth status --json") echo probe ;; *) echo ran ;; esac'
    script.write_text(f'#!/bin/sh\n{kind} >> {shlex.quote(str(mark))}\nexec {shlex.quote(bundled())} "$@"\n')
    script.chmod(0o755)
    return script, mark


def events(workspace: AgentWorkspace, name: str) -> list[dict[str, Any]]:
    return [e for e in workspace.log() if e.get("event") == name]


def test_claude_code_executable_picks_the_cli(tmp_path: Path) -> None:
    script, mark = wrapper(tmp_path / "bin", "claude-wrapper")

    def prepare(ws: AgentWorkspace, env: dict[str, str]) -> None:
        env.pop("LIFECYCLE_ACP_CLI", None)
        env["CLAUDE_CODE_EXECUTABLE"] = str(script)

    async def go() -> None:
        async with agent(tmp_path / "run", Script(text_reply("From the wrapped one.")), select("reject"),
                         prepare=prepare) as run:  # fmt: skip
            response = await run.prompt("hello")
            assert response.stop_reason == "end_turn" and run.texts() == ["From the wrapped one."]
            # The early launch ran the wrapper too, and the session took it.
            (launched,) = events(run.workspace, "runtime.early_launch")
            (adopted,) = events(run.workspace, "runtime.early_adopted")
            assert adopted["pid"] == launched["pid"]
            assert events(run.workspace, "runtime.early_discarded") == []

    run_async(go())
    runs = mark.read_text().splitlines()
    # one Claude Code for the session, the one CLAUDE_CODE_EXECUTABLE names; the identity probe
    # (read at initialize, long before the prompt's answer) ran it too, as the reference's does
    assert [r for r in runs if r != "probe"] == ["ran"] and "probe" in runs


def test_the_agents_own_variable_wins(tmp_path: Path) -> None:
    theirs, their_mark = wrapper(tmp_path / "bin", "reference-claude")
    ours, our_mark = wrapper(tmp_path / "bin", "our-claude")

    def prepare(ws: AgentWorkspace, env: dict[str, str]) -> None:
        env["CLAUDE_CODE_EXECUTABLE"] = str(theirs)
        env["LIFECYCLE_ACP_CLI"] = str(ours)

    async def go() -> None:
        async with agent(tmp_path / "run", Script(text_reply("Ours.")), select("reject"), prepare=prepare) as run:
            response = await run.prompt("hello")
            assert response.stop_reason == "end_turn" and run.texts() == ["Ours."]

    run_async(go())
    assert [r for r in our_mark.read_text().splitlines() if r != "probe"] == ["ran"] and not their_mark.exists()


def test_cli_path_wins_over_both(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CODE_EXECUTABLE", "/opt/reference/claude")
    assert build_parser().parse_args([]).cli_path == "/opt/reference/claude"
    monkeypatch.setenv("LIFECYCLE_ACP_CLI", "/opt/ours/claude")
    assert build_parser().parse_args([]).cli_path == "/opt/ours/claude"
    assert build_parser().parse_args(["--cli-path", "/opt/given/claude"]).cli_path == "/opt/given/claude"
    monkeypatch.delenv("CLAUDE_CODE_EXECUTABLE")
    monkeypatch.delenv("LIFECYCLE_ACP_CLI")
    assert build_parser().parse_args([]).cli_path is None  # the bundled one (claude_cli)
    assert claude_cli(None) == bundled()
