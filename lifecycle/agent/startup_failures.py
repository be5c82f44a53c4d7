"""Claude Code that could not start (issue 49, point 2): its reason, and how a request fails with it.

Rules
-----
* Claude Code runs with ``CLAUDE_CODE_STARTUP_FAILURE_RESULTS=1``
  (:func:`lifecycle.agent.launch.cli_env`, as the reference adapter 0.101.0 sets it), so one that
  cannot start writes an ``error_during_execution`` result with ``startup_failure_reason`` (and its
  message in ``errors``) before it exits. The Claude SDK's ``ResultMessage`` has no field for the
  reason; its ``ResultError`` keeps the raw line (``data``), which is where it is read
  (:func:`lifecycle.claude.from_sdk_exception`: a :class:`~lifecycle.events.Result` with
  ``startup_failure``).
* A start-up failure known before ``session/new``, ``session/load`` or ``session/resume`` is
  answered fails that request, for every client, as the reference does
  (``dist/startup-failure.js``): Claude Code's own message (redacted as a title is) under the
  reason's code (:func:`lifecycle.conditions.startup_failure_code`), ``data:
  {"startupFailureReason": R}`` (:func:`request_error`). The session is not kept. The spec has no
  carrier for a typed record there (docs/parity/README.md).
* One found later fails the first prompt (the one that waited for that start): the ledger settles
  it from the :class:`~lifecycle.events.Result`, a typed record on the ``PromptResponse`` for a
  capable client (the reason's row of the conditions table), the same JSON-RPC error for a
  legacy one.
"""

from __future__ import annotations

from acp import RequestError

from ..claude import from_sdk_exception
from ..conditions import startup_failure_code
from ..events import Result
from ..redaction import redact
from ..titles import claude_text

__all__ = ["request_error", "startup_failure"]


def startup_failure(exc: BaseException | None) -> Result | None:
    """The start-up failure ``exc`` (how a Claude Code start failed) reports, if it is one."""
    if exc is None:
        return None
    event = from_sdk_exception(exc)
    return event if isinstance(event, Result) and event.startup_failure else None


def request_error(failure: Result) -> RequestError:
    """The JSON-RPC error a request that started Claude Code gets for ``failure`` (see the module)."""
    reason = failure.startup_failure or ""
    message = redact(claude_text(failure.result, list(failure.errors))).strip() or "Claude Code could not start."
    return RequestError(startup_failure_code(reason), message, {"startupFailureReason": reason})
