"""What a letter of the explorer's alphabet is, and what every family of letters shares: the
trace lines they are made of and the environment's rules for when they may happen.

Rules
-----
* An :class:`Action` is one letter of the alphabet: the ``lifecycle trace`` lines it feeds (SDK
  lines translated by :func:`lifecycle.claude.from_stream_json`, adapter events as
  :mod:`lifecycle.cli.trace` makes them) and when the environment may emit them. The letters
  themselves are declared by concern in :mod:`.actions`.
* The environment is realistic: a Claude runtime emits SDK messages only while it is alive; once
  its query iterator threw or ended it is dead until the adapter replaces it, and the adapter
  replaces only a dead runtime and prompts only on a live one. ``auth_status``/``authenticate``,
  cancellation and late events from a replaced runtime may arrive at any time. While Claude Code
  waits for the answer to its permission question the turn's stream is quiet
  (:func:`unless_waiting`).
* Only what more than one family uses is here; a family's own lines and conditions stay in its
  module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lifecycle.conditions import Recovery

from .world import SESSION_ID, Bounds, World

__all__ = [
    "Action",
    "Enabled",
    "Line",
    "adapter_line",
    "alive",
    "always",
    "assistant_line",
    "background_allowed",
    "question_id",
    "question_open",
    "result_line",
    "unless_waiting",
    "while_cancelled",
    "while_running",
]

Line = dict[str, Any]
#: When a letter may happen: a condition on the configuration and the bounds.
Enabled = Callable[[World, Bounds], bool]


@dataclass(frozen=True, slots=True)
class Action:
    """One letter of the alphabet: the trace lines it feeds, when it is enabled, what it may end.

    ``flow_event`` is the :class:`~lifecycle.session_flow.SessionFlow` event the spec makes of it
    (None: it is no turn event and must leave the turn where it is), and ``flow_then`` the one its
    line makes next, if it makes two (a replacing answer: ``failure_replaced``, then
    ``real_answer``); the explorer steps its own copy of the flow by the class's declared
    transitions and compares it to the ledger's.
    ``recovers`` is the spec's table, not the ledger's: the recovery policies whose incidents may
    leave the active set on this event (spec: "Internal recovery"). ``family`` is the module of
    :mod:`.actions` that declared it (set by the registry).
    """

    name: str
    lines: Callable[[World], tuple[Line, ...]]
    enabled: Enabled
    flow_event: str | None = None
    flow_then: str | None = None
    recovers: frozenset[Recovery] = frozenset()
    late: bool = False  # fed tagged with the replaced runtime's generation
    failure_kind: str | None = None  # Claude failure text of this kind (reference for legacy codes)
    settles_with_failure: bool = False  # ends a running turn as a failure (spec reference)
    publishes_nothing: bool = False  # recovery-only events: nothing may be sent
    ends_runtime: bool = False  # the query iterator threw or ended: the runtime is dead until replaced
    loss: bool = False  # the runtime was lost (rule 6: a connection failure with new_session)
    stop_reason: str | None = None  # a result whose stop reason wins over ``is_error`` (rule 4)
    turn_frame: bool = False  # an SDK message of the prompt's turn (rule 7: absorbed after cancel)
    permission: bool = False  # a permission question or its answer: never an incident
    window: bool = False  # a usage-limit window's report: the session's, never the turn's (issue 32)
    family: str = ""


# ---------------------------------------------------------------------------- lines


def adapter_line(event: str, **fields: Any) -> Line:
    return {"type": "adapter", "event": event, **fields}


def assistant_line(
    text: str, model: str, error: str | None = None, uuid: str = "a1", supersedes: tuple[str, ...] = ()
) -> Line:
    line: Line = {
        "type": "assistant",
        "message": {"model": model, "role": "assistant", "content": [{"type": "text", "text": text}]},
        "parent_tool_use_id": None,
        "uuid": uuid,
        "session_id": SESSION_ID,
    }
    if error is not None:
        line["error"] = error
    if supersedes:  # CLI 2.1.337: the earlier messages this one replaces
        line["supersedes"] = list(supersedes)
    return line


def result_line(text: str, *, is_error: bool, **fields: Any) -> Line:
    return {"type": "result", "subtype": "success", "is_error": is_error, "result": text, **fields}


# ---------------------------------------------------------------------------- when letters may happen


def always(world: World, bounds: Bounds) -> bool:
    return True


def alive(world: World, bounds: Bounds) -> bool:
    return not world.dead


def while_running(world: World, bounds: Bounds) -> bool:
    return world.running and not world.dead


def while_cancelled(world: World, bounds: Bounds) -> bool:
    """The prompt was answered ``cancelled`` and its turn's stream still drains (a live runtime)."""
    return world.flow == "cancelled" and not world.dead


def background_allowed(world: World) -> bool:
    """A background (session-scoped) record may appear: once a prompt has run, while no incident
    is active. A constraint on the environment, like the incident bound: a background record
    before the first prompt, or on top of other incidents, only repeats the space a later one
    already reaches with one more incident in it (and multiplies it)."""
    return world.ledger.turn is not None and not world.active


def question_id(world: World) -> str:
    """The tool use id of the permission question of the current (or last) turn: one question
    per turn, so at most one is open at once (the bound that keeps the space small)."""
    turn = world.ledger.turn
    return f"toolu-{turn.turn_id if turn else 't0'}"


def question_open(world: World, bounds: Bounds) -> bool:
    return world.ledger.question_open(question_id(world))


def unless_waiting(enabled: Enabled) -> Enabled:
    """``enabled``, except while Claude Code waits for the answer to its permission question: its
    ``can_use_tool`` callback blocks the turn, so the turn's stream is quiet (no API call, no
    message, no result) until the answer; the turn may still be cancelled, lose its runtime, or
    fail in the adapter."""

    def quiet_while_waiting(world: World, bounds: Bounds) -> bool:
        return enabled(world, bounds) and not (world.running and question_open(world, bounds))

    return quiet_while_waiting
