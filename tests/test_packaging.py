"""What ships (issue 33): the distribution's name and extras, the ACP registry entry (``agent.json``
against the registry's own schema, vendored in ``tests/fixtures/acp-registry/``), its icon, the
README's editor configuration, and the product wheel built from this checkout: the core, the edges,
the agent, the CLI and the conformance kit (``lifecycle/conformance/``), and none of the developer
tools (the repository's ``workshop/`` package).

Rules: expected names are literals (the name chosen in issue 33, the registry's field rules, its
``FORMAT.md`` command ``uvx <package> [args]``); the wheel is built from a copy of the checkout
(``pip wheel --no-deps``), never in it, and read as a zip; its CLI runs from the unpacked wheel
in a fresh interpreter whose import path holds nothing of this checkout.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import jsonschema
import pytest
from product_wheel import build_wheel

ROOT = Path(__file__).resolve().parent.parent
REGISTRY = ROOT / "tests" / "fixtures" / "acp-registry"
#: sha256 of agentclientprotocol/registry's agent.schema.json at the commit its README names
SCHEMA_SHA256 = "9ce5be43c7502d941b5f0e708df193c642b98791b19a357cf5a56698e1627d91"
NAME = "acp-lifecycle"  # issue 33: `lifecycle` on PyPI is someone else's package
SVG = "{http://www.w3.org/2000/svg}"
#: the developer tools, in the source tree only (docs/checking.md, docs/performance.md): the
#: top-level ``workshop`` package, and the folder they lived in before it
WORKSHOP = ("workshop/", "lifecycle/tools/")
#: the product command's commands: each runs from an installed wheel (the developer tools are
#: ``python -m workshop``'s)
COMMANDS = ("acp", "conformance", "proxy", "replay", "schema", "trace")
#: what the product wheel must hold (issue 33, point 2): one file of each part
PRODUCT = (
    "lifecycle/__init__.py",
    "lifecycle/ledger.py",
    "lifecycle/py.typed",
    "lifecycle/claude/__init__.py",
    "lifecycle/acp/__init__.py",
    "lifecycle/agent/server.py",
    "lifecycle/agent/__main__.py",
    "lifecycle/cli/__init__.py",
    "lifecycle/cli/trace.py",
    "lifecycle/cli/replay.py",
    "lifecycle/examples/rate-limit-then-recovery.jsonl",
    "lifecycle/conformance/__init__.py",
    "lifecycle/proxy/relay.py",
)


def _pyproject() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        project: dict[str, Any] = tomllib.load(f)["project"]
    return project


def _entry() -> dict[str, Any]:
    entry: dict[str, Any] = json.loads((ROOT / "agent.json").read_text(encoding="utf-8"))
    return entry


def _validator() -> jsonschema.Draft7Validator:
    schema = json.loads((REGISTRY / "agent.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)


# ------------------------------------------------------------------ the name and the registry entry


def test_the_vendored_schema_is_the_registry_file() -> None:
    assert hashlib.sha256((REGISTRY / "agent.schema.json").read_bytes()).hexdigest() == SCHEMA_SHA256
    assert SCHEMA_SHA256 in (REGISTRY / "README.md").read_text(encoding="utf-8")


def test_the_distribution_name_console_script_and_agent_extra() -> None:
    project = _pyproject()
    assert project["name"] == NAME
    assert project["scripts"][NAME] == "lifecycle.cli:main"
    # one extra gives the agent: both SDKs, through the claude and acp extras
    assert project["optional-dependencies"]["agent"] == [f"{NAME}[claude,acp]"]
    deps = " ".join(project["dependencies"])
    assert "claude-agent-sdk" not in deps and "agent-client-protocol" not in deps  # the core stays lean


def test_agent_json_is_a_valid_registry_entry() -> None:
    validator = _validator()
    entry = _entry()
    assert sorted(e.message for e in validator.iter_errors(entry)) == []
    # the schema is not vacuous: the registry's rules reject these
    for broken in (
        {**entry, "id": "Acp_Lifecycle"},
        {**entry, "version": "one"},
        {**entry, "distribution": {}},
        {**entry, "distribution": {"uvx": {"package": NAME, "cmd": NAME}}},
        {k: v for k, v in entry.items() if k != "description"},
    ):
        assert list(validator.iter_errors(broken)), broken


def test_agent_json_names_this_distribution_at_its_version() -> None:
    project, entry = _pyproject(), _entry()
    assert entry["version"] == project["version"]
    assert entry["license"] == project["license"] == "MIT"
    assert re.fullmatch(r"https://\S+", entry["repository"])
    # FORMAT.md: the registry runs `uvx <package> [args]`
    assert entry["distribution"] == {"uvx": {"package": f"{NAME}[agent]=={project['version']}", "args": ["acp"]}}


def test_the_icon_is_a_16x16_svg() -> None:
    root = ElementTree.parse(ROOT / "icon.svg").getroot()
    assert root.tag == f"{SVG}svg"
    assert (root.get("width"), root.get("height"), root.get("viewBox")) == ("16", "16", "0 0 16 16")
    assert len(list(root)) > 0  # something is drawn


def test_the_readme_adds_the_agent_to_zed_as_the_registry_runs_it() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", readme, re.S)
    zed = [json.loads(b) for b in blocks if '"agent_servers"' in b]
    assert len(zed) == 1, "README.md: one Zed `agent_servers` block"
    uvx = _entry()["distribution"]["uvx"]
    package = uvx["package"].split("==")[0]
    assert list(zed[0]["agent_servers"].values()) == [{"command": "uvx", "args": [package, *uvx["args"]]}]
    assert f"uvx '{package}' {' '.join(uvx['args'])}" in readme
    assert len(readme.splitlines()) <= 250


# ------------------------------------------------------------------ the product wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def test_the_wheel_holds_the_product_and_no_workshop(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = z.read("acp_lifecycle-0.1.0.dist-info/METADATA").decode()
        entry_points = z.read("acp_lifecycle-0.1.0.dist-info/entry_points.txt").decode()
    assert [p for p in PRODUCT if p not in names] == []
    assert [n for n in names if n.startswith(WORKSHOP)] == []
    assert [n for n in names if "/data/" in n or n.endswith((".pyc", "__pycache__"))] == []
    assert "Name: acp-lifecycle\n" in meta
    assert "Provides-Extra: agent\n" in meta
    assert "acp-lifecycle = lifecycle.cli:main" in entry_points


def _run_unpacked(wheel: Path, tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter whose import path is the unpacked wheel, then the standard
    library and this venv's site-packages (the core's dependencies), with nothing of this checkout
    and the agent's SDKs blocked."""
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(unpacked)
    prelude = (
        "import sys\n"
        f"sys.path[:] = [p for p in sys.path if p and (p.startswith(sys.prefix) or not p.startswith({str(ROOT)!r}))]\n"
        f"sys.path.insert(0, {str(unpacked)!r})\n"
        "for blocked in ('claude_agent_sdk', 'acp', 'orjson'):\n"
        "    sys.modules[blocked] = None\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-c", prelude + code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_unpacked_wheel_imports_the_core_and_the_kit_without_the_sdks(wheel: Path, tmp_path: Path) -> None:
    res = _run_unpacked(
        wheel,
        tmp_path,
        "import lifecycle, lifecycle.conformance\n"
        "print(lifecycle.__file__)\n"
        "try:\n"
        "    import workshop.explorer\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc.name)\n",
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.splitlines() == [
        str(tmp_path / "unpacked" / "lifecycle" / "__init__.py"),
        "workshop",
    ]


def test_the_wheels_command_lists_only_commands_that_run_installed(wheel: Path, tmp_path: Path) -> None:
    res = _run_unpacked(
        wheel,
        tmp_path,
        "from lifecycle.cli import build_parser\n"
        "sub = next(a for a in build_parser()._actions if a.dest == 'command')\n"
        "print(' '.join(sorted(sub.choices)))\n",
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split() == list(COMMANDS)


@pytest.mark.parametrize("command", ["check", "diagrams", "bench", "mutants"])
def test_a_developer_tool_is_no_command_of_the_wheel(wheel: Path, tmp_path: Path, command: str) -> None:
    res = _run_unpacked(wheel, tmp_path, f"from lifecycle.cli import main\nsys.exit(main([{command!r}]))\n")
    assert (res.returncode, res.stdout) == (2, "")
    assert f"invalid choice: {command!r}" in res.stderr


def test_the_unpacked_wheel_runs_an_agent_behind_the_proxy(wheel: Path, tmp_path: Path) -> None:
    # issue 53.1: `lifecycle proxy -- AGENT` from an installed wheel; the proxy exits with its agent
    res = _run_unpacked(
        wheel, tmp_path, "from lifecycle.cli import main\nsys.exit(main(['proxy', '--', 'sh', '-c', 'exit 3']))\n"
    )
    assert (res.returncode, res.stdout, res.stderr) == (3, "", "")


def test_the_unpacked_wheel_runs_the_bundled_example(wheel: Path, tmp_path: Path) -> None:
    res = _run_unpacked(
        wheel,
        tmp_path,
        "from lifecycle.cli import main\nsys.exit(main(['trace', '--example', 'rate-limit-then-recovery']))\n",
    )
    assert res.returncode == 0, res.stderr[-2000:]
    # README.md's example output ends with the trailer line
    assert res.stdout.splitlines()[-1] == '{"lifecycle":"active","sessions":{"s1":[]}}'


# ------------------------------------------------------------------ the registry's initialize, in process


def test_both_initialize_paths_give_the_registry_validator_terminal_logins() -> None:
    """The fast ``initialize`` (raw JSON) and the SDK handler answer the registry validator's
    capabilities (``tests/e2e/test_installed_agent.py``: ``VALIDATOR_INITIALIZE``) alike, with the
    reference adapter's ``_meta["terminal-auth"]`` labels; the installed-agent test checks the rest."""
    import asyncio

    from acp.schema import InitializeRequest

    from lifecycle.agent import ClaudeAcpAgent
    from lifecycle.agent.startup import initialize_result

    caps = {"terminal": True, "fs": {"readTextFile": True, "writeTextFile": True}}
    caps["_meta"] = {"terminal_output": True, "terminal-auth": True}
    params = {"protocolVersion": 1, "clientInfo": {"name": "ACP Registry Validator", "version": "1.0.0"}}
    params["clientCapabilities"] = caps
    fast = initialize_result(params)
    assert fast is not None
    req = InitializeRequest.model_validate(params)
    sdk = asyncio.run(
        ClaudeAcpAgent().initialize(
            protocol_version=1, client_capabilities=req.client_capabilities, client_info=req.client_info
        )
    )
    methods = sdk["authMethods"]  # the slow path answers JSON too (the SDK's model drops systemPrompt)
    assert methods == fast[0]["authMethods"]
    assert [(m["id"], m.get("type"), m.get("_meta", {}).get("terminal-auth", {}).get("label")) for m in methods] == [
        ("claude-ai-login", "terminal", "Claude Login"),
        ("console-login", "terminal", "Anthropic Console Login"),
        ("claude-login", None, None),
    ]
    assert methods[0]["_meta"]["terminal-auth"]["args"] == [
        "-m",
        "lifecycle.agent",
        "--cli",
        "auth",
        "login",
        "--claudeai",
    ]
