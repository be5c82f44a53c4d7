"""``lifecycle trace`` and the public conformance cases (vendored in tests/conformance, see its README.md)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CONFORMANCE, documented_count

from lifecycle.cli.trace import run_trace

CASES = sorted(p.name.removesuffix(".input.jsonl") for p in (CONFORMANCE / "cases").glob("*.input.jsonl"))


def lifecycle_command() -> str:
    """The installed console script (what users and run.sh call), next to this interpreter."""
    exe = Path(sys.executable).parent / "lifecycle"
    found = str(exe) if exe.exists() else shutil.which("lifecycle")
    assert found, "the `lifecycle` console script is not installed (pip install -e .)"
    return found


def test_the_cases_are_exactly_the_documented_ones() -> None:
    """tests/README.md states how many cases there are; tests/conformance/README.md shows run.sh
    passing that many; every script has its expectations and vice versa."""
    assert len(CASES) == documented_count("conformance cases")
    expectations = sorted(p.name.removesuffix(".expect.json") for p in (CONFORMANCE / "cases").glob("*.expect.json"))
    assert expectations == CASES
    page = (CONFORMANCE / "README.md").read_text()
    assert f"conformance: {len(CASES)} passed, 0 failed" in page


@pytest.mark.parametrize("case", CASES)
def test_conformance_case_through_the_installed_command(case: str, tmp_path: Path) -> None:
    cases = CONFORMANCE / "cases"
    out = tmp_path / f"{case}.out"
    with out.open("wb") as fh:
        subprocess.run(
            [lifecycle_command(), "trace", str(cases / f"{case}.input.jsonl")], stdout=fh, check=True, timeout=60
        )
    check = subprocess.run(
        [sys.executable, str(CONFORMANCE / "check.py"), str(out), str(cases / f"{case}.expect.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_run_sh_counts_passes_and_failures_and_exits_by_them(tmp_path: Path) -> None:
    """run.sh, the script a user runs (tests/conformance/README.md), on a folder of two cases: one
    as vendored, and the same input with a wrong expectation. Every case already runs through the
    installed command above, so the script is checked on two, not all of them a second time."""
    case = CASES[0]
    cases = CONFORMANCE / "cases"
    for name in ("a-good", "b-wrong"):
        shutil.copy(cases / f"{case}.input.jsonl", tmp_path / f"{name}.input.jsonl")
    shutil.copy(cases / f"{case}.expect.json", tmp_path / "a-good.expect.json")
    wrong = json.loads((cases / f"{case}.expect.json").read_text())
    wrong["records"][0]["revision"] = 99  # the case publishes revision 1
    (tmp_path / "b-wrong.expect.json").write_text(json.dumps(wrong))
    env = {**os.environ, "LIFECYCLE_TRACE": f"{lifecycle_command()} trace"}
    run_sh = ["bash", str(CONFORMANCE / "run.sh"), str(tmp_path)]
    res = subprocess.run(run_sh, capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "FAIL b-wrong" in res.stdout and "FAIL a-good" not in res.stdout
    assert res.stdout.rstrip().endswith("conformance: 1 passed, 1 failed")
    (tmp_path / "b-wrong.input.jsonl").unlink()
    (tmp_path / "b-wrong.expect.json").unlink()
    res = subprocess.run(run_sh, capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0 and res.stdout.rstrip().endswith("conformance: 1 passed, 0 failed"), res.stdout


def _run(lines: list[str]) -> tuple[list[dict[str, object]], list[str]]:
    out: list[str] = []
    err: list[str] = []
    run_trace(lines, out.append, err.append)
    return [json.loads(x) for x in out], err


INIT = json.dumps(
    {
        "type": "adapter",
        "event": "initialize",
        "clientCapabilities": {"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}},
    }
)
SESSION = json.dumps({"type": "adapter", "event": "session", "sessionId": "s1"})
PROMPT = json.dumps({"type": "adapter", "event": "prompt", "turnId": "t1"})
RETRY = json.dumps(
    {
        "type": "system",
        "subtype": "api_retry",
        "attempt": 1,
        "max_retries": 2,
        "error_status": 529,
        "error": "overloaded",
    }
)


def test_malformed_lines_are_reported_with_their_number_and_skipped() -> None:
    msgs, err = _run(
        [
            INIT,
            "{not json",
            "[1, 2]",
            SESSION,
            '{"type": "assistant", "message": 5}',
            '{"type": "adapter", "event": "prompt"}',
            '{"type": "adapter", "event": "teleport"}',
            '{"type": "brand_new_type"}',
            PROMPT,
            RETRY,
        ]
    )
    assert [e.split(":")[0] for e in err] == ["line 2", "line 3", "line 5", "line 6", "line 7"]
    assert msgs[-1] == {
        "lifecycle": "active",
        "sessions": {"s1": [{"id": "t1:error", "recovery": "confirmed_attempt"}]},
    }
    assert len(msgs) == 2  # the warning, then the trailer


def test_sdk_lines_before_any_session_are_reported() -> None:
    msgs, err = _run([INIT, RETRY])
    assert err and "no session" in err[0]
    assert msgs == [{"lifecycle": "active", "sessions": {}}]


def test_deliver_fails_drops_the_send_and_the_ledger_does_not_advance() -> None:
    fails = json.dumps({"type": "adapter", "event": "deliver_fails", "count": 1})
    msgs, err = _run([INIT, SESSION, PROMPT, fails, RETRY, RETRY])
    assert err == []
    records = [m["params"]["update"]["_meta"]["jetbrains"]["air"]["sessionFailure"] for m in msgs[:-1]]  # type: ignore[index]
    assert [r["revision"] for r in records] == [1]  # the first send failed; no gap for the client


def test_the_bundled_example_runs() -> None:
    res = subprocess.run(
        [lifecycle_command(), "trace", "--example", "rate-limit-then-recovery"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    assert lines[-1] == {"lifecycle": "active", "sessions": {"s1": []}}
    assert any("result" in m and m["result"].get("_meta") for m in lines)  # type: ignore[union-attr]


def test_the_window_example_warns_updates_in_place_and_ends_silently() -> None:
    """issue 32 point 5: a 90 % five-hour warning, the same entry at 95 %, then the window's reset
    (a later ``resetsAt``, status ``allowed``) ends it with no record (spec: "Internal recovery")."""
    from lifecycle.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["trace", "--example", "rate-limit-window-then-reset"]) == 0
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    records = [
        m["params"]["update"]["_meta"]["jetbrains"]["air"]["sessionFailure"]
        for m in lines
        if m.get("params", {}).get("update", {}).get("sessionUpdate") == "session_info_update"
    ]
    assert records == [
        {"id": "s1:e1:1", "revision": 1, "category": "limit", "severity": "warning",
         "title": "You've used 90% of your 5-hour limit · resets 10:02 pm (UTC)", "actions": []},
        {"id": "s1:e1:1", "revision": 2, "category": "limit", "severity": "warning",
         "title": "You've used 95% of your 5-hour limit · resets 10:02 pm (UTC)", "actions": []},
    ]  # fmt: skip
    answers = [m["result"] for m in lines if "result" in m]
    assert answers == [{"stopReason": "end_turn"}] * 3  # the window settles no prompt
    assert lines[-1] == {"lifecycle": "active", "sessions": {"s1": []}}


def test_invalid_utf8_and_bom_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        b"\xef\xbb\xbf"
        + INIT.encode()
        + b"\r\n"
        + SESSION.encode()
        + b"\r\n\xff\xfe garbage\r\n"
        + PROMPT.encode()
        + b"\r\n"
        + RETRY.encode()
    )
    res = subprocess.run([lifecycle_command(), "trace", str(path)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0
    assert "line 3" in res.stderr
    assert len(res.stdout.splitlines()) == 2


def test_a_missing_file_is_a_clear_error() -> None:
    res = subprocess.run(
        [lifecycle_command(), "trace", "/nonexistent/x.jsonl"], capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 2 and "cannot open" in res.stderr


def test_trace_masks_credentials_in_legacy_prose_as_the_agent_does() -> None:
    """Credentials are masked in every text the adapter emits, legacy prose included (the one
    deliberate change to legacy text); the rest of the prose stays byte for byte."""
    key = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghij"
    text = f"API Error: 401 key {key} at /home/alice/project"
    lines = [
        '{"type":"adapter","event":"initialize","clientCapabilities":{}}',
        '{"type":"adapter","event":"session","sessionId":"s1"}',
        '{"type":"adapter","event":"prompt","turnId":"t1"}',
        json.dumps(
            {
                "type": "assistant",
                "message": {"model": "<synthetic>", "content": [{"type": "text", "text": text}]},
                "error": "rate_limit",
                "parent_tool_use_id": None,
            }
        ),
        '{"type":"result","subtype":"success","is_error":true,"result":"x"}',
    ]
    argv = [sys.executable, "-m", "lifecycle", "trace", "-"]
    res = subprocess.run(argv, input="\n".join(lines), capture_output=True, text=True, check=True)
    assert key not in res.stdout
    chunk, error = (json.loads(line) for line in res.stdout.splitlines()[:2])
    assert chunk["params"]["update"]["content"]["text"] == "API Error: 401 key [redacted key] at /home/alice/project"
    # The error's message is Claude's text redacted like a title (a private path too).
    assert error["error"]["message"] == "Internal error: API Error: 401 key [redacted key] at [redacted path]"
