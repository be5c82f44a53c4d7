"""``lifecycle bench``: what the lifecycle costs, as ratios against baselines measured in the same run.

Every figure is measured on this machine in this process run, next to a baseline that does work the
adapter does anyway (parsing the line it received), so the ratios survive a slower or faster
machine. Each timing is repeated; the figure is the median and the spread (min, max, quartiles) is
reported beside it. Nothing here is asserted in unit tests: ``--check`` exits non-zero when a target
is missed (or its figure could not be measured); ``--quick`` uses small sizes and enforces nothing.

Sections (ids of the figures in the JSON output):

``hot_path``
    Stream-json lines go through :func:`lifecycle.claude.from_stream_json` and
    :meth:`SessionLedger.process` with a no-op ``deliver``. Baseline: ``json.loads`` of the same lines.
    ``hot_path.ratio`` (the target) uses the realistic mix (:class:`RealisticMix`,
    :data:`REALISTIC_MIX`): one ``ClaudeSDKClient`` session of turns with long streamed answers, tool
    rounds and a few incidents per 10,000 lines, built from the recorded ``*.sdk.jsonl`` shapes.
    ``hot_path.ratio_failure_dense`` (no target) replays the recordings as whole tiny turns with one
    failing turn in ~20 (:data:`FAILURE_DENSE_MIX`), to show what incidents cost.
``incident``
    One incident's full life (retry warning -> terminal error -> historical) through a real ledger,
    each delivered message serialised with ``json.dumps(msg.to_jsonrpc())``; ratio to building one
    :class:`~lifecycle.wire.SessionFailure`; where python-statemachine's time goes (cProfile, from a cold
    start); the first life of a process; what a real machine instance per incident would cost.
``replay``
    A synthetic transcript made of the recorded ``*.transcript.jsonl`` lines. Baseline: ``orjson``
    parsing every line. ``lifecycle replay --json`` in process and as a subprocess (when
    ``lifecycle/replay_cmd.py`` exists), linearity 10x lines, peak memory.
``memory``
    Ledger size (tracemalloc after ``gc.collect()``) after few vs many recovered incidents, and the
    memory of many idle sessions.
``explorer``
    ``lifecycle check``: states per second and total time (when ``lifecycle/check.py`` exists).

Run ``lifecycle bench --help`` for the options; README.md ("Performance") has the measured figures.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import gc
import importlib
import importlib.util
import io
import json
import math
import os
import platform
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
import tracemalloc
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...claude import from_stream_json
from ...events import (
    ApiRetry,
    Assistant,
    Event,
    Outbound,
    PromptStarted,
    QueryError,
    Result,
)
from ...ledger import SessionLedger
from ...wire import Category, SessionFailure, Severity, attach_record

__all__ = [
    "FAILURE_DENSE_FAILURES_PER_CYCLE",
    "FAILURE_DENSE_MIX",
    "REALISTIC_MIX",
    "BenchConfig",
    "Figure",
    "HotPathSession",
    "RealisticMix",
    "build_failure_dense_session",
    "build_realistic_session",
    "cli_main",
    "default_fixtures",
    "exit_code",
    "run_bench",
    "sdk_record_to_stream_json",
    "write_transcript",
]

FIXTURE_SET = "claude-cli-2.1.332"


def default_fixtures() -> Path:
    """``$LIFECYCLE_FIXTURES``, else ``shared/fixtures/claude-cli-2.1.332`` beside the checkout."""
    env = os.environ.get("LIFECYCLE_FIXTURES")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "tests" / "fixtures" / FIXTURE_SET


# ====================================================================== configuration and results


@dataclass(frozen=True, slots=True)
class BenchConfig:
    """Sizes of one run. :meth:`quick` keeps the whole run well under 30 s on 2 cores."""

    quick: bool
    repetitions: int
    hot_lines: int
    incident_lives: int
    replay_small: int
    replay_large: int
    replay_repetitions: int
    memory_few: int
    memory_many: int
    idle_sessions: int
    explorer_states: int
    explorer_timeout: float
    fixtures: Path
    tmpdir: Path | None = None

    @classmethod
    def quick_config(cls, fixtures: Path, tmpdir: Path | None = None) -> BenchConfig:
        return cls(True, 3, 5_000, 200, 1_000, 10_000, 3, 10, 300, 1_000, 300, 0.0, fixtures, tmpdir)

    @classmethod
    def full_config(cls, fixtures: Path, tmpdir: Path | None = None) -> BenchConfig:
        return cls(False, 7, 50_000, 1_000, 10_000, 100_000, 5, 10, 1_000_000, 10_000, 1_500, 300.0, fixtures, tmpdir)


@dataclass(slots=True)
class Figure:
    """One measured figure. ``value`` is the median of ``samples`` (or the single measurement).

    ``target`` is ``(op, limit)`` with op ``<=``; ``met`` is None when the figure has no target.
    An unavailable figure has ``value`` None and says why in ``reason``.
    """

    id: str
    label: str
    unit: str
    value: float | None
    samples: list[float] = field(default_factory=list)
    target: tuple[str, float] | None = None
    note: str = ""
    reason: str = ""

    @property
    def available(self) -> bool:
        return self.value is not None

    @property
    def met(self) -> bool | None:
        if self.target is None:
            return None
        if self.value is None:
            return False
        op, limit = self.target
        assert op == "<="
        return self.value <= limit

    def spread(self) -> dict[str, float] | None:
        if len(self.samples) < 2:
            return None
        s = sorted(self.samples)
        q = statistics.quantiles(s, n=4, method="inclusive")
        return {"min": s[0], "q1": q[0], "q3": q[2], "max": s[-1]}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "label": self.label, "unit": self.unit, "available": self.available}
        if self.value is not None:
            out["value"] = self.value
            out["repetitions"] = max(1, len(self.samples))
            spread = self.spread()
            if spread is not None:
                out["spread"] = spread
        else:
            out["reason"] = self.reason
        if self.target is not None:
            out["target"] = {"op": self.target[0], "limit": self.target[1], "met": self.met}
        if self.note:
            out["note"] = self.note
        return out


def _fig(
    id_: str,
    label: str,
    unit: str,
    samples: Sequence[float],
    *,
    target: tuple[str, float] | None = None,
    note: str = "",
) -> Figure:
    vals = [float(x) for x in samples]
    return Figure(id_, label, unit, statistics.median(vals), vals, target, note)


def _unavailable(id_: str, label: str, unit: str, reason: str, *, target: tuple[str, float] | None = None) -> Figure:
    return Figure(id_, label, unit, None, [], target, reason=reason)


class _Progress:
    def __init__(self, enabled: bool) -> None:
        self._enabled = enabled
        self._t0 = time.perf_counter()

    def __call__(self, msg: str) -> None:
        if self._enabled:
            print(f"bench [{time.perf_counter() - self._t0:6.1f}s] {msg}", file=sys.stderr, flush=True)


def _noop(_msg: Outbound) -> None:
    return None


def _serialise(msg: Outbound) -> None:
    json.dumps(msg.to_jsonrpc())


def _best_of(fn: Callable[[], object], reps: int, number: int = 1) -> float:
    """Seconds per call, best of ``reps`` repetitions of ``number`` calls."""
    return min(timeit.repeat(fn, number=number, repeat=reps)) / number


def _timed(fn: Callable[[], object]) -> float:
    """Seconds for one call of ``fn`` (gc collected first, left enabled: the adapter runs with it)."""
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# ====================================================================== fixtures -> stream-json


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open("rb") as fh:
        return [json.loads(line) for line in fh if line.strip()]


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


def _split(text: str, parts: int) -> list[str]:
    if not text:
        return []
    size = max(1, math.ceil(len(text) / parts))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


class _StreamSynth:
    """The ``stream_event`` frames the CLI prints (with partial messages on) for one SSE stream.

    The recordings describe each stream the fake API sent (fixtures README: message_start,
    content_block_start, text_delta x3, content_block_stop, message_delta, message_stop); the CLI
    prints one ``stream_event`` per SSE event (``ping`` is not forwarded) and one ``assistant``
    message per completed content block.
    """

    def __init__(self, session_id: str, rng: random.Random, out: list[dict[str, Any]]) -> None:
        self._sid = session_id
        self._rng = rng
        self._out = out
        self._open: str | None = None
        self._index = 0
        self._last_block = "text"

    def _emit(self, event: dict[str, Any]) -> None:
        self._out.append(
            {
                "type": "stream_event",
                "uuid": _uuid(self._rng),
                "session_id": self._sid,
                "event": event,
                "parent_tool_use_id": None,
            }
        )

    def close(self) -> None:
        if self._open is None:
            return
        stop = "tool_use" if self._last_block == "tool_use" else "end_turn"
        self._emit(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 9},
            }
        )
        self._emit({"type": "message_stop"})
        self._open = None

    def assistant(self, line: Mapping[str, Any]) -> None:
        msg = line["message"]
        if msg.get("id") != self._open:
            self.close()
            self._open = msg.get("id")
            self._index = 0
            start = {k: msg.get(k) for k in ("id", "type", "role", "model")}
            start.update(content=[], stop_reason=None, stop_sequence=None, usage=msg.get("usage"))
            self._emit({"type": "message_start", "message": start})
        for block in msg.get("content") or []:
            kind = block.get("type")
            if kind == "tool_use":
                self._emit(
                    {
                        "type": "content_block_start",
                        "index": self._index,
                        "content_block": {
                            "type": "tool_use",
                            "id": block.get("id"),
                            "name": block.get("name"),
                            "input": {},
                        },
                    }
                )
                for chunk in _split(json.dumps(block.get("input")), 2):
                    delta = {"type": "input_json_delta", "partial_json": chunk}
                    self._emit({"type": "content_block_delta", "index": self._index, "delta": delta})
            else:
                self._emit(
                    {"type": "content_block_start", "index": self._index, "content_block": {"type": "text", "text": ""}}
                )
                for chunk in _split(str(block.get("text", "")), 3):
                    delta = {"type": "text_delta", "text": chunk}
                    self._emit({"type": "content_block_delta", "index": self._index, "delta": delta})
            self._emit({"type": "content_block_stop", "index": self._index})
            self._index += 1
            self._last_block = str(kind)


def _scenario_items(
    records: Sequence[Mapping[str, Any]],
    rng: random.Random,
    *,
    session_id: str | None = None,
    with_init: bool = True,
    status: bool = False,
    raises: bool = True,
) -> list[dict[str, Any] | Event]:
    """One recorded scenario as one turn: stream-json dicts, and the events only the adapter sees.

    The defaults replay a recording as ``query()`` produced it (a fresh session id, its
    ``system/init``, the exception it raised as a :class:`~lifecycle.events.QueryError`). The
    realistic mix replays it as one turn of a ``ClaudeSDKClient`` session instead: the session's
    id, ``system/init`` only where the session prints one, a ``system/status`` after it, and no
    exception (that client does not raise after an error result; see :class:`RealisticMix`).
    """
    session_id = session_id or _uuid(rng)
    items: list[dict[str, Any] | Event] = [PromptStarted(turn_id=_uuid(rng))]
    lines: list[dict[str, Any]] = []
    synth = _StreamSynth(session_id, rng, lines)
    if status and not with_init:
        lines.append(_status_line(session_id, rng))
    for rec in records:
        if "raised" in rec:
            if not raises:
                continue
            synth.close()
            items.extend(lines)
            lines.clear()
            # The SDK iterator raises after the error result: the adapter turns it into an event.
            items.append(QueryError(message=str(rec.get("raised"))))
            continue
        line = sdk_record_to_stream_json(rec, session_id)
        if line is None:
            continue
        is_init = line.get("type") == "system" and line.get("subtype") == "init"
        if is_init and not with_init:
            continue
        # Fresh identities per turn, as a live session has.
        line = json.loads(json.dumps(line))
        if "uuid" in line:
            line["uuid"] = _uuid(rng)
        if "session_id" in line:
            line["session_id"] = session_id
        if line.get("type") == "assistant" and line["message"].get("model") != "<synthetic>":
            synth.assistant(line)
        else:
            synth.close()
        lines.append(line)
        if is_init and status:
            lines.append(_status_line(session_id, rng))
    synth.close()
    items.extend(lines)
    return items


def _failing(records: Sequence[Mapping[str, Any]]) -> bool:
    for rec in records:
        f = rec.get("fields")
        if "raised" in rec:
            return True
        if rec.get("class") == "ResultMessage" and isinstance(f, Mapping) and f.get("is_error"):
            return True
    return False


def _status_line(session_id: str, rng: random.Random) -> dict[str, Any]:
    """The ``system/status`` line the CLI prints before each API request (``ClaudeSDKClient``, partial
    messages on; not in the ``query()`` recordings). Shape as the bundled CLI 2.1.332 printed it."""
    return {"type": "system", "subtype": "status", "status": "requesting", "session_id": session_id, "uuid": _uuid(rng)}


@dataclass(slots=True)
class HotPathSession:
    """A hot-path input: ``items`` in order (dicts are stream-json lines, events are adapter-only)."""

    items: list[dict[str, Any] | Event]
    lines: list[str]
    turns: int
    failing_turns: int
    retry_turns: int
    by_type: dict[str, int]
    #: What the generator drew (realistic mix) or how the cycle was made (failure-dense mix).
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def dicts(self) -> list[dict[str, Any]]:
        return [i for i in self.items if isinstance(i, dict)]


def _line_kind(d: Mapping[str, Any]) -> str:
    kind = str(d.get("type"))
    if kind == "system":
        return f"system/{d.get('subtype')}"
    if kind == "assistant":
        return "assistant/synthetic" if d["message"].get("model") == "<synthetic>" else "assistant"
    return kind


def _session(
    items: list[dict[str, Any] | Event], turns: int, failing: int, retry: int, stats: dict[str, Any]
) -> HotPathSession:
    dicts = [i for i in items if isinstance(i, dict)]
    return HotPathSession(
        items=items,
        lines=[json.dumps(d) for d in dicts],
        turns=turns,
        failing_turns=failing,
        retry_turns=retry,
        by_type=dict(Counter(_line_kind(d) for d in dicts).most_common()),
        stats=stats,
    )


def _read_scenarios(fixtures: Path) -> dict[str, list[dict[str, Any]]]:
    scenarios = {p.name[: -len(".sdk.jsonl")]: _read_jsonl(p) for p in sorted(fixtures.glob("*.sdk.jsonl"))}
    if not scenarios:
        raise FileNotFoundError(f"no *.sdk.jsonl fixtures in {fixtures}")
    return scenarios


# ---------------------------------------------------------------------- the failure-dense mix

#: The failure-dense mix (``hot_path.ratio_failure_dense``, no target): the recorded scenarios replayed
#: as whole ``query()`` turns with the fake API's tiny answers (3 text deltas). Per cycle of 20 turns:
#: 11 plain answers, 7 answers cut by max_tokens and continued (answer, user frame, answer), 1
#: ``api_retry`` that then succeeds, and :data:`FAILURE_DENSE_FAILURES_PER_CYCLE` failing turn
#: (rotating through every failing recording). Every turn keeps its recording's ``system/init``.
FAILURE_DENSE_MIX: tuple[tuple[str, int], ...] = (("success", 11), ("max_tokens_once", 7), ("retry_then_success", 1))
FAILURE_DENSE_FAILURES_PER_CYCLE = 1


def build_failure_dense_session(fixtures: Path, min_lines: int, *, seed: int = 6) -> HotPathSession:
    """The failure-dense mix (:data:`FAILURE_DENSE_MIX`) with at least ``min_lines`` stream-json lines."""
    rng = random.Random(seed)
    scenarios = _read_scenarios(fixtures)
    failing = sorted(name for name, recs in scenarios.items() if _failing(recs))
    cycle = [name for name, count in FAILURE_DENSE_MIX for _ in range(count)]
    items: list[dict[str, Any] | Event] = []
    n_lines = turns = failing_turns = retry_turns = 0
    k = 0
    while n_lines < min_lines:
        names = list(cycle)
        for _ in range(FAILURE_DENSE_FAILURES_PER_CYCLE):
            names.append(failing[k % len(failing)])
            k += 1
        rng.shuffle(names)
        for name in names:
            turn = _scenario_items(scenarios[name], rng)
            items.extend(turn)
            n_lines += sum(isinstance(i, dict) for i in turn)
            turns += 1
            failing_turns += name in failing
            retry_turns += name == "retry_then_success"
    stats = {
        "cycle": dict(FAILURE_DENSE_MIX),
        "failing_per_cycle": FAILURE_DENSE_FAILURES_PER_CYCLE,
        "text_deltas_per_text_block": 3,
    }
    return _session(items, turns, failing_turns, retry_turns, stats)


# ---------------------------------------------------------------------- the realistic mix


@dataclass(frozen=True, slots=True)
class RealisticMix:
    """What the realistic hot-path session (``hot_path.ratio``) is made of. Ranges are inclusive.

    *Counts per block.* The number of ``text_delta`` events of an answer's text block is drawn
    log-uniformly from :attr:`answer_deltas` (40–400: median ≈ 126, mean ≈ 156 deltas); the short
    text a model writes before its tool calls from :attr:`preamble_deltas`. A delta holds
    :attr:`words_per_delta` words (1–4, about 1–5 tokens; a paragraph break after one delta in 12).
    :attr:`tool_turn_share` of the turns call tools: :attr:`tool_rounds` rounds of (an assistant
    message with a preamble and :attr:`tools_per_round` ``tool_use`` blocks, their input streamed as
    ``input_json_delta`` chunks of :attr:`json_chunk_chars` characters, then one tool-result ``user``
    line per call with :attr:`tool_result_chars` characters of file text, log-uniform), then the answer
    message.

    *Incidents.* :attr:`failures_per_10k` failing turns and :attr:`retries_per_10k` turns with one
    ``api_retry`` that then succeeds, per 10,000 lines, spread evenly through the session (at least one
    of each when the rate is not 0, so a short quick-run session still has incidents).

    *Shapes.* ``system/init``, assistant text, assistant ``tool_use`` (``Read``, the only tool the
    recordings call), tool-result ``user``, ``result`` and ``api_retry`` lines are the recorded
    ``*.sdk.jsonl`` messages (``success``, ``max_turns``, ``retry_then_success``) rebuilt as
    stream-json with fresh ids and the drawn content; failing turns are the failing recordings replayed
    whole, in rotation. What the recordings cannot show (each is one ``query()`` with partial messages
    off) follows the bundled CLI 2.1.332 driven like the adapter drives it (one ``ClaudeSDKClient``,
    ``include_partial_messages=True``, three prompts on one process, against the e2e fake API): it
    printed ``system/init`` at *every* turn (:attr:`init_per_turn`), a ``system/status`` before every
    API request, one ``stream_event`` per SSE event (``ping`` is not forwarded) carrying
    ``api_message_id`` (and ``ttft_ms``/``thinking_display`` on ``message_start``), one ``assistant``
    line per completed content block printed before that block's ``content_block_stop``, and no
    exception after an error result.
    """

    answer_deltas: tuple[int, int] = (40, 400)
    preamble_deltas: tuple[int, int] = (5, 40)
    words_per_delta: tuple[int, int] = (1, 4)
    tool_turn_share: float = 0.5
    tool_rounds: tuple[int, int] = (1, 3)
    tools_per_round: tuple[int, int] = (1, 2)
    json_chunk_chars: tuple[int, int] = (5, 25)
    tool_result_chars: tuple[int, int] = (100, 4000)
    failures_per_10k: int = 2
    retries_per_10k: int = 2
    init_per_turn: bool = True

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


#: The mix of the target figure ``hot_path.ratio``.
REALISTIC_MIX = RealisticMix()

_VOCABULARY = (
    "the a to of and in is that it for this with as be on not are we can by file function test when "
    "value return error state ledger incident record session turn event message line call which each "
    "so then here now should would will if only one two new first last case code change fix run "
    "check `lifecycle` `SessionLedger` `feed()` `process()` `retry` module type list dict string "
    "because before after while all more than also already still now instead see note"
)
_WORDS = tuple(_VOCABULARY.split())
_DIRS = ("lifecycle", "tests", "docs", "src", "scripts", "examples")


def _log_uniform(rng: random.Random, bounds: tuple[int, int]) -> int:
    lo, hi = bounds
    return min(hi, int(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))))


def _incident_count(n_lines: int, per_10k: int) -> int:
    return 0 if per_10k <= 0 else max(1, round(n_lines * per_10k / 10_000))


@dataclass(frozen=True, slots=True)
class _Templates:
    """Recorded lines (rebuilt as stream-json) the realistic turns are made of."""

    init: dict[str, Any]
    text: dict[str, Any]
    tool: dict[str, Any]
    tool_result: dict[str, Any]
    result: dict[str, Any]
    retry: dict[str, Any]


def _template(scenarios: Mapping[str, Sequence[Mapping[str, Any]]], name: str, cls: str, kind: str) -> dict[str, Any]:
    for rec in scenarios.get(name, ()):
        f = rec.get("fields")
        if rec.get("class") != cls or not isinstance(f, Mapping):
            continue
        if kind == "tool_use" and not any(isinstance(b, Mapping) and "name" in b for b in f.get("content") or []):
            continue
        if kind and kind != "tool_use" and f.get("subtype") != kind:
            continue
        line = sdk_record_to_stream_json(rec, "template")
        if line is not None:
            return line
    raise FileNotFoundError(f"the fixtures lack a {cls} {kind} in {name}.sdk.jsonl")


def _templates(scenarios: Mapping[str, Sequence[Mapping[str, Any]]]) -> _Templates:
    return _Templates(
        init=_template(scenarios, "success", "SystemMessage", "init"),
        text=_template(scenarios, "success", "AssistantMessage", ""),
        tool=_template(scenarios, "max_turns", "AssistantMessage", "tool_use"),
        tool_result=_template(scenarios, "max_turns", "UserMessage", ""),
        result=_template(scenarios, "success", "ResultMessage", ""),
        retry=_template(scenarios, "retry_then_success", "SystemMessage", "api_retry"),
    )


def _copy(d: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(d))
    return out


class _RealisticWriter:
    """Writes the turns of one realistic ``ClaudeSDKClient`` session (see :class:`RealisticMix`)."""

    def __init__(self, t: _Templates, mix: RealisticMix, rng: random.Random, session_id: str) -> None:
        self.t, self.mix, self.rng, self.sid = t, mix, rng, session_id
        self.items: list[dict[str, Any] | Event] = []
        self.lines = 0
        self.turns = 0
        self.api_requests = 0
        self.tool_turns = 0
        self.tool_calls = 0
        self.answer_deltas: list[int] = []
        self.preamble_deltas: list[int] = []
        self.delta_chars = 0
        self.deltas = 0
        self.tool_result_chars: list[int] = []

    def _line(self, d: dict[str, Any]) -> None:
        self.items.append(d)
        self.lines += 1

    def _fresh(self, template: Mapping[str, Any]) -> dict[str, Any]:
        d = _copy(template)
        d["uuid"] = _uuid(self.rng)
        d["session_id"] = self.sid
        return d

    def _frame(self, event: dict[str, Any], msg_id: str, **extra: Any) -> None:
        d: dict[str, Any] = {
            "type": "stream_event",
            "event": event,
            "session_id": self.sid,
            "parent_tool_use_id": None,
            "uuid": _uuid(self.rng),
        }
        d.update(extra)
        d["api_message_id"] = msg_id
        self._line(d)

    def _status(self) -> None:
        self.api_requests += 1
        self._line(_status_line(self.sid, self.rng))

    def _text_chunks(self, n: int) -> list[str]:
        rng, chunks = self.rng, []
        sep = ""
        for _ in range(n):
            chunk = sep + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(*self.mix.words_per_delta)))
            if rng.random() < 1 / 12:
                chunk += ".\n\n"
            sep = "" if chunk.endswith("\n") else " "
            chunks.append(chunk)
        self.deltas += n
        self.delta_chars += sum(len(c) for c in chunks)
        return chunks

    def _tool_block(self) -> dict[str, Any]:
        rng = self.rng
        path = f"/home/user/project/{rng.choice(_DIRS)}/{rng.choice(_WORDS).strip('`()')}_{rng.randint(1, 99)}.py"
        self.tool_calls += 1
        return {
            "type": "tool_use",
            "id": f"toolu_fake{rng.getrandbits(64):016x}",
            "name": "Read",
            "input": {"file_path": path},
        }

    def _message(self, blocks: Sequence[dict[str, Any] | list[str]], stop_reason: str) -> None:
        """One API response: its stream events and one assistant line per completed block."""
        rng = self.rng
        msg_id = f"msg_fake{rng.getrandbits(96):024x}"
        tpl = self.t.text["message"]
        start = {k: tpl.get(k) for k in ("id", "type", "role", "model")}
        start.update(id=msg_id, content=[], stop_reason=None, stop_sequence=None, usage=tpl.get("usage"))
        self._frame(
            {"type": "message_start", "message": start},
            msg_id,
            ttft_ms=rng.randint(400, 4000),
            thinking_display="updates",
        )
        tokens = 0
        for index, block in enumerate(blocks):
            if isinstance(block, list):  # text: its deltas
                self._frame(
                    {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                    msg_id,
                )
                for chunk in block:
                    self._frame(
                        {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": chunk}},
                        msg_id,
                    )
                line = self._fresh(self.t.text)
                line["message"]["content"] = [{"type": "text", "text": "".join(block)}]
                tokens += 3 * len(block)
            else:  # tool_use: its input as input_json_delta chunks
                start_block = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                self._frame({"type": "content_block_start", "index": index, "content_block": start_block}, msg_id)
                raw = json.dumps(block["input"])
                i = 0
                while i < len(raw):
                    n = rng.randint(*self.mix.json_chunk_chars)
                    delta = {"type": "input_json_delta", "partial_json": raw[i : i + n]}
                    self._frame({"type": "content_block_delta", "index": index, "delta": delta}, msg_id)
                    i += n
                line = self._fresh(self.t.tool)
                line["message"]["content"] = [dict(block)]
                tokens += len(raw) // 3
            line["message"]["id"] = msg_id
            self._line(line)
            self._frame({"type": "content_block_stop", "index": index}, msg_id)
        usage = {"input_tokens": tpl.get("usage", {}).get("input_tokens", 12), "output_tokens": tokens}
        self._frame(
            {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None}, "usage": usage},
            msg_id,
        )
        self._frame({"type": "message_stop"}, msg_id)

    def _tool_result(self, block: Mapping[str, Any]) -> None:
        rng = self.rng
        size = _log_uniform(rng, self.mix.tool_result_chars)
        parts: list[str] = []
        length = 0
        while length < size:
            row = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 12)))
            parts.append(row)
            length += len(row) + 1
        text = "\n".join(parts)[: size - 1] + "\n"  # the drawn length exactly
        rows = text[:-1].split("\n")
        numbered = "".join(f"{n}\t{row}\n" for n, row in enumerate(rows, 1))
        line = self._fresh(self.t.tool_result)
        line["message"]["content"] = [
            {"type": "tool_result", "tool_use_id": block["id"], "content": numbered, "is_error": None}
        ]
        file = {"filePath": block["input"]["file_path"], "content": text, "numLines": len(rows), "startLine": 1}
        line["tool_use_result"] = {"type": "text", "file": {**file, "totalLines": len(rows)}}
        self.tool_result_chars.append(len(text))
        self._line(line)

    def _start(self) -> None:
        self.items.append(PromptStarted(turn_id=_uuid(self.rng)))
        if self.mix.init_per_turn or self.turns == 0:
            self._line(self._fresh(self.t.init))

    def turn(self, *, retry: bool) -> None:
        """A successful turn: optional tool rounds, then a streamed answer; ``retry``: one api_retry first."""
        rng, mix = self.rng, self.mix
        self._start()
        self._status()
        if retry:
            line = self._fresh(self.t.retry)
            line["attempt"] = 1
            self._line(line)
        rounds = rng.randint(*mix.tool_rounds) if rng.random() < mix.tool_turn_share else 0
        self.tool_turns += rounds > 0
        for _ in range(rounds):
            n = _log_uniform(rng, mix.preamble_deltas)
            self.preamble_deltas.append(n)
            tools = [self._tool_block() for _ in range(rng.randint(*mix.tools_per_round))]
            self._message([self._text_chunks(n), *tools], "tool_use")
            for tool in tools:
                self._tool_result(tool)
            self._status()
        n = _log_uniform(rng, mix.answer_deltas)
        self.answer_deltas.append(n)
        answer = self._text_chunks(n)
        self._message([answer], "end_turn")
        result = self._fresh(self.t.result)
        result.update(num_turns=rounds + 1, result="".join(answer))
        self._line(result)
        self.turns += 1

    def recorded_turn(self, records: Sequence[Mapping[str, Any]]) -> None:
        """A recorded (failing) scenario as one turn of this session."""
        items = _scenario_items(
            records,
            self.rng,
            session_id=self.sid,
            with_init=self.mix.init_per_turn or self.turns == 0,
            status=True,
            raises=False,
        )
        self.api_requests += 1
        self.items.extend(items)
        self.lines += sum(isinstance(i, dict) for i in items)
        self.turns += 1


def _distribution(values: Sequence[int]) -> dict[str, float]:
    if not values:
        return {}
    return {
        "n": len(values),
        "min": min(values),
        "median": statistics.median(values),
        "mean": statistics.fmean(values),
        "max": max(values),
    }


def build_realistic_session(
    fixtures: Path, min_lines: int, *, mix: RealisticMix = REALISTIC_MIX, seed: int = 6
) -> HotPathSession:
    """One ``ClaudeSDKClient`` session of realistic turns with at least ``min_lines`` stream-json lines.

    See :class:`RealisticMix` for what the turns contain and where each shape comes from. Incident
    turns are placed at evenly spaced line positions; failing turns rotate through the failing
    recordings in name order.
    """
    rng = random.Random(seed)
    scenarios = _read_scenarios(fixtures)
    failing = sorted(name for name, recs in scenarios.items() if _failing(recs))
    writer = _RealisticWriter(_templates(scenarios), mix, rng, _uuid(rng))
    n_fail = _incident_count(min_lines, mix.failures_per_10k)
    n_retry = _incident_count(min_lines, mix.retries_per_10k)
    kinds: list[str] = []
    for i in range(max(n_fail, n_retry)):
        kinds.extend(k for k, n in (("retry", n_retry), ("failing", n_fail)) if i < n)
    at = [(j + 0.5) * min_lines / len(kinds) for j in range(len(kinds))] if kinds else []
    used: list[str] = []
    retry_turns = 0
    while writer.lines < min_lines or at:
        if at and writer.lines >= at[0]:
            at.pop(0)
            kind = kinds[len(used) + retry_turns]
            if kind == "failing":
                name = failing[len(used) % len(failing)]
                used.append(name)
                writer.recorded_turn(scenarios[name])
            else:
                retry_turns += 1
                writer.turn(retry=True)
            continue
        writer.turn(retry=False)
    stats = {
        "mix": mix.to_json(),
        "api_requests": writer.api_requests,
        "tool_turns": writer.tool_turns,
        "tool_calls": writer.tool_calls,
        "answer_text_deltas": _distribution(writer.answer_deltas),
        "preamble_text_deltas": _distribution(writer.preamble_deltas),
        "text_delta_chars_mean": writer.delta_chars / writer.deltas if writer.deltas else 0.0,
        "tool_result_chars": _distribution(writer.tool_result_chars),
        "failing_scenarios": used,
    }
    return _session(writer.items, writer.turns, len(used), retry_turns, stats)


# ---------------------------------------------------------------------- measuring


def _drive(items: Sequence[dict[str, Any] | Event], deliver: Callable[[Outbound], object]) -> SessionLedger:
    ledger = SessionLedger("bench-session", negotiated=True, epoch="bench")
    _feed_items(ledger, items, deliver)
    return ledger


def _feed_items(
    ledger: SessionLedger, items: Sequence[dict[str, Any] | Event], deliver: Callable[[Outbound], object]
) -> None:
    process = ledger.process
    for item in items:
        if type(item) is dict:
            ev = from_stream_json(item)
            if ev is None:
                continue
        else:
            ev = item  # type: ignore[assignment]
        process(ev, deliver)  # type: ignore[arg-type]


def _translate_items(items: Sequence[dict[str, Any] | Event]) -> None:
    """The same loop with translation only (no ledger): what the ledger adds is the difference."""
    for item in items:
        if type(item) is dict:
            from_stream_json(item)


def _count_outbound(items: Sequence[dict[str, Any] | Event]) -> dict[str, int]:
    """What one pass produces, for the report: events, sends, records, incidents, active at the end."""
    sends = records = 0
    ids: set[str] = set()

    def deliver(msg: Outbound) -> None:
        nonlocal sends, records
        sends += 1
        if msg.record is not None:
            records += 1
            ids.add(msg.record.id)

    events = sum(1 for i in items if not isinstance(i, dict) or from_stream_json(i) is not None)
    ledger = _drive(items, deliver)
    return {
        "events": events,
        "sends": sends,
        "records": records,
        "incidents": len(ids),
        "active_at_end": len(ledger.active),
    }


def _hot_ratio(
    session: HotPathSession, reps: int, deliver: Callable[[Outbound], object]
) -> tuple[list[float], list[float], list[float]]:
    """Interleaved repetitions: (baseline seconds, lifecycle seconds, per-rep ratio)."""
    lines, items = session.lines, session.items
    loads = json.loads

    def baseline() -> None:
        for line in lines:
            loads(line)

    base: list[float] = []
    life: list[float] = []
    ratio: list[float] = []
    for _ in range(reps):
        b = _timed(baseline)
        ledger = SessionLedger("bench-session", negotiated=True, epoch="bench")
        t = _timed(lambda ledger=ledger: _feed_items(ledger, items, deliver))  # type: ignore[misc]
        base.append(b)
        life.append(t)
        ratio.append(t / b)
    return base, life, ratio


def _loads_all(texts: Sequence[str]) -> None:
    for t in texts:
        json.loads(t)


def _translate_all(dicts: Sequence[Mapping[str, Any]]) -> None:
    for d in dicts:
        from_stream_json(d)


def _per_type(session: HotPathSession, reps: int) -> dict[str, dict[str, float]]:
    """µs per line of each stream-json kind: json.loads vs from_stream_json (translation only)."""
    groups: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for line, d in zip(session.lines, session.dicts, strict=True):
        groups.setdefault(_line_kind(d), []).append((line, d))
    out: dict[str, dict[str, float]] = {}
    for kind, pairs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        sample = pairs[:500]
        texts = [p[0] for p in sample]
        dicts = [p[1] for p in sample]
        n = len(sample)
        loads = _best_of(functools.partial(_loads_all, texts), reps) / n
        trans = _best_of(functools.partial(_translate_all, dicts), reps) / n
        out[kind] = {
            "lines": len(pairs),
            "bytes_mean": sum(len(p[0]) for p in pairs) / len(pairs),
            "json_loads_us": loads * 1e6,
            "from_stream_json_us": trans * 1e6,
        }
    return out


def _hot_profile(session: HotPathSession) -> dict[str, Any]:
    """cProfile of one lifecycle pass over ``session``: where the hot path's time goes.

    Shares are of the profiled total (the profiler inflates small calls, so they are indicative);
    the un-profiled decomposition is in ``details.hot_path.decomposition``.
    """
    ledger = SessionLedger("bench-session", negotiated=True, epoch="bench")
    prof = cProfile.Profile()
    prof.enable()
    _feed_items(ledger, session.items, _noop)
    prof.disable()
    raw: dict[tuple[str, int, str], tuple[Any, ...]] = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in raw.values())

    def cum(path_part: str, func: str) -> float:
        return float(sum(v[3] for k, v in raw.items() if k[0].endswith(path_part) and k[2] == func))

    sm = os.sep + "statemachine" + os.sep
    parts = {
        "from_stream_json": cum(os.sep + "claude.py", "from_stream_json"),
        "ledger_process": cum(os.sep + "ledger.py", "process"),
        "ledger_feed": cum(os.sep + "ledger.py", "feed"),
        "ledger_materialise": cum(os.sep + "ledger.py", "_materialise"),
        "ledger_commit": cum(os.sep + "ledger.py", "_commit"),
        "ledger_recover": cum(os.sep + "ledger.py", "_recover"),
        "statemachine_creation": float(
            sum(v[3] for k, v in raw.items() if sm in k[0] and k[0].endswith("statemachine.py") and k[2] == "__init__")
        ),
        "statemachine_send": float(
            sum(v[3] for k, v in raw.items() if sm in k[0] and k[0].endswith("statemachine.py") and k[2] == "send")
        ),
    }
    return {
        "profiled_total_s": total,
        "seconds": parts,
        "share_of_total": {k: (v / total if total else 0.0) for k, v in parts.items()},
    }


def _decompose(session: HotPathSession, traffic: HotPathSession, reps: int, *, incidents: int) -> dict[str, Any]:
    """Where the realistic hot path's time goes, un-profiled: medians of interleaved repetitions of
    the translation loop alone, the whole lifecycle, and the lifecycle over the same mix without
    incident turns (scaled to the same number of lines); the incidents cost the difference."""
    items, quiet = session.items, traffic.items
    loop: list[float] = []
    whole: list[float] = []
    plain: list[float] = []
    for _ in range(reps):
        loop.append(_timed(lambda: _translate_items(items)))
        ledger = SessionLedger("bench-session", negotiated=True, epoch="bench")
        whole.append(_timed(lambda ledger=ledger: _feed_items(ledger, items, _noop)))  # type: ignore[misc]
        ledger = SessionLedger("bench-session", negotiated=True, epoch="bench")
        plain.append(_timed(lambda ledger=ledger: _feed_items(ledger, quiet, _noop)))  # type: ignore[misc]
    t_loop, t_whole = statistics.median(loop), statistics.median(whole)
    t_plain = statistics.median(plain) * len(session.lines) / len(traffic.lines)
    t_incidents = t_whole - t_plain
    return {
        "repetitions": reps,
        "lifecycle_s": t_whole,
        "translate_loop_s": t_loop,
        "ledger_traffic_s": t_plain - t_loop,
        "incidents_s": t_incidents,
        "incidents": incidents,
        "ms_per_incident": t_incidents / incidents * 1e3 if incidents else None,
        "traffic_only_lifecycle_s_scaled": t_plain,
        "share": {
            "translate_loop": t_loop / t_whole,
            "ledger_traffic": (t_plain - t_loop) / t_whole,
            "incidents": t_incidents / t_whole,
        },
    }


def _mix_label(session: HotPathSession, incidents: int) -> str:
    kinds = ", ".join(f"{n:,} {k}" for k, n in session.by_type.items())
    return (
        f"{len(session.lines):,} lines ({kinds}); {session.turns:,} turns, {incidents} incidents "
        f"({session.failing_turns} failing + {session.retry_turns} retry-then-success turns)"
    )


def bench_hot_path(cfg: BenchConfig, progress: Callable[[str], None]) -> tuple[list[Figure], dict[str, Any]]:
    progress(f"hot path: building the realistic and failure-dense sessions (>= {cfg.hot_lines} lines each)")
    session = build_realistic_session(cfg.fixtures, cfg.hot_lines)
    traffic = build_realistic_session(
        cfg.fixtures, cfg.hot_lines, mix=replace(REALISTIC_MIX, failures_per_10k=0, retries_per_10k=0)
    )
    init_once = build_realistic_session(cfg.fixtures, cfg.hot_lines, mix=replace(REALISTIC_MIX, init_per_turn=False))
    dense = build_failure_dense_session(cfg.fixtures, cfg.hot_lines)
    counts = _count_outbound(session.items)
    dense_counts = _count_outbound(dense.items)
    n = len(session.lines)
    reps = cfg.repetitions
    progress(
        f"hot path: realistic {n} lines, {session.turns} turns, {counts['incidents']} incidents; {reps} repetitions"
    )
    base, life, ratio = _hot_ratio(session, reps, _noop)
    _, _, ratio_ser = _hot_ratio(session, reps, _serialise)
    _, tl, ratio_traffic = _hot_ratio(traffic, reps, _noop)
    _, _, ratio_init_once = _hot_ratio(init_once, reps, _noop)
    progress(f"hot path: failure-dense {len(dense.lines)} lines, {dense_counts['incidents']} incidents")
    _, dl, ratio_dense = _hot_ratio(dense, reps, _noop)
    decomposition = _decompose(session, traffic, reps, incidents=counts["incidents"])
    what = (
        "lifecycle = from_stream_json(dict) for every line + SessionLedger.process(event, deliver) for every "
        "event (incl. the adapter-only PromptStarted event per turn, building every outbound message, "
        "SessionFailure records, incident transitions answered by IncidentMachine through "
        "lifecycle.incident.MachineAnswers, commit); deliver is a no-op "
        "(no to_jsonrpc, no JSON encoding, no transport); baseline = json.loads of the same lines"
    )
    figures = [
        _fig(
            "hot_path.ratio",
            f"hot path, realistic mix: lifecycle / json.loads, {_mix_label(session, counts['incidents'])}",
            "ratio",
            ratio,
            target=("<=", 0.10),
            note=what + "; mix: lifecycle.tools.bench.REALISTIC_MIX",
        ),
        _fig(
            "hot_path.baseline_us_per_line",
            "hot path baseline (realistic mix): json.loads per line",
            "µs",
            [b / n * 1e6 for b in base],
        ),
        _fig(
            "hot_path.lifecycle_us_per_line",
            "hot path (realistic mix): lifecycle per line",
            "µs",
            [t / n * 1e6 for t in life],
        ),
        _fig(
            "hot_path.ratio_serialised",
            "hot path, realistic mix, with wire serialisation: deliver = json.dumps(msg.to_jsonrpc())",
            "ratio",
            ratio_ser,
        ),
        _fig(
            "hot_path.ratio_traffic_only",
            f"hot path, realistic mix without incident turns: {_mix_label(traffic, 0)}",
            "ratio",
            ratio_traffic,
        ),
        _fig(
            "hot_path.traffic_only_lifecycle_us_per_line",
            "hot path, realistic mix without incident turns: lifecycle per line",
            "µs",
            [t / len(traffic.lines) * 1e6 for t in tl],
        ),
        _fig(
            "hot_path.ratio_init_once_per_runtime",
            "hot path, realistic mix but system/init only at the first turn (the CLI prints it every turn), "
            f"{len(init_once.lines):,} lines",
            "ratio",
            ratio_init_once,
        ),
        _fig(
            "hot_path.ratio_failure_dense",
            "hot path, failure-dense mix (1 failing + 1 retry-then-success turn in every 20 tiny recorded "
            f"turns, 3 text deltas per answer): {_mix_label(dense, dense_counts['incidents'])}",
            "ratio",
            ratio_dense,
        ),
        _fig(
            "hot_path.failure_dense_lifecycle_us_per_line",
            "hot path, failure-dense mix: lifecycle per line",
            "µs",
            [t / len(dense.lines) * 1e6 for t in dl],
        ),
    ]
    detail = {
        "lines": n,
        "bytes": sum(len(x) for x in session.lines),
        "turns": session.turns,
        "failing_turns": session.failing_turns,
        "retry_turns": session.retry_turns,
        **counts,
        "lines_by_type": session.by_type,
        "generated": session.stats,
        "per_type": _per_type(session, reps),
        "decomposition": decomposition,
        "profile": _hot_profile(session),
        "traffic_only": {"lines": len(traffic.lines), "turns": traffic.turns, "lines_by_type": traffic.by_type},
        "init_once": {"lines": len(init_once.lines), "lines_by_type": init_once.by_type},
        "failure_dense": {
            "lines": len(dense.lines),
            "turns": dense.turns,
            "failing_turns": dense.failing_turns,
            "retry_turns": dense.retry_turns,
            **dense_counts,
            "lines_by_type": dense.by_type,
            "mix": dense.stats,
        },
    }
    return figures, detail


# ====================================================================== incidents


class _NullObserver:
    """A TransitionObserver that does nothing (so listener dispatch is measured, not logging)."""

    def transition(self, **fields: Any) -> None:
        return None

    def note(self, what: str, **fields: Any) -> None:
        return None


_RETRY = ApiRetry(attempt=1, max_retries=2, error_status=529, error="overloaded")
_ERROR_TEXT = "API Error: Repeated 529 Overloaded errors · check status.claude.com"
_ANSWER = "Hello from the fake API."


def _incident_life_events(turn: str) -> list[Event]:
    """retry warning -> terminal error (turn 1), then a confirmed attempt (turn 2) -> historical."""
    return [
        PromptStarted(turn_id=turn),
        _RETRY,
        Assistant(text=_ERROR_TEXT, model="<synthetic>", error="server_error", uuid=turn + "-a"),
        Result(subtype="success", is_error=True, result=_ERROR_TEXT, api_error_status=529, terminal_reason="api_error"),
        QueryError(message="ResultError"),
        PromptStarted(turn_id=turn + "-next"),
        Assistant(text=_ANSWER, model="claude-opus-5-5", uuid=turn + "-b"),
        Result(subtype="success", is_error=False, result=_ANSWER, stop_reason="end_turn", terminal_reason="completed"),
    ]


def _two_turns_events(turn: str) -> list[Event]:
    """The same two turns without the failure: what the life costs beyond ordinary traffic."""
    return [
        PromptStarted(turn_id=turn),
        Assistant(text=_ANSWER, model="claude-opus-5-5", uuid=turn + "-a"),
        Result(subtype="success", is_error=False, result=_ANSWER, stop_reason="end_turn", terminal_reason="completed"),
        PromptStarted(turn_id=turn + "-next"),
        Assistant(text=_ANSWER, model="claude-opus-5-5", uuid=turn + "-b"),
        Result(subtype="success", is_error=False, result=_ANSWER, stop_reason="end_turn", terminal_reason="completed"),
    ]


def _run_lives(ledger: SessionLedger, lives: Sequence[Sequence[Event]], deliver: Callable[[Outbound], object]) -> None:
    process = ledger.process
    for life in lives:
        for ev in life:
            process(ev, deliver)


def _make_lives(
    n: int, start: int = 0, kind: Callable[[str], list[Event]] = _incident_life_events
) -> list[list[Event]]:
    return [kind(f"turn-{i:08d}") for i in range(start, start + n)]


def _sf() -> SessionFailure:
    return SessionFailure(
        id="turn-00000000:error",
        revision=2,
        category=Category.SERVICE,
        severity=Severity.ERROR,
        title=_ERROR_TEXT,
        actions=(),
    )


def _profile_split(n: int) -> dict[str, Any]:
    """cProfile of ``n`` lives (observer attached) from a cold start: where python-statemachine's time goes.

    The ledger gets fresh machine answers, so the profile includes asking every question once.
    """
    from ...incident import MachineAnswers

    answers = MachineAnswers()
    ledger = SessionLedger(
        "bench-session", negotiated=True, epoch="bench", observer=_NullObserver(), answers=answers
    )
    lives = _make_lives(n)
    prof = cProfile.Profile()
    prof.enable()
    _run_lives(ledger, lives, _serialise)
    prof.disable()
    asked = len(answers)
    stats = pstats.Stats(prof)
    raw: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in raw.values())  # total own time = profiled wall time

    def cum(path_part: str, func: str) -> float:
        return float(sum(v[3] for k, v in raw.items() if path_part in k[0] and k[2] == func))

    def own(path_part: str) -> float:
        return float(sum(v[2] for k, v in raw.items() if path_part in k[0]))

    sm = os.sep + "statemachine" + os.sep
    pyd = own(os.sep + "pydantic" + os.sep) + own("pydantic_core")
    parts = {
        "machine_creation": cum(sm + "statemachine.py", "__init__"),
        "machine_creation_listener_registration": cum(sm + "statemachine.py", "_add_listener"),
        "transitions_send": cum(sm + "statemachine.py", "send"),
        "statemachine_own_time_total": own(sm),
        "machine_answers_fire": cum("lifecycle" + os.sep + "incident.py", "fire"),
        "ledger_fire_with_observer": cum("lifecycle" + os.sep + "ledger.py", "_fire"),
        "pydantic_own_time": pyd,
        "attach_record": cum("lifecycle" + os.sep + "wire.py", "attach_record"),
        "json_dumps": cum("json" + os.sep + "__init__.py", "dumps"),
    }
    top = sorted(
        ((v[3], f"{Path(k[0]).name}:{k[1]}({k[2]})") for k, v in raw.items() if sm in k[0]),
        reverse=True,
    )[:8]
    return {
        "lives": n,
        "questions_asked_of_real_machines": asked,
        "profiled_total_s": total,
        "seconds": parts,
        "share_of_total": {k: (v / total if total else 0.0) for k, v in parts.items()},
        "calls_per_life": sum(v[1] for v in raw.values()) / n,
        "statemachine_top_cumulative": [{"function": name, "cumulative_s": t} for t, name in top],
    }


def _cold_life_ms(reps: int) -> list[float]:
    """One incident life in a ledger with fresh machine answers (a process's first incident)."""
    out: list[float] = []
    for r in range(reps):
        life = _make_lives(1, start=10_000_000 + r)
        ledger = SessionLedger("bench-session", negotiated=True, epoch="bench")
        out.append(_timed(lambda ledger=ledger, life=life: _run_lives(ledger, life, _serialise)) * 1e3)  # type: ignore[misc]
    return out


def _micro(reps: int, number: int) -> dict[str, float]:
    """µs per operation of python-statemachine pieces the ledger uses (best of ``reps``)."""
    from ...conditions import Recovery
    from ...incident import Incident, IncidentMachine, TransitionListener

    listener = TransitionListener(_NullObserver(), "bench-session")

    def best(fn: Callable[[], object]) -> float:
        return min(timeit.repeat(fn, number=number, repeat=reps)) / number * 1e6

    def new_machine() -> object:
        return IncidentMachine(model=Incident("x:error", "x"), state_field="state")

    def new_machine_listener() -> object:
        return IncidentMachine(model=Incident("x:error", "x"), state_field="state", listeners=[listener])

    def life_transitions() -> None:
        inc = Incident("x:error", "x")
        inc.recovery = Recovery.CONFIRMED_ATTEMPT
        m = IncidentMachine(model=inc, state_field="state")
        m.send("warn")
        m.send("fail")
        m.send("confirmed_attempt")

    def in_retrying(listeners: list[object]) -> IncidentMachine:
        m = IncidentMachine(model=Incident("x:error", "x"), state_field="state", listeners=listeners)
        m.send("warn")
        return m

    plain, observed = in_retrying([]), in_retrying([listener])
    record = _sf()
    return {
        "transition_self_loop_us": best(lambda: plain.send("warn")),
        "transition_self_loop_with_listener_us": best(lambda: observed.send("warn")),
        "machine_creation_us": best(new_machine),
        "machine_creation_with_listener_us": best(new_machine_listener),
        "machine_creation_plus_3_transitions_us": best(life_transitions),
        "session_failure_model_us": best(_sf),
        "attach_record_us": best(lambda: attach_record(None, record)),
        "record_to_wire_us": best(record.to_wire),
    }


def bench_incident(cfg: BenchConfig, progress: Callable[[str], None]) -> tuple[list[Figure], dict[str, Any]]:
    n = cfg.incident_lives
    progress(f"incident: {n} full lives x {cfg.repetitions} repetitions")
    per_life: list[float] = []
    per_two_turns: list[float] = []
    per_sf: list[float] = []
    ratios: list[float] = []
    for r in range(cfg.repetitions):
        lives = _make_lives(n, start=r * n)
        plain = _make_lives(n, start=r * n, kind=_two_turns_events)
        ledger = SessionLedger("bench-session", negotiated=True, epoch="bench")
        t = _timed(lambda ledger=ledger, lives=lives: _run_lives(ledger, lives, _serialise))  # type: ignore[misc]
        assert not ledger.active, "every bench incident must end historical"
        ledger = SessionLedger("bench-session", negotiated=True, epoch="bench")
        t2 = _timed(lambda ledger=ledger, plain=plain: _run_lives(ledger, plain, _serialise))  # type: ignore[misc]
        number = max(1000, n)
        sf = min(timeit.repeat(_sf, number=number, repeat=3)) / number
        per_life.append(t / n * 1e6)
        per_two_turns.append(t2 / n * 1e6)
        per_sf.append(sf * 1e6)
        ratios.append((t / n) / sf)
    progress("incident: cold start, cProfile split and micro-benchmarks")
    cold = _cold_life_ms(cfg.repetitions)
    split = _profile_split(max(100, n // 4))
    micro = _micro(5, 50 if cfg.quick else 200)
    figures = [
        _fig(
            "incident.us_per_life",
            "one incident's life (retry warning -> error -> historical), serialised, real ledger",
            "µs",
            per_life,
            note="8 events over 2 turns: prompt, api_retry, synthetic error, error result, ResultError, "
            "next prompt, real answer, success result; every send json.dumps(to_jsonrpc())",
        ),
        _fig(
            "incident.us_same_turns_without_incident",
            "the same two turns without the failure (prompt, answer, result x2)",
            "µs",
            per_two_turns,
        ),
        _fig("incident.session_failure_us", "construct one pydantic SessionFailure", "µs", per_sf),
        _fig("incident.ratio_to_session_failure", "incident life / one SessionFailure construction", "ratio", ratios),
        Figure(
            "incident.statemachine_share",
            f"share of {split['lives']} incident lives from a cold start spent inside python-statemachine (cProfile)",
            "ratio",
            split["share_of_total"]["machine_creation"] + split["share_of_total"]["transitions_send"],
            note=f"machine creation + send() of the {split['questions_asked_of_real_machines']} questions asked of "
            "real IncidentMachine instances (lifecycle.incident.MachineAnswers); every other transition is a kept "
            "answer; see details.incident.profile for the split",
        ),
        _fig(
            "incident.cold_life_ms",
            "the first incident life of a process (machine answers forgotten: every question asked of a real machine)",
            "ms",
            cold,
        ),
        Figure(
            "incident.us_machine_instance_per_incident",
            "what a real IncidentMachine instance per incident costs: creation + 3 transitions (no listener)",
            "µs",
            micro["machine_creation_plus_3_transitions_us"],
            note="best of 5 (details.incident.micro_us); the ledger asks such an instance only once per distinct "
            "question, which is what keeps this off the per-incident path",
        ),
    ]
    return figures, {"profile": split, "micro_us": micro}


# ====================================================================== replay transcript


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
#: One CLI start header per this many turns in the synthetic transcript.
TURNS_PER_CLI_START = 10
#: Usage-limit occurrences per 100,000 lines (the last one ends the transcript: it stays active).
USAGE_LIMITS_PER_100K = 5


def _entry_kind(d: Mapping[str, Any]) -> str:
    kind = str(d.get("type"))
    if kind == "attachment" and isinstance(d.get("attachment"), Mapping):
        return f"attachment:{d['attachment'].get('type')}"
    return kind


def _is_usage_limit_line(d: Mapping[str, Any]) -> bool:
    from ...conditions import is_usage_limit_text
    from ...history import history_entry

    entry = history_entry(d)
    return bool(
        entry is not None
        and entry.role == "assistant"
        and entry.synthetic
        and entry.top_level
        and is_usage_limit_text(entry.text)
    )


@dataclass(slots=True)
class _TranscriptPools:
    header: list[dict[str, Any]]
    turns: list[list[dict[str, Any]]]
    limit_turns: list[list[dict[str, Any]]]


def _transcript_pools(fixtures: Path) -> _TranscriptPools:
    """Split every recorded transcript into its CLI-start header and its prompt turns."""
    header: list[dict[str, Any]] = []
    turns: list[list[dict[str, Any]]] = []
    limit_turns: list[list[dict[str, Any]]] = []
    for path in sorted(fixtures.glob("*.transcript.jsonl")):
        rows = _read_jsonl(path)
        if path.name == "success.transcript.jsonl":
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
            if any(_is_usage_limit_line(d) for d in t):
                limit_turns.append(t)
            else:
                turns.append(t)
    if not header or not turns or not limit_turns:
        raise FileNotFoundError(f"the transcripts in {fixtures} lack a header, turns or usage-limit turns")
    return _TranscriptPools(header, turns, limit_turns)


@dataclass(frozen=True, slots=True)
class TranscriptInfo:
    path: Path
    lines: int
    bytes: int
    usage_limits: int
    cli_starts: int


def write_transcript(path: Path, n_lines: int, fixtures: Path, *, seed: int = 6) -> TranscriptInfo:
    """Write a synthetic ``n_lines``-line transcript made of the recorded transcript lines.

    A session is a sequence of prompt turns taken from the recordings (their own lines, in their
    own order), with a CLI-start header (the recorded tool definitions, listings, environment)
    every :data:`TURNS_PER_CLI_START` turns and :data:`USAGE_LIMITS_PER_100K` usage-limit turns per
    100,000 lines (at least one; the last one ends the file). Every line gets a fresh ``uuid``,
    ``parentUuid`` chains them and one ``sessionId`` is used throughout.
    """
    import orjson

    pools = _transcript_pools(fixtures)
    rng = random.Random(seed)
    session_id = _uuid(rng)
    n_limits = max(1, round(n_lines * USAGE_LIMITS_PER_100K / 100_000))
    limit_at = [n_lines * (k + 1) // n_limits for k in range(n_limits - 1)]
    written = size = limits = starts = turns = 0
    parent: str | None = None
    t0 = 1_796_216_678_000

    def emit(fh: Any, d: Mapping[str, Any]) -> None:
        nonlocal written, size, parent
        row = dict(d)
        if "uuid" in row:
            row["uuid"] = _uuid(rng)
        if "parentUuid" in row:
            row["parentUuid"] = parent
        if "sessionId" in row:
            row["sessionId"] = session_id
        if "timestamp" in row:
            ms = t0 + written * 997
            row["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"
        if "uuid" in row:
            parent = row["uuid"]
        data = orjson.dumps(row) + b"\n"
        fh.write(data)
        written += 1
        size += len(data)

    final_turn = pools.limit_turns[(n_limits - 1) % len(pools.limit_turns)]
    with path.open("wb") as fh:
        while written < n_lines - len(final_turn):
            if turns % TURNS_PER_CLI_START == 0:
                for d in pools.header:
                    emit(fh, d)
                starts += 1
            if limit_at and written >= limit_at[0]:
                limit_at.pop(0)
                turn = pools.limit_turns[limits % len(pools.limit_turns)]
                limits += 1
            else:
                turn = pools.turns[rng.randrange(len(pools.turns))]
            for d in turn:
                emit(fh, d)
            turns += 1
        # The last usage limit ends the transcript: it is the one a replay keeps active.
        for d in final_turn:
            emit(fh, d)
        limits += 1
    return TranscriptInfo(path, written, size, limits, starts)


def _orjson_parse_all(path: Path) -> int:
    import orjson

    n = 0
    loads = orjson.loads
    with path.open("rb") as fh:
        for line in fh:
            loads(line)
            n += 1
    return n


class _NullText(io.TextIOBase):
    """A text sink that discards everything (with a ``buffer`` that discards bytes too)."""

    def __init__(self) -> None:
        super().__init__()
        self.buffer = _NullBytes()

    def write(self, s: str) -> int:
        return len(s)

    def writable(self) -> bool:
        return True


class _NullBytes(io.RawIOBase):
    def write(self, b: Any) -> int:
        return len(b)

    def writable(self) -> bool:
        return True


def _module_available(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


_REPLAY_MODULE = "lifecycle.cli.replay"
_CHECK_MODULE = "lifecycle.tools.explorer"


def _replay_argv(path: Path) -> list[str]:
    return [str(path), "--json"]


def _replay_in_process(path: Path) -> tuple[int, str]:
    """``lifecycle replay PATH --json`` in this process, stdout to a null sink: (exit code, stdout tail)."""
    mod = importlib.import_module(_REPLAY_MODULE)
    sink = _NullText()
    with contextlib.redirect_stdout(sink):
        code = int(mod.cli_main(_replay_argv(path)))
    return code, ""


#: Appended to a child's code: report its own peak RSS. (``ru_maxrss`` from ``wait4`` is no use
#: here: Linux counts the forked parent's resident set in the child's maximum.)
_REPORT_HWM = "sys.stderr.write('\\n' + next(l for l in open('/proc/self/status') if l.startswith('VmHWM')))\n"


def _run_child(code: str, args: Sequence[str]) -> tuple[float, int, int | None]:
    """``python -c CODE ARGS`` with stdout to /dev/null: (wall seconds, exit code, its peak RSS in KiB)."""
    argv = [sys.executable, "-c", "import sys\n" + code + _REPORT_HWM + "sys.exit(rc)\n", *args]
    t0 = time.perf_counter()
    proc = subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=str(_repo_root()), check=False, text=True
    )
    wall = time.perf_counter() - t0
    peak: int | None = None
    for line in proc.stderr.splitlines():
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1])
    return wall, proc.returncode, peak


_BASELINE_CHILD = "import orjson\nfor line in open(sys.argv[1], 'rb'): orjson.loads(line)\nrc = 0\n"
#: ``python -m lifecycle replay FILE --json``, plus the peak-RSS report.
_REPLAY_CHILD = "from lifecycle.cli import main\nrc = main(['replay', *sys.argv[1:]])\n"


def _repo_root() -> Path:
    return Path(__file__).resolve().parents[3]


def _peak_tracemalloc(fn: Callable[[], object]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def bench_replay(cfg: BenchConfig, progress: Callable[[str], None]) -> tuple[list[Figure], dict[str, Any]]:
    figures: list[Figure] = []
    detail: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="lifecycle-bench-", dir=cfg.tmpdir) as tmp:
        infos: dict[str, TranscriptInfo] = {}
        for label, n in (("small", cfg.replay_small), ("large", cfg.replay_large)):
            t0 = time.perf_counter()
            info = write_transcript(Path(tmp) / f"transcript-{n}.jsonl", n, cfg.fixtures)
            progress(
                f"replay: wrote {info.lines} lines, {info.bytes / 1e6:.1f} MB, {info.usage_limits} usage limits "
                f"in {time.perf_counter() - t0:.1f}s"
            )
            infos[label] = info
            detail[label] = {
                "lines": info.lines,
                "bytes": info.bytes,
                "usage_limits": info.usage_limits,
                "cli_starts": info.cli_starts,
            }
        small, large = infos["small"], infos["large"]
        reps = cfg.replay_repetitions
        replay_available = _module_available(_REPLAY_MODULE)
        if replay_available:
            detail["validation"] = _validate_replay(infos)
        progress(
            f"replay: orjson baseline and lifecycle replay in process, interleaved, {reps} repetitions each"
        )
        base: dict[str, list[float]] = {"small": [], "large": []}
        life: dict[str, list[float]] = {"small": [], "large": []}
        for _ in range(reps):
            for label, info in infos.items():
                # Each lifecycle run right after its baseline: a burst of load hits both of a pair.
                base[label].append(_timed(lambda info=info: _orjson_parse_all(info.path)))  # type: ignore[misc]
                if replay_available:
                    t = _timed(lambda info=info: _check_code(_replay_in_process(info.path)[0]))  # type: ignore[misc]
                    life[label].append(t)
        b_small = [t / small.lines * 1e6 for t in base["small"]]
        b_large = [t / large.lines * 1e6 for t in base["large"]]
        figures.append(
            _fig("replay.baseline_s", f"replay baseline: orjson.loads of all {large.lines} lines", "s", base["large"])
        )
        figures.append(
            _fig(
                "replay.baseline_mb_per_s",
                "replay baseline throughput",
                "MB/s",
                [large.bytes / 1e6 / t for t in base["large"]],
            )
        )
        figures.append(
            _fig(
                "replay.baseline_linearity",
                f"replay baseline per-line time, {large.lines} / {small.lines} lines",
                "ratio",
                [a / b for a, b in zip(b_large, b_small, strict=True)],
            )
        )
        for label, info in infos.items():
            _, _, peak_kib = _run_child(_BASELINE_CHILD, [str(info.path)])
            detail[label]["baseline_subprocess_peak_rss_kib"] = peak_kib
        detail["baseline_tracemalloc_peak_bytes"] = _peak_tracemalloc(lambda: _orjson_parse_all(large.path))

        if not replay_available:
            reason = "lifecycle/replay_cmd.py does not exist yet (being written in another issue)"
            for fid, label, unit, target in (
                ("replay.ratio", "lifecycle replay --json (in process) / orjson baseline", "ratio", ("<=", 0.5)),
                ("replay.subprocess_ratio", "lifecycle replay --json as a subprocess / orjson baseline", "ratio", None),
                ("replay.linearity", "lifecycle replay per-line time, 10x lines", "ratio", None),
                ("replay.peak_rss_large_kib", "lifecycle replay subprocess peak RSS (large)", "KiB", None),
            ):
                figures.append(_unavailable(fid, label, unit, reason, target=target))
            return figures, detail

        progress("replay: lifecycle replay as a subprocess")
        ratios = [t / b for t, b in zip(life["large"], base["large"], strict=True)]
        l_small = [t / small.lines * 1e6 for t in life["small"]]
        l_large = [t / large.lines * 1e6 for t in life["large"]]
        figures.append(
            _fig(
                "replay.ratio",
                f"lifecycle replay --json (in process, stdout to a null sink) / orjson baseline, {large.lines} lines",
                "ratio",
                ratios,
                target=("<=", 0.5),
            )
        )
        figures.append(_fig("replay.lifecycle_s", "lifecycle replay --json in process (large)", "s", life["large"]))
        figures.append(
            _fig(
                "replay.linearity",
                f"lifecycle replay per-line time, {large.lines} / {small.lines} lines",
                "ratio",
                [a / b for a, b in zip(l_large, l_small, strict=True)],
            )
        )
        sub: list[float] = []
        rss: dict[str, int] = {}
        for i in range(max(1, reps // 2 + 1)):
            for label, info in infos.items():
                wall, rc, peak = _run_child(_REPLAY_CHILD, _replay_argv(info.path))
                _check_code(rc)
                rss[label] = max(rss.get(label, 0), peak or 0)
                if label == "large":
                    sub.append(wall / base["large"][min(i, len(base["large"]) - 1)])
        figures.append(
            _fig(
                "replay.subprocess_ratio",
                "lifecycle replay --json as a subprocess (wall, incl. interpreter start) / orjson baseline",
                "ratio",
                sub,
            )
        )
        figures.append(
            Figure("replay.peak_rss_large_kib", "replay subprocess peak RSS (large)", "KiB", float(rss["large"]))
        )
        figures.append(
            Figure("replay.peak_rss_small_kib", "replay subprocess peak RSS (small)", "KiB", float(rss["small"]))
        )
        detail["replay_tracemalloc_peak_bytes"] = {
            label: _peak_tracemalloc(lambda info=info: _replay_in_process(info.path))  # type: ignore[misc]
            for label, info in infos.items()
        }
    return figures, detail


def _validate_replay(infos: Mapping[str, TranscriptInfo]) -> dict[str, Any]:
    """Untimed: the replay shows one record per usage limit written, and the last one stays active."""
    mod = importlib.import_module(_REPLAY_MODULE)
    out: dict[str, Any] = {}
    for label, info in infos.items():
        view = mod.replay_transcript(info.path)
        data = view.to_json()
        out[label] = {"records": len(data["records"]), "active": len(data["active"]), "lines": data["lines"]}
        if len(data["records"]) != info.usage_limits or len(data["active"]) != 1 or data["lines"] != info.lines:
            raise RuntimeError(
                f"lifecycle replay of {info.path.name}: {len(data['records'])} records / {len(data['active'])} "
                f"active over {data['lines']} lines; the transcript holds {info.usage_limits} usage limits "
                f"(the last one active) over {info.lines} lines"
            )
    return out


def _check_code(code: int) -> None:
    if code != 0:
        raise RuntimeError(f"lifecycle replay exited {code}")


# ====================================================================== memory


def _recovered_life(turn: str) -> list[Event]:
    """prompt, api_retry warning, real answer, success: one recovered incident."""
    return [
        PromptStarted(turn_id=turn),
        _RETRY,
        Assistant(text=_ANSWER, model="claude-opus-5-5", uuid=turn + "-a"),
        Result(subtype="success", is_error=False, result=_ANSWER, stop_reason="end_turn", terminal_reason="completed"),
    ]


def _lives_iter(start: int, stop: int) -> Iterator[list[Event]]:
    for i in range(start, stop):
        yield _recovered_life(f"t{i:08d}")


def _run_iter(ledger: SessionLedger, lives: Iterable[Sequence[Event]]) -> None:
    process = ledger.process
    for life in lives:
        for ev in life:
            process(ev, _noop)


def bench_memory(cfg: BenchConfig, progress: Callable[[str], None]) -> tuple[list[Figure], dict[str, Any]]:
    few, many = cfg.memory_few, cfg.memory_many
    # Warm every cache (python-statemachine class registries, pydantic validators) first.
    warm = SessionLedger("warm", negotiated=True, epoch="w")
    _run_iter(warm, _lives_iter(0, 50))
    # Per-incident cost, untraced.
    probe = SessionLedger("probe", negotiated=True, epoch="p")
    n_probe = 200 if cfg.quick else 1000
    t = _timed(lambda: _run_iter(probe, _lives_iter(0, n_probe)))
    per_life = t / n_probe
    progress(
        f"memory: {per_life * 1e6:.0f} µs per recovered incident -> 1,000,000 would take "
        f"{per_life * 1e6 / 60:.1f} min; measuring {few} vs {many}"
    )
    gc.collect()
    tracemalloc.start()
    try:
        gc.collect()
        m0 = tracemalloc.get_traced_memory()[0]
        ledger = SessionLedger("mem", negotiated=True, epoch="m")
        _run_iter(ledger, _lives_iter(0, few))
        gc.collect()
        m_few = tracemalloc.get_traced_memory()[0] - m0
        t1 = time.perf_counter()
        _run_iter(ledger, _lives_iter(few, many))
        traced_s = time.perf_counter() - t1
        gc.collect()
        m_many = tracemalloc.get_traced_memory()[0] - m0
        assert not ledger.active
    finally:
        tracemalloc.stop()
    figures = [
        Figure(
            "memory.ledger_ratio",
            f"ledger size after {many} / after {few} recovered incidents (tracemalloc)",
            "ratio",
            m_many / m_few,
            target=("<=", 2.0),
            note=(
                f"{many:,} incidents recovered under tracemalloc in {traced_s:.0f} s"
                + ("" if many >= 1_000_000 else "; the target is stated for 1,000,000 (--incidents 1000000)")
            ),
        ),
        Figure(f"memory.ledger_bytes_after_{few}", f"ledger size after {few} recovered incidents", "B", float(m_few)),
        Figure(
            f"memory.ledger_bytes_after_{many}", f"ledger size after {many} recovered incidents", "B", float(m_many)
        ),
        Figure(
            "memory.us_per_recovered_incident",
            "prompt + api_retry warning + real answer + success, untraced",
            "µs",
            per_life * 1e6,
            note=f"1,000,000 incidents would take {per_life * 1e6 / 60:.1f} min",
        ),
    ]
    detail: dict[str, Any] = {"traced_seconds": traced_s, "extrapolated_1m_minutes": per_life * 1e6 / 60}

    n = cfg.idle_sessions
    progress(f"memory: {n} idle sessions")
    observer = _NullObserver()
    per_session: dict[str, float] = {}
    for variant in ("fresh", "after_one_turn", "after_one_turn_with_observer"):
        gc.collect()
        tracemalloc.start()
        try:
            gc.collect()
            base = tracemalloc.get_traced_memory()[0]
            sessions = []
            for i in range(n):
                sid = f"{uuid.UUID(int=i, version=4)}"
                led = SessionLedger(
                    sid,
                    negotiated=True,
                    epoch=f"e{i}",
                    observer=observer if variant.endswith("observer") else None,
                )
                if variant != "fresh":
                    _run_iter(
                        led,
                        [
                            [
                                PromptStarted(turn_id=f"{sid}-t1"),
                                Assistant(text=_ANSWER, model="claude-opus-5-5"),
                                Result(subtype="success", is_error=False, result=_ANSWER, stop_reason="end_turn"),
                            ]
                        ],
                    )
                sessions.append(led)
            gc.collect()
            used = tracemalloc.get_traced_memory()[0] - base
        finally:
            tracemalloc.stop()
        per_session[variant] = used / n
        del sessions
    figures.append(
        Figure(
            "memory.idle_session_bytes",
            f"{n} idle sessions: bytes per session (one completed turn, observer attached)",
            "B",
            per_session["after_one_turn_with_observer"],
            target=("<=", 4096.0),
            note="includes the session id and epoch strings and the list holding the sessions",
        )
    )
    figures.append(Figure("memory.fresh_session_bytes", "bytes per fresh SessionLedger", "B", per_session["fresh"]))
    detail["idle_per_session_bytes"] = per_session
    return figures, detail


# ====================================================================== explorer


def bench_explorer(cfg: BenchConfig, progress: Callable[[str], None]) -> tuple[list[Figure], dict[str, Any]]:
    """States per second (in process, a capped exploration) and the full space's total time."""
    rate_id, rate_label = "explorer.states_per_s", "lifecycle check: abstract states explored per second"
    total_id, total_label = "explorer.total_s", "lifecycle check --json: total wall time for the full space"
    if not _module_available(_CHECK_MODULE):
        reason = "lifecycle/check.py does not exist yet (being written in another issue)"
        return [
            _unavailable(rate_id, rate_label, "states/s", reason),
            _unavailable(total_id, total_label, "s", reason),
        ], {}
    check = importlib.import_module(_CHECK_MODULE)
    cap = cfg.explorer_states
    runs = 1 if cfg.quick else 3
    progress(f"explorer: {runs} capped explorations of {cap} states, in process")
    rates: list[float] = []
    detail: dict[str, Any] = {"cap_states": cap}
    for _ in range(runs):
        explorer = check.Explorer(check.Bounds(), max_states=cap)
        gc.collect()
        t0 = time.perf_counter()
        result = explorer.run()
        wall = time.perf_counter() - t0
        rates.append(int(result.states) / wall)
        detail["capped_run"] = {"states": int(result.states), "edges": int(result.edges), "wall_s": wall}
    figures = [_fig(rate_id, f"{rate_label} (default bounds, first {cap} states)", "states/s", rates)]
    if cfg.explorer_timeout <= 0:
        figures.append(_unavailable(total_id, total_label, "s", "not run with --quick (the full space takes minutes)"))
        return figures, detail
    progress(f"explorer: lifecycle check --json as a subprocess (timeout {cfg.explorer_timeout:.0f} s)")
    argv = [sys.executable, "-m", "lifecycle", "check", "--json"]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, cwd=str(_repo_root()), check=False, timeout=cfg.explorer_timeout
        )
    except subprocess.TimeoutExpired:
        figures.append(
            _unavailable(
                total_id,
                total_label,
                "s",
                f"did not finish within {cfg.explorer_timeout:.0f} s (--explorer-timeout); at the measured rate "
                f"the space holds more than {statistics.median(rates) * cfg.explorer_timeout:,.0f} states",
            )
        )
        return figures, detail
    wall = time.perf_counter() - t0
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        report = {}
    detail["full_run"] = {
        "exit_code": proc.returncode,
        **{
            k: report.get(k)
            for k in ("ok", "complete", "states", "edges", "depth", "seconds", "beyond_bound", "unreached")
        },
    }
    if not isinstance(report.get("states"), int):
        figures.append(
            _unavailable(
                total_id, total_label, "s", f"lifecycle check --json exited {proc.returncode} without a report"
            )
        )
        return figures, detail
    verdict = (
        f"exit {proc.returncode}: ok={report.get('ok')}, complete={report.get('complete')}, "
        f"violations={len(report.get('violations') or [])}, unreached targets={report.get('unreached') or []}"
    )
    figures.append(Figure(total_id, f"{total_label} ({report['states']:,} states)", "s", wall, note=verdict))
    figures.append(
        Figure(
            "explorer.full_states_per_s",
            "lifecycle check --json: states per second over the full run",
            "states/s",
            report["states"] / wall,
        )
    )
    return figures, detail


# ====================================================================== driver


SECTIONS: tuple[
    tuple[str, Callable[[BenchConfig, Callable[[str], None]], tuple[list[Figure], dict[str, Any]]]], ...
] = (
    ("hot_path", bench_hot_path),
    ("incident", bench_incident),
    ("replay", bench_replay),
    ("memory", bench_memory),
    ("explorer", bench_explorer),
)


def _machine() -> dict[str, Any]:
    try:
        load = list(os.getloadavg())
    except OSError:  # pragma: no cover - not on Linux
        load = []
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg": load,
    }


def run_bench(cfg: BenchConfig, *, sections: Sequence[str] | None = None, progress: bool = True) -> dict[str, Any]:
    """Run the selected sections; the result is what ``--json`` prints."""
    say = _Progress(progress)
    t0 = time.perf_counter()
    machine = _machine()
    figures: list[Figure] = []
    details: dict[str, Any] = {}
    for name, fn in SECTIONS:
        if sections is not None and name not in sections:
            continue
        figs, detail = fn(cfg, say)
        figures.extend(figs)
        details[name] = detail
    machine["loadavg_end"] = _machine()["loadavg"]
    targets = [f for f in figures if f.target is not None]
    return {
        "lifecycle_bench": 1,
        "mode": "quick" if cfg.quick else "full",
        "command": "lifecycle bench" + (" --quick" if cfg.quick else ""),
        "machine": machine,
        "elapsed_s": time.perf_counter() - t0,
        "figures": [f.to_json() for f in figures],
        "targets": {
            "enforced": not cfg.quick,
            "all_met": all(f.met for f in targets),
            "missed": [f.id for f in targets if not f.met],
        },
        "details": details,
    }


def _fmt(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    if abs(value) >= 0.1:
        return f"{value:.3f}"
    return f"{value:.4f}"


def _load(values: Sequence[float]) -> str:
    return " / ".join(f"{v:.2f}" for v in values) or "n/a"


def render_table(result: Mapping[str, Any]) -> str:
    """The human table (Markdown) of a :func:`run_bench` result."""
    rows = [
        "| figure | value | unit | spread (min – max) | target | met |",
        "| --- | ---: | --- | --- | --- | --- |",
    ]
    for f in result["figures"]:
        if f["available"]:
            value = _fmt(f["value"])
            s = f.get("spread")
            spread = f"{_fmt(s['min'])} – {_fmt(s['max'])} (n={f['repetitions']})" if s else ""
        else:
            value, spread = "not available", f["reason"]
        target = f.get("target")
        tgt = f"{target['op']} {_fmt(target['limit'])}" if target else ""
        met = "" if not target else ("yes" if target["met"] else "**no**")
        rows.append(f"| `{f['id']}` {f['label']} | {value} | {f['unit']} | {spread} | {tgt} | {met} |")
    m = result["machine"]
    rows.append("")
    rows.append(
        f"{result['command']}: {result['mode']} run, {result['elapsed_s']:.0f} s, Python {m['python']}, "
        f"{m['cpus']} CPUs, load average {_load(m['loadavg'])} -> {_load(m['loadavg_end'])}"
    )
    return "\n".join(rows)


def cli_main(argv: list[str]) -> int:
    """``lifecycle bench [--quick] [--json] [--check] [--only SECTION ...]``."""
    parser = argparse.ArgumentParser(prog="lifecycle bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (CI), targets not enforced")
    parser.add_argument("--json", action="store_true", help="print the machine-readable result only")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed (not with --quick)")
    parser.add_argument("--only", nargs="+", choices=[s for s, _ in SECTIONS], help="run only these sections")
    parser.add_argument("--fixtures", type=Path, default=None, help=f"the {FIXTURE_SET} fixtures folder")
    parser.add_argument("--repetitions", type=int, default=None, help="timing repetitions per figure")
    parser.add_argument("--incidents", type=int, default=None, help="recovered incidents for memory.ledger_ratio")
    parser.add_argument("--replay-lines", type=int, default=None, help="lines of the large replay transcript")
    parser.add_argument("--explorer-timeout", type=float, default=None, help="seconds for the full lifecycle check")
    parser.add_argument("--tmpdir", type=Path, default=None, help="where the replay transcripts are written")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    fixtures = args.fixtures or default_fixtures()
    if not fixtures.is_dir():
        print(f"lifecycle bench: fixtures folder not found: {fixtures}", file=sys.stderr)
        return 2
    cfg = (BenchConfig.quick_config if args.quick else BenchConfig.full_config)(fixtures, args.tmpdir)
    overrides: dict[str, Any] = {}
    if args.repetitions is not None:
        overrides["repetitions"] = overrides["replay_repetitions"] = max(2, args.repetitions)
    if args.incidents is not None:
        overrides["memory_many"] = max(cfg.memory_few * 2, args.incidents)
    if args.replay_lines is not None:
        overrides["replay_large"] = max(100, args.replay_lines)
        overrides["replay_small"] = max(10, args.replay_lines // 10)
    if args.explorer_timeout is not None:
        overrides["explorer_timeout"] = args.explorer_timeout
    if overrides:
        cfg = replace(cfg, **overrides)
    result = run_bench(cfg, sections=args.only, progress=not args.quiet)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print(render_table(result))
    code = exit_code(result, check=args.check, quick=cfg.quick)
    if args.check and result["targets"]["missed"]:
        verdict = "not enforced with --quick" if cfg.quick else "--check fails"
        print(f"lifecycle bench: targets missed ({verdict}): {', '.join(result['targets']['missed'])}", file=sys.stderr)
    return code


def exit_code(result: Mapping[str, Any], *, check: bool, quick: bool) -> int:
    """1 when ``--check`` is given, the run is not ``--quick`` and a target was missed (or unmeasured)."""
    return 1 if check and not quick and result["targets"]["missed"] else 0
