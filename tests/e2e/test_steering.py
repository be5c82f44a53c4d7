"""Steering, prompt queueing, pickers that follow and commands that refresh (issue 50.B), end to
end: one ``python -m lifecycle.agent`` shared by the module's cases (the ``agents`` fixture; the
open-question case, whose client never answers, has its own), the real ACP SDK client, the real
bundled Claude Code CLI 2.1.337, the fake Anthropic API.

Expected values are the reference adapter 0.101.0's (``dist/acp-agent.js``: ``steer``,
``parseSteerRequest``, ``initialize``, ``createPostToolUseHook``'s ``onEnterPlanMode``, the
``PostModelSwitch`` hook, ``commands_changed``; ``dist/session-mode.js``) and what Claude Code did,
read from the fake API's requests and the session's transcript.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import acp
import pytest
from acp import RequestError
from acp.connection import StreamDirection

from .agent_under_test import AgentUnderTest
from .fakeapi import MessageReply, RequestRecord, text_reply
from .harness import Script, _fill_cwd, agent, body_of, never, run_async, tool_turn, tool_use

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

STEER = "_session/steering"


def updates_of(agent: AgentUnderTest, sid: str, start: int) -> list[dict[str, Any]]:
    """The ``session/update`` updates of ``sid`` the client received since frame ``start``."""
    return [
        m["params"]["update"]
        for d, m in agent.frames[start:]
        if d == StreamDirection.INCOMING and m.get("method") == "session/update" and m["params"]["sessionId"] == sid
    ]


def texts(updates: list[dict[str, Any]]) -> str:
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")


def option(update: dict[str, Any], config_id: str) -> dict[str, Any]:
    (found,) = [o for o in update["configOptions"] if o["id"] == config_id]
    return found


async def until(check: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)
    return value


async def refused(agent: AgentUnderTest, params: dict[str, Any]) -> dict[str, Any]:
    """The JSON-RPC error a steer got (it must get one)."""
    with pytest.raises(RequestError) as error:
        await agent.conn._conn.send_request(STEER, params)
    return {"code": error.value.code, "message": str(error.value), "data": error.value.data}


def user_texts(request: RequestRecord) -> str:
    return json.dumps([m for m in body_of(request)["messages"] if m["role"] == "user"])


def test_initialize_advertises_queueing_and_steering(agents: Callable[..., AgentUnderTest]) -> None:
    agent = agents("capable")
    # The reference's: ``agentCapabilities._meta.claudeCode.promptQueueing`` and the result's
    # own ``_meta.steering.supported``.
    assert agent.init["result"]["agentCapabilities"]["_meta"]["claudeCode"] == {"promptQueueing": True}
    assert agent.init["result"]["_meta"] == {"steering": {"supported": True}}

    async def other() -> None:  # any other extension request: method not found, as before
        with pytest.raises(RequestError) as error:
            await agent.conn._conn.send_request("_session/goal", {"sessionId": "x"})
        assert (error.value.code, error.value.data) == (-32601, {"method": "_session/goal"})

    agent.call(other(), 30)


def test_a_prompt_sent_while_a_turn_runs_is_queued_and_gets_its_own_answer(
    agents: Callable[..., AgentUnderTest],
) -> None:
    """What ``promptQueueing`` promises (the reference's meaning): the second ``session/prompt``
    waits for the first turn and is answered with its own reply, not folded into the first."""
    agent = agents("capable")
    sid = agent.new_session()
    gate = threading.Event()

    def first(request: RequestRecord) -> Any:
        gate.wait(30)
        return text_reply("first answer")

    async def go() -> None:
        asked = len(agent.api.message_requests)
        agent.script.load(first, text_reply("second answer"), then=text_reply("nothing more"))
        one = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[acp.text_block("first question")]))
        await until(lambda: len(agent.api.message_requests) > asked)
        start = len(agent.frames)
        two = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[acp.text_block("second question")]))
        await asyncio.sleep(0)  # sent while the first turn waits for the model
        gate.set()
        first_response = await asyncio.wait_for(one, 60)
        second_response = await asyncio.wait_for(two, 60)
        assert (first_response.stop_reason, second_response.stop_reason) == ("end_turn", "end_turn")
        assert texts(updates_of(agent, sid, start)) == "first answer" + "second answer"
        # in this order: the first turn's text, its answer, the second turn's text, its answer
        frames = [json.dumps(m) for d, m in agent.frames[start:] if d == StreamDirection.INCOMING]
        answers = [i for i, m in enumerate(frames) if '"stopReason": "end_turn"' in m]
        spoken = [next(i for i, m in enumerate(frames) if text in m) for text in ("first answer", "second answer")]
        assert spoken[0] < answers[0] < spoken[1] < answers[1]
        last = user_texts(agent.api.message_requests[-1])
        assert last.index("first question") < last.index("second question")

    agent.call(go(), 120)


def test_a_steer_is_answered_inside_the_running_turn_and_bad_steers_lose_nothing(
    agents: Callable[..., AgentUnderTest],
) -> None:
    agent = agents("capable")
    sid = agent.new_session()
    gate = threading.Event()

    def first(request: RequestRecord) -> Any:  # the prompt's request: answered once the steer is in
        gate.wait(30)
        return text_reply("first answer")

    async def go() -> None:
        start = len(agent.frames)
        asked = len(agent.api.message_requests)
        agent.script.load(first, text_reply("steered answer"), then=text_reply("nothing more"))
        prompt = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[acp.text_block("count the files")]))
        await until(lambda: len(agent.api.message_requests) > asked)  # the turn runs
        text = [{"type": "text", "text": "also list them"}]
        # Bad steers while it runs: each a clear -32602, the turn untouched.
        empty = await refused(agent, {"sessionId": sid, "prompt": [{"type": "text", "text": "   "}]})
        assert empty == {"code": -32602, "message": "Invalid params: the prompt is empty", "data": None}
        huge = await refused(agent, {"sessionId": sid, "prompt": [{"type": "text", "text": "x" * (1024 * 1024)}]})
        assert huge["code"] == -32602 and huge["data"]["maxBytes"] == 1024 * 1024
        # the content Claude Code would receive: the text as one JSON string, quotes included
        assert huge["data"]["details"] == "the steer is too large: 1048578 bytes of content; at most 1048576"
        unknown = await refused(agent, {"sessionId": "no-such-session", "prompt": text})
        assert unknown["code"] == -32602 and unknown["data"] == {
            "sessionId": "no-such-session",
            "details": "unknown session",
        }
        no_prompt = await refused(agent, {"sessionId": sid, "prompt": []})
        assert no_prompt["data"] == {"details": "steer params require a non-empty prompt array"}
        assert not prompt.done()
        # The steer: injected into the running turn (the reference's answer).
        answer = await agent.conn._conn.send_request(STEER, {"sessionId": sid, "prompt": text})
        assert answer == {"outcome": "injected"}
        # Claude Code drops the interrupted request and asks again with the steer (CLI 2.1.337):
        # only then is the first request answered, so its text can never arrive before the steer
        # is taken, however slow the machine.
        await until(lambda: len(agent.api.message_requests) > asked + 1)
        gate.set()
        response = await asyncio.wait_for(prompt, 60)
        assert response.stop_reason == "end_turn" and response.field_meta is None  # no record
        shown = updates_of(agent, sid, start)
        # Claude Code ended the interrupted cycle and answered the steer in the same conversation;
        # the turn's answer is the steered one, and nothing of the interrupted request.
        assert texts(shown) == "steered answer"
        last = agent.api.message_requests[-1]
        assert "count the files" in user_texts(last) and "also list them" in user_texts(last)
        # the prompt's answer came after the steered answer's text
        frames = [m for d, m in agent.frames[start:] if d == StreamDirection.INCOMING]
        answered = next(
            i
            for i, m in enumerate(frames)
            if m.get("result", {}) == response.model_dump(by_alias=True, exclude_none=True)
        )
        chunk = next(i for i, m in enumerate(frames) if "steered answer" in json.dumps(m))
        assert chunk < answered
        # The steer is a user message of its own in the transcript, not a second prompt.
        steered = [e for e in agent.transcript(sid) if e.get("type") == "user" and "also list them" in json.dumps(e)]
        assert len(steered) == 1
        assert agent.wait_log(lambda e: e.get("event") == "steer.injected" and e.get("priority") == "now")

        # No running turn: the reference's answers.
        asked = len(agent.api.message_requests)
        meta = {"steering": {"idleBehavior": "promptRequired"}}
        opted = await agent.conn._conn.send_request(STEER, {"sessionId": sid, "prompt": text, "_meta": meta})
        assert opted == {"outcome": "promptRequired", "reason": "noRunningTurn"}
        assert len(agent.api.message_requests) == asked  # nothing ran
        start = len(agent.frames)
        agent.script.load(text_reply("a turn of its own"))
        started = await agent.conn._conn.send_request(STEER, {"sessionId": sid, "prompt": text})
        assert started == {"outcome": "startedNewTurn"}
        await until(lambda: texts(updates_of(agent, sid, start)) == "a turn of its own")
        assert agent.wait_log(lambda e: e.get("event") == "steer.new_turn_end" and e.get("stop_reason") == "end_turn")

    agent.call(go(), 120)


def test_pickers_follow_claude_codes_own_changes_and_a_load_keeps_the_mode(
    agents: Callable[..., AgentUnderTest],
) -> None:
    agent = agents("capable")
    sid = agent.new_session()

    async def go() -> None:
        # A mode chosen through set_session_mode: the mode picker follows (config_option_update).
        start = len(agent.frames)
        await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
        await until(lambda: [u for u in updates_of(agent, sid, start) if u["sessionUpdate"] == "config_option_update"
                             and option(u, "mode")["currentValue"] == "plan"])  # fmt: skip
        # A mode chosen through set_config_option: the mode selector follows (current_mode_update).
        start = len(agent.frames)
        await agent.conn.set_config_option(config_id="mode", session_id=sid, value="acceptEdits")
        await until(lambda: {"sessionUpdate": "current_mode_update", "currentModeId": "acceptEdits"}
                    in updates_of(agent, sid, start))  # fmt: skip
        # Unknown option and value: -32602 naming the valid ones; nothing changes.
        with pytest.raises(RequestError) as error:
            await agent.conn.set_config_option(config_id="colour", session_id=sid, value="red")
        assert error.value.code == -32602 and "Unknown config option 'colour'" in error.value.data["details"]
        with pytest.raises(RequestError) as error:
            await agent.conn.set_config_option(config_id="mode", session_id=sid, value="sudo")
        assert error.value.code == -32602 and error.value.data["details"].startswith(
            "Unknown mode 'sudo'; valid modes:"
        )

    agent.call(go(), 60)
    # A turn in acceptEdits, then the session loaded again: it comes back in acceptEdits.
    agent.prompt(sid, "say hi", text_reply("hi"))
    assert [e.get("permissionMode") for e in agent.transcript(sid) if e.get("type") == "user"][-1] == "acceptEdits"
    loaded = agent.load(sid)
    assert loaded.result is not None and loaded.result["modes"]["currentModeId"] == "acceptEdits"
    assert option(loaded.result, "mode")["currentValue"] == "acceptEdits"

    # Claude's own EnterPlanMode: current_mode_update plan, then config_option_update.
    start = len(agent.frames)
    plan = MessageReply([{"type": "tool_use", "name": "EnterPlanMode", "input": {}}], stop_reason="tool_use")
    out = agent.prompt(sid, "plan the change", plan, text_reply("planning"))
    assert out.result is not None and out.result["stopReason"] == "end_turn"
    state = [
        u
        for u in updates_of(agent, sid, start)
        if u["sessionUpdate"] in ("current_mode_update", "config_option_update")
    ]
    assert state[0] == {"sessionUpdate": "current_mode_update", "currentModeId": "plan"}
    assert state[1]["sessionUpdate"] == "config_option_update" and option(state[1], "mode")["currentValue"] == "plan"

    # `/model haiku` typed as a prompt: Claude Code switches by itself; the model picker follows.
    start = len(agent.frames)
    asked = len(agent.api.message_requests)
    out = agent.prompt(sid, "/model haiku")
    assert out.result is not None and out.result["stopReason"] == "end_turn"
    assert len(agent.api.message_requests) == asked  # a command of Claude Code's own: no model request
    models = [u for u in updates_of(agent, sid, start) if u["sessionUpdate"] == "config_option_update"]
    assert models and option(models[-1], "model")["currentValue"] == "haiku"
    # Claude Code said so in its own words (its local command's output)
    assert "Set model to `Haiku 5.5`" in json.dumps(agent.transcript(sid)[-3:])


def test_a_skill_found_mid_session_refreshes_the_commands(agents: Callable[..., AgentUnderTest]) -> None:
    agent = agents("capable")
    sub = agent.cwd / "deploy"
    skill = sub / ".claude" / "skills" / "deploy-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy-notes\ndescription: Notes for a deploy\n---\nWrite them.\n")
    (sub / "notes.txt").write_text("hello\n")
    sid = agent.new_session()
    start = len(agent.frames)
    read = MessageReply(
        [{"type": "tool_use", "name": "Read", "input": {"file_path": str(sub / "notes.txt")}}], stop_reason="tool_use"
    )
    out = agent.prompt(sid, "read deploy/notes.txt", read, text_reply("read it"))
    assert out.result is not None and out.result["stopReason"] == "end_turn"
    refreshed = [u for u in updates_of(agent, sid, start) if u["sessionUpdate"] == "available_commands_update"]
    assert refreshed, "no available_commands_update after Claude Code found the skill"
    names = [c["name"] for c in refreshed[-1]["availableCommands"]]
    assert "deploy-notes" in names and "compact" in names
    assert not {"clear", "login", "logout", "mcp"} & set(names)  # filtered as at the start


def test_a_steer_waits_for_an_open_question_and_a_cancel_leaves_the_session_usable(tmp_path: Path) -> None:
    """While a permission question is open the steer goes at priority ``later`` (the reference's:
    interrupting the callback would withdraw the client's question); a cancel then ends the turn
    and drops the queued steer (no model request for it), and the next prompt runs at once."""

    async def go() -> None:
        script = Script(tool_turn(tool_use("Write", "toolu_w", file_path="{cwd}/new.txt", content="x\n")))
        async with agent(tmp_path, script, never) as run:
            _fill_cwd(script, run)
            prompt = asyncio.ensure_future(run.prompt("write x to new.txt"))
            await asyncio.wait_for(run.client.asked.wait(), 60)  # the question is open
            answer = await run.conn._conn.send_request(
                STEER, {"sessionId": run.sid, "prompt": [{"type": "text", "text": "make it y"}]}
            )
            assert answer == {"outcome": "injected"}
            logged = [e for e in run.workspace.log() if e.get("event") == "steer.injected"]
            assert [e["priority"] for e in logged] == ["later"]
            await run.conn.cancel(session_id=run.sid)
            assert (await asyncio.wait_for(prompt, 30)).stop_reason == "cancelled"
            assert not (run.workspace.cwd / "new.txt").exists()  # never allowed
            cancelled = len(run.incoming())
            # The steer Claude Code still had queued was dropped before the interrupt (issue 50
            # gap 3; the reference's dropQueuedMessages: cancel_async_message): without that,
            # Claude Code 2.1.337 runs it after the interrupt, one model request for a cancelled
            # turn. The next prompt gets the one answer of its own.
            def dropped() -> list[Any]:
                return [e.get("dropped") for e in run.workspace.log() if e.get("event") == "steer.dropped"]

            deadline = time.monotonic() + 30  # (the cancel is answered before Claude Code's reply comes)
            while not dropped() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert dropped() == [True]
            response = await asyncio.wait_for(run.prompt("and now something else"), 60)
            assert response.stop_reason == "end_turn"
            after = [m["params"]["update"] for m in run.incoming()[cancelled:] if m.get("method") == "session/update"]
            shown = [u["content"]["text"] for u in after if u["sessionUpdate"] == "agent_message_chunk"]
            assert shown == ["Nothing more to do."]  # the script's answer to every later request
            assert not any("make it y" in user_texts(r) for r in run.api.message_requests)
            assert len(run.api.message_requests) == 2  # the prompt's first request, the next prompt's

    run_async(go())


def test_a_steer_while_a_tool_runs_joins_the_cycle_that_answers_its_result(
    agents: Callable[..., AgentUnderTest],
) -> None:
    """A steer sent while Claude Code handles a Bash command: Claude Code 2.1.337 lets the command
    finish, or aborts it ("Command was aborted before completion"), depending on when the steer
    comes (both seen on the wire); either way the command's result and the steer go in one
    request, and that cycle's result ends the turn. Last of the shared agent's cases: a command
    Claude Code would move to the background could start a turn of its own later."""
    agent = agents("capable")
    sid = agent.new_session()

    async def go() -> None:
        start = len(agent.frames)
        bash = tool_turn(tool_use("Bash", "toolu_slow", command="sleep 2; echo done", description="wait"))
        agent.script.load(bash, text_reply("steered reply"), then=text_reply("nothing more"))
        prompt = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[acp.text_block("run the slow one")]))
        # the command's input is complete: Claude Code runs it now
        await until(lambda: any(u.get("title") == "sleep 2; echo done" for u in updates_of(agent, sid, start)))
        text = [{"type": "text", "text": "also say hi"}]
        assert await agent.conn._conn.send_request(STEER, {"sessionId": sid, "prompt": text}) == {"outcome": "injected"}
        response = await asyncio.wait_for(prompt, 60)
        assert response.stop_reason == "end_turn" and response.field_meta is None
        assert texts(updates_of(agent, sid, start)).endswith("steered reply")
        last = user_texts(agent.api.message_requests[-1])
        assert last.index('"tool_use_id": "toolu_slow"') < last.index("also say hi")  # one request, in order
        statuses = [
            u["status"] for u in updates_of(agent, sid, start) if u.get("toolCallId") == "toolu_slow" and "status" in u
        ]
        assert statuses[-1] in ("completed", "failed")  # the call is closed, whichever way it went

    agent.call(go(), 120)
