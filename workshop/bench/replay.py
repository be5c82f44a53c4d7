"""Section ``replay``: ``lifecycle replay --json`` over a synthetic transcript, against ``orjson`` parsing it.

The transcripts are written by :func:`~workshop.bench.transcript.write_transcript` into a
temporary folder (``--tmpdir``), which is also the working folder of every child process: nothing
here depends on a repository checkout. Needs ``orjson`` (``pip install -e '.[bench]'``);
without it every figure of the section says so.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .config import BenchConfig, Figure, Say, SectionResult, child_env, measured, module_available, timed, unavailable
from .inputs import load_recordings
from .transcript import TranscriptInfo, write_transcript

__all__ = ["bench_replay"]

_REPLAY_MODULE = "lifecycle.cli.replay"


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


def _run_child(code: str, args: Sequence[str], cwd: Path) -> tuple[float, int, int | None]:
    """``python -c CODE ARGS`` in ``cwd`` with stdout to /dev/null: (wall seconds, exit code, its peak RSS in KiB).

    The child imports the ``lifecycle`` this process runs (:func:`~workshop.bench.config.child_env`).
    """
    argv = [sys.executable, "-c", "import sys\n" + code + _REPORT_HWM + "sys.exit(rc)\n", *args]
    env = child_env()
    t0 = time.perf_counter()
    proc = subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=str(cwd), env=env, check=False, text=True
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


def _peak_tracemalloc(fn: Callable[[], object]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


#: Every figure of the section: (id, label, unit, target), for when none can be measured.
_FIGURES: tuple[tuple[str, str, str, tuple[str, float] | None], ...] = (
    ("replay.baseline_s", "replay baseline: orjson.loads of every line", "s", None),
    ("replay.baseline_mb_per_s", "replay baseline throughput", "MB/s", None),
    ("replay.baseline_linearity", "replay baseline per-line time, 10x lines", "ratio", None),
    ("replay.ratio", "lifecycle replay --json (in process) / orjson baseline", "ratio", ("<=", 0.5)),
    ("replay.lifecycle_s", "lifecycle replay --json in process (large)", "s", None),
    ("replay.linearity", "lifecycle replay per-line time, 10x lines", "ratio", None),
    ("replay.subprocess_ratio", "lifecycle replay --json as a subprocess / orjson baseline", "ratio", None),
    ("replay.peak_rss_large_kib", "replay subprocess peak RSS (large)", "KiB", None),
    ("replay.peak_rss_small_kib", "replay subprocess peak RSS (small)", "KiB", None),
)


def bench_replay(cfg: BenchConfig, progress: Say) -> SectionResult:
    if not module_available("orjson"):
        reason = (
            "orjson is not installed (pip install -e '.[bench]'): it writes the transcripts and is the baseline"
        )
        return [unavailable(i, label, unit, reason, target=t) for i, label, unit, t in _FIGURES], {}
    figures: list[Figure] = []
    detail: dict[str, Any] = {}
    recordings = load_recordings(cfg.recordings)
    with tempfile.TemporaryDirectory(prefix="lifecycle-bench-", dir=cfg.tmpdir) as tmp_name:
        tmp = Path(tmp_name)
        infos: dict[str, TranscriptInfo] = {}
        for label, n in (("small", cfg.replay_small), ("large", cfg.replay_large)):
            t0 = time.perf_counter()
            info = write_transcript(tmp / f"transcript-{n}.jsonl", n, recordings)
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
        replay_available = module_available(_REPLAY_MODULE)
        if replay_available:
            detail["validation"] = _validate_replay(infos)
        progress(f"replay: orjson baseline and lifecycle replay in process, interleaved, {reps} repetitions each")
        base: dict[str, list[float]] = {"small": [], "large": []}
        life: dict[str, list[float]] = {"small": [], "large": []}
        for _ in range(reps):
            for label, info in infos.items():
                # Each lifecycle run right after its baseline: a burst of load hits both of a pair.
                base[label].append(timed(lambda info=info: _orjson_parse_all(info.path)))  # type: ignore[misc]
                if replay_available:
                    t = timed(lambda info=info: _check_code(_replay_in_process(info.path)[0]))  # type: ignore[misc]
                    life[label].append(t)
        b_small = [t / small.lines * 1e6 for t in base["small"]]
        b_large = [t / large.lines * 1e6 for t in base["large"]]
        figures.append(
            measured(
                "replay.baseline_s", f"replay baseline: orjson.loads of all {large.lines} lines", "s", base["large"]
            )
        )
        figures.append(
            measured(
                "replay.baseline_mb_per_s",
                "replay baseline throughput",
                "MB/s",
                [large.bytes / 1e6 / t for t in base["large"]],
            )
        )
        figures.append(
            measured(
                "replay.baseline_linearity",
                f"replay baseline per-line time, {large.lines} / {small.lines} lines",
                "ratio",
                [a / b for a, b in zip(b_large, b_small, strict=True)],
            )
        )
        for label, info in infos.items():
            _, _, peak_kib = _run_child(_BASELINE_CHILD, [str(info.path)], tmp)
            detail[label]["baseline_subprocess_peak_rss_kib"] = peak_kib
        detail["baseline_tracemalloc_peak_bytes"] = _peak_tracemalloc(lambda: _orjson_parse_all(large.path))

        if not replay_available:
            reason = f"{_REPLAY_MODULE} is not importable"
            for fid, label, unit, target in _FIGURES:
                if not fid.startswith("replay.baseline_"):
                    figures.append(unavailable(fid, label, unit, reason, target=target))
            return figures, detail

        progress("replay: lifecycle replay as a subprocess")
        ratios = [t / b for t, b in zip(life["large"], base["large"], strict=True)]
        l_small = [t / small.lines * 1e6 for t in life["small"]]
        l_large = [t / large.lines * 1e6 for t in life["large"]]
        figures.append(
            measured(
                "replay.ratio",
                f"lifecycle replay --json (in process, stdout to a null sink) / orjson baseline, {large.lines} lines",
                "ratio",
                ratios,
                target=("<=", 0.5),
            )
        )
        figures.append(measured("replay.lifecycle_s", "lifecycle replay --json in process (large)", "s", life["large"]))
        figures.append(
            measured(
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
                wall, rc, peak = _run_child(_REPLAY_CHILD, _replay_argv(info.path), tmp)
                _check_code(rc)
                rss[label] = max(rss.get(label, 0), peak or 0)
                if label == "large":
                    sub.append(wall / base["large"][min(i, len(base["large"]) - 1)])
        figures.append(
            measured(
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
