"""A turn Claude Code stopped by itself is a stop, not a failure (issue 49.3, the ``Interrupt`` hook):
the real Claude Code CLI 2.1.337, ``python -m lifecycle.agent`` and the real ACP client, against
the fake Anthropic API.

The user's project settings hold a ``PermissionRequest`` hook that denies every ``Write`` with
``interrupt: true`` (Claude Code's hook output, https://code.claude.com/docs/en/hooks,
``PermissionRequestHookSpecificOutput`` in ``sdk.d.ts`` of ``@anthropic-ai/claude-agent-sdk``
0.3.337). Claude Code then ends the turn itself: it calls the ``Interrupt`` hook with ``source:
"system"``, ``reason: "permission_denied"``, and writes an ``error_during_execution`` result whose
``terminal_reason`` is ``aborted_tools`` (what CLI 2.1.337 printed when this was written). The
client never cancelled, and nothing failed: the prompt is answered ``cancelled`` (the stop reason
of a turn an interrupt ended, as for a ``success`` result with an ``aborted_*`` terminal reason)
with no failure record; the agent logs the interrupt's source and reason; the session goes on with
the same Claude Code. Then the client's own ``session/cancel`` while the model answers: Claude Code
reports ``source: "user"``, ``reason: "stop"``, ``via: "client"``, and the agent logs it as a turn
the client had cancelled.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from .cli_env import AgentWorkspace
from .fakeapi import StallReply, text_reply
from .harness import Script, agent, last_user_text, never, run_async, tool_turn, tool_use

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

#: The hook's answer: deny, and stop the turn (``decision.interrupt``).
DENY_AND_INTERRUPT = {
    "hookSpecificOutput": {
        "hookEventName": "PermissionRequest",
        "decision": {"behavior": "deny", "message": "Writes are blocked here", "interrupt": True},
    }
}


#: The file the client makes when it is asked (the hook waits for it: the question goes out first).
ASKED = ".asked"


def _project(cwd: Path) -> None:
    # Claude Code asks the client and runs the hook at once; the hook answers once the question is
    # out (or after 10 s, so a Claude Code that asks only after its hooks still ends the turn).
    wait = f"for i in $(seq 200); do [ -f {ASKED} ] && break; sleep 0.05; done"
    command = f"{wait}; echo '{json.dumps(DENY_AND_INTERRUPT)}'"
    hook = {"matcher": "Write", "hooks": [{"type": "command", "command": command}]}
    settings = {"hooks": {"PermissionRequest": [hook]}}
    (cwd / ".claude").mkdir(exist_ok=True)
    (cwd / ".claude" / "settings.json").write_text(json.dumps(settings))


def _shell(ws: AgentWorkspace, env: dict[str, str]) -> None:
    # The harness's environment has no PATH; Claude Code runs a command hook through a shell.
    env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
    env["SHELL"] = "/bin/sh"


def test_a_turn_a_permission_hook_interrupts_is_cancelled_without_a_failure(tmp_path: Path) -> None:
    async def scenario() -> None:
        script = Script(
            tool_turn(tool_use("Write", "toolu_w1", file_path="blocked.txt", content="x"), text="Writing it."),
            text_reply("Still here."),
        )
        async def asked_never_answers(params: dict[str, Any]) -> Any:
            (tmp_path / "project" / ASKED).touch()  # the harness's working directory
            return await never(params)

        # The client never answers: the hook decides, after the question went out.
        async with agent(tmp_path, script, asked_never_answers, project=_project, prepare=_shell) as run:
            first = await run.prompt("write the file")
            asked = list(run.client.questions)
            asked_ids = [m["id"] for m in run.incoming() if m.get("method") == "session/request_permission"]
            second = await run.prompt("are you there?")
            # The client's own cancel, while the model is still answering: Claude Code reports a
            # stop by the user, through the client.
            script.add(StallReply(60))
            third = asyncio.ensure_future(run.prompt("take your time"))
            while not any("take your time" in last_user_text(r) for r in run.api.message_requests):
                await asyncio.sleep(0.05)  # until the request is at the model
            await run.conn.cancel(session_id=run.sid)
            cancelled = await third
            while not [e for e in run.workspace.log() if e.get("event") == "turn.interrupted"][1:]:
                await asyncio.sleep(0.05)  # until Claude Code's hook call came
            log = run.workspace.log()
            cwd = run.workspace.cwd
        # Claude Code asked the client while the hook ran; the hook's denial won: Claude Code
        # withdrew its question, so the client's is withdrawn (``$/cancel_request``); no file.
        assert [q["toolCall"]["toolCallId"] for q in asked] == ["toolu_w1"], asked
        withdrawn = [m for m in run.incoming() if m.get("method") == "$/cancel_request"]
        assert [m["params"]["requestId"] for m in withdrawn] == [asked_ids[0]], (withdrawn, asked_ids)
        assert not (cwd / "blocked.txt").exists()
        # Stopped, not failed: ``cancelled``, no record on the answer nor in the transcript.
        assert first.stop_reason == "cancelled", first
        assert run.records() == [], run.records()
        # The interrupt, as Claude Code reported it, in the log (states only).
        # (the client had not cancelled: Claude Code stopped the turn itself).
        interrupts = [(e["source"], e["reason"], e["cancelled"], isinstance(e["turn_id"], str))
                      for e in log if e.get("event") == "turn.interrupted"]  # fmt: skip
        assert interrupts[0] == ("system", "permission_denied", False, True), interrupts
        settled = [e["reason"] for e in log if e.get("event") == "turn.interrupted_settled"]
        assert settled == ["permission_denied"], settled
        # The session goes on, with the same Claude Code (no restart).
        assert second.stop_reason == "end_turn" and "Still here." in run.texts()
        # The client's cancel: its reason logged, the answer ``cancelled`` as always.
        assert cancelled.stop_reason == "cancelled"
        reported = [(e["source"], e["reason"], e["via"], e["cancelled"])
                    for e in log if e.get("event") == "turn.interrupted"]  # fmt: skip
        assert reported[1:] == [("user", "stop", "client", True)], reported
        assert len([e for e in log if e.get("event") == "runtime.start"]) == 1, log

    run_async(scenario())
