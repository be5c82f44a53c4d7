"""The reference adapter as an oracle for an MCP server that fails to start: the same
``session/new`` (a stdio server whose command exits at once, and a working one) and the same
prompt through both agents, for the three client kinds (a client that declared
``session.notices``, a capable ``sessionFailure`` client, a plain one).

The harness of ``oracle.py`` (both agents on Claude Code 2.1.332, each against its
own loopback fake API answering the same script). Everything a client received for the session
from ``session/new`` to the prompt's answer is compared, normalised as there: the answer, the
records, the ACP notices, the agent text. Every difference must be listed in :data:`KNOWN` with its
exact shape, under a row of docs/parity/README.md's table "Where the coding turn differs from the
reference" (:data:`MCP_DIFFERENCES`, checked in sync by ``test_reference_oracle_tools.py``); an
unlisted difference fails, and so does a listed one that is no longer observed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.connection import StreamDirection
from acp.schema import McpServerStdio

from .fakeapi import SUCCESS_CHUNKS
from .harness import Outcome
from .oracle import MCP_DIFFERENCES, Check, OracleAgent, Seen, exactly, pair, seen, unexplained

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

ECHO_SERVER = Path(__file__).with_name("mcp_echo_server.py")
SERVERS = [
    McpServerStdio(name="files", command=sys.executable, args=[str(ECHO_SERVER)], env=[]),
    McpServerStdio(name="broken", command=sys.executable, args=["-c", "import sys; sys.exit(3)"], env=[]),
]
TITLE = 'MCP server "broken" failed to start'
OURS = "Its tools are unavailable in this session."
HELLO = list(SUCCESS_CHUNKS)  # the fake API's answer, streamed
REFERENCE = "Its tools are unavailable in this session. Run /mcp for the error."

_WORDS, _RECORD = MCP_DIFFERENCES

def _capable_record(ours: Any, ref: Any) -> bool:
    """Ours: one notice record (``unknown``, warning, no actions) on a ``session_info_update``;
    the reference: none."""
    if ref != [] or len(ours) != 1:
        return False
    carrier, _id, revision, category, severity, title, details, actions = ours[0]
    return (carrier, revision, category, severity, title, details, actions) == (
        "session_info_update",
        1,
        "unknown",
        "warning",
        f"{TITLE}. {OURS}",
        None,
        [],
    )


#: (client, facet) -> (the point of MCP_DIFFERENCES, the exact difference).
KNOWN: dict[tuple[str, str], tuple[str, Check]] = {
    ("notices", "notices"): (
        _WORDS,
        exactly(
            [{"severity": "warning", "title": TITLE, "description": OURS}],
            [{"severity": "warning", "title": TITLE, "description": REFERENCE}],
        ),
    ),
    ("plain", "text"): (_WORDS, exactly([f"**{TITLE}:** {OURS}", *HELLO], [f"**{TITLE}:** {REFERENCE}", *HELLO])),
    ("capable", "records"): (_RECORD, _capable_record),
    ("capable", "text"): (_RECORD, exactly(HELLO, [f"**{TITLE}:** {REFERENCE}", *HELLO])),
}
CLIENTS = ("notices", "capable", "plain")


def session_and_prompt(agent: OracleAgent) -> Outcome:
    """``session/new`` with :data:`SERVERS`, then one prompt: every frame of the session from the
    ``session/new`` request to the prompt's answer (a notice may come before the prompt)."""
    start = len(agent.frames)
    sid = str(agent.call(agent.conn.new_session(cwd=str(agent.cwd), mcp_servers=SERVERS)).session_id)
    agent.script.load("success", then="success")
    out = agent.exchange(sid, agent.conn.prompt(session_id=sid, prompt=[acp.text_block("hi")]), 60)
    before = [
        m
        for d, m in agent.frames[start:]
        if d == StreamDirection.INCOMING and m.get("params", {}).get("sessionId") == sid and m not in out.frames
    ]
    return Outcome(sid, before + out.frames, out.result, out.error, out.model, out.elapsed)


@pytest.mark.parametrize("client", CLIENTS)
def test_both_agents_show_a_failed_mcp_server_alike(client: str, reference_package: Path, tmp_path: Path) -> None:
    observed: dict[str, Seen] = {}
    with pair(client, tmp_path, reference_package) as agents:
        for impl, agent in agents.items():
            observed[impl] = seen(session_and_prompt(agent))
            # Literally, on both sides: not a failure of the turn, Claude answered.
            assert observed[impl].answer == {"stopReason": "end_turn"}, (impl, observed[impl])
            assert observed[impl].text[-3:] == HELLO, (impl, observed[impl].text)
    ours, ref = observed["ours"].__dict__, observed["reference"].__dict__
    problems = unexplained(ours, ref, ("answer", "records", "notices", "text"), lambda name: KNOWN.get((client, name)))
    assert not problems, f"{client}:\n" + "\n".join(problems)


def test_every_listed_point_is_used() -> None:
    assert {point for point, _ in KNOWN.values()} == set(MCP_DIFFERENCES)
    assert {client for client, _ in KNOWN} <= set(CLIENTS)
