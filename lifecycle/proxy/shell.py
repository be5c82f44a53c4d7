"""The proxy's I/O shell: the agent's process and the two pipes around a :class:`~.relay.Relay`.

Rules:

* The agent is started as the leader of its own process group (``start_new_session``), its
  stderr inherited (what it logs reaches the client's log as it would without the proxy).
* Two pumps, one per direction, each reading whole lines (at most :data:`MAX_LINE_BYTES`; a longer
  one is reported and dropped) and writing what the relay answers, in order. A stdin that is a
  pipe or a socket is read by the event loop (which stops reading while the agent is behind);
  any other kind (a terminal, ``/dev/null``, a file) by a thread.
* **The agent exits → the proxy exits** with the agent's exit code, after answering what the relay
  says (a capable client's prompts in flight). Whatever the agent left behind in its process group
  is stopped.
* **The client goes away** (EOF on stdin, or SIGTERM/SIGHUP/SIGINT to the proxy) → the agent's stdin is
  closed; an agent that has not exited :data:`EOF_GRACE_S` seconds later (codex-acp ignores EOF)
  gets SIGTERM for its whole process group, and SIGKILL :data:`TERM_GRACE_S` seconds after that.
  The proxy exits when the agent has.
* Reports go to stderr as ``lifecycle proxy: ...`` lines naming the side and the problem, never the
  text of a message.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import BinaryIO, Final

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
    def __init__(self, proc: asyncio.subprocess.Process, relay: Relay, out: BinaryIO) -> None:
        self.proc, self.relay, self.out = proc, relay, out
        self.client_gone = asyncio.Event()

    def perform(self, outputs: list[Output]) -> None:
        for item in outputs:
            if isinstance(item, ToClient):
                self.out.write(item.line + b"\n")
                self.out.flush()
            elif isinstance(item, ToAgent):
                stdin = self.proc.stdin
                if stdin is not None and not stdin.is_closing():
                    stdin.write(item.line + b"\n")
            elif isinstance(item, Problem):
                _report(f"the {item.side} wrote {item.what}")

    async def client_pump(self, reader: asyncio.StreamReader) -> None:
        async for line in _lines(reader, "client"):
            self.perform(self.relay.from_client(line))
            stdin = self.proc.stdin
            if stdin is not None and not stdin.is_closing():
                with contextlib.suppress(ConnectionError):
                    await stdin.drain()
        self.client_gone.set()

    async def agent_pump(self) -> None:
        assert self.proc.stdout is not None
        async for line in _lines(self.proc.stdout, "agent"):
            self.perform(self.relay.from_agent(line))

    async def stop_agent(self) -> None:
        """The client went away: close the agent's stdin, then stop its process group."""
        await self.client_gone.wait()
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        for sig, grace in ((None, EOF_GRACE_S), (signal.SIGTERM, TERM_GRACE_S), (signal.SIGKILL, None)):
            if sig is not None:
                _kill_group(self.proc.pid, sig)
            if grace is None:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.proc.wait(), grace)
                return


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def _lines(reader: asyncio.StreamReader, side: str) -> AsyncIterator[bytes]:
    """Whole lines without their newline, until EOF; an over-long line is reported and dropped."""
    while True:
        try:
            line = await reader.readline()
        except ValueError:  # longer than the limit: the reader dropped what it held of it
            _report(f"the {side} wrote a line longer than {MAX_LINE_BYTES} bytes: dropped")
            continue
        if not line:
            return
        if line.endswith(b"\n"):
            line = line[:-1]
        if line.strip():
            yield line


async def _stdin_reader() -> asyncio.StreamReader:
    """The client's stdin as a stream: a pipe or a socket (what an ACP client gives) through the
    event loop, which stops reading while the agent is behind; any other kind (a terminal,
    ``/dev/null``, a file, which the loop's pipe transport refuses) read by a thread."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
    mode = os.fstat(sys.stdin.fileno()).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        return reader

    def pump() -> None:
        fd = sys.stdin.fileno()
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                loop.call_soon_threadsafe(reader.feed_eof)
                return
            loop.call_soon_threadsafe(reader.feed_data, chunk)

    threading.Thread(target=pump, name="lifecycle-proxy-stdin", daemon=True).start()
    return reader


async def run(command: Sequence[str]) -> int:
    """Run the agent ``command`` behind the relay, on this process's stdin and stdout; the agent's
    exit code (128 + N when signal N ended it, as a shell reports it; 2 when it cannot be started)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            start_new_session=True,
            limit=MAX_LINE_BYTES,
        )
    except OSError as exc:
        _report(f"cannot start the agent {os.path.basename(command[0])!r}: {exc.strerror or type(exc).__name__}")
        return 2
    relay = Relay(command=command[0], new_turn_id=lambda: str(uuid.uuid4()))
    shell = _Shell(proc, relay, sys.stdout.buffer)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        loop.add_signal_handler(sig, shell.client_gone.set)
    client = asyncio.create_task(shell.client_pump(await _stdin_reader()))
    stopper = asyncio.create_task(shell.stop_agent())
    try:
        await shell.agent_pump()
        code = await proc.wait()
        shell.perform(relay.agent_exited())
    finally:
        for task in (client, stopper):
            task.cancel()
        _kill_group(proc.pid, signal.SIGTERM)  # whatever the agent left behind
    return code if code >= 0 else 128 - code
