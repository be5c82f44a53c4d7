"""Which backend the sessions' Claude Code talks to, as the client manages it (issue 52.4): the
reference adapter 0.101.0's ``providers/list``, ``providers/set``, ``providers/disable``
(``unstable_listProviders`` and its neighbours in its ``dist/acp-agent.js``) and its ``gateway`` /
``gateway-bedrock`` logins (``authenticate`` with ``_meta.gateway {baseUrl, headers}``).

One provider, ``main``, over the protocols Claude Code speaks: ``anthropic`` (``ANTHROPIC_BASE_URL``),
``bedrock`` (``CLAUDE_CODE_USE_BEDROCK``), ``vertex`` (``CLAUDE_CODE_USE_VERTEX``, its project and
region in ``_meta.claudeCode.vertex``). A route set by the client is the Claude Code environment of
:func:`route_env` (the reference's ``createEnvForProvider``: the route's variables reset, its
headers in ``ANTHROPIC_CUSTOM_HEADERS``, a placeholder token so Claude Code skips its own login).
A change applies at a turn boundary: it is refused while a turn runs (the reference queues it
instead), then each session's idle Claude Code is stopped and the next prompt starts one on the new
route, resuming the conversation (:meth:`lifecycle.agent.session.Session.reroute`). A failure of
the route is Claude Code's failure, an incident like any other.

No secret leaves: the headers (a gateway's key) are never listed, logged or echoed, a base URL
with a user or password in it is refused (the key belongs in the headers), and ``providers/list``
shows a URL without its query.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import structlog
from acp import RequestError

from .config import GATEWAY_METHODS

__all__ = ["PROVIDER_ID", "SUPPORTED", "Route", "Routing", "check_route", "gateway_route"]

log = structlog.get_logger("lifecycle.agent")

#: The reference's ``PROVIDER_ID`` and ``SUPPORTED_PROTOCOLS``.
PROVIDER_ID: Final = "main"
SUPPORTED: Final = ("anthropic", "bedrock", "vertex")
#: The reference's defaults (``DEFAULT_ANTHROPIC_BASE_URL``, ``DEFAULT_VERTEX_BASE_URL``, the Bedrock one).
_DEFAULT_ANTHROPIC: Final = "https://api.anthropic.com"
_DEFAULT_VERTEX: Final = "https://aiplatform.googleapis.com"
_DEFAULT_BEDROCK: Final = "https://bedrock-runtime.amazonaws.com"
#: The reference's ``PROVIDER_AUTH_TOKEN_PLACEHOLDER`` (dist/gateway-models.js): Claude Code skips
#: its login checks, and the gateway sees ``Bearer acp-proxy`` unless the client's headers replace it.
_PLACEHOLDER: Final = "acp-proxy"
_VERTEX_MISSING: Final = (
    "vertex apiType requires non-empty `_meta.claudeCode.vertex.projectId` and `_meta.claudeCode.vertex.region`."
)
_MAX_HEADERS: Final = 64
_MAX_TEXT: Final = 8192


@dataclass(frozen=True)
class Route:
    """A backend the client set: its protocol, base URL, headers (secret) and Vertex place."""

    api_type: str
    base_url: str
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    vertex: tuple[str, str] | None = None  # (project id, region)


def _invalid(message: str, data: dict[str, Any] | None = None) -> RequestError:
    return RequestError(-32602, f"Invalid params: {message}", data)


def _base_url(value: object) -> str:
    """A non-empty absolute http(s) URL with no user or password (the reference's
    ``isValidBaseUrl``, and no credential in a URL: docs/security.md)."""
    if not isinstance(value, str) or not value.strip() or len(value) > _MAX_TEXT:
        raise _invalid("baseUrl must be a non-empty absolute http(s) URL.")
    try:
        parts = urlsplit(value.strip())
        host = parts.hostname
    except ValueError:
        host = None
    if host is None or parts.scheme not in ("http", "https"):
        raise _invalid("baseUrl must be a non-empty absolute http(s) URL.")
    if parts.username is not None or parts.password is not None:
        raise _invalid("baseUrl must not carry a user or password: send the credential in headers.")
    return value.strip()


def _headers(value: object) -> dict[str, str]:
    if value is None:
        return {}
    ok = isinstance(value, Mapping) and len(value) <= _MAX_HEADERS
    if ok:
        assert isinstance(value, Mapping)
        ok = all(
            isinstance(k, str) and isinstance(v, str) and k.strip() and len(k) + len(v) < _MAX_TEXT
            and not any(c in k + v for c in "\r\n")
            for k, v in value.items()
        )  # fmt: skip
    if not ok:
        raise _invalid("headers must be an object of header names to one-line string values.")
    assert isinstance(value, Mapping)
    return {str(k): str(v) for k, v in value.items()}


def check_route(provider_id: object, api_type: object, base_url: object, headers: object, meta: object) -> Route:
    """A ``providers/set``'s route, or the reference's ``invalid_params`` (its messages) for an
    unknown provider, a protocol Claude Code does not speak, a bad URL, bad headers, or a
    ``vertex`` route without its project and region. Nothing of a header is quoted back."""
    if provider_id != PROVIDER_ID:
        shown = provider_id[:80] if isinstance(provider_id, str) else None
        raise _invalid(f'Unknown provider ID "{shown}"; expected "{PROVIDER_ID}".', {"providerId": shown})
    if api_type not in SUPPORTED:
        shown = api_type[:80] if isinstance(api_type, str) else None
        data = {"apiType": shown, "supported": list(SUPPORTED)}
        raise _invalid(f'Unsupported apiType "{shown}" for provider "{PROVIDER_ID}".', data)
    assert isinstance(api_type, str)
    url, extra = _base_url(base_url), _headers(headers)
    vertex = None
    if api_type == "vertex":
        place = meta.get("vertex") if isinstance(meta, Mapping) else None
        project = place.get("projectId") if isinstance(place, Mapping) else None
        region = place.get("region") if isinstance(place, Mapping) else None
        if not (isinstance(project, str) and project.strip() and isinstance(region, str) and region.strip()):
            raise _invalid(_VERTEX_MISSING)
        vertex = (project[:_MAX_TEXT], region[:_MAX_TEXT])
    return Route(api_type, url, extra, vertex)


def gateway_route(method_id: str, gateway: object) -> Route | None:
    """The route of a ``gateway`` / ``gateway-bedrock`` login's ``_meta.gateway`` (None when the
    login carries none: the reference's no-op), or its ``invalid_params``."""
    if gateway is None:
        return None
    if not isinstance(gateway, Mapping):
        raise _invalid("`_meta.gateway.baseUrl` must be a non-empty absolute http(s) URL.")
    url = _base_url(gateway.get("baseUrl"))
    return Route(GATEWAY_METHODS[method_id], url, _headers(gateway.get("headers")))


def route_env(route: Route | None) -> dict[str, str]:
    """Claude Code's environment for ``route`` (the reference's ``createEnvForProvider``; empty:
    the agent's own environment decides)."""
    if route is None:
        return {}
    env = {
        "ANTHROPIC_BASE_URL": "", "ANTHROPIC_BEDROCK_BASE_URL": "", "ANTHROPIC_VERTEX_BASE_URL": "",
        "CLAUDE_CODE_USE_BEDROCK": "0", "CLAUDE_CODE_USE_VERTEX": "0", "ANTHROPIC_VERTEX_PROJECT_ID": "",
        "CLOUD_ML_REGION": "", "AWS_REGION": "", "ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "",
        "CLAUDE_CODE_OAUTH_TOKEN": "",
        "ANTHROPIC_CUSTOM_HEADERS": "\n".join(f"{k}: {v}" for k, v in route.headers.items()),
    }  # fmt: skip
    if route.api_type == "bedrock":
        env.update(CLAUDE_CODE_USE_BEDROCK="1", AWS_BEARER_TOKEN_BEDROCK=_PLACEHOLDER,
                   ANTHROPIC_BEDROCK_BASE_URL=route.base_url)  # fmt: skip
    elif route.api_type == "vertex":
        project, region = route.vertex or ("", "")
        env.update(CLAUDE_CODE_USE_VERTEX="1", ANTHROPIC_VERTEX_PROJECT_ID=project, CLOUD_ML_REGION=region)
        if route.base_url != _DEFAULT_VERTEX:  # the default host would make it a custom deployment
            env["ANTHROPIC_VERTEX_BASE_URL"] = route.base_url
    else:
        env.update(ANTHROPIC_BASE_URL=route.base_url, ANTHROPIC_AUTH_TOKEN=_PLACEHOLDER)
    return env


def _shown(url: str) -> str:
    """A URL as ``providers/list`` shows it: no user, password, query or fragment."""
    try:
        parts = urlsplit(url)
        netloc = parts.hostname or ""
        if parts.port is not None:
            netloc = f"{netloc}:{parts.port}"
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    except ValueError:
        return ""


class Routing:
    """The agent's provider: the route a client set (``providers/set`` or a gateway login) or the
    one the agent's environment names, and the Claude Code environment it gives.

    Args:
        env: the agent's environment (the default route).
    """

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env
        self.route: Route | None = None  # set by the client
        self._launcher_route: dict[str, str] = {}
        self._sessions: Callable[[], Iterable[Any]] = list

    def env(self) -> dict[str, str]:
        """The variables the sessions' Claude Code gets on top of the agent's environment."""
        return route_env(self.route)

    def current(self) -> tuple[str, str]:
        """The protocol and base URL in use (the reference's ``defaultProviderConfig`` when the
        client set none)."""
        if self.route is not None:
            return self.route.api_type, self.route.base_url
        if self._env.get("CLAUDE_CODE_USE_BEDROCK"):
            return "bedrock", self._env.get("ANTHROPIC_BEDROCK_BASE_URL") or _DEFAULT_BEDROCK
        if self._env.get("CLAUDE_CODE_USE_VERTEX"):
            return "vertex", self._env.get("ANTHROPIC_VERTEX_BASE_URL") or _DEFAULT_VERTEX
        return "anthropic", self._env.get("ANTHROPIC_BASE_URL") or _DEFAULT_ANTHROPIC

    def listing(self) -> dict[str, Any]:
        """``providers/list``'s answer (the reference's shape; the URL without its query)."""
        api_type, base_url = self.current()
        provider = {
            "providerId": PROVIDER_ID,
            "supported": list(SUPPORTED),
            "required": False,
            "current": {"apiType": api_type, "baseUrl": _shown(base_url)},
        }
        return {"providers": [provider]}

    def bind(self, route: dict[str, str], sessions: Callable[[], Iterable[Any]]) -> None:
        """The launcher's route (the env every new Claude Code gets) and the agent's sessions."""
        self._launcher_route, self._sessions = route, sessions

    def serve(self, conn: object) -> None:
        """Route ``providers/list``, ``set`` and ``disable`` on ``conn`` (the ACP SDK 0.12.1 has
        their models but routes none of them)."""
        from acp.schema import DisableProviderRequest, ListProvidersRequest, SetProviderRequest

        from . import sdk

        sdk.route_request(conn, "providers/list", ListProvidersRequest, self, "list_providers")
        sdk.route_request(conn, "providers/set", SetProviderRequest, self, "set_provider")
        sdk.route_request(conn, "providers/disable", DisableProviderRequest, self, "disable_provider")

    async def list_providers(self, **_meta: Any) -> dict[str, Any]:
        return self.listing()

    async def set_provider(
        self, provider_id: str, api_type: object, base_url: str, headers: object = None, **meta: Any
    ) -> dict[str, Any]:
        """``providers/set``: the route checked, then applied (see :meth:`apply`)."""
        await self.apply(check_route(provider_id, api_type, base_url, headers, meta.get("claudeCode")))
        return {}

    async def disable_provider(self, provider_id: str, **_meta: Any) -> dict[str, Any]:
        """``providers/disable``: back to the agent's own route. An unknown id is an error here
        (issue 52.6; the reference answers it with success)."""
        if provider_id != PROVIDER_ID:
            shown = provider_id[:80]
            raise _invalid(f'Unknown provider ID "{shown}"; expected "{PROVIDER_ID}".', {"providerId": shown})
        await self.apply(None)
        return {}

    async def login(self, method_id: str, gateway: object) -> str | None:
        """A ``gateway`` / ``gateway-bedrock`` login: its ``_meta.gateway`` becomes the route (none
        given: nothing changes, the reference's); the gateway's host, to name it."""
        route = gateway_route(method_id, gateway)
        if route is None:
            return None
        await self.apply(route)
        return urlsplit(route.base_url).netloc.rpartition("@")[2]

    async def apply(self, route: Route | None) -> None:
        """Take ``route`` (None: the agent's own) at a turn boundary: refused while a session has a
        prompt in flight; then each session's Claude Code is restarted on it at its next prompt.
        The route in use again changes nothing (no restart)."""
        if route == self.route:
            return
        sessions = list(self._sessions())
        busy = [s.id for s in sessions if s.current_turn is not None or s.prompts]
        if busy:
            raise RequestError(
                -32600, "Invalid request: a turn is running; change the provider once it has ended (or cancel it).",
                {"sessionIds": busy[:16]},
            )  # fmt: skip
        self.route = route
        self._launcher_route.clear()
        self._launcher_route.update(route_env(route))
        log.info("providers.route_set", api_type=route.api_type if route else None, sessions=len(sessions))
        for session in sessions:
            await session.reroute()
