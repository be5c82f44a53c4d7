"""The replay section's input: a synthetic transcript of any length made of the recorded transcript lines."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .inputs import Recordings, load_recordings
from .mixes import random_uuid

__all__ = ["TURNS_PER_CLI_START", "USAGE_LIMITS_PER_100K", "TranscriptInfo", "write_transcript"]

#: One CLI start header per this many turns in the synthetic transcript.
TURNS_PER_CLI_START = 10
#: Usage-limit occurrences per 100,000 lines (the last one ends the transcript: it stays active).
USAGE_LIMITS_PER_100K = 5


@dataclass(frozen=True, slots=True)
class TranscriptInfo:
    """What :func:`write_transcript` wrote."""

    path: Path
    lines: int
    bytes: int
    usage_limits: int
    cli_starts: int


def write_transcript(
    path: Path, n_lines: int, recordings: Path | Recordings | None, *, seed: int = 6
) -> TranscriptInfo:
    """Write a synthetic ``n_lines``-line transcript made of the recorded transcript lines.

    A session is a sequence of prompt turns taken from the recordings (their own lines, in their
    own order), with a CLI-start header (the recorded tool definitions, listings, environment)
    every :data:`TURNS_PER_CLI_START` turns and :data:`USAGE_LIMITS_PER_100K` usage-limit turns per
    100,000 lines (at least one; the last one ends the file). Every line gets a fresh ``uuid``,
    ``parentUuid`` chains them and one ``sessionId`` is used throughout. ``recordings``: a
    recordings folder, :class:`~workshop.bench.inputs.Recordings`, or None for the inputs
    shipped with the package. Needs ``orjson`` (``pip install -e '.[bench]'``).
    """
    import orjson

    pools = load_recordings(recordings).pools
    rng = random.Random(seed)
    session_id = random_uuid(rng)
    n_limits = max(1, round(n_lines * USAGE_LIMITS_PER_100K / 100_000))
    limit_at = [n_lines * (k + 1) // n_limits for k in range(n_limits - 1)]
    written = size = limits = starts = turns = 0
    parent: str | None = None
    t0 = 1_796_216_678_000

    def emit(fh: Any, d: Mapping[str, Any]) -> None:
        nonlocal written, size, parent
        row = dict(d)
        if "uuid" in row:
            row["uuid"] = random_uuid(rng)
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
