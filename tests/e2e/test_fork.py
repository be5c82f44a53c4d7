"""``session/fork``, ``session/delete`` and ``additionalDirectories`` end to end: the real Claude Code
CLI through ``python -m lifecycle.agent`` and the real ACP client, against the fake Anthropic API.

What is expected comes from the ACP schema (``ForkSessionRequest``: the fork is a new session with
the source's history; ``DeleteSessionRequest``; ``additionalDirectories``: "additional workspace
roots to activate for this session"), the reference adapter 0.101.0, which advertises all three
(``sessionCapabilities``: ``additionalDirectories``, ``delete``, ``fork``), and Claude Code's
documented permission rules (https://code.claude.com/docs/en/permissions): a read inside a working
directory, ``--add-dir`` ones included, needs no approval; a read elsewhere is asked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import TextContentBlock

from .fakeapi import RequestRecord, text_reply
from .harness import (
    Run,
    Script,
    agent,
    body_of,
    is_prompt_suggestion,
    result_text,
    run_async,
    tool_results,
    tool_turn,
    tool_use,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def reject(params: dict[str, Any]) -> Any:
    return {"outcome": {"outcome": "selected", "optionId": "reject"}}


def _last_user_text(request: RequestRecord) -> str:
    messages = body_of(request).get("messages") or []
    users = [m for m in messages if m.get("role") == "user"]
    return json.dumps(users[-1]["content"]) if users else ""


class Echo(Script):
    """The model: answers each prompt "reply to <marker>" for the marker word it carries."""

    MARKERS = ("alpha", "beta", "gamma")

    def __call__(self, request: RequestRecord) -> Any:
        last = _last_user_text(request)
        said = [m for m in self.MARKERS if f"prompt-{m}" in last]
        return text_reply(f"reply-{said[0]}" if said else "nothing to add")


def conversation(run: Run, marker: str) -> str:
    """The whole request (JSON) in which the model was given the prompt ``marker``."""
    (request,) = [
        r for r in run.api.message_requests if not is_prompt_suggestion(r) and f"prompt-{marker}" in _last_user_text(r)
    ]
    return json.dumps(body_of(request)["messages"])


async def prompt(run: Run, session_id: str, text: str) -> Any:
    return await run.conn.prompt(session_id=session_id, prompt=[TextContentBlock(type="text", text=text)])


def test_initialize_advertises_fork_delete_and_additional_directories(tmp_path: Path) -> None:
    async def go() -> None:
        async with agent(tmp_path, Script(), reject) as run:
            (answer,) = [m for m in run.incoming() if m.get("id") == 0 and "result" in m]
            caps = answer["result"]["agentCapabilities"]["sessionCapabilities"]
            assert {"fork", "delete", "additionalDirectories"} <= set(caps)
            assert caps["fork"] == caps["delete"] == caps["additionalDirectories"] == {}

    run_async(go())


def test_a_fork_has_the_history_and_both_go_on_separately(tmp_path: Path) -> None:
    async def go() -> None:
        async with agent(tmp_path, Echo(), reject) as run:
            cwd = str(run.workspace.cwd)
            assert (await prompt(run, run.sid, "prompt-alpha")).stop_reason == "end_turn"
            fork = await run.conn.fork_session(session_id=run.sid, cwd=cwd)
            assert fork.session_id != run.sid
            assert fork.modes is not None
            assert (await prompt(run, fork.session_id, "prompt-beta")).stop_reason == "end_turn"
            assert (await prompt(run, run.sid, "prompt-gamma")).stop_reason == "end_turn"
            in_fork, in_source = conversation(run, "beta"), conversation(run, "gamma")
            # The fork was given the source's turn, and its own; never the source's later one.
            assert "prompt-alpha" in in_fork and "reply-alpha" in in_fork
            assert "gamma" not in in_fork
            # The source goes on with its own history: the fork's turn is not in it.
            assert "prompt-alpha" in in_source and "reply-alpha" in in_source
            assert "beta" not in in_source
            listed = {s.session_id for s in (await run.conn.list_sessions(cwd=cwd)).sessions}
            assert {run.sid, fork.session_id} <= listed

    run_async(go())


def test_forking_an_unknown_session_is_resource_not_found(tmp_path: Path) -> None:
    async def go() -> None:
        async with agent(tmp_path, Script(), reject) as run:
            unknown = "3f1e0a52-0c7a-4d40-9a55-6b7f1c2d9e01"
            with pytest.raises(RequestError) as caught:
                await run.conn.fork_session(session_id=unknown, cwd=str(run.workspace.cwd))
            assert caught.value.code == -32002  # the reference's sessionNotFound

    run_async(go())


def test_delete_removes_the_stored_session(tmp_path: Path) -> None:
    async def go() -> None:
        async with agent(tmp_path, Echo(), reject) as run:
            cwd = str(run.workspace.cwd)
            assert (await prompt(run, run.sid, "prompt-alpha")).stop_reason == "end_turn"
            listed = {s.session_id for s in (await run.conn.list_sessions(cwd=cwd)).sessions}
            assert run.sid in listed
            assert await run.conn._conn.send_request("session/delete", {"sessionId": run.sid}) == {}
            listed = {s.session_id for s in (await run.conn.list_sessions(cwd=cwd)).sessions}
            assert run.sid not in listed
            with pytest.raises(RequestError):  # no stored transcript any more
                await run.conn.load_session(session_id=run.sid, cwd=cwd, mcp_servers=[])
            # A session that was never stored is deleted already (ACP: delete is idempotent).
            unknown = {"sessionId": "3f1e0a52-0c7a-4d40-9a55-6b7f1c2d9e01"}
            assert await run.conn._conn.send_request("session/delete", unknown) == {}

    run_async(go())


def test_a_read_in_an_additional_directory_is_allowed_by_claude_codes_rules(tmp_path: Path) -> None:
    """The same Read, in a session without and one with the folder as an additional directory:
    asked (and rejected) in the first, run unasked in the second."""
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "notes.txt").write_text("EXTRA-NOTES-MARKER-41\n")

    async def go() -> None:
        script = Script(
            tool_turn(tool_use("Read", "t_plain", file_path=f"{extra}/notes.txt")),
            text_reply("not read"),
            tool_turn(tool_use("Read", "t_added", file_path=f"{extra}/notes.txt")),
            text_reply("read"),
        )
        async with agent(tmp_path, script, reject) as run:
            assert (await prompt(run, run.sid, "read it")).stop_reason == "end_turn"
            assert [q["toolCall"]["toolCallId"] for q in run.client.questions] == ["t_plain"]
            cwd = str(run.workspace.cwd)
            added = await run.conn.new_session(cwd=cwd, mcp_servers=[], additional_directories=[str(extra)])
            assert (await prompt(run, added.session_id, "read it again")).stop_reason == "end_turn"
            assert [q["toolCall"]["toolCallId"] for q in run.client.questions] == ["t_plain"]
            conversation = [r for r in run.api.message_requests if not is_prompt_suggestion(r)]
            (result,) = tool_results(conversation[3])
            assert result["tool_use_id"] == "t_added"
            assert not result.get("is_error")
            assert "EXTRA-NOTES-MARKER-41" in result_text(result)
            assert run.tool_state("t_added")["status"] == "completed"
            with pytest.raises(RequestError):  # entries must be absolute paths
                await run.conn.new_session(cwd=cwd, mcp_servers=[], additional_directories=["relative/dir"])

    run_async(go())
