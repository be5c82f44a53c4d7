"""``lifecycle trace``: drive one adapter session from a conformance trace (see
``tests/conformance/FORMAT.md``) and print what the adapter would send.

The driver is a thin edge over the same :class:`~lifecycle.ledger.SessionLedger` the ACP
embedding uses: it parses lines, translates SDK lines with :mod:`lifecycle.claude`, turns
``adapter`` lines into events, and delivers each planned message by printing it (or, under
``deliver_fails``, by failing). It never crashes on a malformed line: it reports the line number
on stderr and goes on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from ..answers import TransitionObserver
from ..claude import MalformedMessage, stream_events
from ..errors import LifecycleError
from ..events import (
    AuthStatus,
    Cancelled,
    Event,
    PermissionAnswered,
    PermissionAsked,
    PromptStarted,
    QueryEnded,
    QueryError,
    RateLimitWindow,
    RuntimeReplaced,
    mask_texts,
)
from ..history import load_history
from ..ledger import SessionLedger
from ..negotiation import negotiate, notices_capable
from ..redaction import SecretMemory, redact

__all__ = ["TraceDriver", "run_trace"]


class _LineError(Exception):
    """A trace line that cannot be applied (reported, then skipped)."""


class TraceDriver:
    """Feeds trace lines into ledgers; ``emit`` receives every delivered JSON-RPC message."""

    def __init__(
        self,
        emit: Callable[[dict[str, Any]], object],
        report: Callable[[str], None],
        observer: TransitionObserver | None = None,
    ) -> None:
        self._emit = emit
        self._report = report
        self._observer = observer
        self._negotiated = False
        self._notices = False
        self._secrets: dict[str, SecretMemory] = {}
        self._sessions: dict[str, SessionLedger] = {}
        self._current: SessionLedger | None = None
        self._epochs = 0
        self._fail_next = 0
        self._now: int | None = None  # the adapter's clock for window readings (``clock``)

    @property
    def sessions(self) -> Mapping[str, SessionLedger]:
        return self._sessions

    def feed_text(self, lineno: int, text: str) -> None:
        """Apply one raw line; malformed lines are reported with their number."""
        if not text.strip():
            return
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError) as exc:
            self._report(f"line {lineno}: not JSON ({type(exc).__name__})")
            return
        if not isinstance(obj, dict):
            self._report(f"line {lineno}: not a JSON object")
            return
        try:
            self.feed_line(obj)
        except (_LineError, LifecycleError) as exc:
            # The message may quote input (an event name, a turn id): redact it like a title.
            self._report(f"line {lineno}: {redact(str(exc))}")

    def feed_line(self, line: Mapping[str, Any]) -> None:
        if line.get("type") == "adapter":
            self._adapter(line)
            return
        try:
            events = stream_events(line)  # an assistant line that replaces messages makes two
        except MalformedMessage as exc:
            raise _LineError(str(exc)) from None
        for event in events:
            if isinstance(event, RateLimitWindow) and self._now is not None:
                event = replace(event, observed_at=self._now)  # read at the trace's clock (issue 52.5)
            self._feed(event)

    def _ledger(self) -> SessionLedger:
        if self._current is None:
            raise _LineError("no session is open (expected an adapter session or load event)")
        return self._current

    def _open(self, session_id: object) -> SessionLedger:
        if not isinstance(session_id, str) or not session_id:
            raise _LineError("sessionId must be a non-empty string")
        self._epochs += 1
        ledger = SessionLedger(
            session_id,
            negotiated=self._negotiated,
            epoch=f"e{self._epochs}",
            observer=self._observer,
            notices=self._notices,
        )
        self._sessions[session_id] = ledger
        self._current = ledger
        return ledger

    def _adapter(self, line: Mapping[str, Any]) -> None:
        what = line.get("event")
        if what == "initialize":
            self._negotiated = negotiate(line.get("clientCapabilities"))
            self._notices = notices_capable(line.get("clientCapabilities"))
        elif what == "session":
            self._open(line.get("sessionId"))
        elif what == "load":
            history = line.get("history")
            if not isinstance(history, list):
                raise _LineError("load needs a history array")
            self._open(line.get("sessionId"))
            self._feed(load_history(history))
        elif what == "prompt":
            turn_id = line.get("turnId")
            if not isinstance(turn_id, str) or not turn_id:
                raise _LineError("prompt needs a non-empty turnId")
            self._feed(PromptStarted(turn_id=turn_id))
        elif what == "cancel":
            self._feed(Cancelled())
        elif what in ("permission_asked", "permission_answered"):
            tool_use_id = line.get("toolUseId")
            if not isinstance(tool_use_id, str) or not tool_use_id:
                raise _LineError(f"{what} needs a non-empty toolUseId")
            event = PermissionAsked if what == "permission_asked" else PermissionAnswered
            self._feed(event(tool_use_id=tool_use_id))
        elif what == "query_error":
            message = line.get("message")
            self._feed(QueryError(message=message if isinstance(message, str) else ""))
        elif what == "query_end":
            self._feed(QueryEnded())
        elif what == "runtime_replaced":
            self._feed(RuntimeReplaced())
        elif what == "authenticated":
            self._feed(AuthStatus(ok=line.get("ok") is True))
        elif what == "clock":
            now = line.get("now")
            if now is not None and (not isinstance(now, int) or isinstance(now, bool) or now < 0):
                raise _LineError("clock now must be null or a non-negative integer")
            self._now = now
        elif what == "deliver_fails":
            count = line.get("count", 1)
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise _LineError("deliver_fails count must be a non-negative integer")
            self._fail_next += count
        else:
            raise _LineError(f"unknown adapter event {what!r}"[:200])

    def _feed(self, event: Event) -> None:
        self._ledger().process(event, self._deliver)

    def _deliver(self, out: Any) -> None:
        if self._fail_next > 0:
            self._fail_next -= 1
            raise ConnectionError("client gone (deliver_fails)")
        # What the adapter would send: credentials masked in every text, legacy prose included,
        # exactly as the ACP edge masks them (one memory per session, as SessionPublisher keeps).
        memory = self._secrets.setdefault(self._ledger().session_id, SecretMemory())
        self._emit(mask_texts(out, memory.mask).to_jsonrpc())

    def trailer(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "lifecycle": "active",
            "sessions": {
                sid: [{"id": a.id, "recovery": a.recovery.value} for a in ledger.active]
                for sid, ledger in self._sessions.items()
            },
        }
        # Notices let go past lifecycle.ledger.MAX_ACTIVE_NOTICES are still active: say how many.
        sessions = self._sessions.items()
        untracked = {sid: led.untracked_notices for sid, led in sessions if led.untracked_notices}
        if untracked:
            out["untracked_notices"] = untracked
        return out


def dumps(obj: object) -> str:
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a "\ud800" escape: write it escaped
        text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"))
    return text


def run_trace(
    lines: Iterable[str],
    write: Callable[[str], object],
    report: Callable[[str], None],
    observer: TransitionObserver | None = None,
) -> int:
    """Run a whole trace: each output line goes to ``write`` (with newline), the trailer last."""
    driver = TraceDriver(lambda m: write(dumps(m) + "\n"), report, observer)
    for lineno, text in enumerate(lines, start=1):
        driver.feed_text(lineno, text)
    write(dumps(driver.trailer()) + "\n")
    return 0
