"""The usage-limit prefixes cannot go stale: they are read back from the installed Claude Code CLI.

Spec ("History replay"): replay recognises only ``<synthetic>`` messages beginning with SDK-owned
stable prefixes. The CLI bundled with ``claude-agent-sdk`` carries that list as one JavaScript
array literal (the TypeScript SDK exports the same list as ``USAGE_LIMIT_ERROR_PREFIXES``); this
test finds it in the binary and requires :data:`lifecycle.conditions.USAGE_LIMIT_PREFIXES` to hold
exactly its entries.
"""

from __future__ import annotations

import json
import mmap
import re
from pathlib import Path

import claude_agent_sdk

from lifecycle.conditions import USAGE_LIMIT_PREFIXES, is_usage_limit_text

_CLI = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
# The array literal that starts with the first prefix; entries are plain JS strings (the CLI
# writes the middle dot as the escape \xB7, which JSON spells \u00b7).
_ARRAY = re.compile(rb'\["You\'ve hit your"(?:,"[^"\\]*(?:\\x[0-9A-Fa-f]{2}[^"\\]*)*")*\]')


def _cli_prefixes() -> list[str]:
    with _CLI.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        found = {m.group(0) for m in _ARRAY.finditer(data)}
    assert len(found) == 1, f"expected one usage-limit prefix array in {_CLI.name}, found {len(found)}"
    literal = next(iter(found)).decode("ascii")
    literal = re.sub(r"\\x([0-9A-Fa-f]{2})", lambda m: f"\\u00{m.group(1)}", literal)
    prefixes: list[str] = json.loads(literal)
    return prefixes


def test_the_prefixes_are_exactly_the_installed_clis() -> None:
    cli = _cli_prefixes()
    assert len(cli) >= 12
    assert sorted(USAGE_LIMIT_PREFIXES) == sorted(cli)


def test_every_cli_prefix_is_recognised_as_a_usage_limit() -> None:
    for prefix in _cli_prefixes():
        assert is_usage_limit_text(prefix + " · resets 5pm (UTC)"), prefix
    assert is_usage_limit_text("Fable 5 requires usage credits · turn on usage credits to continue")
    assert not is_usage_limit_text("I think you've hit your stride")  # model prose is not a prefix match
