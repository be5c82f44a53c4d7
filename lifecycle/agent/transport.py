"""The agent's stdio transport: newline-delimited JSON-RPC between the client and the ACP SDK's
connection, with every guard a hostile or broken client needs.

The ACP SDK (``agent-client-protocol`` 0.12.1) reads stdio through its own ``NdjsonTransport``,
which trusts what it parses. Upstream bugs (reported here, guarded here; the SDK is kept):

* a line that is JSON but not an object (``[1,2,3]``, ``5``, ``"hello"``, a batch ``[{...}]``)
  reaches ``Connection._process_message``, whose ``message.get`` raises ``AttributeError``: the
  receive loop dies, the agent exits 1 with a traceback and a prompt in flight is never answered;
* a ``null`` line parses to ``None``, which ``Connection._receive_loop`` takes for end of input:
  the agent stops reading;
* a line that does not parse (invalid UTF-8, JSON nested 50,000 deep) is logged and dropped,
  where JSON-RPC 2.0 requires a ``-32700`` Parse error with ``id: null``;
* a ``method`` that is not a string (a list) is looked up in a dict: ``-32603 unhashable type``;
* ``_meta`` keys of a request are spread into the handler's keyword arguments
  (``MessageRouter._make_func``): ``{"_meta": {"cwd": ...}}`` overrides ``cwd``, and
  ``{"_meta": {"self": 1}}`` gives a ``TypeError`` whose text is sent to the client;
* a ``-32602`` carries pydantic's ``errors()``, each with the whole invalid ``input`` (a 20 MB
  prompt comes back as a 20 MB error), and a ``-32603`` the text of any exception;
* stdio is opened with ``connect_write_pipe``, which refuses a regular file
  (``lifecycle acp > file`` crashes at start);
* the outgoing queue is unbounded: a client that stops reading makes the agent buffer every
  reply (96 MB after 600 large replies).

:class:`StdioTransport` is a message-level ``acp`` transport (``send``/``receive``/``close``, what
``AgentSideConnection`` accepts in place of byte streams). Incoming: every line is decoded and
parsed here; a line that does not parse is answered ``-32700`` and one that is not a valid
request, notification or response ``-32600`` (``id: null`` unless a valid id was found), and
reading goes on; only a real end of input ends the connection. Outgoing: every error reply is
bounded (short, redacted excerpts of whatever it echoes), every text is passed through
:func:`lifecycle.redaction.mask_credentials` except a permission question's and a tool card's
(shown verbatim: what runs and what Claude was sent), and the backlog is bounded: while more than
``high_water`` bytes wait to be written, no new line is read (the client's unread replies stop
the agent from taking more work; ``transport.input_paused`` and ``transport.input_resumed`` are
logged when reading stops and starts again). A broken stdout ends the connection like end of input.

A diff's ``oldText`` (a tool card's or a permission question's ``content``) is sent as ``null``
when the file is new, as the reference adapter sends it: the ACP SDK serialises every outgoing
model without its ``None`` fields, which drops the key, and clients such as Toad show a diff only
when the key is there (:func:`_with_old_text`). No other ``null`` is put back: every other field
of tool call content (``content``, ``diff``, ``terminal``) is either required or left out when unset.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import sys
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Final, Protocol

import structlog

from ..redaction import VERBATIM_UPDATES, mask_credentials, redact

__all__ = [
    "EXCERPT_CHARS",
    "HIGH_WATER_BYTES",
    "MAX_DEPTH",
    "MAX_LINE_BYTES",
    "StdioTransport",
    "open_stdio",
    "reserved_kwargs",
]

log = structlog.get_logger("lifecycle.agent.transport")

#: Longest line read (bytes); a longer one is skipped and answered ``-32600``.
MAX_LINE_BYTES: Final = 50 * 1024 * 1024
#: Deepest nesting of a message accepted (ACP messages are a dozen levels deep).
MAX_DEPTH: Final = 100
#: Longest string an error reply echoes whole; a longer one becomes an excerpt of
#: :data:`EXCERPT_CHARS` (a record title, at most 501 characters, is always whole).
MAX_ECHO_CHARS: Final = 600
EXCERPT_CHARS: Final = 120
#: Bytes waiting to be written above which no new input line is read.
HIGH_WATER_BYTES: Final = 1024 * 1024
#: Longest id accepted (it is echoed in the reply).
MAX_ID_CHARS: Final = 256

_CHUNK: Final = 64 * 1024
# Strings that are protocol structure, never text: masking them would break the protocol.
_STRUCTURAL: Final = frozenset(
    {"jsonrpc", "id", "method", "sessionId", "sessionUpdate", "type", "stopReason", "protocolVersion"}
)


# ------------------------------------------------------------------ byte ends


class ByteSource(Protocol):
    """Where input bytes come from: ``b""`` at end of input."""

    async def read(self) -> bytes: ...

    def close(self) -> None: ...


class ByteSink(Protocol):
    """Where output bytes go; ``write`` returns once the bytes are handed to the OS."""

    async def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


class StreamSource:
    """An ``asyncio.StreamReader`` (a pipe, a socket, a terminal)."""

    def __init__(self, reader: asyncio.StreamReader, transport: asyncio.BaseTransport | None = None) -> None:
        self._reader = reader
        self._transport = transport

    async def read(self) -> bytes:
        return await self._reader.read(_CHUNK)

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()


class StreamSink:
    """An ``asyncio.StreamWriter`` (a pipe, a socket, a terminal): ``drain`` is the backpressure."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, data: bytes) -> None:
        self._writer.write(data)
        await self._writer.drain()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()


class FileSource:
    """A file descriptor the event loop cannot watch (a regular file): read in a thread, one
    chunk ahead."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=1)
        self._closed = False
        self._started = False

    def _run(self) -> None:
        while not self._closed:
            try:
                data = os.read(self._fd, _CHUNK)
            except OSError:
                data = b""
            try:
                asyncio.run_coroutine_threadsafe(self._queue.put(data), self._loop).result()
            except Exception:  # the loop is gone
                return
            if not data:
                return

    async def read(self) -> bytes:
        if not self._started:
            self._started = True
            import threading

            threading.Thread(target=self._run, name="lifecycle-acp-stdin", daemon=True).start()
        return await self._queue.get()

    def close(self) -> None:
        self._closed = True


class FileSink:
    """A file descriptor the event loop cannot watch (``lifecycle acp > file``): written in a
    thread."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    async def write(self, data: bytes) -> None:
        await asyncio.to_thread(self._write_all, data)

    def close(self) -> None:
        pass


async def open_stdio() -> tuple[ByteSource, ByteSink]:
    """The process's stdin and stdout: watched by the event loop when they are pipes, sockets or
    terminals, through a thread when they are regular files (the SDK's ``stdio_streams`` refuses
    those)."""
    loop = asyncio.get_running_loop()
    source: ByteSource
    sink: ByteSink
    reader = asyncio.StreamReader(limit=_CHUNK)
    try:
        read_transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        source = StreamSource(reader, read_transport)
    except (ValueError, OSError, AttributeError):
        source = FileSource(sys.stdin.fileno())
    try:
        write_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin,
            sys.stdout,
        )
        sink = StreamSink(asyncio.StreamWriter(write_transport, protocol, None, loop))
    except (ValueError, OSError, AttributeError):
        sink = FileSink(sys.stdout.fileno())
    return source, sink


# ------------------------------------------------------------------ bounded, redacted echoes


def _excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """The start of ``text`` (a word cut in two is dropped: no partial secret), redacted."""
    if len(text) <= MAX_ECHO_CHARS:
        return redact(text)
    head = text[:limit]
    if not text[limit].isspace():
        cut = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
        head = head[:cut] if cut > 0 else ""
    return f"{redact(head)}… ({len(text)} characters)"


def _bounded(value: Any, depth: int = 0) -> Any:
    """``value`` (an error's ``data``) with short, redacted strings and few items."""
    if isinstance(value, str):
        return _excerpt(value)
    if isinstance(value, bool) or value is None or isinstance(value, (int, float)):
        return value
    if depth >= 6:
        return "…"
    if isinstance(value, dict):
        items = list(value.items())
        out = {_excerpt(str(k), 60): _bounded(v, depth + 1) for k, v in items[:32]}
        if len(items) > 32:
            out["…"] = f"{len(items) - 32} more"
        return out
    if isinstance(value, (list, tuple)):
        seq = [_bounded(v, depth + 1) for v in value[:16]]
        if len(value) > 16:
            seq.append(f"… {len(value) - 16} more")
        return seq
    return _excerpt(str(value))


def safe_error(error: Any) -> dict[str, Any]:
    """A JSON-RPC error object that echoes at most short, redacted excerpts of anything."""
    if not isinstance(error, dict):
        return {"code": -32603, "message": "Internal error"}
    code = error.get("code")
    message = error.get("message")
    out: dict[str, Any] = {
        "code": code if isinstance(code, int) and not isinstance(code, bool) else -32603,
        "message": _excerpt(message) if isinstance(message, str) else "Error",
    }
    if "data" in error:
        out["data"] = _bounded(error["data"])
    return out


def _masked(value: Any, key: str | None = None) -> Any:
    """``value`` with credentials masked in every text (protocol structure left alone)."""
    if isinstance(value, str):
        return value if key in _STRUCTURAL else mask_credentials(value)
    if isinstance(value, dict):
        return {k: _masked(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def _verbatim(message: dict[str, Any]) -> bool:
    """A permission question or a tool card: shown exactly as it is (what runs, what Claude was
    sent), never masked."""
    method = message.get("method")
    if method == "session/request_permission":
        return True
    params = message.get("params")
    update = params.get("update") if method == "session/update" and isinstance(params, dict) else None
    return isinstance(update, dict) and update.get("sessionUpdate") in VERBATIM_UPDATES


def _with_old_text(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with ``"oldText": null`` in each diff of its tool call content that lacks it
    (a new file); the ACP schema's ``Diff.oldText`` is ``string | null``."""
    params = message.get("params")
    if not isinstance(params, dict):
        return message
    holder = params.get("update") if message.get("method") == "session/update" else params.get("toolCall")
    content = holder.get("content") if isinstance(holder, dict) else None
    if not isinstance(content, list) or not any(
        isinstance(c, dict) and c.get("type") == "diff" and "oldText" not in c for c in content
    ):
        return message
    assert isinstance(holder, dict)
    fixed = [
        {**c, "oldText": None} if isinstance(c, dict) and c.get("type") == "diff" and "oldText" not in c else c
        for c in content
    ]
    key = "update" if message.get("method") == "session/update" else "toolCall"
    return {**message, "params": {**params, key: {**holder, "content": fixed}}}


def _depth_exceeds(value: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[Any] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _valid_id(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        return len(value) <= MAX_ID_CHARS
    return value is None or isinstance(value, int)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# ------------------------------------------------------------------ reserved handler arguments

_ACP_METHODS: Final = (
    "initialize", "authenticate", "new_session", "load_session", "list_sessions", "close_session",
    "set_session_mode", "set_session_model", "set_config_option", "prompt", "cancel", "fork_session",
    "resume_session", "ext_method", "ext_notification",
)  # fmt: skip


def reserved_kwargs(agent: object) -> frozenset[str]:
    """The names a request's ``_meta`` must not carry: the parameters of ``agent``'s ACP methods
    (the SDK spreads ``_meta`` into their keyword arguments) and ``self``."""
    names = {"self"}
    for attr in _ACP_METHODS:
        method = getattr(agent, attr, None)
        if not callable(method):
            continue
        with contextlib.suppress(TypeError, ValueError):
            for p in inspect.signature(method).parameters.values():
                if p.kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL):
                    names.add(p.name)
    return frozenset(names)


# ------------------------------------------------------------------ the transport


_CARD_METHODS: Final = frozenset({"session/update", "session/request_permission"})


class _TooLong:
    def __init__(self, size: int) -> None:
        self.size = size


class StdioTransport:
    """A message-level ``acp`` transport over a :class:`ByteSource` and a :class:`ByteSink`.

    Args:
        source: the client's bytes (stdin).
        sink: where frames go (stdout).
        reserved: ``_meta`` keys dropped from requests (:func:`reserved_kwargs`).
        max_line: longest line read.
        high_water: bytes waiting to be written above which reading pauses.
    """

    def __init__(
        self,
        source: ByteSource,
        sink: ByteSink,
        *,
        reserved: Iterable[str] = ("self",),
        max_line: int = MAX_LINE_BYTES,
        high_water: int = HIGH_WATER_BYTES,
    ) -> None:
        self._source = source
        self._sink = sink
        self._reserved = frozenset(reserved)
        self._max_line = max_line
        self._high_water = high_water
        self._buf = bytearray()
        self._scan = 0
        self._skipping = 0  # bytes of an over-long line skipped so far
        self._eof = False
        self._read_task: asyncio.Task[bytes] | None = None
        self._queue: deque[tuple[bytes, asyncio.Future[None]]] = deque()
        self._backlog = 0
        self._wake = asyncio.Event()
        self._below_high = asyncio.Event()
        self._below_high.set()
        self._broken = asyncio.Event()
        self._closed = False
        self._writer: asyncio.Task[None] | None = None
        self._unread: deque[dict[str, Any]] = deque()
        self._reading: asyncio.Future[dict[str, Any] | None] | None = None  # see unread_later
        #: Called with the raw ``clientCapabilities`` of every ``initialize`` request passed on
        #: (the SDK's model drops keys it does not know, such as ``session.notices``).
        self.on_initialize: Callable[[object], None] | None = None

    @property
    def backlog(self) -> int:
        """Bytes handed to :meth:`send` and not written yet."""
        return self._backlog

    # -------------------------------------------------------------- outgoing

    async def send(self, message: dict[str, Any]) -> None:
        if self._closed or self._broken.is_set():
            raise ConnectionError("the client is gone")
        data = self._encode(message)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append((data, future))
        self._backlog += len(data)
        if self._backlog > self._high_water:
            self._below_high.clear()
        self._wake.set()
        if self._writer is None:
            self._writer = asyncio.create_task(self._write_loop(), name="lifecycle-acp-writer")
        await future

    def _encode(self, message: dict[str, Any]) -> bytes:
        out = dict(_with_old_text(message) if message.get("method") in _CARD_METHODS else message)
        if "error" in out:
            out["error"] = safe_error(out["error"])
        for key in ("result", "params", "error"):
            if key in out and not (key == "params" and _verbatim(out)):
                out[key] = _masked(out[key], None)
        try:
            return (json.dumps(out, separators=(",", ":")) + "\n").encode("utf-8")
        except (TypeError, ValueError, RecursionError):
            if "method" in out or "id" not in out:
                raise
            log.error("transport.unserializable_reply")
            fallback = {"jsonrpc": "2.0", "id": out["id"], "error": {"code": -32603, "message": "Internal error"}}
            return (json.dumps(fallback, separators=(",", ":")) + "\n").encode("utf-8")

    async def _write_loop(self) -> None:
        try:
            while True:
                while not self._queue:
                    self._wake.clear()
                    await self._wake.wait()
                data, future = self._queue[0]
                try:
                    await self._sink.write(data)
                except Exception as exc:
                    log.info("transport.output_broken", error_type=type(exc).__name__)
                    self._break()
                    return
                self._queue.popleft()
                self._backlog -= len(data)
                if self._backlog <= self._high_water:
                    self._below_high.set()
                if not future.done():
                    future.set_result(None)
        except asyncio.CancelledError:
            self._fail_queued()
            raise

    def _break(self) -> None:
        self._broken.set()
        self._below_high.set()
        self._fail_queued()

    def _fail_queued(self) -> None:
        while self._queue:
            _, future = self._queue.popleft()
            if not future.done():
                future.set_exception(ConnectionError("the client is gone"))
        self._backlog = 0

    async def _reply_error(self, code: int, message: str, details: str, msg_id: Any = None) -> None:
        log.warning("transport.invalid_message", code=code, details=details)
        payload = {
            "jsonrpc": "2.0",
            "id": msg_id,
            "error": {"code": code, "message": message, "data": {"details": details}},
        }
        with contextlib.suppress(ConnectionError):
            await self.send(payload)

    # -------------------------------------------------------------- incoming

    async def receive(self) -> dict[str, Any] | None:
        """The next message for the SDK's connection; ``None`` only at the end of input (or when
        the client stopped taking output)."""
        if self._unread:
            return self._again(self._unread.popleft())
        if self._reading is not None:
            message = await asyncio.shield(self._reading)  # a cancelled receive leaves it for the next
            self._reading = None
            return None if message is None else self._again(message)
        while True:
            if not self._below_high.is_set():  # the client does not read: take no more work
                log.info("transport.input_paused", backlog=self._backlog)
                while not self._below_high.is_set():
                    await self._below_high.wait()
                log.info("transport.input_resumed", backlog=self._backlog)
            line = await self._next_line()
            if line is None:
                return None
            message = await self._accept(line)
            if message is not None:
                return message

    def unread(self, message: dict[str, Any]) -> None:
        """Give back a message :meth:`receive` returned: the next :meth:`receive` returns it again
        (``lifecycle.agent.startup`` reads the first messages before the SDK exists)."""
        self._unread.append(message)

    def unread_later(self, reading: asyncio.Future[dict[str, Any] | None]) -> None:
        """Give back a :meth:`receive` still under way: the next :meth:`receive` (after any message
        given back) returns what it reads."""
        self._reading = reading

    def _again(self, message: dict[str, Any]) -> dict[str, Any]:
        params = message.get("params")
        if message.get("method") == "initialize" and isinstance(params, dict) and self.on_initialize:
            self.on_initialize(params.get("clientCapabilities"))
        return message

    async def _read(self) -> bytes:
        if self._eof or self._broken.is_set():
            return b""
        if self._read_task is None:
            self._read_task = asyncio.ensure_future(self._source.read())
        broken = asyncio.ensure_future(self._broken.wait())
        try:
            await asyncio.wait({self._read_task, broken}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            broken.cancel()
        if not self._read_task.done():
            return b""  # stdout broke: the client is gone
        task, self._read_task = self._read_task, None
        try:
            data = task.result()
        except (OSError, ValueError) as exc:
            log.info("transport.input_failed", error_type=type(exc).__name__)
            data = b""
        if not data:
            self._eof = True
        return data

    async def _next_line(self) -> bytes | _TooLong | None:
        while True:
            at = self._buf.find(b"\n", self._scan)
            if at >= 0:
                line = bytes(self._buf[:at])
                del self._buf[: at + 1]
                self._scan = 0
                if self._skipping:
                    size, self._skipping = self._skipping + len(line) + 1, 0
                    return _TooLong(size)
                return line
            if len(self._buf) > self._max_line:
                self._skipping += len(self._buf)  # too long: drop it up to its newline
                self._buf.clear()
            self._scan = len(self._buf)
            data = await self._read()
            if not data:
                if self._skipping:
                    size, self._skipping = self._skipping + len(self._buf), 0
                    self._buf.clear()
                    return _TooLong(size)
                if self._buf:
                    line = bytes(self._buf)
                    self._buf.clear()
                    self._scan = 0
                    return line
                return None
            self._buf += data

    async def _accept(self, line: bytes | _TooLong) -> dict[str, Any] | None:
        """The message to pass on, or None once a bad line was answered (or was blank)."""
        if isinstance(line, _TooLong):
            await self._reply_error(-32600, "Invalid Request", f"a line of {line.size} bytes is too long")
            return None
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            await self._reply_error(-32700, "Parse error", "the line is not valid UTF-8")
            return None
        text = text.strip().removeprefix("\ufeff")
        if not text:
            return None
        try:
            value = json.loads(text, parse_constant=_reject_constant)
        except RecursionError:
            await self._reply_error(-32700, "Parse error", "the JSON is nested too deeply")
            return None
        except ValueError:
            await self._reply_error(-32700, "Parse error", "the line is not JSON")
            return None
        if not isinstance(value, dict):
            what = "a batch (not supported)" if isinstance(value, list) and value else "not an object"
            await self._reply_error(-32600, "Invalid Request", f"the message is {what}")
            return None
        return await self._check(value)

    async def _check(self, message: dict[str, Any]) -> dict[str, Any] | None:
        has_id = "id" in message
        msg_id = message.get("id")
        id_ok = _valid_id(msg_id)
        reply_id = msg_id if has_id and id_ok else None
        if "method" not in message:
            if has_id and ("result" in message or "error" in message):
                # A response (to a ``session/request_permission``): passed on only in a shape
                # the SDK can read; one without a usable id is dropped, never answered (it
                # cannot be matched to a question).
                if not id_ok:
                    log.warning("transport.invalid_response_dropped")
                    return None
                if "error" in message and not isinstance(message["error"], dict):
                    # Still the answer to that request: a failure, so nothing waits for it forever.
                    log.warning("transport.invalid_error_response")
                    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32603, "message": "Invalid error"}}
                return message
            await self._reply_error(-32600, "Invalid Request", "no method", reply_id)
            return None
        method = message["method"]
        if not isinstance(method, str):
            await self._reply_error(-32600, "Invalid Request", "the method is not a string", reply_id)
            return None
        if has_id and not id_ok:
            await self._reply_error(-32600, "Invalid Request", "the id is not a string or an integer")
            return None
        if _depth_exceeds(message, MAX_DEPTH):
            await self._reply_error(-32600, "Invalid Request", "the message is nested too deeply", reply_id)
            return None
        params = message.get("params")
        if isinstance(params, dict):
            meta = params.get("_meta")
            if isinstance(meta, dict) and not self._reserved.isdisjoint(meta):
                dropped = sorted(self._reserved.intersection(meta))
                log.warning("transport.meta_keys_dropped", method=method[:80], keys=dropped)
                kept = {k: v for k, v in meta.items() if k not in self._reserved}
                message = {**message, "params": {**params, "_meta": kept}}
            if method == "initialize" and self.on_initialize is not None:
                self.on_initialize(params.get("clientCapabilities"))
        return message

    # -------------------------------------------------------------- closing

    async def close(self, timeout: float = 5.0) -> None:
        """Flush what is queued (for at most ``timeout`` seconds), then let go of both ends."""
        if self._closed:
            return
        self._closed = True
        writer = self._writer
        if writer is not None and not writer.done():
            deadline = asyncio.get_running_loop().time() + timeout
            while self._queue and not writer.done() and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.01)
            writer.cancel()
            with contextlib.suppress(BaseException):
                await writer
        self._fail_queued()
        if self._read_task is not None:
            self._read_task.cancel()
        self._source.close()
        self._sink.close()
