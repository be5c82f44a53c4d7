"""Claims the documentation makes that no other test checked (the "Honest tests" issue).

Each test names the page and the claim it holds; a claim that cannot be tested was softened or
dropped in the page instead. Subprocesses run the installed code exactly as a user would.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PY = sys.executable


def _agent(name: str) -> Any:
    """``name`` from the reference agent's configuration module, wherever it lives today."""
    for module in ("lifecycle.agent.config", "lifecycle.agent"):
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AssertionError(f"lifecycle.agent has no {name}")


def _blocked(module: str, code: str) -> list[str]:
    """A ``python -c`` command line that runs ``code`` with ``import module`` failing."""
    return [PY, "-c", f"import sys; sys.modules[{module!r}] = None\n{code}"]


# ------------------------------------------------------------------ docs/acp-agent.md: lifecycle acp


def test_acp_help_is_the_documented_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/acp-agent.md shows ``lifecycle acp --help`` verbatim (at 80 columns)."""
    for name in list(os.environ):
        if name.startswith("LIFECYCLE_ACP_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("COLUMNS", "80")
    page = (DOCS / "acp-agent.md").read_text()
    block = re.search(r"```console\n\$ lifecycle acp --help\n(.*?)```", page, re.S)
    assert block is not None
    assert _agent("build_parser")().format_help() == block.group(1)


ENV_OPTIONS = [
    ("LIFECYCLE_ACP_MODEL", "claude-doc-model", "model", "claude-doc-model"),
    ("LIFECYCLE_ACP_CWD", "/srv/doc-project", "cwd", "/srv/doc-project"),
    ("LIFECYCLE_ACP_MAX_TURNS", "7", "max_turns", 7),
    ("LIFECYCLE_ACP_CLI", "/opt/claude/cli.js", "cli_path", "/opt/claude/cli.js"),
    ("LIFECYCLE_ACP_PERMISSION_MODE", "plan", "permission_mode", "plan"),
]


@pytest.mark.parametrize(("var", "value", "field", "expected"), ENV_OPTIONS)
def test_each_environment_variable_sets_its_option(
    var: str, value: str, field: str, expected: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/acp-agent.md: "Each flag but --cli-stderr also has an environment variable, read when the
    flag is not given"; the flag wins over the variable."""
    monkeypatch.setenv(var, value)
    parse, config = _agent("build_parser"), _agent("config_from_args")
    assert getattr(config(parse().parse_args([])), field) == expected
    flag = {"cli_path": "--cli-path", "max_turns": "--max-turns", "permission_mode": "--permission-mode"}.get(
        field, f"--{field}"
    )
    other = "default" if field == "permission_mode" else "3" if field == "max_turns" else "from-the-flag"
    given = getattr(config(parse().parse_args([flag, other])), field)
    assert given == (3 if field == "max_turns" else other)


def test_the_log_level_variable_and_the_documented_list_is_complete(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/acp-agent.md lists every ``LIFECYCLE_ACP_*`` variable the agent reads, and
    ``LIFECYCLE_ACP_LOG_LEVEL`` sets ``--log-level``."""
    monkeypatch.setenv("LIFECYCLE_ACP_LOG_LEVEL", "error")
    assert _agent("build_parser")().parse_args([]).log_level == "error"
    source = "".join(p.read_text() for p in (ROOT / "lifecycle" / "agent").glob("*.py"))
    in_code = set(re.findall(r"LIFECYCLE_ACP_[A-Z_]+", source))
    in_doc = set(re.findall(r"LIFECYCLE_ACP_[A-Z_]+", (DOCS / "acp-agent.md").read_text()))
    assert in_code == in_doc == {v for v, *_ in ENV_OPTIONS} | {"LIFECYCLE_ACP_LOG_LEVEL"}


@pytest.mark.parametrize("module", ["acp", "claude_agent_sdk"])
def test_lifecycle_acp_without_an_extra(module: str) -> None:
    """docs/acp-agent.md: without the extras ``lifecycle acp`` exits 1 with ``ModuleNotFoundError``
    naming the missing module on stderr, at the latest at ``session/new``; stdout stays JSON-RPC."""
    requests = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": str(ROOT), "mcpServers": []}},
    ]
    cmd = _blocked(module, "from lifecycle.cli import main; sys.exit(main(['acp']))")
    stdin = "".join(json.dumps(r) + "\n" for r in requests)
    res = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 1, res.stderr[-500:]
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError") and module in last
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in res.stdout.splitlines())


def test_the_agents_log_calls_pass_no_text() -> None:
    """docs/acp-agent.md: no log call of the agent passes a title or Claude's text (every call's
    event is a literal and no keyword names text)."""
    text_names = {"title", "text", "content", "description", "message", "prompt", "result", "errors", "explanation"}
    calls = 0
    for path in (ROOT / "lifecycle" / "agent").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "log"):
                continue
            if node.func.attr not in {"debug", "info", "warning", "error", "exception", "critical"}:
                continue
            calls += 1
            where = f"{path.name}:{node.lineno}"
            assert len(node.args) == 1 and isinstance(node.args[0], ast.Constant), where
            assert not {k.arg for k in node.keywords} & text_names, where
            assert all(k.arg is not None for k in node.keywords), where  # no **fields
    assert calls > 10  # the scan found the agent's log calls


def test_trace_log_carries_no_title() -> None:
    """docs/design.md ("Observing transitions") and docs/acp-agent.md: the transition log (the
    agent's own observer) carries ids, states and revisions, never a title."""
    res = subprocess.run(
        [PY, "-m", "lifecycle", "trace", "--example", "rate-limit-then-recovery", "--log"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert res.returncode == 0, res.stderr
    titles = set()
    for line in res.stdout.splitlines():
        for found in re.findall(r'"title":"(.*?)"', line):
            titles.add(json.loads(f'"{found}"'))
    assert len(titles) >= 2
    log = [json.loads(line) for line in res.stderr.splitlines() if line.strip()]
    assert any(e.get("event") == "incident.transition" for e in log)
    for title in titles:
        assert title not in res.stderr
        assert title.split(" · ")[0] not in res.stderr


# ------------------------------------------------------------------ docs/claude-code.md


def test_replay_via_sdk_without_the_claude_extra() -> None:
    """docs/claude-code.md: the core, the Claude edge and replay import without claude_agent_sdk;
    ``lifecycle replay --via-sdk`` then says which extra to install and exits 1."""
    code = (
        "import lifecycle, lifecycle.claude, lifecycle.cli.replay\n"
        "print('core + claude edge + replay imported without claude_agent_sdk')\n"
        "from lifecycle.cli.replay import cli_main; cli_main(['--via-sdk', '--session', 'x'])"
    )
    res = subprocess.run(_blocked("claude_agent_sdk", code), capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 1
    assert res.stdout == "core + claude edge + replay imported without claude_agent_sdk\n"
    assert res.stderr == "lifecycle replay --via-sdk needs the claude extra: pip install 'acp-lifecycle[claude]'\n"


def _replay_on_a_pty(extra_env: dict[str, str], *args: str) -> bytes:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | extra_env
    transcript = str(FIXTURES / "usage_limit_gateway.transcript.jsonl")
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [PY, "-m", "lifecycle", "replay", transcript, *args],
            stdout=slave,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=ROOT,
        )
    finally:
        os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert proc.wait(timeout=120) == 0
    return out


def test_replay_colours_only_on_a_terminal_and_not_with_no_color() -> None:
    """docs/claude-code.md: "Colours are used only on a terminal; set NO_COLOR or pass --color never
    to turn them off"."""
    assert b"\x1b[" in _replay_on_a_pty({})
    assert b"\x1b[" not in _replay_on_a_pty({"NO_COLOR": "1"})
    assert b"\x1b[" not in _replay_on_a_pty({}, "--color", "never")
    transcript = str(FIXTURES / "usage_limit_gateway.transcript.jsonl")
    piped = subprocess.run([PY, "-m", "lifecycle", "replay", transcript], capture_output=True, timeout=120, cwd=ROOT)
    assert piped.returncode == 0 and b"You've hit your" in piped.stdout and b"\x1b[" not in piped.stdout


def _legacy_turn(text: str, error: str) -> dict[str, Any]:
    from lifecycle import PromptStarted, SessionLedger
    from lifecycle.events import Assistant, Result

    sent: list[dict[str, Any]] = []
    ledger = SessionLedger("sess-1", negotiated=False, epoch="e1")
    ledger.process(PromptStarted(turn_id="t1"), lambda out: sent.append(out.to_jsonrpc()))
    for event in (
        Assistant(text=text, model="<synthetic>", error=error),
        Result(subtype="success", is_error=True, result=text),
    ):
        ledger.process(event, lambda out: sent.append(out.to_jsonrpc()))
    chunks = [m["params"]["update"]["content"]["text"] for m in sent if m.get("method") == "session/update"]
    # The prose stays unchanged in the transcript, except a login request (the -32000 is the prompt):
    # "run /login" in Claude's text (the reference adapter's isLoginRequiredText, written out).
    assert chunks == ([] if re.search(r"\brun /login\b", text, re.IGNORECASE) else [text])
    return sent[-1]["error"]


def _doc_error(page: str, marker: str) -> dict[str, Any]:
    for line in (DOCS / page).read_text().splitlines():
        if line.startswith("{") and '"error": {"code"' in line and marker in line:
            return dict(json.loads(line)["error"])
    raise AssertionError(f"no error line with {marker!r} in {page}")


def test_the_legacy_529_error_in_claude_code_md() -> None:
    """docs/claude-code.md: the legacy JSON-RPC error for the 529 run."""
    doc = _doc_error("claude-code.md", "529 Overloaded")
    text = doc["message"].removeprefix("Internal error: ")
    assert _legacy_turn(text, "server_error") == doc
    assert doc["data"] == {"errorKind": "server_error"}


def test_the_legacy_rate_limit_error_in_acp_agent_md() -> None:
    """docs/acp-agent.md: the legacy JSON-RPC error for the 429 run."""
    doc = _doc_error("acp-agent.md", "temporarily limiting")
    text = doc["message"].removeprefix("Internal error: ")
    assert _legacy_turn(text, "rate_limit") == doc


def test_authentication_is_minus_32000_without_data_and_run_login_is_a_login_failure() -> None:
    """docs/design.md ("Legacy clients"): authentication is ``-32000 "Authentication required"``
    with no data, and "run /login" in Claude's text is a login failure whatever the kind."""
    assert _legacy_turn("Invalid API key · Fix external API key", "authentication_failed") == {
        "code": -32000,
        "message": "Authentication required",
    }
    assert _legacy_turn("Login expired · Run /login to sign in again", "invalid_request") == {
        "code": -32000,
        "message": "Authentication required",
    }


# ------------------------------------------------------------------ docs/design.md: notices


def test_notice_identity_is_its_text_and_memory_is_bounded() -> None:
    """docs/design.md: same text as the notice just published reuses its id with a higher revision,
    other text is a new id, a newer notice never retires an older one (issue 21 rule 2: the 17th
    notice keeps the first active), and past ``MAX_ACTIVE_NOTICES`` (4096) the oldest entry is let
    go and counted, so the ledger never reports fewer than are active."""
    from lifecycle import SessionLedger
    from lifecycle.events import ModelFallback
    from lifecycle.ledger import MAX_ACTIVE_NOTICES

    assert MAX_ACTIVE_NOTICES == 4096
    sent: list[tuple[str, int]] = []

    def send(out: Any) -> None:
        sent.append((out.record.id, out.record.revision))

    ledger = SessionLedger("s1", negotiated=True, epoch="e1")
    ledger.process(ModelFallback(content="Switched to model A"), send)
    ledger.process(ModelFallback(content="Switched to model A"), send)
    ledger.process(ModelFallback(content="Switched to model B"), send)
    assert sent[0][0] == sent[1][0] and (sent[0][1], sent[1][1]) == (1, 2)
    assert sent[2][0] != sent[0][0] and sent[2][1] == 1
    assert {sent[0][0], sent[2][0]} <= {a.id for a in ledger.active}
    for i in range(20):
        ledger.process(ModelFallback(content=f"Switched to model {i}"), send)
    assert [a.id for a in ledger.active] == [f"s1:notice:e1:{n}" for n in range(1, 23)]  # all 22, the first too
    for i in range(20, 4096 + 3):
        ledger.process(ModelFallback(content=f"Switched to model {i}"), send)
    active = [a.id for a in ledger.active]
    assert len(active) == 4096 and ledger.untracked_notices == 5  # 4101 notices: 4096 held, 5 counted
    assert active[0] == "s1:notice:e1:6" and active[-1] == "s1:notice:e1:4101"


def test_a_lone_surrogate_in_an_id_part_becomes_the_replacement_character() -> None:
    """docs/design.md ("Ids"): finding 11."""
    from lifecycle.ids import turn_error_id

    assert turn_error_id("t\ud8001") == "t\ufffd1:error"


# ------------------------------------------------------------------ docs/security.md, docs/checking.md


def test_the_nightly_profile_raises_every_fuzz_targets_budget() -> None:
    """docs/security.md: the fuzz targets run at nightly size with ``FUZZ_PROFILE=nightly``: the
    settings each ``test_fuzz_*`` test really carries, read from the imported test module under
    each profile (not its source text)."""
    code = (
        "import sys, json; sys.path.insert(0, 'tests')\n"
        "import test_fuzz\n"
        "from fuzz import harness as h\n"
        "got = {n: (f._hypothesis_internal_use_settings.max_examples, f._hypothesis_internal_use_settings.derandomize)"
        " for n, f in vars(test_fuzz).items() if n.startswith('test_fuzz_')}\n"
        "print(json.dumps({'nightly': h.NIGHTLY, 'tests': got,"
        " 'targets': {k: [t.ci_examples, t.nightly_examples] for k, t in h.TARGETS.items()}}))"
    )

    def settings_under(profile: str) -> dict[str, Any]:
        env = {k: v for k, v in os.environ.items() if k not in ("FUZZ_PROFILE", "HYPOTHESIS_PROFILE")}
        if profile:
            env["FUZZ_PROFILE"] = profile
        res = subprocess.run([PY, "-c", code], capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
        assert res.returncode == 0, res.stderr[-800:]
        parsed: dict[str, Any] = json.loads(res.stdout)
        return parsed

    nightly, ci = settings_under("nightly"), settings_under("")
    assert (nightly["nightly"], ci["nightly"]) == (True, False)
    targets = nightly["targets"]
    assert len(targets) >= 12 and all(n > c for c, n in targets.values())
    assert len(nightly["tests"]) == len(targets)  # one test per target
    # under nightly every fuzz test runs a target's nightly budget, randomised; under ci its CI budget
    assert sorted(m for m, _ in nightly["tests"].values()) == sorted(n for _, n in targets.values())
    assert not any(d for _, d in nightly["tests"].values())
    assert sorted(m for m, _ in ci["tests"].values()) == sorted(c for c, _ in targets.values())


def test_the_checking_figures_are_a_fresh_runs(exploration: dict[str, Any]) -> None:
    """docs/checking.md: the explorer's figures (states, edges, depth; the invariants; the
    IncidentMachine and SessionFlow transitions fired; the targets reached) are what a fresh
    ``workshop check --json`` reports (this suite run's one run of it, conftest's
    ``exploration``), in the run shown and in "Results"; the seeded mutants' count is the
    mutants table's; the conformance count is the cases folder's."""
    report = exploration
    from workshop.explorer import Bounds

    assert report["ok"] and report["bounds"] == dataclasses.asdict(Bounds())  # the command's defaults
    page = (DOCS / "checking.md").read_text()
    assert f"explored {report['states']} states, {report['edges']} edges, depth {report['depth']}" in page
    assert f"every invariant holds in all {report['states']}" in page
    assert f"({report['edges']} edges)" in page
    # the summary lines of the run shown, recomputed here from the report's lists
    invariants = len(report["invariants"])
    assert not report["violations"] and f"invariants: all {invariants} hold in every state and on every edge" in page
    beyond, coverage = len(report["beyond_bounds"]), report["coverage"]
    required = len(coverage) - beyond
    fired = sum(1 for label, n in coverage.items() if n > 0 and label not in report["beyond_bounds"])
    assert fired == required - len(report["uncovered"])
    assert f"IncidentMachine transitions: {fired}/{required} fired ({beyond} more not reachable" in page
    flow = report["flow_coverage"]
    flow_fired = sum(1 for n in flow.values() if n > 0)
    assert f"SessionFlow transitions: {flow_fired}/{len(flow)} fired" in page
    targets = report["targets"]
    reached = sum(1 for depth in targets.values() if depth is not None)
    assert f"reachability targets: {reached}/{len(targets)} reached" in page
    # "Results": the same figures in prose
    results = " ".join(page.split("## Results", 1)[1].split())
    assert f"every declared `SessionFlow` transition ({len(flow)})" in results and flow_fired == len(flow)
    assert f"the bounds can reach ({fired} of {len(coverage)}) fires" in results
    assert f"all {len(targets)} targets are reached" in results and reached == len(targets)
    assert f"the {len(targets)} *reachability targets*" in " ".join(page.split())
    from workshop.mutants import MUTANTS

    assert f"workshop check --mutants: {len(MUTANTS)}/{len(MUTANTS)} seeded bugs caught" in page
    assert f"all {len(MUTANTS)} seeded bugs are caught" in " ".join(page.split())
    cases = len(list((ROOT / "tests" / "conformance" / "cases").glob("*.input.jsonl")))
    assert f"holds {cases} cases" in page and f"conformance: {cases} passed" in page


def test_every_current_mutant_count_in_the_docs_is_the_tables() -> None:
    """Wherever docs/checking.md, tests/README.md or README.md state how many seeded mutants there
    are today, the number is ``len(workshop.mutants.MUTANTS)`` (historical figures, "for the
    25 mutants just before ...", are not of this form)."""

    from workshop.mutants import MUTANTS

    patterns = (
        r"seeds (\d+) realistic bugs",
        r"(\d+)/\d+ seeded bugs caught",
        r"\d+/(\d+) seeded bugs caught",
        r"all (\d+) seeded bugs are caught",
        r"\(`EXPECTED_CAUGHT`\): all (\d+)",
        r"(\d+) seeded mutants",
    )
    found: dict[str, list[int]] = {}
    for doc in (DOCS / "checking.md", ROOT / "tests" / "README.md", ROOT / "README.md"):
        text = " ".join(doc.read_text().split())
        found[doc.name] = [int(n) for p in patterns for n in re.findall(p, text)]
    assert len(found["checking.md"]) >= 4, found  # the table, the run shown, the stateful test, "Results"
    assert {n for ns in found.values() for n in ns} == {len(MUTANTS)}, found


def test_readme_and_ci_run_the_same_test_command() -> None:
    """README.md's second command ends with the test command ``.ci/run`` calls, word for word."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("```sh", 1)[1].split("```", 1)[0]
    second = [line for line in block.splitlines() if line.strip() and not line.startswith("#")][1]
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if " -m pytest" in line]
    assert ci == [".venv/bin/python -m pytest -n 4 --dist loadfile"]
    assert second.endswith("&& " + ci[0])
