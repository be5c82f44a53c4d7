"""Embedding the ledger in an existing ACP agent (the ``# +`` lines); ``main()`` runs it against a client."""

import asyncio
import uuid
from typing import Any

import acp
from acp.agent.connection import AgentSideConnection
from acp.client.connection import ClientSideConnection
from acp.schema import AgentCapabilities, ClientCapabilities, InitializeResponse, NewSessionResponse

from lifecycle import ClientProjection, PromptStarted, SessionLedger
from lifecycle.acp import SessionPublisher, advertise, negotiate_client, new_epoch
from lifecycle.agent.sdk import memory_transport_pair
from lifecycle.claude import from_stream_json
from lifecycle.wire import with_air

AIR = with_air(None, capabilities=["sessionFailure"])  # the client declares the extension (spec)
LIMIT = "You've hit your 5-hour limit · resets 5pm (UTC)"
STREAM: list[dict[str, Any]] = [  # what Claude Code printed for one prompt, standing in for a live SDK stream
    {"type": "assistant", "message": {"model": "<synthetic>", "content": LIMIT}, "error": "rate_limit"},
    {"type": "result", "subtype": "success", "is_error": True, "result": LIMIT},
]


class MyAgent:
    def on_connect(self, conn: AgentSideConnection) -> None:
        self.conn, self.sessions = conn, dict[str, SessionPublisher]()

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, **kw: Any) -> Any:
        self.negotiated = negotiate_client(client_capabilities)  # +
        caps = advertise(AgentCapabilities(load_session=True), self.negotiated)  # +
        return InitializeResponse(protocol_version=acp.PROTOCOL_VERSION, agent_capabilities=caps)

    async def new_session(self, cwd: str, **kw: Any) -> NewSessionResponse:
        ledger = SessionLedger(str(uuid.uuid4()), negotiated=self.negotiated, epoch=new_epoch())  # +
        self.sessions[ledger.session_id] = SessionPublisher(self.conn, ledger)  # +
        return NewSessionResponse(session_id=ledger.session_id)

    async def prompt(self, session_id: str, prompt: list[Any], **kw: Any) -> Any:
        pub, turn_id = self.sessions[session_id], str(uuid.uuid4())
        await pub.feed(PromptStarted(turn_id=turn_id))  # +
        for event in (e for e in map(from_stream_json, STREAM) if e):  # + the agent's loop over its stream
            await pub.feed(event)  # +
        return await pub.outcome(turn_id)  # + the ledger settles the prompt


async def main() -> ClientProjection:
    frames: list[Any] = []
    agent_end, client_end = memory_transport_pair()  # the ACP SDK keeps it private
    AgentSideConnection(MyAgent(), agent_end)  # type: ignore[arg-type]  # a partial acp.Agent
    client = ClientSideConnection(lambda _: object(), client_end, observers=[frames.append])  # type: ignore[arg-type,return-value]
    await client.initialize(protocol_version=1, client_capabilities=ClientCapabilities(field_meta=AIR))
    session = await client.new_session(cwd="/tmp")
    await client.prompt(session_id=session.session_id, prompt=[acp.text_block("hi")])
    (seen := ClientProjection()).receive_all(f.message for f in frames if f.direction == "incoming")
    return seen


if __name__ == "__main__":
    print([r.to_wire() for r in asyncio.run(main()).records])
