"""``lifecycle replay``: what a capable client would be shown for a real Claude Code transcript.

Reads a raw transcript (``~/.claude/projects/<encoded cwd>/<session>.jsonl``, or any path), streams
it line by line through the same :class:`~lifecycle.ledger.SessionLedger` that ``session/load``
uses, and shows every typed record at the transcript line it comes from, then the incidents that
remain active. Memory stays bounded whatever the file size: the file is read in blocks of
:data:`CHUNK_SIZE` bytes (:func:`replay_stream`), and a cheap byte pre-filter decides each line from
its first bytes and a few searches, without copying it: every line that is not a user or assistant
message (most of a transcript's bytes are request snapshots and attachments) is passed over, and
only the few messages that can change a record are parsed.

``--via-sdk`` reads the session through ``claude_agent_sdk.get_session_messages`` instead (the
``claude`` extra), which follows the ``parentUuid`` chain but keeps only user/assistant messages.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from ..conditions import USAGE_LIMIT_PREFIXES
from ..events import Outbound
from ..history import history_entry, load_history
from ..ledger import SessionLedger

__all__ = [
    "CHUNK_SIZE",
    "ReplayView",
    "cli_main",
    "find_transcript",
    "replay_lines",
    "replay_stream",
    "replay_transcript",
]

try:  # orjson parses the few lines that matter faster; the standard library is the fallback
    import orjson

    _loads: Callable[[bytes], Any] = orjson.loads
except ImportError:  # pragma: no cover - depends on the environment
    _loads = json.loads

# Structural markers. Inside a JSON string every quote is escaped, so an unescaped
# ``"type":"tool_result"`` can only be JSON structure, never text someone typed.
# Any JSON spacing is accepted, and ``<synthetic>`` with ``<``/``>`` escaped (other JSON writers);
# a line the patterns cannot decide because of other ``\u`` escapes is parsed to be sure.
_KIND = re.compile(rb'"type"[ \t\r]*:[ \t\r]*"(user|assistant)"')  # JSON space; a line has no \n
_TOOL_RESULT = b'"type":"tool_result"'  # compact JSON: most user lines, found without the regex
_SYNTHETIC = re.compile(rb'"model"\s*:\s*"(?:<synthetic>|\\u003[cC]synthetic\\u003[eE])"')
# A search, not ``in``: JSON text is full of backslashes, and ``re`` passes over them 2-3x faster.
_ESCAPE = re.compile(rb"\\u").search
#: User lines kept (as bytes) while looking for the prompt before a failure; then compacted.
_MAX_CANDIDATES = 16


def _prefix_pattern(prefixes: tuple[str, ...]) -> tuple[tuple[bytes, ...], re.Pattern[bytes]]:
    """The common start of each group of prefixes (grouped by their first byte), and one
    alternation with those starts factored out, so ``re`` scans for a few literals (``You``,
    ``Fable 5 ...``) instead of trying every alternative at every byte (~15x faster on synthetic
    lines). A line holding none of the starts (found with ``in``, faster still) cannot match."""
    groups: dict[bytes, list[bytes]] = {}
    for prefix in prefixes:
        raw = prefix.encode()
        groups.setdefault(raw[:1], []).append(raw)
    heads: list[bytes] = []
    parts: list[bytes] = []
    for group in groups.values():
        common = group[0]
        while not all(e.startswith(common) for e in group):
            common = common[:-1]
        heads.append(common)
        rest = b"|".join(re.escape(e[len(common) :]) for e in group)
        parts.append(re.escape(common) + b"(?:" + rest + b")")
    return tuple(heads), re.compile(b"|".join(parts))


# A synthetic message can only be a usage limit if one of the stable prefixes is in its bytes, or
# if its text was written with \u escapes (then it is parsed to be sure: ``_ESCAPE`` beside it).
_LIMIT_HEADS, _LIMIT_PATTERN = _prefix_pattern(USAGE_LIMIT_PREFIXES)


def _may_be_limit(raw: bytes) -> bool:
    return any(head in raw for head in _LIMIT_HEADS) and _LIMIT_PATTERN.search(raw) is not None
_TYPE_FIRST = b'{"type":"'
_BOM = b"\xef\xbb\xbf"
_TYPE_FIRST_MESSAGE = (b'{"type":"user"', b'{"type":"assistant"')


@dataclass
class ReplayView:
    """The outcome of a replay: records with their line numbers, and the active incidents."""

    session_id: str
    lines: int = 0
    messages: int = 0  # user/assistant message lines (whether or not they had to be parsed)
    malformed: int = 0
    records: list[dict[str, Any]] = field(default_factory=list)
    active: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "sessionId": self.session_id,
            "lines": self.lines,
            "messages": self.messages,
            "malformed": self.malformed,
            "records": self.records,
            "active": self.active,
        }


class _Replayer:
    """One replay's state: everything after a line was found to be worth looking at.

    Both drivers (:func:`replay_lines` for an iterable of lines, :func:`replay_stream` for a file
    scanned in large blocks) hand it the same lines, so they agree by construction.
    """

    def __init__(
        self, session_id: str, negotiated: bool, on_message: Callable[[int, Outbound], None] | None
    ) -> None:
        self.view = ReplayView(session_id=session_id)
        self.ledger = SessionLedger(session_id, negotiated=negotiated, epoch="replay")
        self.on_message = on_message
        # With ``on_message`` the caller wants the whole transcript (text too): every message is fed.
        self.full = on_message is not None
        self.lineno = 0
        # User lines since the last prompt fed to the ledger, oldest first, and the latest one
        # already known to be a prompt. A prompt is only fed when a failure needs its uuid.
        self.candidates: list[tuple[int, bytes]] = []
        self.confirmed: tuple[int, Any] | None = None

    def deliver(self, out: Outbound) -> None:
        if out.record is not None:
            self.view.records.append({"line": self.lineno, "carrier": _carrier(out), "record": out.record.to_wire()})
        if self.on_message is not None:
            self.on_message(self.lineno, out)

    def parse(self, raw: bytes) -> Any:
        obj = _decode(raw)
        if obj is None:
            self.view.malformed += 1
            return None
        return history_entry(obj) if isinstance(obj, dict) else None

    def feed_entry(self, entry: Any) -> None:
        self.ledger.process(load_history_entry(entry), self.deliver)

    def latest_prompt(self) -> tuple[int, Any] | None:
        for at, raw in reversed(self.candidates):
            entry = self.parse(raw)
            if entry is not None and entry.role == "user" and entry.prompt:
                return at, entry
        return None

    def feed_prompt(self) -> None:
        found = self.latest_prompt() or self.confirmed
        self.candidates.clear()
        self.confirmed = None
        if found is not None:
            here, self.lineno = self.lineno, found[0]
            self.feed_entry(found[1])
            self.lineno = here

    def line(
        self, lineno: int, raw: bytes, kind: bytes | None, *, known: bool = False, parsed: Any = None
    ) -> None:
        """One line not skipped by :meth:`consider`, with ``kind`` its first :data:`_KIND` marker
        (``known``: its top-level ``type``, read by a parse; ``None`` then means not a message;
        ``parsed``: that parse's object, used instead of parsing the line again).

        The drivers hand over only lines with a marker or a ``\\u`` escape: any other changes nothing.
        """
        self.lineno = lineno
        view = self.view
        if kind is not None:
            view.messages += 1
        if self.full:
            if kind is not None or _ESCAPE(raw):
                entry = self.parse(raw) if parsed is None else history_entry(parsed)
                if entry is not None:
                    view.messages += kind is None
                    self.feed_entry(entry)
            return
        if kind is None:
            if known or not _ESCAPE(raw):
                return
            entry = self.parse(raw)  # the type itself may be written with escapes
            if entry is None:
                return
            view.messages += 1
            role: bytes = entry.role.encode()
        else:
            role = kind
        if role == b"user":
            # A candidate is verified by a parse when it is needed (latest_prompt): only the
            # common tool result is kept out here, by one fast search. (A regex for meta and
            # sidechain lines cost more than the parses it saved.)
            if _TOOL_RESULT not in raw:
                self.candidates.append((lineno, raw))
                if len(self.candidates) > _MAX_CANDIDATES:
                    self.confirmed = self.latest_prompt() or self.confirmed
                    self.candidates.clear()
            return
        if parsed is not None:  # what the byte tests below guess, the parse already says
            message = parsed.get("message")
            if isinstance(message, Mapping) and message.get("model") == "<synthetic>":  # entry.synthetic
                if not _may_be_limit(raw) and not _ESCAPE(raw):
                    return  # as below: a synthetic message that cannot be a usage limit
                entry = history_entry(parsed)
                assert entry is not None and entry.synthetic
                self.feed_prompt()
                self.feed_entry(entry)
            elif self.ledger.has_active and (entry := history_entry(parsed)) is not None:
                self.feed_entry(entry)
            return
        if _SYNTHETIC.search(raw) is not None or _ESCAPE(raw):
            if not _may_be_limit(raw) and not _ESCAPE(raw):
                return  # a synthetic message that cannot be a usage limit changes nothing
            entry = self.parse(raw)
            if entry is not None and entry.synthetic:
                self.feed_prompt()
                self.feed_entry(entry)
            elif entry is not None and self.ledger.has_active:
                self.feed_entry(entry)
        elif self.ledger.has_active:
            entry = self.parse(raw)
            if entry is not None:
                self.feed_entry(entry)

    def consider(self, buf: bytes, pos: int, end: int, lineno: int) -> None:
        """The line ``buf[pos:end]``: cut out and handed to :meth:`line` only if it can matter.

        First the skip rule, decided from the line's first bytes with offsets (the file driver
        asks it of every line without copying it): a line whose ``type`` comes first and is not
        a message (request snapshots, most of a transcript's bytes), and an attachment (often a
        large prompt snapshot; it opens with parentUuid, isSidechain and then the attachment
        object), are never messages.
        """
        if buf.startswith(_TYPE_FIRST, pos, end):
            if not buf.startswith(_TYPE_FIRST_MESSAGE, pos, end):
                return
        else:
            window = pos + 256
            at = buf.find(b'"attachment":{', pos, end if end < window else window)
            if at != -1 and buf.find(b'"message":', pos, at) == -1:
                return
        m = _KIND.search(buf, pos, end)
        if m is None and not _ESCAPE(buf, pos, end):
            return
        raw = buf[pos:end]
        if m is not None and buf.find(b"{", pos + 1, m.start()) != -1:
            # An object opens before the line's first marker, so the marker may be nested (a tool
            # input holding ``{"type":"user"}`` inside a ``message`` written first): only a parse
            # says which it is. (The CLI writes some real answers message-first.) With no ``{``
            # before it the marker is a top-level key: a key inside a string has escaped quotes.
            obj = _decode(raw)
            kind = obj.get("type") if isinstance(obj, dict) else None
            if kind == "user" or kind == "assistant":
                self.line(lineno, raw, kind.encode(), known=True, parsed=obj)
            else:
                self.line(lineno, raw, None, known=True)
            return
        self.line(lineno, raw, None if m is None else m.group(1))

    def finish(self, lines: int) -> ReplayView:
        if self.candidates:
            self.latest_prompt()  # parsed for the malformed count; a prompt at the end changes no record
        self.view.lines = lines
        self.view.active = [{"id": a.id, "recovery": a.recovery.value} for a in self.ledger.active]
        return self.view


def replay_lines(
    lines: Iterable[bytes],
    session_id: str,
    *,
    negotiated: bool = True,
    on_message: Callable[[int, Outbound], None] | None = None,
) -> ReplayView:
    """Stream raw transcript lines (bytes) through a fresh ledger.

    Only what can change a record is parsed: a ``<synthetic>`` assistant message, the user prompt
    that precedes it (its uuid is the turn id; the latest candidate is kept as bytes and parsed
    only when a synthetic message needs it), and real answers while a replayed failure is active
    (the proof of recovery). The records and the active set are exactly those of feeding every
    message (``tests/test_cli_replay.py`` checks it); text forwards are not part of this view.
    With ``on_message`` (which receives every outbound message, text included) every message is
    parsed and fed.
    """
    r = _Replayer(session_id, negotiated, on_message)
    lineno = 0
    for lineno, raw in enumerate(lines, start=1):
        r.consider(raw, 0, len(raw), lineno)
    return r.finish(lineno)


def _decode(raw: bytes) -> Any:
    """The JSON value of one line, or ``None`` when it is not JSON.

    Invalid UTF-8 is read as U+FFFD (as ``lifecycle trace``, the SDK's transcript reader and
    ``session/load`` do): one bad byte in a line does not hide the usage limit it reports.
    """
    try:
        return _loads(raw)
    except (ValueError, RecursionError):
        pass
    try:
        return json.loads(raw.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None


#: Bytes read at a time by :func:`replay_stream` (memory is this plus the longest line).
CHUNK_SIZE = 1 << 20


def replay_stream(
    stream: BinaryIO,
    session_id: str,
    *,
    negotiated: bool = True,
    on_message: Callable[[int, Outbound], None] | None = None,
    chunk_size: int = CHUNK_SIZE,
) -> ReplayView:
    """:func:`replay_lines` over a binary file, scanned in blocks of ``chunk_size`` bytes.

    Lines are found with ``bytes.find`` inside large blocks, never copied or scanned unless they
    pass the skip rule of :meth:`_Replayer.consider` (decided from the line's first bytes: request
    snapshots and attachments, most of a transcript's bytes, are passed over without being read
    further); a line is cut out
    only when it holds a message marker or a ``\\u`` escape. A leading UTF-8 BOM is dropped; a
    last line without its newline counts. The view is exactly :func:`replay_lines`' on the same
    lines (the fuzz harness checks it on random transcripts and block sizes).
    """
    if chunk_size < 1:
        raise ValueError("chunk_size must be at least 1")
    r = _Replayer(session_id, negotiated, on_message)
    consider = r.consider
    lines = 0
    for buf, pos, stop in _line_regions(stream, chunk_size):
        find = buf.find
        startswith = buf.startswith
        while pos < stop:
            end = find(b"\n", pos, stop)
            if end == -1:
                end = stop
            lines += 1
            # The first part of consider()'s skip rule, inlined: most lines are request snapshots.
            if not startswith(_TYPE_FIRST, pos, end) or startswith(_TYPE_FIRST_MESSAGE, pos, end):
                consider(buf, pos, end, lines)
            pos = end + 1
    return r.finish(lines)


def _line_regions(stream: BinaryIO, chunk_size: int) -> Iterable[tuple[bytes, int, int]]:
    """``(buffer, start, stop)``: the stream's bytes as regions of whole lines, in order, no big copies.

    Each read block is used in place from its first to its last newline; only the line that
    straddles two reads is joined. ``stop`` is a line end (a newline's offset + 1) except for the
    file's last line when it has no newline. A leading UTF-8 BOM is dropped.
    """
    tail: list[bytes] = []  # the pieces of a line that straddles reads
    head = b""
    while len(head) < len(_BOM):
        more = stream.read(chunk_size)
        if not more:
            break
        head += more
        if not _BOM.startswith(head[: len(_BOM)]):
            break
    data = head.removeprefix(_BOM) or stream.read(chunk_size)
    while data:
        first = data.find(b"\n")
        if first == -1:
            tail.append(data)
        else:
            start = 0
            if tail:
                tail.append(data[: first + 1])
                joined = b"".join(tail)
                tail = []
                yield joined, 0, len(joined)
                start = first + 1
            cut = data.rfind(b"\n") + 1
            if start < cut:
                yield data, start, cut
            if cut < len(data):
                tail.append(data[cut:])
        data = stream.read(chunk_size)
    if tail:
        joined = b"".join(tail)
        yield joined, 0, len(joined)


def load_history_entry(entry: Any) -> Any:
    """One entry as a one-element :class:`HistoryLoaded` (the ledger streams them)."""
    from ..events import HistoryLoaded

    return HistoryLoaded(entries=(entry,))


def _carrier(out: Outbound) -> str:
    return "prompt_response" if type(out).__name__ == "PromptResponseOut" else "session_info_update"


def replay_transcript(path: Path, *, negotiated: bool = True, **kw: Any) -> ReplayView:
    """Replay one transcript file (:func:`replay_stream`); the session id is the file's stem."""
    with path.open("rb") as stream:
        return replay_stream(stream, path.stem, negotiated=negotiated, **kw)


def _encode_project(directory: str) -> str:
    # Claude Code's project folder name: every non-alphanumeric character becomes "-".
    return re.sub(r"[^A-Za-z0-9]", "-", os.path.abspath(directory))


def find_transcript(session_id: str, directory: str | None = None) -> Path:
    """``<config>/projects/<encoded dir>/<session>.jsonl`` (``CLAUDE_CONFIG_DIR`` or ``~/.claude``)."""
    if not re.fullmatch(r"[A-Za-z0-9._-]+", session_id):
        raise FileNotFoundError("a session id has only letters, digits, '.', '_' and '-'")
    root = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / "projects"
    candidates = [root / _encode_project(directory or os.getcwd()) / f"{session_id}.jsonl"]
    if directory is None and root.is_dir():
        candidates += sorted(root.glob(f"*/{session_id}.jsonl"))
    for c in candidates:
        if c.is_file():
            return c
    raise FileNotFoundError(f"no transcript for session {session_id} under {root.name}/")


def _via_sdk(session_id: str, directory: str | None, negotiated: bool) -> ReplayView:
    try:
        from claude_agent_sdk import get_session_messages
    except ImportError as exc:  # pragma: no cover - the [claude] extra is missing
        needs = "lifecycle replay --via-sdk needs the claude extra: pip install 'acp-lifecycle[claude]'"
        raise SystemExit(needs) from exc
    messages = get_session_messages(session_id, directory=directory)
    view = ReplayView(session_id=session_id, lines=len(messages))
    ledger = SessionLedger(session_id, negotiated=negotiated, epoch="replay")
    for position, m in enumerate(messages, start=1):
        entry = history_entry(m)
        if entry is None:
            continue
        view.messages += 1

        def deliver(out: Outbound, position: int = position) -> None:
            if out.record is not None:
                view.records.append({"line": position, "carrier": _carrier(out), "record": out.record.to_wire()})

        ledger.process(load_history([m]), deliver)
    view.active = [{"id": a.id, "recovery": a.recovery.value} for a in ledger.active]
    return view


# ------------------------------------------------------------------ terminal view


class _Style:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text


_SEVERITY_COLOR = {"error": "31", "warning": "33"}


def render(view: ReplayView, out: TextIO, *, color: bool, source: str) -> None:
    st = _Style(color)
    out.write(st("1", f"{source}") + f"  ({view.lines} lines, {view.messages} messages, {view.malformed} malformed)\n")
    if not view.records:
        out.write("  no typed records: nothing to restore\n")
    for r in view.records:
        rec = r["record"]
        sev = rec["severity"]
        actions = ", ".join(rec["actions"]) or "no action"
        out.write(
            f"  line {r['line']:>6}  "
            + st(_SEVERITY_COLOR.get(sev, "0"), f"{sev:<7}")
            + f" {rec['category']:<10} {rec['id']} (revision {rec['revision']}, {actions})\n"
        )
        out.write(f"               {rec['title']}\n")
    if view.active:
        for a in view.active:
            out.write(st("1", "  active") + f"  {a['id']} until {a['recovery']}\n")
    else:
        out.write("  active   none\n")


def cli_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="lifecycle replay", description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", help="a transcript .jsonl file")
    parser.add_argument("--session", help="a Claude session id: find its transcript")
    parser.add_argument("--dir", help="the session's project (working) directory; default: the current one")
    parser.add_argument("--via-sdk", action="store_true", help="read through claude_agent_sdk.get_session_messages")
    parser.add_argument("--legacy", action="store_true", help="replay for a client without the extension")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    args = parser.parse_args(argv)
    if (args.file is None) == (args.session is None):
        parser.error("give a FILE or --session ID")
    negotiated = not args.legacy
    try:
        if args.via_sdk:
            if args.session is None:
                parser.error("--via-sdk needs --session")
            view = _via_sdk(args.session, args.dir, negotiated)
            source = f"session {args.session}"
        else:
            path = Path(args.file) if args.file else find_transcript(args.session, args.dir)
            view = replay_transcript(path, negotiated=negotiated)
            source = path.name
    except OSError as exc:
        print(f"lifecycle replay: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(view.to_json(), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        tty = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        color = args.color == "always" or (args.color == "auto" and tty)
        render(view, sys.stdout, color=color, source=source)
    return 0
