"""The Claude SDK transport that adopts a Claude Code launched early (:mod:`lifecycle.agent.launch`).

``claude-agent-sdk`` 0.2.189 accepts a custom transport in ``ClaudeSDKClient(options, transport=)``.
:class:`AdoptingTransport` is its own subprocess transport with one change: ``connect`` takes the
early process when :meth:`lifecycle.agent.launch.EarlyCli.take` gives it (same command line, same
directory, still running) and sets up the pipes exactly as the SDK's ``connect`` does after its
own spawn; otherwise it is the SDK's ``connect``. Reading, writing and closing are the SDK's.

This reaches into the SDK's private transport state (the names ``tests/test_agent_launch.py``
checks still exist): the SDK has no public way to hand a transport a running process. The SDK is
pinned (``pyproject.toml``), and what the adopted process runs is checked against the SDK's own
command line at every adoption.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

from anyio.streams.text import TextReceiveStream, TextSendStream
from claude_agent_sdk import ClaudeAgentOptions
from claude_agent_sdk._internal._task_compat import spawn_detached
from claude_agent_sdk._internal.transport import subprocess_cli
from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

from .launch import EarlyCli

__all__ = ["AdoptingTransport"]


async def _no_prompt() -> AsyncIterator[dict[str, Any]]:  # the SDK's streaming mode: unused
    return
    yield {}  # pragma: no cover


class AdoptingTransport(SubprocessCLITransport):
    """The SDK's subprocess transport for ``options`` (as ``ClaudeSDKClient`` configures them for a
    ``can_use_tool`` callback), taking ``early``'s process when it is the one the SDK would start."""

    def __init__(self, options: ClaudeAgentOptions, early: EarlyCli) -> None:
        if options.can_use_tool is not None and not options.permission_prompt_tool_name:
            # What ClaudeSDKClient does to the options of the transport it builds itself.
            options = dataclasses.replace(options, permission_prompt_tool_name="stdio")
        super().__init__(prompt=_no_prompt(), options=options)
        self._early: EarlyCli | None = early

    async def connect(self) -> None:
        early, self._early = self._early, None
        if early is not None and self._process is None:
            if self._cli_path is None:
                self._cli_path = self._find_cli()
            process = early.take(self._build_command(), self._cwd)
            if process is not None:
                self._adopt(process)
                return
        await super().connect()

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
