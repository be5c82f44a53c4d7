"""``workshop bench``: what the lifecycle costs, as ratios against baselines measured in the same run.

Every figure is measured on this machine in this process run, next to a baseline that does work the
adapter does anyway (parsing the line it received), so the ratios survive a slower or faster
machine. Each timing is repeated; the figure is the median and the spread (min, max, quartiles) is
reported beside it. Nothing here is asserted in unit tests: ``--check`` exits non-zero when a target
is missed (or its figure could not be measured); ``--quick`` uses small sizes and enforces nothing.

Sections (ids of the figures in the JSON output), one module each:

``hot_path`` (:mod:`.hot_path`)
    Stream-json lines go through :func:`lifecycle.claude.from_stream_json` and
    :meth:`SessionLedger.process` with a no-op ``deliver``. Baseline: ``json.loads`` of the same lines.
    ``hot_path.ratio`` (the target) uses the realistic mix (:class:`RealisticMix`,
    :data:`REALISTIC_MIX`): one ``ClaudeSDKClient`` session of turns with long streamed answers, tool
    rounds and a few incidents per 10,000 lines, built from the recorded ``*.sdk.jsonl`` shapes.
    ``hot_path.ratio_failure_dense`` (no target) replays the recordings as whole tiny turns with one
    failing turn in ~20 (:data:`FAILURE_DENSE_MIX`), to show what incidents cost.
``incident`` (:mod:`.incident`)
    One incident's full life (retry warning -> terminal error -> historical) through a real ledger,
    each delivered message serialised with ``json.dumps(msg.to_jsonrpc())``; ratio to building one
    :class:`~lifecycle.wire.SessionFailure`; where python-statemachine's time goes (cProfile, from a cold
    start); the first life of a process; what a real machine instance per incident would cost.
``replay`` (:mod:`.replay`)
    A synthetic transcript made of the recorded ``*.transcript.jsonl`` lines (:mod:`.transcript`).
    Baseline: ``orjson`` parsing every line. ``lifecycle replay --json`` in process and as a
    subprocess, linearity 10x lines, peak memory.
``memory`` (:mod:`.memory`)
    Ledger size (tracemalloc after ``gc.collect()``) after few vs many recovered incidents, and the
    memory of many idle sessions.
``explorer`` (:mod:`.explorer`)
    ``workshop check``: states per second and total time.
``imports`` (:mod:`.imports`)
    ``import lifecycle`` in fresh interpreters (target 0.1 s), beside ``from pydantic import
    BaseModel`` alone, and what the first turn and the first record add.
``peer`` (:mod:`.peer`)
    ``lifecycle acp`` against the reference TypeScript adapter, spawned side by side.

Machine answers: a ledger's incidents move by a :class:`~lifecycle.answers.MachineAnswers`, which
asks a real ``IncidentMachine`` each distinct question once. The steady-state figures give the
ledgers of a section one shared, warmed ``MachineAnswers``, as an agent's sessions share theirs; a
*cold* figure (``incident.cold_life_ms``, ``hot_path.ratio_cold_answers``, the incident profile) is
a ledger with fresh answers.

Inputs: built from recorded Claude Code CLI 2.1.337 runs. The package ships what the benchmark reads
of them (:mod:`.inputs`, derived from ``tests/fixtures/claude-cli-2.1.337`` and checked against it by
``tests/test_bench.py``), so ``workshop bench`` needs no recordings folder; ``--fixtures DIR``
builds the inputs from another recording set. Configuration and figures: :mod:`.config`; the
mixes: :mod:`.mixes`; running, rendering and the command line: :mod:`.driver`.

Run ``workshop bench --help`` for the options; docs/performance.md has the measured figures.
"""

from __future__ import annotations

from .config import BenchConfig, Figure
from .driver import SECTIONS, cli_main, exit_code, render_table, run_bench
from .inputs import (
    FIXTURE_SET,
    Recordings,
    TranscriptPools,
    derive_data,
    load_recordings,
    sdk_record_to_stream_json,
    shipped_data,
    shipped_recordings,
)
from .mixes import (
    FAILURE_DENSE_FAILURES_PER_CYCLE,
    FAILURE_DENSE_MIX,
    REALISTIC_MIX,
    HotPathSession,
    RealisticMix,
    build_failure_dense_session,
    build_realistic_session,
)
from .transcript import TranscriptInfo, write_transcript

__all__ = [
    "FAILURE_DENSE_FAILURES_PER_CYCLE",
    "FAILURE_DENSE_MIX",
    "FIXTURE_SET",
    "REALISTIC_MIX",
    "SECTIONS",
    "BenchConfig",
    "Figure",
    "HotPathSession",
    "RealisticMix",
    "Recordings",
    "TranscriptInfo",
    "TranscriptPools",
    "build_failure_dense_session",
    "build_realistic_session",
    "cli_main",
    "derive_data",
    "exit_code",
    "load_recordings",
    "render_table",
    "run_bench",
    "sdk_record_to_stream_json",
    "shipped_data",
    "shipped_recordings",
    "write_transcript",
]
