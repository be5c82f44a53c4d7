"""The package's architecture, checked on the source itself (lifecycle/__init__.py describes it).

* The core (:data:`CORE`, flat in ``lifecycle/``) is sans-I/O: it imports no I/O module and none of
  the edges, the agent, the commands, the tools or the logging listener -- checked on the source
  with ``ast`` (every import statement, module-level and inside functions, relative ones resolved)
  and at run time, by importing the core in a fresh interpreter that records every import the
  core's own code performs and then looks at ``sys.modules``.
* No import cycle anywhere in ``lifecycle/`` (module-level and function-level imports).
* No module under ``lifecycle/`` or ``workshop/`` (the developer tools) is longer than
  :data:`MAX_LINES` lines, and none under ``tests/`` but the few :data:`LONG_TEST_MODULES` names.
* Nothing under ``lifecycle/`` imports ``workshop`` (the product never needs the workshop).
* The repository is self-contained: nothing reads the sibling ``shared`` folder or an environment
  variable pointing at it.
* The suite cannot shrink silently: an empty parametrized case list fails the run, and no test
  is skipped or expected to fail.

Each checker is also run on a small counter-example, so a checker that finds nothing fails.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "lifecycle"

#: The core: flat modules of lifecycle/, named after the spec's sections (``redaction_*``: the rules of
#: ``redaction``, by concern). The rest of the package: edges, the agent, commands, the kit, the log listener.
CORE = (
    "errors",
    "air",
    "wire",
    "ids",
    "negotiation",
    "conditions",
    "families",
    "titles",
    "redaction",
    "redaction_found",
    "redaction_layout",
    "redaction_credentials",
    "redaction_shapes",
    "events",
    "limits",
    "answers",
    "intents",
    "incident",
    "session_flow",
    "delivery_surfaces",
    "ledger",
    "history",
    "client",
)
#: Flat modules that are deliberately not core.
FLAT_NOT_CORE = ("__init__", "__main__", "log")
#: What the core never imports.
NOT_CORE = (
    "lifecycle.conformance",
    "workshop",
    "lifecycle.agent",
    "lifecycle.cli",
    "lifecycle.claude",
    "lifecycle.acp",
    "lifecycle.proxy",
    "lifecycle.log",
    "lifecycle.examples",
)
#: Modules (top-level names) that do I/O, read a clock or a random source, or import code dynamically.
IO_MODULES = frozenset(
    {
        "socket",
        "ssl",
        "select",
        "selectors",
        "subprocess",
        "asyncio",
        "threading",
        "multiprocessing",
        "concurrent",
        "os",
        "sys",
        "pathlib",
        "io",
        "shutil",
        "tempfile",
        "glob",
        "fcntl",
        "pty",
        "tty",
        "termios",
        "mmap",
        "signal",
        "ctypes",
        "logging",
        "warnings",
        "structlog",
        "time",
        "datetime",
        "zoneinfo",
        "random",
        "secrets",
        "uuid",
        "http",
        "urllib",
        "email",
        "smtplib",
        "ftplib",
        "webbrowser",
        "sqlite3",
        "shelve",
        "pickle",
        "atexit",
        "importlib",
        "builtins",
        "claude_agent_sdk",
        "acp",
        "anyio",
        "trio",
        "requests",
        "httpx",
        "aiohttp",
    }
)
#: The only third-party packages the core may import: its declared runtime dependencies
#: (pyproject's ``dependencies``; structlog is there for ``lifecycle.log`` only).
CORE_THIRD_PARTY = frozenset({"pydantic", "statemachine"})
#: Calls the core never makes.
FORBIDDEN_CALLS = frozenset({"open", "print", "input", "exec", "eval", "compile", "__import__", "breakpoint"})
MAX_LINES = 700


# ------------------------------------------------------------------ reading imports with ast


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the absolute name it imports (a module, or the module an attribute comes from)
    line: int


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(source: str, module: str, *, is_package: bool, known: frozenset[str] = frozenset()) -> list[Import]:
    """Every import statement of ``source`` (at any depth: functions, ``if`` blocks, classes),
    as absolute targets. ``from P import n`` targets ``P.n`` when that is a known module, else
    ``P`` (``n`` is an attribute, and ``P`` has to be imported to read it)."""
    package = module if is_package else module.rpartition(".")[0]
    out: list[Import] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [Import(module, alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            else:
                base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.append(Import(module, sub if sub in known else base, node.lineno))
    return out


def package_sources(root: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package) for every ``.py`` file under ``root/package``."""
    return {
        module_name(p, root): (p, p.name == "__init__.py")
        for p in sorted((root / package).rglob("*.py"))
        if "__pycache__" not in p.parts
    }


def forbidden_in_core(imp: Import) -> str | None:
    """Why the core may not make this import (None: it may)."""
    top = imp.target.split(".")[0]
    if top in IO_MODULES:
        return f"I/O module {imp.target}"
    for edge in NOT_CORE:
        if imp.target == edge or imp.target.startswith(edge + "."):
            return f"non-core {imp.target}"
    if top not in sys.stdlib_module_names and top not in CORE_THIRD_PARTY and top != "lifecycle":
        return f"third-party {imp.target} (not a runtime dependency of the core)"
    return None


def core_violations(module: str, source: str, known: frozenset[str]) -> list[str]:
    found = sorted(imports_of(source, module, is_package=False, known=known), key=lambda i: i.line)
    return [f"{module}:{imp.line}: {why}" for imp in found if (why := forbidden_in_core(imp)) is not None]


SOURCES = package_sources(ROOT, "lifecycle")
KNOWN = frozenset(SOURCES)


def test_the_core_is_every_flat_module_but_the_declared_exceptions() -> None:
    flat = {p.stem for p in PACKAGE.glob("*.py")}
    assert flat == set(CORE) | set(FLAT_NOT_CORE), "classify the new flat module: core or not"


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_no_io_and_nothing_outside_the_core(module: str) -> None:
    source = (PACKAGE / f"{module}.py").read_text()
    assert core_violations(f"lifecycle.{module}", source, KNOWN) == []


def test_the_package_front_door_imports_only_the_core() -> None:
    source = (PACKAGE / "__init__.py").read_text()
    imports = imports_of(source, "lifecycle", is_package=True, known=KNOWN)
    assert [i for i in imports if forbidden_in_core(i)] == []
    own = {i.target for i in imports if i.target.startswith("lifecycle.")}
    assert own <= {f"lifecycle.{m}" for m in CORE}, own


def test_the_import_check_sees_function_level_and_relative_imports() -> None:
    """Non-vacuity: a core module that hides I/O inside a function or reaches an edge relatively."""
    source = (
        "from __future__ import annotations\n"
        "from collections.abc import Mapping\n"
        "from .wire import SessionFailure\n"
        "def later():\n"
        "    import socket\n"
        "    from .claude import text_of\n"
        "    from . import log\n"
        "    from .conformance import run_suite\n"
        "    if True:\n"
        "        import os.path\n"
        "class K:\n"
        "    import numpy\n"
    )
    found = core_violations("lifecycle.history", source, KNOWN)
    assert [f.split(": ", 1)[1] for f in found] == [
        "I/O module socket",
        "non-core lifecycle.claude",
        "non-core lifecycle.log",
        "non-core lifecycle.conformance",
        "I/O module os.path",
        "third-party numpy (not a runtime dependency of the core)",
    ]


@pytest.mark.parametrize("module", CORE)
def test_core_module_never_calls_open_print_or_dynamic_code(module: str) -> None:
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert calls & FORBIDDEN_CALLS == set()


_RUNTIME_PROBE = r"""
import builtins, importlib, importlib.util, json, sys

core = json.loads(sys.argv[1])
watched = {"lifecycle"} | {"lifecycle." + m for m in core}
seen = []
real_import = builtins.__import__


def spy(name, globals=None, locals=None, fromlist=(), level=0):
    importer = (globals or {}).get("__name__", "")
    if importer in watched:
        if level:
            package = (globals or {}).get("__package__") or importer.rpartition(".")[0]
            target = importlib.util.resolve_name("." * level + name, package)
        else:
            target = name
        seen.append([importer, target, [target + "." + f for f in fromlist or () if f != "*"]])
    return real_import(name, globals, locals, fromlist, level)


builtins.__import__ = spy
import lifecycle
for m in core:
    importlib.import_module("lifecycle." + m)
builtins.__import__ = real_import
print(json.dumps({"imports": seen, "modules": sorted(sys.modules)}))
"""


def test_importing_the_core_performs_no_io_import_at_run_time() -> None:
    """A fresh interpreter imports ``lifecycle`` and every core module, recording every import
    statement the core's own code executes (already-loaded modules included); then nothing
    outside the core may be in ``sys.modules``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    res = subprocess.run(
        [sys.executable, "-c", _RUNTIME_PROBE, json.dumps(CORE)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
    )
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert len(report["imports"]) > len(CORE), "the probe recorded nothing: it watches the wrong names"
    bad = []
    for importer, target, submodules in report["imports"]:
        for name in [target, *[s for s in submodules if s in KNOWN]]:
            why = forbidden_in_core(Import(importer, name, 0))
            if why is not None:
                bad.append(f"{importer}: {why}")
    assert bad == []
    loaded = set(report["modules"])
    edges = [m for m in loaded if any(m == e or m.startswith(e + ".") for e in NOT_CORE)]
    io_packages = [m for m in loaded if m.split(".")[0] in {"claude_agent_sdk", "acp", "structlog", "anyio"}]
    assert sorted(edges + io_packages) == [], "importing the core loaded these"
    assert {f"lifecycle.{m}" for m in CORE} <= loaded


_LAZY_PROBE = r"""
import json, sys
import lifecycle
from lifecycle import ApiRetry, PromptStarted, Result, SessionLedger

def loaded():
    return {
        "statemachine": any(m.split(".")[0] == "statemachine" for m in sys.modules),
        "session_flow": "lifecycle.session_flow" in sys.modules,
        "incident": "lifecycle.incident" in sys.modules,
        "record_schema": lifecycle.SessionFailure.__pydantic_complete__,
    }

steps = {"import": loaded()}
ledger = SessionLedger("s1", negotiated=True, epoch="e1")
ledger.process(PromptStarted(turn_id="t1"), lambda out: None)
ledger.process(Result(subtype="success", is_error=False, result="hi"), lambda out: None)
steps["healthy turn"] = loaded()
ledger.process(PromptStarted(turn_id="t2"), lambda out: None)
ledger.process(ApiRetry(attempt=1, max_retries=10, error_status=529, error="overloaded"), lambda out: None)
steps["first incident"] = loaded()
print(json.dumps(steps))
"""


def test_import_lifecycle_defers_the_machines_and_the_record_schema_to_first_use() -> None:
    """``import lifecycle`` stays small (issue 12): python-statemachine and the turn machine are
    imported when a ledger first asks the turn machine, the incident machine and the record's
    pydantic schema when the first incident is published. The answers still come from the real
    classes: each step shows the module it needed loaded."""
    res = subprocess.run([sys.executable, "-c", _LAZY_PROBE], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    steps = json.loads(res.stdout)
    off = {"statemachine": False, "session_flow": False, "incident": False, "record_schema": False}
    assert steps["import"] == off
    assert steps["healthy turn"] == {**off, "statemachine": True, "session_flow": True}
    assert steps["first incident"] == {k: True for k in off}


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
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert "sessionFailure" in res.stdout


def test_every_core_module_has_a_docstring_citing_its_idea() -> None:
    for module in CORE:
        doc = ast.get_docstring(ast.parse((PACKAGE / f"{module}.py").read_text()))
        assert doc and len(doc) > 40, module


# ------------------------------------------------------------------ no import cycle


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (module-level and function-level)."""
    sources = package_sources(root, package)
    known = frozenset(sources)
    graph: dict[str, set[str]] = {m: set() for m in sources}
    for module, (path, is_package) in sources.items():
        for imp in imports_of(path.read_text(), module, is_package=is_package, known=known):
            if imp.target in known and imp.target != module:
                graph[module].add(imp.target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_in_the_package() -> None:
    graph = import_graph(ROOT, "lifecycle")
    assert sum(len(v) for v in graph.values()) > 20, "the graph has (almost) no edges: the walk is broken"
    assert cycles(graph) == []


def test_the_cycle_check_finds_a_cycle_through_a_function_level_relative_import(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import x\n")
    (pkg / "c.py").write_text("import pkg.a\nx = 1\n")
    (pkg / "d.py").write_text("from . import c\n")  # c imports nothing of d: no cycle with it
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.a"] == {"pkg.sub.b"} and graph["pkg.sub.b"] == {"pkg.c"} and graph["pkg.d"] == {"pkg.c"}
    assert cycles(graph) == [["pkg.a", "pkg.c", "pkg.sub.b"]]


def workshop_imports(module: str, source: str, is_package: bool) -> list[str]:
    """The imports of ``workshop`` (the developer tools) in one module of the product."""
    found = imports_of(source, module, is_package=is_package, known=KNOWN)
    return [f"{module}:{i.line}: {i.target}" for i in found if i.target.split(".")[0] == "workshop"]


def test_the_product_never_imports_the_workshop() -> None:
    found = [f for m, (p, pkg) in SOURCES.items() for f in workshop_imports(m, p.read_text(), pkg)]
    assert found == []


def test_the_workshop_import_check_sees_a_hidden_import() -> None:
    """Non-vacuity: an import of the workshop inside a function."""
    source = "def later():\n    from workshop.explorer import Bounds\n    import workshop\n"
    assert workshop_imports("lifecycle.cli", source, False) == [
        "lifecycle.cli:2: workshop.explorer",
        "lifecycle.cli:3: workshop",
    ]


# ------------------------------------------------------------------ module size


def test_no_module_is_longer_than_the_limit() -> None:
    """Every module of the product and of the workshop (issue 48: the explorer's invariants and
    actions, the redaction rules, split by concern)."""
    workshop = package_sources(ROOT, "workshop")
    lengths = {m: len(p.read_text().splitlines()) for m, (p, _) in (SOURCES | workshop).items()}
    assert len(lengths) > len(CORE) and any(m.startswith("workshop.explorer.") for m in lengths)
    assert {m: n for m, n in lengths.items() if n > MAX_LINES} == {}


#: Modules under ``tests/`` still over :data:`MAX_LINES`, each with why (split below it: leave the list).
LONG_TEST_MODULES = {
    "tests/stateful_session.py": "one state machine whose rules share its state; edited on another branch",
}


def test_no_test_module_is_longer_than_the_limit() -> None:
    """Every test file and helper under ``tests/`` (issue 48), :data:`LONG_TEST_MODULES` aside."""
    sizes = {p.relative_to(ROOT).as_posix(): len(p.read_text().splitlines()) for p in (ROOT / "tests").rglob("*.py")}
    assert len(sizes) > 100 and "tests/test_design.py" in sizes
    assert sorted(p for p, n in sizes.items() if n > MAX_LINES) == sorted(LONG_TEST_MODULES)


# ------------------------------------------------------------------ self-contained


#: Spelled in parts so that this file does not contain what it looks for.
SHARED_MARKERS = ("..".join(["", "/shared"]), "/".join(["", "work", "shared"]), "LIFECYCLE_" + "SHARED")
SCANNED_SUFFIXES = (".py", ".sh", ".toml", ".cfg", ".ini", ".yml", ".yaml")


def repository_files() -> list[Path]:
    """Tracked files plus new files not ignored (others may be adding some); a plain walk
    without git."""
    try:
        res = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            timeout=60,
            check=True,
        )
        names = [n for n in res.stdout.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        skip_dirs = {".git", ".venv", "__pycache__", "node_modules"}
        names = [
            str(p.relative_to(ROOT))
            for p in ROOT.rglob("*")
            if p.is_file() and not skip_dirs & set(p.relative_to(ROOT).parts)
        ]
    return [ROOT / n for n in names if (ROOT / n).is_file()]


def scanned(path: Path) -> bool:
    rel = path.relative_to(ROOT)
    return path.suffix in SCANNED_SUFFIXES or rel.parts[0] == ".ci"


def mentions_shared(text: str) -> list[str]:
    return [m for m in SHARED_MARKERS if m in text]


def test_nothing_in_the_repository_reads_the_shared_folder() -> None:
    files = [p for p in repository_files() if scanned(p)]
    assert any(p.name == "run" for p in files) and len(files) > 50, "the scan sees too few files"
    hits = {
        str(p.relative_to(ROOT)): found for p in files if (found := mentions_shared(p.read_text(errors="replace")))
    }
    assert hits == {}


def test_the_shared_scan_recognises_every_form() -> None:
    text = 'Path(__file__).parents[2] / "..' + '/shared/fixtures"; "/work' + '/shared/x"; '
    text += 'os.environ["LIFECYCLE_' + 'SHARED"]'
    assert mentions_shared(text) == list(SHARED_MARKERS)
    assert mentions_shared("tests/fixtures/claude-cli-2.1.332") == []


# ------------------------------------------------------------------ the suite cannot shrink silently


EMPTY_CASES = "import pytest\n\n\n@pytest.mark.parametrize('case', [])\ndef test_case(case):\n    pass\n"


def _pytest_on(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_empty.py").write_text(EMPTY_CASES)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            str(ROOT / "pyproject.toml"),
            "--rootdir",
            str(tmp_path),
            *options,
            str(tmp_path / "test_empty.py"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )


def test_the_project_configures_empty_case_lists_to_fail() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert options["empty_parameter_set_mark"] == "fail_at_collect"


def test_an_empty_parametrized_case_list_fails_the_run(tmp_path: Path) -> None:
    res = _pytest_on(tmp_path)
    assert res.returncode != 0, res.stdout
    assert "Empty parameter set" in res.stdout and "skipped" not in res.stdout, res.stdout
    # non-vacuity: pytest's own default (skip) passes the same file, so the failure is the setting's
    default = _pytest_on(tmp_path, "-o", "empty_parameter_set_mark=skip")
    assert default.returncode == 0 and "1 skipped" in default.stdout, default.stdout


#: Ways a test can be skipped or excused. Spelled in parts so this file does not match itself.
SKIP_PATTERNS = tuple(
    re.compile(p)
    for p in (
        r"\bpytest\." + r"skip\(",
        r"\bimportor" + r"skip\(",
        r"\bmark\." + r"skip(if)?\b",
        r"\bpytest\." + r"xfail\(",
        r"\bmark\." + r"xfail\b",
        r"\bunittest\." + r"skip",
        r"\bSkip" + r"Test\b",
    )
)


def skip_sites(text: str) -> Iterator[int]:
    for n, line in enumerate(text.splitlines(), start=1):
        if any(p.search(line) for p in SKIP_PATTERNS):
            yield n


def test_no_test_is_skipped_or_excused() -> None:
    """A missing tool or extra fails its test with a clear message; nothing is skipped."""
    files = sorted((ROOT / "tests").rglob("*.py"))
    assert len(files) > 20
    hits = {str(p.relative_to(ROOT)): list(skip_sites(p.read_text())) for p in files}
    assert {k: v for k, v in hits.items() if v} == {}


def test_the_skip_scan_recognises_skips() -> None:
    sample = "\n".join(
        [
            "x = 1",
            "pytest." + "skip('no strace')",
            "mod = pytest.importor" + "skip('acp')",
            "@pytest.mark." + "skipif(True, reason='')",
            "@pytest.mark." + "xfail(strict=True)",
            "# fmt: skip",
        ]
    )
    assert list(skip_sites(sample)) == [2, 3, 4, 5]


# ------------------------------------------------------------------ the test harness in one place


def imported_test_modules(source: str) -> list[tuple[int, str]]:
    """Where ``source`` imports a test module (a module whose own name starts ``test_``), at any
    depth and in every form: ``import test_x``, ``import tests.test_x``, ``from test_x import n``,
    ``from .test_x import n``, ``from . import test_x``; (line, module) pairs."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            names = [base] if node.module else [f"{base}{alias.name}" for alias in node.names]
        else:
            continue
        out += [(node.lineno, name) for name in names if name.rpartition(".")[2].startswith("test_")]
    return out


#: Modules that still import a test module, and why: each entry must still be needed (checked).
#: None is left (issue 35, point 5): the stateful machine is tests/stateful_session.py.
AWAITING_A_MOVE: dict[str, list[str]] = {}


def test_no_module_under_tests_imports_a_test_module() -> None:
    """Shared helpers live in helper modules (tests/README.md names them), never in a test module
    another imports: a test file runs, and is read, alone."""
    files = sorted((ROOT / "tests").rglob("*.py"))
    assert len(files) > 60
    hits = {str(p.relative_to(ROOT)): [m for _, m in imported_test_modules(p.read_text())] for p in files}
    assert {k: v for k, v in hits.items() if v} == AWAITING_A_MOVE


def test_the_test_import_scan_recognises_every_form() -> None:
    sample = "\n".join(
        [
            "import json, test_fuzz",
            "from test_claude import EXPECTED",
            "from .test_coding_turn import Run",
            "from . import harness, test_mcp",
            "import tests.e2e.test_acp_e2e as e2e",
            "def later():",
            "    from .test_reference_oracle import pair",
            "from .harness import test_like_name",  # a name, not a module: allowed
            "import contest_results, testing",
            "text = 'import test_fuzz'",
        ]
    )
    assert imported_test_modules(sample) == [
        (1, "test_fuzz"),
        (2, "test_claude"),
        (3, ".test_coding_turn"),
        (4, ".test_mcp"),
        (5, "tests.e2e.test_acp_e2e"),
        (7, ".test_reference_oracle"),
    ]
