"""A real third-party ACP client drives ``lifecycle acp`` headless (issue 30, done-means 2): acpx
0.19.1 (npm, pinned; installed once per machine beside the reference adapter, in
``~/.cache/lifecycle-tests/acpx-0.19.1``) runs ``python -m lifecycle.agent`` as its raw agent
(``--agent``), which runs the real bundled Claude Code against the fake Anthropic API on 127.0.0.1.

Asserted on acpx's own output (its text format, what a user reads) and exit code: a one-shot
``exec`` answer; a Write tool call shown completed with its diff; ``--model sonnet`` accepted
(acpx checks it against the ``session/new`` answer) and reaching the API; an API error shown with
its reason; Ctrl-C (SIGINT to acpx's whole process group, as a terminal sends it) ending the turn
``[done] cancelled`` with exit code 0; and a persistent session (``sessions new`` / ``prompt`` /
``set-mode`` / ``prompt`` / ``sessions close``) with nothing of the run left running afterwards.
acpx's words (``[done] end_turn``, ``[tool] Write new.txt (completed)``, ``mode set: …``) are
acpx 0.19.1's, as it prints them for the reference adapter too.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .claude_cli import AgentWorkspace, cli_pids
from .fakeapi import FakeAnthropicAPI, MessageReply, StallReply, error_reply, text_reply
from .harness import Lanes, Script, tool_turn, tool_use
from .reference import cache_dir, node_binary

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

ACPX_VERSION = "0.19.1"


def ensure_acpx(timeout: float = 300) -> Path:
    """The ``acpx`` executable, installed with npm into the tests' cache if needed."""
    node_binary()  # Node.js >= 20 (AssertionError with an install hint otherwise)
    root = cache_dir().parent / f"acpx-{ACPX_VERSION}"
    binary = root / "node_modules" / ".bin" / "acpx"
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _version(binary) == ACPX_VERSION:  # installed (by an earlier run, or by .ci/run)
            return binary
        npm = shutil.which("npm")
        assert npm is not None, "npm not found: tests/e2e/test_acpx.py installs acpx with it"
        args = [npm, "install", "--no-save", "--no-audit", "--no-fund", "--loglevel=error"]
        proc = subprocess.run(
            [*args, f"acpx@{ACPX_VERSION}", "--prefix", str(root)], capture_output=True, text=True, timeout=timeout
        )
        assert proc.returncode == 0, f"npm install acpx failed:\n{proc.stderr[-2000:]}"
        assert _version(binary) == ACPX_VERSION, f"npm installed no acpx {ACPX_VERSION} in {root}"
        return binary


def _version(binary: Path) -> str | None:
    if not binary.is_file():
        return None
    proc = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    return proc.stdout.strip() if proc.returncode == 0 else None


@pytest.fixture(scope="module")
def acpx_bin() -> Path:
    return ensure_acpx()


class Acpx(AgentWorkspace):
    """One workspace, its fake API and acpx pointed at ``python -m lifecycle.agent``."""

    def __init__(self, root: Path, binary: Path, replies: list[Any] | Callable[[Path], list[Any]]) -> None:
        self._workspace(root)
        self.binary = binary
        self.api = FakeAnthropicAPI(replies(self.cwd) if callable(replies) else replies)
        self.api.start()
        self.env = self.agent_env(0)  # no retry: an API error is the turn's at once
        self.env["PATH"] = os.environ.get("PATH", "")

    def argv(self, *args: str) -> list[str]:
        agent = f"{sys.executable} -m lifecycle.agent"
        return [str(self.binary), "--cwd", str(self.cwd), "--approve-all", "--agent", agent, *args]

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(*args), env=self.env, cwd=self.cwd, capture_output=True, text=True, timeout=60)

    def models(self) -> list[str]:
        return [str(r.body.get("model")) for r in self.api.message_requests if isinstance(r.body, dict)]


@pytest.fixture
def make(tmp_path: Path, acpx_bin: Path) -> Iterator[Any]:
    made: list[Acpx] = []

    def build(*replies: Any, script: Callable[[Path], list[Any]] | None = None) -> Acpx:
        """An acpx run whose fake API answers ``replies`` (or ``script(cwd)``), in order."""
        run = Acpx(tmp_path / f"run{len(made)}", acpx_bin, script or list(replies))
        made.append(run)
        return run

    yield build
    for run in made:
        run.api.stop()


def nothing_left(run: Acpx) -> None:
    """No process of the run (Claude Code, the agent, acpx's queue owner) is running, within 10 s."""
    deadline = time.monotonic() + 10
    marker = str(run.config_dir).encode()
    while True:
        left = list(cli_pids(run.config_dir))
        left += [p for p in _pids_with(marker) if p not in left]
        if not left:
            return
        assert time.monotonic() < deadline, f"still running: {left}"
        time.sleep(0.05)


def _pids_with(marker: bytes) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if marker in (entry / "environ").read_bytes():
                    out.append(int(entry.name))
            except OSError:
                continue
    return out


# ------------------------------------------------------------------ one-shot exec


def test_exec_prints_the_answer(make: Any) -> None:
    run = make(text_reply("Hello from the fake API, through acpx."))
    proc = run.run("exec", "say hello")
    assert proc.returncode == 0, proc.stderr
    assert "Hello from the fake API, through acpx." in proc.stdout
    assert _turn_output(proc.stdout).rstrip().endswith("[done] end_turn"), proc.stdout
    nothing_left(run)


def test_exec_shows_a_write_with_its_diff(make: Any) -> None:
    def script(cwd: Path) -> list[Any]:
        write = {"file_path": str(cwd / "new.txt"), "content": "hi\n"}
        use = {"type": "tool_use", "id": "toolu_w", "name": "Write", "input": write}
        return [MessageReply([use], stop_reason="tool_use"), text_reply("Written.")]

    run = make(script=script)
    target = run.cwd / "new.txt"
    proc = run.run("exec", "write hi to new.txt")
    assert proc.returncode == 0, proc.stderr
    assert target.read_text() == "hi\n"
    assert "[tool] Write new.txt (completed)" in proc.stdout
    assert f"diff {target}" in proc.stdout
    assert "Written." in proc.stdout


def test_exec_with_a_model_claude_code_offers(make: Any) -> None:
    """acpx checks ``--model`` against the ``session/new`` answer's model option, then sets it."""
    run = make(text_reply("Answered by sonnet."))
    proc = run.run("--model", "sonnet", "exec", "say hi")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "did not advertise" not in proc.stderr
    assert "Answered by sonnet." in proc.stdout
    (model,) = run.models()
    assert "sonnet" in model, model


def test_an_api_error_is_shown_with_its_reason(make: Any) -> None:
    run = make(error_reply(429, "rate_limit_error", "e2e: this key sent too many requests", {"retry-after": "0"}))
    proc = run.run("exec", "say hi")
    assert proc.returncode != 0
    assert "e2e: this key sent too many requests" in proc.stdout
    assert "[error]" in proc.stdout


def test_ctrl_c_ends_the_turn_cancelled(make: Any) -> None:
    """SIGINT to acpx's process group (the agent is in it): acpx sends ``session/cancel``, the
    agent answers the prompt ``cancelled`` before it exits."""
    run = make(StallReply(120))
    proc = subprocess.Popen(
        run.argv("exec", "say hi"), env=run.env, cwd=run.cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True,
    )  # fmt: skip
    try:
        assert run.api.wait_for_requests(1, timeout=60), "the prompt never reached the API"
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 0, out + err
    assert _turn_output(out).rstrip().endswith("[done] cancelled"), out
    nothing_left(run)


# ------------------------------------------------------------------ a persistent session


def test_a_persistent_session_new_prompt_set_mode_close(make: Any) -> None:
    run = make(text_reply("First answer."), text_reply("Second answer."))
    created = run.run("sessions", "new")
    assert created.returncode == 0, created.stderr
    first = run.run("prompt", "hello")
    assert first.returncode == 0, first.stderr
    assert "First answer." in first.stdout and "[done] end_turn" in first.stdout
    mode = run.run("set-mode", "acceptEdits")
    assert mode.returncode == 0, mode.stderr
    assert "mode set: acceptEdits" in mode.stdout
    second = run.run("prompt", "again")
    assert second.returncode == 0, second.stderr
    assert "Second answer." in second.stdout
    # The second prompt went to the same Claude session: the API saw the first exchange again.
    assert "First answer." in str(run.api.message_requests[-1].body)
    closed = run.run("sessions", "close")
    assert closed.returncode == 0, closed.stderr
    nothing_left(run)



# ------------------------------------------------------------------ a background subagent's answer

SUB_PROMPT = "Read note.txt and report what it says (a background subagent)."


def _background_subagent(cwd: Path) -> Lanes:
    """The main conversation starts a background subagent that reads note.txt; Claude Code's task
    notification, once it ends, gets the report acpx must show (the reference's turn hold)."""
    (cwd / "note.txt").write_text("hello\n")
    agent = tool_use(
        "Agent", "toolu_bg", description="Read the note", prompt=SUB_PROMPT, subagent_type="general-purpose",
        run_in_background=True,
    )  # fmt: skip
    main = Script(tool_turn(agent), text_reply("A subagent is reading it."), then=text_reply("Nothing more to do."))
    main.add(tool_turn(agent), text_reply("A subagent is reading it."))  # the second run's
    sub = Script(
        tool_turn(tool_use("Read", "toolu_bg_read", file_path=str(cwd / "note.txt"))),
        text_reply("hello"),
        tool_turn(tool_use("Read", "toolu_bg_read2", file_path=str(cwd / "note.txt"))),
        text_reply("hello"),
    )
    report = text_reply("The subagent reports: the note says hello.")
    return Lanes(main, sub=sub, sub_prompt=SUB_PROMPT, notified=report)


def _turn_output(out: str) -> str:
    """acpx's output without the agent's ``_auth/status_update`` pushes: who is signed in is read
    at a prompt's start and pushed whenever that read ends (issue 52.4, as the reference does), so
    it may land after the turn's answer; it is the connection's, not the turn's."""
    return "\n\n".join(b for b in out.split("\n\n") if b.strip() != "[client] _auth/status_update (running)")


def test_a_background_subagents_answer_is_shown_in_exec_and_in_prompt_mode(make: Any) -> None:
    """Issue 50 (C.1): Claude Code runs the subagent in the background; the agent holds the prompt
    until the subagent has answered and Claude Code's follow-up turn has reported it, as the
    reference adapter 0.101.0 does (``Turn.deferredSettle``), so acpx, which stops listening at the
    prompt's answer (``exec`` stops the agent then), shows the report before ``[done] end_turn``."""
    run = make(script=_background_subagent)
    proc = run.run("exec", "have a background subagent read the note")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "The subagent reports: the note says hello." in out, out
    assert out.index("the note says hello") < out.rindex("[done] end_turn"), out
    assert _turn_output(out).rstrip().endswith("[done] end_turn"), out
    nothing_left(run)
    # A persistent session (acpx's queue owner keeps the agent): the same report, inside the turn.
    assert run.run("sessions", "new").returncode == 0
    second = run.run("prompt", "again, in the background")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "The subagent reports: the note says hello." in second.stdout, second.stdout
    assert _turn_output(second.stdout).rstrip().endswith("[done] end_turn"), second.stdout
    assert run.run("sessions", "close").returncode == 0
    nothing_left(run)
