"""Every public conformance case, run in this process: the core's surface of the cases.

``tests/test_cli_trace.py`` runs the cases the way users do (the installed ``lifecycle trace`` command
in a subprocess, then ``check.py``); tests/e2e/test_conformance_agent.py through ``lifecycle acp``
and tests/e2e/test_conformance_reference.py through the reference adapter. A mutation tool
patches the code of *this* process only, so those runs cannot kill a mutant; here the same cases
go through :func:`lifecycle.cli.trace.run_trace` in-process, once per case (one test each, and
no cache across tests: under mutmut each mutant is traced afresh), and are judged by the vendored
checker itself (``tests/conformance/check.py``, imported from its path, never restated) and by
the conformance kit's matcher (``lifecycle.conformance.expect.check``), which must agree.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest
from conftest import CONFORMANCE, documented_count

from lifecycle.cli.trace import run_trace
from lifecycle.conformance.expect import check

CASES_DIR = CONFORMANCE / "cases"
CASES = sorted(p.name.removesuffix(".input.jsonl") for p in CASES_DIR.glob("*.input.jsonl"))


def _load_checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("conformance_check", CONFORMANCE / "check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CHECK = _load_checker()


def _trace(case: str) -> tuple[str, list[str]]:
    """What ``lifecycle trace CASE.input.jsonl`` writes to stdout, and what it reports."""
    lines = (CASES_DIR / f"{case}.input.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    out: list[str] = []
    reports: list[str] = []
    assert run_trace(lines, out.append, reports.append) == 0
    return "".join(out), reports


def test_there_are_cases_to_run() -> None:
    assert len(CASES) == documented_count("conformance cases"), f"conformance cases in {CASES_DIR}"
    assert all((CASES_DIR / f"{c}.expect.json").is_file() for c in CASES)


@pytest.mark.parametrize("case", CASES)
def test_case_holds_in_process(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One run of the case: the vendored checker's verdict is ok; the trailer is last and every
    line one JSON object; and the kit's matcher (expect.check) gives the vendored checker's
    verdict, on the output and on the same output with one record's id changed."""
    output, _reports = _trace(case)
    expect_file = CASES_DIR / f"{case}.expect.json"
    out_file = tmp_path / f"{case}.out"
    out_file.write_text(output, encoding="utf-8")
    capsys.readouterr()
    code = CHECK.main(["check.py", str(out_file), str(expect_file)])
    verdict = capsys.readouterr().out
    assert code == 0, verdict
    assert verdict.strip() == "ok"

    parsed = [json.loads(line) for line in output.splitlines()]
    assert parsed and parsed[-1]["lifecycle"] == "active"
    assert all(p.get("jsonrpc") == "2.0" for p in parsed[:-1])
    assert output.endswith("\n")

    expect = json.loads(expect_file.read_text(encoding="utf-8"))
    outputs = {"as traced": output}
    if '"t1:error"' in output:
        outputs["one id changed"] = output.replace('"t1:error"', '"t9:error"', 1)
    for label, raw in outputs.items():
        changed = tmp_path / "changed.out"
        changed.write_text(raw, encoding="utf-8")
        theirs = CHECK.main(["check.py", str(changed), str(expect_file)])
        capsys.readouterr()
        parsed = [json.loads(line) for line in raw.splitlines() if line.strip()]
        messages = [m for m in parsed if m.get("lifecycle") != "active"]
        ours = check(messages, raw, expect)
        assert (theirs == 0) == (not ours), (label, ours)
        assert label != "as traced" or ours == [], ours  # the traced output holds for the matcher too


def test_the_checker_is_not_vacuous(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty trace fails every case that expects anything: the checker does judge."""
    empty = tmp_path / "empty.out"
    empty.write_text('{"lifecycle":"active","sessions":{}}\n', encoding="utf-8")
    failing = 0
    for case in CASES:
        expect = json.loads((CASES_DIR / f"{case}.expect.json").read_text(encoding="utf-8"))
        if expect.get("sequence") or expect.get("records") or expect.get("active"):
            assert CHECK.main(["check.py", str(empty), str(CASES_DIR / f"{case}.expect.json")]) == 1
            failing += 1
    capsys.readouterr()
    assert failing > 0
