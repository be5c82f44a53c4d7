"""Spec: "Wire record" -- the record, its place in ``_meta``, and its schema."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from pydantic import ValidationError

from lifecycle.wire import (
    Action,
    Category,
    MalformedRecordError,
    SessionFailure,
    Severity,
    attach_record,
    read_record,
    record_json_schema,
)

REC = SessionFailure(
    id="prompt-uuid:error",
    revision=1,
    category=Category.LIMIT,
    severity=Severity.ERROR,
    title="You've hit your individual spend limit · run /usage-credits to ask your admin for a higher limit",
)


def test_the_spec_example_round_trips_exactly() -> None:
    wire = REC.to_wire()
    assert wire == {
        "id": "prompt-uuid:error",
        "revision": 1,
        "category": "limit",
        "severity": "error",
        "title": REC.title,
        "actions": [],
    }
    assert "details" not in wire  # omitted unless required
    assert SessionFailure.model_validate(wire) == REC


@pytest.mark.parametrize(
    "bad",
    [
        {"id": ""},
        {"id": 7},
        {"revision": 0},
        {"revision": -1},
        {"revision": True},
        {"revision": 1.0},
        {"revision": "1"},
        {"category": "quota"},
        {"severity": "info"},
        {"title": None},
        {"actions": ["retry", "retry"]},
        {"actions": ["reboot"]},
        {"retryable": True},
        {"phase": "retrying"},
        {"turnId": "t1"},
    ],
)
def test_only_the_spec_fields_with_their_types(bad: dict[str, object]) -> None:
    data = {**REC.to_wire(), **bad}
    with pytest.raises(ValidationError):
        SessionFailure.model_validate(data)


def test_records_are_immutable() -> None:
    with pytest.raises(ValidationError):
        REC.revision = 2  # type: ignore[misc]


def test_attach_merges_into_existing_meta_without_losing_other_namespaces() -> None:
    meta = {"quota": {"used": 3}, "jetbrains": {"other": 1, "air": {"futureKey": [1, None]}}, "zed.dev/x": True}
    out = attach_record(meta, REC)
    assert out["quota"] == {"used": 3} and out["zed.dev/x"] is True
    assert out["jetbrains"]["other"] == 1
    assert out["jetbrains"]["air"] == {"futureKey": [1, None], "version": 1, "sessionFailure": REC.to_wire()}
    assert meta["jetbrains"]["air"] == {"futureKey": [1, None]}  # the input is not mutated


def test_a_client_reads_the_record_back() -> None:
    assert read_record(attach_record(None, REC)) == REC
    assert read_record({"quota": 1}) is None
    assert read_record(None) is None
    with pytest.raises(MalformedRecordError):
        read_record({"jetbrains": {"air": {"version": 1, "sessionFailure": {"id": ""}}}})
    with pytest.raises(MalformedRecordError):
        read_record({"jetbrains": {"air": {"version": True, "sessionFailure": REC.to_wire()}}})


def test_actions_keep_the_adapters_order() -> None:
    rec = REC.model_copy(update={"actions": (Action.NEW_SESSION, Action.RETRY)})
    assert rec.to_wire()["actions"] == ["new_session", "retry"]


def test_json_schema_names_exactly_the_spec_fields() -> None:
    schema = record_json_schema()
    assert set(schema["properties"]) == {"id", "revision", "category", "severity", "title", "details", "actions"}
    assert set(schema["required"]) >= {"id", "revision", "category", "severity", "title"}
    assert schema.get("additionalProperties") is False


def test_lifecycle_schema_command_prints_it() -> None:
    out = subprocess.run([sys.executable, "-m", "lifecycle", "schema"], check=True, capture_output=True, text=True)
    assert json.loads(out.stdout)["title"] == "sessionFailure"
