"""The provider routing's pure parts (issue 52.4, 52.6; lifecycle/agent/providers.py): the checks of
``providers/set`` and of a gateway login, the Claude Code environment of a route, ``providers/list``,
and the gateway logins offered to a client that declares them. Expected values are the reference
adapter 0.101.0's (dist/acp-agent.js ``unstable_setProvider``, ``createEnvForProvider``,
``defaultProviderConfig``, ``initialize``), written out."""

from __future__ import annotations

import json
from typing import Any

import pytest
from acp import RequestError

from lifecycle.agent.config import auth_methods
from lifecycle.agent.providers import Routing, check_route, gateway_route, route_env
from lifecycle.negotiation import ClientState

#: The variables the reference's ``createEnvForProvider`` resets for every route.
RESET = {
    "ANTHROPIC_BASE_URL": "", "ANTHROPIC_BEDROCK_BASE_URL": "", "ANTHROPIC_VERTEX_BASE_URL": "",
    "CLAUDE_CODE_USE_BEDROCK": "0", "CLAUDE_CODE_USE_VERTEX": "0", "ANTHROPIC_VERTEX_PROJECT_ID": "",
    "CLOUD_ML_REGION": "", "AWS_REGION": "", "ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "",
    "CLAUDE_CODE_OAUTH_TOKEN": "",
}  # fmt: skip


def _refused(*args: Any) -> RequestError:
    with pytest.raises(RequestError) as caught:
        check_route(*args)
    assert caught.value.code == -32602
    return caught.value


def test_an_anthropic_route_is_the_references_environment() -> None:
    route = check_route("main", "anthropic", "https://gw.example/v1", {"X-Key": "k1", "X-Org": "o"}, None)
    assert route_env(route) == {
        **RESET,
        "ANTHROPIC_BASE_URL": "https://gw.example/v1",
        "ANTHROPIC_CUSTOM_HEADERS": "X-Key: k1\nX-Org: o",
        "ANTHROPIC_AUTH_TOKEN": "acp-proxy",
    }
    assert route_env(None) == {}


def test_bedrock_and_vertex_routes() -> None:
    bedrock = check_route("main", "bedrock", "https://br.example", None, None)
    assert route_env(bedrock) == {**RESET, "CLAUDE_CODE_USE_BEDROCK": "1", "AWS_BEARER_TOKEN_BEDROCK": "acp-proxy",
                                  "ANTHROPIC_BEDROCK_BASE_URL": "https://br.example",
                                  "ANTHROPIC_CUSTOM_HEADERS": ""}  # fmt: skip
    place = {"vertex": {"projectId": "p1", "region": "europe-west4"}}
    vertex = check_route("main", "vertex", "https://aiplatform.googleapis.com", None, place)
    # the default host is left out ("Supplying even the default host marks the session as a custom
    # Vertex deployment")
    assert route_env(vertex) == {**RESET, "CLAUDE_CODE_USE_VERTEX": "1", "ANTHROPIC_VERTEX_PROJECT_ID": "p1",
                                 "CLOUD_ML_REGION": "europe-west4", "ANTHROPIC_CUSTOM_HEADERS": ""}  # fmt: skip
    custom = check_route("main", "vertex", "https://vx.example", None, place)
    assert route_env(custom)["ANTHROPIC_VERTEX_BASE_URL"] == "https://vx.example"


def test_bad_input_gets_the_references_messages_and_quotes_no_secret() -> None:
    assert str(_refused("other", "anthropic", "https://gw.example", None, None)) == (
        'Invalid params: Unknown provider ID "other"; expected "main".'
    )
    error = _refused("main", "openai", "https://gw.example", None, None)
    assert str(error) == 'Invalid params: Unsupported apiType "openai" for provider "main".'
    assert error.data == {"apiType": "openai", "supported": ["anthropic", "bedrock", "vertex"]}
    for url in ("", "   ", "gw.example", "ftp://gw.example", "https://", None, 42):
        assert str(_refused("main", "anthropic", url, None, None)) == (
            "Invalid params: baseUrl must be a non-empty absolute http(s) URL."
        )
    error = _refused("main", "anthropic", "https://me:s3cret@gw.example", None, None)
    assert "s3cret" not in str(error) + json.dumps(error.data)
    for headers in ([], {"X": 1}, {"": "v"}, {"X": "a\r\nInjected: 1"}, {f"H{i}": "v" for i in range(65)}):
        error = _refused("main", "anthropic", "https://gw.example", headers, None)
        assert "Injected" not in str(error) + json.dumps(error.data)
    for meta in (None, {}, {"vertex": {"projectId": "p"}}, {"vertex": {"projectId": " ", "region": "r"}}):
        assert "vertex apiType requires" in str(_refused("main", "vertex", "https://vx.example", None, meta))


def test_a_gateway_login_is_a_route() -> None:
    route = gateway_route("gateway-bedrock", {"baseUrl": "https://gw.example", "headers": {"X-Key": "k"}})
    assert route is not None and (route.api_type, route.base_url, dict(route.headers)) == (
        "bedrock", "https://gw.example", {"X-Key": "k"},
    )  # fmt: skip
    assert gateway_route("gateway", None) is None  # the reference's no-op
    with pytest.raises(RequestError):
        gateway_route("gateway", {"baseUrl": "not a url"})


def test_the_listing_shows_the_route_without_credentials() -> None:
    routing = Routing({"ANTHROPIC_BASE_URL": "https://user:pw@proxy.example:8443/a?token=t1#x"})
    (provider,) = routing.listing()["providers"]
    assert provider == {"providerId": "main", "supported": ["anthropic", "bedrock", "vertex"], "required": False,
                        "current": {"apiType": "anthropic", "baseUrl": "https://proxy.example:8443/a"}}  # fmt: skip
    assert Routing({}).current() == ("anthropic", "https://api.anthropic.com")
    assert Routing({"CLAUDE_CODE_USE_BEDROCK": "1"}).current() == ("bedrock", "https://bedrock-runtime.amazonaws.com")
    assert Routing({"CLAUDE_CODE_USE_VERTEX": "1"}).current() == ("vertex", "https://aiplatform.googleapis.com")


def test_the_gateway_logins_are_offered_to_a_client_that_declares_them() -> None:
    def ids(caps: object) -> list[object]:
        return [m["id"] for m in auth_methods(ClientState.parse(caps))]

    assert ids({"auth": {"_meta": {"gateway": True}}}) == ["gateway", "gateway-bedrock", "claude-login"]
    assert ids({"auth": {"_meta": {"gateway": "yes"}}}) == ["claude-login"]
    assert ids({}) == ["claude-login"]
