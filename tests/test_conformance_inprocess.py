"""Every public conformance case, run in this process.

``tests/test_trace.py`` runs the cases the way users do (the installed ``lifecycle trace`` command
in a subprocess, then ``check.py``). A mutation tool patches the code of *this* process only, so
those subprocess runs cannot kill a mutant; here the same cases go through
:func:`lifecycle.cli.trace.run_trace` in-process and are judged by the vendored checker itself
(``tests/conformance/check.py``, imported from its path, never restated).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest
from conftest import CONFORMANCE, documented_count

from lifecycle.cli.trace import run_trace

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
    output, _reports = _trace(case)
    out_file = tmp_path / f"{case}.out"
    out_file.write_text(output, encoding="utf-8")
    capsys.readouterr()
    code = CHECK.main(["check.py", str(out_file), str(CASES_DIR / f"{case}.expect.json")])
    verdict = capsys.readouterr().out
    assert code == 0, verdict
    assert verdict.strip() == "ok"


@pytest.mark.parametrize("case", CASES)
def test_the_trailer_is_last_and_every_line_is_one_json_object(case: str) -> None:
    output, _ = _trace(case)
    parsed = [json.loads(line) for line in output.splitlines()]
    assert parsed and parsed[-1]["lifecycle"] == "active"
    assert all(p.get("jsonrpc") == "2.0" for p in parsed[:-1])
    assert output.endswith("\n")


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
