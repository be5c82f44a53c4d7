"""Messages Claude Code replaces (CLI 2.1.337's ``supersedes``, issue 49.3): the real Claude Code
CLI, ``python -m lifecycle.agent`` and the real ACP client, against the fake Anthropic API.

CLI 2.1.337 names, on an assistant message, the earlier messages it replaces (``supersedes``:
"Uuids of earlier messages that this message replaces: after a refusal fallback, or after a
response whose tool call could not be parsed. It can name user messages too [...]. Remove the
named messages when this one arrives", ``sdk.d.ts`` of npm ``@anthropic-ai/claude-agent-sdk``
0.3.337). Produced here by a refusal fallback whose refused attempts had begun to answer: the first
model refuses every request after a few words ("Here is the answ"), Claude Code tells it so and
asks again (refused again, same words), then asks the fallback model, whose answer names the second
refused attempt as replaced. What CLI 2.1.337 printed and stored when this was written: the
replaced attempt is printed (the agent shows it live) and left out of the transcript (a replay does
not show it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .fakeapi import MessageReply, refusal_reply
from .harness import Script, agent, first_model_refuses, never, run_async

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

PARTIAL = "Here is the answ"
ANSWER = "Here is the answer."
FALLBACK = MessageReply([{"type": "text", "text": ANSWER}])


def _refused() -> MessageReply:
    refused = refusal_reply()
    refused.blocks = [{"type": "text", "text": PARTIAL}]
    return refused


def test_a_replaced_attempt_is_shown_as_printed_live_and_not_replayed(tmp_path: Path) -> None:
    async def go() -> None:
        async with agent(tmp_path, Script(then=first_model_refuses(_refused, FALLBACK)), never) as run:
            answer = await run.prompt("hi")
            live = [t for t in run.texts() if t in (PARTIAL, ANSWER)]
            sid, cwd, log = run.sid, str(run.workspace.cwd), run.workspace.log()
        # Live: each attempt as Claude Code printed it (ACP cannot take a shown chunk back), the
        # fallback's answer once; the turn ends on it. The agent read the replacement off the
        # raw line (the SDK's AssistantMessage has no ``supersedes``).
        assert answer.stop_reason == "end_turn", answer
        assert live == [PARTIAL, PARTIAL, ANSWER], live
        replaced = [e["count"] for e in log if e.get("event") == "runtime.messages_replaced"]
        assert replaced == [1], replaced
        async with agent(tmp_path, Script(), never) as run:
            await run.conn.load_session(cwd=cwd, session_id=sid, mcp_servers=[])
            replayed = [t for t in run.texts() if t in (PARTIAL, ANSWER)]
        # Replayed: the conversation Claude Code kept, the replaced attempt left out.
        assert replayed == [PARTIAL, ANSWER], replayed

    run_async(go())
