"""``lifecycle proxy -- <agent command…>``: any ACP agent behind a relay that makes its failures
``sessionFailure`` records for a client that negotiated them (issue 53; docs/proxy.md).

The relay is sans-I/O (:mod:`lifecycle.proxy.relay`: lines in, lines out); the I/O shell
(:mod:`lifecycle.proxy.shell`) starts the agent and pumps the two pipes. A client that did not
negotiate ``sessionFailure``, and any client of an agent that advertises it itself, gets every
line byte for byte as the agent wrote it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .relay import PARSE_ERROR, Output, Problem, Relay, ToAgent, ToClient, agent_advertises

__all__ = ["PARSE_ERROR", "Output", "Problem", "Relay", "ToAgent", "ToClient", "agent_advertises", "cli_main"]

USAGE = "usage: lifecycle proxy -- AGENT [ARG ...]\n\nRun the ACP agent AGENT behind the lifecycle relay, over stdio."


def cli_main(argv: Sequence[str]) -> int:
    """``lifecycle proxy [--] AGENT [ARG ...]``; the agent's exit code (2: a usage error)."""
    args = list(argv)
    if args[:1] in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        print(USAGE, file=sys.stderr)
        return 2
    from .shell import run

    return run(args)
