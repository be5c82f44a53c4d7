"""The reference adapter's command line and environment (issue 50.4), on the real bundled Claude
Code through the real ACP SDK client, side by side with the reference adapter 0.101.0, the fake
Anthropic API on 127.0.0.1 the only fake:

* ``--version`` prints the version and exits 0, also with other flags (the reference's
  ``index.js``);
* ``MAX_THINKING_TOKENS`` reaches Claude Code as the reference passes it (what the fake API
  receives as ``thinking``), ``ANTHROPIC_MODEL`` is the model the picker starts on and the one
  the request names, ``ANTHROPIC_CUSTOM_MODEL_OPTION`` is in the picker and
  ``CLAUDE_MODEL_CONFIG``'s ``availableModels`` narrows it: the same picker as the reference's;
  ``CLAUDE_AGENT_LOGS`` gets ``agent.log``;
* ``--hide-claude-auth`` leaves the Claude subscription login out of ``authMethods``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lifecycle import __version__

from .claude_cli import AgentWorkspace
from .fakeapi import text_reply
from .harness import Run, Script, agent, body_of, is_prompt_suggestion, run_async, select
from .oracle import reference_agent
from .reference import ensure_reference, node_binary

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

THINKING = "3072"
#: A model id Claude Code does not list: the picker shows it as it runs it.
MODEL = "claude-haiku-4-5"
CUSTOM = "my-custom-model-50"


def test_version_prints_the_version_and_exits_0_as_the_references() -> None:
    ours = [
        subprocess.run([sys.executable, "-m", "lifecycle.agent", *argv], capture_output=True, text=True, timeout=60)
        for argv in (["--version"], ["-v"], ["--model", "x", "--version"])
    ]
    assert [(p.returncode, p.stdout) for p in ours] == [(0, f"{__version__}\n")] * 3
    reference = ensure_reference()
    theirs = subprocess.run(
        [node_binary(), str(reference / "dist" / "index.js"), "--model", "x", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (theirs.returncode, theirs.stdout) == (0, "0.101.0\n")  # the reference's package version


def _env(ws: AgentWorkspace, env: dict[str, str]) -> None:
    env["MAX_THINKING_TOKENS"] = THINKING
    env["CLAUDE_CODE_THINKING_DISPLAY"] = "omitted"
    env["ANTHROPIC_MODEL"] = MODEL
    env["CLAUDE_AGENT_LOGS"] = str(ws.tmp / "agent-logs")
    env["ANTHROPIC_CUSTOM_MODEL_OPTION"] = CUSTOM
    env["CLAUDE_MODEL_CONFIG"] = json.dumps({"availableModels": ["haiku", "sonnet", CUSTOM]})


def _model(config_options: list[dict[str, Any]]) -> Any:
    return next(o["currentValue"] for o in config_options if o["id"] == "model")


def _models(config_options: list[dict[str, Any]]) -> list[Any]:
    return [v["value"] for o in config_options if o["id"] == "model" for v in o["options"]]


def _thinking_and_model(requests: list[Any], marker: str) -> tuple[Any, Any]:
    (request,) = [r for r in requests if not is_prompt_suggestion(r) and marker in json.dumps(body_of(r)["messages"])]
    return body_of(request).get("thinking"), body_of(request).get("model")


def test_the_thinking_budget_the_model_and_the_log_folder_as_the_reference_reads_them(tmp_path: Path) -> None:
    async def go() -> None:
        async with agent(
            tmp_path / "ours", Script(text_reply("Ours.")), select("reject"), prepare=_env, args=("--hide-claude-auth",)
        ) as run:
            run_ours: Run = run
            answer = next(m for d, m in run.frames if m.get("id") == 1 and "result" in m)["result"]
            assert _model(answer["configOptions"]) == MODEL
            models = _models(answer["configOptions"])
            # Claude Code lists the custom option, and only the models CLAUDE_MODEL_CONFIG allows
            # (opus and fable gone), then the model in force (observed on the reference too).
            assert models == ["default", "sonnet", "haiku", CUSTOM, MODEL]
            assert (await run.prompt("prompt-env")).stop_reason == "end_turn"
            ours = _thinking_and_model(run.api.message_requests, "prompt-env")
            init = next(m for d, m in run.frames if m.get("id") == 0 and "result" in m)["result"]
            log = (run_ours.workspace.tmp / "agent-logs" / "agent.log").read_text()
        thinking, model = ours
        # The budget reaches the model's request; the display is Claude Code's own word on the
        # wire ("updates"), the reference's request the same (below).
        assert (thinking["type"], thinking["budget_tokens"]) == ("enabled", int(THINKING))
        assert model == MODEL
        assert '"event": "agent.start"' in log or '"event":"agent.start"' in log
        assert "claude-ai-login" not in json.dumps(init["authMethods"])
        ws = AgentWorkspace()
        ws._workspace(tmp_path / "reference")
        async with reference_agent(ws, Script(text_reply("Theirs.")), _env) as (conn, _frames):
            params = {"cwd": str(ws.cwd), "mcpServers": []}
            session = await conn._conn.send_request("session/new", params)
            prompt = {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "prompt-env"}]}
            await conn._conn.send_request("session/prompt", prompt)
            assert ws.api is not None
            theirs = _thinking_and_model(ws.api.message_requests, "prompt-env")
        assert theirs == ours
        assert _model(session["configOptions"]) == MODEL
        assert _models(session["configOptions"]) == models  # the same picker, entry for entry

    run_async(go())
