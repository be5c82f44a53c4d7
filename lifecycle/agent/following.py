"""Pickers that follow: what Claude Code changes of the session's settings by itself (its
permission mode, its model, its slash commands) reaches the editor's pickers, as the reference
adapter 0.101.0 sends it.

Rules
-----
* The session-state lane (:class:`SessionState`, in :data:`lifecycle.agent.lanes.LANES`) reads
  two of Claude Code's messages, whatever the turn (the settings are the session's, not a
  turn's; a cancelled turn's too):

  - ``system``/``status`` with a ``permissionMode`` (Claude Code 2.1.337 sends one whenever its
    mode changes: Claude's own ``EnterPlanMode`` and ``ExitPlanMode``, a ``set_permission_mode``):
    a mode the session does not show yet becomes the session's, shown as ``current_mode_update``
    then ``config_option_update`` (the reference's pair after ``EnterPlanMode``). A mode that is
    no permission mode is ignored.
  - ``system``/``commands_changed`` (the full slash-command list after a mid-session change, such
    as a skill found in a subfolder's ``.claude/skills``; the SDK's ``SDKCommandsChangedMessage``,
    which the Python SDK hands on as a ``SystemMessage``): the list, filtered as at the start
    (:func:`lifecycle.agent.modes.available_commands`), replaces the session's and is sent as
    ``available_commands_update`` when it differs from what the editor has.

* A model Claude Code switches to by itself (``/model haiku`` typed as a prompt, which Claude Code
  runs as a command of its own) is reported by its ``PostModelSwitch`` hook, which Claude Code
  calls with what was asked for (``requested_model``: an alias such as ``haiku``, or null for the
  default) and the model it now runs (``to_model``), as the reference registers it
  (:func:`model_switch_hook`): a switch the agent did not drive (``source`` other than ``sdk``
  and ``resume``; not a subagent's) becomes the session's model, shown as
  ``config_option_update``. No message of Claude Code's tells it (the next turn's ``init`` names
  the resolved model id only).

Theory of operation
-------------------
The lane is sans-I/O (it changes the session's :class:`~lifecycle.agent.modes.SessionSettings`
and returns the updates); the hook runs in the SDK's control handling and sends through the
session's ``show``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import structlog

from .messages import Kind, LaneParts, Pass, Step
from .modes import DEFAULT_MODEL, MODE_IDS, SessionSettings, available_commands

__all__ = ["SessionState", "mode_updates", "model_switch_hook"]

log = structlog.get_logger("lifecycle.agent")

#: ``PostModelSwitch`` sources the agent drove itself (its ``set_model``, a resumed transcript).
_OWN_SWITCHES: Final = frozenset({"sdk", "resume"})


def mode_updates(settings: SessionSettings, mode: str) -> list[dict[str, Any]]:
    """``mode`` taken as the session's: the editor's ``current_mode_update`` and
    ``config_option_update`` (none when it is the mode already shown)."""
    if mode == settings.mode:
        return []
    settings.mode = mode
    return [
        {"sessionUpdate": "current_mode_update", "currentModeId": mode},
        {"sessionUpdate": "config_option_update", "configOptions": settings.config_options()},
    ]


class SessionState:
    """The session-state lane (see the module)."""

    __slots__ = ("settings",)

    def __init__(self, settings: SessionSettings) -> None:
        self.settings = settings

    @classmethod
    def build(cls, parts: LaneParts) -> SessionState:
        return cls(parts.settings if parts.settings is not None else SessionSettings())

    def run(self, p: Pass) -> list[Step]:
        message = p.message
        if message.kind is not Kind.SYSTEM:
            return []
        if message.subtype == "status":
            mode = message.data.get("permissionMode")
            if isinstance(mode, str) and mode in MODE_IDS:
                updates = mode_updates(self.settings, mode)
                if updates:
                    log.info("session.mode_followed", mode=mode)
                    return [Step(updates)]
            return []
        if message.subtype == "commands_changed":
            commands = message.data.get("commands")
            if not isinstance(commands, list):
                return []
            offered = available_commands(commands)
            if offered == self.settings.commands:
                return []
            self.settings.commands = offered
            log.info("session.commands_changed", commands=len(offered))
            return [Step([{"sessionUpdate": "available_commands_update", "availableCommands": offered}])]
        return []


def model_switch_hook(
    settings: SessionSettings, show: Callable[[list[dict[str, Any]]], Awaitable[None]]
) -> Callable[[Any, str | None, Any], Awaitable[dict[str, Any]]]:
    """The ``PostModelSwitch`` hook callback (see the module): a switch the agent did not drive
    becomes the session's model and is shown as ``config_option_update``."""

    async def hook(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        if not isinstance(data, Mapping) or data.get("hook_event_name") != "PostModelSwitch":
            return {}
        if data.get("agent_id") or data.get("source") in _OWN_SWITCHES:
            return {}
        requested, to_model = data.get("requested_model"), data.get("to_model")
        known = [m["value"] for m in settings.models]
        if requested is None:
            value = DEFAULT_MODEL
        elif isinstance(requested, str) and requested in known:
            value = requested
        elif isinstance(to_model, str) and to_model:
            value = to_model[:200]  # a model Claude Code runs that it does not list: shown as is
        else:
            return {}
        if value == settings.model:
            return {}
        settings.model = value
        if settings.effort not in ("default", *settings.effort_levels()):
            settings.effort = "default"
        log.info("session.model_followed", listed=value in known)
        await show([{"sessionUpdate": "config_option_update", "configOptions": settings.config_options()}])
        return {}

    return hook
