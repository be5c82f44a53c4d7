"""The wire record of the ``sessionFailure`` extension (spec: "Wire record", "Actions").

One record describes one revision of one logical incident. It always travels at
``_meta.jetbrains.air.sessionFailure`` next to ``version: 1``, on either carrier (a
``PromptResponse`` or a ``session_info_update``); the schema is identical on both.

The ``_meta.jetbrains.air`` object (the extension's namespace, also where the capability is
negotiated) is read by :func:`air_of` and written by :func:`with_air`, and nowhere else; both live
in :mod:`lifecycle.air` (no pydantic: an agent reads what a client declared before it loads the
record's model) and are re-exported here.

There are deliberately no ``phase``, ``retryable``, ``turnId`` or retry-counter fields: the model
forbids unknown keys, so such a field can never be added by accident.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError, field_validator

from .air import AIR_VERSION, air_of, with_air
from .errors import MalformedRecordError

__all__ = [
    "AIR_VERSION",
    "Action",
    "Category",
    "MalformedRecordError",
    "SessionFailure",
    "Severity",
    "air_of",
    "attach_record",
    "read_record",
    "record_json_schema",
    "with_air",
]


class Category(StrEnum):
    """Broad visual group (spec: "Categories"). Drives iconography only, never behaviour."""

    CONNECTION = "connection"
    ACCESS = "access"
    LIMIT = "limit"
    REQUEST = "request"
    SERVICE = "service"
    UNKNOWN = "unknown"


class Severity(StrEnum):
    """``warning``: may still succeed, does not end a turn; ``error``: cannot continue (spec: "Severity")."""

    WARNING = "warning"
    ERROR = "error"


class Action(StrEnum):
    """Recovery actions version 1 defines (spec: "Actions")."""

    RETRY = "retry"
    LOGIN = "login"
    NEW_SESSION = "new_session"


class SessionFailure(BaseModel):
    """One revision of one incident, exactly the spec's fields.

    ``revision`` is a strict positive ``int`` (``True`` is rejected), ``id`` a non-empty string,
    ``actions`` an ordered tuple without duplicates. Every field but ``details`` is required, as in
    the spec's table (``actions`` too: a record without it is malformed, and an empty list is how
    a record says it recommends nothing). ``details`` is omitted on the wire when absent.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False, defer_build=True)

    id: StrictStr = Field(min_length=1)
    revision: StrictInt = Field(gt=0)
    category: Category
    severity: Severity
    title: StrictStr
    details: StrictStr | None = None
    actions: tuple[Action, ...]

    @field_validator("actions")
    @classmethod
    def _no_duplicate_actions(cls, actions: tuple[Action, ...]) -> tuple[Action, ...]:
        # The adapter supplies the ordering; duplicates would only be filtered by the client.
        if len(set(actions)) != len(actions):
            raise ValueError("actions must not repeat")
        return actions

    def to_wire(self) -> dict[str, Any]:
        """The JSON object placed under ``sessionFailure`` (``details`` omitted when absent)."""
        out: dict[str, Any] = {
            "id": self.id,
            "revision": self.revision,
            "category": self.category.value,
            "severity": self.severity.value,
            "title": self.title,
        }
        if self.details is not None:
            out["details"] = self.details
        out["actions"] = [a.value for a in self.actions]
        return out


def attach_record(meta: Mapping[str, Any] | None, record: SessionFailure) -> dict[str, Any]:
    """Return a copy of ``meta`` with ``record`` at ``jetbrains.air.sessionFailure`` (see :func:`with_air`)."""
    return with_air(meta, sessionFailure=record.to_wire())


def read_record(meta: object) -> SessionFailure | None:
    """Read the record a carrier's ``_meta`` holds, for a client.

    Returns ``None`` when there is no record (or ``_meta`` is not an object). Raises
    :class:`~lifecycle.errors.MalformedRecordError` when a record is present but invalid (a
    required field missing, ``actions`` included), or does not sit next to ``version: 1``.
    """
    air = air_of(meta)
    if air is None or "sessionFailure" not in air:
        return None
    version = air.get("version")
    if type(version) is not int or version < AIR_VERSION:
        raise MalformedRecordError(f"sessionFailure is not next to version 1 (got {version!r})")
    try:
        return SessionFailure.model_validate(air["sessionFailure"])
    except ValidationError as exc:
        raise MalformedRecordError(f"invalid sessionFailure record: {exc.error_count()} error(s)") from exc


def record_json_schema() -> dict[str, Any]:
    """JSON Schema of the record (``lifecycle schema``): ``required`` is the spec's required fields,
    ``id``, ``revision``, ``category``, ``severity``, ``title``, ``actions``."""
    schema = SessionFailure.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "sessionFailure"
    schema["description"] = "The record at _meta.jetbrains.air.sessionFailure (next to version: 1)."
    return schema
