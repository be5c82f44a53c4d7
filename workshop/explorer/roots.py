"""The explorer's roots: the initial configurations every exploration starts from.

Rules
-----
* A :class:`Root` is an initial configuration: a capable or legacy client; a fresh session or a
  ``session/load`` of a history holding usage-limit messages (:data:`ROOTS`). Its ``limits`` and
  ``active_limit`` are the spec's expectation for the replay, written here, not read from the
  ledger.
* :func:`root_lines` is a root as ``lifecycle trace`` input; :func:`~.steps.make_root` builds its
  configuration.
"""

from __future__ import annotations

from dataclasses import dataclass

from .alphabet import Line, adapter_line
from .world import ANSWER_TEXT, CAPABLE, LEGACY, LIMIT_TEXT, OLDER_LIMIT_TEXT, SESSION_ID

__all__ = ["ROOTS", "Root", "root_lines"]


def _history_user(uuid: str, text: str) -> Line:
    return {"type": "user", "uuid": uuid, "message": {"role": "user", "content": text}}


def _history_assistant(uuid: str, text: str, model: str) -> Line:
    return {
        "type": "assistant",
        "uuid": uuid,
        "message": {"role": "assistant", "model": model, "content": [{"type": "text", "text": text}]},
    }


@dataclass(frozen=True, slots=True)
class Root:
    """An initial configuration; ``history`` is replayed with ``session/load`` (a fresh ledger).

    ``limits`` and ``active_limit`` are the spec's expectation for the replay: how many typed
    records it restores and which of them (by position) stays active.
    """

    name: str
    negotiated: bool
    history: tuple[Line, ...] | None = None
    limits: int = 0
    active_limit: int | None = None
    turns: int | None = None  # a tighter turn bound for this root (a loaded session is explored less)
    windows: bool = False  # Claude Code reports usage-limit windows in this root (issue 32)


_H_LATEST = (
    _history_user("u1", "hi"),
    _history_assistant("m1", OLDER_LIMIT_TEXT, "<synthetic>"),
    _history_user("u2", "hi again"),
    _history_assistant("m2", LIMIT_TEXT, "<synthetic>"),
)
_H_RECOVERED = (
    _history_user("u1", "hi"),
    _history_assistant("m1", LIMIT_TEXT, "<synthetic>"),
    _history_user("u2", "and now?"),
    _history_assistant("m2", ANSWER_TEXT, "claude-opus-4-5"),
)
_H_ORPHAN = (_history_assistant("m1", LIMIT_TEXT, "<synthetic>"),)

ROOTS: tuple[Root, ...] = (
    Root("capable/new", True),
    Root("capable/load-latest-limit-active", True, _H_LATEST, limits=2, active_limit=1, turns=1),
    Root("capable/load-limit-recovered", True, _H_RECOVERED, limits=1, active_limit=None, turns=1),
    Root("capable/load-limit-without-user-message", True, _H_ORPHAN, limits=1, active_limit=0, turns=1),
    # Issue 32's windows: in a root of its own with one turn (a window's warning multiplies every
    # state it is active in by the window's states); a legacy client is shown none of them, so the
    # legacy root reports them too (its states do not multiply).
    Root("capable/new-windows", True, turns=1, windows=True),
    Root("legacy/new", False, windows=True),
    Root("legacy/load-latest-limit-active", False, _H_LATEST, limits=2, active_limit=1, turns=1),
)


def root_lines(root: Root) -> tuple[Line, ...]:
    init = adapter_line("initialize", clientCapabilities=CAPABLE if root.negotiated else LEGACY)
    if root.history is None:
        return init, adapter_line("session", sessionId=SESSION_ID)
    return init, adapter_line("load", sessionId=SESSION_ID, history=list(root.history))
