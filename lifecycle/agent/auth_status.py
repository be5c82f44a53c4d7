"""Who is signed in: the reference adapter's ``authStatus`` extension (issue 52.4).

The agent advertises ``agentCapabilities._meta.authStatus: {}`` (a marker: "this agent pushes its
identity") and pushes ``_auth/status_update {authStatus: {kind, label, detail?}}`` to every client
(clients that do not know the method drop it) after ``initialize``, at the start of each prompt,
and after ``authenticate`` and ``logout``, only when the payload changed. The identity is read from
Claude Code's own ``claude auth status --json`` (the configured executable, run in the agent's
environment, at most :data:`PROBE_TIMEOUT_S`, stopped with the agent); a read that fails says
nothing (the client keeps "not reported"). With no process of its own, the account a session's
Claude Code reports as it starts is taken too (:meth:`AuthStatus.saw_account`, the reference's
``fromAccountInfo``); a gateway login (:mod:`lifecycle.agent.providers`) is the identity itself.

No secret: an API key is named by its source (the variable, e.g. ``ANTHROPIC_API_KEY``), never its
value; the email, organisation and directories the CLI prints are never sent (the reference sends
the email and organisation: docs/parity/README.md says why we do not).

``--hide-claude-auth`` (:meth:`AuthStatus.refuse_subscription`): a turn a claude.ai subscription
would pay for is refused with the reference's ``authRequired`` error and reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, Final

import structlog
from acp import RequestError

from .config import claude_cli

__all__ = [
    "NOTIFICATION",
    "SUBSCRIPTION_REASON",
    "AuthStatus",
    "bills_subscription",
    "credentials_available",
    "from_account_info",
    "from_cli_status",
]

log = structlog.get_logger("lifecycle.agent")

#: The notification's method as the SDK's ``ext_notification`` takes it (it adds the ``_``).
NOTIFICATION: Final = "auth/status_update"
#: The reference's ``AUTH_STATUS_PROBE_TIMEOUT_MS`` (5 s): a hung CLI never wedges later reads.
PROBE_TIMEOUT_S: Final = 5.0
#: The reference's ``data.reason`` and message when ``--hide-claude-auth`` refuses a turn.
SUBSCRIPTION_REASON: Final = "claude_subscription_not_supported"
SUBSCRIPTION_MESSAGE: Final = (
    "Authentication required: This integration does not support using claude.ai subscriptions."
)
_SUBSCRIPTION_HINT: Final = (
    "This agent was started with --hide-claude-auth: sign in with an Anthropic Console account "
    "(claude auth login --console) or set ANTHROPIC_API_KEY, then send the prompt again."
)

#: The reference's ``API_KEY_SOURCE_DETAILS``: a key's source as the client sees it.
_KEY_SOURCES: Mapping[str, str] = {
    "apiKeyHelper": "API key helper",
    "env": "env",
    "ANTHROPIC_API_KEY": "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN": "ANTHROPIC_AUTH_TOKEN",
}
#: The reference's ``API_KEY_SOURCES_ABOVE_SUBSCRIPTION``: a key that pays instead of a stored login.
_KEYS_ABOVE_SUBSCRIPTION = frozenset({"ANTHROPIC_API_KEY", "apiKeyHelper", "/login managed key"})
#: The reference's ``EXTERNAL_PROVIDER_LABELS``.
_PROVIDERS: Mapping[str, str] = {
    "bedrock": "AWS Bedrock",
    "vertex": "Google Vertex AI",
    "foundry": "Azure AI Foundry",
    "anthropicAws": "Anthropic on AWS",
    "anthropicGoogleCloud": "Anthropic on Google Cloud",
    "mantle": "Mantle",
}
_NOT_LOGGED_IN: Mapping[str, str] = {"kind": "none", "label": "Not logged in"}


def _text(value: object, limit: int = 80) -> str | None:
    return value[:limit] if isinstance(value, str) and value else None


def _plan_label(plan: str) -> str:
    """The reference's ``planLabel``: each word title-cased, exactly one "Claude"."""
    titled = " ".join(w[:1].upper() + w[1:] for w in plan.split())
    return titled if plan.lower().split()[:1] == ["claude"] else f"Claude {titled}"


def from_cli_status(stdout: str, env: Mapping[str, str]) -> dict[str, Any] | None:
    """The ``authStatus`` payload of ``claude auth status --json`` output (the reference's
    ``fromCliStatus``), None when it is not that JSON object. ``env``: the environment Claude Code
    runs in, only to name the variable of a bearer token (never its value)."""
    try:
        status = json.loads(stdout)
    except ValueError:
        return None
    if not isinstance(status, dict) or not isinstance(status.get("loggedIn"), bool):
        return None
    source = _text(status.get("apiKeySource"))
    if source is None and status.get("authMethod") == "oauth_token" and env.get("ANTHROPIC_AUTH_TOKEN"):
        # Claude Code 2.1.337 names no source for ``ANTHROPIC_AUTH_TOKEN`` (the reference then
        # reports "Not logged in"); the variable is named, as the reference's table would.
        source = "ANTHROPIC_AUTH_TOKEN"
    plan = _text(status.get("subscriptionType")) if status["loggedIn"] else None
    return _mapped(_text(status.get("apiProvider")), source, plan) or dict(_NOT_LOGGED_IN)


def from_account_info(account: object) -> dict[str, Any] | None:
    """The ``authStatus`` payload of the account a session's Claude Code reported at its start
    (its ``initialize`` answer's ``account``; the reference's ``fromAccountInfo``): None when it
    carries no identity signal (no key source, plan, or provider other than ``firstParty``: a
    token from the environment reports only ``tokenSource``), so what the probe read stays."""
    if not isinstance(account, Mapping):
        return None
    fields = (account.get("apiProvider"), account.get("apiKeySource"), account.get("subscriptionType"))
    return _mapped(*(_text(f) for f in fields))


def _mapped(provider: str | None, source: str | None, plan: str | None) -> dict[str, Any] | None:
    """The reference's ``mapAuthFields`` (a provider first, then a key above a plan); None: no signal."""
    if provider == "gateway":
        return {"kind": "gateway", "label": "Custom model gateway"}
    if provider is not None and provider != "firstParty":
        return {"kind": "external", "label": _PROVIDERS.get(provider, provider)}
    if source is not None:
        detail = _KEY_SOURCES.get(source)
        return {"kind": "api_key", "label": "Anthropic API key", **({"detail": detail} if detail else {})}
    if plan is not None:
        return {"kind": "account", "label": _plan_label(plan), "account": {"plan": plan}}
    return None


def bills_subscription(stdout: str) -> bool:
    """Whether a turn would be paid by a claude.ai subscription (the reference's
    ``billsClaudeSubscription``, on the same fields of ``claude auth status --json``): a plan, a
    claude.ai login (not a token from the environment), Anthropic's own API, and no key above it."""
    with contextlib.suppress(ValueError):
        status = json.loads(stdout)
        if isinstance(status, dict) and _text(status.get("subscriptionType")) is not None:
            return (
                status.get("authMethod") == "claude.ai"
                and status.get("apiProvider") in (None, "firstParty")
                and status.get("apiKeySource") not in _KEYS_ABOVE_SUBSCRIPTION
            )
    return False


def credentials_available(env: Mapping[str, str]) -> bool:
    """Whether Claude Code has something to authenticate with (best effort; keychains unseen)."""
    names = (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
        "CLAUDE_CODE_USE_FOUNDRY",
    )
    if any(env.get(k) for k in names):
        return True
    if sys.platform == "darwin":
        return True  # the login lives in the macOS keychain, which is not inspected here
    root = Path(env.get("CLAUDE_CONFIG_DIR") or Path(env.get("HOME", "~")).expanduser() / ".claude")
    return (root / ".credentials.json").is_file()


class AuthStatus:
    """The connection's identity: read, pushed when it changed, and judged for
    ``--hide-claude-auth``.

    Args:
        cli_path: the Claude Code executable (``--cli-path``), else the bundled one.
        env: the environment Claude Code runs in.
        push: read and push the identity (else only :meth:`refuse_subscription` reads it).
    """

    def __init__(self, cli_path: str | None, env: Mapping[str, str], *, push: bool = True) -> None:
        self._push = push
        self._cli_path = cli_path
        self._env = env
        self._conn: Any = None
        self._sent: dict[str, Any] | None = None  # the last payload pushed
        self._reading: asyncio.Task[str | None] | None = None  # the read in flight (shared)
        self._tasks: set[asyncio.Future[Any]] = set()  # every read and push in flight
        self._pinned: dict[str, Any] | None = None  # a gateway login's identity (no read then)

    def connect(self, conn: Any) -> None:
        self._conn = conn

    def refresh(self) -> None:
        """Read the identity in the background and push it if it changed (nothing waits)."""
        if not self._push:
            return
        task = asyncio.ensure_future(self.read())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def reread(self) -> None:
        """After ``authenticate`` or ``logout``: a read that starts now, pushed if it changed."""
        if self._push:
            await self.read(fresh=True)

    async def read(self, *, fresh: bool = False) -> str | None:
        """Read ``claude auth status --json`` (joining a read in flight unless ``fresh``: a read
        after a logout must start after it), push the payload if it changed; its output, or None
        (and no read) while a gateway login holds the credentials."""
        if self._pinned is not None:
            return None
        if fresh or self._reading is None or self._reading.done():
            self._reading = asyncio.ensure_future(self._run())
            self._tasks.add(self._reading)
            self._reading.add_done_callback(self._tasks.discard)
        stdout = await asyncio.shield(self._reading)
        payload = from_cli_status(stdout, self._env) if stdout is not None else None
        if payload is None:
            if stdout is not None:
                log.info("auth_status.unreadable")
            return stdout
        await self._publish(payload)
        return stdout

    def saw_account(self, info: Mapping[str, Any]) -> None:
        """A session's Claude Code reported its account at its start (no process: the reference's
        ``publishSessionAccountIdentity``): pushed if it says who pays and that changed."""
        payload = from_account_info(info.get("account"))
        if payload is not None and self._pinned is None and self._push:
            task = asyncio.ensure_future(self._publish(payload))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def pin(self, payload: dict[str, Any] | None) -> None:
        """A gateway login (:mod:`lifecycle.agent.providers`): the gateway holds the credentials, so
        it is who is signed in and no read replaces it (the reference's); None: read again."""
        self._pinned = payload
        await (self._publish(payload) if payload is not None else self.reread())

    async def _publish(self, payload: dict[str, Any]) -> None:
        if self._pinned is not None and payload != self._pinned:
            return  # a read or an account from before a gateway login: the gateway is who is signed in
        if payload != self._sent and self._conn is not None and self._push:
            self._sent = payload
            log.info("auth_status.push", kind=payload["kind"])
            with contextlib.suppress(Exception):  # a client gone: nothing to tell
                await self._conn.ext_notification(NOTIFICATION, {"authStatus": payload})

    @contextlib.asynccontextmanager
    async def turn(self, guard: bool) -> AsyncIterator[None]:
        """Around a prompt: the identity is read at its start (the reference's: a login or logout
        done elsewhere shows), beside the turn and never awaited (the reference's rule: "a prompt
        must not wait on a CLI process"; pushed when it lands, the read stopped by :meth:`close` at
        the agent's end); ``guard`` (``--hide-claude-auth``): read first, and the turn refused on a
        subscription."""
        if guard:
            await self.refuse_subscription()
        else:
            self.refresh()
        yield

    async def refuse_subscription(self, early: Any = None) -> None:
        """``--hide-claude-auth``: raise the reference's ``authRequired`` error when a claude.ai
        subscription would pay for the session or the turn (``early``: a Claude Code started for
        the refused session, stopped first); an identity that cannot be read lets it run (the
        reference's guard fails open too)."""
        stdout = await self.read()
        if stdout is not None and bills_subscription(stdout):
            log.info("auth_status.subscription_refused")
            if early is not None:
                await early.close()
            data = {"reason": SUBSCRIPTION_REASON, "details": _SUBSCRIPTION_HINT}
            raise RequestError(-32000, SUBSCRIPTION_MESSAGE, data)

    async def logout(self) -> None:
        """Claude Code's ``auth logout`` (it clears the stored login; 30 s at most), then the
        identity read again (a key in the environment survives it); a gateway login ends too."""
        self._pinned = None
        cli = claude_cli(self._cli_path)
        if cli is None:
            raise RequestError.internal_error({"details": "Claude Code was not found."})
        proc = await asyncio.create_subprocess_exec(
            cli, "auth", "logout", stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL, env=dict(self._env),
        )  # fmt: skip
        try:
            code = await asyncio.wait_for(proc.wait(), 30)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            code = None
        log.info("agent.logout", exit_code=code)
        if code != 0:
            raise RequestError.internal_error({"details": "claude auth logout failed."})
        await self.reread()

    async def _run(self) -> str | None:
        cli = claude_cli(self._cli_path)
        if cli is None:
            return None
        try:
            proc = await asyncio.create_subprocess_exec(
                cli, "auth", "status", "--json", stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, env=dict(self._env),
            )  # fmt: skip
        except OSError as exc:
            log.info("auth_status.cli_failed", error_type=type(exc).__name__)
            return None
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), PROBE_TIMEOUT_S)
        except TimeoutError:
            log.info("auth_status.cli_timeout")
            return None
        finally:
            if proc.returncode is None:  # timed out or cancelled: the CLI does not outlive the read
                proc.kill()
                await proc.wait()
        # A signed-out CLI exits 1 with its JSON all the same (the reference parses it too).
        return out.decode("utf-8", "replace")[:65536]

    async def close(self) -> None:
        """Stop the reads in flight (no process outlives the agent)."""
        for task in list(self._tasks):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
