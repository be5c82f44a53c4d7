"""``lifecycle/examples/embed_acp.py``, the embedding sample: it runs, and shows what
docs/acp-agent.md says it shows."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from acp_harness import run

ROOT = Path(__file__).resolve().parent.parent


def test_example_embed_acp_main() -> None:
    path = ROOT / "lifecycle" / "examples" / "embed_acp.py"
    spec = importlib.util.spec_from_file_location("embed_acp_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # what the sample shows (its docstring, docs/acp-agent.md): embedding takes the few "# +" lines
    marked = [line for line in path.read_text().splitlines() if "# +" in line]
    assert 0 < len(marked) <= 10, marked
    seen = run(module.main())
    (entry,) = seen.entries
    assert entry.carrier == "prompt_response" and entry.record is not None
    assert (entry.record.category.value, entry.record.title, entry.record.actions) == ("limit", module.LIMIT, ())
