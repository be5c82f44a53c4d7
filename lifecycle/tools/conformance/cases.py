"""Conformance cases as agent-level plans: a case's script split into what the ACP client does
and what Claude Code does, in one shared order.

Rules
-----
* A case is ``NAME.input.jsonl`` (one JSON object a line, tests/conformance/FORMAT.md) beside
  ``NAME.expect.json``. A line that is not a JSON object, an ``adapter`` event that is unknown or
  lacks a field it needs, or an expectation file that is not the documented object is a
  :class:`CaseError` naming the file and the line.
* Every line becomes one :class:`Step`, in file order. A step has a client part (what the kit,
  as the ACP client, does), a Claude Code part (what the fake CLI does), or both:

  ========================  ======================================  ====================================
  line                      client                                  Claude Code (fake CLI)
  ========================  ======================================  ====================================
  ``initialize``            ``initialize`` with the capabilities
  ``session``               ``session/new``
  ``load``                  writes the transcript, ``session/load``
  ``prompt``                ``session/prompt`` (not awaited)        waits for the user message
  SDK line                                                          prints it
  ``cancel``                ``session/cancel``                      waits for the ``interrupt``
  ``permission_asked``      waits for ``session/request_permission``  sends ``can_use_tool``
  ``permission_answered``   answers it                              waits for the answer
  ``query_error``                                                   exits with status 1
  ``query_end``                                                     closes its stream, exits 0
  ``runtime_replaced``                                              stops; the next process goes on
  ``authenticated`` (ok)    ``authenticate``
  ========================  ======================================  ====================================

* What the agent level cannot express makes the case "not expressible" (:attr:`Plan.not_expressible`),
  never passed: ``deliver_fails`` (a client cannot make the agent's sends fail and stay connected),
  ``authenticated`` with ``ok: false`` (the agent judges credentials from its own environment),
  and a second ``initialize`` (one connection has one).

Theory of operation
-------------------
The kit and the fake CLI walk the same step list in lock step through two progress counters in
the case's folder (:mod:`lifecycle.tools.conformance.fake_cli`): Claude Code starts a step only
once the client has finished every earlier client part, and the client starts one only once
Claude Code has finished every earlier Claude Code part. The plan records, per step, which sides
take part, so each side knows what to wait for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CLI", "CLIENT", "Case", "CaseError", "Plan", "Step", "find_cases", "load_case"]

CLIENT = "client"
CLI = "cli"

# adapter event -> (sides taking part, required fields with their type)
_EVENTS: dict[str, tuple[frozenset[str], dict[str, type]]] = {
    "initialize": (frozenset({CLIENT}), {}),
    "session": (frozenset({CLIENT}), {"sessionId": str}),
    "load": (frozenset({CLIENT}), {"sessionId": str, "history": list}),
    "prompt": (frozenset({CLIENT, CLI}), {"turnId": str}),
    "cancel": (frozenset({CLIENT, CLI}), {}),
    "permission_asked": (frozenset({CLIENT, CLI}), {"toolUseId": str}),
    "permission_answered": (frozenset({CLIENT, CLI}), {"toolUseId": str}),
    "query_error": (frozenset({CLI}), {}),
    "query_end": (frozenset({CLI}), {}),
    "runtime_replaced": (frozenset({CLI}), {}),
    "authenticated": (frozenset({CLIENT}), {"ok": bool}),
    "deliver_fails": (frozenset(), {}),
}

# Claude Code parts that need a live process; once it died (``query_error``) or ended
# (``query_end``), they are left out until the next prompt starts one. ``runtime_replaced`` then
# only says that the next process is a new one.
_WAITS = ("cancel", "permission_asked", "permission_answered", "runtime_replaced")

_EXPECT_LISTS = ("sequence", "records", "forbid", "forbid_messages")


class CaseError(ValueError):
    """A malformed case: ``str()`` names the file and, where there is one, the line."""

    def __init__(self, path: Path, line: int | None, reason: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {reason}")
        self.path = path
        self.line = line


@dataclass(frozen=True, slots=True)
class Step:
    """One line of the case: ``kind`` is the adapter event, or ``"sdk"`` for a stream line."""

    index: int
    line: int
    kind: str
    sides: frozenset[str]
    data: dict[str, Any]
    session: str | None  # the case's session this step belongs to (None before any)

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "kind": self.kind, "sides": sorted(self.sides), "data": self.data,
                "session": self.session}


@dataclass(frozen=True, slots=True)
class Plan:
    steps: tuple[Step, ...]
    not_expressible: str | None = None


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    input_path: Path
    expect_path: Path
    plan: Plan
    expect: dict[str, Any] = field(default_factory=dict)


def find_cases(folder: Path) -> list[tuple[str, Path, Path]]:
    """Every ``NAME.input.jsonl`` with its ``NAME.expect.json`` in ``folder``, sorted by name.

    Raises:
        CaseError: the folder is missing, holds no case, or an input has no expectation file.
    """
    if not folder.is_dir():
        raise CaseError(folder, None, "not a folder of conformance cases")
    found = []
    for input_path in sorted(folder.glob("*.input.jsonl")):
        name = input_path.name[: -len(".input.jsonl")]
        expect_path = folder / f"{name}.expect.json"
        found.append((name, input_path, expect_path))
    if not found:
        raise CaseError(folder, None, "holds no *.input.jsonl case")
    return found


def _check_expect(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise CaseError(path, None, "missing (every NAME.input.jsonl needs its NAME.expect.json)")
    text = path.read_text(encoding="utf-8")
    try:
        expect = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CaseError(path, exc.lineno, f"not JSON: {exc.msg}") from None
    if not isinstance(expect, dict):
        raise CaseError(path, 1, "the expectations must be a JSON object")
    for key in _EXPECT_LISTS:
        if key in expect and not isinstance(expect[key], list):
            raise CaseError(path, _line_of(text, key), f"{key!r} must be a list")
    for key in ("forbid",):
        for item in expect.get(key, []):
            if not isinstance(item, str):
                raise CaseError(path, _line_of(text, key), f"{key!r} holds a non-string")
    if "active" in expect and not isinstance(expect["active"], dict):
        raise CaseError(path, _line_of(text, "active"), "'active' must be an object")
    return expect


def _line_of(text: str, key: str) -> int | None:
    needle = f'"{key}"'
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return number
    return None


def load_case(name: str, input_path: Path, expect_path: Path) -> Case:
    """Parse and plan one case.

    Raises:
        CaseError: the case is malformed (the message names the file and the line).
    """
    expect = _check_expect(expect_path)
    steps: list[Step] = []
    reasons: list[str] = []
    initialized = 0
    session: str | None = None
    prompts = 0
    alive = False  # whether a Claude Code process serves the case at this point
    try:
        raw_lines = input_path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseError(input_path, None, f"unreadable: {exc}") from None
    for number, raw in enumerate(raw_lines, 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise CaseError(input_path, number, f"not JSON: {exc.msg} (column {exc.colno})") from None
        if not isinstance(obj, dict):
            raise CaseError(input_path, number, "a line must be a JSON object")
        kind = obj.get("type")
        if not isinstance(kind, str):
            raise CaseError(input_path, number, "a line needs a string 'type'")
        if kind != "adapter":
            if session is None:
                raise CaseError(input_path, number, "an SDK line before any session/load")
            steps.append(Step(len(steps), number, "sdk", frozenset({CLI}), obj, session))
            continue
        event = obj.get("event")
        if event not in _EVENTS:
            raise CaseError(input_path, number, f"unknown adapter event {event!r}")
        sides, required = _EVENTS[event]
        for key, typ in required.items():
            if not isinstance(obj.get(key), typ):
                raise CaseError(input_path, number, f"{event!r} needs {key!r} ({typ.__name__})")
        if event == "initialize":
            initialized += 1
            if initialized > 1:
                reasons.append("a second initialize (one ACP connection is initialized once)")
        elif initialized == 0:
            raise CaseError(input_path, number, f"{event!r} before initialize")
        if event in ("session", "load"):
            session = obj["sessionId"]
        elif event != "initialize" and session is None:
            raise CaseError(input_path, number, f"{event!r} before any session/load")
        if event == "prompt":
            prompts += 1
            alive = True
        elif event in _WAITS and not alive:
            sides = sides - {CLI}  # no Claude Code process is there to take part
        elif event in ("query_error", "query_end"):
            alive = False
        if event in ("permission_asked", "query_error", "query_end") and prompts == 0:
            reasons.append(f"{event!r} before any prompt (Claude Code is not running yet at agent level)")
        if event == "deliver_fails":
            reasons.append("deliver_fails: a client cannot make the agent's sends fail and stay connected")
        if event == "authenticated" and not obj["ok"]:
            reasons.append("authenticated ok=false: the agent judges credentials from its own environment")
        if event == "load":
            for i, entry in enumerate(obj["history"]):
                if not isinstance(entry, dict) or not isinstance(entry.get("uuid"), str):
                    raise CaseError(input_path, number, f"history[{i}] needs a string 'uuid'")
        data = {k: v for k, v in obj.items() if k not in ("type", "event")}
        steps.append(Step(len(steps), number, event, sides, data, session))
    if initialized == 0:
        raise CaseError(input_path, None, "no initialize line")
    plan = Plan(tuple(steps), "; ".join(dict.fromkeys(reasons)) or None)
    return Case(name, input_path, expect_path, plan, expect)
