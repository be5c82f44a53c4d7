"""The ACP glue over a real connection: the ACP SDK on both sides of an in-memory transport pair.

Every assertion is on what the client side actually received -- the raw frames (connection
observers) and the SDK models its handlers were called with -- so ``_meta`` is checked after it
went through the SDK's pydantic models on both sides.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Iterable
from typing import Any

import acp
import pytest
from acp import RequestError
from acp.agent.connection import AgentSideConnection
from acp.schema import (
    AgentCapabilities,
    PromptResponse,
    SessionInfoUpdate,
)
from acp_harness import AIR, GlueAgent, RecordingClient, Step, Wire, run

from lifecycle import (
    Action,
    ApiRetry,
    Assistant,
    Category,
    PendingDeliveryError,
    PromptResponseOut,
    PromptStarted,
    Result,
    RuntimeReplaced,
    SessionFailure,
    SessionLedger,
    Severity,
    read_record,
)
from lifecycle.acp import (
    SessionPublisher,
    acp_update,
    advertise,
    attach_to_response,
    merge_meta,
    prompt_response,
    session_info_update,
    with_meta,
)

LIMIT = "You've hit your 5-hour limit · resets 5pm (UTC)"
RATE = "API Error: Request rejected (429) · Number of requests has exceeded your rate limit"


def limit_failure() -> list[Step]:
    return [
        Assistant(text=LIMIT, model="<synthetic>", error="rate_limit"),
        Result(subtype="success", is_error=True, result=LIMIT, api_error_status=429),
    ]


def rate_failure() -> list[Step]:
    return [
        Assistant(text=RATE, model="<synthetic>", error="rate_limit"),
        Result(subtype="success", is_error=True, result=RATE, api_error_status=429),
    ]


def retry(attempt: int) -> ApiRetry:
    return ApiRetry(attempt=attempt, max_retries=10, error_status=429, error="rate_limit")


# ------------------------------------------------------------------ negotiation


@pytest.mark.parametrize(
    ("client_meta", "expected"),
    [
        (AIR, True),
        (None, False),
        ({"jetbrains": {"air": {"version": 0, "capabilities": ["sessionFailure"]}}}, False),
        ({"jetbrains": {"air": {"version": 1, "capabilities": ["somethingElse"]}}}, False),
        ({"jetbrains": {"air": {"version": 2, "capabilities": ["x", "sessionFailure"]}}, "zed.dev": {}}, True),
    ],
)
def test_negotiation_from_a_real_initialize(client_meta: dict[str, Any] | None, expected: bool) -> None:
    agent = GlueAgent(caps_meta={"zed.dev": {"x": 1}, "jetbrains": {"other": True}})

    async def go() -> Wire:
        wire = Wire(agent)
        await wire.open(client_meta)
        return wire

    wire = run(go())
    assert agent.negotiated is expected
    init = wire.results()[0]["result"]
    caps = init["agentCapabilities"]
    assert caps["loadSession"] is True
    # the agent's own _meta keys survive, whatever was negotiated
    assert caps["_meta"]["zed.dev"] == {"x": 1}
    assert caps["_meta"]["jetbrains"]["other"] is True
    if expected:
        assert caps["_meta"]["jetbrains"]["air"] == {"version": 1, "capabilities": ["sessionFailure"]}
    else:
        assert "air" not in caps["_meta"]["jetbrains"]


def test_advertise_keeps_other_capabilities_of_the_air_namespace() -> None:
    base = AgentCapabilities(load_session=True, field_meta={"jetbrains": {"air": {"capabilities": ["tools"]}}})
    caps = advertise(base, True)
    assert caps.field_meta == {"jetbrains": {"air": {"version": 1, "capabilities": ["tools", "sessionFailure"]}}}
    assert advertise(base, False).field_meta == base.field_meta
    assert base.field_meta == {"jetbrains": {"air": {"capabilities": ["tools"]}}}  # not mutated


# ------------------------------------------------------------------ _meta survives both sides


def test_prompt_response_record_keeps_the_quota_key() -> None:
    quota = {"remaining": 0, "window": "5h"}
    agent = GlueAgent(response_meta={"quota": quota})

    async def go() -> tuple[Wire, PromptResponse]:
        wire = Wire(agent)
        sid = await wire.open()
        return wire, await wire.prompt(sid, *limit_failure())

    wire, response = run(go())
    # the raw frame the client received
    raw = wire.results()[-1]["result"]
    assert raw["stopReason"] == "end_turn"
    assert raw["_meta"]["quota"] == quota
    record = read_record(raw["_meta"])
    assert record is not None and record.id == f"{agent.turns[0]}:error"
    assert (record.category.value, record.severity.value, record.title) == ("limit", "error", LIMIT)
    # and the SDK model the client's code gets
    assert response.stop_reason == "end_turn"
    assert response.field_meta is not None and response.field_meta["quota"] == quota
    assert read_record(response.field_meta) == record


def test_attach_to_response_and_with_meta_never_clobber() -> None:
    record = SessionFailure(
        id="t:error", revision=1, category=Category.LIMIT, severity=Severity.ERROR, title=LIMIT, actions=()
    )
    base = PromptResponse(stop_reason="max_tokens", field_meta={"quota": {"left": 1}, "jetbrains": {"x": 1}})
    attached = attach_to_response(base, record)
    assert attached.stop_reason == "end_turn"
    assert attached.field_meta is not None
    assert attached.field_meta["quota"] == {"left": 1} and attached.field_meta["jetbrains"]["x"] == 1
    assert read_record(attached.field_meta) == record
    # the agent's meta added afterwards does not replace the record
    hostile = {"quota": {"left": 0}, "jetbrains": {"air": {"sessionFailure": "nope"}}}
    later = with_meta(attached, hostile)
    assert later.field_meta is not None
    assert read_record(later.field_meta) == record and later.field_meta["quota"] == {"left": 1}
    assert base.field_meta == {"quota": {"left": 1}, "jetbrains": {"x": 1}}
    assert attach_to_response(None, record).model_dump(by_alias=True, exclude_none=True) == {
        "stopReason": "end_turn",
        "_meta": {"jetbrains": {"air": {"version": 1, "sessionFailure": record.to_wire()}}},
    }


def test_attached_response_survives_the_wire() -> None:
    record = SessionFailure(
        id="t:error",
        revision=3,
        category=Category.SERVICE,
        severity=Severity.ERROR,
        title="x",
        actions=(Action.RETRY,),
    )

    class Handwritten(GlueAgent):
        async def prompt(self, session_id: str, prompt: list[Any], **kw: Any) -> PromptResponse:
            mine = PromptResponse(stop_reason="end_turn", field_meta={"quota": {"left": 2}, "vendor": [1, None]})
            return attach_to_response(mine, record)

    async def go() -> tuple[Wire, PromptResponse]:
        wire = Wire(Handwritten())
        sid = await wire.open()
        return wire, await wire.conn.prompt(session_id=sid, prompt=[acp.text_block("hi")])

    wire, response = run(go())
    raw = wire.results()[-1]["result"]["_meta"]
    assert raw["quota"] == {"left": 2} and raw["vendor"] == [1, None]
    assert response.field_meta == raw
    assert read_record(raw) == record


def test_session_info_update_meta_survives_both_models() -> None:
    record = SessionFailure(
        id="s:e:1", revision=1, category=Category.CONNECTION, severity=Severity.ERROR, title="lost", actions=()
    )
    future = {"nested": [1, None, True]}

    class Sender(GlueAgent):
        async def prompt(self, session_id: str, prompt: list[Any], **kw: Any) -> PromptResponse:
            await self.conn.session_update(session_id, session_info_update(record, meta={"futureKey": future}))
            return PromptResponse(stop_reason="end_turn")

    async def go() -> tuple[Wire, str]:
        wire = Wire(Sender())
        sid = await wire.open()
        await wire.conn.prompt(session_id=sid, prompt=[acp.text_block("hi")])
        return wire, sid

    wire, sid = run(go())
    (frame,) = [f for f in wire.frames if f.get("method") == "session/update"]
    assert frame["params"]["update"]["sessionUpdate"] == "session_info_update"
    assert frame["params"]["update"]["_meta"]["futureKey"] == future
    ((got_sid, update),) = wire.client.updates
    assert got_sid == sid and isinstance(update, SessionInfoUpdate)
    assert update.field_meta == frame["params"]["update"]["_meta"]
    assert read_record(update.field_meta) == record


def test_outbound_conversions() -> None:
    out = PromptResponseOut(turn_id="t", stop_reason="cancelled")
    assert prompt_response(out).model_dump(by_alias=True, exclude_none=True) == {"stopReason": "cancelled"}
    assert prompt_response(out, meta={"quota": 1}).field_meta == {"quota": 1}
    chunk = acp_update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}})
    assert type(chunk).__name__ == "AgentMessageChunk" and chunk.content.text == "hi"
    assert merge_meta({"a": {"b": [1]}, "c": 1}, {"a": {"b": [1, 2], "d": 0}, "c": {"e": 1}}) == {
        "a": {"b": [1, 2], "d": 0},
        "c": {"e": 1},
    }


# ------------------------------------------------------------------ legacy settlement


def test_legacy_failure_is_the_json_rpc_error_and_the_text_stays() -> None:
    agent = GlueAgent()

    async def go() -> tuple[Wire, RequestError]:
        wire = Wire(agent)
        sid = await wire.open(None)
        with pytest.raises(RequestError) as info:
            await wire.prompt(sid, retry(1), *rate_failure())
        return wire, info.value

    wire, err = run(go())
    # The reference adapter's legacy error (docs/parity, item 8): Claude's text in the message and
    # the SDK error kind in data.
    assert err.code == -32603 and err.data == {"errorKind": "rate_limit"}
    raw_error = wire.results()[-1]["error"]
    assert raw_error == {"code": -32603, "message": f"Internal error: {RATE}", "data": {"errorKind": "rate_limit"}}
    texts = [u.content.text for _, u in wire.client.updates]
    assert texts == [RATE]  # Claude's text stays in the transcript; no retry warning for legacy
    assert "jetbrains" not in repr(wire.frames)


# ------------------------------------------------------------------ plan -> deliver -> commit


class FailingSink:
    """Delegates to the real connection; the sends whose (0-based) index is in ``fail`` raise."""

    def __init__(self, conn: AgentSideConnection, fail: Iterable[int] = ()) -> None:
        self.conn, self.fail, self.calls = conn, set(fail), 0

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        n, self.calls = self.calls, self.calls + 1
        if n in self.fail:
            raise ConnectionError("client gone")
        await self.conn.session_update(session_id, update, **kw)


def test_a_raising_send_leaves_the_ledger_unchanged_and_leaves_no_revision_gap() -> None:
    agent = GlueAgent(sink=lambda conn: FailingSink(conn, fail=[0]))
    seen: dict[str, Any] = {}

    async def after_failed_send(pub: SessionPublisher, turn_id: str) -> None:
        seen["revision"] = pub.ledger.revision_of(f"{turn_id}:error")
        seen["active"] = pub.ledger.active
        seen["pending"] = pub.ledger.pending
        seen["failed"] = pub.failed_sends

    async def go() -> Wire:
        wire = Wire(agent)
        sid = await wire.open()
        await wire.prompt(sid, retry(1), after_failed_send, retry(2), *rate_failure())
        return wire

    wire = run(go())
    turn = agent.turns[0]
    assert seen == {"revision": 0, "active": (), "pending": False, "failed": 1}
    view = wire.projection()
    assert view.received == {f"{turn}:error": [1, 2]}  # the first warning never arrived: no gap
    (record,) = view.records
    assert (record.severity.value, record.revision) == ("error", 2)
    assert [e.carrier for e in view.entries] == ["prompt_response"]


class JitterSink:
    """Delegates to the real connection after yielding to the event loop a seeded number of
    times, so feeders interleave (reproducibly: no clock is involved)."""

    def __init__(self, conn: AgentSideConnection, seed: int) -> None:
        self.conn, self.rng = conn, random.Random(seed)

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        for _ in range(self.rng.randint(0, 6)):
            await asyncio.sleep(0)
        await self.conn.session_update(session_id, update, **kw)


def concurrent_retries(n: int) -> Step:
    async def step(pub: SessionPublisher, turn_id: str) -> None:
        await asyncio.gather(*(pub.feed(retry(i)) for i in range(1, n + 1)))

    return step


@pytest.mark.parametrize("seed", range(5))
def test_concurrent_feeders_keep_revision_order_per_id(seed: int) -> None:
    agent = GlueAgent(sink=lambda conn: JitterSink(conn, seed))

    async def go() -> Wire:
        wire = Wire(agent)
        sid = await wire.open()
        await wire.prompt(sid, concurrent_retries(12), *rate_failure())
        return wire

    wire = run(go())
    # in wire order: every revision of the id exactly once, increasing, the error last
    assert wire.projection().received == {f"{agent.turns[0]}:error": list(range(1, 14))}
    assert wire.projection().ignored == 0


def test_without_the_session_lock_concurrent_feeders_break_the_ledger() -> None:
    # Non-vacuity of the test above: with the lock replaced by a no-op, two feeders overlap
    # between plan and commit and the ledger refuses the second one.
    class NoLock:
        async def __aenter__(self) -> None:
            return None

        async def __aexit__(self, *exc: object) -> None:
            return None

    agent = GlueAgent(sink=lambda conn: JitterSink(conn, 0))

    async def unlock(pub: SessionPublisher, turn_id: str) -> None:
        pub._lock = NoLock()  # type: ignore[assignment]

    async def go() -> None:
        wire = Wire(agent)
        sid = await wire.open()
        await wire.prompt(sid, unlock, concurrent_retries(12), *rate_failure())

    with pytest.raises(RequestError) as info:  # the handler's PendingDeliveryError, as -32603
        run(go())
    # the refusal the ledger raises when fed while a send is in flight, and nothing else
    refusal = re.compile(r"ApiRetry fed while \d+ planned send\(s\) await their outcome")
    ledger = SessionLedger("s", negotiated=True, epoch="e")
    ledger.feed(PromptStarted(turn_id="t"))
    ledger.feed(retry(1))
    with pytest.raises(PendingDeliveryError) as refused:
        ledger.feed(retry(2))
    assert refusal.fullmatch(str(refused.value))
    assert info.value.code == -32603 and set(info.value.data) == {"details"}
    assert refusal.fullmatch(info.value.data["details"]), info.value.data


def test_a_cancelled_feeder_commits_nothing() -> None:
    async def go() -> tuple[list[int], bool, list[int]]:
        wire = Wire(GlueAgent())
        sid = await wire.open()
        gate = asyncio.Event()
        sending = asyncio.Event()

        class Blocking:
            async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
                sending.set()
                await gate.wait()
                await wire.agent_conn.session_update(session_id, update, **kw)

        ledger = SessionLedger(sid, negotiated=True, epoch="e")
        pub = SessionPublisher(Blocking(), ledger)
        await pub.feed(PromptStarted(turn_id="t"))
        stuck = asyncio.create_task(pub.feed(retry(1)))
        await sending.wait()  # the feeder is inside its send
        stuck.cancel()
        with pytest.raises(asyncio.CancelledError):
            await stuck
        before = [a.revision for a in ledger.active]
        pending = ledger.pending
        gate.set()
        await pub.feed(retry(2))  # returns once its send is delivered and committed
        return before, pending, [a.revision for a in ledger.active]

    before, pending, after = run(go())
    assert (before, pending, after) == ([], False, [1])


def test_stale_runtime_events_are_refused_and_send_nothing() -> None:
    async def go() -> tuple[bool, bool, FailingSink]:
        wire = Wire(GlueAgent())
        sid = await wire.open()
        sink = FailingSink(wire.agent_conn)
        pub = SessionPublisher(sink, SessionLedger(sid, negotiated=True, epoch="e"))
        await pub.feed(RuntimeReplaced())
        stale = await pub.feed(Assistant(text="old runtime", model="claude-opus-5-5"), runtime=0)
        fresh = await pub.feed(Assistant(text="new runtime", model="claude-opus-5-5"), runtime=1)
        return stale, fresh, sink

    stale, fresh, sink = run(go())
    assert (stale, fresh, sink.calls) == (False, True, 1)


def test_outcome_of_an_unknown_turn_is_a_key_error() -> None:
    async def go() -> None:
        pub = SessionPublisher(RecordingClient(), SessionLedger("s", negotiated=True, epoch="e"))
        await pub.outcome("never-started")

    with pytest.raises(KeyError):
        run(go())
