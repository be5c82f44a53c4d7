"""Issue 52.1 on the real path: the meter from the first second on a claude.ai login.

Claude Code 2.1.337 answers ``get_usage`` with windows only on a claude.ai login whose scopes
include ``user:profile``, read from ``GET https://api.anthropic.com/api/oauth/usage`` while
``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`` is unset (issue 52.1). The agent runs with a fake
login (made-up tokens) and ``HTTPS_PROXY`` pointing at :class:`.oauth_usage.UsageProxy`, a TLS
endpoint on 127.0.0.1 with a throwaway CA (``NODE_EXTRA_CA_CERTS``) that serves the reading and
refuses every other host: nothing leaves the machine. One agent, two sessions:

1. ``session/new``: before any prompt, a ``usage_update`` whose ``_meta`` has the provider-neutral
   ``rateLimits`` list and the reference's ``_claude/rateLimit`` object (its keys: the SDK's
   ``rate_limit_info``, which the reference forwards as is), and the window's warning on a
   ``session_info_update`` (docs/acp-agent.md, "The meter before the first prompt");
2. the login then loses its ``user:profile`` scope, so Claude Code's next reading has no windows:
   the next ``session/new`` of the same agent still shows the windows the first read ("a new
   session must not lose what an earlier session of the same agent knew").

Expected values are literals from the served reading: 92 % of the 5-hour window 4.5 hours before
its reset is Claude Code's own early warning (over 90 % with at most 72 % of the window gone:
CLI 2.1.337's table), 40 % of the weekly window with 3 of 7 days left is not (50 % within 35 %).
An API key or a gateway token gets no meter: ``tests/e2e/test_usage_command.py``.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from .cli_env import AgentWorkspace
from .fakeapi import text_reply
from .harness import Run, Script, agent, select
from .oauth_usage import UsageProxy, write_login

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]


def _iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _warnings(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of ``updates`` (a ``session_info_update`` may also be a title: no record)."""
    infos = [u.get("_meta", {}) for u in updates if u["sessionUpdate"] == "session_info_update"]
    return [m["jetbrains"]["air"]["sessionFailure"] for m in infos if "jetbrains" in m]


async def _meter(run: Run, sid: str) -> list[dict[str, Any]]:
    """Session ``sid``'s updates once its meter and its warning arrived."""
    while True:
        params = [m["params"] for m in run.incoming() if m.get("method") == "session/update"]
        mine = [p["update"] for p in params if p["sessionId"] == sid]
        if any(u["sessionUpdate"] == "usage_update" for u in mine) and _warnings(mine):
            return mine
        await asyncio.sleep(0.05)


def test_a_claude_ai_login_shows_its_windows_and_warning_before_any_prompt(tmp_path: Path) -> None:
    now = int(time.time())
    five_hour, seven_day = now + 16200, now + 3 * 86400  # 4.5 hours, 3 days ahead
    reading = {
        "five_hour": {"utilization": 92.0, "resets_at": _iso(five_hour)},
        "seven_day": {"utilization": 40.0, "resets_at": _iso(seven_day)},
        "seven_day_opus": None,
    }
    proxy = UsageProxy(tmp_path / "ca", reading)

    def login(ws: AgentWorkspace, env: dict[str, str]) -> None:
        env.pop("ANTHROPIC_AUTH_TOKEN", None)  # the harness's gateway token: a claude.ai login instead
        env.pop("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", None)  # else Claude Code reads no usage
        env["HTTPS_PROXY"] = proxy.url
        env["NODE_EXTRA_CA_CERTS"] = str(proxy.ca)
        write_login(ws.config_dir)

    async def go() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with agent(tmp_path, Script(then=text_reply("unused")), select("allow-once"), prepare=login) as run:
            first = await asyncio.wait_for(_meter(run, run.sid), 120)
            served = [r for r in proxy.requests if r.startswith("GET /api/oauth/usage")]
            assert served, proxy.requests
            # The login loses its user:profile scope: Claude Code's next reading has no windows
            # ("missing profile scope": rate_limits_available false).
            write_login(run.workspace.config_dir, scopes=("user:inference",))
            second_sid = (await run.conn.new_session(cwd=str(run.workspace.cwd), mcp_servers=[])).session_id
            second = await asyncio.wait_for(_meter(run, second_sid), 120)
            assert not [r for r in run.api.requests if r.is_messages], "no prompt: the model was never asked"
            return first, second

    with proxy:
        first, second = asyncio.run(go())
    for updates in (first, second):
        meter = next(u for u in updates if u["sessionUpdate"] == "usage_update")
        assert meter["_meta"]["rateLimits"] == [
            {"window": "five_hour", "status": "allowed_warning", "usedFraction": 0.92, "resetsAt": _iso(five_hour)},
            {"window": "seven_day", "status": "allowed", "usedFraction": 0.4, "resetsAt": _iso(seven_day)},
        ]
        assert meter["_meta"]["_claude/rateLimit"] == {
            "status": "allowed_warning",
            "resetsAt": five_hour,
            "rateLimitType": "five_hour",
            "utilization": 0.92,
            "unifiedWindows": {
                "five_hour": {"status": "allowed_warning", "resetsAt": five_hour, "utilization": 0.92},
                "seven_day": {"status": "allowed", "resetsAt": seven_day, "utilization": 0.4},
            },
        }
        warnings = _warnings(updates)
        assert len(warnings) == 1
        assert (warnings[0]["category"], warnings[0]["severity"], warnings[0]["actions"]) == ("limit", "warning", [])
        # the agent runs with TZ=UTC (cli_env): the reset reads in UTC
        reset = datetime.fromtimestamp(five_hour, UTC)
        when = f"{reset.hour % 12 or 12}:{reset.minute:02d} {'am' if reset.hour < 12 else 'pm'} (UTC)"
        assert warnings[0]["title"] == f"You've used 92% of your 5-hour limit · resets {when}"
