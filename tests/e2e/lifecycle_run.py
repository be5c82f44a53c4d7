"""Drive the lifecycle with what the REAL Claude Code CLI yields under injected faults.

Additive helpers on top of :mod:`claude_cli` / :mod:`fakeapi` (which are not changed):

* :data:`MATRIX`: the fault matrix (scenario -> the fault, and the ``run_query`` options the
  recordings used), in the order the docs table lists it;
* :func:`run_matrix`: one real CLI run per scenario, several at once (the runs are mostly
  waiting: CLI start-up, retry back-off), each in its own folder under ``root``;
* :class:`LedgerDriver`: a :class:`~lifecycle.ledger.SessionLedger` fed turn by turn with the SDK
  messages and the final exception, in order, through ``lifecycle.claude``; everything it sends
  is kept and projected into a :class:`~lifecycle.client.ClientProjection`;
* :func:`ask_as`: one prompt on a :class:`~claude_cli.CliClient` whose user message carries a
  chosen uuid (the CLI persists it as the transcript's user-message uuid, so the live turn id and
  the replayed incident id can be the same, as the spec wants);
* :func:`matrix_markdown`: the docs' fault-matrix table, generated from live runs.

Regenerate the table of README.md's fault matrix::

    cd <repository root> && .venv/bin/python -m tests.e2e.lifecycle_run > /tmp/matrix.md
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import json
import re
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path
from typing import Any

from lifecycle import ClientProjection, PromptStarted, SessionLedger
from lifecycle.claude import from_sdk_exception, from_sdk_message
from lifecycle.cli.replay import ReplayView, replay_transcript
from lifecycle.events import Event, Outbound, PromptErrorOut, PromptResponseOut, SessionUpdateOut

from .claude_cli import RECORDED_OPTIONS, CliClient, CliRun, CliTurn, run_query_async

__all__ = [
    "MATRIX",
    "LedgerDriver",
    "TurnLog",
    "ask_as",
    "cli_text",
    "matrix_markdown",
    "normalise",
    "run_matrix",
    "sdk_items",
    "usage_limit_text",
]

#: scenario -> what the fake server does (the scenarios of ``fakeapi.SCENARIOS``).
MATRIX: dict[str, str] = {
    "http429": "429 `rate_limit_error`, `retry-after: 0`",
    "http529": "529 `overloaded_error`",
    "http500": "500 `api_error`",
    "http401": "401 `authentication_error` (invalid x-api-key)",
    "http403": "403 `permission_error`",
    "http400": "400 `invalid_request_error` (empty text block)",
    "http404_model": "404 `not_found_error` (model)",
    "http400_credit": '400 `invalid_request_error` "credit balance is too low"',
    "conn_refused": "nothing listens on the port",
    "conn_closed": "TCP close after reading the request",
    "sse_truncated": "200 SSE cut after one text delta (TCP close)",
    "max_tokens": "every answer ends with `stop_reason: max_tokens`",
    "retry_then_success": "529 once, then a normal answer",
    "max_turns": "always a `Read` tool call (`max_turns=2`)",
    "max_budget": "a tool call costing 2M/200k tokens (`max_budget_usd=0.01`)",
    "usage_limit_gateway": "429 + `anthropic-ratelimit-unified-status: rejected` (5h), gateway JWT auth",
}

_PORT = re.compile(r"127\.0\.0\.1:\d+")
_RESET = re.compile(r"resets [^()]*? \(UTC\)")


# ------------------------------------------------------------------ running the CLI


async def _run_all(root: Path, names: Sequence[str], concurrency: int, timeout: float) -> dict[str, CliRun]:
    gate = asyncio.Semaphore(concurrency)

    async def one(name: str) -> CliRun:
        async with gate:
            return await run_query_async(name, workdir=root / name, timeout=timeout, **RECORDED_OPTIONS.get(name, {}))

    runs = await asyncio.gather(*(one(n) for n in names))
    return dict(zip(names, runs, strict=True))


def run_matrix(
    root: Path, names: Sequence[str] = tuple(MATRIX), *, concurrency: int = 4, timeout: float = 90
) -> dict[str, CliRun]:
    """One real CLI run per scenario (``root/<scenario>/`` each), ``concurrency`` at a time."""
    return asyncio.run(_run_all(root, names, concurrency, timeout))


def sdk_items(run: CliRun | CliTurn) -> list[object]:
    """What the SDK handed the adapter, in order: every message, then the exception if any."""
    items: list[object] = list(run.messages)
    if run.exception is not None:
        items.append(run.exception)
    return items


async def ask_as(c: CliClient, prompt: str, user_uuid: str, *, timeout: float | None = None) -> CliTurn:
    """:meth:`CliClient.ask`, but the user message carries ``user_uuid`` (the live turn id)."""
    turn = CliTurn(prompt, [])
    c.turns.append(turn)

    async def message() -> AsyncIterator[dict[str, Any]]:
        yield {
            "type": "user",
            "uuid": user_uuid,
            "message": {"role": "user", "content": prompt},
            "parent_tool_use_id": None,
        }

    async def go() -> None:
        await c.client.query(message())
        async for msg in c.client.receive_response():
            turn.messages.append(msg)

    try:
        await asyncio.wait_for(go(), timeout or c.turn_timeout)
    except TimeoutError as e:
        turn.timed_out, turn.exception = True, e
    except Exception as e:
        turn.exception = e
    return turn


# ------------------------------------------------------------------ the CLI's own text


def _text(msg: object) -> str:
    return "".join(getattr(b, "text", "") for b in getattr(msg, "content", None) or [])


def cli_text(run: CliRun | CliTurn) -> str:
    """The user-facing failure text the CLI emitted (spec: "Title and details", in its order).

    The top-level ``<synthetic>`` assistant text; otherwise the result text or its ``errors``.
    """
    synthetic = [
        m
        for m in run.messages
        if type(m).__name__ == "AssistantMessage" and m.model == "<synthetic>" and m.parent_tool_use_id is None
    ]
    if synthetic:
        return _text(synthetic[-1])
    res = run.result
    if res is None:
        return ""
    return res.result or "; ".join(res.errors or [])


def normalise(text: str, run: CliRun | None = None) -> str:
    """The port, the run's working folder and the usage-limit reset time made run-independent."""
    if run is not None:
        text = text.replace(str(run.cwd), "/home/user/project")
    return _RESET.sub("resets TIME (UTC)", _PORT.sub("127.0.0.1:PORT", text))


def usage_limit_text(run: CliRun | CliClient, request_index: int = 0) -> str:
    """What the CLI must say for the usage limit the fake server sent in its ``request_index``-th answer."""
    requests = run.message_requests if isinstance(run, CliRun) else run.server.message_requests
    reset = int(requests[request_index].reply_headers["anthropic-ratelimit-unified-reset"])
    when = dt.datetime.fromtimestamp(reset, dt.UTC)
    # The CLI leaves out ":00" on the hour ("resets 6pm (UTC)", seen live), else "resets 4:06pm (UTC)".
    minutes = f":{when.minute:02d}" if when.minute else ""
    hhmm = f"{when.hour % 12 or 12}{minutes}{'am' if when.hour < 12 else 'pm'}"
    return f"You've hit your 5-hour limit · resets {hhmm} (UTC)"


# ------------------------------------------------------------------ driving the ledger


@dataclasses.dataclass
class TurnLog:
    """One turn through the ledger: the events fed, what was sent, the active set after each event."""

    turn_id: str
    events: list[Event] = dataclasses.field(default_factory=list)
    sent: list[Outbound] = dataclasses.field(default_factory=list)
    active_after: list[list[tuple[str, str]]] = dataclasses.field(default_factory=list)

    @property
    def settles(self) -> list[PromptResponseOut | PromptErrorOut]:
        return [m for m in self.sent if isinstance(m, (PromptResponseOut, PromptErrorOut))]

    @property
    def records(self) -> list[Any]:
        return [m.record for m in self.sent if m.record is not None]

    @property
    def chunks(self) -> list[str]:
        """Texts of the ``agent_message_chunk`` updates sent."""
        return [
            m.update["content"]["text"]
            for m in self.sent
            if isinstance(m, SessionUpdateOut) and m.update.get("sessionUpdate") == "agent_message_chunk"
        ]

    def wire(self) -> str:
        """Everything sent, as the JSON-RPC text the client received."""
        return "\n".join(json.dumps(m.to_jsonrpc(), ensure_ascii=False) for m in self.sent)


class LedgerDriver:
    """One ledger fed what the SDK yielded, turn by turn; every send succeeds and is projected."""

    def __init__(self, session_id: str, *, negotiated: bool, epoch: str = "e2e") -> None:
        self.ledger = SessionLedger(session_id, negotiated=negotiated, epoch=epoch)
        self.client = ClientProjection()
        self.turns: list[TurnLog] = []

    def turn(self, items: Iterable[object], *, turn_id: str | None = None) -> TurnLog:
        """``PromptStarted`` (a fresh uuid unless ``turn_id``), then each SDK message/exception in order."""
        log = TurnLog(turn_id or str(uuid.uuid4()))
        self.turns.append(log)
        self._feed(PromptStarted(turn_id=log.turn_id), log)
        for item in items:
            event = from_sdk_exception(item) if isinstance(item, BaseException) else from_sdk_message(item)
            if event is not None:
                self._feed(event, log)
        return log

    def active(self) -> list[tuple[str, str]]:
        return [(a.id, a.recovery.value) for a in self.ledger.active]

    def _feed(self, event: Event, log: TurnLog) -> None:
        def deliver(out: Outbound) -> None:
            log.sent.append(out)
            self.client.receive(out.to_jsonrpc())

        log.events.append(event)
        assert self.ledger.process(event, deliver), f"{type(event).__name__} refused"
        log.active_after.append(self.active())


# ------------------------------------------------------------------ the docs table


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _answered(run: CliRun) -> str:
    replies = [r.reply for r in run.message_requests]
    if not replies:
        return "no request reached it"
    out: list[str] = []
    for reply in replies:  # collapse runs of the same reply: "3× 529 overloaded_error"
        if out and out[-1].endswith(f"`{reply}`"):
            n = int(out[-1].split("×", 1)[0]) + 1
            out[-1] = f"{n}× `{reply}`"
        else:
            out.append(f"1× `{reply}`")
    return ", ".join(out)


def _emitted(run: CliRun) -> str:
    parts: list[str] = []
    retries = run.api_retries
    if retries:
        kinds = sorted({f"{d['error_status'] or 'no response'}/{d['error']}" for d in retries})
        parts.append(f"{len(retries)}× `api_retry` ({', '.join(kinds)})")
    syn = run.synthetic
    res = run.result
    if syn is not None:
        parts.append(f"`<synthetic>` `error={syn.error}`")
    elif res is not None and res.is_error:
        parts.append(f"result `{res.subtype}`")
    elif res is not None:
        parts.append("a real answer, result `success`")
    if run.exception is not None:
        parts.append(f"then `{type(run.exception).__name__}`")
    return "; ".join(parts)


def _record(log: TurnLog) -> str:
    errors = [r for r in log.records if r.severity.value == "error"]
    warnings = [r for r in log.records if r.severity.value == "warning"]
    parts: list[str] = []
    if warnings:
        cats = sorted({r.category.value for r in warnings})
        revs = "rev 1" if len(warnings) == 1 else f"revs 1–{len(warnings)}"
        parts.append(f"`{'/'.join(cats)}` `warning` {revs}")
    if errors:
        r = errors[-1]
        actions = ", ".join(a.value for a in r.actions) or "no action"
        parts.append(f"**`{r.category.value}` `{r.severity.value}`** ({actions}) rev {r.revision} on PromptResponse")
    else:
        parts.append(f"no error; `stopReason: {log.settles[-1].to_jsonrpc()['result']['stopReason']}`")
    return "; ".join(parts)


def _legacy(log: TurnLog, text: str) -> str:
    settle = log.settles[-1]
    if not isinstance(settle, PromptErrorOut):
        return "`end_turn`, no record"
    where = "as `agent_message_chunk`" if text in log.chunks else "in the error's `message` only"
    return f"JSON-RPC error `{settle.code}`; the text {where}"


def _restores(view: ReplayView) -> str:
    if not view.records:
        return "nothing"
    rec = view.records[-1]["record"]
    active = ", ".join(a["recovery"] for a in view.active) or "not active"
    return f"`{rec['category']}` `{rec['severity']}` `<user uuid>:error`, active until `{active}`"


def matrix_rows(runs: dict[str, CliRun]) -> list[list[str]]:
    """One row per run: the live data the docs table shows."""
    rows = []
    for name, run in runs.items():
        live = LedgerDriver(run.session_id or name, negotiated=True).turn(sdk_items(run))
        legacy = LedgerDriver(run.session_id or name, negotiated=False).turn(sdk_items(run))
        view = replay_transcript(run.transcript_path) if run.transcript_path else ReplayView(session_id=name)
        active = ", ".join(f"`{rec}`" for _, rec in live.active_after[-1]) or "none"
        rows.append(
            [
                f"`{name}`",
                MATRIX.get(name, name),
                _answered(run),
                _emitted(run),
                f"“{normalise(cli_text(run), run)}”",
                _record(live),
                active,
                _legacy(legacy, cli_text(run)),
                _restores(view),
            ]
        )
    return rows


def matrix_markdown(runs: dict[str, CliRun]) -> str:
    head = [
        "scenario",
        "fault injected",
        "the fake API answered",
        "the CLI emitted",
        "its text (port, cwd, reset time normalised)",
        "record (negotiated)",
        "active until",
        "legacy client",
        "`lifecycle replay` restores",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in matrix_rows(runs)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the matrix against the real CLI and print the docs table (Markdown) to stdout."""
    names = (argv if argv is not None else sys.argv[1:]) or list(MATRIX)
    with tempfile.TemporaryDirectory(prefix="cc-matrix-") as tmp:
        runs = run_matrix(Path(tmp), names)
        bad = [n for n, r in runs.items() if r.timed_out or r.result is None]
        if bad:
            print(f"runs without a result: {bad}", file=sys.stderr)
            return 1
        sys.stdout.write(matrix_markdown(runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
