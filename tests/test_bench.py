"""``lifecycle bench``: the shape of what ``--quick`` reports (never its timings), and the inputs it builds.

The benchmark's figures are measured, not asserted: these tests run ``--quick`` once and check that
every figure is present and a positive finite number (or says why it could not be measured), and
that the inputs it times are what it claims they are (stream-json lines that the Claude SDK parses
back into exactly the recorded messages, a transcript with the usage limits it says it holds).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES

from lifecycle import bench
from lifecycle.claude import from_sdk_message, from_stream_json

#: Figures that may be missing only while the module they measure does not exist yet.
OPTIONAL_MODULES = {"replay.": "lifecycle.replay_cmd", "explorer.": "lifecycle.check"}
#: The full ``lifecycle check`` takes minutes: ``--quick`` measures only its rate.
NOT_RUN_WITH_QUICK = {"explorer.total_s"}


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    """One ``lifecycle bench --quick --json --check`` run, in process."""
    tmp = tmp_path_factory.mktemp("bench")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = bench.cli_main(["--quick", "--json", "--check", "--quiet", "--tmpdir", str(tmp)])
    return code, json.loads(out.getvalue())


def _positive(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


@pytest.mark.timeout(300)
def test_quick_run_reports_every_figure_as_a_positive_number(quick: tuple[int, dict[str, Any]]) -> None:
    code, result = quick
    # --quick enforces no targets: it exits 0 even when one is missed.
    assert code == 0
    assert result["mode"] == "quick"
    assert result["targets"]["enforced"] is False
    ids = [f["id"] for f in result["figures"]]
    assert len(ids) == len(set(ids)), "figure ids are unique"
    for section in ("hot_path.", "incident.", "replay.", "memory.", "explorer."):
        assert any(i.startswith(section) for i in ids), f"no {section} figure"
    for f in result["figures"]:
        assert isinstance(f["label"], str) and f["label"] and isinstance(f["unit"], str) and f["unit"]
        if f["available"]:
            assert _positive(f["value"]), f
            assert f["repetitions"] >= 1
            if "spread" in f:
                s = f["spread"]
                assert all(_positive(s[k]) for k in ("min", "q1", "q3", "max")), f
                assert s["min"] <= s["q1"] <= f["value"] <= s["q3"] <= s["max"], f
        else:
            assert isinstance(f["reason"], str) and f["reason"]
            if f["id"] in NOT_RUN_WITH_QUICK:
                continue
            prefix = next((p for p in OPTIONAL_MODULES if f["id"].startswith(p)), None)
            assert prefix is not None, f"{f['id']} must always be measured"
            # Honest "not available": only while the module really does not exist.
            assert importlib.util.find_spec(OPTIONAL_MODULES[prefix]) is None, f


def test_quick_run_targets_are_consistent(quick: tuple[int, dict[str, Any]]) -> None:
    _, result = quick
    with_target = [f for f in result["figures"] if "target" in f]
    expected = {"hot_path.ratio", "replay.ratio", "memory.ledger_ratio", "memory.idle_session_bytes"}
    assert expected <= {f["id"] for f in with_target}
    for f in with_target:
        t = f["target"]
        assert t["op"] == "<=" and _positive(t["limit"])
        assert t["met"] is (f["available"] and f["value"] <= t["limit"])
    assert result["targets"]["missed"] == [f["id"] for f in with_target if not f["target"]["met"]]
    assert result["targets"]["all_met"] is (not result["targets"]["missed"])


def test_quick_run_details_describe_the_measured_inputs(quick: tuple[int, dict[str, Any]]) -> None:
    _, result = quick
    hot = result["details"]["hot_path"]
    assert hot["lines"] >= 5_000 and sum(hot["lines_by_type"].values()) == hot["lines"]
    # Mostly stream traffic, a few failures: as the mix claims.
    assert hot["lines_by_type"]["stream_event"] > hot["lines"] / 2
    assert 0 < hot["failing_turns"] < hot["turns"] / 10 + 1
    assert hot["records"] > 0 and hot["sends"] > hot["records"]
    replay = result["details"]["replay"]
    assert replay["large"]["lines"] >= 10 * replay["small"]["lines"] * 0.9
    assert replay["large"]["usage_limits"] >= 1
    prof = result["details"]["incident"]["profile"]
    assert set(prof["seconds"]) >= {"machine_creation", "transitions_send", "listener_callbacks"}


def test_exit_code_with_check_follows_the_targets() -> None:
    missed = {"targets": {"missed": ["hot_path.ratio"]}}
    met: dict[str, Any] = {"targets": {"missed": []}}
    assert bench.exit_code(missed, check=True, quick=False) == 1
    assert bench.exit_code(missed, check=True, quick=True) == 0
    assert bench.exit_code(missed, check=False, quick=False) == 0
    assert bench.exit_code(met, check=True, quick=False) == 0


def test_figure_without_a_measurement_misses_its_target() -> None:
    missing = bench.Figure("x", "x", "ratio", None, target=("<=", 1.0), reason="not there")
    assert missing.met is False and not missing.available
    f = bench.Figure("y", "y", "ratio", 0.5, [0.4, 0.5, 0.9], target=("<=", 0.5))
    assert f.met is True
    assert f.spread() == {"min": 0.4, "q1": 0.45, "q3": 0.7, "max": 0.9}


# ------------------------------------------------------------------ the inputs


def _records() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted(FIXTURES.glob("*.sdk.jsonl")):
        out.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return [r for r in out if "class" in r]


def test_rebuilt_stream_json_parses_back_to_the_recorded_sdk_messages() -> None:
    parser = pytest.importorskip("claude_agent_sdk._internal.message_parser")
    records = _records()
    assert len(records) > 50
    for rec in records:
        line = bench.sdk_record_to_stream_json(rec, "sid")
        assert line is not None, rec["class"]
        obj = parser.parse_message(line)
        assert type(obj).__name__ == rec["class"]
        assert dataclasses.asdict(obj) == rec["fields"]
        assert from_stream_json(line) == from_sdk_message(obj)


def test_hot_path_session_is_valid_stream_json_in_turns() -> None:
    parser = pytest.importorskip("claude_agent_sdk._internal.message_parser")
    session = bench.build_hot_path_session(FIXTURES, 600)
    assert len(session.lines) >= 600
    assert [json.loads(s) for s in session.lines] == session.dicts
    kinds = {type(parser.parse_message(d)).__name__ for d in session.dicts}
    assert {"StreamEvent", "AssistantMessage", "ResultMessage", "SystemMessage", "UserMessage"} <= kinds
    traffic = bench.build_hot_path_session(FIXTURES, 600, incidents=False)
    assert traffic.failing_turns == traffic.retry_turns == 0
    assert session.failing_turns > 0 and session.retry_turns > 0


def test_transcript_generator_writes_what_it_reports(tmp_path: Path) -> None:
    from lifecycle.conditions import is_usage_limit_text
    from lifecycle.replay import history_entry

    info = bench.write_transcript(tmp_path / "t.jsonl", 3_000, FIXTURES)
    rows = [json.loads(line) for line in (tmp_path / "t.jsonl").read_bytes().splitlines()]
    assert len(rows) == info.lines >= 3_000
    assert sum(len(line) + 1 for line in (tmp_path / "t.jsonl").read_bytes().splitlines()) == info.bytes
    entries = [history_entry(row) for row in rows]
    limits = [
        i
        for i, e in enumerate(entries)
        if e is not None and e.role == "assistant" and e.synthetic and is_usage_limit_text(e.text)
    ]
    assert len(limits) == info.usage_limits >= 1
    # The last usage limit ends the transcript: no real answer after it, so a replay keeps it active.
    assert not any(e is not None and e.role == "assistant" and not e.synthetic for e in entries[limits[-1] :])
    assert any(e is not None and e.role == "assistant" and not e.synthetic for e in entries[: limits[-1]])
    uuids = [r["uuid"] for r in rows if "uuid" in r]
    assert len(uuids) == len(set(uuids)), "every line has a fresh uuid"
    assert len({r["sessionId"] for r in rows if "sessionId" in r}) == 1
