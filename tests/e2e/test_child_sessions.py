"""Subagents as ACP child sessions (issue 51, its first slice), ours and the reference adapter
0.101.0 side by side: each behind the real Python ACP client declaring
``clientCapabilities.subagents: {}``, each on the bundled Claude Code with its own loopback fake
API answering the same script, the same user settings (``permissions.defaultMode: "default"``:
without it the reference starts in ``auto`` and refuses the Agent call against a fake API).

One agent of each serves three prompts (CI time): a foreground ``Agent`` call whose subagent reads
a file and answers, one whose subagent's every request gets a 429 until Claude Code gives up, and
one whose subagent runs ``sleep 60`` until the client sends ``session/cancel`` naming the child.
The fake API routes a request by its conversation (the subagent's first message holds its prompt).

Both agents must send, and ours is held to literally:

* ``subagent_update`` on the parent session announcing the child (Claude Code's agent id) with
  its title, description, ``capabilities: {cancel: {}}`` and ``state: running``; then the
  subagent's tool call and text on the child's session id, not the parent's; then
  ``subagent_update`` with ``state: idle``, ``stopReason: end_turn``; the parent's prompt ends
  ``end_turn``;
* for the failing subagent, ``state: {state: idle, stopReason: error, error: {code: -32603,
  message: "Agent terminated early due to an API error: …"}}``, and the parent's prompt still
  ends ``end_turn``, with no record anywhere (a child's failure is not the turn's);
* for the cancelled child, ``state: {state: idle, stopReason: cancelled}``, and the parent's turn
  goes on to its answer and ends ``end_turn``.

* the cancelled child's Bash question goes to the child's session, the child ``requires_action``
  while it waits and ``running`` after (the reference's ``toolUseOwner`` and ``awaitingUser``);
* a ``session/load`` of the session afterwards announces each child again (``running``, its
  labels), replays its tool call and text on its session and ends it as it ended live (the
  reference's ``subagent-replay.js``).

Every ``subagent_update`` either agent sends conforms to ACP's schema (``acp_schema.py``).
Where ours differs (docs/parity/README.md, "Subagents as child sessions"): the reference hides
the Agent call from the parent and sends ``session_message`` updates (the prompt to the child,
the child's reply to the parent) and the child's ``config_option_update``; ours keeps the Agent
call on the parent, where it completes with the subagent's answer, and sends neither.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.connection import StreamDirection
from acp_schema import conforms

from lifecycle import read_record

from .claude_cli import BUNDLED_CLI, AgentWorkspace
from .fakeapi import FakeAnthropicAPI, RequestRecord, text_reply
from .harness import Client, Script, select, tool_turn, tool_use
from .reference import ensure_reference, node_binary

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

READ_PROMPT = "Read note.txt and say what it says (a child session)."
STOPPED_PROMPT = "Wait a minute, then report (a child session the client cancels)."
#: The file the cancelled child's Bash writes in the session's folder when it runs (then it sleeps).
STARTED = "child-bash-started"
FAILING_PROMPT = "Look around the project (a child session whose requests get 429)."
#: Claude Code 2.1.337's end of a subagent whose requests failed (its task's error), first words.
TERMINATED = "Agent terminated early due to an API error: API Error: "


class Conversations:
    """The fake API's answers by conversation: a subagent's (its first message holds one of the
    sub-prompts) from its own script, every other request from the parent's."""

    def __init__(self, main: Script, subs: dict[str, Script]) -> None:
        self.main, self.subs = main, subs

    def __call__(self, request: RequestRecord) -> Any:
        messages = request.body.get("messages") if isinstance(request.body, dict) else None
        first = json.dumps(messages[0]) if messages else ""
        for prompt, script in self.subs.items():
            if prompt in first:
                return script(request)
        return self.main(request)


def agent_call(tool_id: str, description: str, prompt: str) -> Any:
    return tool_turn(
        tool_use(
            "Agent", tool_id, description=description, prompt=prompt, subagent_type="general-purpose",
            run_in_background=False,  # a foreground subagent (Claude Code runs one in the background by default)
        )
    )  # fmt: skip


class Side:
    """One agent behind the ACP client: every frame it sent, and its parent session."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        self.sid = ""
        self.cwd = Path()
        self.client = Client(select("allow-once"))

    def updates(self, start: int = 0, end: int | None = None) -> list[tuple[str, dict[str, Any]]]:
        """(session id, update) of every ``session/update`` in ``frames[start:end]``."""
        return [
            (m["params"]["sessionId"], m["params"]["update"])
            for m in self.frames[start:end]
            if m.get("method") == "session/update"
        ]

    def subagent_updates(self, start: int = 0, end: int | None = None) -> list[dict[str, Any]]:
        out = []
        for sid, update in self.updates(start, end):
            if update.get("sessionUpdate") == "subagent_update":
                assert sid == self.sid, "a subagent_update goes on the parent session"
                out.append(update)
        return out


@contextlib.asynccontextmanager
async def side(impl: str, tmp: Path) -> AsyncIterator[tuple[Side, Any]]:
    ws = AgentWorkspace()
    ws._workspace(tmp / impl)
    (ws.cwd / "note.txt").write_text("hello\n")
    (ws.config_dir / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "default"}}))
    api = FakeAnthropicAPI(script(ws.cwd))
    ws.api = api
    api.start()
    env = ws.agent_env(2)
    env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
    if impl == "ours":
        env["LIFECYCLE_ACP_CLI"] = str(BUNDLED_CLI)
        command = [sys.executable, "-m", "lifecycle.agent"]
    else:
        env["CLAUDE_CODE_EXECUTABLE"] = str(BUNDLED_CLI)
        command = [node_binary(), str(ensure_reference() / "dist" / "index.js")]
    out = Side()

    def observe(ev: Any) -> None:
        if ev.direction == StreamDirection.INCOMING:
            out.frames.append(ev.message)

    try:
        with (ws.tmp / f"{impl}.stderr").open("w") as stderr:
            async with acp.spawn_agent_process(
                out.client,  # type: ignore[arg-type]
                *command,
                env=env,
                cwd=str(ws.cwd),
                transport_kwargs={"stderr": stderr},
                observers=[observe],
            ) as (conn, _proc):
                # raw: the ACP SDK 0.12.1's ClientCapabilities model drops ``subagents``
                params = {"protocolVersion": 1, "clientCapabilities": {"subagents": {}}}
                await asyncio.wait_for(conn._conn.send_request("initialize", params), 60)
                out.sid = (await conn.new_session(cwd=str(ws.cwd), mcp_servers=[])).session_id
                out.cwd = ws.cwd
                yield out, conn
    finally:
        api.stop()


def script(cwd: Path) -> Conversations:
    main = Script(
        agent_call("toolu_reader", "Read the note", READ_PROMPT),
        text_reply("The subagent read it: hello."),
        agent_call("toolu_failing", "Look around", FAILING_PROMPT),
        text_reply("The subagent could not look."),
        agent_call("toolu_waiting", "Wait", STOPPED_PROMPT),
        text_reply("The subagent was stopped."),
    )
    waiting = Script(
        tool_turn(
            tool_use("Bash", "toolu_sub_sleep", command=f"touch {STARTED}; sleep 60", description="Wait a minute")
        ),
        text_reply("Waited."),
    )
    reader = Script(
        tool_turn(tool_use("Read", "toolu_sub_read", file_path=f"{cwd}/note.txt")), text_reply("It says hello.")
    )
    subs = {READ_PROMPT: reader, FAILING_PROMPT: Script(then="http429"), STOPPED_PROMPT: waiting}
    return Conversations(main, subs)


async def prompt(out: Side, conn: Any, text: str) -> tuple[str, int]:
    start = len(out.frames)
    response = await asyncio.wait_for(conn.prompt(session_id=out.sid, prompt=[acp.text_block(text)]), 150)
    await asyncio.sleep(0)  # the observer has every frame the response followed
    return response.stop_reason, start


def records(out: Side) -> list[Any]:
    found = []
    for m in out.frames:
        meta = (m.get("params", {}).get("update") or {}).get("_meta") if "method" in m else None
        if meta is None and isinstance(m.get("result"), dict):
            meta = m["result"].get("_meta")
        if meta and read_record(meta) is not None:
            found.append(read_record(meta))
    return found


async def cancelled_child(out: Side, conn: Any) -> tuple[str, int]:
    """A prompt whose subagent runs ``sleep 60``: once its Bash runs (it wrote :data:`STARTED`;
    a cancel that comes while the Bash's permission question is still open may stop only that
    tool call, and Claude Code's child then goes on and completes), the client sends
    ``session/cancel`` naming the child."""
    start = len(out.frames)
    task = asyncio.create_task(conn.prompt(session_id=out.sid, prompt=[acp.text_block("have a subagent wait")]))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 90
    while not (out.cwd / STARTED).exists():
        assert loop.time() < deadline and not task.done(), out.updates(start)
        await asyncio.sleep(0.05)
    (child,) = {sid for sid, u in out.updates(start) if sid != out.sid}
    await conn.cancel(session_id=child)
    response = await asyncio.wait_for(task, 120)
    return response.stop_reason, start


async def all_prompts(impl: str, tmp: Path) -> dict[str, Any]:
    async with side(impl, tmp) as (out, conn):
        first = await prompt(out, conn, "have a subagent read the note")
        second = await prompt(out, conn, "have a subagent look around")
        third = await cancelled_child(out, conn)
        load = len(out.frames)  # the session loaded again: its children replayed from their files
        await asyncio.wait_for(conn.load_session(cwd=str(out.cwd), session_id=out.sid, mcp_servers=[]), 60)
        await asyncio.sleep(0)  # the observer has every frame the response followed
        return {"side": out, "first": first, "second": second, "third": third, "load": load}


def test_subagents_are_child_sessions_as_the_reference_shows_them(tmp_path: Path) -> None:
    async def go() -> dict[str, dict[str, Any]]:
        ours = await all_prompts("ours", tmp_path)
        reference = await all_prompts("reference", tmp_path)
        return {"ours": ours, "reference": reference}

    runs = asyncio.run(asyncio.wait_for(go(), 280))
    shown: dict[str, Any] = {}
    for impl, run in runs.items():
        out: Side = run["side"]
        (stop, start), (stop2, start2) = run["first"], run["second"]
        assert (stop, stop2) == ("end_turn", "end_turn"), impl
        # The foreground subagent: announced running on the parent, ended idle end_turn.
        announce, end = out.subagent_updates(start, start2)
        child = announce["sessionId"]
        assert child != out.sid, impl
        assert announce == {
            "sessionUpdate": "subagent_update", "sessionId": child, "title": "Read the note",
            "description": "general-purpose", "capabilities": {"cancel": {}}, "state": {"state": "running"},
        }, impl  # fmt: skip
        assert end == {
            "sessionUpdate": "subagent_update",
            "sessionId": child,
            "state": {"state": "idle", "stopReason": "end_turn"},
        }, impl
        # Its tool call and its text on the child's session, none of it on the parent's.
        on_child = [u for sid, u in out.updates(start, start2) if sid == child]
        read = [u for u in on_child if u.get("toolCallId") == "toolu_sub_read"]
        assert read and read[-1].get("status") == "completed", (impl, read)
        assert "completed" in [u.get("status") for u in read]
        texts = [u["content"]["text"] for u in on_child if u["sessionUpdate"] == "agent_message_chunk"]
        assert texts == ["It says hello."], (impl, texts)
        on_parent = [u for sid, u in out.updates(start, start2) if sid == out.sid]
        assert not [u for u in on_parent if u.get("toolCallId") == "toolu_sub_read"], impl
        parent_text = [u["content"]["text"] for u in on_parent if u["sessionUpdate"] == "agent_message_chunk"]
        assert parent_text == ["The subagent read it: hello."], impl
        # The failing subagent: its end is idle/error with Claude Code's text; the parent's
        # prompt ended end_turn (above) and no record was made anywhere.
        announce2, *rest = out.subagent_updates(start2, run["third"][1])
        assert announce2["title"] == "Look around" and announce2["state"] == {"state": "running"}, impl
        (failed,) = [u for u in rest if u.get("state", {}).get("state") == "idle"]
        assert failed["sessionId"] == announce2["sessionId"]
        state = failed["state"]
        assert (state["stopReason"], state["error"]["code"]) == ("error", -32603), impl
        assert state["error"]["message"].startswith(TERMINATED) and "HTTP 429" in state["error"]["message"], impl
        # The child the client cancelled: it ends idle/cancelled; the parent's turn goes on to its
        # answer and ends end_turn.
        stop3, start3 = run["third"]
        assert stop3 == "end_turn", impl
        announce3, *rest3 = out.subagent_updates(start3, run["load"])
        assert announce3["title"] == "Wait", impl
        ends3 = [u["state"] for u in rest3 if u.get("state", {}).get("state") == "idle"]
        assert ends3 == [{"state": "idle", "stopReason": "cancelled"}], (impl, rest3)
        # Its Bash's permission question went to the child's session, the child requires_action
        # while it waited, running after (the reference's toolUseOwner and awaitingUser).
        (asked,) = [q for q in out.client.questions if q["toolCall"]["toolCallId"] == "toolu_sub_sleep"]
        assert asked["sessionId"] == announce3["sessionId"], impl
        states3 = [u["state"]["state"] for u in rest3 if u["sessionId"] == announce3["sessionId"]]
        assert states3 == ["requires_action", "running", "idle"], (impl, rest3)
        answer3 = [
            u["content"]["text"]
            for s, u in out.updates(start3, run["load"])
            if s == out.sid and u["sessionUpdate"] == "agent_message_chunk"
        ]
        assert answer3 == ["The subagent was stopped."], (impl, answer3)
        assert records(out) == [], impl
        # session/load: each child announced on the parent with its labels, running; its history
        # on its own session; its end as it ended live (the reference's subagent-replay.js).
        load = run["load"]
        replayed = out.subagent_updates(load)
        for live in (announce, announce2, announce3):
            (again,) = [u for u in replayed if u["sessionId"] == live["sessionId"] and "title" in u]
            assert (again["title"], again["state"]) == (live["title"], {"state": "running"}), (impl, again)
        ends = {}
        for u in replayed:
            if u.get("state", {}).get("state") == "idle":
                ends.setdefault(u["sessionId"], u["state"]["stopReason"])
        assert ends == {child: "end_turn", announce2["sessionId"]: "error", announce3["sessionId"]: "cancelled"}, impl
        on_child_again = [u for sid, u in out.updates(load) if sid == child]
        read_again = [u for u in on_child_again if u.get("toolCallId") == "toolu_sub_read"]
        assert read_again[0]["sessionUpdate"] == "tool_call" and read_again[-1]["status"] == "completed", impl
        again_text = [u["content"]["text"] for u in on_child_again if u["sessionUpdate"] == "agent_message_chunk"]
        assert again_text == ["It says hello."], (impl, again_text)
        assert not [u for sid, u in out.updates(load) if sid == out.sid and u.get("toolCallId") == "toolu_sub_read"]
        # Every subagent_update is ACP's by its schema.
        for update in out.subagent_updates():
            assert conforms(update), (impl, update)
        shown[impl] = {
            "agent call on the parent": any(u.get("toolCallId") == "toolu_reader" for u in on_parent),
            "session_message": any(u["sessionUpdate"] == "session_message" for _, u in out.updates(start, start2)),
        }
    # The documented differences (docs/parity/README.md, "Subagents as child sessions").
    assert shown == {
        "ours": {"agent call on the parent": True, "session_message": False},
        "reference": {"agent call on the parent": False, "session_message": True},
    }
