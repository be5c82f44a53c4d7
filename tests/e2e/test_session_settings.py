"""The session an editor manages, end to end (issue 20): modes, model and effort, slash commands,
session list/resume/close and bad input, through the real ACP SDK client, ``python -m
lifecycle.agent`` and the real bundled Claude Code CLI against the fake Anthropic API.

Expected values are written out: the mode ids and names are the reference adapter's
(``dist/session-mode.js``), the config option ids and categories are ACP's and the reference's,
the model values are those Claude Code offers (its ``initialize`` answer); what Claude Code did is
read from what the fake API received (the model asked for, the plan-mode reminder, a slash
command's expansion) and from the files on disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import acp
import pytest
from acp import RequestError
from acp.schema import ClientCapabilities, TextContentBlock

from .claude_cli import AgentWorkspace, session_cli_pid
from .fakeapi import FakeAnthropicAPI, text_reply
from .harness import AIR, Run, Script, _fill_cwd, agent, body_of, run_async, select, tool_turn, tool_use

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

MODE_IDS = ["default", "acceptEdits", "plan", "dontAsk", "auto", "bypassPermissions"]
MODE_NAMES = ["Manual", "Accept edits", "Plan", "Don't ask", "Auto", "Bypass permissions"]
# Models the bundled Claude Code offers in its ``initialize`` answer (at least these).
CLAUDE_MODELS = {"default", "opus", "sonnet", "haiku"}


async def until(check: Callable[[], Any], timeout: float = 30.0) -> Any:
    """Wait until ``check()`` is truthy (it reads frames the client already received)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


def options_by_id(config_options: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["id"]: o for o in config_options}


def models_update(run: Run) -> dict[str, dict[str, Any]] | None:
    """The last ``config_option_update`` that lists Claude Code's models, by option id."""
    for update in reversed(run.of("config_option_update")):
        by_id = options_by_id(update["configOptions"])
        if len(by_id["model"]["options"]) > 1:
            return by_id
    return None


def new_session_frame(run: Run) -> dict[str, Any]:
    for m in run.incoming():
        if "result" in m and isinstance(m["result"], dict) and m["result"].get("sessionId") == run.sid:
            return m["result"]
    raise AssertionError("no session/new answer")


def test_new_session_offers_modes_models_effort_and_commands(tmp_path: Path) -> None:
    async def go() -> None:
        async with agent(tmp_path, Script(), select("reject")) as run:
            answer = new_session_frame(run)
            assert answer["modes"]["currentModeId"] == "default"
            assert [m["id"] for m in answer["modes"]["availableModes"]] == MODE_IDS
            assert [m["name"] for m in answer["modes"]["availableModes"]] == MODE_NAMES
            first = options_by_id(answer["configOptions"])
            assert first["mode"]["category"] == "mode" and first["mode"]["currentValue"] == "default"
            assert [o["value"] for o in first["mode"]["options"]] == MODE_IDS
            assert first["model"]["category"] == "model" and first["model"]["currentValue"] == "default"
            # Claude Code was started with the session: its models and effort levels follow.
            by_id = await until(lambda: models_update(run))
            values = {o["value"] for o in by_id["model"]["options"]}
            assert values >= CLAUDE_MODELS, values
            effort = by_id["effort"]
            assert effort["category"] == "thought_level" and effort["currentValue"] == "default"
            assert [o["value"] for o in effort["options"]][:1] == ["default"]
            assert {"low", "medium", "high"} <= {o["value"] for o in effort["options"]}
            # Its slash commands, without those that only work in its own terminal.
            update = await until(lambda: run.of("available_commands_update"))
            names = [c["name"] for c in update[-1]["availableCommands"]]
            assert "compact" in names and "init" in names
            assert not {"clear", "login", "logout", "mcp"} & set(names)
            assert len(names) == len(set(names))

    run_async(go())


def test_accept_edits_mode_writes_without_asking_and_keeps_claude_code_running(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(
            tool_turn(tool_use("Write", "toolu_w", file_path="{cwd}/edit.txt", content="ok\n")),
            text_reply("Written."),
        )
        async with agent(tmp_path, script, select("reject")) as run:
            _fill_cwd(script, run)
            await until(lambda: models_update(run))
            pid = session_cli_pid(run.workspace.config_dir, run.sid)
            await run.conn.set_session_mode(session_id=run.sid, mode_id="acceptEdits")
            response = await run.prompt("write ok to edit.txt")
            assert response.stop_reason == "end_turn"
            assert (run.workspace.cwd / "edit.txt").read_text() == "ok\n"
            assert run.client.questions == []  # acceptEdits: Claude Code did not ask
            assert session_cli_pid(run.workspace.config_dir, run.sid) == pid  # no restart

    run_async(go())


def test_plan_mode_reaches_claude_and_an_accepted_plan_switches_the_mode(tmp_path: Path) -> None:
    async def go() -> None:
        plan = "1. Write plan.txt"
        script = Script(
            tool_turn(tool_use("ExitPlanMode", "toolu_plan", plan=plan)),
            text_reply("Plan accepted."),
        )
        async with agent(tmp_path, script, select("exit-plan-default")) as run:
            await until(lambda: models_update(run))
            await run.conn.set_config_option(config_id="mode", session_id=run.sid, value="plan")
            response = await run.prompt("plan a file")
            assert response.stop_reason == "end_turn"
            first = run.api.message_requests[0]
            assert "plan mode" in str(body_of(first)["messages"]).lower()
            (question,) = run.client.questions
            assert [o["optionId"] for o in question["options"]] == [
                "exit-plan-auto",
                "exit-plan-default",
                "reject",
            ]  # no bypass: Claude Code refuses it for root here
            # set_config_option's (the reference's), then the accepted plan's switch
            assert [u["currentModeId"] for u in run.of("current_mode_update")] == ["plan", "default"]
            last = options_by_id(run.of("config_option_update")[-1]["configOptions"])
            assert last["mode"]["currentValue"] == "default"

    run_async(go())


def test_model_and_effort_change_the_running_claude_code(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(text_reply("From haiku."))
        async with agent(tmp_path, script, select("reject")) as run:
            await until(lambda: models_update(run))
            pid = session_cli_pid(run.workspace.config_dir, run.sid)
            answer = await run.conn.set_config_option(config_id="model", session_id=run.sid, value="haiku")
            by_id = options_by_id([o.model_dump(by_alias=True, exclude_none=True) for o in answer.config_options])
            assert by_id["model"]["currentValue"] == "haiku"
            answer = await run.conn.set_config_option(config_id="effort", session_id=run.sid, value="low")
            by_id = options_by_id([o.model_dump(by_alias=True, exclude_none=True) for o in answer.config_options])
            assert by_id["effort"]["currentValue"] == "low"
            response = await run.prompt("hello")
            assert response.stop_reason == "end_turn"
            turn = [body_of(r) for r in run.api.message_requests if "hello" in str(body_of(r)["messages"])]
            assert turn and all("haiku" in b["model"] for b in turn), [b["model"] for b in turn]
            assert session_cli_pid(run.workspace.config_dir, run.sid) == pid

    run_async(go())


def test_bad_choices_are_refused_naming_the_valid_ones_and_change_nothing(tmp_path: Path) -> None:
    async def go() -> None:
        async with agent(tmp_path, Script(), select("reject")) as run:
            await until(lambda: models_update(run))
            with pytest.raises(RequestError) as err:
                await run.conn.set_session_mode(session_id=run.sid, mode_id="yolo")
            assert err.value.code == -32602
            assert "valid modes: default, acceptEdits, plan, dontAsk, auto, bypassPermissions" in str(err.value.data)
            with pytest.raises(RequestError) as err:
                await run.conn.set_config_option(config_id="temperature", session_id=run.sid, value="1")
            assert err.value.code == -32602 and "valid options: mode, model, effort" in str(err.value.data)
            with pytest.raises(RequestError) as err:
                await run.conn.set_config_option(config_id="model", session_id=run.sid, value="gpt-9")
            assert err.value.code == -32602 and "valid models: default" in str(err.value.data)
            with pytest.raises(RequestError) as err:
                await run.conn.set_config_option(config_id="effort", session_id=run.sid, value="extreme")
            assert err.value.code == -32602 and "valid values: default, low" in str(err.value.data)
            # Root outside a sandbox: Claude Code refuses bypassPermissions; the mode is kept.
            if os.geteuid() == 0 and os.environ.get("IS_SANDBOX") != "1":
                with pytest.raises(RequestError) as err:
                    await run.conn.set_session_mode(session_id=run.sid, mode_id="bypassPermissions")
                assert err.value.code == -32602 and "root" in str(err.value.data)
            with pytest.raises(RequestError) as err:
                await run.conn.set_session_mode(session_id="no-such-session", mode_id="plan")
            assert err.value.code == -32602 and "unknown session" in str(err.value.data)
            # Nothing changed: a prompt still runs in the default mode and model.
            response = await run.prompt("hello")
            assert response.stop_reason == "end_turn"
            assert run.of("current_mode_update") == []

    run_async(go())


def test_slash_command_is_listed_and_runs(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(text_reply("Bonjour."))
        (tmp_path / "project" / ".claude" / "commands").mkdir(parents=True)
        (tmp_path / "project" / ".claude" / "commands" / "greet.md").write_text(
            "---\ndescription: Greet in French\n---\nSay hello in French, nothing else.\n"
        )
        async with agent(tmp_path, script, select("reject")) as run:
            update = await until(lambda: run.of("available_commands_update"))
            greet = [c for c in update[-1]["availableCommands"] if c["name"] == "greet"]
            assert greet and greet[0]["description"].startswith("Greet in French")
            response = await run.prompt("/greet")
            assert response.stop_reason == "end_turn"
            sent = [str(body_of(r)["messages"]) for r in run.api.message_requests]
            assert any("Say hello in French, nothing else." in m for m in sent)

    run_async(go())


def test_list_resume_and_close(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(text_reply("First answer."), text_reply("Second answer."), text_reply("Resumed answer."))
        async with agent(tmp_path, script, select("reject")) as run:
            await run.prompt("the first session's prompt")
            first = run.sid
            second = (await run.conn.new_session(cwd=str(run.workspace.cwd), mcp_servers=[])).session_id
            await run.conn.prompt(session_id=second, prompt=[TextContentBlock(type="text", text="second prompt")])
            listed = await run.conn.list_sessions(cwd=str(run.workspace.cwd))
            ids = [s.session_id for s in listed.sessions]
            assert ids[:2] == [second, first]  # newest first
            titles = {s.session_id: s.title for s in listed.sessions}
            assert titles[first] == "the first session's prompt"
            assert all(s.cwd == str(run.workspace.cwd) for s in listed.sessions)
            # Close: Claude Code stops, the session is gone, a prompt on it is refused clearly.
            pid = session_cli_pid(run.workspace.config_dir, first)
            await run.conn.close_session(session_id=first)
            await until(lambda: not Path(f"/proc/{pid}").exists() or _zombie(pid), timeout=20)
            with pytest.raises(RequestError) as err:
                await run.prompt("after close")
            assert err.value.code == -32602 and "session closed" in str(err.value.data)
            # Resume: the stored conversation continues, nothing is replayed.
            before = len(run.updates())
            resumed = await run.conn.resume_session(session_id=first, cwd=str(run.workspace.cwd), mcp_servers=[])
            assert resumed.modes is not None and resumed.modes.current_mode_id == "default"
            assert len(run.updates()) == before
            response = await run.prompt("after resume")
            assert response.stop_reason == "end_turn"
            sent = [str(body_of(r)["messages"]) for r in run.api.message_requests]
            turn = [m for m in sent if "after resume" in m]
            assert any("the first session's prompt" in m and "First answer." in m for m in turn)
            with pytest.raises(RequestError) as err:
                await run.conn.resume_session(session_id="0" * 8, cwd=str(run.workspace.cwd), mcp_servers=[])
            assert (err.value.code, str(err.value)) == (-32002, "Resource not found")  # the reference's

    run_async(go())


def _zombie(pid: int) -> bool:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    return True


@contextlib.asynccontextmanager
async def bare_agent(tmp_path: Path) -> AsyncIterator[tuple[Any, AgentWorkspace, dict[str, str]]]:
    """``python -m lifecycle.agent`` spawned by the ACP SDK's client, not initialized yet."""
    ws = AgentWorkspace()
    ws._workspace(tmp_path)
    api = FakeAnthropicAPI(Script())
    ws.api = api
    api.start()
    stderr = ws.stderr_path.open("w")
    env = ws.agent_env(2)
    try:
        client = type("C", (), {"session_update": lambda self, *a, **k: asyncio.sleep(0)})()
        async with acp.spawn_agent_process(
            client,  # type: ignore[arg-type]
            sys.executable,
            "-m",
            "lifecycle.agent",
            env=env,
            cwd=str(ws.cwd),
            transport_kwargs={"stderr": stderr},
        ) as (conn, _proc):
            yield conn, ws, env
    finally:
        stderr.close()
        api.stop()


def test_initialize_advertises_what_works(tmp_path: Path) -> None:
    async def go() -> None:
        async with bare_agent(tmp_path) as (conn, _ws, _env):
            caps_in = ClientCapabilities(field_meta=AIR)
            answer = await conn.initialize(protocol_version=1, client_capabilities=caps_in)
            caps = answer.agent_capabilities.model_dump(by_alias=True, exclude_none=True)
            assert caps["loadSession"] is True
            assert caps["promptCapabilities"] == {"image": True, "embeddedContext": True, "audio": False}
            assert caps["mcpCapabilities"] == {"http": True, "sse": True, "acp": False}
            session_caps = {"list", "resume", "close", "fork", "delete", "additionalDirectories"}
            assert set(caps["sessionCapabilities"]) == session_caps
            assert caps["auth"] == {"logout": {}}
            # the reference's prompt queueing (issue 50.B) and authStatus marker (issue 52.4), and
            # sessionFailure for an AIR client
            assert caps["_meta"] == {"claudeCode": {"promptQueueing": True}, "authStatus": {}, **AIR}

    run_async(go())


def test_terminal_login_runs_claude_codes_own_login_and_logout_clears_it(tmp_path: Path) -> None:
    async def go() -> None:
        async with bare_agent(tmp_path) as (conn, ws, env):
            caps = ClientCapabilities.model_validate({"auth": {"terminal": True}})
            answer = await conn.initialize(protocol_version=1, client_capabilities=caps)
            methods = [m.model_dump(by_alias=True, exclude_none=True) for m in answer.auth_methods]
            assert [m["id"] for m in methods] == ["claude-ai-login", "console-login", "claude-login"]
            console = methods[1]
            assert console["type"] == "terminal"
            assert console["args"] == ["--cli", "auth", "login", "--console"]
            # The editor runs the agent's own command with the method's arguments in a terminal:
            # that is Claude Code itself (here its status, with a stored API key).
            (ws.config_dir / ".claude.json").write_text('{"primaryApiKey": "sk-ant-stored"}')
            status = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "lifecycle.agent", "--cli", "auth", "status",
                env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            )  # fmt: skip
            out, _ = await asyncio.wait_for(status.communicate(), 60)
            assert status.returncode == 0 and '"loggedIn": true' in out.decode()
            # ACP logout (the ACP SDK's client has no ``logout`` call: the raw request) is Claude
            # Code's own logout: the stored key is gone.
            assert await conn._conn.send_request("logout", {}) == {}
            assert "primaryApiKey" not in (ws.config_dir / ".claude.json").read_text()

    run_async(go())
