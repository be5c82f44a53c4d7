"""The Claude SDK transport that adopts a Claude Code launched early (:mod:`lifecycle.agent.launch`).

``claude-agent-sdk`` 0.2.189 accepts a custom transport in ``ClaudeSDKClient(options, transport=)``.
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
SDK's client with one change: Claude Code's ``prompt_suggestion`` message, which the SDK's parser
drops as an unknown type, is handed on as a :class:`lifecycle.agent.suggestions.PromptSuggestion`.

This reaches into the SDK's private transport state (the names ``tests/test_agent_launch.py``
checks still exist): the SDK has no public way to hand a transport a running process. The SDK is
pinned (``pyproject.toml``), and what the adopted process runs is checked against the SDK's own
command line at every adoption.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

from anyio.streams.text import TextReceiveStream, TextSendStream
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, CLIConnectionError, CLINotFoundError
from claude_agent_sdk import __version__ as sdk_version
from claude_agent_sdk._internal._task_compat import spawn_detached
from claude_agent_sdk._internal.message_parser import parse_message
from claude_agent_sdk._internal.transport import subprocess_cli
from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

from .launch import EarlyCli, cli_env, spawn_cli, stop_cli
from .suggestions import PromptSuggestion

__all__ = ["AdoptingTransport", "SuggestingClient"]


async def _no_prompt() -> AsyncIterator[dict[str, Any]]:  # the SDK's streaming mode: unused
    return
    yield {}  # pragma: no cover


class AdoptingTransport(SubprocessCLITransport):
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
        if self._process is not None:
            return
        if self._cli_path is None:
            self._cli_path = self._find_cli()
        argv = self._build_command()
        process = early.take(argv, self._cwd) if early is not None else None
        self._adopt(process if process is not None else await self._spawn(argv))

    async def _spawn(self, argv: list[str]) -> Any:
        """Claude Code started for ``argv``, failing as the SDK's ``connect`` fails."""
        cwd = self._cwd or os.getcwd()
        try:
            return await spawn_cli(argv, cwd, cli_env(os.environ, cwd, sdk_version))
        except FileNotFoundError as exc:
            if not Path(cwd).exists():
                self._exit_error = CLIConnectionError(f"Working directory does not exist: {cwd}")
            else:
                self._exit_error = CLINotFoundError(f"Claude Code not found at: {self._cli_path}")
            raise self._exit_error from exc
        except Exception as exc:
            self._exit_error = CLIConnectionError(f"Failed to start Claude Code: {exc}")
            raise self._exit_error from exc

    async def close(self) -> None:
        """Claude Code and everything it started stopped at once, then the SDK's close."""
        if self._process is not None:
            await stop_cli(self._process)
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

    def _adopt(self, process: Any) -> None:
        """The end of the SDK's ``connect``, after its spawn (``subprocess_cli.py``)."""
        self._process = process
        subprocess_cli._ACTIVE_CHILDREN.add(process)  # reaped at exit like the SDK's own children
        self._stdout_stream = TextReceiveStream(process.stdout)
        # Piped at the early launch: read always (the SDK's reader drops the lines without a callback).
        self._stderr_stream = TextReceiveStream(process.stderr)
        self._stderr_task = spawn_detached(self._handle_stderr())
        self._stdin_stream = TextSendStream(process.stdin)
        self._ready = True


class SuggestingClient(ClaudeSDKClient):
    """The SDK's client; its stream also hands on Claude Code's ``prompt_suggestion`` messages
    (:class:`lifecycle.agent.suggestions.PromptSuggestion`), which the SDK's parser drops."""

    async def receive_messages(self) -> AsyncIterator[Any]:
        """The SDK's ``receive_messages`` (each message parsed, unknown types skipped), with the
        prediction kept."""
        query = self._query
        if query is None:
            raise CLIConnectionError("Not connected. Call connect() first.")
        async for data in query.receive_messages():
            if data.get("type") == "prompt_suggestion":
                yield PromptSuggestion.from_raw(data)
                continue
            message = parse_message(data)
            if message is not None:
                yield message
