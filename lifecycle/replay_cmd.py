"""``lifecycle replay``: what a capable client would be shown for a real Claude Code transcript.

Reads a raw transcript (``~/.claude/projects/<encoded cwd>/<session>.jsonl``, or any path), streams
it line by line through the same :class:`~lifecycle.ledger.SessionLedger` that ``session/load``
uses, and shows every typed record at the transcript line it comes from, then the incidents that
remain active. Memory stays bounded whatever the file size: lines are read one at a time, and a
cheap byte pre-filter skips every line that is not a user or assistant message (most of a
transcript's bytes are request snapshots and attachments) before any JSON is parsed.

``--via-sdk`` reads the session through ``claude_agent_sdk.get_session_messages`` instead (the
``claude`` extra), which follows the ``parentUuid`` chain but keeps only user/assistant messages.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from .conditions import USAGE_LIMIT_PREFIXES
from .events import Outbound
from .ledger import SessionLedger
from .replay import history_entry, load_history

__all__ = ["ReplayView", "cli_main", "find_transcript", "replay_lines", "replay_transcript"]

try:  # orjson parses the few lines that matter faster; the standard library is the fallback
    import orjson

    _loads: Callable[[bytes], Any] = orjson.loads
except ImportError:  # pragma: no cover - depends on the environment
    _loads = json.loads

# Structural markers. Inside a JSON string every quote is escaped, so an unescaped
# ``"type":"tool_result"`` can only be JSON structure, never text someone typed.
# Any JSON spacing is accepted, and ``<synthetic>`` with ``<``/``>`` escaped (other JSON writers);
# a line the patterns cannot decide because of other ``\u`` escapes is parsed to be sure.
_KIND = re.compile(rb'"type"\s*:\s*"(user|assistant)"')
_NOT_A_PROMPT = re.compile(rb'"type"\s*:\s*"tool_result"|"isMeta"\s*:\s*true|"isSidechain"\s*:\s*true')
_SYNTHETIC = re.compile(rb'"model"\s*:\s*"(?:<synthetic>|\\u003[cC]synthetic\\u003[eE])"')
_ESCAPE = b"\\u"
#: User lines kept (as bytes) while looking for the prompt before a failure; then compacted.
_MAX_CANDIDATES = 16
# A synthetic message can only be a usage limit if one of the stable prefixes is in its bytes, or
# if its text was written with \u escapes (then it is parsed to be sure).
_MAY_BE_LIMIT = re.compile(b"|".join([re.escape(p.encode()) for p in USAGE_LIMIT_PREFIXES] + [rb"\\u"]))
_TYPE_FIRST = b'{"type":"'
_MESSAGE_TYPES = (b"user", b"assistant")


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
    message (``tests/test_replay_cmd.py`` checks it); text forwards are not part of this view.
    With ``on_message`` (which receives every outbound message, text included) every message is
    parsed and fed.
    """
    view = ReplayView(session_id=session_id)
    ledger = SessionLedger(session_id, negotiated=negotiated, epoch="replay")
    lineno = 0
    # With ``on_message`` the caller wants the whole transcript (text too): every message is fed.
    full = on_message is not None
    # User lines since the last prompt fed to the ledger, oldest first, and the latest one already
    # known to be a prompt. A prompt is only fed when a failure needs its uuid as the turn id.
    candidates: list[tuple[int, bytes]] = []
    confirmed: tuple[int, Any] | None = None

    def deliver(out: Outbound) -> None:
        if out.record is not None:
            view.records.append({"line": lineno, "carrier": _carrier(out), "record": out.record.to_wire()})
        if on_message is not None:
            on_message(lineno, out)

    def parse(raw: bytes) -> Any:
        try:
            obj = _loads(raw)
        except (ValueError, RecursionError):
            view.malformed += 1
            return None
        return history_entry(obj) if isinstance(obj, dict) else None

    def feed_entry(entry: Any) -> None:
        ledger.process(load_history_entry(entry), deliver)

    def latest_prompt() -> tuple[int, Any] | None:
        for at, raw in reversed(candidates):
            entry = parse(raw)
            if entry is not None and entry.role == "user" and entry.prompt:
                return at, entry
        return None

    def feed_prompt() -> None:
        nonlocal lineno, confirmed
        found = latest_prompt() or confirmed
        candidates.clear()
        confirmed = None
        if found is not None:
            here, lineno = lineno, found[0]
            feed_entry(found[1])
            lineno = here

    for lineno, raw in enumerate(lines, start=1):
        if raw.startswith(_TYPE_FIRST):
            # Most of a transcript's bytes are request snapshots whose type comes first: skip them
            # without scanning.
            end = raw.find(b'"', 9)
            if raw[9:end] not in _MESSAGE_TYPES:
                continue
        else:
            # Attachments (often large prompt snapshots) open with parentUuid, isSidechain and then
            # the attachment object: skip them before scanning their bulk.
            head = raw[:256]
            at = head.find(b'"attachment":{')
            if at != -1 and b'"message":' not in head[:at]:
                continue
        kind = _KIND.search(raw)
        if kind is not None:
            view.messages += 1
        if full:
            if kind is not None or _ESCAPE in raw:
                entry = parse(raw)
                if entry is not None:
                    view.messages += kind is None
                    feed_entry(entry)
            continue
        if kind is None:
            if _ESCAPE not in raw:
                continue
            entry = parse(raw)  # the type itself may be written with escapes
            if entry is None:
                continue
            view.messages += 1
            role: bytes = entry.role.encode()
        else:
            role = kind.group(1)
        if role == b"user":
            if _NOT_A_PROMPT.search(raw) is None:
                candidates.append((lineno, raw))
                if len(candidates) > _MAX_CANDIDATES:
                    confirmed = latest_prompt() or confirmed
                    candidates.clear()
            continue
        if _SYNTHETIC.search(raw) is not None or _ESCAPE in raw:
            if _MAY_BE_LIMIT.search(raw) is None:
                continue  # a synthetic message that cannot be a usage limit changes nothing
            entry = parse(raw)
            if entry is not None and entry.synthetic:
                feed_prompt()
                feed_entry(entry)
            elif entry is not None and ledger.active:
                feed_entry(entry)
        elif ledger.active:
            entry = parse(raw)
            if entry is not None:
                feed_entry(entry)
    if candidates:
        latest_prompt()  # parsed for the malformed count; a prompt at the end changes no record
    view.lines = lineno
    view.active = [{"id": a.id, "recovery": a.recovery.value} for a in ledger.active]
    return view


def load_history_entry(entry: Any) -> Any:
    """One entry as a one-element :class:`HistoryLoaded` (the ledger streams them)."""
    from .events import HistoryLoaded

    return HistoryLoaded(entries=(entry,))


def _carrier(out: Outbound) -> str:
    return "prompt_response" if type(out).__name__ == "PromptResponseOut" else "session_info_update"


def _read_lines(stream: BinaryIO) -> Iterable[bytes]:
    # Trailing "\r\n" is JSON whitespace: the parsers accept it, so lines are passed on as read.
    # The file object itself is the iterator (no Python generator per line on the hot loop).
    first = stream.readline()
    return itertools.chain((first.removeprefix(b"\xef\xbb\xbf"),) if first else (), stream)


def replay_transcript(path: Path, *, negotiated: bool = True, **kw: Any) -> ReplayView:
    """Replay one transcript file; the session id is the file's stem."""
    with path.open("rb") as stream:
        return replay_lines(_read_lines(stream), path.stem, negotiated=negotiated, **kw)


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
        raise SystemExit("lifecycle replay --via-sdk needs the claude extra: pip install 'lifecycle[claude]'") from exc
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
