"""Typed errors raised at the library's API boundary."""

from __future__ import annotations

__all__ = ["LifecycleError", "LocalProtocolError", "PendingDeliveryError"]


class LifecycleError(Exception):
    """Base class of every error this library raises on purpose."""


class LocalProtocolError(LifecycleError):
    """The caller fed an event that the session cannot accept in its current state.

    The message names the event and the state; the session is left unchanged.
    """


class PendingDeliveryError(LocalProtocolError):
    """``feed`` was called while planned sends were still waiting for their outcome.

    Drain :meth:`SessionLedger.next_outbound` (reporting each send with ``delivered`` or
    ``delivery_failed``) before feeding the next event: a plan is committed only after its send.
    """
