"""Why Claude Code stopped a turn: its ``Interrupt`` hook (CLI 2.1.337, issue 49.3).

Rules
-----
* Claude Code 2.1.337 calls the ``Interrupt`` hook once when an interrupt ends the main
  conversation's turn (``sdk.d.ts`` of ``@anthropic-ai/claude-agent-sdk`` 0.3.337,
  ``InterruptHookInput``): ``source`` (``user`` | ``session`` | ``system``), ``reason`` (``stop`` |
  ``permission_denied`` | ``rewind`` | ``other``) and, where known, ``via`` (``terminal`` |
  ``client``). The hook's output is ignored by Claude Code: the callback answers ``{}``, never
  raises and changes nothing Claude Code does.
* Each value is read against its closed vocabulary; anything else (a new value, a wrong type) is
  ``unrecognized``, never its text. The report is logged with the session and turn ids, these
  states, and whether the client had cancelled the turn already (``cancelled``) only
  (``turn.interrupted``), never a path or text the hook input carries.
* Where it matters to the lifecycle: a turn the client did not cancel that Claude Code ended by an
  interrupt (a permission denied with ``interrupt`` by a ``PermissionRequest`` hook of the user's
  settings, a plugin, Claude Code's own permission check) ends with an ``error_during_execution``
  result whose ``terminal_reason`` is ``aborted_tools`` or ``aborted_streaming`` (seen on CLI
  2.1.337, tests/e2e/test_interrupts.py). Without the hook that result reads as a failure; with
  the hook's report before it, the turn was stopped, not failed: it is settled ``cancelled``
  (as a ``success`` result with an ``aborted_*`` terminal reason already is,
  :func:`lifecycle.conditions.stop_reason_for`) and no failure record is made
  (:meth:`Interruptions.settles`). A failed result with any other terminal reason stays a failure.
* A report belongs to the turn whose result comes next: any result (a prompt's or Claude Code's
  own turn's) takes it, so it never reaches a later turn.

Theory of operation
-------------------
:class:`Interruptions` is one session's, shared by the session (which registers :meth:`hook` with
Claude Code) and the translation lane (which asks :meth:`settles` at a result).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import structlog

from ..events import Event, Result

__all__ = ["REASONS", "SOURCES", "VIAS", "Interruption", "Interruptions", "read_interruption"]

log = structlog.get_logger("lifecycle.agent")

#: The vocabularies of ``InterruptHookInput`` (CLI 2.1.337's ``sdk.d.ts``).
SOURCES: Final = frozenset({"user", "session", "system"})
REASONS: Final = frozenset({"stop", "permission_denied", "rewind", "other"})
VIAS: Final = frozenset({"terminal", "client"})
#: Terminal reasons of a result an interrupt ended (``TerminalReason`` in the same ``sdk.d.ts``).
ABORTED: Final = frozenset({"aborted_tools", "aborted_streaming"})


@dataclass(frozen=True, slots=True)
class Interruption:
    """One ``Interrupt`` hook report, each value a word of its vocabulary or ``unrecognized``
    (``via``: None when Claude Code did not say)."""

    source: str
    reason: str
    via: str | None = None


def _word(value: object, vocabulary: frozenset[str]) -> str:
    return value if isinstance(value, str) and value in vocabulary else "unrecognized"


def read_interruption(data: object) -> Interruption | None:
    """The report in a hook input, or None when it is not an ``Interrupt`` hook's."""
    if not isinstance(data, Mapping) or data.get("hook_event_name") != "Interrupt":
        return None
    via = data.get("via")
    return Interruption(
        source=_word(data.get("source"), SOURCES),
        reason=_word(data.get("reason"), REASONS),
        via=None if via is None else _word(via, VIAS),
    )


class Interruptions:
    """One session's ``Interrupt`` reports (see the module)."""

    __slots__ = ("_cancelled", "_last", "_turn", "session_id")

    def __init__(
        self,
        session_id: str,
        turn: Callable[[], str | None] = lambda: None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> None:
        self.session_id = session_id
        self._turn = turn  # the prompt in flight (for the log)
        self._cancelled = cancelled  # the turn was cancelled already (the client's cancel; for the log)
        self._last: Interruption | None = None

    async def hook(self, data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        """The ``Interrupt`` hook (the Claude SDK's hook callback): keeps and logs the report.
        Never raises; answers ``{}`` (Claude Code ignores the output)."""
        report = read_interruption(data)
        if report is None:
            return {}
        self._last = report
        log.info("turn.interrupted", session_id=self.session_id, turn_id=self._turn(), source=report.source,
                 reason=report.reason, via=report.via, cancelled=self._cancelled())  # fmt: skip
        return {}

    def take(self) -> Interruption | None:
        """The report since the last result, once (a result takes it: see the module)."""
        report, self._last = self._last, None
        return report

    def settles(self, event: Event | None) -> Interruption | None:
        """The report that makes ``event`` (a prompt's result) a stop, not a failure: a failed
        result an interrupt ended (an ``aborted_*`` terminal reason) after an ``Interrupt`` report.
        Takes the report either way."""
        report = self.take()
        if report is None or not isinstance(event, Result) or not event.is_error:
            return None
        return report if event.terminal_reason in ABORTED else None
