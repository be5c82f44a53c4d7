"""A line nobody expected ends nothing (issue 49, point 5), end to end: the real bundled Claude Code
CLI behind a wrapper that slips crafted lines (tests/unexpected_lines.py: every message type the
agent reads, with fields missing, null and of the wrong type) into its output, through
``python -m lifecycle.agent`` and the real ACP SDK client, against the fake Anthropic API.

What is expected is what docs/acp-agent.md promises ("logged and sends nothing") and what the
reference adapter does with the same lines (issue 49: it ends all such turns normally): the prompt
still ends ``end_turn`` with its answer, no ``sessionFailure`` record is sent, Claude Code is not
restarted (the same processes run after the turn), and each line the SDK cannot parse is logged
as skipped with its type and subtype only (never its content) and counted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from claude_agent_sdk._internal.message_parser import parse_message
from unexpected_lines import crafted_lines

from .claude_cli import BUNDLED_CLI, AgentWorkspace, cli_pids
from .fakeapi import text_reply
from .harness import Script, agent, run_async, select

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

FIRST, SECOND = "First answer.", "Second answer."
#: What every line of the agent's log has (structlog's own fields).
LOG_FIELDS = {"event", "level", "timestamp", "logger"}

#: The wrapper: runs the bundled CLI, passes its output through line by line, and writes the
#: crafted lines just before the first result (inside the first turn) and again just after it
#: (between turns, no prompt open).
WRAPPER = """\
import json, subprocess, sys
crafted = open({lines!r}, "rb").read()
cli = subprocess.Popen([{cli!r}, *sys.argv[1:]], stdout=subprocess.PIPE)
out = sys.stdout.buffer
done = False
for line in cli.stdout:
    first = not done and line.startswith(b"{{") and json.loads(line).get("type") == "result"
    if first:
        out.write(crafted)
    out.write(line)
    if first:
        out.write(crafted)
        done = True
    out.flush()
sys.exit(cli.wait())
"""


def _wrap(ws: AgentWorkspace, env: dict[str, str]) -> None:
    lines = ws.tmp / "crafted.jsonl"
    lines.write_text("".join(json.dumps(line) + "\n" for line in crafted_lines()))
    wrapper = ws.tmp / "claude-with-crafted-lines"
    wrapper.write_text(f"#!{sys.executable}\n" + WRAPPER.format(lines=str(lines), cli=str(BUNDLED_CLI)))
    wrapper.chmod(0o755)
    env["LIFECYCLE_ACP_CLI"] = str(wrapper)


def _unparsable() -> int:
    """How many crafted lines the Claude SDK's own parser refuses (it raises)."""
    count = 0
    for line in crafted_lines():
        try:
            parse_message(line)
        except Exception:
            count += 1
    return count


@pytest.mark.parametrize("capable", [True, False], ids=["air", "plain"])
def test_crafted_lines_in_claude_codes_output_end_nothing(tmp_path: Path, capable: bool) -> None:
    async def go() -> None:
        script = Script(text_reply(FIRST), text_reply(SECOND))
        async with agent(tmp_path, script, select("reject"), capable=capable, prepare=_wrap) as run:
            first = await run.prompt("hello")
            before = sorted(cli_pids(run.workspace.config_dir, probes=False))  # (not the identity probe, 52.4)
            assert first.stop_reason == "end_turn" and first.field_meta is None
            assert run.texts() == [FIRST]
            second = await run.prompt("again")
            assert second.stop_reason == "end_turn" and second.field_meta is None
            assert run.texts() == [FIRST, SECOND]
            assert run.records() == []  # no record invented, for either client
            assert before and sorted(cli_pids(run.workspace.config_dir, probes=False)) == before  # not restarted
            log = run.workspace.log()
            names = [e.get("event") for e in log]
            assert "runtime.failed" not in names and "runtime.event_failed" not in names
            skipped = [e for e in log if e.get("event") == "runtime.message_skipped"]
            # every line the SDK refuses is skipped, twice (in the turn, between turns), and counted
            unparsable = [e for e in skipped if e["reason"] == "unparsable"]
            assert len(unparsable) == 2 * _unparsable()
            assert [e["skipped"] for e in skipped] == list(range(1, len(skipped) + 1))
            types = {t for line in crafted_lines() if isinstance(t := line.get("type"), str)}
            subtypes = {t for line in crafted_lines() if isinstance(t := line.get("subtype"), str)}
            for entry in skipped:  # type and subtype only, never content
                assert set(entry) - LOG_FIELDS == {"session_id", "type", "subtype", "reason", "skipped"}, entry
                assert entry["session_id"] == run.sid
                assert entry["type"] is None or entry["type"] in types, entry
                assert entry["subtype"] is None or entry["subtype"] in subtypes, entry

    run_async(go())
