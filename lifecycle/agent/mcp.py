"""MCP servers an editor passes to ``session/new`` / ``load`` / ``resume``: mapped into Claude
Code's options as the reference adapter maps them, and a client server that fails to start shown
to the user as the reference shows it.

Rules
-----
* Mapping (:func:`mcp_config`, the reference's ``createSession``): an ``http`` or ``sse`` server is
  ``{"type", "url", "headers"?}`` (headers as a name -> value object), a stdio server (no ``type``,
  or ``stdio``) ``{"type": "stdio", "command", "args", "env"?}``; keyed by the server's name (a
  later server of the same name wins). Any other kind (``acp``) is left out, as the reference
  leaves it out: only ``http`` and ``sse`` are advertised (:data:`MCP_CAPABILITIES`).
* Startup failures come from Claude Code's ``system``/``init`` message (``mcp_servers``: name and
  status). Only the client's own servers are reported (those from the user's Claude Code settings
  are the same in every session), each at most once per session: ``failed`` as a warning
  ``MCP server "<name>" failed to start``, ``needs-auth`` as an info notice
  ``MCP server "<name>" needs authentication`` (this agent runs no MCP OAuth flow).
* How it is shown depends on the client: an ACP ``notice`` (title and description) for a client
  that declared ``session.notices``; else a ``sessionFailure`` notice record (``unknown``, warning,
  no actions, a ``:notice:`` id, riding ``session_info_update``) for a capable client; else, for a
  legacy client, the reference's bold-label transcript line with its
  ``_meta.claudeCode`` ``{"kind": "mcpServerStatus", "server", "status"}``. It is never an incident
  of the turn: the turn runs on, without the server's tools.
* Headers and environment values are credentials: they go to Claude Code's options and nowhere
  else (no log line, no notice).

Theory of operation
-------------------
:class:`McpServers` belongs to one session: the ``mcp_servers`` the client gave and what the
client negotiated. :meth:`McpServers.startup_notices` turns an ``init`` message's statuses into
what to send (pure; it remembers what it reported), and :mod:`lifecycle.agent.translate` makes
each a step of the ``init`` message: the ledger's existing lanes carry the notice (``Informational`` for the ACP notice,
``ModelFallback``'s notice record for a capable client), the legacy line goes out as a transcript
update. Nothing here imports an SDK at import time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

import structlog

from ..events import Event, Informational, McpServerNotStarted
from .config import MCP_CAPABILITIES

if TYPE_CHECKING:
    from acp.schema import McpCapabilities

__all__ = ["MCP_CAPABILITIES", "McpServers", "mcp_capabilities", "mcp_config"]

log = structlog.get_logger("lifecycle.agent")

_FAILED_DESCRIPTION: Final = "Its tools are unavailable in this session."
_NEEDS_AUTH_DESCRIPTION: Final = "Its tools are unavailable until the server is authenticated."


def mcp_capabilities() -> McpCapabilities:
    """:data:`MCP_CAPABILITIES` as the ACP SDK's model (imports the ACP SDK)."""
    from acp.schema import McpCapabilities

    return McpCapabilities.model_validate(dict(MCP_CAPABILITIES))


def _field(server: Any, name: str) -> Any:
    if isinstance(server, Mapping):
        return server.get(name)
    return getattr(server, name, None)


def _pairs(entries: Any) -> dict[str, str] | None:
    """ACP ``[{name, value}]`` (headers, env) as an object; None when there are none."""
    if not entries:
        return None
    return {str(_field(e, "name")): str(_field(e, "value")) for e in entries}


def mcp_config(servers: Iterable[Any] | None) -> dict[str, dict[str, Any]]:
    """Claude Code's ``mcp_servers`` option for the ACP ``mcpServers`` list (models or JSON)."""
    out: dict[str, dict[str, Any]] = {}
    for server in servers or ():
        name, kind = _field(server, "name"), _field(server, "type")
        if not isinstance(name, str) or not name:
            continue
        entry: dict[str, Any]
        if kind in ("http", "sse"):
            entry = {"type": kind, "url": str(_field(server, "url"))}
            headers = _pairs(_field(server, "headers"))
            if headers is not None:
                entry["headers"] = headers
        elif kind in (None, "stdio"):
            entry = {"type": "stdio", "command": str(_field(server, "command"))}
            entry["args"] = [str(a) for a in _field(server, "args") or ()]
            env = _pairs(_field(server, "env"))
            if env is not None:
                entry["env"] = env
        else:
            continue  # an ``acp`` server: not advertised, not passed on (the reference's choice)
        out[name] = entry
    return out


class McpServers:
    """One session's client MCP servers, and which startup failures it already reported.

    Args:
        servers: the ``mcpServers`` of ``session/new`` (or ``load``/``resume``).
        negotiated: the client negotiated ``sessionFailure``.
        notices: the client declared ACP session notices.
    """

    __slots__ = ("config", "negotiated", "notices", "reported")

    def __init__(self, servers: Iterable[Any] | None = None, *, negotiated: bool = False, notices: bool = False):
        self.config = mcp_config(servers)
        self.negotiated = negotiated
        self.notices = notices
        self.reported: set[str] = set()

    def startup_notices(self, statuses: object) -> list[Event | dict[str, Any]]:
        """What to send for an ``init`` message's ``mcp_servers``: ledger events to feed, or (for a
        legacy client) transcript updates to show. Each client server is reported once."""
        out: list[Event | dict[str, Any]] = []
        if not isinstance(statuses, list):
            return out
        for entry in statuses:
            if not isinstance(entry, Mapping):
                continue
            name, status = entry.get("name"), entry.get("status")
            if name not in self.config or name in self.reported or status not in ("failed", "needs-auth"):
                continue
            self.reported.add(name)
            log.info("mcp.server_not_started", status=status, server_index=list(self.config).index(name))
            out.append(self._notice(name, status))
        return out

    def _notice(self, name: str, status: str) -> Event | dict[str, Any]:
        if status == "failed":
            title, description = f'MCP server "{name}" failed to start', _FAILED_DESCRIPTION
        else:
            title, description = f'MCP server "{name}" needs authentication', _NEEDS_AUTH_DESCRIPTION
        if self.notices:
            # The ledger's notice lane: an ACP ``notice`` whose title is the first line.
            return Informational(content=f"{title}\n{description}", level="warning" if status == "failed" else "notice")
        if self.negotiated:
            # The ledger's notice-record lane (an advisory: no action, never recovered by success).
            return McpServerNotStarted(content=f"{title}. {description}")
        return {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": f"**{title}:** {description}"},
            "_meta": {"claudeCode": {"kind": "mcpServerStatus", "server": name, "status": status}},
        }
