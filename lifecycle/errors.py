"""The one error hierarchy: everything this library raises on purpose is a :class:`LifecycleError`.

::

    LifecycleError
    ├── LocalProtocolError        the caller did something the session cannot accept now
    │   └── PendingDeliveryError  ... fed an event before reporting the planned sends
    └── RemoteProtocolError       a peer's data does not have the documented shape
        ├── MalformedRecordError  a ``sessionFailure`` record (client side)
        └── MalformedMessage      a Claude SDK message (the Claude edge)

"Local" is the caller of this library, "remote" the peer whose data it was given (h11's naming).
The two ``Malformed*`` errors are also ``ValueError``\\ s, because they are raised for bad values.
A refused call leaves the session exactly as it was.
"""

from __future__ import annotations

__all__ = [
    "LifecycleError",
    "LocalProtocolError",
    "MalformedMessage",
    "MalformedRecordError",
    "PendingDeliveryError",
    "RemoteProtocolError",
]


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


class RemoteProtocolError(LifecycleError):
    """Data received from a peer (a client's record, the Claude SDK's message) is malformed."""


class MalformedRecordError(RemoteProtocolError, ValueError):
    """A ``sessionFailure`` value that is present but does not satisfy the wire model."""


class MalformedMessage(RemoteProtocolError, ValueError):
    """A known SDK message type whose fields do not have the documented shape."""
