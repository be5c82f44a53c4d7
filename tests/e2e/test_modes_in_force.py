"""Modes are what they say (issue 29, points 2 and 3), end to end: the real ACP SDK client spawns
``python -m lifecycle.agent``, which drives the real bundled Claude Code CLI against the fake
Anthropic API on 127.0.0.1.

* A mode or model chosen right after the ``session/new`` answer, while Claude Code is still
  starting, is in force for the first prompt: the request the fake API receives carries Claude
  Code's plan-mode reminder (:data:`PLAN_REMINDER`, a literal taken from a captured request) or
  asks for the chosen model, and ``ExitPlanMode`` is asked about rather than refused.
* ``permissions.defaultMode`` in Claude Code's settings (user, project, local project, in Claude
  Code's documented precedence: local > project > user) is the mode ``session/new`` reports, and
  the one Claude Code works in: a Write inside the project runs without
  ``session/request_permission`` in ``acceptEdits``. The agent's own ``--permission-mode``
  (``LIFECYCLE_ACP_PERMISSION_MODE``) wins over the settings.

Expected values are literals: the mode ids are ACP's and the reference adapter's, the option ids
of the ExitPlanMode question the reference's, the reminder Claude Code's own words.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .claude_cli import AgentWorkspace
from .fakeapi import text_reply
from .harness import Answer, Run, Script, _fill_cwd, agent, body_of, run_async, select, tool_turn, tool_use

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

#: Claude Code 2.1.332's plan-mode reminder (in the user message of a request made in plan mode).
PLAN_REMINDER = "Plan mode is active. The user indicated that they do not want you to execute yet"


def messages_text(run: Run, index: int = 0) -> str:
    return json.dumps(body_of(run.api.message_requests[index])["messages"])


def new_session_answer(run: Run) -> dict[str, Any]:
    for m in run.incoming():
        if "result" in m and isinstance(m["result"], dict) and m["result"].get("sessionId") == run.sid:
            return m["result"]
    raise AssertionError("no session/new answer")


def tool_result_blocks(run: Run, index: int, tool_use_id: str) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks for ``tool_use_id`` in the ``index``-th request's messages."""
    return [
        block
        for message in body_of(run.api.message_requests[index])["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") == tool_use_id
    ]


def current_values(answer: Any) -> dict[str, Any]:
    """A ``session/set_config_option`` answer's options: id -> current value."""
    dumped = [o.model_dump(by_alias=True, exclude_none=True) for o in answer.config_options]
    return {o["id"]: o["currentValue"] for o in dumped}


def permission_requests(run: Run) -> list[dict[str, Any]]:
    return [m for m in run.incoming() if m.get("method") == "session/request_permission"]


# ------------------------------------------------------------------ point 2: a choice while Claude Code starts


async def starting(run: Run, when: str) -> None:
    """Return at the moment ``when`` names: ``at once`` (right after the ``session/new`` answer),
    or ``while starting`` (once the agent logged that it starts the session's Claude Code with the
    options it computed, before that Claude Code answered: the window issue 29 found)."""
    if when == "at once":
        return
    deadline = time.monotonic() + 60
    while not any(e.get("event") == "runtime.start" and e.get("session_id") == run.sid for e in run.workspace.log()):
        assert time.monotonic() < deadline, "the agent never started Claude Code"
        await asyncio.sleep(0.005)


WHEN = ["at once", "while starting"]


async def choose_plan(run: Run, how: str) -> None:
    if how == "set_mode":
        await run.conn.set_session_mode(session_id=run.sid, mode_id="plan")
    else:
        answer = await run.conn.set_config_option(config_id="mode", session_id=run.sid, value="plan")
        assert current_values(answer)["mode"] == "plan"


@pytest.mark.parametrize("when", WHEN)
@pytest.mark.parametrize("how", ["set_mode", "set_config_option"])
def test_plan_mode_chosen_while_claude_code_starts_is_in_force(tmp_path: Path, how: str, when: str) -> None:
    async def go() -> None:
        script = Script(
            tool_turn(tool_use("ExitPlanMode", "toolu_plan", plan="1. Write plan.txt")),
            text_reply("Plan accepted."),
        )
        async with agent(tmp_path, script, select("exit-plan-default")) as run:
            await starting(run, when)
            await choose_plan(run, how)  # Claude Code is still starting
            response = await run.prompt("plan a file")
            assert response.stop_reason == "end_turn"
            assert PLAN_REMINDER in messages_text(run, 0)
            # Claude Code was in plan mode: ExitPlanMode was asked about (the reference's options)
            # and, accepted, ran (its result is no error).
            (question,) = [m["params"] for m in permission_requests(run)]
            assert question["toolCall"]["toolCallId"] == "toolu_plan"
            assert [o["optionId"] for o in question["options"]] == ["exit-plan-auto", "exit-plan-default", "reject"]
            (result,) = tool_result_blocks(run, 1, "toolu_plan")
            assert not result.get("is_error"), result
            # The mode selector follows a set_config_option (the reference's setSessionConfigOption
            # sends current_mode_update; its setSessionMode a config_option_update), then the switch
            # the accepted plan made.
            chosen = ["plan"] if how == "set_config_option" else []
            assert [u["currentModeId"] for u in run.of("current_mode_update")] == [*chosen, "default"]

    run_async(go())


def test_without_a_choice_there_is_no_plan_mode_reminder(tmp_path: Path) -> None:
    """The counter-example of the test above: the literal is plan mode's, not every request's."""

    async def go() -> None:
        async with agent(tmp_path, Script(text_reply("Hello.")), select("reject")) as run:
            assert (await run.prompt("plan a file")).stop_reason == "end_turn"
            assert PLAN_REMINDER not in messages_text(run, 0)

    run_async(go())


@pytest.mark.parametrize("when", WHEN)
def test_model_chosen_while_claude_code_starts_is_in_force(tmp_path: Path, when: str) -> None:
    async def go() -> None:
        async with agent(tmp_path, Script(text_reply("From haiku.")), select("reject")) as run:
            await starting(run, when)
            answer = await run.conn.set_config_option(config_id="model", session_id=run.sid, value="haiku")
            assert current_values(answer)["model"] == "haiku"
            assert (await run.prompt("hello")).stop_reason == "end_turn"
            turn = [body_of(r) for r in run.api.message_requests if "hello" in json.dumps(body_of(r)["messages"])]
            assert turn and all("haiku" in b["model"] for b in turn), [b["model"] for b in turn]

    run_async(go())


# ------------------------------------------------------------------ point 3: the mode of Claude Code's settings


ACCEPT_EDITS = {"permissions": {"defaultMode": "acceptEdits"}}
PLAN = {"permissions": {"defaultMode": "plan"}}


def settings_agent(
    tmp_path: Path,
    script: Script,
    answer: Answer,
    *,
    files: Callable[[AgentWorkspace], dict[Path, dict[str, Any]]],
    claude_config_dir: bool = True,
    env: dict[str, str] | None = None,
) -> contextlib.AbstractAsyncContextManager[Run]:
    """:func:`tests.e2e.test_coding_turn.agent` with Claude Code's settings files written first
    (``files``: path -> content); ``claude_config_dir=False``: no ``CLAUDE_CONFIG_DIR``, so Claude
    Code's user folder is the isolated HOME's ``~/.claude``; ``env``: more agent environment."""

    def prepare(ws: AgentWorkspace, agent_env: dict[str, str]) -> None:
        if not claude_config_dir:
            del agent_env["CLAUDE_CONFIG_DIR"]
        agent_env.update(env or {})
        for path, content in files(ws).items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(content))

    return agent(tmp_path, script, answer, prepare=prepare)


SETTINGS_CASES: dict[str, tuple[Callable[[AgentWorkspace], dict[Path, dict[str, Any]]], bool]] = {
    # the user's ~/.claude/settings.json (no CLAUDE_CONFIG_DIR: Claude Code's default folder)
    "user home": (lambda ws: {ws.home / ".claude" / "settings.json": ACCEPT_EDITS}, False),
    # the user's settings in $CLAUDE_CONFIG_DIR
    "user config dir": (lambda ws: {ws.config_dir / "settings.json": ACCEPT_EDITS}, True),
    # the project's .claude/settings.json
    "project": (lambda ws: {ws.cwd / ".claude" / "settings.json": ACCEPT_EDITS}, True),
    # local project settings win over the project's and the user's
    "local over project": (
        lambda ws: {
            ws.config_dir / "settings.json": PLAN,
            ws.cwd / ".claude" / "settings.json": PLAN,
            ws.cwd / ".claude" / "settings.local.json": ACCEPT_EDITS,
        },
        True,
    ),
}


def write_turn() -> Script:
    return Script(
        tool_turn(tool_use("Write", "toolu_w", file_path="{cwd}/edit.txt", content="ok\n")),
        text_reply("Written."),
    )


@pytest.mark.parametrize("case", list(SETTINGS_CASES))
def test_default_mode_of_claude_codes_settings_is_the_reported_and_working_mode(tmp_path: Path, case: str) -> None:
    files, config_dir = SETTINGS_CASES[case]

    async def go() -> None:
        script = write_turn()
        async with settings_agent(tmp_path, script, select("reject"), files=files, claude_config_dir=config_dir) as run:
            _fill_cwd(script, run)
            answer = new_session_answer(run)
            assert answer["modes"]["currentModeId"] == "acceptEdits"
            mode = {o["id"]: o for o in answer["configOptions"]}["mode"]
            assert mode["currentValue"] == "acceptEdits"
            assert (await run.prompt("write ok to edit.txt")).stop_reason == "end_turn"
            assert (run.workspace.cwd / "edit.txt").read_text() == "ok\n"
            assert permission_requests(run) == []  # acceptEdits: Claude Code did not ask
            assert run.of("current_mode_update") == []  # the answer was right: nothing to correct

    run_async(go())


def test_the_agents_own_permission_mode_wins_over_the_settings(tmp_path: Path) -> None:
    async def go() -> None:
        script = write_turn()
        files = SETTINGS_CASES["project"][0]
        env = {"LIFECYCLE_ACP_PERMISSION_MODE": "default"}
        async with settings_agent(tmp_path, script, select("reject"), files=files, env=env) as run:
            _fill_cwd(script, run)
            assert new_session_answer(run)["modes"]["currentModeId"] == "default"
            assert (await run.prompt("write ok to edit.txt")).stop_reason == "end_turn"
            assert not (run.workspace.cwd / "edit.txt").exists()  # asked, and rejected
            (question,) = permission_requests(run)
            assert question["params"]["toolCall"]["toolCallId"] == "toolu_w"

    run_async(go())
