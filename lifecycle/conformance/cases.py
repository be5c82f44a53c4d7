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
  ``runtime_replaced``
  ``authenticated`` (ok)    ``authenticate``
  ========================  ======================================  ====================================

* Claude Code's process, as an agent runs it: one is started with the session (``session``,
  ``load``) and serves its prompts; after ``query_error`` or ``query_end`` none runs until the
  next prompt makes the agent start (replace) one. So ``runtime_replaced`` has no part: after a
  process ended, the agent's own replacement comes with the next prompt; a live process goes on
  (a replacement of a live runtime changes nothing the client sees, but see below). A ``cancel``
  or permission step while none runs has no Claude Code part. An ``auth_status`` line while none
  runs is *deferred*: the next process the adapter starts prints it before it takes the prompt's
  user message (the client does not wait for it: only a prompt starts that process), and none
  does when no prompt of that session follows.
* A number is kept as the case wrote it (:func:`~lifecycle.conformance.fake_cli.loads_raw`):
  the client and the fake CLI send that token, never a float's rendering of it.
* What the agent level cannot express makes the case "not expressible" (:attr:`Plan.not_expressible`),
  never passed: ``deliver_fails`` (a client cannot make the agent's sends fail and stay connected),
  ``authenticated`` with ``ok: false`` (the agent judges credentials from its own environment),
  a second ``initialize`` (one connection has one), ``permission_asked``, ``query_error`` or
  ``query_end`` before any prompt (no Claude Code runs yet at agent level), an SDK line other than
  ``auth_status`` while no Claude Code process runs (after ``query_error``/``query_end``, before
  the next prompt: an agent starts one only for a prompt), and a live process that announced
  ``worker_shutting_down``, was replaced by the case and then ends (an agent replaces a live
  process only once it ended, and that end after the announcement is the runtime's loss).

Theory of operation
-------------------
The kit and the fake CLI walk the same step list in lock step through two progress counters in
the case's folder (:mod:`lifecycle.conformance.fake_cli`): Claude Code starts a step only
once the client has finished every earlier client part, and the client starts one only once
Claude Code has finished every earlier Claude Code part. The plan records, per step, which sides
take part, so each side knows what to wait for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
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
# (``query_end``), they are left out until the next prompt starts one.
_WAITS = ("cancel", "permission_asked", "permission_answered")

# Where the session's Claude Code process is (the module's rules).
_EARLY, _ALIVE, _ENDED = "early", "alive", "ended"

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
    deferred: bool = False  # played by the next Claude Code the adapter starts: the client does not wait

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "kind": self.kind,
            "sides": sorted(self.sides),
            "data": self.data,
            "session": self.session,
            "deferred": self.deferred,
        }


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
    from .fake_cli import loads_raw  # here: ``python -m ...fake_cli`` imports this package first

    expect = _check_expect(expect_path)
    try:
        raw_lines = input_path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseError(input_path, None, f"unreadable: {exc}") from None
    planner = _Planner(input_path)
    for number, raw in enumerate(raw_lines, 1):
        if not raw.strip():
            continue
        try:
            obj = loads_raw(raw)
        except json.JSONDecodeError as exc:
            raise CaseError(input_path, number, f"not JSON: {exc.msg} (column {exc.colno})") from None
        if not isinstance(obj, dict):
            raise CaseError(input_path, number, "a line must be a JSON object")
        planner.line(number, obj)
    return Case(name, input_path, expect_path, planner.plan(), expect)


class _Planner:
    """The steps of one case, line by line, with where the session's Claude Code process is."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.steps: list[Step] = []
        self.reasons: list[str] = []
        self.initialized = 0
        self.session: str | None = None
        self.prompts = 0
        self.process = _EARLY  # the current session's Claude Code (the module's rules)
        self.stopping = False  # the live process announced worker_shutting_down
        self.kept_stopping = False  # ... and the case replaced it while it still ran
        self.waiting: list[int] = []  # deferred steps no prompt has claimed yet
        self.idle_lines = False  # an SDK line no live process could print was seen

    def line(self, number: int, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        if not isinstance(kind, str):
            raise CaseError(self.path, number, "a line needs a string 'type'")
        if kind != "adapter":
            self.sdk(number, kind, obj)
            return
        event = obj.get("event")
        if event not in _EVENTS:
            raise CaseError(self.path, number, f"unknown adapter event {event!r}")
        sides, required = _EVENTS[event]
        for key, typ in required.items():
            if not isinstance(obj.get(key), typ):
                raise CaseError(self.path, number, f"{event!r} needs {key!r} ({typ.__name__})")
        if event == "deliver_fails":  # any time, even before initialize: the core counts it
            self.reasons.append("deliver_fails: a client cannot make the agent's sends fail and stay connected")
        elif event == "initialize":
            self.initialized += 1
            if self.initialized > 1:
                self.reasons.append("a second initialize (one ACP connection is initialized once)")
        elif self.initialized == 0:
            raise CaseError(self.path, number, f"{event!r} before initialize")
        elif event in ("session", "load"):
            self.release()
            self.session = obj["sessionId"]
            self.process, self.stopping, self.kept_stopping = _EARLY, False, False
        elif self.session is None:
            raise CaseError(self.path, number, f"{event!r} before any session/load")
        sides = self.claude_code(event, sides)
        if event == "authenticated" and not obj["ok"]:
            self.reasons.append("authenticated ok=false: the agent judges credentials from its own environment")
        if event == "load":
            for i, entry in enumerate(obj["history"]):
                if not isinstance(entry, dict) or not isinstance(entry.get("uuid"), str):
                    raise CaseError(self.path, number, f"history[{i}] needs a string 'uuid'")
        data = {k: v for k, v in obj.items() if k not in ("type", "event")}
        self.steps.append(Step(len(self.steps), number, event, sides, data, self.session))

    def claude_code(self, event: str, sides: frozenset[str]) -> frozenset[str]:
        """Move the process by an adapter event; the sides that take part in it."""
        if event == "prompt":
            self.prompts += 1
            if self.process == _ENDED:  # the agent starts a new Claude Code for it
                self.stopping = self.kept_stopping = False
            self.process = _ALIVE
            self.waiting.clear()  # that new process plays the deferred lines first
        elif event in ("query_error", "query_end"):
            if self.prompts == 0:
                self.reasons.append(f"{event!r} before any prompt (Claude Code is not running yet at agent level)")
            if self.kept_stopping:
                self.reasons.append(
                    f"{event!r} of a Claude Code that announced worker_shutting_down and was replaced while it "
                    "still ran: an agent replaces a live Claude Code only once it ended, and that end is the loss"
                )
            self.process, self.stopping = _ENDED, False
        elif event == "runtime_replaced":
            if self.process == _ALIVE and self.stopping:
                self.kept_stopping = True
            return frozenset()
        elif event == "permission_asked" and self.prompts == 0:
            self.reasons.append("'permission_asked' before any prompt (Claude Code is not running yet at agent level)")
        if event in _WAITS and self.process != _ALIVE:
            return sides - {CLI}  # no Claude Code process is there to take part
        return sides

    def sdk(self, number: int, kind: str, obj: dict[str, Any]) -> None:
        if self.session is None:
            raise CaseError(self.path, number, "an SDK line before any session/load")
        deferred = False
        if self.process == _ENDED:
            if kind == "auth_status":
                deferred = True
                self.waiting.append(len(self.steps))
            elif not self.idle_lines:
                self.idle_lines = True
                self.reasons.append(
                    f"an SDK line ({kind}, line {number}) while no Claude Code process runs (after query_error "
                    "or query_end, before the next prompt: an agent starts the next one only for a prompt)"
                )
        elif kind == "system" and obj.get("subtype") == "worker_shutting_down":
            self.stopping = True
        self.steps.append(Step(len(self.steps), number, "sdk", frozenset({CLI}), obj, self.session, deferred))

    def release(self) -> None:
        """Deferred lines no prompt of their session claimed: no Claude Code ever prints them."""
        for i in self.waiting:
            self.steps[i] = replace(self.steps[i], sides=frozenset(), deferred=False)
        self.waiting.clear()

    def plan(self) -> Plan:
        if self.initialized == 0:
            raise CaseError(self.path, None, "no initialize line")
        self.release()
        return Plan(tuple(self.steps), "; ".join(dict.fromkeys(self.reasons)) or None)
