"""A background subagent's permission question after the prompt that launched it has ended
(issue 51.5, and 51.1's ``requires_action``): it is asked, on the subagent's child session, as the
reference adapter 0.101.0 asks it (its ``canUseTool`` asks whatever the turn; ``toolUseOwner``
sends a subagent's request to its child session; ``awaitingUser`` reports the child
``requires_action`` while it waits). Before, ours refused it unasked and the subagent was told
"The user doesn't want to proceed…" of a question the user never saw.

One agent (CI time), the real Claude Code and the real ACP client; the client declares
``subagents: {}`` and AIR's ``backgroundSubagents`` (it keeps listening after an answer, so its
prompts are not held for their subagents: the subagent's question comes after the answer). The
fake API holds each subagent's first request until the test has the prompt's answer.

1. The user allows it: the question goes to the child's session, shows exactly the command that
   will run, the child is ``requires_action`` while it waits and ``running`` after; the command
   runs.
2. The user never answers; a ``session/cancel`` of the session (no prompt runs) withdraws it
   (``$/cancel_request``) and answers it denied: the command does not run, the subagent is told
   so and goes on.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from acp.connection import StreamDirection
from acp_schema import conforms

from lifecycle.agent.question_routes import LATE_WITHDRAWN_MESSAGE

from .fakeapi import RequestRecord, text_reply
from .harness import NOTIFICATION, Run, Script, agent, last_user_text, run_async, tool_turn, tool_use

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

ALLOWED = "Write allowed.txt (a background subagent asks late)."
WITHDRAWN = "Write withdrawn.txt (a background subagent whose question is withdrawn)."
CAPS = {"subagents": {}, "_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["backgroundSubagents"]}}}}


def response_index(run: Run, nth: int = 0) -> int:
    """The wire position of the ``nth`` prompt response the client received."""
    return [
        i
        for i, (d, m) in enumerate(run.frames)
        if d == StreamDirection.INCOMING and isinstance(m.get("result"), dict) and "stopReason" in m["result"]
    ][nth]


async def until(check: Any, what: Any, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what()
        await asyncio.sleep(0.05)


def agent_call(tool_id: str, prompt: str) -> Any:
    """A background subagent (Claude Code 2.1.337's ``Agent`` input)."""
    launch = {"description": "Write a file", "prompt": prompt, "subagent_type": "general-purpose"}
    return tool_turn(tool_use("Agent", tool_id, **launch, run_in_background=True))


def bash(tool_id: str, command: str) -> Any:
    return tool_turn(tool_use("Bash", tool_id, command=command, description="Write the file"))


def test_a_background_subagents_late_question_is_asked_on_its_child_session(tmp_path: Path) -> None:
    released = {ALLOWED: threading.Event(), WITHDRAWN: threading.Event()}
    main = Script(
        agent_call("toolu_late_allowed", ALLOWED),
        text_reply("A subagent will write it."),
        agent_call("toolu_late_withdrawn", WITHDRAWN),
        text_reply("Another subagent will write it."),
    )
    subs = {
        ALLOWED: Script(bash("toolu_late_bash1", "echo late > allowed.txt"), text_reply("Written.")),
        WITHDRAWN: Script(bash("toolu_late_bash2", "echo late > withdrawn.txt"), text_reply("I was not allowed.")),
    }

    def api(request: RequestRecord) -> Any:
        if NOTIFICATION in last_user_text(request):
            return text_reply("The subagent reported.")
        first = json.dumps(((request.body or {}).get("messages") or [{}])[0])
        for prompt, script in subs.items():
            if prompt in first:
                released[prompt].wait(60)  # the prompt's answer first: the question comes late
                return script(request)
        return main(request)

    def answer(params: dict[str, Any]) -> Any:
        if "allowed.txt" in json.dumps(params["toolCall"]):
            return {"outcome": {"outcome": "selected", "optionId": "allow-once"}}
        return asyncio.sleep(3600)  # never answered: the session withdraws it

    async def go() -> None:
        async with agent(tmp_path, api, answer, raw_caps=CAPS) as run:  # type: ignore[arg-type]
            cwd = run.workspace.cwd

            def child_frames(start: int) -> list[tuple[int, dict[str, Any]]]:
                return [
                    (i, m)
                    for i, (d, m) in enumerate(run.frames)
                    if i >= start and d == StreamDirection.INCOMING and m.get("method") == "session/update"
                    and m["params"]["update"]["sessionUpdate"] == "subagent_update"
                ]  # fmt: skip

            def question_index(tool_id: str) -> int:
                return next(
                    i
                    for i, (d, m) in enumerate(run.frames)
                    if d == StreamDirection.INCOMING and m.get("method") == "session/request_permission"
                    and m["params"]["toolCall"]["toolCallId"] == tool_id
                )  # fmt: skip

            # 1. Allowed: asked on the child, after the prompt's answer; the command ran.
            start = len(run.frames)
            assert (await run.prompt("have a background subagent write allowed.txt")).stop_reason == "end_turn"
            released[ALLOWED].set()
            await until(lambda: (cwd / "allowed.txt").exists(), lambda: (run.client.questions, run.api.summary()))
            (asked,) = run.client.questions
            updates = child_frames(start)
            child = updates[0][1]["params"]["update"]["sessionId"]
            assert child != run.sid and asked["sessionId"] == child
            exact = {"command": "echo late > allowed.txt", "description": "Write the file"}  # the scripted input
            assert asked["toolCall"]["rawInput"] == exact
            assert question_index("toolu_late_bash1") > response_index(run, 0)
            await until(
                lambda: [m["params"]["update"]["state"]["state"] for _, m in child_frames(start)][-1] == "idle",
                lambda: child_frames(start),
            )
            states = [(i, m["params"]["update"]["state"]) for i, m in child_frames(start)]
            # running (announced), requires_action before the question, running after it, idle at the end
            assert [s["state"] for _, s in states] == ["running", "requires_action", "running", "idle"], states
            assert states[1][0] < question_index("toolu_late_bash1") < states[2][0]
            assert states[3][1] == {"state": "idle", "stopReason": "end_turn"}
            for _, m in child_frames(start):
                assert m["params"]["sessionId"] == run.sid and conforms(m["params"]["update"])
            assert (cwd / "allowed.txt").read_text() == "late\n"
            # every update of the child's Bash (its announcement, in_progress, its end) on the child
            bash_on = {
                m["params"]["sessionId"]
                for d, m in run.frames
                if d == StreamDirection.INCOMING and m.get("method") == "session/update"
                and m["params"]["update"].get("toolCallId") == "toolu_late_bash1"
            }  # fmt: skip
            assert bash_on == {child}

            # 2. Never answered: a session/cancel (no prompt runs) withdraws it, denied.
            start = len(run.frames)
            assert (await run.prompt("have another background subagent write withdrawn.txt")).stop_reason == "end_turn"
            released[WITHDRAWN].set()
            await until(lambda: len(run.client.questions) == 2, lambda: run.api.summary())
            second = run.client.questions[1]
            child2 = child_frames(start)[0][1]["params"]["update"]["sessionId"]
            assert second["sessionId"] == child2 != child
            await run.conn.cancel(session_id=run.sid)

            def told() -> bool:
                return any(LATE_WITHDRAWN_MESSAGE in json.dumps(r.body) for r in run.api.message_requests)

            await until(told, lambda: run.api.summary())
            request_id = next(
                m["id"]
                for d, m in run.frames
                if d == StreamDirection.INCOMING and m.get("method") == "session/request_permission"
                and m["params"]["toolCall"]["toolCallId"] == "toolu_late_bash2"
            )  # fmt: skip
            cancels = [
                m["params"]
                for d, m in run.frames
                if d == StreamDirection.INCOMING and m.get("method") == "$/cancel_request"
            ]
            assert cancels == [{"requestId": request_id}]
            assert not (cwd / "withdrawn.txt").exists()
            states2 = [m["params"]["update"]["state"]["state"] for _, m in child_frames(start)]
            assert states2[:3] == ["running", "requires_action", "running"], states2
            assert run.records() == []

    run_async(go())
