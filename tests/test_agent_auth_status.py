"""``lifecycle.agent.auth_status`` (issue 52.4): the ``authStatus`` payload read from ``claude auth
status --json`` and the ``--hide-claude-auth`` judgement. The inputs are the CLI 2.1.337's own output
(fields as it prints them for an API key, a bearer token, no login, Bedrock and a claude.ai Max
login); the expected payloads are the reference adapter 0.101.0's (``dist/auth-status.js``
``fromCliStatus``/``mapAuthFields``/``planLabel``, ``dist/hide-claude-auth.js``
``billsClaudeSubscription``), with no email, organisation or path."""

# ruff: noqa: E501 (the cases below: one a line)
from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from lifecycle.agent.auth_status import AuthStatus, bills_subscription, from_account_info, from_cli_status

BASE = {
    "apiProvider": "firstParty",
    "analyticsDisabled": True,
    "projectsDirectory": "/home/someone/.claude/projects",
    "configDirectory": "/home/someone/.claude",
    "loginExpiresAt": None,
}
API_KEY = {**BASE, "loggedIn": True, "authMethod": "api_key", "apiKeySource": "ANTHROPIC_API_KEY"}
TOKEN = {**BASE, "loggedIn": True, "authMethod": "oauth_token"}
NONE = {**BASE, "loggedIn": False, "authMethod": "none"}
BEDROCK = {**BASE, "loggedIn": True, "authMethod": "third_party", "apiProvider": "bedrock"}
MAX = {
    **BASE,
    "loggedIn": True,
    "authMethod": "claude.ai",
    "email": "someone@example.com",
    "orgId": "org-1",
    "orgName": "Someone's Org",
    "subscriptionType": "max",
    "storedClaudeAiLogin": True,
}


def _read(status: dict[str, Any], env: dict[str, str] | None = None) -> Any:
    return from_cli_status(json.dumps(status), env or {})


@pytest.mark.parametrize(
    ("status", "env", "expected"),
    [
        (API_KEY, {}, {"kind": "api_key", "label": "Anthropic API key", "detail": "ANTHROPIC_API_KEY"}),
        ({**API_KEY, "apiKeySource": "apiKeyHelper"}, {}, {"kind": "api_key", "label": "Anthropic API key", "detail": "API key helper"}),
        ({**API_KEY, "apiKeySource": "/login managed key"}, {}, {"kind": "api_key", "label": "Anthropic API key"}),
        # The reference reports "Not logged in" here (no apiKeySource); ours names the variable.
        (TOKEN, {"ANTHROPIC_AUTH_TOKEN": "secret"}, {"kind": "api_key", "label": "Anthropic API key", "detail": "ANTHROPIC_AUTH_TOKEN"}),
        (TOKEN, {}, {"kind": "none", "label": "Not logged in"}),
        (NONE, {}, {"kind": "none", "label": "Not logged in"}),
        (BEDROCK, {}, {"kind": "external", "label": "AWS Bedrock"}),
        ({**BEDROCK, "apiProvider": "gateway"}, {}, {"kind": "gateway", "label": "Custom model gateway"}),
        ({**BEDROCK, "apiProvider": "someday"}, {}, {"kind": "external", "label": "someday"}),
        (MAX, {}, {"kind": "account", "label": "Claude Max", "account": {"plan": "max"}}),
        ({**MAX, "subscriptionType": "Claude Pro"}, {}, {"kind": "account", "label": "Claude Pro", "account": {"plan": "Claude Pro"}}),
        ({**MAX, "subscriptionType": "team premium"}, {}, {"kind": "account", "label": "Claude Team Premium", "account": {"plan": "team premium"}}),
        # A key outranks a stored subscription (the reference's order).
        ({**MAX, "apiKeySource": "ANTHROPIC_API_KEY"}, {}, {"kind": "api_key", "label": "Anthropic API key", "detail": "ANTHROPIC_API_KEY"}),
    ],
)  # fmt: skip
def test_the_payload_is_the_references_without_a_secret(
    status: dict[str, Any], env: dict[str, str], expected: dict[str, Any]
) -> None:
    payload = _read(status, env)
    assert payload == expected
    wire = json.dumps(payload)
    for private in ("secret", "someone", "org-1", "/home"):
        assert private not in wire


@pytest.mark.parametrize("stdout", ["", "not json", "[]", '{"loggedIn": "yes"}', "null", '{"authMethod": "api_key"}'])
def test_output_that_is_not_the_cli_status_says_nothing(stdout: str) -> None:
    assert from_cli_status(stdout, {}) is None


@pytest.mark.parametrize(
    ("status", "bills"),
    [
        (MAX, True),
        ({**MAX, "apiKeySource": "ANTHROPIC_API_KEY"}, False),  # the key pays
        ({**MAX, "apiKeySource": "apiKeyHelper"}, False),
        ({**MAX, "authMethod": "oauth_token"}, False),  # a token from the environment pays
        ({**MAX, "apiProvider": "bedrock"}, False),
        (API_KEY, False),
        (TOKEN, False),
        (NONE, False),
    ],
)
def test_only_a_claude_ai_subscription_that_pays_is_refused(status: dict[str, Any], bills: bool) -> None:
    assert bills_subscription(json.dumps(status)) is bills


def test_unreadable_output_is_not_refused() -> None:
    assert bills_subscription("garbage") is False
    assert bills_subscription('{"subscriptionType": 3}') is False


@pytest.mark.parametrize(
    ("account", "payload"),
    [
        # CLI 2.1.337's ``account`` in its initialize answer, observed for ANTHROPIC_API_KEY and for
        # ANTHROPIC_AUTH_TOKEN; the reference's ``fromAccountInfo``: ``tokenSource`` is no signal
        ({"tokenSource": "none", "apiKeySource": "ANTHROPIC_API_KEY", "apiProvider": "firstParty"},
         {"kind": "api_key", "label": "Anthropic API key", "detail": "ANTHROPIC_API_KEY"}),
        ({"tokenSource": "ANTHROPIC_AUTH_TOKEN", "apiProvider": "firstParty"}, None),
        ({"apiProvider": "firstParty"}, None),
        ({"apiProvider": "vertex"}, {"kind": "external", "label": "Google Vertex AI"}),
        ({"apiProvider": "gateway", "apiKeySource": "apiKeyHelper"}, {"kind": "gateway", "label": "Custom model gateway"}),
        ({"subscriptionType": "pro", "email": "someone@example.com", "organization": "Org"},
         {"kind": "account", "label": "Claude Pro", "account": {"plan": "pro"}}),
        ({"subscriptionType": "max", "apiKeySource": "apiKeyHelper"},
         {"kind": "api_key", "label": "Anthropic API key", "detail": "API key helper"}),
        (None, None),
        ("not an object", None),
    ],
)
def test_the_account_a_session_reported(account: object, payload: dict[str, Any] | None) -> None:
    assert from_account_info(account) == payload


def test_a_read_that_lands_after_a_gateway_login_does_not_replace_it() -> None:
    """The gateway holds the credentials once its login is done (the reference's pinned identity):
    a ``claude auth status`` read or a session's account from before it, landing after it, pushes
    nothing (seen in CI: the API key's identity pushed after the gateway's)."""
    sent: list[dict[str, Any]] = []

    class Conn:
        async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
            sent.append(params["authStatus"])

    async def go() -> None:
        auth = AuthStatus(None, {"ANTHROPIC_API_KEY": "sk-test"})
        auth.connect(Conn())
        landed = asyncio.Event()

        async def slow_read() -> str | None:  # `claude auth status --json`, answering after the login
            await landed.wait()
            return json.dumps({"loggedIn": True, "authMethod": "api_key", "apiKeySource": "ANTHROPIC_API_KEY"})

        auth._run = slow_read  # type: ignore[method-assign]
        reading = asyncio.ensure_future(auth.read())
        await asyncio.sleep(0)
        gateway = {"kind": "gateway", "label": "Custom model gateway", "detail": "127.0.0.1:8080"}
        await auth.pin(gateway)
        landed.set()
        await reading
        await auth.close()

    asyncio.run(go())
    assert sent == [{"kind": "gateway", "label": "Custom model gateway", "detail": "127.0.0.1:8080"}]
