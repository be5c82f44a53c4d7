"""ACP standard ``notice`` updates through the glue, over a real in-memory ACP connection.

The ACP SDK (0.12.1) predates the ``notice`` update, so :class:`lifecycle.acp.SessionPublisher`
checks a notice with its own strict model and sends it as a raw ``session/update`` below the SDK;
every other update still goes through the SDK's models. The expected frame is the one the
reference adapter sent a client that declared ``session.notices``
(``docs/parity/transcripts/refusal-fallback-ok-notices.frames.jsonl``, its refusal-fallback notice),
the legacy text is the reference's (``refusal-fallback-ok-legacy``), written out here.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from typing import Any

import pydantic
import pytest
from acp.schema import AgentMessageChunk, NewSessionResponse, PromptResponse, SessionInfoUpdate
from acp_harness import AIR, GlueAgent, Step, Wire, run

from lifecycle import Assistant, Result, SessionLedger, read_record
from lifecycle.acp import AcpNotice, SessionPublisher, acp_update, new_epoch, notice_update
from lifecycle.events import ModelRefusalFallback, SessionUpdateOut

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
