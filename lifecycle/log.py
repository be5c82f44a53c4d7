"""structlog wiring: the observer the ledger reports to, and the process configuration.

Log lines carry ids, states, event names and revisions only: never a title, raw SDK text or an
exception message, so nothing secret can reach a log through the lifecycle.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog

__all__ = ["StructlogObserver", "configure_logging"]


class StructlogObserver:
    """A :class:`lifecycle.answers.TransitionObserver` that logs with structlog."""

    __slots__ = ("_log",)

    def __init__(self, logger: Any = None, **context: Any) -> None:
        self._log = (logger or structlog.get_logger("lifecycle")).bind(**context)

    def transition(
        self, *, session_id: str, incident_id: str, source: str, target: str, event: str, revision: int
    ) -> None:
        # structlog's first positional parameter is named ``event``: pass the machine event as
        # ``transition`` to avoid the collision.
        self._log.info(
            "incident.transition",
            session_id=session_id,
            incident_id=incident_id,
            from_state=source,
            to_state=target,
            transition=event,
            revision=revision,
        )

    def note(self, what: str, **fields: Any) -> None:
        self._log.info(f"ledger.{what}", **fields)


def configure_logging(stream: TextIO | None = None, *, level: int = logging.INFO, json: bool | None = None) -> None:
    """Log to ``stream`` (stderr by default): JSON when it is not a TTY, readable when it is."""
    out = stream if stream is not None else sys.stderr
    as_json = json if json is not None else not (hasattr(out, "isatty") and out.isatty())
    renderer: Any = structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=out),
        cache_logger_on_first_use=False,
    )
