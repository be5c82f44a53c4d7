"""What a session request asks for (issue 50, part A), on the real bundled Claude Code through the
real ACP SDK client, the fake Anthropic API on 127.0.0.1 the only fake, side by side with the
reference adapter 0.101.0:

* a checked ``cwd``: ``session/new``, ``session/load``, ``session/resume`` and ``session/fork`` with
  a relative, a missing or a non-directory ``cwd`` are answered ``-32602`` at once, with the
  reference's message and ``data.cwd`` (its ``validateCwd``), and nothing is started or copied;
* the client's system prompt (the ACP ``systemPrompt``, unstable): advertised as the reference
  does, ``append`` adds to Claude Code's own prompt and ``override`` replaces it (what the fake
  API receives as ``system``), also on the very first ``session/new`` (the early launch is not
  used for it), and a prompt of a mode or block the agent cannot apply is refused with the
  reference's words; ``_meta.claudeCode.options.tools`` limits Claude Code's tools.

One agent of ours per test; the reference runs once per scenario.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import acp
import pytest
from acp import RequestError

from .claude_cli import AgentWorkspace
from .fakeapi import FakeAnthropicAPI, text_reply
from .harness import Client, Run, Script, agent, body_of, is_prompt_suggestion, run_async, select, system_text
from .oracle import reference_agent

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

#: An absolute path that exists on no machine running the tests (and that no redaction rule
#: touches: the reference's words come through both agents as they are).
MISSING = "/lifecycle-issue-50/no-such-folder"
RELATIVE = "project/sub"
#: The reference's messages (``validateCwd``, dist/acp-agent.js; ``RequestError.invalidParams``
#: prefixes "Invalid params: ").
RELATIVE_MESSAGE = f"Invalid params: `cwd` must be an absolute path, but received: {RELATIVE}"
MISSING_MESSAGE = f"Invalid params: `cwd` does not exist on the machine running the agent: {MISSING}"
FILE_MESSAGE = "Invalid params: `cwd` is not a directory: "


async def _error(conn: Any, method: str, params: dict[str, Any]) -> tuple[int, str, Any]:
    with pytest.raises(RequestError) as caught:
        await conn._conn.send_request(method, params)
    return caught.value.code, str(caught.value), caught.value.data


def _bad_cwd_requests(sid: str, a_file: str) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for cwd in (RELATIVE, MISSING, a_file):
        out.append(("session/new", {"cwd": cwd, "mcpServers": []}))
        out.append(("session/load", {"cwd": cwd, "sessionId": sid, "mcpServers": []}))
        out.append(("session/resume", {"cwd": cwd, "sessionId": sid}))
        out.append(("session/fork", {"cwd": cwd, "sessionId": sid}))
    # session/list filters by its cwd: only a relative one is refused (the reference's listSessions).
    out.append(("session/list", {"cwd": RELATIVE}))
    return out


def _children(pid: int) -> set[int]:
    """The live child processes of ``pid`` (Linux ``/proc``)."""
    out = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError), open(f"/proc/{name}/stat", "rb") as f:
                raw = f.read()
                fields = raw[raw.rindex(b")") + 2 :].split()
                if int(fields[1]) == pid and fields[0] != b"Z":
                    out.add(int(name))
    return out


def test_a_bad_cwd_is_refused_at_once_on_every_session_method_as_the_reference_does(tmp_path: Path) -> None:
    async def go() -> None:
        async with agent(tmp_path, Script(text_reply("Stored.")), select("reject")) as run:
            assert (await run.prompt("store me")).stop_reason == "end_turn"
            a_file = run.workspace.cwd / "a-file.txt"
            a_file.write_text("not a folder\n")
            transcripts = sorted(run.workspace.config_dir.rglob("*.jsonl"))
            children = _children(run.proc.pid)
            ours = [await _error(run.conn, m, p) for m, p in _bad_cwd_requests(run.sid, str(a_file))]
            # Nothing started, copied or kept for a refused request: no new Claude Code, no forked
            # transcript, and the session still answers.
            assert _children(run.proc.pid) <= children
            assert sorted(run.workspace.config_dir.rglob("*.jsonl")) == transcripts
            assert (await run.prompt("still here")).stop_reason == "end_turn"
            workspace, sid = run.workspace, run.sid
        for code, _message, _data in ours:
            assert code == -32602
        # Per cwd, four methods, the same answer (the reference's words, issue 50.1).
        relative, missing, not_a_dir = ours[0:4], ours[4:8], ours[8:12]
        assert ours[12] == (-32602, RELATIVE_MESSAGE, {"cwd": RELATIVE})  # session/list
        assert relative == [(-32602, RELATIVE_MESSAGE, {"cwd": RELATIVE})] * 4
        assert missing == [(-32602, MISSING_MESSAGE, {"cwd": MISSING})] * 4
        # A path under the temporary folder is echoed redacted, as every JSON-RPC error of the
        # agent is (docs/security.md; docs/parity/README.md "A checked cwd").
        assert not_a_dir == [(-32602, FILE_MESSAGE + "[redacted path]", {"cwd": "[redacted path]"})] * 4
        # Side by side: the reference answers the same requests (one run).
        async with reference_agent(workspace, Script()) as (conn, _frames):
            theirs = [await _error(conn, m, p) for m, p in _bad_cwd_requests(sid, str(a_file))]
        assert theirs[:8] == ours[:8]
        assert theirs[8:12] == [(-32602, FILE_MESSAGE + str(a_file), {"cwd": str(a_file)})] * 4
        assert theirs[12] == ours[12]

    run_async(go())


# ------------------------------------------------------------------ the client's system prompt

APPENDED = "Always end with the word MARMALADE-50."
OVERRIDE = "You are a terse assistant named OVERRIDE-50."


def _text(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


@contextlib.asynccontextmanager
async def _bare(tmp_path: Path, script: Script) -> AsyncIterator[Run]:
    """``python -m lifecycle.agent`` initialized as a legacy client, no session yet (the first
    ``session/new`` is the test's: the one the early launch is for)."""
    ws = AgentWorkspace()
    ws._workspace(tmp_path)
    api = FakeAnthropicAPI(script)
    ws.api = api
    api.start()
    run = Run(ws, api, Client(select("reject")))
    stderr = ws.stderr_path.open("w")
    try:
        async with acp.spawn_agent_process(
            run.client,  # type: ignore[arg-type]
            sys.executable,
            "-m",
            "lifecycle.agent",
            env=ws.agent_env(2),
            cwd=str(ws.cwd),
            transport_kwargs={"stderr": stderr},
            observers=[run.observe],
        ) as (conn, proc):
            run.conn, run.proc = conn, proc
            answer = await conn._conn.send_request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            # The reference's SYSTEM_PROMPT_CAPABILITY (dist/client-system-prompt.js): both modes.
            assert answer["agentCapabilities"]["sessionCapabilities"]["systemPrompt"] == {"mode": {"override": {}}}
            yield run
    finally:
        stderr.close()
        api.stop()


def _asked(run: Run, marker: str) -> dict[str, Any]:
    """The Messages request that carried the prompt ``marker``."""
    (request,) = [
        r for r in run.api.message_requests if not is_prompt_suggestion(r) and marker in str(body_of(r)["messages"])
    ]
    return request  # type: ignore[no-any-return]


async def _session(run: Run, **params: Any) -> str:
    answer = await run.conn._conn.send_request(
        "session/new", {"cwd": str(run.workspace.cwd), "mcpServers": [], **params}
    )
    return str(answer["sessionId"])


def test_the_clients_system_prompt_is_appended_or_replaces_claude_codes(tmp_path: Path) -> None:
    async def go() -> None:
        replies = Script(text_reply("One."), text_reply("Two."), text_reply("Three."), text_reply("Four."))
        async with _bare(tmp_path, replies) as run:
            # The first session/new (the early launch's): appended to Claude Code's own prompt.
            run.sid = await _session(run, systemPrompt={"mode": "append", "content": _text(APPENDED)})
            assert (await run.prompt("prompt-append")).stop_reason == "end_turn"
            appended = system_text(_asked(run, "prompt-append"))
            assert APPENDED in appended and "Claude Code" in appended  # Claude Code's own, and ours
            first = run.sid
            # Override: the client's text in place of Claude Code's.
            run.sid = await _session(run, systemPrompt={"mode": "override", "content": _text(OVERRIDE)})
            assert (await run.prompt("prompt-override")).stop_reason == "end_turn"
            replaced = system_text(_asked(run, "prompt-override"))
            assert OVERRIDE in replaced and "Claude Code" not in replaced and len(replaced) < 500
            # The reference's older extension: _meta.systemPrompt (a string replaces), and the
            # tools of _meta.claudeCode.options.
            meta = {"systemPrompt": OVERRIDE, "claudeCode": {"options": {"tools": ["Read", "Grep"]}}}
            run.sid = await _session(run, _meta=meta)
            assert (await run.prompt("prompt-meta")).stop_reason == "end_turn"
            request = body_of(_asked(run, "prompt-meta"))
            assert OVERRIDE in system_text(_asked(run, "prompt-meta"))
            # Of Claude Code's built-in tools only those two are offered (it adds a placeholder of its own).
            names = {t["name"] for t in request.get("tools") or []}
            assert {"Grep", "Read"} <= names and not names & {"Bash", "Write", "Edit", "Agent"}
            # session/resume takes one too (the reference passes it on load, resume and fork), but
            # Claude Code resumes a stored session with the system prompt it was started with: the
            # reference's resumed request is the same (the reference test below).
            resumed = {"mode": "override", "content": _text("RESUMED-50 is your name.")}
            params = {"cwd": str(run.workspace.cwd), "sessionId": first, "systemPrompt": resumed}
            await run.conn._conn.send_request("session/resume", params)
            run.sid = first
            assert (await run.prompt("prompt-resumed")).stop_reason == "end_turn"
            again = system_text(_asked(run, "prompt-resumed"))
            assert APPENDED in again and "RESUMED-50" not in again
            # Bad input: refused with the reference's words (dist/client-system-prompt.js) or, for
            # a shape its schema refuses, ours; nothing is created.
            cwd = str(run.workspace.cwd)
            bad = [
                {"mode": "replace", "content": _text("x")},
                {"mode": "append", "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]},
                "just a string",
                {"mode": "append", "content": _text("x" * 100_001)},
            ]
            answers = [
                await _error(run.conn, "session/new", {"cwd": cwd, "mcpServers": [], "systemPrompt": b}) for b in bad
            ]
        assert answers == [
            (-32602, "Invalid params: Unsupported systemPrompt mode: replace", {"systemPrompt": {"mode": "replace"}}),
            (
                -32602,
                "Invalid params: systemPrompt content must be text, but received a image block",
                {"systemPrompt": {"content": {"type": "image"}}},
            ),
            (
                -32602,
                "Invalid params: systemPrompt must be an object {mode, content}",
                {"systemPrompt": "not an object"},
            ),
            (
                -32602,
                "Invalid params: systemPrompt is 100001 bytes; at most 100000 are taken",  # docs/acp-agent.md
                {"systemPrompt": {"bytes": 100_001, "limit": 100_000}},
            ),
        ]

    run_async(go())


def test_the_reference_applies_a_system_prompt_and_refuses_one_the_same_way(tmp_path: Path) -> None:
    """The basis of the test above: the reference adapter, same requests, same observations."""

    async def go() -> None:
        ws = AgentWorkspace()
        ws._workspace(tmp_path)
        replies = Script(text_reply("One."), text_reply("Two."), text_reply("Three."))
        async with reference_agent(ws, replies) as (conn, _frames):
            cwd = str(ws.cwd)
            sids = []
            for mode, text, marker in (
                ("append", APPENDED, "prompt-append"),
                ("override", OVERRIDE, "prompt-override"),
            ):
                params = {"cwd": cwd, "mcpServers": [], "systemPrompt": {"mode": mode, "content": _text(text)}}
                sids.append(sid := (await conn._conn.send_request("session/new", params))["sessionId"])
                prompt = {"sessionId": sid, "prompt": _text(marker)}
                assert (await conn._conn.send_request("session/prompt", prompt))["stopReason"] == "end_turn"
            resumed = {"mode": "override", "content": _text("RESUMED-50 is your name.")}
            params = {"cwd": cwd, "sessionId": sids[0], "systemPrompt": resumed}
            await conn._conn.send_request("session/resume", params)
            prompt = {"sessionId": sids[0], "prompt": _text("prompt-resumed")}
            assert (await conn._conn.send_request("session/prompt", prompt))["stopReason"] == "end_turn"
            api = ws.api
            assert api is not None
            requests = [r for r in api.message_requests if not is_prompt_suggestion(r)]
            append = system_text(next(r for r in requests if "prompt-append" in str(body_of(r)["messages"])))
            override = system_text(next(r for r in requests if "prompt-override" in str(body_of(r)["messages"])))
            assert APPENDED in append and "Claude Code" in append
            assert OVERRIDE in override and "Claude Code" not in override and len(override) < 500
            again = system_text(next(r for r in requests if "prompt-resumed" in str(body_of(r)["messages"])))
            # A resumed session keeps the system prompt it was started with (Claude Code's resume).
            assert APPENDED in again and "RESUMED-50" not in again
            mode = {"mode": "replace", "content": _text("x")}
            params = {"cwd": cwd, "mcpServers": [], "systemPrompt": mode}
            assert await _error(conn, "session/new", params) == (
                -32602,
                "Invalid params: Unsupported systemPrompt mode: replace",
                {"systemPrompt": {"mode": "replace"}},
            )
            image = {"mode": "append", "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]}
            params = {"cwd": cwd, "mcpServers": [], "systemPrompt": image}
            assert await _error(conn, "session/new", params) == (
                -32602,
                "Invalid params: systemPrompt content must be text, but received a image block",
                {"systemPrompt": {"content": {"type": "image"}}},
            )

    run_async(go())
