"""Spec: "Capability negotiation" -- opt-in only for a finite integer version >= 1 and the capability."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lifecycle.negotiation import agent_capabilities_meta, negotiate, notices_capable, version_is_supported


def caps(version: Any, capabilities: Any = ("sessionFailure",)) -> dict[str, Any]:
    c = list(capabilities) if isinstance(capabilities, tuple) else capabilities
    return {"_meta": {"jetbrains": {"air": {"version": version, "capabilities": c}}}}


@pytest.mark.parametrize("version", [1, 2, 1.0, 10**30])
def test_enabled_for_a_finite_integer_version_of_at_least_one(version: Any) -> None:
    assert negotiate(caps(version)) is True


@pytest.mark.parametrize(
    "version", [True, False, "1", 1.5, 0, -1, float("nan"), float("inf"), float("-inf"), None, [1], {"v": 1}]
)
def test_legacy_for_anything_else(version: Any) -> None:
    assert negotiate(caps(version)) is False


def test_1e400_from_json_is_infinite_and_does_not_count() -> None:
    parsed = json.loads('{"_meta":{"jetbrains":{"air":{"version":1e400,"capabilities":["sessionFailure"]}}}}')
    assert negotiate(parsed) is False


@pytest.mark.parametrize(
    "capabilities",
    [
        [],
        ["sessionfailure"],
        ["SessionFailure"],
        "sessionFailure",
        {"sessionFailure": True},
        None,
        [["sessionFailure"]],
    ],
)
def test_capabilities_must_be_an_array_containing_exactly_the_string(capabilities: Any) -> None:
    assert negotiate(caps(1, capabilities)) is False


def test_other_capabilities_beside_it_are_fine() -> None:
    assert negotiate(caps(1, ["other", "sessionFailure"])) is True


@pytest.mark.parametrize("value", [None, {}, [], "x", 1, {"_meta": None}, {"_meta": {"jetbrains": []}}])
def test_malformed_capabilities_mean_legacy(value: Any) -> None:
    assert negotiate(value) is False


class FakeModel:
    """An ACP SDK ``ClientCapabilities`` keeps ``_meta`` as ``field_meta``."""

    def __init__(self, meta: Any) -> None:
        self.field_meta = meta


def test_acp_models_are_read_through_field_meta() -> None:
    assert negotiate(FakeModel(caps(1)["_meta"])) is True
    assert negotiate(FakeModel(None)) is False


json_values = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=30,
)


@given(st.one_of(json_values, st.builds(caps, json_values, json_values)))
def test_negotiation_never_raises(value: Any) -> None:
    assert negotiate(value) in (True, False)


def test_the_agent_advertises_the_capability_only_when_enabled() -> None:
    assert agent_capabilities_meta(False) == {}
    assert agent_capabilities_meta(True) == {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}


# ---------------------------------------------------------------- exact outcomes of the malformed paths


@pytest.mark.parametrize(
    "value",
    [
        {"_meta": {}},
        {"_meta": {"jetbrains": {}}},
        {"_meta": {"jetbrains": {"air": None}}},
        {"_meta": {"jetbrains": {"air": ["sessionFailure"]}}},
        {"_meta": {"jetbrains": {"other": {"version": 1, "capabilities": ["sessionFailure"]}}}},
        {"_meta": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}},
        {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}},  # not under _meta
    ],
)
def test_without_the_air_object_it_is_legacy(value: Any) -> None:
    assert negotiate(value) is False


def test_a_missing_version_or_missing_capabilities_is_legacy() -> None:
    assert negotiate({"_meta": {"jetbrains": {"air": {"capabilities": ["sessionFailure"]}}}}) is False
    assert negotiate({"_meta": {"jetbrains": {"air": {"version": 1}}}}) is False
    assert negotiate(caps(1, ("sessionFailure",))) is True  # the tuple helper: a JSON array


class _Raising(Mapping[str, Any]):
    """A hostile mapping: every read raises."""

    def __getitem__(self, key: str) -> Any:
        raise RuntimeError("boom")

    def get(self, key: str, default: Any = None) -> Any:
        raise RuntimeError("boom")

    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("boom")

    def __len__(self) -> int:
        return 1


class _RaisingSequence(Sequence[str]):
    def __getitem__(self, i: Any) -> Any:
        raise RuntimeError("boom")

    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("boom")

    def __len__(self) -> int:
        return 1


@pytest.mark.parametrize(
    "value",
    [
        _Raising(),
        {"_meta": _Raising()},
        {"_meta": {"jetbrains": _Raising()}},
        {"_meta": {"jetbrains": {"air": _Raising()}}},
        {"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": _RaisingSequence()}}}},
        FakeModel(_Raising()),
    ],
)
def test_a_hostile_value_that_raises_while_read_is_legacy(value: Any) -> None:
    assert negotiate(value) is False


def test_a_model_without_field_meta_is_legacy() -> None:
    assert negotiate(object()) is False


@pytest.mark.parametrize(
    ("version", "supported"),
    [
        (1, True),
        (2, True),
        (1.0, True),
        (3.0, True),
        (0, False),
        (0.0, False),
        (0.5, False),
        (-1.0, False),
        (1.5, False),
        (True, False),
        (False, False),
        ("1", False),
        (None, False),
        (float("nan"), False),
        (float("inf"), False),
    ],
)
def test_version_is_supported_exactly(version: Any, supported: bool) -> None:
    assert version_is_supported(version) is supported


# ------------------------------------------------------------------ ACP session notices (not the spec's)
# The ACP Session Notices RFD: a client that declares ``clientCapabilities.session.notices`` (an
# object, possibly empty) gets ``{"sessionUpdate": "notice"}`` updates; anything else does not.


class _Extras:
    """An ACP SDK model as ``notices_capable`` sees it: unknown fields kept in ``model_extra``."""

    def __init__(self, model_extra: Any) -> None:
        self.model_extra = model_extra


class _RaisingExtras:
    @property
    def model_extra(self) -> Any:
        raise RuntimeError("boom")


@pytest.mark.parametrize(
    "capabilities",
    [
        {"session": {"notices": {}}},
        {"session": {"notices": {"levels": ["info"]}}, "fs": {"readTextFile": True}},
        {"session": {"other": 1, "notices": {}}},
        _Extras({"session": {"notices": {}}}),
        _Extras({"fs": {}, "session": {"notices": {"x": 1}}}),
    ],
)
def test_notices_are_declared_by_a_session_notices_object(capabilities: Any) -> None:
    assert notices_capable(capabilities) is True


@pytest.mark.parametrize(
    "capabilities",
    [
        {},
        None,
        "session",
        ["session"],
        {"session": None},
        {"session": {}},
        {"session": ["notices"]},
        {"session": "notices"},
        {"session": {"notices": True}},
        {"session": {"notices": 1}},
        {"session": {"notices": "yes"}},
        {"session": {"notices": ["info"]}},
        {"session": {"notices": None}},
        {"session": {"Notices": {}}},
        {"Session": {"notices": {}}},
        {"notices": {}},
        {"sessions": {"notices": {}}},
        {"session": {"NOTICES": {}}},
        {"SESSION": {"notices": {}}},
        _Extras(None),
        _Extras({}),
        _Extras([("session", {"notices": {}})]),
        _Extras({"session": {"notices": True}}),
        _Extras({"SESSION": {"notices": {}}}),
        _Extras({"session": {"NOTICES": {}}}),
        object(),
        _Raising(),
        {"session": _Raising()},
        _Extras(_Raising()),
        _Extras({"session": _Raising()}),
        _RaisingExtras(),
    ],
)
def test_anything_else_declares_no_notices_and_never_raises(capabilities: Any) -> None:
    assert notices_capable(capabilities) is False


class _GetOnly:
    """Not a Mapping, though it has ``get``: it declares nothing."""

    def get(self, key: str, default: Any = None) -> Any:
        return {"notices": {}, "session": {"notices": {}}}.get(key, default)


def test_only_a_mapping_is_read_for_the_session_and_its_notices() -> None:
    assert notices_capable({"session": _GetOnly()}) is False
    assert notices_capable(_Extras(_GetOnly())) is False
    assert notices_capable({"session": {"notices": {}}}) is True


def test_a_model_is_read_through_its_extras_not_its_attributes() -> None:
    """An attribute named ``session`` is not a declared capability; only the model's extras are."""

    class Attrs:
        session: Any = {"notices": {}}  # noqa: RUF012
        model_extra = None

    assert notices_capable(Attrs()) is False
    assert notices_capable(_Extras({"session": {"notices": {}}})) is True
