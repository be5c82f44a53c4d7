"""The hot path's inputs: recorded scenarios as stream-json turns, the failure-dense and the realistic mix.

A hot-path session (:class:`HotPathSession`) is the items an adapter sees in order: stream-json
lines (dicts) and the events only the adapter makes (``PromptStarted``, ``QueryError``). The
failure-dense mix (:data:`FAILURE_DENSE_MIX`) replays the recorded ``query()`` runs whole; the
realistic mix (:class:`RealisticMix`, :data:`REALISTIC_MIX`, the target figure's input) writes one
``ClaudeSDKClient`` session of long streamed turns out of the recorded line shapes.
"""

from __future__ import annotations

import json
import math
import random
import statistics
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lifecycle.events import Event, PromptStarted, QueryError

from .inputs import Recordings, load_recordings, sdk_record_to_stream_json

__all__ = [
    "FAILURE_DENSE_FAILURES_PER_CYCLE",
    "FAILURE_DENSE_MIX",
    "REALISTIC_MIX",
    "HotPathSession",
    "RealisticMix",
    "build_failure_dense_session",
    "build_realistic_session",
    "line_kind",
    "random_uuid",
]


def _split(text: str, parts: int) -> list[str]:
    if not text:
        return []
    size = max(1, math.ceil(len(text) / parts))
    return [text[i : i + size] for i in range(0, len(text), size)]


def random_uuid(rng: random.Random) -> str:
    """A version-4 UUID drawn from ``rng`` (so every generated input is reproducible)."""
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
                "uuid": random_uuid(self._rng),
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
    session_id = session_id or random_uuid(rng)
    items: list[dict[str, Any] | Event] = [PromptStarted(turn_id=random_uuid(rng))]
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
            line["uuid"] = random_uuid(rng)
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


def _status_line(session_id: str, rng: random.Random) -> dict[str, Any]:
    """The ``system/status`` line the CLI prints before each API request (``ClaudeSDKClient``, partial
    messages on; not in the ``query()`` recordings). Shape as the bundled CLI 2.1.332 printed it."""
    return {
        "type": "system",
        "subtype": "status",
        "status": "requesting",
        "session_id": session_id,
        "uuid": random_uuid(rng),
    }


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


def line_kind(d: Mapping[str, Any]) -> str:
    """A stream-json line's kind as the report counts it (``system/init``, ``assistant/synthetic``, ...)."""
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
        by_type=dict(Counter(line_kind(d) for d in dicts).most_common()),
        stats=stats,
    )


# ---------------------------------------------------------------------- the failure-dense mix

#: The failure-dense mix (``hot_path.ratio_failure_dense``, no target): the recorded scenarios replayed
#: as whole ``query()`` turns with the fake API's tiny answers (3 text deltas). Per cycle of 20 turns:
#: 11 plain answers, 7 answers cut by max_tokens and continued (answer, user frame, answer), 1
#: ``api_retry`` that then succeeds, and :data:`FAILURE_DENSE_FAILURES_PER_CYCLE` failing turn
#: (rotating through every failing recording). Every turn keeps its recording's ``system/init``.
FAILURE_DENSE_MIX: tuple[tuple[str, int], ...] = (("success", 11), ("max_tokens_once", 7), ("retry_then_success", 1))
FAILURE_DENSE_FAILURES_PER_CYCLE = 1


def build_failure_dense_session(
    recordings: Path | Recordings | None, min_lines: int, *, seed: int = 6
) -> HotPathSession:
    """The failure-dense mix (:data:`FAILURE_DENSE_MIX`) with at least ``min_lines`` stream-json lines.

    ``recordings``: a recordings folder, :class:`~workshop.bench.inputs.Recordings`, or None
    for the inputs shipped with the package.
    """
    rng = random.Random(seed)
    rec = load_recordings(recordings)
    scenarios, failing = rec.scenarios, rec.failing
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
    raise FileNotFoundError(f"the recordings lack a {cls} {kind} in {name}.sdk.jsonl")


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
        d["uuid"] = random_uuid(self.rng)
        d["session_id"] = self.sid
        return d

    def _frame(self, event: dict[str, Any], msg_id: str, **extra: Any) -> None:
        d: dict[str, Any] = {
            "type": "stream_event",
            "event": event,
            "session_id": self.sid,
            "parent_tool_use_id": None,
            "uuid": random_uuid(self.rng),
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
        self.items.append(PromptStarted(turn_id=random_uuid(self.rng)))
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
    recordings: Path | Recordings | None, min_lines: int, *, mix: RealisticMix = REALISTIC_MIX, seed: int = 6
) -> HotPathSession:
    """One ``ClaudeSDKClient`` session of realistic turns with at least ``min_lines`` stream-json lines.

    See :class:`RealisticMix` for what the turns contain and where each shape comes from. Incident
    turns are placed at evenly spaced line positions; failing turns rotate through the failing
    recordings in name order. ``recordings`` as for :func:`build_failure_dense_session`.
    """
    rng = random.Random(seed)
    rec = load_recordings(recordings)
    scenarios, failing = rec.scenarios, rec.failing
    writer = _RealisticWriter(_templates(scenarios), mix, rng, random_uuid(rng))
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
