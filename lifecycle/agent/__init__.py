"""The reference ACP agent: an ACP client talks to Claude Code through ``claude-agent-sdk``, with
the incident ledger embedded (``lifecycle acp`` or ``python -m lifecycle.agent``).

Needs the ``acp`` and ``claude`` extras. Claude Code runs with its own system prompt and the
user's, project's and local settings; a coding turn streams text and thinking, shows tool calls
with diffs and asks the client's permission (docs/acp-agent.md, "A coding turn"). Everything on
stdout is the ACP protocol; every log line goes to stderr (structlog, ids and states only).

Rules
-----
* One ``ClaudeSDKClient`` (one Claude Code process, a *runtime*) per ACP session, started in the
  background when the session is created, loaded or resumed (a start that fails there is reported
  by the first prompt, as its own start would be); the first ``session/new`` even gets a Claude
  Code launched while the SDKs are still being imported, adopted only if it is exactly the one the
  SDK would start (:mod:`lifecycle.agent.launch`). The ACP session id is the Claude session id
  (``session_id=`` for a new session, ``resume=`` once a transcript exists), so ``session/load``
  finds the transcript.
* Every prompt is sent as a user message whose ``uuid`` is the turn id, so Claude stores it under
  that uuid and a replayed failure keeps its live id.
* The agent never decides how a prompt ends: it feeds events and returns what the ledger
  settles (:meth:`lifecycle.acp.SessionPublisher.outcome`).
* Runtime generations: every event of a runtime is tagged with its generation. A runtime that died
  is replaced at the next prompt (``RuntimeReplaced``), after which its stragglers are refused.
* ``authenticate`` (the ACP method behind a record's ``login`` action) feeds ``AuthStatus`` to
  every session.
* ``session/cancel`` answers every prompt received before it ``cancelled``, whatever it was doing
  (waiting for the prompt lock, for a cancelled turn to wind down, for Claude Code to start).
* What the turn shows besides the ledger's records (chunks, tool calls, plan, usage) goes through
  the same publisher and lock (:meth:`lifecycle.acp.SessionPublisher.show`); a cancelled turn's
  and a replaced runtime's show nothing.
* A tool is never allowed by default: only the client's allow answer to a question the turn
  machine still holds open allows it (:mod:`lifecycle.agent.permissions`).
* The client is read and written through :mod:`lifecycle.agent.transport` (every bad line is
  answered, error replies are short and redacted, the output backlog is bounded); a handler's
  unexpected exception is a bare ``-32603``; log fields are redacted.

Theory of operation
-------------------
A runtime owns one task that connects the SDK client, consumes its message stream and disconnects
it again (the SDK requires connect and disconnect in one task). Each message is read once into a
record (:mod:`lifecycle.agent.messages`) and run through the session's lanes, in the order of
:data:`lifecycle.agent.lanes.LANES` (own turns, steering, session state, compaction, translation,
suggestions); the translation lane builds the ledger's events with :mod:`lifecycle.claude`; an exception from the
stream becomes an event through
:func:`lifecycle.claude.from_sdk_exception`; the stream ending through ``QueryEnded``. The prompt
handler feeds ``PromptStarted``, writes the user message, and awaits the settlement. Streamed
deltas, tool uses and results are rendered by the session's
:class:`~lifecycle.agent.stream.StreamRenderer` before the ledger sees the message. A cancelled
turn's remaining messages (until its result arrives) are dropped, and the next prompt waits for
that result, so nothing of the cancelled turn is attributed to the next one.

Modules
-------
``config`` (settings, standard library only), ``startup`` (process entry and the fast
``initialize``: imports no SDK), ``imports`` (the SDKs imported at the start, faster, with the
same models; the first prompt's models built while Claude Code starts), ``launch`` (a session's
Claude Code options, command line and environment, and the early launch: imports no SDK),
``sdk`` (the one seam to the SDKs' private parts, and the start's check of their versions),
``adopt`` (the SDK transport that adopts an early Claude Code),
``transport`` (the guarded stdio transport), ``server`` (the agent), ``session`` (one ACP
session), ``runtime`` (one Claude Code process), ``stream`` (Claude Code's messages as updates:
chunks, tool calls, plan, usage), ``tool_calls`` (one tool use and its result rendered as the
reference adapter does), ``permissions`` (``can_use_tool`` as ``session/request_permission``),
``always`` (what an "always" answer allows, in Claude Code's own rules), ``questions``
(``AskUserQuestion`` as a form ``elicitation/create``), ``interrupts`` (why Claude Code stopped a
turn, its ``Interrupt`` hook: a turn it stopped is not a failure), ``messages`` (one Claude message read
once: the record every lane takes), ``lanes`` (the ordered table of lanes a message runs
through), ``translate`` (the translation lane: one message as the updates it shows and the event
the ledger judges), ``stored`` (stored sessions read for load and
list), ``replay`` (a loaded session's stored messages shown as live), ``background`` (Claude
Code's own turns: a background task's notification, told apart from the prompt's), ``hold`` (a
prompt held open until the background subagents it started have answered), ``compaction``
(Claude Code compacting its context, as a tool call or ``compaction_update``), ``prompt`` (the ACP
prompt as Claude's user message), ``mcp`` (the client's MCP servers as Claude Code's option; a
failed one as a notice), ``modes`` (permission mode, model, effort and slash commands an editor
can change), ``titles`` (the session's title, as Claude Code names it), ``suggestions`` (the next
prompt Claude Code predicts, for a client that shows it), ``startup_failures`` (a Claude Code that
could not start: its reason, and how the request that started it fails), ``session_request``
(what a session request asks for: a checked ``cwd``, the client's system prompt, the ``_meta``
options taken), ``steering`` (a message a
client injects into the running turn, ``_session/steering``, and the lane that keeps that turn
open until a result answers it), ``following`` (what Claude Code changes of the session's settings
by itself: its mode, its model, its slash commands, shown to the editor's pickers), ``usage`` (``/usage`` as
the reference renders Claude Code's usage reading), ``meter`` (the account's windows when a
session's Claude Code starts). This package imports ``config`` and
``startup`` only; every other name is imported on first use, so ``lifecycle acp``
answers ``initialize`` before the ACP SDK and the Claude SDK are loaded.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .config import AUTH_METHOD_ID, AgentConfig, build_parser, config_from_args
from .startup import _redact_log_fields, cli_main, serve

if TYPE_CHECKING:
    from claude_agent_sdk import (
        get_session_info,
        get_session_messages,
        get_subagent_messages,
        list_sessions,
        list_subagents,
    )

    from .runtime import ClientFactory, SdkClient
    from .server import ClaudeAcpAgent

__all__ = ["AUTH_METHOD_ID", "AgentConfig", "ClaudeAcpAgent", "ClientFactory", "SdkClient", "cli_main", "serve"]

# Names imported on first use: name -> module (relative to this package, or absolute).
_LAZY = {
    "ClaudeAcpAgent": ".server",
    "ClientFactory": ".runtime",
    "SdkClient": ".runtime",
    # The session functions the agent calls, looked up here (tests replace them).
    "get_session_info": "claude_agent_sdk",
    "get_session_messages": "claude_agent_sdk",
    "list_sessions": "claude_agent_sdk",
    "list_subagents": "claude_agent_sdk",
    "get_subagent_messages": "claude_agent_sdk",
}

__all__ += ["_redact_log_fields", "build_parser", "config_from_args"]
__all__ += ["get_session_info", "get_session_messages", "get_subagent_messages", "list_sessions", "list_subagents"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value
