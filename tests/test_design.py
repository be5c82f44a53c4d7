"""DEVELOPERS.md: the core is sans-I/O; the edges are thin modules. Checked on the source itself."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "lifecycle"
CORE = [
    "wire",
    "negotiation",
    "conditions",
    "titles",
    "redaction",
    "events",
    "errors",
    "incident",
    "ledger",
    "replay",
    "client",
    "claude",
]
IO_MODULES = {
    "asyncio",
    "io",
    "os",
    "pathlib",
    "shutil",
    "socket",
    "subprocess",
    "sys",
    "threading",
    "time",
    "datetime",
    "logging",
    "structlog",
    "select",
    "selectors",
    "http",
    "urllib",
    "tempfile",
    "acp",
    "claude_agent_sdk",
    "random",
    "uuid",
}


def imported(module: str) -> set[str]:
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("module", CORE)
def test_core_modules_import_no_io(module: str) -> None:
    assert imported(module) & IO_MODULES == set()


@pytest.mark.parametrize("module", CORE)
def test_core_modules_never_call_open_or_print(module: str) -> None:
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert calls & {"open", "print", "input", "exec", "eval"} == set()


def test_the_core_imports_without_the_optional_extras() -> None:
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('claude_agent_sdk', 'acp', 'pydot', 'orjson'):\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import lifecycle, lifecycle.claude, lifecycle.cli.trace, lifecycle.cli.replay\n"
        "from lifecycle.cli import main\n"
        "assert main(['trace', '--example', 'usage-limit-replay']) == 0\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert "sessionFailure" in res.stdout


def test_every_core_module_has_a_docstring_citing_its_idea() -> None:
    for module in CORE:
        doc = ast.get_docstring(ast.parse((PACKAGE / f"{module}.py").read_text()))
        assert doc and len(doc) > 40, module
