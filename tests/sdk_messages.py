"""The Claude Agent SDK's own message classes, built with the few fields a test cares about.

One home for a ``ResultMessage`` a test needs (a turn's end): the SDK's required fields get a
successful one-turn default, and a test names only what it checks. Not a test module.
"""

from __future__ import annotations

from typing import Any

from claude_agent_sdk import ResultMessage

#: A successful one-turn result, as Claude Code ends a turn that did nothing notable.
RESULT_DEFAULTS: dict[str, Any] = dict(
    subtype="success", duration_ms=1, duration_api_ms=1, is_error=False, num_turns=1, session_id="s"
)


def result_message(**fields: Any) -> ResultMessage:
    """A ``ResultMessage``: :data:`RESULT_DEFAULTS` overridden by ``fields``."""
    return ResultMessage(**{**RESULT_DEFAULTS, **fields})


#: Claude Code 2.1.332's result line for HTTPS_PROXY=not-a-url (CLAUDE_CODE_STARTUP_FAILURE_RESULTS=1;
#: usage and ids trimmed): issue 49 point 2, the reason only the raw line carries.
PROXY_MESSAGE = (
    'Invalid proxy URL in HTTPS_PROXY: "not-a-url" cannot be parsed as a URL.\n'
    'Proxy settings must be a complete URL including the scheme, e.g. "http://proxy.example.com:8080".\n'
    "Fix or unset HTTPS_PROXY and restart Claude Code."
)
#: :data:`PROXY_MESSAGE` as the agent shows it anywhere (title, JSON-RPC message, log): the
#: environment value it quotes masked (developers' guide, Security; the reference shows it as it is).
PROXY_SHOWN = (
    'Invalid proxy URL in HTTPS_PROXY: "[redacted env]" cannot be parsed as a URL.\n'
    'Proxy settings must be a complete URL including the scheme, e.g. "http://proxy.example.com:8080".\n'
    "Fix or unset HTTPS_PROXY and restart Claude Code."
)
STARTUP_LINE: dict[str, Any] = {
    "type": "result", "subtype": "error_during_execution", "duration_ms": 0, "duration_api_ms": 0,
    "is_error": True, "num_turns": 0, "stop_reason": None, "session_id": "s1", "total_cost_usd": 0,
    "errors": [PROXY_MESSAGE], "startup_failure_reason": "proxy_invalid",
}  # fmt: skip
