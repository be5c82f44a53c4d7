"""``lifecycle proxy``'s faults, with ordinary programs as the agent (issue 53.5, as the task's
point 1 asks): ``sh`` that ignores its stdin and leaves a descendant (as codex-acp 0.16.0 does not
exit on stdin EOF), ``sh -c 'exit 3'`` (an agent that exits), ``cat`` (an agent that echoes every
line it gets, so what reaches the agent comes back), and a program that prints garbage.

* the client goes away (stdin EOF) → the agent and its descendants are stopped, even an agent
  that ignores EOF, and the proxy exits;
* the agent exits → the proxy exits with the agent's exit code;
* a malformed line from the client gets a JSON-RPC parse error and never reaches the agent; a
  malformed line from the agent is dropped and reported on stderr, and what follows still arrives;
* an agent that cannot be started, or no agent at all, is a clear error (exit 2).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .processes import descendants
from .proxy_agents import LineClient, checkout_env, gone_within, proxy_command

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

#: seconds the proxy may take to stop an agent that ignores EOF (a correctness bound: the shell's
#: grace periods are 2 s + 2 s)
GONE_WITHIN_S = 20.0


def _client(tmp_path: Path, *agent: str) -> LineClient:
    return LineClient(proxy_command(*agent), env=checkout_env(dict(os.environ)), cwd=tmp_path, stderr=tmp_path / "err")


def test_the_client_going_away_stops_an_agent_that_ignores_eof_and_its_descendants(tmp_path: Path) -> None:
    client = _client(tmp_path, "sh", "-c", "sleep 300 & sleep 301")
    try:
        tree = descendants(client.proc.pid)
        while len(tree) < 3:  # sh, and its two sleeps (polled; the test's timeout bounds it)
            time.sleep(0.05)
            tree = descendants(client.proc.pid)
        assert client.close(GONE_WITHIN_S) == 128 + 15  # the agent ended by SIGTERM
        assert gone_within(tree, GONE_WITHIN_S) == []
    finally:
        client.kill()


def test_a_sigterm_to_the_proxy_stops_an_agent_that_ignores_eof(tmp_path: Path) -> None:
    """The client's stdin stays open; SIGTERM to the proxy (an editor stopping it) is the client
    going away: the agent's group gets SIGTERM after the grace and the proxy exits with it."""
    client = _client(tmp_path, "sh", "-c", "trap '' HUP; sleep 300 & sleep 301")
    try:
        tree = descendants(client.proc.pid)
        while len(tree) < 3:  # sh, and its two sleeps (polled; the test's timeout bounds it)
            time.sleep(0.05)
            tree = descendants(client.proc.pid)
        client.proc.send_signal(signal.SIGTERM)
        assert client.proc.wait(GONE_WITHIN_S) == 128 + 15  # the agent ended by SIGTERM
        assert gone_within(tree, GONE_WITHIN_S) == []
    finally:
        client.kill()


def test_the_proxy_exits_with_the_agent() -> None:
    proc = subprocess.run(proxy_command("sh", "-c", "exit 3"), stdin=subprocess.PIPE, timeout=60, check=False)
    assert proc.returncode == 3


def test_a_malformed_client_line_is_answered_and_never_reaches_the_agent(tmp_path: Path) -> None:
    client = _client(tmp_path, "cat")
    try:
        client.send_line(b"this is not json")
        assert client.next_message() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error: the proxy received a line that is not JSON"},
        }
        good = b'{"jsonrpc":"2.0","method":"x/ping","params":{"n":1}}'
        client.send_line(good)
        client.next_message()
        assert client.lines == [client.lines[0], good]  # cat echoed only the JSON line, byte for byte
        assert client.close() == 0
    finally:
        client.kill()
    assert (tmp_path / "err").read_text().splitlines() == [
        "lifecycle proxy: the client wrote a line that is not UTF-8 JSON: answered with a parse error, not passed on"
    ]


def test_a_malformed_agent_line_is_dropped_and_the_rest_arrives(tmp_path: Path) -> None:
    script = 'printf \'garbage from the agent\\n{"jsonrpc":"2.0","method":"x/after"}\\n\'; exec cat >/dev/null'
    client = _client(tmp_path, "sh", "-c", script)
    try:
        assert client.next_message() == {"jsonrpc": "2.0", "method": "x/after"}
        assert client.close() == 0
    finally:
        client.kill()
    assert (tmp_path / "err").read_text().splitlines() == [
        "lifecycle proxy: the agent wrote a line that is not UTF-8 JSON: dropped"
    ]


def test_an_agent_that_cannot_start_is_a_clear_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        proxy_command(str(tmp_path / "no-such-agent")), capture_output=True, text=True, timeout=60, check=False
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "lifecycle proxy: cannot start the agent 'no-such-agent': No such file or directory\n"


def test_no_agent_is_a_usage_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "lifecycle", "proxy", "--"], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 2 and proc.stderr.startswith("usage: lifecycle proxy -- AGENT [ARG ...]")
    assert json.dumps(proc.stdout) == '""'


def test_a_stdin_that_is_no_pipe_works_too(tmp_path: Path) -> None:
    # /dev/null and a file are what a shell or a script may give; the event loop's pipe transport
    # refuses both (the proxy reads them in a thread): the agent sees every line, then EOF
    line = b'{"jsonrpc":"2.0","method":"x/one"}\n'
    (tmp_path / "in").write_bytes(line)
    with (tmp_path / "in").open("rb") as file:
        for stdin, expected in ((subprocess.DEVNULL, b""), (file, line)):
            proc = subprocess.run(proxy_command("cat"), stdin=stdin, capture_output=True, timeout=60, check=False)
            assert (proc.returncode, proc.stdout, proc.stderr) == (0, expected, b"")
