"""The proxy's I/O shell: the agent's process and the two pipes around a :class:`~.relay.Relay`.

Rules:

* The agent is started as the leader of its own process group (``start_new_session``), its
  stderr inherited (what it logs reaches the client's log as it would without the proxy).
* Two pumps, one thread per direction, each reading whole lines (at most :data:`MAX_LINE_BYTES`; a
  longer one is reported and dropped) and writing what the relay answers, in order; one lock
  keeps the relay's state to one line at a time. A write to the agent blocks while the agent is
  behind, so the client's pump stops reading: nothing piles up in the proxy. Threads, not an
  event loop: asyncio loads the ``ssl`` module and OpenSSL (about 8 MB of a process's memory) for
  a relay that never opens a socket (issue 53.5: at most 30 MB over the agent alone,
  ``workshop bench --only proxy``).
* **The agent exits → the proxy exits** with the agent's exit code, after answering what the relay
  says (a capable client's prompts in flight). Whatever the agent left behind in its process group
  is stopped.
* **The client goes away** (EOF on stdin, or SIGTERM/SIGHUP/SIGINT to the proxy, read by the main
  thread) → the agent's stdin is closed; an agent that has not exited :data:`EOF_GRACE_S` seconds
  later (codex-acp ignores EOF) gets SIGTERM for its whole process group, and SIGKILL
  :data:`TERM_GRACE_S` seconds after that. The proxy exits when the agent has.
* Reports go to stderr as ``lifecycle proxy: ...`` lines naming the side and the problem, never the
  text of a message.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import Final

from .relay import Output, Problem, Relay, ToAgent, ToClient

__all__ = ["EOF_GRACE_S", "MAX_LINE_BYTES", "TERM_GRACE_S", "run"]

#: the longest line either side may write (as ``lifecycle acp``'s transport)
MAX_LINE_BYTES: Final = 50 * 1024 * 1024
#: how long an agent may take to exit by itself once the client went away
EOF_GRACE_S: Final = 2.0
#: how long an agent may take to exit after SIGTERM before SIGKILL
TERM_GRACE_S: Final = 2.0


def _report(text: str) -> None:
    print(f"lifecycle proxy: {text}", file=sys.stderr, flush=True)


class _Shell:
    def __init__(self, proc: subprocess.Popen[bytes], relay: Relay, out: int) -> None:
        assert proc.stdin is not None
        self.proc, self.relay = proc, relay
        #: where lines go: written with ``os.write``, each destination under its own lock so two
        #: pumps' lines never interleave (no buffered writer: a thread blocked in a write when the
        #: proxy exits must hold no lock of the interpreter's)
        self.to_client, self.to_agent = out, proc.stdin.fileno()
        self.client_lock, self.agent_lock = threading.Lock(), threading.Lock()
        #: held while the relay reads one line, never while writing: a side that is slow to read
        #: (its pipe full) must not stop the other direction
        self.lock = threading.Lock()
        self.client_gone = threading.Event()
        self.agent_done = threading.Event()
        self.agent_stdin_closed = False

    def perform(self, outputs: list[Output]) -> None:
        for item in outputs:
            if isinstance(item, ToClient):
                with self.client_lock:
                    _write_all(self.to_client, item.line + b"\n")
            elif isinstance(item, ToAgent):
                with self.agent_lock:
                    if not self.agent_stdin_closed:
                        _write_all(self.to_agent, item.line + b"\n")
            elif isinstance(item, Problem):
                _report(f"the {item.side} wrote {item.what}")

    def client_pump(self, stdin: int) -> None:
        for line in _lines(stdin, "client"):
            with self.lock:
                outputs = self.relay.from_client(line)
            self.perform(outputs)
        self.client_gone.set()

    def agent_pump(self) -> None:
        assert self.proc.stdout is not None
        try:
            for line in _lines(self.proc.stdout.fileno(), "agent"):
                with self.lock:
                    outputs = self.relay.from_agent(line)
                self.perform(outputs)
        finally:
            self.agent_done.set()

    def stop_agent(self) -> None:
        """The client went away: close the agent's stdin, then stop its process group."""
        self.agent_stdin_closed = True  # checked before each write; a write already blocked fails
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        for sig, grace in ((None, EOF_GRACE_S), (signal.SIGTERM, TERM_GRACE_S), (signal.SIGKILL, None)):
            if sig is not None:
                _kill_group(self.proc.pid, sig)
            if grace is None:
                return
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(grace)
                return


def _write_all(fd: int, data: bytes) -> None:
    """All of ``data`` to ``fd``; a side that closed its end loses what was left (its reader is gone)."""
    view = memoryview(data)
    with contextlib.suppress(OSError):
        while view:
            view = view[os.write(fd, view) :]


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _lines(fd: int, side: str) -> Iterator[bytes]:
    """Whole lines of the file descriptor ``fd`` without their newline, until EOF; an over-long line
    is reported and dropped. Read with ``os.read``, not a buffered reader: a pump thread still
    blocked in a read when the proxy exits must hold no lock of the interpreter's."""
    held = b""
    dropping = False
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            if held.strip() and not dropping:
                yield held
            return
        parts = (held + chunk).split(b"\n")
        held = parts.pop()
        for line in parts:
            if dropping:  # the end of a line already reported
                dropping = False
            elif line.strip():
                yield line
        if len(held) > MAX_LINE_BYTES:
            if not dropping:
                _report(f"the {side} wrote a line longer than {MAX_LINE_BYTES} bytes: dropped")
            held, dropping = b"", True


def run(command: Sequence[str]) -> int:
    """Run the agent ``command`` behind the relay, on this process's stdin and stdout; the agent's
    exit code (128 + N when signal N ended it, as a shell reports it; 2 when it cannot be started)."""
    try:
        proc = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        _report(f"cannot start the agent {os.path.basename(command[0])!r}: {exc.strerror or type(exc).__name__}")
        return 2
    relay = Relay(command=command[0], new_turn_id=lambda: str(uuid.uuid4()))
    shell = _Shell(proc, relay, sys.stdout.fileno())

    def client_went_away(_signum: int, _frame: FrameType | None) -> None:
        shell.client_gone.set()

    previous = {sig: signal.signal(sig, client_went_away) for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    for pump, name, args in ((shell.client_pump, "client", (sys.stdin.fileno(),)), (shell.agent_pump, "agent", ())):
        threading.Thread(target=pump, args=args, name=f"lifecycle-proxy-{name}", daemon=True).start()
    try:
        stopped = False
        # Short waits: the main thread runs the signal handlers, and notices the agent's exit.
        while True:
            if shell.agent_done.wait(0.05):  # its stdout ended: wait for the process itself
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(0.05)
                if proc.poll() is not None:
                    break
            if shell.client_gone.is_set() and not stopped:
                stopped = True
                threading.Thread(target=shell.stop_agent, name="lifecycle-proxy-stop", daemon=True).start()
        code = proc.wait()
        with shell.lock:
            outputs = relay.agent_exited()
        shell.perform(outputs)
    finally:
        _kill_group(proc.pid, signal.SIGTERM)  # whatever the agent left behind
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return code if code >= 0 else 128 - code
