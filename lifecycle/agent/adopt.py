"""The Claude SDK transport that adopts a Claude Code launched early (:mod:`lifecycle.agent.launch`).

``claude-agent-sdk`` 0.2.190 accepts a custom transport in ``ClaudeSDKClient(options, transport=)``.
:class:`AdoptingTransport` is its own subprocess transport with one change: ``connect`` takes the
early process when :meth:`lifecycle.agent.launch.EarlyCli.take` gives it (same command line, same
directory, still running) and sets up the pipes exactly as the SDK's ``connect`` does after its
own spawn; otherwise it starts Claude Code itself with :func:`lifecycle.agent.launch.spawn_cli`
(the SDK's command line, and the environment the SDK gives it: :func:`lifecycle.agent.launch.cli_env`;
this agent sets no ``env``, ``user`` or ``client_app`` option) and sets up the same pipes. ``close``
first stops Claude Code and everything it started, at once (:func:`lifecycle.agent.launch.stop_cli`),
then is the SDK's (which would otherwise wait 5 s after closing stdin, and leaves what Claude Code
started running). Writing is the SDK's, except that the SDK's ``initialize`` request asks for
prompt suggestions when the client shows them (:meth:`AdoptingTransport.write`; the SDK has no
option for it); reading is too, except that each raw ``can_use_tool`` request is reported before
the SDK handles it (:meth:`AdoptingTransport.read_messages`). :class:`SuggestingClient` is the
SDK's client with two changes: Claude Code's ``prompt_suggestion`` message, which the SDK's parser
drops as an unknown type, is handed on as a :class:`lifecycle.agent.suggestions.PromptSuggestion`;
and a line the SDK's parser cannot parse (it raises, which would end the SDK's stream and with it
the session's link to Claude Code) is handed on as a :class:`lifecycle.agent.messages.Unreadable`,
which the session logs, counts and skips. A result's ``startup_failure_reason`` (a Claude Code
that could not start), which the SDK's ``ResultMessage`` drops, is set on it under that name
(:func:`lifecycle.claude.sdk_result` reads it).

This builds on the SDK's private transport (the SDK has no public way to hand a transport a running
process), through the seam :mod:`lifecycle.agent.sdk` only (its base class :data:`~lifecycle.agent.sdk.CliTransport`
and its ``cli_*`` hooks, which the agent's start checks against the pinned SDK); what the adopted
process runs is checked against the SDK's own command line at every adoption.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, CLIConnectionError, CLINotFoundError
from claude_agent_sdk import __version__ as sdk_version

from . import sdk
from .launch import EarlyCli, cli_env, spawn_cli, stop_cli
from .messages import Unreadable
from .sdk import CliTransport
from .suggestions import PromptSuggestion

__all__ = ["AdoptingTransport", "SuggestingClient"]


async def _no_prompt() -> AsyncIterator[dict[str, Any]]:  # the SDK's streaming mode: unused
    return
    yield {}  # pragma: no cover


class AdoptingTransport(CliTransport):
    """The SDK's subprocess transport for ``options`` (as ``ClaudeSDKClient`` configures them for a
    ``can_use_tool`` callback), taking ``early``'s process when it is the one the SDK would start."""

    def __init__(
        self,
        options: ClaudeAgentOptions,
        early: EarlyCli | None = None,
        *,
        on_permission_request: Callable[[Mapping[str, Any]], None] | None = None,
        prompt_suggestions: bool = False,
    ) -> None:
        if options.can_use_tool is not None and not options.permission_prompt_tool_name:
            # What ClaudeSDKClient does to the options of the transport it builds itself.
            options = dataclasses.replace(options, permission_prompt_tool_name="stdio")
        super().__init__(prompt=_no_prompt(), options=options)
        self._env = dict(options.env)  # a client's provider route (providers.py); else none
        if early is not None and self._env:  # the early one runs on the agent's own route
            early.discard("provider_route")
            early = None
        self._early: EarlyCli | None = early
        self._on_permission_request = on_permission_request
        self._ask_suggestions = prompt_suggestions  # until the SDK's initialize has been written

    async def write(self, data: str) -> None:
        """The SDK's write; its ``initialize`` control request also asks Claude Code for prompt
        suggestions (``promptSuggestions: true``, what the reference's SDK sends) when enabled."""
        if self._ask_suggestions and '"initialize"' in data:
            message = json.loads(data)
            request = message.get("request") if message.get("type") == "control_request" else None
            if isinstance(request, dict) and request.get("subtype") == "initialize":
                self._ask_suggestions = False
                request["promptSuggestions"] = True
                data = json.dumps(message) + "\n"
        await super().write(data)

    async def connect(self) -> None:
        early, self._early = self._early, None
        if sdk.cli_process(self) is not None:
            return
        argv = sdk.cli_command(self)
        process = early.take(argv, sdk.cli_cwd(self)) if early is not None else None
        sdk.adopt_process(self, process if process is not None else await self._spawn(argv))

    async def _spawn(self, argv: list[str]) -> Any:
        """Claude Code started for ``argv``, failing as the SDK's ``connect`` fails."""
        cwd = sdk.cli_cwd(self) or os.getcwd()
        try:
            return await spawn_cli(argv, cwd, cli_env({**os.environ, **self._env}, cwd, sdk_version))
        except FileNotFoundError as exc:
            if not Path(cwd).exists():
                raise sdk.fail_start(self, CLIConnectionError(f"Working directory does not exist: {cwd}")) from exc
            raise sdk.fail_start(self, CLINotFoundError(f"Claude Code not found at: {sdk.cli_path(self)}")) from exc
        except Exception as exc:
            raise sdk.fail_start(self, CLIConnectionError(f"Failed to start Claude Code: {exc}")) from exc

    async def close(self) -> None:
        """Claude Code and everything it started stopped at once, then the SDK's close."""
        process = sdk.cli_process(self)
        if process is not None:
            await stop_cli(process)
        await super().close()

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        """The SDK's messages; each ``can_use_tool`` control request is reported first, whole
        (the SDK's ``ToolPermissionContext`` drops ``matched_ask_rule`` and
        ``suppress_always_allow_rule``, which decide whether "always" may be offered)."""
        report = self._on_permission_request
        async for message in super().read_messages():
            if report is not None and message.get("type") == "control_request":
                request = message.get("request")
                if isinstance(request, dict) and request.get("subtype") == "can_use_tool":
                    report(request)
            yield message


class SuggestingClient(ClaudeSDKClient):
    """The SDK's client; its stream also hands on Claude Code's ``prompt_suggestion`` messages
    (:class:`lifecycle.agent.suggestions.PromptSuggestion`), which the SDK's parser drops."""

    async def receive_messages(self) -> AsyncIterator[Any]:
        """The SDK's ``receive_messages`` (each message parsed, unknown types skipped), with the
        prediction kept and a line the parser refuses handed on as :class:`Unreadable`."""
        query = sdk.client_query(self)
        if query is None:
            raise CLIConnectionError("Not connected. Call connect() first.")
        async for data in query.receive_messages():
            if data.get("type") == "prompt_suggestion":
                yield PromptSuggestion.from_raw(data)
                continue
            try:
                message = sdk.parse_message(data)
            except Exception:  # MessageParseError, or what a wrong-typed field makes it raise
                yield Unreadable.from_raw(data)
                continue
            if message is not None:
                reason = data.get("startup_failure_reason") if data.get("type") == "result" else None
                if isinstance(reason, str) and reason:  # the SDK's ResultMessage has no field for it
                    message.startup_failure_reason = reason
                if data.get("type") == "assistant" and "supersedes" in data:  # nor AssistantMessage
                    message.supersedes = data["supersedes"]  # read (and checked) once, in messages.py
                yield message
