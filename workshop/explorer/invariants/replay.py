"""Invariants on History replay (``session/load``): every recognised occurrence is replayed as a
typed record at its position, and only the latest one stays active.

Rules: what a replay must restore is the root's expectation (:class:`~workshop.explorer.roots.Root`:
``limits``, ``active_limit``), written with the root, never read from the ledger.
"""

from __future__ import annotations

from ..registry import REGISTRY
from ..steps import Step

__all__: list[str] = []

FAMILY = "replay"
invariant = REGISTRY.invariant(FAMILY)


@invariant
def replay_latest_only(s: Step) -> str | None:
    """Every recognized occurrence is replayed as a typed record at its original transcript
    position. The latest matching message stays active until a later real-model answer proves
    recovery; older and recovered records remain historical typed entries. Legacy clients
    receive the original transcript and no typed record."""
    root = s.root
    if root is None or root.history is None:
        return None
    records = [rec for _, _, rec in s.records()]
    if not root.negotiated:
        texts = [e.text for e in s.after.client.entries if e.kind == "agent"]
        expected = [
            h["message"]["content"][0]["text"] for h in root.history if h["type"] == "assistant"
        ]
        if records or texts != expected:
            return f"the legacy replay showed {texts} and {len(records)} record(s)"
        return None
    if len(records) != root.limits:
        return f"{len(records)} typed record(s) replayed for {root.limits} usage-limit message(s)"
    kinds = [e.kind for e in s.after.client.entries]
    expected_kinds = [
        "user" if h["type"] == "user" else ("record" if h["message"]["model"] == "<synthetic>" else "agent")
        for h in root.history
    ]
    if kinds != expected_kinds:
        return f"replayed transcript order {kinds}, expected {expected_kinds}"
    active = [a.id for a in s.after.active]
    want = [] if root.active_limit is None else [records[root.active_limit].id]
    if active != want:
        return f"after replay {active} are active, expected {want}"
    return None
