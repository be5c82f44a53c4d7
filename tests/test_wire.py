"""Spec: "Wire record" -- the record, its place in ``_meta``, and its schema."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT
from pydantic import ValidationError

from lifecycle.wire import (
    Action,
    Category,
    MalformedRecordError,
    SessionFailure,
    Severity,
    air_of,
    attach_record,
    read_record,
    record_json_schema,
    with_air,
)

REC = SessionFailure(
    id="prompt-uuid:error",
    revision=1,
    category=Category.LIMIT,
    severity=Severity.ERROR,
    title="You've hit your individual spend limit · run /usage-credits to ask your admin for a higher limit",
    actions=(),
)

#: The spec's required fields, in its table's order (docs/spec/session-failure.md, "Wire record").
REQUIRED = ["id", "revision", "category", "severity", "title", "actions"]


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
    assert schema["required"] == ["id", "revision", "category", "severity", "title", "actions"]
    assert schema.get("additionalProperties") is False


def _spec_required_fields() -> list[str]:
    """The fields the spec's "Wire record" table marks ``yes`` under ``Required``, in its order."""
    lines = (ROOT / "docs" / "spec" / "session-failure.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.replace(" ", "").startswith("|Field|Required|"))
    rows: list[str] = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[1] == "yes":
            rows.append(cells[0].strip("`"))
        else:
            assert cells[1] == "no", line
    return rows


def test_the_schema_requires_exactly_what_the_spec_table_requires() -> None:
    # The spec's table, read literally, and the schema's required list are the same list.
    assert _spec_required_fields() == ["id", "revision", "category", "severity", "title", "actions"]
    assert record_json_schema()["required"] == _spec_required_fields()
    out = subprocess.run([sys.executable, "-m", "lifecycle", "schema"], check=True, capture_output=True, text=True)
    assert json.loads(out.stdout)["required"] == ["id", "revision", "category", "severity", "title", "actions"]


@pytest.mark.parametrize("field", REQUIRED)
def test_a_record_without_a_required_field_is_refused(field: str) -> None:
    data = {k: v for k, v in REC.to_wire().items() if k != field}
    with pytest.raises(ValidationError):
        SessionFailure.model_validate(data)
    with pytest.raises(MalformedRecordError) as info:
        read_record({"jetbrains": {"air": {"version": 1, "sessionFailure": data}}})
    assert str(info.value) == "invalid sessionFailure record: 1 error(s)"


def test_a_record_without_actions_is_refused_and_an_empty_list_is_not() -> None:
    no_actions = {"id": "t1:error", "revision": 1, "category": "limit", "severity": "error", "title": "x"}
    with pytest.raises(MalformedRecordError, match=r"^invalid sessionFailure record: 1 error\(s\)$"):
        read_record({"jetbrains": {"air": {"version": 1, "sessionFailure": no_actions}}})
    rec = read_record({"jetbrains": {"air": {"version": 1, "sessionFailure": {**no_actions, "actions": []}}}})
    assert rec == SessionFailure(
        id="t1:error", revision=1, category=Category.LIMIT, severity=Severity.ERROR, title="x", actions=()
    )
    with pytest.raises(ValidationError):
        SessionFailure(id="t1:error", revision=1, category=Category.LIMIT, severity=Severity.ERROR, title="x")  # type: ignore[call-arg]


def test_lifecycle_schema_command_prints_it() -> None:
    out = subprocess.run([sys.executable, "-m", "lifecycle", "schema"], check=True, capture_output=True, text=True)
    assert json.loads(out.stdout)["title"] == "sessionFailure"


# ---------------------------------------------------------------- exact values


def test_details_ride_the_wire_between_title_and_actions_when_present() -> None:
    rec = REC.model_copy(update={"details": "The complete text.", "actions": (Action.RETRY,)})
    wire = rec.to_wire()
    assert wire == {
        "id": "prompt-uuid:error",
        "revision": 1,
        "category": "limit",
        "severity": "error",
        "title": REC.title,
        "details": "The complete text.",
        "actions": ["retry"],
    }
    assert list(wire) == ["id", "revision", "category", "severity", "title", "details", "actions"]
    assert list(REC.to_wire()) == ["id", "revision", "category", "severity", "title", "actions"]
    assert read_record(attach_record(None, rec)) == rec
    # An empty string is still a value: present.
    assert REC.model_copy(update={"details": ""}).to_wire()["details"] == ""


def test_every_enum_value_as_the_spec_spells_it() -> None:
    assert [c.value for c in Category] == ["connection", "access", "limit", "request", "service", "unknown"]
    assert [s.value for s in Severity] == ["warning", "error"]
    assert [a.value for a in Action] == ["retry", "login", "new_session"]


def test_attach_record_places_it_next_to_version_1_exactly() -> None:
    assert attach_record(None, REC) == {"jetbrains": {"air": {"version": 1, "sessionFailure": REC.to_wire()}}}
    assert attach_record({}, REC) == {"jetbrains": {"air": {"version": 1, "sessionFailure": REC.to_wire()}}}


@pytest.mark.parametrize(
    "meta",
    [
        {"jetbrains": 5},
        {"jetbrains": {"air": "x"}},
        {"jetbrains": {"air": None}},
        {"jetbrains": ["air"]},
    ],
)
def test_a_non_object_on_the_path_is_replaced(meta: dict[str, object]) -> None:
    out = attach_record(meta, REC)
    assert out["jetbrains"]["air"] == {"version": 1, "sessionFailure": REC.to_wire()}


def test_with_air_keeps_every_other_key_and_copies_deeply() -> None:
    meta = {"quota": {"used": [1]}, "jetbrains": {"air": {"capabilities": ["x"]}}}
    out = with_air(meta, capabilities=["sessionFailure"])
    assert out == {"quota": {"used": [1]}, "jetbrains": {"air": {"capabilities": ["sessionFailure"], "version": 1}}}
    out["quota"]["used"].append(2)
    assert meta == {"quota": {"used": [1]}, "jetbrains": {"air": {"capabilities": ["x"]}}}


@pytest.mark.parametrize(
    "meta",
    [None, 5, "jetbrains", [], {}, {"jetbrains": None}, {"jetbrains": []}, {"jetbrains": {}},
     {"jetbrains": {"air": 1}}, {"jetbrains": {"air": []}}, {"air": {"version": 1}}],
)
def test_air_of_is_none_unless_every_step_is_an_object(meta: object) -> None:
    assert air_of(meta) is None


def test_air_of_returns_the_air_object_itself() -> None:
    air = {"version": 1}
    assert air_of({"jetbrains": {"air": air}}) is air


@pytest.mark.parametrize(
    "meta",
    [
        {"jetbrains": {"air": {"version": 1}}},
        {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}},
        {"jetbrains": {"air": {}}},
        {"jetbrains": {"other": {"sessionFailure": {"id": "x"}}}},
        {"sessionFailure": {"id": "x"}},
    ],
)
def test_read_record_is_none_without_a_record(meta: object) -> None:
    assert read_record(meta) is None


@pytest.mark.parametrize(("version", "shown"), [(0, "0"), (None, "None"), ("1", "'1'"), (1.0, "1.0"), (-3, "-3")])
def test_a_record_not_next_to_version_1_is_malformed(version: object, shown: str) -> None:
    with pytest.raises(MalformedRecordError) as info:
        read_record({"jetbrains": {"air": {"version": version, "sessionFailure": REC.to_wire()}}})
    assert str(info.value) == f"sessionFailure is not next to version 1 (got {shown})"
    with pytest.raises(MalformedRecordError, match=r"\(got None\)"):
        read_record({"jetbrains": {"air": {"sessionFailure": REC.to_wire()}}})


def test_a_later_version_still_reads_the_record() -> None:
    assert read_record({"jetbrains": {"air": {"version": 2, "sessionFailure": REC.to_wire()}}}) == REC


def test_an_invalid_record_says_how_many_errors() -> None:
    bad = {**REC.to_wire(), "revision": 0, "severity": "info"}
    with pytest.raises(MalformedRecordError) as info:
        read_record({"jetbrains": {"air": {"version": 1, "sessionFailure": bad}}})
    assert str(info.value) == "invalid sessionFailure record: 2 error(s)"
    assert isinstance(info.value.__cause__, ValidationError)
    with pytest.raises(MalformedRecordError, match="invalid sessionFailure record: 1 error"):
        read_record({"jetbrains": {"air": {"version": 1, "sessionFailure": None}}})


def test_the_schemas_own_keys() -> None:
    schema = record_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "sessionFailure"
    assert schema["description"] == "The record at _meta.jetbrains.air.sessionFailure (next to version: 1)."
    assert schema["required"] == ["id", "revision", "category", "severity", "title", "actions"]
    assert schema["properties"]["revision"]["exclusiveMinimum"] == 0
    assert schema["properties"]["id"]["minLength"] == 1
