"""The ACP glue over a real connection: the ACP SDK on both sides of an in-memory transport pair
(and, last, ACP ``notice`` updates through it).

Every assertion is on what the client side actually received -- the raw frames (connection
observers) and the SDK models its handlers were called with -- so ``_meta`` is checked after it
went through the SDK's pydantic models on both sides.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import uuid
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import acp
import pydantic
import pytest
from acp import RequestError
from acp.agent.connection import AgentSideConnection
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    NewSessionResponse,
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
    AcpNotice,
    SessionPublisher,
    acp_update,
    advertise,
    attach_to_response,
    merge_meta,
    new_epoch,
    notice_update,
    prompt_response,
    session_info_update,
    with_meta,
)
from lifecycle.events import ModelRefusalFallback, SessionUpdateOut

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


# ------------------------------------------------------------------ ACP notice updates
#
# ACP standard ``notice`` updates through the glue. The ACP SDK (0.12.1) predates the ``notice``
# update, so :class:`lifecycle.acp.SessionPublisher` checks a notice with its own strict model and
# sends it as a raw ``session/update`` below the SDK; every other update still goes through the
# SDK's models. The expected frame is the one the reference adapter sent a client that declared
# ``session.notices`` (``docs/parity/transcripts/refusal-fallback-ok-notices.frames.jsonl``, its
# refusal-fallback notice), the legacy text is the reference's (``refusal-fallback-ok-legacy``),
# written out here.

ORIGINAL, FALLBACK = "claude-opus-5-5", "claude-opus-4-8"
EXPLANATION = "This request was declined by the fake safety classifier."


#: the reference's title for this fallback (transcripts/refusal-fallback-ok-notices.frames.jsonl)
SUMMARY = (
    "claude-opus-5-5 declined this request (cyber); retried with claude-opus-4-8. "
    "The session will continue on claude-opus-4-8."
)


ANSWER = "Hello from the fake API."


#: an Anthropic API key shape ``lifecycle.redaction`` masks (tests/secrets_corpus.py style)
API_KEY = "sk-ant-api03-" + "Nq7hoK2mP9vL4nR8tW1yB5cH3jF6dG0sA" + "-FAKEfakeFAKE"


def fallback(explanation: str | None = EXPLANATION) -> ModelRefusalFallback:
    return ModelRefusalFallback(
        original_model=ORIGINAL,
        fallback_model=FALLBACK,
        direction="retry",
        scope="session",
        category="cyber",
        explanation=explanation,
    )


def refused_then_answered(explanation: str | None = EXPLANATION) -> list[Step]:
    return [
        fallback(explanation),
        Assistant(text=ANSWER, model=FALLBACK),
        Result(subtype="success", is_error=False, result=ANSWER),
    ]


class NoticesAgent(GlueAgent):
    """The glue agent whose ledgers plan ACP notices when the test says the client declared them
    (the SDK's ``ClientCapabilities`` model drops ``session.notices``; a real agent reads it from
    the raw ``initialize``)."""

    def __init__(self, *, notices: bool, sink: Any = None) -> None:
        super().__init__(sink=sink)
        self.notices = notices

    async def new_session(self, cwd: str, **kw: Any) -> NewSessionResponse:
        assert self.negotiated is not None
        sid = str(uuid.uuid4())
        ledger = SessionLedger(sid, negotiated=self.negotiated, epoch=new_epoch(), notices=self.notices)
        sink = self.sink(self.conn) if self.sink else self.conn
        self.publishers[sid] = SessionPublisher(sink, ledger)
        return NewSessionResponse(session_id=sid)


def session_updates(wire: Wire) -> list[dict[str, Any]]:
    return [f for f in wire.frames if f.get("method") == "session/update"]


def play(agent: GlueAgent, meta: dict[str, Any] | None, *script: Step) -> tuple[Wire, str, PromptResponse]:
    async def go() -> tuple[Wire, str, PromptResponse]:
        wire = Wire(agent)
        sid = await wire.open(meta)
        return wire, sid, await wire.prompt(sid, *script)

    result: tuple[Wire, str, PromptResponse] = run(go())
    return result


@pytest.mark.parametrize("meta", [None, AIR], ids=["notices", "air+notices"])
def test_a_notices_client_receives_the_exact_notice_frame(meta: dict[str, Any] | None) -> None:
    agent = NoticesAgent(notices=True)
    wire, sid, response = play(agent, meta, *refused_then_answered())
    notice, answer = session_updates(wire)
    assert notice == {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": sid,
            "update": {"sessionUpdate": "notice", "severity": "warning", "title": SUMMARY, "description": EXPLANATION},
        },
    }
    assert answer["params"]["update"] == {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": ANSWER},
    }
    # the notice is neither a record nor a failed send, and the turn ends normally
    assert response.stop_reason == "end_turn" and response.field_meta is None
    assert agent.publishers[sid].failed_sends == 0
    # the SDK client's handler only got the update its schema knows; the notice reached the wire
    assert [type(u) for _, u in wire.client.updates] == [AgentMessageChunk]


def test_a_notice_without_explanation_has_no_description() -> None:
    wire, _, _ = play(NoticesAgent(notices=True), None, *refused_then_answered(None))
    (notice, _) = session_updates(wire)
    assert notice["params"]["update"] == {"sessionUpdate": "notice", "severity": "warning", "title": SUMMARY}


def test_other_clients_are_unaffected() -> None:
    # AIR without notices: the typed record on a session_info_update, through the SDK's model
    air = NoticesAgent(notices=False)
    wire, _, response = play(air, AIR, *refused_then_answered())
    info, answer = session_updates(wire)
    record = read_record(info["params"]["update"]["_meta"])
    assert record is not None
    assert (record.category.value, record.severity.value, record.title, record.details) == (
        "unknown",
        "warning",
        f"{SUMMARY}\n\n{EXPLANATION}",
        None,
    )
    assert answer["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    assert [type(u) for _, u in wire.client.updates] == [SessionInfoUpdate, AgentMessageChunk]
    assert response.stop_reason == "end_turn"
    # legacy: the reference's transcript text, then the answer; nothing typed, no notice
    legacy = NoticesAgent(notices=False)
    wire, _, response = play(legacy, None, *refused_then_answered())
    texts = [f["params"]["update"]["content"]["text"] for f in session_updates(wire)]
    assert texts == [f"**Model fallback:** {SUMMARY}\n\n{EXPLANATION}", ANSWER]
    assert "notice" not in json.dumps(wire.frames) and "jetbrains" not in json.dumps(wire.frames)
    assert [type(u) for _, u in wire.client.updates] == [AgentMessageChunk, AgentMessageChunk]


def test_a_notice_is_masked_like_every_other_text() -> None:
    leaky = f"Declined; the request carried {API_KEY} in its body."
    wire, _, _ = play(NoticesAgent(notices=True), None, *refused_then_answered(leaky))
    (notice, _) = session_updates(wire)
    description = notice["params"]["update"]["description"]
    assert API_KEY not in json.dumps(wire.frames)
    assert description.startswith("Declined; the request carried ") and description.endswith(" in its body.")


def test_a_connection_without_a_raw_sender_fails_the_send_and_commits_nothing() -> None:
    class ModelsOnly:
        """A sink that can only send SDK models (no ``send_notification``, no ``_conn``)."""

        def __init__(self, conn: Any) -> None:
            self.inner = conn

        async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
            await self.inner.session_update(session_id, update, **kw)

    agent = NoticesAgent(notices=True, sink=ModelsOnly)
    wire, sid, response = play(agent, None, *refused_then_answered())
    assert [f["params"]["update"]["sessionUpdate"] for f in session_updates(wire)] == ["agent_message_chunk"]
    assert agent.publishers[sid].failed_sends == 1
    assert response.stop_reason == "end_turn"


GOOD = {"sessionUpdate": "notice", "severity": "info", "title": "t"}


@pytest.mark.parametrize(
    "bad",
    [
        {**GOOD, "severity": "fatal"},
        {**GOOD, "severity": "WARNING"},
        {**GOOD, "title": 3},
        {k: v for k, v in GOOD.items() if k != "title"},
        {**GOOD, "description": ["x"]},
        {**GOOD, "sessionUpdate": "notices"},
        {**GOOD, "details": "not a notice field"},
        {**GOOD, "_meta": "not an object"},
    ],
)
def test_the_notice_model_is_strict(bad: dict[str, Any]) -> None:
    with pytest.raises(pydantic.ValidationError):
        notice_update(bad)


def test_the_notice_model_round_trips_the_wire_shape() -> None:
    full = {**GOOD, "severity": "error", "description": "d", "_meta": {"vendor": [1, None]}}
    assert notice_update(full).to_wire() == full
    assert notice_update(GOOD).to_wire() == GOOD
    assert isinstance(notice_update(GOOD), AcpNotice)


def test_every_other_update_keeps_the_sdks_validation() -> None:
    # the SDK's schema has no notice (why the publisher sends it raw) ...
    with pytest.raises(pydantic.ValidationError):
        acp_update(GOOD)
    # ... and still rejects a malformed update of a kind it knows
    with pytest.raises(pydantic.ValidationError):
        acp_update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text"}})


class FirstNoticeCorrupted:
    """A ledger stand-in: the real ledger, except that the first notice it plans comes out with an
    invalid severity (the ledger itself never plans one; this checks the publisher's own check)."""

    def __init__(self, ledger: SessionLedger) -> None:
        self._ledger = ledger
        self.corrupted = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ledger, name)

    def next_outbound(self) -> Any:
        out = self._ledger.next_outbound()
        if self.corrupted == 0 and isinstance(out, SessionUpdateOut) and out.update["sessionUpdate"] == "notice":
            self.corrupted += 1
            return replace(out, update={**out.update, "severity": "loud"})
        return out


def test_an_invalid_notice_fails_its_send_and_the_next_one_goes_out() -> None:
    """A notice the publisher cannot check is not sent (and not committed); the session goes on."""

    class Planted(NoticesAgent):
        async def new_session(self, cwd: str, **kw: Any) -> NewSessionResponse:
            response = await super().new_session(cwd, **kw)
            pub = self.publishers[response.session_id]
            self.publishers[response.session_id] = SessionPublisher(self.conn, FirstNoticeCorrupted(pub.ledger))  # type: ignore[arg-type]
            return response

    agent = Planted(notices=True)
    wire, sid, response = play(agent, None, fallback(), *refused_then_answered())
    updates = [f["params"]["update"] for f in session_updates(wire)]
    assert [(u["sessionUpdate"], u.get("severity")) for u in updates] == [
        ("notice", "warning"),
        ("agent_message_chunk", None),
    ]
    assert agent.publishers[sid].failed_sends == 1
    assert response.stop_reason == "end_turn"
