"""Not a test: fuzz targets 4-5 (:mod:`fuzz.harness` re-exports them): stored history entries
(with the history oracle ``expected_replay``, which carries its own copy of the CLI's usage-limit
prefixes) and transcript files as bytes (against the unfiltered replay, differentially)."""

from __future__ import annotations

import atexit
import io
import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from fuzz.probe import HISTORY_TEMPLATES, LIMIT, TRANSCRIPT_EXTRA, Probe, json_values, mutated
from fuzz.report import crashed, tally
from fuzz.targets_events import _duck
from lifecycle import (
    PromptResponseOut,
    SessionLedger,
    SessionUpdateOut,
)
from lifecycle.cli.replay import CHUNK_SIZE, replay_lines, replay_transcript
from lifecycle.events import HistoryEntry, Outbound
from lifecycle.history import history_entry, load_history

# ------------------------------------------------------------------ 4. history entries


@st.composite
def stored_messages(draw: st.DrawFn, objects: bool = True) -> list[object]:
    """A stored history: templates (mutated), raw JSON, and (``objects``) SessionMessage objects
    with odd fields and duck-typed look-alikes."""
    from claude_agent_sdk.types import SessionMessage

    out: list[object] = []
    for i in range(draw(st.integers(0, 12))):
        kind = draw(st.integers(0, 5 if objects else 3))
        if kind <= 2:
            item: Any = draw(mutated(HISTORY_TEMPLATES))
            if isinstance(item, dict) and isinstance(item.get("uuid"), str):
                item["uuid"] = f"{item['uuid']}-{i}"  # stored uuids are unique (see test_fuzz reproducer)
        elif kind == 3:
            item = draw(json_values)
        elif kind == 4:
            template = draw(mutated(HISTORY_TEMPLATES))
            item = SessionMessage(
                type=template.get("type", draw(json_values)),
                uuid=f"sm-{i}",
                session_id="s1",
                message=template.get("message", draw(json_values)),
                parent_tool_use_id=draw(st.one_of(st.none(), json_values)),
            )
        else:
            attrs = draw(
                st.dictionaries(st.sampled_from(["type", "uuid", "message", "isSidechain"]), json_values)
            )
            item = _duck("SessionMessage", attrs)
        out.append(item)
    return out


#: The usage-limit prefixes of the Claude Code CLI 2.1.332 bundled with claude-agent-sdk 0.2.189,
#: copied from the CLI binary itself (its prefix array; the TypeScript SDK exports the same array
#: as ``USAGE_LIMIT_ERROR_PREFIXES``). The spec ("History replay") recognises "only `<synthetic>`
#: messages beginning with SDK-owned stable prefixes", and the reference adapter matches exactly
#: this array: the CLI's own model-name pattern beside it ("Opus 5 requires usage credits.") is not
#: an SDK-owned prefix, so such a stored text is replayed as prose (docs/parity). The oracle keeps
#: its own copy so that it never reads ``lifecycle.conditions``, the code under test.
CLI_USAGE_LIMIT_PREFIXES: tuple[str, ...] = (
    "You've hit your",
    "You've reached your",
    "You're out of usage credits",
    "Your org is out of usage · add funds to continue",
    "Your org is out of usage · contact your admin",
    "Your seat type doesn't include usage credits",
    "Your seat type doesn't include usage",
    "Your usage allocation has been disabled by your admin",
    "Your group's usage limit is set to $0",
    "Fable 5 requires usage credits",
    "You're out of extra usage",
    "Your seat type doesn't include extra usage",
)
#: Usage-limit texts the CLI really wrote (the recordings) or the spec shows: replayed, each must
#: be the title exactly ("restores typed errors using the exact stored Claude text as `title`").
KNOWN_LIMIT_TEXTS = frozenset(
    {
        LIMIT,
        "You've hit your 5-hour limit · resets 4:06pm (UTC)",  # usage_limit_gateway recording
        "You've hit your individual spend limit · run /usage-credits to ask your admin for a higher limit",  # spec
    }
)
_TITLE_LIMIT = 500  # README, "Title and details": details only past 500 characters


def cli_usage_limit_prefix(text: str) -> str | None:
    """The CLI usage-limit prefix ``text`` starts with (None: not a usage-limit text)."""
    for prefix in CLI_USAGE_LIMIT_PREFIXES:
        if text.startswith(prefix):
            return prefix
    return None


@dataclass(frozen=True, eq=False)
class ReplayedTitle:
    """What the title of a replayed usage limit must be, compared with ``==`` against a str.

    A text the CLI really wrote is the title exactly. Any other text (fuzzed) may pass through
    redaction and trimming, which the oracle does not reimplement: the title is then non-empty,
    at most a title long, and keeps the usage-limit prefix the text starts with.
    """

    text: str

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, str):
            return NotImplemented
        if self.text in KNOWN_LIMIT_TEXTS:
            return other == self.text
        prefix = cli_usage_limit_prefix(self.text)
        return bool(other) and len(other) <= _TITLE_LIMIT + 1 and prefix is not None and other.startswith(prefix)

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"ReplayedTitle({self.text!r})"


def expected_replay(entries: list[HistoryEntry], negotiated: bool) -> list[tuple[str, object]]:
    """The spec's "History replay" restated without the core: what each entry becomes, in order.

    "It recognizes only `<synthetic>` messages beginning with SDK-owned stable prefixes" (top-level
    assistant history); "For a capable client, replay suppresses duplicate assistant prose and
    restores typed errors using the exact stored Claude text as `title`. Legacy clients receive
    the original transcript and no typed record."
    """
    out: list[tuple[str, object]] = []
    for e in entries:
        if not e.top_level:
            continue
        if e.role == "user":
            if e.prompt and e.text:
                out.append(("user", e.text))
        elif negotiated and e.model == "<synthetic>" and cli_usage_limit_prefix(e.text) is not None:
            out.append(("record", ReplayedTitle(e.text)))
        elif e.text:
            out.append(("agent", e.text))
    return out


def _shown(sent: list[Outbound]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for m in sent:
        if m.record is not None:
            out.append(("record", m.record.title))
        elif isinstance(m, SessionUpdateOut):
            kind = m.update["sessionUpdate"]
            out.append(("user" if kind == "user_message_chunk" else "agent", m.update["content"]["text"]))
    return out


def check_history(negotiated: bool, stored: list[object], chunk: int) -> None:
    try:
        entries: list[HistoryEntry] = []
        for s in stored:
            entry = history_entry(s)
            assert entry is None or isinstance(entry, HistoryEntry)
            if entry is not None:
                assert entry.role in ("user", "assistant") and isinstance(entry.text, str)
                assert entry.uuid is None or (isinstance(entry.uuid, str) and entry.uuid)
                assert not entry.prompt or entry.role == "user"
                entries.append(entry)
        whole = Probe(negotiated)
        whole.feed(load_history(stored))
        whole.check()
        assert _shown(whole.sent) == expected_replay(entries, negotiated)
        streamed = Probe(negotiated)
        for i in range(0, len(stored), chunk):
            streamed.feed(load_history(stored[i : i + chunk]))
        streamed.check()
        assert [m.to_jsonrpc() for m in streamed.sent] == [m.to_jsonrpc() for m in whole.sent]
        assert [a.id for a in streamed.ledger.active] == [a.id for a in whole.ledger.active]
    except BaseException:
        crashed("history_entry")
        raise
    tally("history_entry", inputs=len(stored), ignored=len(stored) - len(entries))


# ------------------------------------------------------------------ 5. transcripts (bytes)


def _type_last(obj: Any) -> Any:
    if isinstance(obj, dict) and "type" in obj:
        return {**{k: v for k, v in obj.items() if k != "type"}, "type": obj["type"]}
    return obj


#: Ways a JSON writer may put one transcript line (same value, different bytes). "cli" styles
#: are what Claude Code and common tools write; "other" styles are valid JSON too (finding 8).
WRITERS: dict[str, Callable[[Any], bytes]] = {
    "compact": lambda o: json.dumps(o, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8", "surrogatepass"
    ),
    "spaced": lambda o: json.dumps(o, ensure_ascii=False).encode("utf-8", "surrogatepass"),
    "ascii": lambda o: json.dumps(o, separators=(",", ":")).encode(),
    "type-last": lambda o: json.dumps(_type_last(o), separators=(",", ":")).encode(),
}
OTHER_WRITERS: dict[str, Callable[[Any], bytes]] = {
    "space-before-colon": lambda o: json.dumps(o, separators=(" , ", " : ")).encode(),
    "tab-after-colon": lambda o: json.dumps(o, separators=(",", ":\t")).encode(),
    "html-escaped": lambda o: (
        json.dumps(o, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e").encode()
    ),
}


@st.composite
def transcript_blobs(draw: st.DrawFn) -> tuple[list[bytes], bytes, bool, bool]:
    """(logical lines, separator, with BOM, with trailing separator) of a transcript file."""
    lines: list[bytes] = []
    for i in range(draw(st.integers(0, 10))):
        kind = draw(st.integers(0, 4))
        writer = WRITERS[draw(st.sampled_from(sorted(WRITERS)))]
        if kind <= 1:
            obj: Any = draw(mutated(HISTORY_TEMPLATES))
            if isinstance(obj, dict) and isinstance(obj.get("uuid"), str):
                obj["uuid"] = f"{obj['uuid']}-{i}"
            raw = writer(obj)
        elif kind == 2:
            raw = writer(draw(st.sampled_from(TRANSCRIPT_EXTRA)))
        elif kind == 3:
            good = writer(draw(st.sampled_from(sorted(HISTORY_TEMPLATES.values(), key=str))))
            raw = good[: draw(st.integers(0, len(good)))]  # truncated
        else:
            raw = draw(st.binary(max_size=40)) + draw(
                st.sampled_from([b"", b'"type":"user"', b'"type":"assistant"'])
            )
        lines.append(raw.replace(b"\r", b"").replace(b"\n", b""))
    if lines:
        lines[0] = lines[0].removeprefix(b"\xef\xbb\xbf")  # a BOM is only ever the file's first bytes
    return lines, draw(st.sampled_from([b"\n", b"\r\n"])), draw(st.booleans()), draw(st.booleans())


def unfiltered_replay(
    lines: list[bytes], negotiated: bool
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The same ledger fed *every* message of the transcript (no byte pre-filter).

    A differential check of ``replay_lines``' pre-filter only, which parses just the lines that
    can change a record: this shares the ledger, the history reader and the JSON parser with the
    code under test, so it cannot say what the records should be (:func:`expected_replay` does,
    for the history reader and the ledger, in :func:`check_history`)."""
    from lifecycle.cli.replay import _loads  # the same JSON parser (orjson) as the command

    ledger = SessionLedger("s1", negotiated=negotiated, epoch="replay")
    records: list[dict[str, Any]] = []
    for n, raw in enumerate(lines, start=1):
        try:
            obj = _loads(raw)
        except (ValueError, RecursionError):
            continue
        entry = history_entry(obj) if isinstance(obj, dict) else None
        if entry is not None:

            def keep(out: Outbound, n: int = n) -> None:
                if out.record is not None:
                    carrier = (
                        "prompt_response" if isinstance(out, PromptResponseOut) else "session_info_update"
                    )
                    records.append({"line": n, "carrier": carrier, "record": out.record.to_wire()})

            ledger.process(load_history([obj]), keep)
    return records, [{"id": a.id, "recovery": a.recovery.value} for a in ledger.active]


_TMP = Path(tempfile.mkdtemp(prefix="lifecycle-fuzz-"))
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)


def _view(lines: list[bytes], negotiated: bool) -> dict[str, Any]:
    return replay_lines(iter(lines), "s1", negotiated=negotiated).to_json()


def check_transcript(blob: tuple[list[bytes], bytes, bool, bool], negotiated: bool, cut: int) -> None:
    lines, sep, bom, trailing = blob
    try:
        full = _view(lines, negotiated)
        assert (
            full["lines"] == len(lines) and full["malformed"] <= len(lines) and full["messages"] <= len(lines)
        )
        per_id: dict[str, list[int]] = {}
        for r in full["records"]:
            assert 1 <= r["line"] <= len(lines)
            per_id.setdefault(r["record"]["id"], []).append(r["record"]["revision"])
        assert all(v == list(range(1, len(v) + 1)) for v in per_id.values()), per_id
        if not negotiated:
            assert full["records"] == []
        assert (full["records"], full["active"]) == unfiltered_replay(lines, negotiated), "pre-filter diverged"
        assert _view(lines, negotiated) == full  # deterministic
        # A truncated file shows exactly the records of its complete lines (streaming).
        k = min(cut, len(lines))
        prefix = _view(lines[:k], negotiated)
        assert prefix["records"] == [r for r in full["records"] if r["line"] <= k]
        # The file form: CRLF, BOM and a missing final newline change nothing.
        data = (b"\xef\xbb\xbf" if bom else b"") + sep.join(lines) + (sep if trailing and lines else b"")
        path = _TMP / "s1.jsonl"
        path.write_bytes(data)
        # Scanned in blocks (replay_stream), of the default size and of a tiny one so that lines and
        # the BOM straddle reads: the whole view (counts too) is replay_lines' over the file's lines
        # as a file object yields them (an empty last line without its newline is no line).
        as_read = replay_lines(io.BytesIO(data.removeprefix(b"\xef\xbb\xbf")), "s1", negotiated=negotiated)
        assert as_read.records == full["records"] and as_read.active == full["active"]
        for chunk_size in (CHUNK_SIZE, 1 + cut % 48):
            from_file = replay_transcript(path, negotiated=negotiated, chunk_size=chunk_size).to_json()
            assert from_file == as_read.to_json(), chunk_size
    except BaseException:
        crashed("transcript")
        raise
    tally("transcript", inputs=len(lines), typed=full["malformed"])
