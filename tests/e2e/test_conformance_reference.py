"""The whole public conformance suite through the reference adapter
(``@agentclientprotocol/claude-agent-acp`` 0.101.0, installed from npm by ``reference.py``) with
the conformance kit, held against the table "The whole conformance suite through both agents" of
docs/parity/README.md: each case's PASS / FAIL there is what the reference does here, and each
FAIL names the row that explains it (issue 22, item 4)."""

from __future__ import annotations

import asyncio
import re
import time

import pytest
from conftest import CONFORMANCE, ROOT

from lifecycle.conformance import run_suite, summary
from lifecycle.conformance.runner import Outcome, RunOptions

from .oracle import SUITE_HEADING as HEADING
from .oracle import suite_table
from .reference import ensure_reference, node_binary

pytestmark = pytest.mark.e2e

CASES = sorted(p.name.removesuffix(".input.jsonl") for p in (CONFORMANCE / "cases").glob("*.input.jsonl"))
SPEC_TABLE = "## Where the project follows the spec and not the reference"


def explained_points() -> set[str]:
    """The first column of the spec-over-reference table, and of the suite section's new rows."""
    text = (ROOT / "docs" / "parity" / "README.md").read_text()
    blocks = (text.split(SPEC_TABLE, 1)[1].split("\n## ", 1)[0], text.split(HEADING, 1)[1])
    points = set()
    for block in blocks:
        for line in block.splitlines():
            cell = line.split(" | ", 1)[0].removeprefix("| ") if line.startswith("| ") else None
            if cell is None or cell in ("point", "case", "---") or re.fullmatch(r"`[a-z0-9-]+`", cell):
                continue
            points.add(cell)
    return points


def test_the_table_has_every_public_case_once() -> None:
    assert sorted(suite_table()) == CASES


def test_each_reference_difference_is_explained_by_a_row() -> None:
    points = explained_points()
    for case, (_ours, reference, why) in suite_table().items():
        if reference == "PASS":
            assert why == "", case
            continue
        named = why.removeprefix("*new:* ")
        assert named in points, f"{case}: {why!r} is no row of the spec-over-reference table nor a new row"


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    node = node_binary()
    package = ensure_reference()
    work = tmp_path_factory.mktemp("conformance-reference")
    opts = RunOptions(agent=[node, str(package / "dist" / "index.js")], step_timeout=20, case_timeout=120)
    started = time.monotonic()
    results = asyncio.run(run_suite(CONFORMANCE / "cases", opts, jobs=2, work=work, show=False))  # 3 flaked under -n 4
    print(f"\nreference: {summary(results)} in {time.monotonic() - started:.1f}s")
    return {r.name: r for r in results}


@pytest.mark.parametrize("case", CASES)
def test_case_through_the_reference(case: str, outcomes: dict[str, Outcome]) -> None:
    expected = suite_table()[case][1]
    assert outcomes[case].status == expected, outcomes[case].line()
