"""Bad bytes from the client's disk or the client itself (issue 29, point 5): never ``-32603``.

* ``session/load`` of a Claude Code transcript (``$CLAUDE_CONFIG_DIR/projects/<sanitised cwd>/
  <session>.jsonl``) that the SDK's ``get_session_messages`` cannot decode (it reads the whole file
  as strict UTF-8) loads every complete line: a last line torn inside a UTF-8 character is skipped,
  a line with a byte that is not UTF-8 is replayed with U+FFFD in its place (so the ``parentUuid``
  chain through it holds, as the reference adapter's Node reader keeps it), a line that is not JSON
  is skipped; the user is told which lines, by number, in one warning notice after the replay (the
  file's path is not named). A transcript that is UTF-8 throughout but has a line that is not JSON
  loses nothing else either (the SDK skips that line itself).
* ``session/prompt`` with a text blob whose ``charset`` is no character encoding (``idna``) is
  ``-32602`` naming the charset; nothing reaches Claude and the session goes on.

The transcripts are the real CLI's (two turns against the fake API, then damaged here); the agent
that loads them is a second process on the same workspace, as an editor restarted later would be.
The notice's words are this project's (lifecycle/history.py, ``unreadable_notice``); the replayed
texts are the prompts and the fake model's answers written below.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import BlobResourceContents, EmbeddedResourceContentBlock, TextContentBlock

from .claude_cli import sanitize_path
from .fakeapi import text_reply
from .harness import Run, Script, agent, body_of, last_user_content, select

NOTICES = {"session": {"notices": {}}}  # raw clientCapabilities: a client that shows ACP notices
TITLE = "Part of this session's history could not be read"
FIRST, SECOND = "first question", "second question"
FIRST_ANSWER, SECOND_ANSWER = "First answer.", "Zweite Antwort: größer."
#: what a load of the undamaged session replays: (update kind, text)
REPLAY = [
    ("user_message_chunk", FIRST),
    ("agent_message_chunk", FIRST_ANSWER),
    ("user_message_chunk", SECOND),
    ("agent_message_chunk", SECOND_ANSWER),
]


def run_async(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 200))


def transcript_path(run: Run, sid: str) -> Path:
    cwd = os.path.realpath(run.workspace.cwd)
    return run.workspace.config_dir / "projects" / sanitize_path(cwd) / f"{sid}.jsonl"


async def wait_for_bytes(path: Path, needle: bytes, timeout: float = 30) -> bytes:
    """The file's bytes once they hold ``needle`` (Claude Code writes its transcript as it goes),
    polled until a deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        data = path.read_bytes() if path.exists() else b""
        if needle in data:
            return data
        await asyncio.sleep(0.05)
    raise AssertionError(f"the transcript never held {needle!r}")


def line_number(data: bytes, needle: bytes) -> int:
    """The 1-based number of the line holding the first ``needle``."""
    return data[: data.index(needle)].count(b"\n") + 1


async def load(run: Run, sid: str) -> list[tuple[str, Any]]:
    """``session/load`` of ``sid``: what it replayed before it answered with the session's state,
    as (update kind, text), or the notice's fields (the session's state updates left out)."""
    start = len(run.incoming())
    answer = await run.conn.load_session(cwd=str(run.workspace.cwd), session_id=sid, mcp_servers=[])
    assert answer.modes is not None and answer.modes.current_mode_id == "default"
    out: list[tuple[str, Any]] = []
    for m in run.incoming()[start:]:
        if m.get("method") != "session/update" or m["params"]["sessionId"] != sid:
            continue
        update = m["params"]["update"]
        kind = update["sessionUpdate"]
        if kind == "notice":
            out.append((kind, {k: v for k, v in update.items() if k != "sessionUpdate"}))
        elif kind in ("user_message_chunk", "agent_message_chunk"):
            out.append((kind, update["content"]["text"]))
    return out


def notice(description: str) -> tuple[str, dict[str, str]]:
    return ("notice", {"severity": "warning", "title": TITLE, "description": description})


# ------------------------------------------------------------------ session/load


@pytest.mark.e2e
@pytest.mark.timeout(240)
def test_a_transcript_with_bad_bytes_loads_every_readable_line_and_says_what_it_skipped(tmp_path: Path) -> None:
    async def go() -> None:
        # 1. The real CLI writes a two-turn transcript; that agent then goes away.
        script = Script(text_reply(FIRST_ANSWER), text_reply(SECOND_ANSWER))
        async with agent(tmp_path, script, select("reject"), raw_caps=NOTICES) as run:
            assert (await run.prompt(FIRST)).stop_reason == "end_turn"
            assert (await run.prompt(SECOND)).stop_reason == "end_turn"
            sid = run.sid
            data = await wait_for_bytes(transcript_path(run, sid), SECOND_ANSWER.encode())
        o_umlaut = SECOND_ANSWER.encode().index("ö".encode())
        assert "ö".encode() == b"\xc3\xb6"
        # 2. Damaged versions of it: two copies under session ids of their own, and the original.
        #    torn: the file ends one byte into the "ö" of the second answer's line (a crash mid-write)
        end = data.index(SECOND_ANSWER.encode()) + o_umlaut + 1
        torn = data[:end]
        assert torn.endswith(b"\xc3")
        torn_line = line_number(data, SECOND_ANSWER.encode())
        #    stray: a byte that is no UTF-8 in the first answer, and a line that is no JSON after it
        at = data.index(FIRST_ANSWER.encode())
        stray = data[:at] + b"First \xffnswer." + data[at + len(FIRST_ANSWER) :]
        cut = stray.index(b"\n", at) + 1
        stray = stray[:cut] + b'{"type":"assistant","uuid":\n' + stray[cut:]
        stray_line = line_number(data, FIRST_ANSWER.encode())
        garbage_line = stray_line + 1
        #    garbage alone: the same line that is no JSON in a transcript that is UTF-8 throughout
        garbage = data[:cut] + b"not json at all\n" + data[cut:]
        ids = {name: str(uuid.uuid4()) for name in ("torn", "garbage")}
        folder = transcript_path(run, sid).parent
        (folder / f"{ids['torn']}.jsonl").write_bytes(torn)
        (folder / f"{ids['garbage']}.jsonl").write_bytes(garbage)
        (folder / f"{sid}.jsonl").write_bytes(stray)

        # 3. A later agent on the same workspace loads them.
        script = Script(text_reply("Still here."))
        async with agent(tmp_path, script, select("reject"), raw_caps=NOTICES) as later:
            got = await load(later, ids["torn"])
            assert got == [
                *REPLAY[:3],
                notice(f"Skipped line {torn_line} of the stored transcript: cut off or not JSON."),
            ]
            got = await load(later, sid)
            assert got == [
                REPLAY[0],
                ("agent_message_chunk", "First \ufffdnswer."),
                *REPLAY[2:],
                notice(
                    f"Skipped line {garbage_line} of the stored transcript: cut off or not JSON. "
                    f"Bytes that are not UTF-8 in line {stray_line} are shown as \ufffd."
                ),
            ]
            got = await load(later, ids["garbage"])
            assert got == REPLAY  # nothing but the garbage line is lost
            # The loaded session goes on: Claude Code resumes it and answers.
            assert (await later.conn.prompt(session_id=sid, prompt=[text("and now?")])).stop_reason == "end_turn"
            assert "Still here." in later.texts()
            asked = [json.dumps(body_of(r)["messages"]) for r in later.api.message_requests]
            (resumed,) = [m for m in asked if "and now?" in m and "SUGGESTION MODE" not in m]
            assert FIRST in resumed and SECOND in resumed  # with the history Claude Code read itself
            log = later.workspace.log()
            loads = [e for e in log if e.get("event") == "session.load" and e.get("session_id") == ids["torn"]]
            assert [(e["skipped_lines"], e["repaired_lines"]) for e in loads] == [(1, 0)]
            assert str(folder) not in later.workspace.stderr_path.read_text()  # no private path logged

    run_async(go())


def text(value: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=value)


# ------------------------------------------------------------------ session/prompt


def idna_blob() -> EmbeddedResourceContentBlock:
    blob = base64.b64encode(b"xn--bcher-kva.example").decode()
    resource = BlobResourceContents(uri="file:///tmp/hosts.txt", blob=blob, mime_type="text/plain; charset=idna")
    return EmbeddedResourceContentBlock(type="resource", resource=resource)


@pytest.mark.e2e
@pytest.mark.timeout(240)
def test_a_blob_in_a_charset_that_is_no_text_encoding_is_invalid_params_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        script = Script(text_reply("Plain text works."))
        async with agent(tmp_path, script, select("reject")) as run:
            with pytest.raises(RequestError) as refused:
                await run.conn.prompt(session_id=run.sid, prompt=[text("read this"), idna_blob()])
            assert refused.value.code == -32602
            assert str(refused.value) == 'Invalid params: unsupported charset "idna"'
            assert run.api.message_requests == []  # nothing reached Claude
            response = await run.prompt("just text then")
            assert response.stop_reason == "end_turn"
            assert run.texts() == ["Plain text works."]
            assert last_user_content(run)[-1] == {"type": "text", "text": "just text then"}

    run_async(go())
