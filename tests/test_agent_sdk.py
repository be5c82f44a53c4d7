"""The one seam to the SDKs' private parts (issue 48, point 3; ``lifecycle.agent.sdk``).

* Nothing in ``lifecycle/`` but the seam touches a private name of the ACP SDK or the Claude SDK:
  read with ``ast`` (imports of private modules, private attributes of SDK objects and modules,
  ``getattr`` with a private name, the private state of a class built on an SDK class); a finding
  names the file and line. The checker is run on the code the seam replaced (non-vacuity).
* The seam's supported versions are ``pyproject.toml``'s pins.
* The start's check fails loudly: a wrong installed version, a missing private name, a missing
  piece of an SDK object's state and a missing private module each give :class:`SdkMismatch`
  naming the SDK, its installed version, the supported one and what is missing.
* What a user sees: ``lifecycle acp`` on a wrong SDK answers ``initialize``, then every request
  with an error naming the versions, and exits 1 once the client goes away.
"""

from __future__ import annotations

import ast
import asyncio
import importlib.metadata
import json
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

from lifecycle.agent import sdk
from lifecycle.agent.sdk import ACP_SDK, CLAUDE_SDK, SUPPORTED, SdkMismatch, satisfies

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "lifecycle"
SEAM = PACKAGE / "agent" / "sdk.py"
TRANSPORT_MODULE = "claude_agent_sdk._internal.transport.subprocess_cli"

#: The SDKs' top-level packages.
SDK_PACKAGES = frozenset({"claude_agent_sdk", "acp"})
#: Private names the agent reached for before the seam (issue 48), besides every private name the
#: seam itself resolves or reads.
KNOWN_REACHES = frozenset(
    {
        "_conn", "_handler", "_send_control_request", "_internal", "_build_command", "_find_cli", "_process",
        "_stdout_stream", "_stdin_stream", "_stderr_stream", "_stderr_task", "_query", "_exit_error", "_cli_path",
        "_ACTIVE_CHILDREN", "_resolve_session_file_path", "_handle_stderr", "_transport",
    }
)  # fmt: skip


def private_names() -> frozenset[str]:
    """Every private attribute name of an SDK object the agent may need: the known reaches and the
    private parts of every name the seam uses."""
    names = set(KNOWN_REACHES)
    for name in sdk.PRIVATE_NAMES:
        names.update(p for p in [*name.module.split("."), *name.path.split(".")] if p.startswith("_"))
    for _, _, attrs in sdk.INSTANCE_STATE:
        names.update(attrs)
    return frozenset(names)


# ------------------------------------------------------------------ nothing else reaches in


def _is_private_module(module: str) -> bool:
    parts = module.split(".")
    return parts[0] in SDK_PACKAGES and any(p.startswith("_") for p in parts[1:])


def _imported_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The local names bound to an SDK module, and to anything imported from an SDK or the seam."""
    modules: set[str] = set()
    from_sdk: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in SDK_PACKAGES:
                    modules.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.split(".")[0] in SDK_PACKAGES or module.endswith("sdk") or module == "lifecycle.agent.sdk":
                from_sdk.update(a.asname or a.name for a in node.names)
    return modules, from_sdk


def _owner(node: ast.Attribute) -> str | None:
    return node.value.id if isinstance(node.value, ast.Name) else None


_ATTR_CALLS = frozenset({"getattr", "hasattr", "setattr", "delattr"})


def reaches(source: str, private: frozenset[str]) -> list[tuple[int, str]]:
    """Where ``source`` touches a private name of an SDK: (line, what)."""
    tree = ast.parse(source)
    modules, from_sdk = _imported_names(tree)
    found: list[tuple[int, str]] = []
    sdk_classes: list[ast.ClassDef] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if _is_private_module(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if _is_private_module(node.module):
                found.append((node.lineno, f"from {node.module} import"))
            elif node.module.split(".")[0] in SDK_PACKAGES:
                found += [(node.lineno, f"from {node.module} import {a.name}") for a in node.names
                          if a.name.startswith("_") and a.name != "__version__"]
        elif isinstance(node, ast.ClassDef):
            bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
            if bases & from_sdk:
                sdk_classes.append(node)
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner = _owner(node)
            if owner in modules or (node.attr in private and owner not in ("self", "cls")):
                found.append((node.lineno, f".{node.attr}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) >= 2:
            name = node.args[1]
            if node.func.id in _ATTR_CALLS and isinstance(name, ast.Constant) and name.value in private:
                found.append((node.lineno, f"{node.func.id}(..., {name.value!r})"))
    for cls in sdk_classes:  # a subclass of an SDK class: the SDK's private state on self
        for node in ast.walk(cls):
            on_self = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
            if on_self and node.attr in private:  # type: ignore[union-attr]
                found.append((node.lineno, f"self.{node.attr} in {cls.name}"))
    return sorted(set(found))


def test_nothing_but_the_seam_touches_a_private_sdk_name() -> None:
    private = private_names()
    findings = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == SEAM:
            continue
        for line, what in reaches(path.read_text(), private):
            findings.append(f"{path.relative_to(ROOT)}:{line}: {what}")
    assert findings == [], "private SDK names outside lifecycle/agent/sdk.py:\n" + "\n".join(findings)


BEFORE_THE_SEAM = '''
import acp
from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport
from claude_agent_sdk._internal import message_parser
import claude_agent_sdk._internal.sessions
from claude_agent_sdk import ClaudeSDKClient, _private_helper

class Adopting(SubprocessCLITransport):
    async def connect(self):
        if self._process is not None:
            return
        self._cli_path = self._find_cli()
        self._own = 1

class Client(ClaudeSDKClient):
    def query(self):
        return self._query

class Agent:
    def on_connect(self, conn):
        self._conn = conn
        raw = getattr(conn, "_conn", None)
        raw._handler.route_request("logout")
        pair = acp._transport.memory_transport_pair()

async def effort(client):
    await client._query._send_control_request({})
'''


def test_the_checker_finds_what_the_seam_replaced() -> None:
    found = [what for _, what in reaches(BEFORE_THE_SEAM, private_names())]
    assert sorted(found) == sorted(
        [
            "from claude_agent_sdk._internal.transport.subprocess_cli import",
            "from claude_agent_sdk._internal import",
            "import claude_agent_sdk._internal.sessions",
            "from claude_agent_sdk import _private_helper",
            "self._process in Adopting",
            "self._cli_path in Adopting",
            "self._find_cli in Adopting",
            "self._query in Client",
            "getattr(..., '_conn')",
            "._handler",
            "._transport",
            "._query",
            "._send_control_request",
        ]
    )
    assert not any("_own" in w or "self._conn" in w for w in found)  # the class's own state


# ------------------------------------------------------------------ the pins


def _pins() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = [*project["dependencies"], *(d for ds in project["optional-dependencies"].values() for d in ds)]
    pins = {}
    for spec in specs:
        for name in (CLAUDE_SDK, ACP_SDK):
            if spec.replace(" ", "").startswith(name) and spec[len(name) :].lstrip()[:1] in "=<>!~":
                pins[name] = spec[len(name) :].replace(" ", "")
    return pins


def test_the_supported_versions_are_the_pyproject_pins() -> None:
    assert _pins() == dict(SUPPORTED)


def test_the_installed_sdks_are_supported_and_have_every_name() -> None:
    for name, spec in SUPPORTED.items():
        assert satisfies(importlib.metadata.version(name), spec), name
    sdk.check_versions()
    sdk.check_names()


@pytest.mark.parametrize(
    ("version", "spec", "ok"),
    [
        ("0.2.189", "==0.2.189", True),
        ("0.2.189.0", "==0.2.189", True),
        ("0.2.190", "==0.2.189", False),
        ("0.2.189rc1", "==0.2.189", False),
        ("0.12.1", ">=0.12,<0.13", True),
        ("0.12", ">=0.12,<0.13", True),
        ("0.13.0", ">=0.12,<0.13", False),
        ("0.11.9", ">=0.12,<0.13", False),
        ("1.0", ">=0.12,<0.13", False),
        ("dev", ">=0.12,<0.13", False),
    ],
)
def test_satisfies(version: str, spec: str, ok: bool) -> None:
    assert satisfies(version, spec) is ok


# ------------------------------------------------------------------ the loud failure


@pytest.fixture
def fresh_seam(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The seam with nothing resolved or checked yet."""
    monkeypatch.setattr(sdk, "_resolved", {})
    monkeypatch.setattr(sdk, "_checked", False)
    yield


def _versions(monkeypatch: pytest.MonkeyPatch, **installed: str | None) -> None:
    real = importlib.metadata.version

    def version(name: str) -> str:
        key = name.replace("-", "_")
        if key not in installed:
            return real(name)
        value = installed[key]
        if value is None:
            raise importlib.metadata.PackageNotFoundError(name)
        return value

    monkeypatch.setattr(importlib.metadata, "version", version)


def test_a_wrong_version_fails_naming_the_installed_and_the_supported(monkeypatch: pytest.MonkeyPatch) -> None:
    _versions(monkeypatch, claude_agent_sdk="0.2.189")  # the previous pin
    with pytest.raises(SdkMismatch) as caught:
        sdk.check_versions()
    (mismatch,) = caught.value.mismatches
    assert (mismatch.distribution, mismatch.installed, mismatch.supported) == (CLAUDE_SDK, "0.2.189", "==0.2.190")
    text = str(caught.value)
    assert "claude-agent-sdk 0.2.189 is installed" in text and "claude-agent-sdk==0.2.190" in text


def test_both_sdks_wrong_or_missing_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    _versions(monkeypatch, claude_agent_sdk="0.3.0", agent_client_protocol=None)
    with pytest.raises(SdkMismatch) as caught:
        sdk.check_versions()
    text = str(caught.value)
    assert "claude-agent-sdk 0.3.0 is installed" in text
    assert "agent-client-protocol is not installed" in text and "agent-client-protocol>=0.12,<0.13" in text


def test_a_missing_private_name_fails_naming_it(monkeypatch: pytest.MonkeyPatch, fresh_seam: None) -> None:
    monkeypatch.delattr(SubprocessCLITransport, "_build_command")
    with pytest.raises(SdkMismatch) as caught:
        sdk.check_names()
    (mismatch,) = caught.value.mismatches
    assert mismatch.distribution == CLAUDE_SDK and mismatch.installed == importlib.metadata.version(CLAUDE_SDK)
    assert mismatch.missing == (f"{TRANSPORT_MODULE}.SubprocessCLITransport._build_command",)
    assert "SubprocessCLITransport._build_command, missing from it" in str(caught.value)


def test_a_missing_private_module_fails_naming_it(monkeypatch: pytest.MonkeyPatch, fresh_seam: None) -> None:
    monkeypatch.setitem(sys.modules, "claude_agent_sdk._internal.message_parser", None)  # import fails
    with pytest.raises(SdkMismatch) as caught:
        sdk.check_names()
    assert caught.value.mismatches[0].missing == ("claude_agent_sdk._internal.message_parser.parse_message",)
    with pytest.raises(SdkMismatch, match=r"message_parser\.parse_message"):
        sdk.parse_message({"type": "user"})  # a first use without the check fails as loudly


def test_missing_object_state_fails_naming_it(monkeypatch: pytest.MonkeyPatch, fresh_seam: None) -> None:
    from acp.agent.connection import AgentSideConnection

    init = AgentSideConnection.__init__

    def without_conn(self: Any, *args: Any, **kw: Any) -> None:
        init(self, *args, **kw)
        del self._conn

    monkeypatch.setattr(AgentSideConnection, "__init__", without_conn)
    with pytest.raises(SdkMismatch) as caught:
        sdk.check_names()
    (mismatch,) = caught.value.mismatches
    assert mismatch.distribution == ACP_SDK and "AgentSideConnection()._conn" in mismatch.missing
    assert f"agent-client-protocol {importlib.metadata.version(ACP_SDK)} is installed" in str(caught.value)


def test_the_check_passes_once_and_is_kept(fresh_seam: None) -> None:
    sdk.check_names()
    assert sdk._checked
    assert set(sdk._resolved) == set(sdk.PRIVATE_NAMES)


def test_no_error_text_carries_a_path(monkeypatch: pytest.MonkeyPatch, fresh_seam: None) -> None:
    monkeypatch.delattr(SubprocessCLITransport, "_find_cli")
    _versions(monkeypatch, claude_agent_sdk="0.2.189")
    for check in (sdk.check_versions, sdk.check_names):
        with pytest.raises(SdkMismatch) as caught:
            check()
        text = str(caught.value)
        assert "site-packages" not in text and sys.prefix not in text and str(ROOT) not in text


# ------------------------------------------------------------------ what a user sees


def test_the_import_thread_hands_back_a_refusal_on_a_mismatch(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from lifecycle.agent import startup

    _versions(monkeypatch, agent_client_protocol="0.13.0")
    window = threading.Event()
    window.set()
    refusal = startup._import_agent(window, False)
    assert isinstance(refusal, startup._SdkRefusal)
    assert "agent-client-protocol 0.13.0 is installed" in str(refusal.mismatch)


_WRONG_SDK = """
import importlib.metadata, sys
real = importlib.metadata.version
importlib.metadata.version = lambda name: "0.3.0" if name == "claude-agent-sdk" else real(name)
from lifecycle.agent import cli_main
sys.exit(cli_main([]))
"""


def test_lifecycle_acp_on_a_wrong_sdk_answers_every_request_with_the_versions_and_exits_1(tmp_path: Path) -> None:
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {}},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}},
        {"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}},
    ]
    res = subprocess.run(
        [sys.executable, "-c", _WRONG_SDK],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert res.returncode == 1, res.stderr
    answers = [json.loads(line) for line in res.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2, 3]
    assert answers[0]["result"]["protocolVersion"] == 1  # initialize: answered before the SDKs load
    for answer in answers[1:]:
        message = answer["error"]["message"]
        assert answer["error"]["code"] == -32603
        assert "claude-agent-sdk 0.3.0 is installed; lifecycle acp supports claude-agent-sdk==0.2.190" in message
    logged = [json.loads(line) for line in res.stderr.splitlines() if line.startswith("{")]
    (mismatch,) = [e for e in logged if e.get("event") == "agent.sdk_mismatch"]
    assert (mismatch["sdk"], mismatch["installed"], mismatch["supported"]) == (CLAUDE_SDK, "0.3.0", "==0.2.190")
    assert mismatch["level"] == "error"


def test_a_refusal_stops_on_sigint_and_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    from lifecycle.agent import startup

    class Waiting:
        async def receive(self) -> dict[str, Any] | None:
            await asyncio.sleep(3600)
            return None

    async def go() -> None:
        interrupted = asyncio.Event()
        interrupted.set()
        mismatch = SdkMismatch((sdk.Mismatch(CLAUDE_SDK, "0.3.0", "==0.2.190"),))
        with pytest.raises(SdkMismatch):
            await startup._SdkRefusal(mismatch).refuse(Waiting(), None, interrupted)  # type: ignore[arg-type]

    asyncio.run(asyncio.wait_for(go(), 10))
