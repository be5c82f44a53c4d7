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
