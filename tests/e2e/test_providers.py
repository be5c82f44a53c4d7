"""Which backend the session's Claude Code talks to, as the client sets it (issue 52.4, 52.6), on
the real bundled Claude Code through the real ACP SDK client; two fake Anthropic APIs on 127.0.0.1
(the agent's own, ``A``, and the client's, ``B``) are the only fakes. One agent runs every case in
turn:

* ``agentCapabilities.providers`` is ``{}`` and a client that declares ``auth._meta.gateway`` is
  offered the reference's ``gateway`` and ``gateway-bedrock`` logins (dist/acp-agent.js
  ``initialize``, word for word);
* ``providers/list`` shows the route in use (the reference's shape: provider ``main``, protocols
  ``anthropic``, ``bedrock``, ``vertex``);
* bad input gets a clear ``-32602`` (the reference's messages for an unknown provider and
  protocol); a URL with a password in it is refused without quoting it; ``providers/disable`` of an
  unknown provider is refused too (the reference answers it with success: docs/parity says why);
* a ``providers/set`` while a turn runs is refused (``-32600``, the busy session named) and
  changes nothing;
* ``providers/set`` restarts the session's Claude Code at the turn boundary: the next prompt runs a
  new Claude Code that resumes the conversation against ``B``, with the client's headers; the
  header's value is in no frame and no log line;
* a failure of ``B`` is an incident like any other (a 401: ``access``, ``login``, as
  tests/e2e/test_editor_401.py's);
* ``providers/disable`` goes back to ``A``; a ``gateway`` login routes to its ``baseUrl`` and
  pushes ``_auth/status_update`` ``{kind: "gateway", label: "Custom model gateway", detail: host}``
  (the reference's ``gatewayAuthStatus``).

And side by side with the reference itself (no session): the gateway logins, ``providers/list`` and
the refusals of ``providers/set`` are its own, code and message.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.connection import StreamDirection

from lifecycle import read_record

from .claude_cli import BUNDLED_CLI, AgentWorkspace
from .cli_env import session_cli_pid
from .fakeapi import FakeAnthropicAPI, RequestRecord, error_reply, text_reply
from .harness import AIR, Client, Script, agent, body_of, last_user_text, run_async, select, tool_turn, tool_use
from .reference import node_binary

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

SECRET = "gw-secret-value-52-4"
#: The reference's gateway logins (dist/acp-agent.js ``initialize``: ``gatewayAuthMethod``,
#: ``gatewayBedrockAuthMethod``).
GATEWAYS = [
    {
        "id": "gateway",
        "name": "Custom model gateway",
        "description": "Use a custom gateway to authenticate and access models",
        "_meta": {"gateway": {"protocol": "anthropic"}},
    },
    {
        "id": "gateway-bedrock",
        "name": "Custom model gateway",
        "description": "Use a custom gateway to authenticate and access models",
        "_meta": {"gateway": {"protocol": "bedrock"}},
    },
]


def _listing(api_type: str, base_url: str) -> dict[str, Any]:
    """The reference's ``providers/list`` answer (dist/acp-agent.js ``unstable_listProviders``)."""
    current = {"apiType": api_type, "baseUrl": base_url}
    return {"providers": [{"providerId": "main", "supported": ["anthropic", "bedrock", "vertex"], "required": False,
                           "current": current}]}  # fmt: skip


async def _error(conn: Any, method: str, params: dict[str, Any]) -> tuple[int, str, Any]:
    with pytest.raises(acp.RequestError) as caught:
        await conn._conn.send_request(method, params)
    return caught.value.code, str(caught.value), caught.value.data


def test_a_client_sets_and_disables_the_provider(tmp_path: Path) -> None:
    def b_script(request: RequestRecord) -> Any:
        """B by prompt: a 401 for "three" (Claude Code tries a 401 again: every try gets it)."""
        text = last_user_text(request)
        if "three" in text:
            return error_reply(401, "authentication_error", "invalid x-api-key")
        return text_reply("Through the gateway." if "five" in text else "From B.")

    a_script = Script(
        text_reply("From A."),
        tool_turn(tool_use("Bash", "toolu_busy", command="touch busy.txt", description="Touch a file")),
        text_reply("Not run, then."),
        text_reply("A again."),
    )
    caps = {"auth": {"_meta": {"gateway": True}}, "_meta": AIR}

    async def go() -> None:
        with FakeAnthropicAPI(b_script) as b:
            async with agent(tmp_path, a_script, select("reject"), raw_caps=caps) as run:
                conn, a = run.conn, run.api
                (init,) = [m for d, m in run.frames if d == StreamDirection.INCOMING and m.get("id") == 0]
                assert init["result"]["agentCapabilities"]["providers"] == {}
                assert [m for m in init["result"]["authMethods"] if m["id"].startswith("gateway")] == GATEWAYS

                async def listing() -> Any:
                    return await conn._conn.send_request("providers/list", {})

                assert await listing() == _listing("anthropic", a.base_url)
                assert (await run.prompt("one")).stop_reason == "end_turn" and run.texts() == ["From A."]

                # bad input: clear errors, nothing changes
                main = {"providerId": "main", "apiType": "anthropic", "baseUrl": b.base_url}
                code, message, data = await _error(conn, "providers/set", {**main, "providerId": "other"})
                assert (code, message) == (-32602, 'Invalid params: Unknown provider ID "other"; expected "main".')
                code, message, _ = await _error(conn, "providers/set", {**main, "apiType": "openai"})
                assert (code, message) == (-32602, 'Invalid params: Unsupported apiType "openai" for provider "main".')
                password = {**main, "baseUrl": f"http://user:{SECRET}@127.0.0.1:{b.port}"}
                code, message, data = await _error(conn, "providers/set", password)
                assert code == -32602 and SECRET not in message + json.dumps(data)
                code, _, _ = await _error(conn, "providers/set", {**main, "baseUrl": "relative/path"})
                assert code == -32602
                code, _, _ = await _error(conn, "providers/disable", {"providerId": "other"})
                assert code == -32602
                assert await listing() == _listing("anthropic", a.base_url)

                # a turn runs (its permission question open): refused, nothing changes
                answered = asyncio.Event()

                async def later(params: dict[str, Any]) -> Any:
                    await answered.wait()
                    return {"outcome": {"outcome": "selected", "optionId": "reject"}}

                run.client.answer = later
                busy = asyncio.ensure_future(run.prompt("run it"))
                await asyncio.wait_for(run.client.asked.wait(), 120)
                code, message, data = await _error(conn, "providers/set", {**main, "headers": {"X-Gw": SECRET}})
                assert code == -32600 and data == {"sessionIds": [run.sid]}, (message, data)
                answered.set()
                assert (await asyncio.wait_for(busy, 120)).stop_reason == "end_turn"
                assert await listing() == _listing("anthropic", a.base_url)
                before = session_cli_pid(run.workspace.config_dir, run.sid)
                asked_a = len(a.message_requests)

                # set: the next prompt runs a new Claude Code against B, with the client's header
                assert await conn._conn.send_request("providers/set", {**main, "headers": {"X-Gw": SECRET}}) == {}
                assert await listing() == _listing("anthropic", b.base_url)
                assert (await run.prompt("two")).stop_reason == "end_turn" and run.texts()[-1] == "From B."
                assert session_cli_pid(run.workspace.config_dir, run.sid) != before  # restarted
                assert len(a.message_requests) == asked_a
                (to_b,) = b.message_requests
                assert {k.lower(): v for k, v in to_b.headers.items()}.get("x-gw") == SECRET  # ANTHROPIC_CUSTOM_HEADERS
                assert "one" in json.dumps(body_of(to_b)["messages"])  # the conversation resumed

                # B fails: an incident like any other
                failed = await run.prompt("three")
                record = read_record(failed.field_meta)
                assert record is not None and (record.category, tuple(record.actions)) == ("access", ("login",))

                # disable: back to A
                assert await conn._conn.send_request("providers/disable", {"providerId": "main"}) == {}
                assert await listing() == _listing("anthropic", a.base_url)
                assert (await run.prompt("four")).stop_reason == "end_turn" and run.texts()[-1] == "A again."

                # a gateway login: routed to its baseUrl, and it is who is signed in
                gateway = {"baseUrl": b.base_url, "headers": {"X-Gw": SECRET}}
                await conn._conn.send_request("authenticate", {"methodId": "gateway", "_meta": {"gateway": gateway}})
                assert (await run.prompt("five")).stop_reason == "end_turn"
                assert run.texts()[-1] == "Through the gateway."
                pushes = [m["params"]["authStatus"] for d, m in run.frames
                          if d == StreamDirection.INCOMING and m.get("method") == "_auth/status_update"]  # fmt: skip
                host = b.base_url.split("//", 1)[1].rstrip("/")
                assert pushes[-1] == {"kind": "gateway", "label": "Custom model gateway", "detail": host}

            # no secret in any frame the agent sent, nor in a log line
            assert SECRET not in json.dumps([m for d, m in run.frames if d == StreamDirection.INCOMING])
            assert SECRET not in run.workspace.stderr_path.read_text()
            assert SECRET not in json.dumps(run.workspace.log())

    run_async(go())


def test_the_routing_answers_are_the_references(tmp_path: Path, reference_package: Path) -> None:
    """Side by side with the reference adapter 0.101.0 on the same environment (no session, no
    prompt): the gateway logins offered, ``providers/list``, and the refusals of an unknown provider,
    an unsupported protocol and a relative URL, code and message."""

    async def answers(impl: str) -> list[Any]:
        ws = AgentWorkspace()
        ws._workspace(tmp_path / impl)
        with FakeAnthropicAPI(Script()) as api:
            ws.api = api
            env = ws.agent_env(2)
            if impl == "ours":
                command = [sys.executable, "-m", "lifecycle.agent"]
            else:
                env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
                env["CLAUDE_CODE_EXECUTABLE"] = str(BUNDLED_CLI)
                command = [node_binary(), str(reference_package / "dist" / "index.js")]
            with (ws.tmp / f"{impl}.stderr").open("w") as stderr:
                async with acp.spawn_agent_process(
                    Client(select("reject")),  # type: ignore[arg-type]
                    *command, env=env, cwd=str(ws.cwd), transport_kwargs={"stderr": stderr},
                ) as (conn, _proc):  # fmt: skip
                    caps = {"auth": {"_meta": {"gateway": True}}}
                    params = {"protocolVersion": 1, "clientCapabilities": caps}
                    init = await conn._conn.send_request("initialize", params)
                    listing = json.dumps(await conn._conn.send_request("providers/list", {}))
                    out: list[Any] = [
                        [m for m in init["authMethods"] if str(m["id"]).startswith("gateway")],
                        init["agentCapabilities"]["providers"],
                        json.loads(listing.replace(api.base_url, "<the agent's ANTHROPIC_BASE_URL>")),
                    ]
                    main = {"providerId": "main", "apiType": "anthropic", "baseUrl": api.base_url}
                    for bad in ({"providerId": "other"}, {"apiType": "openai"}, {"baseUrl": "relative/path"}):
                        code, message, _ = await _error(conn, "providers/set", {**main, **bad})
                        out.append((code, message))
                    return out

    async def go() -> None:
        ours, theirs = await answers("ours"), await answers("reference")
        assert ours[0] == theirs[0] == GATEWAYS
        assert ours[1:] == theirs[1:], (ours, theirs)

    run_async(go())
