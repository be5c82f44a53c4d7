"""The recorded runs the benchmark's inputs are built from, and the compact copy shipped with the package.

The inputs come from recorded Claude Code CLI 2.1.337 runs (``tests/fixtures/claude-cli-2.1.337`` in
the repository; its README says how they were recorded): every ``*.sdk.jsonl`` (the messages
``claude_agent_sdk.query()`` yielded, rebuilt as stream-json for the hot path) and the lines of every
``*.transcript.jsonl`` (the CLI's own transcript, the material of the synthetic replay transcripts),
split into a CLI-start header and prompt turns.

So that ``workshop bench`` needs no recordings folder (it reads them from this package, wherever
the workshop is), the package holds exactly what the benchmark reads of those recordings, in
``data/claude-cli-2.1.337/``:

``sdk.jsonl``
    every recorded SDK message, one ``{"scenario": NAME, "record": RECORD}`` per line, scenarios in
    name order, each in its recorded order;
``transcript_pools.jsonl``
    one ``{"pool": "header" | "turn" | "usage_limit_turn", "source": NAME, "lines": [...]}`` per
    line: the CLI-start header (the tool definitions, listings and environment ``success`` wrote)
    and every recorded prompt turn (the request snapshots and other per-turn lines included, since
    a replay has to pass over them), the turns that end in a usage limit apart.

:func:`derive_data` is the one derivation: :meth:`Recordings.from_folder` parses its output for a
recordings folder, :func:`shipped_recordings` parses the shipped copy, and ``tests/test_bench.py``
re-derives the copy from the recordings and asserts it is byte-identical. After the recordings or
the derivation change, refresh it with
``python -m workshop bench --derive-inputs tests/fixtures/claude-cli-2.1.337`` (in a checkout).
"""

from __future__ import annotations

import importlib.resources
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lifecycle.conditions import is_usage_limit_text
from lifecycle.history import history_entry

__all__ = [
    "FIXTURE_SET",
    "Recordings",
    "TranscriptPools",
    "derive_data",
    "load_recordings",
    "sdk_record_to_stream_json",
    "shipped_data",
    "shipped_recordings",
    "write_data",
]

#: The recording set the shipped inputs are derived from.
FIXTURE_SET = "claude-cli-2.1.337"
SDK_FILE = "sdk.jsonl"
POOLS_FILE = "transcript_pools.jsonl"
#: Where the shipped copy lives, inside this package.
_DATA = ("data", FIXTURE_SET)


# ====================================================================== what the inputs are made of


@dataclass(frozen=True, slots=True)
class TranscriptPools:
    """The recorded transcript lines: one CLI-start header, the prompt turns, the usage-limit turns."""

    header: list[dict[str, Any]]
    turns: list[list[dict[str, Any]]]
    limit_turns: list[list[dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class Recordings:
    """Everything the benchmark's inputs are built from: the recorded SDK messages of every scenario
    (in name order) and the transcript pools. ``source`` says where they were read."""

    source: str
    scenarios: dict[str, list[dict[str, Any]]]
    pools: TranscriptPools

    @property
    def failing(self) -> list[str]:
        """The scenarios that fail (an error result or a raised exception), in name order."""
        return sorted(name for name, records in self.scenarios.items() if _failing(records))

    @classmethod
    def from_folder(cls, folder: Path) -> Recordings:
        """Read a recordings folder (``*.sdk.jsonl``, ``*.transcript.jsonl``), through :func:`derive_data`."""
        return _parse(derive_data(folder), str(folder))


def _failing(records: Sequence[Mapping[str, Any]]) -> bool:
    for rec in records:
        f = rec.get("fields")
        if "raised" in rec:
            return True
        if rec.get("class") == "ResultMessage" and isinstance(f, Mapping) and f.get("is_error"):
            return True
    return False


def shipped_recordings() -> Recordings:
    """The inputs shipped with the package (derived from ``tests/fixtures/claude-cli-2.1.337``)."""
    return _parse(shipped_data(), f"workshop.bench package data ({FIXTURE_SET})")


def load_recordings(source: Path | Recordings | None) -> Recordings:
    """``source`` as :class:`Recordings`: a recordings folder is read, None means the shipped inputs."""
    if isinstance(source, Recordings):
        return source
    if source is None:
        return shipped_recordings()
    return Recordings.from_folder(source)


# ====================================================================== the derivation and the shipped copy


def _line(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def derive_data(folder: Path) -> dict[str, bytes]:
    """The files shipped in ``data/claude-cli-2.1.337/``, derived from a recordings folder: name -> bytes."""
    sdk = b"".join(
        _line({"scenario": name, "record": record})
        for name, records in _read_scenarios(folder).items()
        for record in records
    )
    pools = b"".join(_line({"pool": pool, "source": name, "lines": lines}) for pool, name, lines in _pools(folder))
    return {SDK_FILE: sdk, POOLS_FILE: pools}


def shipped_data() -> dict[str, bytes]:
    """Every file of the shipped copy: name -> bytes."""
    folder = importlib.resources.files(__name__.rpartition(".")[0])
    for part in _DATA:
        folder = folder.joinpath(part)
    return {entry.name: entry.read_bytes() for entry in folder.iterdir() if entry.is_file()}


def write_data(folder: Path) -> Path:
    """Re-derive the shipped copy from a recordings folder, in place (in a checkout); returns where it went."""
    files = derive_data(folder)
    dest = Path(__file__).resolve().parent.joinpath(*_DATA)
    dest.mkdir(parents=True, exist_ok=True)
    for stale in dest.iterdir():
        if stale.is_file() and stale.name not in files:
            stale.unlink()
    for name, data in files.items():
        (dest / name).write_bytes(data)
    return dest


def _parse(files: Mapping[str, bytes], source: str) -> Recordings:
    scenarios: dict[str, list[dict[str, Any]]] = {}
    for raw in files[SDK_FILE].splitlines():
        row = json.loads(raw)
        scenarios.setdefault(row["scenario"], []).append(row["record"])
    header: list[dict[str, Any]] = []
    turns: list[list[dict[str, Any]]] = []
    limit_turns: list[list[dict[str, Any]]] = []
    for raw in files[POOLS_FILE].splitlines():
        row = json.loads(raw)
        if row["pool"] == "header":
            header = row["lines"]
        else:
            (limit_turns if row["pool"] == "usage_limit_turn" else turns).append(row["lines"])
    return Recordings(source, scenarios, TranscriptPools(header, turns, limit_turns))


# ====================================================================== reading the recordings


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open("rb") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _read_scenarios(folder: Path) -> dict[str, list[dict[str, Any]]]:
    scenarios = {p.name[: -len(".sdk.jsonl")]: _read_jsonl(p) for p in sorted(folder.glob("*.sdk.jsonl"))}
    if not scenarios:
        raise FileNotFoundError(f"no *.sdk.jsonl recordings in {folder}")
    return scenarios


#: Transcript entry kinds the CLI writes once per CLI process start (the tool definitions, the
#: skill and agent listings, the environment): a long session repeats them only on a restart.
_SESSION_KINDS = frozenset(
    {
        "api-request-shape",
        "api-request-blob",
        "attachment:environment",
        "attachment:model",
        "attachment:deferred_tools_delta",
        "attachment:agent_listing_delta",
        "attachment:skill_listing",
        "attachment:session_context",
        "attachment:date",
        "attachment:remote_session_change",
    }
)
#: The recording whose CLI-start header the synthetic transcripts repeat.
_HEADER_SCENARIO = "success"


def _entry_kind(d: Mapping[str, Any]) -> str:
    kind = str(d.get("type"))
    if kind == "attachment" and isinstance(d.get("attachment"), Mapping):
        return f"attachment:{d['attachment'].get('type')}"
    return kind


def _is_usage_limit_line(d: Mapping[str, Any]) -> bool:
    entry = history_entry(d)
    return bool(
        entry is not None
        and entry.role == "assistant"
        and entry.synthetic
        and entry.top_level
        and is_usage_limit_text(entry.text)
    )


def _pools(folder: Path) -> Iterator[tuple[str, str, list[dict[str, Any]]]]:
    """Split every recorded transcript into its CLI-start header and its prompt turns:
    ``(pool, scenario, lines)``, the header first, then the turns and usage-limit turns in file order."""
    header: list[dict[str, Any]] = []
    turns: list[tuple[str, str, list[dict[str, Any]]]] = []
    for path in sorted(folder.glob("*.transcript.jsonl")):
        name = path.name[: -len(".transcript.jsonl")]
        rows = _read_jsonl(path)
        if name == _HEADER_SCENARIO:
            header = [d for d in rows if _entry_kind(d) in _SESSION_KINDS]
        file_turns: list[list[dict[str, Any]]] = [[]]
        has_prompt = False
        for d in rows:
            if _entry_kind(d) in _SESSION_KINDS:
                continue
            message = d.get("message")
            is_prompt = (
                d.get("type") == "user"
                and d.get("isMeta") is not True
                and isinstance(message, Mapping)
                and isinstance(message.get("content"), str)
            )
            if is_prompt and has_prompt:
                file_turns.append([])
            has_prompt = has_prompt or is_prompt
            file_turns[-1].append(d)
        for t in file_turns:
            turns.append(("usage_limit_turn" if any(_is_usage_limit_line(d) for d in t) else "turn", name, t))
    if not header or not any(p == "turn" for p, _, _ in turns) or not any(p != "turn" for p, _, _ in turns):
        raise FileNotFoundError(f"the transcripts in {folder} lack a header, turns or usage-limit turns")
    yield "header", _HEADER_SCENARIO, header
    yield from turns


# ====================================================================== recorded SDK messages -> stream-json


def _stream_block(block: Mapping[str, Any]) -> dict[str, Any]:
    """A content block as the CLI prints it (``dataclasses.asdict`` dropped the ``type``)."""
    if "type" in block:
        return dict(block)
    if "thinking" in block:
        return {"type": "thinking", **block}
    if "tool_use_id" in block:
        return {"type": "tool_result", **block}
    if "name" in block and "input" in block:
        return {"type": "tool_use", **block}
    return {"type": "text", **block}


def sdk_record_to_stream_json(record: Mapping[str, Any], session_id: str) -> dict[str, Any] | None:
    """Rebuild the stream-json line the CLI printed for one recorded ``*.sdk.jsonl`` message.

    The recording holds ``{"class": ..., "fields": dataclasses.asdict(msg)}``; this inverts
    ``claude_agent_sdk``'s parser (``SystemMessage.data`` is the raw frame already). A recorded
    exception (``{"raised": ...}``) is not a line: it returns None (the adapter sees it as a
    :class:`~lifecycle.events.QueryError`).
    """
    cls = record.get("class")
    f = record.get("fields")
    if not isinstance(f, Mapping):
        return None
    if isinstance(f.get("data"), Mapping) and "subtype" in f:
        return dict(f["data"])
    if cls == "AssistantMessage":
        msg: dict[str, Any] = {
            "id": f.get("message_id"),
            "type": "message",
            "role": "assistant",
            "model": f.get("model"),
            "content": [_stream_block(b) for b in f.get("content") or []],
            "stop_reason": f.get("stop_reason"),
            "stop_sequence": None,
            "usage": f.get("usage"),
        }
        line: dict[str, Any] = {
            "type": "assistant",
            "message": msg,
            "parent_tool_use_id": f.get("parent_tool_use_id"),
            "session_id": f.get("session_id") or session_id,
            "uuid": f.get("uuid"),
        }
        if f.get("error") is not None:
            line["error"] = f["error"]
        return line
    if cls == "UserMessage":
        content = f.get("content")
        if isinstance(content, list):
            content = [_stream_block(b) for b in content]
        line = {
            "type": "user",
            "message": {"role": "user", "content": content},
            "parent_tool_use_id": f.get("parent_tool_use_id"),
            "session_id": session_id,
            "uuid": f.get("uuid"),
        }
        if f.get("tool_use_result") is not None:
            line["tool_use_result"] = f["tool_use_result"]
        return line
    if cls == "ResultMessage":
        line = {"type": "result"}
        for key, value in f.items():
            line["modelUsage" if key == "model_usage" else key] = value
        return line
    if cls == "RateLimitEvent":
        info = f.get("rate_limit_info")
        raw = info.get("raw") if isinstance(info, Mapping) else None
        return {
            "type": "rate_limit_event",
            "rate_limit_info": dict(raw) if isinstance(raw, Mapping) else info,
            "uuid": f.get("uuid"),
            "session_id": f.get("session_id") or session_id,
        }
    if cls == "StreamEvent":
        return {"type": "stream_event", **f}
    return None
