"""The whole public conformance suite through a third-party Python ACP adapter, ``claude-code-acp``
0.5.1 from PyPI (installed by ``python_adapter.py``), with the conformance kit, held against the
table "Three adapters, every public case" of docs/conformance-kit.md (issue 34, point 3): each
case's PASS / FAIL / N/A in its "claude-code-acp 0.5.1" column is what the adapter does here, every
FAIL names its causes from the table after it, and the table's "lifecycle acp" and "reference
0.101.0" columns are docs/parity/README.md's suite table, the one ``test_conformance_agent.py``
and ``test_conformance_reference.py`` assert."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest
from conftest import CONFORMANCE, ROOT, documented_count

from lifecycle.conformance import run_suite, summary
from lifecycle.conformance.runner import Outcome, RunOptions

from .oracle import suite_table
from .python_adapter import ensure_python_adapter

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

CASES = sorted(p.name.removesuffix(".input.jsonl") for p in (CONFORMANCE / "cases").glob("*.input.jsonl"))
KIT_DOC = ROOT / "docs" / "conformance-kit.md"
HEADING = "## Three adapters, every public case"
COLUMNS = ("lifecycle acp", "reference 0.101.0", "claude-code-acp 0.5.1")
HEADER = f"| case | {' | '.join(COLUMNS)} | why the reference differs | why claude-code-acp differs |"
LINK = re.compile(r"\[([^\]]*)\]\(parity/README\.md#[a-z0-9-]+\)")


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().removeprefix("|").removesuffix("|").split("|")]


def _section() -> str:
    text = KIT_DOC.read_text()
    assert HEADING in text, f"the table {HEADING!r} is missing from docs/conformance-kit.md"
    return text.split(HEADING, 1)[1].split("\n## ", 1)[0]


def kit_table() -> dict[str, dict[str, str]]:
    """case -> {column -> cell} from docs/conformance-kit.md's three-adapter table."""
    section = _section()
    assert HEADER in section, "the three-adapter table's header changed"
    rows: dict[str, dict[str, str]] = {}
    for line in section.splitlines():
        cells = _cells(line)
        if len(cells) == 6 and re.fullmatch(r"`[a-z0-9-]+`", cells[0]):
            case = cells[0].strip("`")
            assert case not in rows, f"{case} twice in the table"
            names = (*COLUMNS, "reference why", "claude-code-acp why")
            rows[case] = dict(zip(names, cells[1:], strict=True))
    return rows


def causes() -> set[str]:
    """The first column of the table of claude-code-acp's causes (after the three-adapter table)."""
    rows = [_cells(line) for line in _section().splitlines() if line.startswith("| ")]
    return {cells[0] for cells in rows if len(cells) == 3 and cells[0] not in ("cause", "---")}


def test_the_table_has_every_public_case_once() -> None:
    assert len(CASES) == documented_count("conformance cases")
    table = kit_table()
    assert sorted(table) == CASES
    for case, row in table.items():
        assert {row[c] for c in COLUMNS} <= {"PASS", "FAIL", "N/A"}, case


def test_our_and_the_reference_columns_are_the_parity_tables() -> None:
    """The first two columns, and the reference's reasons, are docs/parity/README.md's suite table
    (``test_conformance_agent.py`` asserts its "ours", ``test_conformance_reference.py`` its
    "the reference")."""
    parity = suite_table()
    table = kit_table()
    assert sorted(parity) == sorted(table)
    for case, (ours, reference, why) in parity.items():
        row = table[case]
        assert row["lifecycle acp"] == ours, case
        assert row["reference 0.101.0"] == reference, case
        assert LINK.sub(r"\1", row["reference why"]) == why, case
        assert LINK.fullmatch(row["reference why"].removeprefix("*new:* ")) or not why, case


def test_each_claude_code_acp_difference_names_its_causes() -> None:
    known = causes()
    assert len(known) >= 5
    used = set()
    for case, row in kit_table().items():
        named = [c for c in row["claude-code-acp why"].split("; ") if c]
        if row["claude-code-acp 0.5.1"] == "PASS":
            assert not named, case
            continue
        assert named, f"{case}: a FAIL without a cause"
        assert set(named) <= known, f"{case}: {named} not in the causes table"
        used |= set(named)
    assert used == known, f"causes no case names: {known - used}"


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Outcome]]:
    """The folder the cases ran in (each case's folder is kept there) and their outcomes."""
    adapter = ensure_python_adapter()
    work = tmp_path_factory.mktemp("conformance-python-adapter")
    opts = RunOptions(agent=[str(adapter)], step_timeout=20, case_timeout=120)
    started = time.monotonic()
    results = asyncio.run(run_suite(CONFORMANCE / "cases", opts, jobs=3, work=work, show=False))
    print(f"\nclaude-code-acp: {summary(results)} in {time.monotonic() - started:.1f}s")
    return work, {r.name: r for r in results}


@pytest.fixture(scope="module")
def outcomes(suite: tuple[Path, dict[str, Outcome]]) -> dict[str, Outcome]:
    return suite[1]


def test_every_public_case_ran(outcomes: dict[str, Outcome]) -> None:
    assert sorted(outcomes) == CASES


@pytest.mark.parametrize("case", CASES)
def test_case_through_claude_code_acp(case: str, outcomes: dict[str, Outcome]) -> None:
    expected = kit_table()[case]["claude-code-acp 0.5.1"]
    assert outcomes[case].status == expected, outcomes[case].line()


def test_the_adapter_ran_the_fake_cli(suite: tuple[Path, dict[str, Outcome]]) -> None:
    """The verdicts are about the case: the adapter started the kit's fake CLI (found on PATH; the
    SDK without a bundled binary) and played the prompt, in a passing and in a failing case."""
    for case in ("legacy-stream-ends-without-result-is-end-turn", "legacy-client-unchanged"):
        log = (suite[0] / case / "cli.log").read_text()
        assert "control_request initialize" in log, case
        assert "--input-format" in log and "stream-json" in log, case
        assert "step 2 prompt done" in log, case
