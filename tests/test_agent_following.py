"""Pickers that follow (``lifecycle.agent.following``): the session-state lane and the
``PostModelSwitch`` hook. The messages are the SDK's ``SystemMessage`` in the shapes Claude Code
2.1.337 sends (issue 50.B, seen on the wire: ``{"type": "system", "subtype": "status", "status":
null, "permissionMode": "plan"}`` right after Claude's ``EnterPlanMode``; ``commands_changed``
per ``SDKCommandsChangedMessage`` of @anthropic-ai/claude-agent-sdk 0.3.337's sdk.d.ts); the
updates are the reference adapter 0.101.0's (``current_mode_update`` then ``config_option_update``
after ``EnterPlanMode``; ``available_commands_update`` with the new list). The end-to-end path on
the real CLI: tests/e2e/test_steering.py."""

from __future__ import annotations

import asyncio
from typing import Any

from claude_agent_sdk import SystemMessage

from lifecycle.agent.following import SessionState, model_switch_hook
from lifecycle.agent.lanes import LaneParts, Lanes
from lifecycle.agent.mcp import McpServers
from lifecycle.agent.messages import Step, read
from lifecycle.agent.modes import SessionSettings
from lifecycle.agent.stream import StreamRenderer
from lifecycle.negotiation import ClientState

MODELS = [
    {"value": "default", "displayName": "Default"},
    {"value": "sonnet", "displayName": "Sonnet"},
    {"value": "haiku", "displayName": "Haiku 5.5"},
]


def session(settings: SessionSettings) -> Lanes:
    return Lanes(LaneParts(StreamRenderer("/project"), McpServers(), ClientState(), settings=settings))


def status(**data: Any) -> SystemMessage:
    return SystemMessage(subtype="status", data={"type": "system", "subtype": "status", **data})


def kinds(steps: list[Step]) -> list[str]:
    return [u["sessionUpdate"] for s in steps for u in s.updates]


def run(lanes: Lanes, message: object, *, quiet: bool = False, turn: str | None = "t") -> list[Step]:
    steps, ends = lanes.run(read(message), turn=turn, quiet=quiet, prompt_open=turn is not None)
    assert not ends
    return steps


def test_claudes_own_mode_change_moves_the_mode_picker() -> None:
    settings = SessionSettings()
    lanes = session(settings)
    assert lanes.get(SessionState).settings is settings
    steps = run(lanes, status(status=None, permissionMode="plan"))
    assert kinds(steps) == ["current_mode_update", "config_option_update"]
    assert steps[0].updates[0] == {"sessionUpdate": "current_mode_update", "currentModeId": "plan"}
    (mode,) = [o for o in steps[0].updates[1]["configOptions"] if o["id"] == "mode"]
    assert mode["currentValue"] == "plan" and settings.mode == "plan"
    # the same mode again (the status of a set_permission_mode the session asked for): nothing
    assert run(lanes, status(status=None, permissionMode="plan")) == []
    # a cancelled turn's, or between turns: the mode is the session's
    assert kinds(run(lanes, status(status=None, permissionMode="default"), quiet=True, turn=None)) == [
        "current_mode_update",
        "config_option_update",
    ]


def test_a_status_without_a_known_mode_changes_nothing() -> None:
    settings = SessionSettings()
    lanes = session(settings)
    assert run(lanes, status(status="requesting")) == []
    assert run(lanes, status(status=None, permissionMode="sudo")) == []
    assert run(lanes, status(status=None, permissionMode=["plan"])) == []
    assert settings.mode == "default"


def test_new_commands_replace_the_list_the_editor_has() -> None:
    settings = SessionSettings(commands=[{"name": "init", "description": "Initialize"}])
    lanes = session(settings)
    commands = [
        {"name": "init", "description": "Initialize", "argumentHint": ""},
        {"name": "deploy-notes", "description": "Notes for a deploy (project skill)", "argumentHint": "<env>"},
        {"name": "clear", "description": "terminal only"},  # left out, as at the start
    ]
    steps = run(lanes, SystemMessage(subtype="commands_changed", data={"commands": commands}))
    assert steps == [
        Step([{"sessionUpdate": "available_commands_update", "availableCommands": [
            {"name": "init", "description": "Initialize"},
            {"name": "deploy-notes", "description": "Notes for a deploy (project skill)", "input": {"hint": "<env>"}},
        ]}])
    ]  # fmt: skip
    # the same list again: the editor has it
    assert run(lanes, SystemMessage(subtype="commands_changed", data={"commands": commands})) == []
    # no list: nothing
    assert run(lanes, SystemMessage(subtype="commands_changed", data={"commands": "all"})) == []


def hook_input(**fields: Any) -> dict[str, Any]:
    # ``PostModelSwitchHookInput`` of sdk.d.ts (0.3.337): what `/model haiku` typed as a prompt gives.
    return {
        "hook_event_name": "PostModelSwitch", "from_model": "claude-opus-5-5", "to_model": "claude-haiku-5-5",
        "requested_model": "haiku", "source": "command", **fields,
    }  # fmt: skip


def switched(settings: SessionSettings, data: Any) -> list[list[dict[str, Any]]]:
    shown: list[list[dict[str, Any]]] = []

    async def show(updates: list[dict[str, Any]]) -> None:
        shown.append(updates)

    answer = asyncio.run(model_switch_hook(settings, show)(data, None, None))
    assert answer == {}
    return shown


def test_a_model_typed_as_a_command_moves_the_model_picker() -> None:
    settings = SessionSettings(models=list(MODELS))
    (updates,) = switched(settings, hook_input())
    assert settings.model == "haiku"
    (update,) = updates
    assert update["sessionUpdate"] == "config_option_update"
    (model,) = [o for o in update["configOptions"] if o["id"] == "model"]
    assert model["currentValue"] == "haiku"
    # ``/model default`` (requested_model null): back to the default
    switched(settings, hook_input(requested_model=None, to_model="claude-opus-5-5"))
    assert settings.model == "default"


def test_a_model_not_listed_is_shown_as_claude_code_runs_it() -> None:
    settings = SessionSettings(models=list(MODELS))
    (updates,) = switched(settings, hook_input(requested_model="claude-haiku-5-5-20991231"))
    assert settings.model == "claude-haiku-5-5"
    (model,) = [o for o in updates[0]["configOptions"] if o["id"] == "model"]
    assert model["currentValue"] == "claude-haiku-5-5" and model["options"][0]["value"] == "claude-haiku-5-5"


def test_switches_the_agent_drove_or_a_subagents_are_not_followed() -> None:
    for data in (
        hook_input(source="sdk"),  # the agent's own set_model (its picker already shows it)
        hook_input(source="resume"),
        hook_input(agent_id="a1"),  # a subagent's model
        {"hook_event_name": "PostCompact"},
        "not a mapping",
    ):
        settings = SessionSettings(models=list(MODELS))
        assert switched(settings, data) == []
        assert settings.model == "default"
