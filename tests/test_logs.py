"""Logs: ``lifecycle.log.configure_logging`` + ``StructlogObserver``.

* JSON lines when the stream is not a TTY, the readable console format when it is (a fake
  stream whose ``isatty()`` is true, a real pty, and ``lifecycle trace --log`` with stderr on a
  pty);
* every transition line carries session_id, incident_id, from_state, to_state, transition and
  revision, with values the machine and the delivered records agree with;
* with the secret corpus in every text field of a trace, ``lifecycle trace --log`` writes no
  marker to stderr (nor outside transcript prose on stdout).
"""

from __future__ import annotations

import errno
import io
import json
import os
import pty
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from conftest import CONFORMANCE, documented_count
from fuzz import harness as h
from fuzz.recorded import recorded_events
from fuzz.report import SECTIONS, install
from secrets_corpus import CONTEXTS, SHAPES, embed, escaped_forms

from lifecycle import ApiRetry, ModelFallback, PromptStarted, SessionLedger
from lifecycle.cli.trace import TraceDriver
from lifecycle.incident import IncidentMachine
from lifecycle.log import StructlogObserver, configure_logging

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted((CONFORMANCE / "cases").glob("*.input.jsonl"))
STATES = {s.id for s in IncidentMachine.states}
EVENTS = {e.id for e in IncidentMachine.events}  # type: ignore[attr-defined]
TRANSITION_KEYS = ("session_id", "incident_id", "from_state", "to_state", "transition", "revision")
PUBLISHING = {"warn", "fail", "notify", "restore", "window_warn"}


@pytest.fixture(autouse=True)
def _structlog_reset(request: pytest.FixtureRequest) -> Iterator[None]:
    install(request.config)
    yield
    structlog.reset_defaults()


def _emit_some(stream: Any, **kw: Any) -> None:
    configure_logging(stream, **kw)
    probe = h.start("auth", True, observer=StructlogObserver())
    probe.feed(
        ApiRetry(attempt=1, max_retries=2, error_status=None, error="unknown")
    )  # outside a turn: a note


#: The recorded runs whose transition lines are checked one by one.
RECORDED_RUNS = ("http429", "retry_then_success", "usage_limit_gateway", "http401", "conn_refused")


def test_the_scenario_lists_did_not_shrink() -> None:
    """Exactly the conformance cases tests/README.md counts: a broken glob must not quietly check
    fewer transition lines."""
    assert len(CASES) == documented_count("conformance cases") and len(RECORDED_RUNS) == 5


# ------------------------------------------------------------------ format by stream kind


def test_json_lines_when_the_stream_is_not_a_tty() -> None:
    buf = io.StringIO()
    _emit_some(buf)
    lines = [json.loads(x) for x in buf.getvalue().splitlines()]
    assert lines and all({"event", "level", "timestamp"} <= set(x) for x in lines)
    assert [x["event"] for x in lines] == ["incident.transition", "ledger.api_retry_outside_turn"]
    assert lines[0]["timestamp"].endswith("Z")


class TtyLike(io.StringIO):
    def isatty(self) -> bool:
        return True


def _console_lines(text: str) -> list[str]:
    lines = [x for x in text.replace("\r\n", "\n").splitlines() if x.strip()]
    for x in lines:
        with pytest.raises(json.JSONDecodeError):
            json.loads(x)
    return lines


def test_console_format_when_the_stream_is_a_tty() -> None:
    fake = TtyLike()
    _emit_some(fake)
    lines = _console_lines(fake.getvalue())
    assert (
        "incident.transition" in lines[0]
        and "from_state=pending" in lines[0]
        and "to_state=failed" in lines[0]
    )
    assert "\x1b[" not in fake.getvalue()  # colors off: readable in any terminal and in a file


def test_console_format_on_a_real_pty() -> None:
    master, slave = pty.openpty()
    try:
        with os.fdopen(slave, "w") as stream:  # closing it closes the pty's only slave end
            assert stream.isatty()
            _emit_some(stream)
        text = _read_all(master)
    finally:
        os.close(master)
    lines = _console_lines(text)
    assert any("incident.transition" in x and "transition=fail" in x for x in lines), lines


def test_the_format_can_be_forced() -> None:
    fake = TtyLike()
    _emit_some(fake, json=True)
    assert all(json.loads(x) for x in fake.getvalue().splitlines())
    buf = io.StringIO()
    _emit_some(buf, json=False)
    _console_lines(buf.getvalue())


def _read_all(fd: int) -> str:
    """Everything written to a pty until its last slave end is closed (Linux then reports EIO on
    the master once the buffer is drained). No idle timeout: a writer that never closes is a hang,
    which pytest-timeout ends."""
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError as exc:
            if exc.errno != errno.EIO:
                raise
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks).decode("utf-8", "replace")


def test_lifecycle_trace_log_on_a_pty_is_console_and_on_a_pipe_is_json() -> None:
    case = CONFORMANCE / "cases" / "rate-limit-retries-then-fails.input.jsonl"
    cmd = [sys.executable, "-m", "lifecycle", "trace", "--log", str(case)]
    piped = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert piped.returncode == 0
    events = [json.loads(x)["event"] for x in piped.stderr.splitlines()]
    assert events.count("incident.transition") == 3
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)  # the child holds the only slave end now: its exit ends the read
        text = _read_all(master)
        assert proc.wait(60) == 0
    finally:
        os.close(master)
    lines = _console_lines(text)
    assert sum("incident.transition" in x for x in lines) == 3


# ------------------------------------------------------------------ every transition line


def _run_logged(lines: list[str]) -> tuple[list[dict[str, Any]], Counter[tuple[str, int]]]:
    """Drive a trace with JSON logging; (log lines, (id, revision) of every delivered record)."""
    buf = io.StringIO()
    configure_logging(buf)
    delivered: Counter[tuple[str, int]] = Counter()

    def emit(m: dict[str, Any]) -> None:
        rec = (m.get("result") or m.get("params", {}).get("update") or {}).get("_meta", {})
        rec = rec.get("jetbrains", {}).get("air", {}).get("sessionFailure")
        if rec:
            delivered[(rec["id"], rec["revision"])] += 1

    driver = TraceDriver(emit, lambda _: None, StructlogObserver())
    for n, text in enumerate(lines, start=1):
        driver.feed_text(n, text)
    return [json.loads(x) for x in buf.getvalue().splitlines()], delivered


def _ledger_logged(events: list[Any]) -> tuple[list[dict[str, Any]], Counter[tuple[str, int]]]:
    buf = io.StringIO()
    configure_logging(buf)
    ledger = SessionLedger("s1", negotiated=True, epoch="e1", observer=StructlogObserver())
    delivered: Counter[tuple[str, int]] = Counter()
    for ev in events:
        ledger.process(ev, lambda m: delivered.update([(m.record.id, m.record.revision)] if m.record else []))
    return [json.loads(x) for x in buf.getvalue().splitlines()], delivered


def _check_transitions(logged: list[dict[str, Any]], delivered: Counter[tuple[str, int]]) -> int:
    transitions = [x for x in logged if x["event"] == "incident.transition"]
    for x in transitions:
        assert all(k in x for k in TRANSITION_KEYS), x
        assert isinstance(x["session_id"], str) and x["session_id"]
        assert isinstance(x["incident_id"], str) and x["incident_id"]
        assert x["from_state"] in STATES and x["to_state"] in STATES and x["transition"] in EVENTS, x
        assert type(x["revision"]) is int and x["revision"] >= 1, x
        assert x["level"] == "info"
    published = Counter(
        (x["incident_id"], x["revision"]) for x in transitions if x["transition"] in PUBLISHING
    )
    assert published == delivered  # one publishing transition per delivered record, same revision
    for x in logged:
        if x["event"] != "incident.transition":
            assert x["event"].startswith("ledger.") and "session_id" in x, x
    return len(transitions)


def test_every_transition_line_carries_the_six_fields() -> None:
    runs = 0
    lines_seen = 0
    for case in CASES:
        logged, delivered = _run_logged(case.read_text().splitlines())
        lines_seen += _check_transitions(logged, delivered)
        runs += 1
    for name in RECORDED_RUNS:
        logged, delivered = _ledger_logged(recorded_events(name, "t1"))
        lines_seen += _check_transitions(logged, delivered)
        runs += 1
    lines_seen += _check_transitions(
        *_ledger_logged(
            [
                *recorded_events("http429", "a"),
                ModelFallback(content=h.FALLBACK),
                ModelFallback(content=h.FALLBACK),
                *recorded_events("retry_then_success", "b"),
            ]
        )
    )
    SECTIONS["logs: transition lines checked"] = [f"{lines_seen} transition lines in {runs + 1} runs"]
    assert lines_seen > 20


def test_transition_lines_include_recoveries_and_supersession() -> None:
    logged, delivered = _ledger_logged(
        [
            *recorded_events("http429", "a"),
            *recorded_events("retry_then_success", "b"),
            ModelFallback(content=h.FALLBACK),
            PromptStarted(turn_id="c"),
            ModelFallback(content="Switched"),
        ]
    )
    _check_transitions(logged, delivered)
    seen = {
        (x["transition"], x["from_state"], x["to_state"])
        for x in logged
        if x["event"] == "incident.transition"
    }
    assert ("confirmed_attempt", "failed", "historical") in seen
    assert ("warn", "pending", "retrying") in seen and ("fail", "retrying", "failed") in seen


# ------------------------------------------------------------------ secret-free, through the command


def test_lifecycle_trace_log_with_the_corpus_injected_is_secret_free(tmp_path: Path) -> None:
    traces: list[str] = []
    used = []
    for k, shape in enumerate(SHAPES):
        for i, example in enumerate(shape.examples):
            texts = embed(example, CONTEXTS[(k + i) % 2])
            traces += h.secret_trace(texts[(k + i) % len(texts)], capable=(k + i) % 3 != 0)
        used.append(shape)
    path = tmp_path / "secrets.jsonl"
    path.write_text("\n".join(traces) + "\n", encoding="utf-8")
    res = subprocess.run(
        [sys.executable, "-m", "lifecycle", "trace", "--log", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    err = res.stderr.splitlines()
    json_lines = [json.loads(x) for x in err if not x.startswith("lifecycle trace: ")]
    assert sum(x["event"] == "incident.transition" for x in json_lines) > 100
    out_blobs = []
    for line in res.stdout.splitlines():
        msg = json.loads(line)
        update = msg.get("params", {}).get("update", {})
        if update.get("sessionUpdate") in ("agent_message_chunk", "user_message_chunk"):
            update["content"].pop("text")  # transcript prose: out of scope (forwarded unchanged)
        out_blobs.append(json.dumps(msg, ensure_ascii=False))
    leaks = [
        (shape.name, blob[:200])
        for shape in used
        for blob in [*err, *out_blobs]
        if any(f in blob for f in escaped_forms(shape.marker))
    ]
    SECTIONS["logs: lifecycle trace --log with the corpus"] = [
        f"{len(traces)} trace lines, {len(err)} stderr lines, {len(out_blobs)} stdout lines, {len(leaks)} leaks"
    ]
    assert not leaks, leaks[:5]
