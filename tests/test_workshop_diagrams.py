"""``workshop diagrams``: rendered from the machine classes, deterministic, and gated by --check,
for ``diagrams/`` and for every generated block of README.md and docs/*.md; and the session-flow
machine it draws is the truth about the ledger."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from expected import TURN_TABLE
from hypothesis import given
from hypothesis import strategies as st

from lifecycle.conditions import render_conditions_markdown
from lifecycle.errors import LocalProtocolError
from lifecycle.events import (
    ApiRetry,
    Assistant,
    Cancelled,
    Event,
    InternalError,
    MessagesReplaced,
    PermissionAnswered,
    PermissionAsked,
    PromptStarted,
    QueryEnded,
    QueryError,
    Result,
    RuntimeReplaced,
    WorkerShuttingDown,
)
from lifecycle.incident import IncidentMachine
from lifecycle.ledger import SessionLedger
from lifecycle.session_flow import FLOW_EVENTS, FLOW_STATES, SessionFlow, flow_transitions
from workshop import diagrams
from workshop.diagrams import (
    BLOCKS,
    EXAMPLE,
    MACHINES,
    block_files,
    blocks_in,
    cli_main,
    edges,
    find_root,
    generated_blocks,
    marker_problems,
    render_all,
    render_dot,
    render_mermaid,
    transitions,
    update_blocks,
)
from workshop.explorer import ledger_flow_state

ROOT = Path(__file__).resolve().parent.parent
# The SVGs need Graphviz's `dot` (README's test command and .ci/run install it): no skip.


def test_every_declared_transition_is_drawn_once_with_its_event_guard_and_effects() -> None:
    for cls in (IncidentMachine, SessionFlow):
        mermaid, dot = render_mermaid(cls), render_dot(cls)
        declared = list(transitions(cls))
        assert len(declared) == sum(len(list(t.events)) for s in cls.states_map.values() for t in s.transitions)
        grouped = edges(cls)
        assert sum(len(g) for g in grouped.values()) == len(declared)
        for (source, target), group in grouped.items():
            label = "<br/>".join(t.label for t in group)
            assert mermaid.count(f"{source} --> {target} : {label}\n") == 1  # one edge per pair of states
            assert "".join(t.label + "\\l" for t in group) in dot
        # Every edge once, plus the initial arrows (one per compound too) and the final ones.
        starts = 1 + sum(bool(s.states) for s in cls.states_map.values())
        assert mermaid.count(" --> ") == len(grouped) + starts + sum(s.final for s in cls.states)
        assert dot.count(" -> ") == len(grouped) + starts
    mermaid = render_mermaid(IncidentMachine)
    assert "[recovers_on_auth]" in mermaid and "[*] --> pending" in mermaid and "historical --> [*]" in mermaid
    page = diagrams.render_markdown("incident")
    assert "`recovers_on_auth` (`auth_status`)" in page  # the guard and the policy's wire name


def test_the_session_flow_is_drawn_with_its_compound_state_and_its_effects() -> None:
    mermaid, dot = render_mermaid(SessionFlow), render_dot(SessionFlow)
    block = mermaid[mermaid.index("    state in_turn {") : mermaid.index("    }\n")]
    assert "        [*] --> running\n" in block
    assert "        running --> answered : real_answer / recover_answered\n" in block
    # Transitions declared on in_turn itself are drawn once, from the compound, outside its block.
    assert mermaid.count("in_turn --> cancelled : cancel / settle_cancelled\n") == 1
    assert "in_turn --> idle : result_stop / settle_stop<br/>transport_lost / settle_runtime_loss\n" in mermaid
    assert "cancelled --> " not in block and "idle --> in_turn : prompt / open_turn\n" in mermaid
    assert "failing --> idle : result_success / settle_failure<br/>result_error / settle_failure<br/>" in mermaid
    assert "answered --> idle : result_success / settle_stop, confirm_attempt<br/>" in mermaid
    assert 'subgraph "cluster_in_turn" {' in dot and 'ltail="cluster_in_turn"' in dot
    assert '"idle" -> "__start_in_turn" [label="prompt / open_turn\\l"];' in dot  # entering in_turn enters running
    page = diagrams.render_markdown("session-flow")
    assert "| `in_turn` (any of `running`, `answered`, `failing`) | `cancel` | - | `settle_cancelled` |" in page
    in_turn = "| `in_turn` (any of `running`, `answered`, `failing`)"
    assert f"{in_turn} | `result_stop` | - | `settle_stop` | `idle` |" in page
    assert "asks it" in page and "lockstep" not in page and "only describes" not in page


def test_rendering_is_deterministic_and_carries_no_paths_or_timestamps() -> None:
    first, second = render_all(), render_all()
    assert first == second  # including the SVGs from `dot`
    for name, content in first.items():
        assert str(ROOT) not in content and "/home/" not in content and "/tmp" not in content, name
        assert not re.search(r"\b20\d\d-\d\d-\d\d\b|\d\d:\d\d:\d\d", content), name
        assert not re.search(r"0x[0-9a-f]{6,}|\b\d{12,}\b", content), name  # no object ids
    svg = first["incident.svg"]
    assert "Generated by graphviz" not in svg and "<svg" in svg
    assert first["conditions.md"].endswith(render_conditions_markdown())


def test_the_committed_diagrams_and_readme_are_fresh() -> None:
    assert cli_main(["--check"]) == 0


def test_check_detects_stale_missing_and_extra_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "diagrams"
    readme = tmp_path / "README.md"
    readme.write_text("x\n<!-- BEGIN GENERATED: conditions -->\nold\n<!-- END GENERATED: conditions -->\n")
    assert cli_main(["--check", "--out", str(out), "--readme", str(readme)]) == 1
    assert "run `python -m workshop diagrams`" in capsys.readouterr().err
    assert not out.exists() and "old" in readme.read_text()  # --check writes nothing
    assert cli_main(["--out", str(out), "--readme", str(readme)]) == 0
    assert cli_main(["--check", "--out", str(out), "--readme", str(readme)]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(render_all())
    assert render_conditions_markdown() in readme.read_text()
    (out / "incident.md").write_text("edited by hand\n")
    (out / "stray.svg").write_text("<svg/>")
    assert cli_main(["--check", "--out", str(out), "--readme", str(readme)]) == 1
    err = capsys.readouterr().err
    assert "incident.md" in err and "stray.svg" in err and "run `python -m workshop diagrams`" in err
    (out / "stray.svg").unlink()
    assert cli_main(["--out", str(out), "--readme", str(readme)]) == 0
    assert cli_main(["--check", "--out", str(out), "--readme", str(readme)]) == 0


def test_a_stale_readme_block_is_detected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "diagrams"
    assert cli_main(["--out", str(out), "--readme", str(tmp_path / "none.md")]) == 0
    readme = tmp_path / "README.md"
    readme.write_text(update_blocks(
        "<!-- BEGIN GENERATED: incident-diagram -->\n<!-- END GENERATED: incident-diagram -->\n"
    ).replace("warn", "warm"))
    assert cli_main(["--check", "--out", str(out), "--readme", str(readme)]) == 1
    assert "README.md" in capsys.readouterr().err


def test_without_graphviz_check_still_checks_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "diagrams"
    assert cli_main(["--out", str(out), "--readme", str(tmp_path / "none.md")]) == 0
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert cli_main(["--check", "--out", str(out)]) == 0
    assert "SVGs are not checked" in capsys.readouterr().err
    (out / "incident.dot").write_text("stale\n")
    assert cli_main(["--check", "--out", str(out)]) == 1
    assert cli_main(["--out", str(out)]) == 1  # rendering needs dot
    assert "apt-get install graphviz" in capsys.readouterr().err


def test_readme_blocks_are_replaced_and_text_around_them_kept() -> None:
    text = "a\n<!-- BEGIN GENERATED: conditions -->\nold\n<!-- END GENERATED: conditions -->\nb\n"
    new = update_blocks(text)
    assert new.startswith("a\n<!-- BEGIN GENERATED: conditions -->\n| condition |") and new.endswith("-->\nb\n")
    assert update_blocks(new) == new
    assert update_blocks("no markers here\n") == "no markers here\n"


def _empty_blocks(*names: str) -> str:
    return "".join(f"<!-- BEGIN GENERATED: {n} -->\n<!-- END GENERATED: {n} -->\n" for n in names)


def test_the_repository_documents_hold_every_block_and_no_broken_marker() -> None:
    files = block_files(ROOT)
    assert ROOT / "README.md" in files and any(p.parent == ROOT / "docs" for p in files)
    held: set[str] = set()
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert marker_problems(text) == [], path
        held |= blocks_in(text)
    assert held == set(BLOCKS)


def test_every_file_with_markers_is_updated_and_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --doc: README.md and every docs/*.md of the repository root are filled and checked."""
    monkeypatch.setattr(diagrams, "find_root", lambda cwd=None: tmp_path)
    (tmp_path / "docs").mkdir()
    readme, first, second = tmp_path / "README.md", tmp_path / "docs" / "a.md", tmp_path / "docs" / "b.md"
    readme.write_text("# r\n" + _empty_blocks("example-trace", "conditions"))
    first.write_text("# a\n" + _empty_blocks("families", "incident-diagram") + "tail\n")
    second.write_text("# b\n" + _empty_blocks("session-flow-diagram", "conditions"))
    (tmp_path / "docs" / "notes.txt").write_text(_empty_blocks("conditions"))  # not Markdown: not touched
    assert block_files(tmp_path) == [readme, first, second]
    assert cli_main(["--check"]) == 1
    err = capsys.readouterr().err
    assert all(n in err for n in ("stale: README.md", "stale: docs/a.md", "stale: docs/b.md"))
    assert cli_main([]) == 0
    assert cli_main(["--check"]) == 0
    assert "generated blocks of 3 documents are fresh" in capsys.readouterr().out
    blocks = generated_blocks()
    assert blocks["session-flow-diagram"] in second.read_text() and blocks["conditions"] in second.read_text()
    assert first.read_text().endswith("<!-- END GENERATED: incident-diagram -->\ntail\n")
    assert (tmp_path / "docs" / "notes.txt").read_text() == _empty_blocks("conditions")
    second.write_text(second.read_text().replace("idle", "idel"))
    assert cli_main(["--check"]) == 1
    err = capsys.readouterr().err
    assert "stale: docs/b.md" in err and "stale: README.md" not in err
    assert cli_main([]) == 0 and cli_main(["--check"]) == 0


def test_a_block_no_default_file_holds_fails_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(diagrams, "find_root", lambda cwd=None: tmp_path)
    (tmp_path / "README.md").write_text(_empty_blocks("example-trace", "incident-diagram", "conditions"))
    assert cli_main([]) == 1  # written, but still a failure
    assert cli_main(["--check"]) == 1
    assert "generated block 'session-flow-diagram' is in none of: README.md" in capsys.readouterr().err
    # Named files are checked as given: a block they do not hold is not an error.
    assert cli_main(["--check", "--doc", str(tmp_path / "README.md")]) == 0


def test_broken_markers_fail_and_leave_the_file_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "diagrams"
    doc = tmp_path / "doc.md"
    broken = (
        "<!-- BEGIN GENERATED: conditoins -->\nx\n<!-- END GENERATED: conditoins -->\n"
        "<!-- BEGIN GENERATED: conditions -->\nold\n"
    )
    doc.write_text(broken)
    assert cli_main(["--out", str(out), "--doc", str(doc)]) == 1
    assert doc.read_text() == broken
    err = capsys.readouterr().err
    assert "unknown generated block 'conditoins'" in err and "BEGIN conditions without its END" in err
    assert cli_main(["--check", "--out", str(out), "--doc", str(doc)]) == 1
    assert "fix the generated-block markers" in capsys.readouterr().err


def test_marker_problems() -> None:
    good = "a\n" + _empty_blocks("conditions") + "prose quoting `<!-- BEGIN GENERATED: conditions -->` inline\n"
    assert marker_problems(good) == []
    assert update_blocks(good).endswith("prose quoting `<!-- BEGIN GENERATED: conditions -->` inline\n")
    assert marker_problems("<!-- END GENERATED: conditions -->\n") == ["line 1: END conditions without its BEGIN"]
    nested = "<!-- BEGIN GENERATED: conditions -->\n" + _empty_blocks("incident-diagram")
    assert any("inside the open block conditions" in p for p in marker_problems(nested))
    assert any("not a well-formed marker" in p for p in marker_problems("<!-- BEGIN GENERATED: conditions --> \n"))
    assert any("not a well-formed marker" in p for p in marker_problems("  <!-- END GENERATED:conditions -->\n"))


def test_the_example_block_is_what_the_installed_command_prints() -> None:
    exe = Path(sys.executable).parent / "lifecycle"
    res = subprocess.run(
        [str(exe), "trace", "--example", EXAMPLE], capture_output=True, text=True, timeout=60, check=True
    )
    assert res.stderr == ""
    assert generated_blocks()["example-trace"] == f"```text\n$ lifecycle trace --example {EXAMPLE}\n{res.stdout}```\n"
    assert '"id":"t1:error","revision":3' in res.stdout


def test_the_incident_page_describes_how_incidents_run_on_the_machine() -> None:
    page = diagrams.render_markdown("incident")
    assert "`MachineAnswers`" in page and "once per distinct question" in page
    assert "is one instance" not in page


def test_the_repository_root_is_found_from_anywhere(tmp_path: Path) -> None:
    assert find_root(ROOT) == ROOT
    assert find_root(tmp_path) == ROOT  # from the package location (an editable install or a clone)


def test_every_machine_has_a_diagram() -> None:
    assert set(MACHINES) == {"incident", "session-flow"}
    assert {cls for cls, _, _ in MACHINES.values()} == {IncidentMachine, SessionFlow}


# ---------------------------------------------------------------------------- the session flow is true

#: an input the ledger takes -> (its events, the flow event the contract makes of it; None: no turn event)
_INPUTS: dict[str, tuple[tuple[Event, ...], str | None]] = {
    "prompt": ((), "prompt"),  # built per turn (fresh ids)
    "api_retry": ((ApiRetry(attempt=1, max_retries=3, error_status=529, error="overloaded"),), "api_retry"),
    "real_answer": ((Assistant(text="Hello", model="claude-opus-5-5"),), "real_answer"),
    "local_command": ((Assistant(text="No response requested.", model="<synthetic>"),), None),
    "claude_failure": (
        (Assistant(text="Invalid API key · Please run /login", model="<synthetic>", error="authentication_failed",
                   uuid="f1"),),
        "claude_failure",
    ),
    # the provider replaced the message that carried the failure (every failure here is "f1")
    "failure_replaced": ((MessagesReplaced(uuids=("f1",)),), "failure_replaced"),
    "result_success": ((Result(subtype="success", is_error=False, stop_reason="end_turn"),), "result_success"),
    "result_max_tokens": ((Result(subtype="success", is_error=True, stop_reason="max_tokens"),), "result_stop"),
    "result_refusal": ((Result(subtype="success", is_error=True, stop_reason="refusal"),), "result_stop"),
    "result_error": ((Result(subtype="error_during_execution", is_error=True),), "result_error"),
    "cancel": ((Cancelled(),), "cancel"),
    "query_error": ((QueryError(message="boom"),), "transport_lost"),
    "worker_shutdown_eof": ((WorkerShuttingDown(reason="idle"), QueryEnded()), "transport_lost"),
    "query_end": ((QueryEnded(),), "stream_ended"),  # without a worker shutdown: the stream ended
    "internal_error": ((InternalError(),), "internal_error"),
    "runtime_replaced": ((RuntimeReplaced(),), None),
    "permission_asked": ((PermissionAsked(tool_use_id="toolu_1"),), "permission_asked"),
    "permission_answered": ((PermissionAnswered(tool_use_id="toolu_1"),), "permission_answered"),
}


def test_the_flow_alphabet_is_the_ledgers() -> None:
    assert {flow for _, flow in _INPUTS.values() if flow} == set(FLOW_EVENTS)
    assert set(flow_transitions().values()) == set(FLOW_STATES)
    assert set(FLOW_STATES) == {s.id for s in SessionFlow.states_map.values() if not s.states}


@given(
    negotiated=st.booleans(),
    script=st.lists(st.sampled_from(sorted(_INPUTS)), max_size=30),
)
def test_the_written_out_turn_table_predicts_the_ledgers_turn(negotiated: bool, script: list[str]) -> None:
    """Drive a real ledger with the inputs and predict its turn state from the turn machine's points
    written out by hand (``expected.TURN_TABLE``), not from the machine the ledger asks: the
    predicted leaf is the ledger's turn state after every input (an input the table refuses, or
    that is no turn event at all, must not move the ledger's turn either)."""
    ledger = SessionLedger("s1", negotiated=negotiated, epoch="e1")
    predicted = "idle"
    turns, stopping = 0, False  # stopping: the worker announced its shutdown (until the runtime is replaced)
    for name in script:
        events, flow_event = _INPUTS[name]
        if name == "prompt":
            turns += 1
            events = (PromptStarted(turn_id=f"t{turns}"),)
        stopping = (stopping or name == "worker_shutdown_eof") and name != "runtime_replaced"
        if name == "query_end" and stopping:
            flow_event = "transport_lost"  # the EOF of a worker that announced its shutdown
        before = ledger_flow_state(ledger)
        for event in events:
            try:
                ledger.feed(event)
            except LocalProtocolError:  # a second prompt, or the same question asked while it is open
                asked_again = name == "permission_asked" and ledger.question_open("toolu_1")
                assert (name == "prompt" and before not in ("idle", "cancelled")) or asked_again
            while ledger.next_outbound() is not None:
                ledger.delivered()
        if flow_event is not None:
            answer = TURN_TABLE[(predicted, flow_event)]
            if answer is not None:
                predicted = answer[0]
        assert ledger_flow_state(ledger) == predicted, (name, script)
