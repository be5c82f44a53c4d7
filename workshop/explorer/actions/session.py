"""The session around the turns: authentication (``auth_status`` ok or failed), the runtime (its
query throwing, a worker-shutdown EOF, its stream ending, its replacement) and the adapter's own
failure.

Rules: authentication may change at any time; the runtime's end comes from a live runtime and
its replacement only replaces a dead one, within the replacement bound; the adapter fails only
while it handles what a live runtime sent.
"""

from __future__ import annotations

from lifecycle.conditions import Recovery

from ..alphabet import Action, adapter_line, alive, always, background_allowed
from ..registry import REGISTRY
from ..world import AUTH_FAILED_TEXT, INTERNAL_ERROR_NOTE, QUERY_ERROR_TEXT, Bounds, World

__all__: list[str] = []

FAMILY = "session"


def _internal_error_allowed(world: World, bounds: Bounds) -> bool:
    """The adapter fails while it handles what the live runtime sent: in a running turn it
    settles the turn; outside one it is a background record (see :func:`background_allowed`)."""
    return not world.dead and (world.running or background_allowed(world))


def _replace_allowed(world: World, bounds: Bounds) -> bool:
    return world.dead and world.ledger.runtime < bounds.replacements


REGISTRY.add_actions(
    FAMILY,
    Action(
        "auth_ok",
        lambda w: ({"type": "auth_status", "isAuthenticating": False, "output": []},),
        always,
        recovers=frozenset({Recovery.AUTH_STATUS}),
        publishes_nothing=True,
    ),
    Action(
        "auth_failed",
        lambda w: ({"type": "auth_status", "isAuthenticating": False, "output": [], "error": AUTH_FAILED_TEXT},),
        always,
        publishes_nothing=True,
    ),
    Action(
        "query_error",
        lambda w: (adapter_line("query_error", message=QUERY_ERROR_TEXT),),
        alive,
        "transport_lost",
        settles_with_failure=True,
        ends_runtime=True,
        loss=True,
    ),
    Action(
        "worker_shutdown_eof",
        lambda w: ({"type": "system", "subtype": "worker_shutting_down", "reason": "idle"}, adapter_line("query_end")),
        alive,
        "transport_lost",
        settles_with_failure=True,
        ends_runtime=True,
        loss=True,
    ),
    Action(
        "query_end",
        lambda w: (adapter_line("query_end"),),
        alive,
        "stream_ended",
        settles_with_failure=True,
        ends_runtime=True,
    ),
    # The adapter's own failure while it handles what the live runtime sent.
    Action(
        "internal_error",
        lambda w: (adapter_line("internal_error", note=INTERNAL_ERROR_NOTE),),
        _internal_error_allowed,
        "internal_error",
        settles_with_failure=True,
    ),
    Action(
        "runtime_replaced",
        lambda w: (adapter_line("runtime_replaced"),),
        _replace_allowed,
        recovers=frozenset({Recovery.RUNTIME_REPLACED}),
        publishes_nothing=True,
    ),
)
