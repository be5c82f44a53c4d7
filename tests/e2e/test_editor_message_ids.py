"""``messageId`` on streamed chunks (issue 30, point 7), on the real bundled Claude Code CLI through
the real ACP SDK client, with the fake Anthropic API on 127.0.0.1 as the only fake.

The reference adapter 0.101.0 stamps every ``agent_message_chunk`` / ``agent_thought_chunk`` with
the id of Claude's message (``messageIdForGrouping``: the API message's ``id``, the same at
``message_start``, on the consolidated message and in the transcript), so a client groups one
message's chunks. Expected here: each chunk's ``messageId`` is the id Claude Code stored for that
message in its transcript (read from the file, not from the agent), the same on every chunk of a
message and another for the next message.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .fakeapi import MessageReply, text_reply
from .harness import Script, _fill_cwd, agent, run_async, select, tool_use

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]


def test_every_chunk_of_a_message_carries_claudes_message_id(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(
            MessageReply(
                [
                    {"type": "thinking", "thinking": "Let me think.", "chunks": ["Let me ", "think."]},
                    {"type": "text", "text": "I'll write it."},
                    tool_use("Write", "toolu_m", file_path="{cwd}/m.txt", content="m\n"),
                ],
                stop_reason="tool_use",
                text_chunks=["I'll ", "write it."],
            ),
            text_reply("Done.", chunks=["Do", "ne."]),
        )
        async with agent(tmp_path, script, select("allow-once")) as run:
            _fill_cwd(script, run)
            assert (await run.prompt("write m")).stop_reason == "end_turn"
            stored = [
                e["message"]["id"]
                for e in run.workspace.transcript(run.sid)
                if e.get("type") == "assistant" and e["message"].get("model") != "<synthetic>"
            ]
            first, second = dict.fromkeys(stored)  # one id per API message (a message may span entries)
            assert first.startswith("msg_") and second.startswith("msg_") and first != second
            seen = [
                (u["sessionUpdate"], u["content"]["text"], u.get("messageId"))
                for u in run.updates()
                if u["sessionUpdate"] in ("agent_message_chunk", "agent_thought_chunk")
            ]
            assert seen == [
                ("agent_thought_chunk", "Let me ", first),
                ("agent_thought_chunk", "think.", first),
                ("agent_message_chunk", "I'll ", first),
                ("agent_message_chunk", "write it.", first),
                ("agent_message_chunk", "Do", second),
                ("agent_message_chunk", "ne.", second),
            ]

    run_async(go())
