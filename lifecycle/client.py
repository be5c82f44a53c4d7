"""The receiving side's rules, as a small class a client (or a test) can use (spec: "Identity,
revisions, and history", "Actions").

* The first record for an id creates one transcript entry at the current stream position.
* The same id with a higher revision updates that entry in place without moving it.
* The same or a lower revision is ignored.
* Different ids are never merged, whatever their title or category.
* Unknown and duplicate actions are filtered; actions are never inferred from category.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from .wire import AIR_VERSION, Action, SessionFailure, air_of

__all__ = ["ClientProjection", "Entry"]


@dataclass(slots=True)
class Entry:
    """One transcript entry: a text chunk (``kind`` ``user``/``agent``) or a typed record."""

    kind: str
    text: str = ""
    record: SessionFailure | None = None
    carrier: str | None = None


@dataclass
class ClientProjection:
    """What a capable client shows, built from every message it actually received.

    Args:
        supported_actions: the actions this client can execute; others are filtered out.
    """

    supported_actions: frozenset[Action] = frozenset(Action)
    entries: list[Entry] = field(default_factory=list)
    ignored: int = 0
    malformed: int = 0
    received: dict[str, list[int]] = field(default_factory=dict)
    _index: dict[str, int] = field(default_factory=dict, repr=False)

    # -------------------------------------------------------------- views

    @property
    def records(self) -> list[SessionFailure]:
        """The current version of every record, in transcript order."""
        return [e.record for e in self.entries if e.record is not None]

    def record(self, incident_id: str) -> SessionFailure | None:
        i = self._index.get(incident_id)
        return None if i is None else self.entries[i].record

    # -------------------------------------------------------------- input

    def receive_all(self, messages: Iterable[Mapping[str, Any]]) -> None:
        for m in messages:
            self.receive(m)

    def receive(self, message: Mapping[str, Any]) -> None:
        """Apply one JSON-RPC message the agent sent (notification or prompt response)."""
        if message.get("method") == "session/update":
            params = message.get("params")
            update = params.get("update") if isinstance(params, Mapping) else None
            if isinstance(update, Mapping):
                self.receive_update(update)
            return
        result = message.get("result")
        if isinstance(result, Mapping):
            self.receive_meta(result.get("_meta"), carrier="prompt_response")

    def receive_update(self, update: Mapping[str, Any]) -> None:
        kind = update.get("sessionUpdate")
        if kind in ("agent_message_chunk", "user_message_chunk"):
            content = update.get("content")
            text = content.get("text") if isinstance(content, Mapping) else None
            if isinstance(text, str):
                self.entries.append(Entry(kind="agent" if kind == "agent_message_chunk" else "user", text=text))
            return
        if kind == "session_info_update":
            self.receive_meta(update.get("_meta"), carrier="session_info_update")

    def receive_meta(self, meta: object, *, carrier: str) -> None:
        """Apply the record a carrier's ``_meta`` holds, if any."""
        raw = _raw_record(meta)
        if raw is None:
            return
        record = self._parse(raw)
        if record is None:
            self.malformed += 1
            return
        self.received.setdefault(record.id, []).append(record.revision)
        at = self._index.get(record.id)
        if at is None:
            self._index[record.id] = len(self.entries)
            self.entries.append(Entry(kind="record", record=record, carrier=carrier))
            return
        current = self.entries[at].record
        assert current is not None
        if record.revision <= current.revision:
            self.ignored += 1
            return
        self.entries[at] = Entry(kind="record", record=record, carrier=carrier)

    def _parse(self, raw: Mapping[str, Any]) -> SessionFailure | None:
        data = dict(raw)
        actions = data.get("actions")
        if isinstance(actions, list):
            seen: list[str] = []
            for a in actions:
                if isinstance(a, str) and a not in seen and a in {x.value for x in self.supported_actions}:
                    seen.append(a)
            data["actions"] = seen
        try:
            return SessionFailure.model_validate(data)
        except ValidationError:
            return None


def _raw_record(meta: object) -> Mapping[str, Any] | None:
    air = air_of(meta)
    if air is None or "sessionFailure" not in air:
        return None
    rec = air.get("sessionFailure")
    version = air.get("version")
    if not isinstance(rec, Mapping) or type(version) is not int or version < AIR_VERSION:
        return {}  # present but unusable: counted as malformed
    return rec
