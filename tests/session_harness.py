"""A tiny driver for one ledger in tests: feed events, collect what the client received."""

from __future__ import annotations

from typing import Any

from lifecycle import ClientProjection, SessionLedger
from lifecycle.events import Event, Outbound


class Observed:
    """Collects every transition and note the ledger reports."""

    def __init__(self) -> None:
        self.transitions: list[dict[str, Any]] = []
        self.notes: list[tuple[str, dict[str, Any]]] = []

    def transition(self, **fields: Any) -> None:
        self.transitions.append(fields)

    def note(self, what: str, **fields: Any) -> None:
        self.notes.append((what, fields))


class Session:
    """One ledger plus the client's view of everything that was actually delivered."""

    def __init__(self, negotiated: bool = True, session_id: str = "s1", epoch: str = "e1") -> None:
        self.observed = Observed()
        self.ledger = SessionLedger(session_id, negotiated=negotiated, epoch=epoch, observer=self.observed)
        self.client = ClientProjection()
        self.sent: list[Outbound] = []
        self.fail_next = 0

    def feed(self, *events: Event, runtime: int | None = None) -> list[Outbound]:
        out: list[Outbound] = []
        for ev in events:
            self.ledger.process(ev, self._deliver(out), runtime=runtime)
        return out

    def _deliver(self, out: list[Outbound]) -> Any:
        def deliver(msg: Outbound) -> None:
            if self.fail_next:
                self.fail_next -= 1
                raise ConnectionError("client gone")
            out.append(msg)
            self.sent.append(msg)
            self.client.receive(msg.to_jsonrpc())

        return deliver

    @property
    def records(self) -> list[Any]:
        return [m.record for m in self.sent if m.record is not None]

    @property
    def active_ids(self) -> list[str]:
        return [a.id for a in self.ledger.active]
