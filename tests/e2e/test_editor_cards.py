"""What a client that declares them draws (issue 50, C.2 and C.3), one agent for both prompts.

A command as a terminal card: for a client that declares
``clientCapabilities._meta.terminal_output: true`` (Zed; the ACP registry's validator declares it
too), a Bash tool call is the reference adapter 0.101.0's terminal (``dist/tool-calls/renderer.js``,
``reporters/bash.js``). One prompt, two commands on the real CLI: one that succeeds (Claude Code
allows ``echo`` by itself) and one that exits 3 (asked, allowed once).

The approved plan as Markdown: for a client that declares ``clientCapabilities.plan`` (ACP plan
operations), the plan of an ``ExitPlanMode`` the user approved follows its tool call as a
``plan_update`` (the reference's ``exit-plan.js`` ``planModeUpdate``, sent after the tool's result).

The expected frames are literals: what the reference sent for the same script, the same client and
the same CLI (2.1.337), recorded on 2026-12-07 (docs/acp-agent.md, "A command as a terminal card"),
with our ``in_progress`` beat (docs/parity). A plain client's console block
is held against the reference by tests/e2e/test_reference_oracle_tools.py.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from .fakeapi import text_reply
from .harness import Script, agent, run_async, tool_turn, tool_use


async def until(check: Any, what: Any, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds  # (a bound for a broken agent, not a timing)
    while not check():
        assert time.monotonic() < deadline, what()
        await asyncio.sleep(0.05)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

#: Zed's terminal extension and ACP plan operations.
CLIENT = {"_meta": {"terminal_output": True}, "plan": {}}
PLAN = "1. Write plan.txt\n2. Say done."


def answer(params: dict[str, Any]) -> Any:
    """Allow the command once; approve the plan with manual edits (the reference's option ids)."""
    option = "exit-plan-default" if params["toolCall"]["toolCallId"] == "toolu_plan" else "allow-once"
    return {"outcome": {"outcome": "selected", "optionId": option}}


def terminal(tool_id: str) -> list[dict[str, Any]]:
    return [{"type": "terminal", "terminalId": tool_id}]


def test_bash_is_a_terminal_card_and_an_approved_plan_a_markdown_plan(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(
            tool_turn(tool_use("Bash", "toolu_ok", command="echo hello-term", description="Say hello")),
            tool_turn(tool_use("Bash", "toolu_bad", command="echo oops; exit 3", description="Fail")),
            text_reply("Done."),
        )
        async with agent(tmp_path, script, answer, raw_caps=CLIENT) as run:  # type: ignore[arg-type]
            assert (await run.prompt("run two commands")).stop_reason == "end_turn"
            for tool_id, command, output, code, status in (
                ("toolu_ok", "echo hello-term", "hello-term", 0, "completed"),
                ("toolu_bad", "echo oops; exit 3", "Exit code 3\noops", 3, "failed"),
            ):
                updates = run.tool(tool_id)
                # The card: announced with its terminal (the reference's first frame, word for word).
                # The card: announced with its terminal (the reference's first frame, word for word,
                # when the stream announces it; a command Claude Code asks about may be announced by
                # its question first under load, then with its whole input).
                (announced,) = [u for u in updates if u["sessionUpdate"] == "tool_call"]
                asked = tool_id == "toolu_bad" and announced["title"] != "Terminal"  # (only it is asked)
                assert announced == {
                    "toolCallId": tool_id, "title": "Terminal", "kind": "execute", "status": "pending",
                    "content": terminal(tool_id), "rawInput": {},
                    "_meta": {"claudeCode": {"toolName": "Bash"}, "terminal_info": {"terminal_id": tool_id}},
                    "sessionUpdate": "tool_call",
                } | ({"title": command, "rawInput": {"command": command, "description": "Fail"}} if asked else {})
                assert updates[0] is announced
                assert run.tool_state(tool_id)["title"] == command
                assert all(u["content"] == terminal(tool_id) for u in updates if "content" in u)
                # Claude Code's structured result first, for the command that succeeded (the
                # reference's PostToolUse report, word for word; none for a failure, which has none)
                reported = [u for u in updates if "toolResponse" in (u.get("_meta") or {}).get("claudeCode", {})]
                assert reported == (
                    [
                        {
                            "toolCallId": tool_id,
                            "_meta": {
                                "claudeCode": {
                                    "toolResponse": {
                                        "stdout": output, "stderr": "", "interrupted": False, "isImage": False,
                                        "noOutputExpected": False,
                                    },
                                    "toolName": "Bash",
                                }
                            },
                            "sessionUpdate": "tool_call_update",
                        }
                    ]
                    if code == 0
                    else []
                )  # fmt: skip
                # The output, then the end with the exit code (the reference's last two frames).
                assert updates[-2:] == [
                    {
                        "toolCallId": tool_id,
                        "_meta": {"terminal_output": {"terminal_id": tool_id, "data": output}},
                        "sessionUpdate": "tool_call_update",
                    },
                    {
                        "toolCallId": tool_id, "status": status,
                        "_meta": {
                            "claudeCode": {"toolName": "Bash"},
                            "terminal_exit": {"terminal_id": tool_id, "exit_code": code, "signal": None},
                        },
                        "sessionUpdate": "tool_call_update",
                    },
                ]  # fmt: skip
                # No console block anywhere: the terminal carries the output.
                assert not any("console" in str(u.get("content")) for u in updates)
            # The question about the failing command shows its terminal, as the reference's does.
            (question,) = run.client.questions
            assert question["toolCall"]["toolCallId"] == "toolu_bad"
            assert question["toolCall"]["content"] == terminal("toolu_bad")
            assert run.of("plan_update") == []
            # Plan mode: Claude asks to leave it with its plan; approved, the plan follows as Markdown.
            await run.conn.set_session_mode(session_id=run.sid, mode_id="plan")
            script.add(tool_turn(tool_use("ExitPlanMode", "toolu_plan", plan=PLAN)), text_reply("Planned."))
            assert (await run.prompt("plan it")).stop_reason == "end_turn"
            assert run.of("plan_update") == [
                {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "plan-mode", "content": PLAN}}
            ]
            # after the tool call's result (the reference sends it there)
            kinds = [(u["sessionUpdate"], u.get("toolCallId"), u.get("status")) for u in run.updates()]
            at = kinds.index(("plan_update", None, None))
            assert kinds[at - 1] == ("tool_call_update", "toolu_plan", "completed")
            # A command sent to the background: its terminal runs on past the launch (the result's
            # end has no terminal_exit) and ends when its task ends, with no exit code (the
            # reference's withRunningTerminal and SessionBackgroundWork.taskEnded, background-work.js;
            # it sent these two frames for the same script, run side by side on 2026-12-07).
            await run.conn.set_session_mode(session_id=run.sid, mode_id="default")
            script.add(
                tool_turn(
                    tool_use("Bash", "toolu_bg_term", command="sleep 1; echo bg-term", description="Later",
                             run_in_background=True)
                ),
                text_reply("It runs."),
            )  # fmt: skip
            script.add(text_reply("The job printed bg-term."))  # Claude Code's own turn for its end
            assert (await run.prompt("run it in the background")).stop_reason == "end_turn"
            launched = run.tool("toolu_bg_term")
            assert launched[-1] == {
                "toolCallId": "toolu_bg_term", "status": "completed", "_meta": {"claudeCode": {"toolName": "Bash"}},
                "sessionUpdate": "tool_call_update",
            }  # fmt: skip
            assert launched[-2]["_meta"]["terminal_output"]["data"].startswith("Command running in background")
            exit_ = {
                "toolCallId": "toolu_bg_term", "sessionUpdate": "tool_call_update",
                "_meta": {"terminal_exit": {"terminal_id": "toolu_bg_term", "exit_code": None, "signal": None}},
            }  # fmt: skip
            await until(lambda: exit_ in run.tool("toolu_bg_term"), lambda: run.tool("toolu_bg_term"))
            assert run.tool("toolu_bg_term").count(exit_) == 1
            # session/load replays each command as its terminal card: the frames the reference
            # replayed for the same command and client (run side by side on 2026-12-07, CLI
            # 2.1.337, less its non-schema ``name`` key: docs/parity), the exit code read from
            # the stored result text.
            start = len(run.frames)
            await run.conn.load_session(cwd=str(run.workspace.cwd), session_id=run.sid, mcp_servers=[])
            replayed = [
                m["params"]["update"]
                for _, m in run.frames[start:]
                if m.get("method") == "session/update" and m["params"]["update"].get("toolCallId") == "toolu_bad"
            ]
            assert replayed == [
                {
                    "_meta": {"claudeCode": {"toolName": "Bash"}, "terminal_info": {"terminal_id": "toolu_bad"}},
                    "toolCallId": "toolu_bad", "sessionUpdate": "tool_call",
                    "rawInput": {"command": "echo oops; exit 3", "description": "Fail"}, "status": "pending",
                    "title": "echo oops; exit 3", "kind": "execute", "content": terminal("toolu_bad"),
                },
                {
                    "_meta": {"terminal_output": {"terminal_id": "toolu_bad", "data": "Exit code 3\noops"}},
                    "toolCallId": "toolu_bad", "sessionUpdate": "tool_call_update",
                },
                {
                    "_meta": {
                        "claudeCode": {"toolName": "Bash"},
                        "terminal_exit": {"terminal_id": "toolu_bad", "exit_code": 3, "signal": None},
                    },
                    "toolCallId": "toolu_bad", "sessionUpdate": "tool_call_update", "status": "failed",
                    "content": terminal("toolu_bad"),
                },
            ]  # fmt: skip

    run_async(go())
