"""The lifecycle on child sessions (issue 51.2, 51.6) on the real CLI through the real ACP client:
one ``lifecycle acp`` agent behind the Python ACP SDK's client declaring both
``clientCapabilities.subagents: {}`` and the ``sessionFailure`` extension, the bundled Claude Code,
the fake API routing each subagent's requests by its conversation (its first message holds its
prompt: the harness's ``Lanes``). Four prompts, each in its own session:

1. a subagent whose every request gets a 429 until Claude Code gives up (after its retries,
   which Claude Code 2.1.337 does not report for a subagent: no ``api_retry`` reaches the stream,
   so the child shows no warning). Asserted (spec, "Delivery surfaces": a failure with no prompt
   response rides ``session_info_update``): the typed record on the **child's** session, id
   ``<child>:error``, revision 1, ``limit``/``error``/``retry`` (README's conditions table,
   ``rate_limit``), Claude Code's text as the title; then ``subagent_update`` idle/error with the
   JSON-RPC error a legacy client gets for ``rate_limit`` (-32603, ``data.errorKind``); the
   parent's prompt ends ``end_turn`` with no record, and no record on the parent session at all.
   Then bad input (issue 51.6): a steer naming the ended child, or an id nobody knows, is a
   ``-32602`` saying which; a cancel naming the ended child changes nothing (logged).
2. a subagent running ``sleep 60``: a steer naming it is a ``-32602`` saying only a cancel
   applies; then the client closes the parent session: the child's last ``subagent_update`` is
   idle/``cancelled`` and its ``sleep`` and Claude Code are gone (no orphan).
3. the same, then Claude Code is killed: the child ends ``{state: idle}`` with no stop reason
   (the reference adapter 0.101.0's ``rfdEndState`` for a task orphaned by the stream's end), no
   record on the child (the runtime's loss is the parent turn's ``connection`` record, once).
4. the same, then the client closes the agent's stdin: the client is gone (the ACP connection ends
   with its stdin, so nothing reaches it any more); the child's end is logged (``subagent.end``),
   the agent exits 0, and nothing it started outlives it.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

import acp
import pytest

from lifecycle import read_record

from .cli_env import session_cli_pid
from .fakeapi import text_reply
from .harness import AIR, Lanes, Run, Script, agent, select, tool_turn, tool_use
from .processes import GONE_WITHIN_S, alive, cmdline, descendants, stat, survivors, until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

FAILING_PROMPT = "Look around the project (a child whose requests get 429)."
#: Claude Code 2.1.337's end of a subagent whose requests failed (its task's error), first words.
TERMINATED = "Agent terminated early due to an API error: API Error: "
WAITS = {
    "close": "Wait a minute (a child whose session the client closes).",
    "kill": "Wait a minute (a child whose Claude Code is killed).",
    "eof": "Wait a minute (a child whose agent's stdin closes).",
}
#: The file a waiting child's Bash writes in the session's folder when it runs (then it sleeps).
STARTED = "child-bash-started"
SLEEP = b"sleep\x0060\x00"


def agent_call(tool_id: str, description: str, prompt: str) -> Any:
    """A foreground subagent (Claude Code runs one in the background by default)."""
    agent = tool_use(
        "Agent", tool_id, description=description, prompt=prompt, subagent_type="general-purpose",
        run_in_background=False,
    )  # fmt: skip
    return tool_turn(agent)


def script() -> Any:
    """The fake API's answers by conversation (harness ``Lanes``, one per subagent's prompt)."""
    main = Script(
        agent_call("toolu_failing", "Look around", FAILING_PROMPT),
        text_reply("The subagent could not look."),
        *(agent_call(f"toolu_wait_{name}", "Wait", prompt) for name, prompt in WAITS.items()),
    )
    wait = tool_use("Bash", "toolu_sub_sleep", command=f"touch {STARTED}; sleep 60", description="Wait a minute")
    subs = {FAILING_PROMPT: Script(then="http429"), **{p: Script(tool_turn(wait)) for p in WAITS.values()}}
    router: Any = main
    for prompt, sub in subs.items():
        router = Lanes(router, sub=sub, sub_prompt=prompt)
    return router


def frames(run: Run, start: int = 0) -> list[dict[str, Any]]:
    return run.incoming()[start:]


def updates(run: Run, start: int = 0) -> list[tuple[str, dict[str, Any]]]:
    return [
        (m["params"]["sessionId"], m["params"]["update"])
        for m in frames(run, start)
        if m.get("method") == "session/update"
    ]


def subagent_updates(run: Run, start: int = 0) -> list[dict[str, Any]]:
    return [u for _, u in updates(run, start) if u["sessionUpdate"] == "subagent_update"]


async def request_error(run: Run, method: str, params: dict[str, Any]) -> acp.RequestError:
    try:
        await asyncio.wait_for(run.conn._conn.send_request(method, params), 30)
    except acp.RequestError as exc:
        return exc
    raise AssertionError(f"{method} was answered")


def steer(session_id: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": "and also this"}]}


async def new_session(run: Run) -> str:
    (run.workspace.cwd / STARTED).unlink(missing_ok=True)
    run.sid = (await run.conn.new_session(cwd=str(run.workspace.cwd), mcp_servers=[])).session_id
    return run.sid


async def waiting_child(run: Run, name: str) -> tuple[asyncio.Future[Any], str, dict[int, int], int]:
    """Session ``run.sid``'s prompt whose subagent runs ``sleep 60``, once it runs: the prompt, the
    child's id, the sleep's and the session's Claude Code's processes (pid -> start time), and
    Claude Code's pid."""
    start = len(run.incoming())
    prompt = asyncio.ensure_future(run.prompt(f"have a subagent wait ({name})"))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 90
    while not (run.workspace.cwd / STARTED).exists():
        assert loop.time() < deadline and not prompt.done(), updates(run, start)
        await asyncio.sleep(0.05)
    announce, *asked = subagent_updates(run, start)
    assert announce["state"] == {"state": "running"}
    # the child's question for its sleep, if the client was asked: requires_action, then running (issue 51.1)
    assert all(u["sessionId"] == announce["sessionId"] for u in asked), asked
    assert [u["state"]["state"] for u in asked] in ([], ["requires_action", "running"]), asked

    def sleeping() -> dict[int, int]:
        return {pid: t for pid, t in descendants(run.proc.pid).items() if cmdline(pid).startswith(SLEEP)}

    sleeps: dict[int, int] = await until(sleeping, 30, lambda: "the child's sleep runs")
    cli = session_cli_pid(run.workspace.config_dir, run.sid)
    return prompt, announce["sessionId"], {**sleeps, cli: started_at(cli)}, cli


def started_at(pid: int) -> int:
    st = stat(pid)
    assert st is not None, pid
    return st[2]


async def last_update_of(run: Run, child: str, start: int) -> dict[str, Any]:
    def ended() -> list[dict[str, Any]]:
        return [
            u
            for u in subagent_updates(run, start)
            if u["sessionId"] == child and u.get("state", {}).get("state") == "idle"
        ]

    (end,) = await until(ended, 60, lambda: str(subagent_updates(run, start)))
    return end


def test_a_childs_lifecycle_on_its_own_session_and_its_end_with_its_parent(tmp_path: Path) -> None:
    def prepare(ws: Any, env: dict[str, str]) -> None:
        (ws.config_dir / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "default"}}))

    async def go() -> None:
        caps = {"subagents": {}, "_meta": AIR}
        async with agent(tmp_path, script(), select("allow-once"), raw_caps=caps, prepare=prepare) as run:
            # 1. the failing child: its record on its own session, its end state, the parent untouched
            response = await asyncio.wait_for(run.prompt("have a subagent look around"), 150)
            assert response.stop_reason == "end_turn" and response.field_meta is None
            announce, failed = subagent_updates(run)
            child = announce["sessionId"]
            assert failed["sessionId"] == child
            error = failed["state"]["error"]
            assert (failed["state"]["stopReason"], error["code"], error["data"]) == (
                "error",
                -32603,
                {"errorKind": "rate_limit"},
            )
            assert error["message"].startswith(TERMINATED)
            shown = [(sid, u) for sid, u in updates(run) if u.get("_meta") and read_record(u["_meta"]) is not None]
            ((sid, info),) = shown
            assert (sid, info["sessionUpdate"]) == (child, "session_info_update")
            record = read_record(info["_meta"])
            assert record is not None
            assert (record.id, record.revision, record.category, record.severity, record.actions) == (
                f"{child}:error", 1, "limit", "error", ("retry",)
            )  # fmt: skip
            assert record.title.startswith(TERMINATED)
            order = [u["sessionUpdate"] for _, u in updates(run) if u in (info, failed)]
            assert order == ["session_info_update", "subagent_update"]  # the record, then the end
            assert run.records() == [record]  # none on the parent, none on its prompt response
            # bad input: the ended child, an unknown id
            exc = await request_error(run, "_session/steering", steer(child))
            assert exc.code == -32602 and "that ended" in exc.data["details"], exc.data
            assert run.sid in exc.data["details"]
            exc = await request_error(run, "_session/steering", steer("no-such-session"))
            assert (exc.code, exc.data["details"]) == (-32602, "unknown session")
            await run.conn.cancel(session_id=child)
            await until(
                lambda: [e for e in run.workspace.log() if e.get("event") == "session.cancel_ignored"],
                10,
                lambda: "the ignored cancel is logged",
            )
            ignored = [e for e in run.workspace.log() if e.get("event") == "session.cancel_ignored"]
            assert [(e["session_id"], e["reason"]) for e in ignored] == [(child, "child_ended")]

            # 2. a running child whose session the client closes
            await new_session(run)
            start = len(run.incoming())
            prompt, child, recorded, _ = await waiting_child(run, "close")
            exc = await request_error(run, "_session/steering", steer(child))
            assert exc.code == -32602 and "only session/cancel applies" in exc.data["details"], exc.data
            await asyncio.wait_for(run.conn.close_session(session_id=run.sid), 30)
            end = await last_update_of(run, child, start)
            assert end == {
                "sessionUpdate": "subagent_update",
                "sessionId": child,
                "state": {"state": "idle", "stopReason": "cancelled"},
            }
            await until(lambda: not alive(recorded), GONE_WITHIN_S, lambda: survivors(recorded))
            assert (await asyncio.wait_for(prompt, 30)).stop_reason == "cancelled"

            # 3. a running child whose Claude Code is killed
            await new_session(run)
            start = len(run.incoming())
            prompt, child, recorded, cli = await waiting_child(run, "kill")
            os.kill(cli, signal.SIGKILL)
            end = await last_update_of(run, child, start)
            assert end == {"sessionUpdate": "subagent_update", "sessionId": child, "state": {"state": "idle"}}
            response = await asyncio.wait_for(prompt, 60)
            assert response.stop_reason == "end_turn"
            lost = read_record(response.field_meta)
            assert lost is not None and lost.category == "connection"
            on_child = [
                u for sid, u in updates(run, start) if sid == child and u.get("_meta") and read_record(u["_meta"])
            ]
            assert on_child == []  # the runtime's loss is the parent turn's, once
            await until(lambda: not alive(recorded), GONE_WITHIN_S, lambda: survivors(recorded))

            # 4. a running child whose agent's stdin closes: the client is gone (the ACP connection
            # ended with it, nothing can reach it), the child ends and nothing outlives the agent
            await new_session(run)
            prompt, child, recorded, _ = await waiting_child(run, "eof")
            assert run.proc.stdin is not None
            run.proc.stdin.close()
            assert await asyncio.wait_for(run.proc.wait(), 30) == 0
            await until(lambda: not alive(recorded), GONE_WITHIN_S, lambda: survivors(recorded))
            ends = [(e["child_id"], e["status"]) for e in run.workspace.log() if e.get("event") == "subagent.end"]
            assert ends[-1] == (child, "cancelled") and len(ends) == 4, ends  # one end per child, each logged
            prompt.cancel()
            await asyncio.gather(prompt, return_exceptions=True)

    asyncio.run(asyncio.wait_for(go(), 280))
