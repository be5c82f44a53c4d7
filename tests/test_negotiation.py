"""Spec: "Capability negotiation" -- opt-in only for a finite integer version >= 1 and the capability."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lifecycle.negotiation import ClientState, agent_capabilities_meta, negotiate, notices_capable, version_is_supported


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


# ------------------------------------------------------------------ ClientState: one value of what the client declared


def test_a_client_that_declared_nothing_gets_the_legacy_everywhere() -> None:
    for nothing in (None, {}, [], "caps", 7, _GetOnly()):
        assert ClientState.parse(nothing) == ClientState()
    assert ClientState() == ClientState(
        negotiated=False, air=False, notices=False, form=False, compaction=False,
        terminal_auth=False, terminal_auth_meta=False, terminal_output=False, subagents=False,
    )  # fmt: skip
    assert ClientState().suggestions is False


def test_the_acp_registrys_initialize_declares_terminal_logins_and_terminal_output() -> None:
    # The capabilities the ACP registry's CI sends with ``initialize`` (its validator), literally.
    registry = {
        "terminal": True,
        "fs": {"readTextFile": True, "writeTextFile": True},
        "_meta": {"terminal_output": True, "terminal-auth": True},
    }
    assert ClientState.parse(registry) == ClientState(terminal_auth=True, terminal_auth_meta=True, terminal_output=True)


@pytest.mark.parametrize(
    ("capabilities", "declared"),
    [
        (caps(1), {"negotiated": True, "air": True}),
        ({"_meta": {"jetbrains": {"air": {}}}}, {"air": True}),  # AIR without the extension: suggestions only
        ({"_meta": {"jetbrains": {"air": True}}}, {}),
        ({"session": {"notices": {}}}, {"notices": True}),
        ({"session": {"compaction": {}}}, {"compaction": True}),
        ({"session": {"compaction": True}}, {}),
        ({"session": {"compaction": {}, "notices": {}}}, {"compaction": True, "notices": True}),
        ({"elicitation": {"form": {}}}, {"form": True}),
        ({"elicitation": {"form": True}}, {"form": True}),
        ({"elicitation": {"form": None}}, {}),
        ({"elicitation": {"form": "yes"}}, {}),
        ({"elicitation": True}, {}),
        ({"auth": {"terminal": True}}, {"terminal_auth": True}),
        ({"auth": {"terminal": "true"}}, {}),
        ({"auth": True}, {}),
        ({"_meta": {"terminal-auth": True}}, {"terminal_auth": True, "terminal_auth_meta": True}),
        ({"_meta": {"terminal-auth": 1}}, {}),
        ({"_meta": {"terminal_output": True}}, {"terminal_output": True}),
        ({"_meta": {"terminal_output": "true"}}, {}),
        ({"_meta": "not an object", "session": None, "auth": None, "elicitation": None}, {}),
        # ACP's ``SubagentCapabilities`` (the reference adapter 0.101.0's bundled ACP schema,
        # ``ClientCapabilities.subagents``): ``{}`` declares it, omitted or ``null`` does not.
        ({"subagents": {}}, {"subagents": True}),
        ({"subagents": {"_meta": {"x": 1}}}, {"subagents": True}),
        ({"subagents": None}, {}),
        ({"subagents": True}, {}),
        ({"subagents": []}, {}),
        ({"subagents": "yes"}, {}),
        ({"session": {"subagents": {}}}, {}),
    ],
)
def test_each_flag_is_read_from_its_own_place(capabilities: dict[str, Any], declared: dict[str, bool]) -> None:
    state = ClientState.parse(capabilities)
    assert state == ClientState(**declared)
    assert state.suggestions is declared.get("air", False)  # the reference's rule: an AIR client


def test_a_model_is_read_through_its_dump_by_alias() -> None:
    class Model:  # an ACP SDK model: ``_meta`` is ``field_meta``, dumped under its alias

        def model_dump(self, *, by_alias: bool, exclude_none: bool) -> dict[str, Any]:
            assert by_alias and exclude_none
            return {"_meta": {"terminal_output": True}, "session": {"notices": {}}}

    assert ClientState.parse(Model()) == ClientState(notices=True, terminal_output=True)

    class Odd:
        def model_dump(self, **kwargs: Any) -> object:
            return ["not", "a", "mapping"]

    assert ClientState.parse(Odd()) == ClientState()


def test_the_acp_sdks_own_model_reads_as_its_json_less_what_it_drops() -> None:
    from acp.schema import ClientCapabilities

    kept = {**caps(1), "elicitation": {"form": {}}, "auth": {"terminal": True}}
    assert ClientState.parse(ClientCapabilities.model_validate(kept)) == ClientState.parse(kept)
    assert ClientState.parse(kept) == ClientState(negotiated=True, air=True, form=True, terminal_auth=True)
    # The SDK 0.12.1's model drops the session keys it does not know: why the agent's transport
    # hands ``initialize`` the raw JSON (``ClaudeAcpAgent.saw_client_capabilities``).
    dropped = {"session": {"notices": {}, "compaction": {}}}
    assert ClientState.parse(dropped) == ClientState(notices=True, compaction=True)
    assert ClientState.parse(ClientCapabilities.model_validate(dropped)) == ClientState()


def test_a_hostile_mapping_declares_nothing_and_never_raises() -> None:
    class Hostile(Mapping[str, Any]):
        def __getitem__(self, key: str) -> Any:
            raise RuntimeError("no")

        def __iter__(self) -> Iterator[str]:
            raise RuntimeError("no")

        def __len__(self) -> int:
            return 1

        def get(self, key: str, default: Any = None) -> Any:
            raise RuntimeError("no")

    assert ClientState.parse(Hostile()) == ClientState()
    assert ClientState.parse({"_meta": Hostile()}) == ClientState()


# ------------------------------------------------------------------ what else a client declares


AIR_BACKGROUND = {"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["backgroundSubagents"]}}}}


@pytest.mark.parametrize(
    ("caps", "expected"),
    [
        # the reference (dist/acp-agent.js): `request.clientCapabilities?.auth?._meta?.gateway === true`
        ({"auth": {"_meta": {"gateway": True}}}, True),
        ({"auth": {"_meta": {"gateway": "true"}}}, False),
        ({"auth": {"_meta": {"gateway": 1}}}, False),
        ({"auth": {"gateway": True}}, False),
        ({"_meta": {"gateway": True}}, False),
        ({"auth": {"_meta": True}}, False),
        ({}, False),
    ],
)
def test_the_gateway_logins_are_offered_only_for_auth_meta_gateway_true(caps: Any, expected: bool) -> None:
    assert ClientState.parse(caps).gateway_auth is expected


def test_plan_subagents_and_background_subagents_are_read_where_the_schema_puts_them() -> None:
    # ACP schema 1.20: `plan` and `subagents` are clientCapabilities fields; AIR's
    # `backgroundSubagents` is a capability in `_meta.jetbrains.air.capabilities` (the reference's
    # AIR_BACKGROUND_SUBAGENTS_CAPABILITY).
    state = ClientState.parse({"plan": {}, "subagents": {}, **AIR_BACKGROUND})
    assert (state.plan, state.subagents, state.background_subagents) == (True, True, True)
    plain = ClientState.parse({"PLAN": {}, "Subagents": {}, "_meta": {"backgroundSubagents": True}})
    assert (plain.plan, plain.subagents, plain.background_subagents) == (False, False, False)
