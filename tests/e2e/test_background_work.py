"""Claude Code's background work end to end (issue 31): a ``run_in_background`` Bash shows as an
``execute`` tool call that completes with the background task's id (Claude Code's own
"Command running in background with ID: …" result, as the reference renders it); when the job
ends, Claude Code starts a turn of its own (the task notification), and the model's answer to it
reaches the editor as ``agent_message_chunk``s after the prompt that started the job was answered,
attributed to no prompt: the next prompt's answer is its own, also when it is sent while that
turn still runs. A background subagent's report is different (issue 50): the prompt that started the subagent
is held open until the subagent answered and Claude Code's follow-up turn reported it, as the
reference adapter does. A background job that
fails is not the prompt's failure: no record anywhere.

The fake API answers by what each request is for (the last user message: Claude Code's task
notification, or the prompt's text), so Claude Code's own requests cannot take a prompt's reply.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from acp.connection import StreamDirection

from .fakeapi import RequestRecord, text_reply
from .harness import (
    NOTIFICATION,
    Lanes,
    Run,
    Script,
    agent,
    last_user_text,
    result_text,
    run_async,
    select,
    tool_results,
    tool_turn,
    tool_use,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

#: Claude Code 2.1.332's result of a Bash that went to the background (its first words).
BACKGROUND_RESULT = re.compile(r"Command running in background with ID: ([A-Za-z0-9]+)\.")
SUB_PROMPT = "Read note.txt and say what it says (in the background)."


def response_index(run: Run, nth: int = 0) -> int:
    """The wire position of the ``nth`` prompt response the client received."""
    answers = [
        i
        for i, (d, m) in enumerate(run.frames)
        if d == StreamDirection.INCOMING
        and "result" in m
        and isinstance(m["result"], dict)
        and "stopReason" in m["result"]
    ]
    return answers[nth]


def chunk_index(run: Run, text: str) -> int:
    """The wire position of the first agent_message_chunk carrying ``text``."""
    for i, (d, m) in enumerate(run.frames):
        update = (m.get("params") or {}).get("update") or {} if d == StreamDirection.INCOMING else {}
        if update.get("sessionUpdate") == "agent_message_chunk" and text in update["content"].get("text", ""):
            return i
    raise AssertionError(f"no chunk with {text!r}: {[u['content']['text'] for u in run.of('agent_message_chunk')]}")


async def until(check: Any, what: Any, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what()
        await asyncio.sleep(0.05)


def background_bash(command: str) -> Script:
    return Script(
        tool_turn(
            tool_use("Bash", "toolu_bg_bash", command=command, description="Wait, then report", run_in_background=True)
        ),
        text_reply("It runs in the background."),
    )


def test_a_background_bash_completes_with_its_task_id_and_its_notification_turn_reaches_the_editor(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        script = background_bash("sleep 2; echo bg-done-7")
        api = Lanes(script, notified=text_reply("The background job printed bg-done-7."))
        async with agent(tmp_path, api, select("allow-once")) as run:  # type: ignore[arg-type]
            assert (await run.prompt("run the job in the background")).stop_reason == "end_turn"
            # The Bash call: execute, completed with the id of the task Claude Code started (the id
            # the model was told, in the tool_result the fake API received).
            (result,) = tool_results(run.api.message_requests[1])
            task_id = BACKGROUND_RESULT.match(result_text(result))
            assert task_id is not None, result_text(result)
            bash = run.tool_state("toolu_bg_bash")
            assert bash["kind"] == "execute" and bash["status"] == "completed"
            assert f"Command running in background with ID: {task_id.group(1)}." in json.dumps(bash["content"])
            # The notification turn: Claude Code asks the model about the task, and the answer
            # reaches the editor after the prompt's response.
            await until(
                lambda: "The background job printed bg-done-7." in "".join(run.texts()),
                lambda: (run.texts(), run.api.summary()),
            )
            notified = [r for r in run.api.message_requests if NOTIFICATION in last_user_text(r)]
            assert len(notified) == 1 and task_id.group(1) in last_user_text(notified[0])
            assert chunk_index(run, "bg-done-7") > response_index(run, 0)
            assert run.records() == []
            # The next prompt is answered with its own reply, nothing of the notification turn's.
            script.add(text_reply("Second answer."))
            start = len(run.frames)
            assert (await run.prompt("and now?")).stop_reason == "end_turn"
            later = [
                m["params"]["update"]["content"]["text"]
                for d, m in run.frames[start:]
                if d == StreamDirection.INCOMING
                and m.get("method") == "session/update"
                and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
            ]
            assert "".join(later) == "Second answer."

    run_async(go())


def test_a_prompt_sent_while_the_notification_turn_runs_gets_its_own_answer(tmp_path: Path) -> None:
    async def go() -> None:
        script = background_bash("sleep 1; echo bg-done-8")
        release = threading.Event()

        def notified(request: RequestRecord) -> Any:
            release.wait(60)  # the notification turn runs until the test lets it answer
            return text_reply("The job printed bg-done-8.")

        api = Lanes(script, notified=notified)
        async with agent(tmp_path, api, select("allow-once")) as run:  # type: ignore[arg-type]
            assert (await run.prompt("run the job in the background")).stop_reason == "end_turn"
            await until(
                lambda: any(NOTIFICATION in last_user_text(r) for r in run.api.message_requests),
                lambda: run.api.summary(),
            )
            script.add(text_reply("Second answer."))
            second = asyncio.ensure_future(run.prompt("the second prompt"))
            # The agent wrote the second prompt to Claude Code (it is busy with its own turn).
            await until(
                lambda: [e.get("event") for e in run.workspace.log()].count("prompt.start") == 2,
                lambda: "the second prompt was not started",
            )
            release.set()
            response = await asyncio.wait_for(second, 90)
            assert response.stop_reason == "end_turn"
            # The second prompt's answer came before its response; the notification turn's answer
            # reached the editor too, once, and did not end the second prompt.
            assert chunk_index(run, "Second answer.") < response_index(run, 1)
            await until(lambda: "bg-done-8" in "".join(run.texts()), lambda: run.texts())
            assert "".join(run.texts()).count("The job printed bg-done-8.") == 1
            assert run.records() == []

    run_async(go())


def test_a_failed_background_job_is_not_the_prompts_failure(tmp_path: Path) -> None:
    """The job exits 3 after the prompt was answered: Claude Code notifies the model ("failed
    with exit code 3"), whose reaction reaches the editor; no record, on the response or later
    (a capable client: a background incident would be a ``session_info_update`` record)."""

    async def go() -> None:
        script = background_bash("sleep 2; exit 3")
        api = Lanes(script, notified=text_reply("The background job failed with exit code 3."))
        async with agent(tmp_path, api, select("allow-once"), capable=True) as run:  # type: ignore[arg-type]
            response = await run.prompt("run the failing job in the background")
            assert response.stop_reason == "end_turn"
            assert run.tool_state("toolu_bg_bash")["status"] == "completed"  # it started; that is its result
            await until(lambda: "exit code 3" in "".join(run.texts()), lambda: (run.texts(), run.api.summary()))
            (notified,) = [r for r in run.api.message_requests if NOTIFICATION in last_user_text(r)]
            assert "exit code 3" in last_user_text(notified)
            assert run.records() == []
            assert chunk_index(run, "exit code 3") > response_index(run, 0)

    run_async(go())


SUB_HELD = "Read note.txt slowly (a subagent the user will cancel)."


def test_a_background_subagents_answer_is_in_the_turn_a_new_prompt_or_a_cancel_ends_the_wait(tmp_path: Path) -> None:
    """Issue 50 (C.1). The reference adapter 0.101.0 holds a prompt open until the background
    subagents it started have answered (``Turn.deferredSettle``): the subagent's tool calls and
    Claude Code's follow-up turn (the model's report) reach the editor before the prompt's answer.
    A new prompt during that wait answers the held one first (the reference's hand-off); a
    ``session/cancel`` during it ends the turn ``cancelled`` (ACP: the pending prompt MUST be
    answered ``cancelled``). One agent, every prompt."""

    async def go() -> None:
        cwd = tmp_path / "project"
        release = threading.Event()

        def agent_call(tool_id: str, prompt: str) -> Any:
            return tool_turn(
                tool_use(
                    "Agent", tool_id, description="Read the note", prompt=prompt,
                    subagent_type="general-purpose", run_in_background=True,
                )
            )  # fmt: skip

        main_answered = threading.Event()

        def main_answer(request: RequestRecord) -> Any:
            main_answered.set()
            return text_reply("A subagent is reading it.")

        def sub_answer(request: RequestRecord) -> Any:
            # The subagent answers once the prompt's own last request is being answered: this case
            # is the subagent that outlives the prompt's result (the one that ends before it is
            # test_a_subagent_that_ends_before_the_prompts_result_still_has_its_report_in_the_turn).
            main_answered.wait(60)
            return text_reply("hello")

        main = Script(agent_call("toolu_bg_sub", SUB_PROMPT), main_answer)
        sub = Script(tool_turn(tool_use("Read", "toolu_bg_sub_read", file_path=f"{cwd}/note.txt")), sub_answer)

        def held(request: RequestRecord) -> Any:
            release.wait(60)  # the second subagent works until the test lets it answer
            return text_reply("hello, late")

        lanes = Lanes(
            main, sub=sub, sub_prompt=SUB_PROMPT, notified=text_reply("The subagent reports: the note says hello.")
        )

        def api(request: RequestRecord) -> Any:
            first = json.dumps(((request.body or {}).get("messages") or [{}])[0])
            return held(request) if SUB_HELD in first else lanes(request)

        async with agent(
            tmp_path, api, select("allow-once"), project=lambda p: (p / "note.txt").write_text("hello\n")
        ) as run:  # type: ignore[arg-type]
            assert (await run.prompt("have a background subagent read the note")).stop_reason == "end_turn"
            # Inside the turn: the subagent's Read, its Agent call's end and the model's report.
            answer = response_index(run, 0)
            assert chunk_index(run, "The subagent reports: the note says hello.") < answer
            assert run.tool_state("toolu_bg_sub_read")["status"] == "completed"
            assert max(i for i, (d, m) in enumerate(run.frames) if "toolu_bg_sub_read" in json.dumps(m)) < answer
            notified = [r for r in run.api.message_requests if NOTIFICATION in last_user_text(r)]
            assert len(notified) == 1 and "hello" in last_user_text(notified[0])
            assert chunk_index(run, "A subagent is reading it.") < chunk_index(run, "the note says hello")
            assert run.records() == []
            # The second prompt's subagent never answers: the prompt's own result came, and the
            # prompt is held. A third prompt answers it first (the reference's hand-off), then runs.
            main.add(agent_call("toolu_bg_held", SUB_HELD), text_reply("Another subagent is on it."))
            second = asyncio.ensure_future(run.prompt("have another background subagent read it"))

            def held(count: int, text: str) -> Any:
                # (the agent logs the hold when the result comes; the client reads the text before it)
                events = [e.get("event") for e in run.workspace.log()]
                return events.count("prompt.held_for_subagents") == count and text in "".join(run.texts())

            await until(lambda: held(2, "Another subagent is on it."), lambda: (run.texts(), run.api.summary()))
            assert not second.done()
            main.add(text_reply("Third answer."))
            third = asyncio.ensure_future(run.prompt("meanwhile, something else"))
            assert (await asyncio.wait_for(second, 60)).stop_reason == "end_turn"
            assert (await asyncio.wait_for(third, 60)).stop_reason == "end_turn"
            assert response_index(run, 1) < chunk_index(run, "Third answer.") < response_index(run, 2)
            released = [e.get("reason") for e in run.workspace.log() if e.get("event") == "prompt.hold_released"]
            assert released == ["subagents_answered", "next_prompt"]
            # A fourth prompt's subagent never answers either: a cancel ends its held wait ``cancelled``.
            main.add(agent_call("toolu_bg_held2", SUB_HELD), text_reply("A third subagent is on it."))
            fourth = asyncio.ensure_future(run.prompt("one more background subagent"))
            await until(lambda: held(3, "A third subagent is on it."), lambda: (run.texts(), run.api.summary()))
            assert not fourth.done()
            await run.conn.cancel(session_id=run.sid)
            assert (await asyncio.wait_for(fourth, 60)).stop_reason == "cancelled"
            release.set()
            assert run.records() == []

    run_async(go())


SUB_FAST = "Read note.txt quickly (a subagent that ends before the prompt's result)."


def test_a_subagent_that_ends_before_the_prompts_result_still_has_its_report_in_the_turn(tmp_path: Path) -> None:
    """Issue 50 (gap 1). The prompt's last request is answered only once Claude Code has reported
    the background subagent's end (the gate): the subagent ended before the prompt's result.

    * First prompt: the model answers with text, so Claude Code reports the subagent in a turn of
      its own after the prompt's result. The reference adapter 0.101.0 answers the prompt at its
      result there (``turnAwaitingSubagents`` sees no live subagent) and the report comes after
      the answer; ours holds the prompt until the report (docs/parity: "A background subagent
      that ends before the prompt's result").
    * Second prompt: the model's last-but-one answer is a tool call, so Claude Code gives the
      model the subagent's notification inside the prompt's turn and starts no turn of its own:
      the prompt is answered when Claude Code goes idle (the reference's idle fallback,
      ``settleDeferredIfDrained``), not left open. One agent, both prompts."""

    async def go() -> None:
        cwd = tmp_path / "project"
        box: dict[str, Any] = {}

        def after_the_subagent_ended(reply: Any) -> Any:
            def answer(request: RequestRecord) -> Any:
                ended = len(box["ended"]) + 1
                deadline = time.monotonic() + 60  # (a bound for a broken agent, not a timing)
                while time.monotonic() < deadline:
                    events = [e.get("event") for e in box["run"].workspace.log()]
                    if events.count("prompt.subagent_ended") >= ended:
                        break
                    time.sleep(0.05)
                box["ended"].append(ended)
                return reply

            return answer

        def agent_call(tool_id: str) -> Any:
            return tool_turn(
                tool_use(
                    "Agent", tool_id, description="Read the note", prompt=SUB_FAST,
                    subagent_type="general-purpose", run_in_background=True,
                )
            )  # fmt: skip

        main = Script(
            agent_call("toolu_fast_1"),
            after_the_subagent_ended(text_reply("A subagent read it.")),
            agent_call("toolu_fast_2"),
            after_the_subagent_ended(tool_turn(tool_use("Read", "toolu_main_read", file_path=f"{cwd}/note.txt"))),
            text_reply("Both of us read it: hello."),
        )
        sub = Script(
            tool_turn(tool_use("Read", "toolu_fast_read_1", file_path=f"{cwd}/note.txt")),
            text_reply("hello"),
            tool_turn(tool_use("Read", "toolu_fast_read_2", file_path=f"{cwd}/note.txt")),
            text_reply("hello"),
        )
        lanes = Lanes(main, sub=sub, sub_prompt=SUB_FAST, notified=text_reply("The subagent reports: hello."))
        async with agent(
            tmp_path, lanes, select("allow-once"), project=lambda p: (p / "note.txt").write_text("hello\n")
        ) as run:  # type: ignore[arg-type]
            box.update(run=run, ended=[])
            assert (await run.prompt("have a fast background subagent read the note")).stop_reason == "end_turn"
            assert box["ended"] == [1]  # the gate was passed: the subagent had ended
            # (an AIR client, the harness's default) The Agent call's structured result as AIR gets
            # it from the reference (issue 50 gap 4; content.js toolResponseMarkers): only the
            # status and isAsync markers that tell a background subagent's launch.
            responses = [
                u["_meta"]["claudeCode"]["toolResponse"]
                for u in run.tool("toolu_fast_1")
                if "toolResponse" in (u.get("_meta") or {}).get("claudeCode", {})
            ]
            assert responses == [{"status": "async_launched", "isAsync": True}]
            # Claude Code's own turn reported it, and that report is inside the prompt's turn.
            notified = [r for r in run.api.message_requests if NOTIFICATION in last_user_text(r)]
            assert len(notified) == 1
            assert chunk_index(run, "A subagent read it.") < chunk_index(run, "The subagent reports: hello.")
            assert chunk_index(run, "The subagent reports: hello.") < response_index(run, 0)
            # The second prompt: the notification went into the prompt's own next request (no
            # turn of Claude Code's own), and the prompt is answered all the same.
            requests = len(run.api.message_requests)
            response = await asyncio.wait_for(run.prompt("and once more, while you read it too"), 90)
            assert response.stop_reason == "end_turn"
            assert box["ended"] == [1, 2]
            later = run.api.message_requests[requests:]
            assert not any(r.body and NOTIFICATION in last_user_text(r) for r in later)  # no own turn
            assert any(NOTIFICATION in json.dumps(r.body) for r in later if "toolu_main_read" in json.dumps(r.body))
            assert chunk_index(run, "Both of us read it: hello.") < response_index(run, 1)
            assert run.records() == []

    run_async(go())
