"""Claude Code's stored sessions as the agent reads them (:mod:`lifecycle.agent.stored`), in process:
the tolerant load (a transcript the SDK cannot decode, read line by line) builds exactly what the
SDK's ``get_session_messages`` builds, on every transcript recorded from the real CLI (differential).
The load of a damaged transcript through the real agent and CLI: ``e2e/test_bad_bytes.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, documented_count
from e2e.claude_cli import sanitize_path

#: the real CLI's transcripts recorded in this repository (tests/fixtures/README.md)
TRANSCRIPTS = sorted(FIXTURES.glob("*.transcript.jsonl"))


def stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transcript: bytes) -> tuple[str, Path]:
    """A session stored under a fresh id, as Claude Code stores it for the project folder
    ``tmp_path/project`` (``CLAUDE_CONFIG_DIR`` set to ``tmp_path/config``): its id and folder."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    cwd = tmp_path / "project"
    cwd.mkdir()
    sid = str(uuid.uuid4())
    folder = tmp_path / "config" / "projects" / sanitize_path(os.path.realpath(cwd))
    folder.mkdir(parents=True)
    (folder / f"{sid}.jsonl").write_bytes(transcript)
    return sid, cwd


def test_the_fixtures_hold_every_documented_transcript() -> None:
    assert len(TRANSCRIPTS) == documented_count("transcripts")


@pytest.mark.parametrize("recorded", TRANSCRIPTS, ids=lambda p: p.name.split(".")[0])
def test_differential_the_tolerant_load_builds_what_get_session_messages_builds(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Differential (the agent's fallback against the SDK's own reader, on transcripts both can
    read): the messages built from :func:`read_transcript`'s lines equal ``get_session_messages``'s."""
    import claude_agent_sdk

    import lifecycle.agent as agent_module
    from lifecycle.agent.stored import stored_messages

    sid, cwd = stored(tmp_path, monkeypatch, recorded.read_bytes())
    expected = claude_agent_sdk.get_session_messages(sid, directory=str(cwd))
    assert expected  # every recording holds at least its prompt

    def undecodable(session_id: str, directory: str) -> Any:
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    monkeypatch.setattr(agent_module, "get_session_messages", undecodable)
    got, read = asyncio.run(stored_messages(sid, str(cwd)))
    assert got == expected
    assert read is not None and (read.skipped, read.repaired) == ((), ())


def _user(mode: str | None, **extra: Any) -> str:
    entry: dict[str, Any] = {"type": "user", "message": {"role": "user", "content": "hi"}, "uuid": str(uuid.uuid4())}
    if mode is not None:
        entry["permissionMode"] = mode
    return json.dumps({**entry, **extra})


PLAN_EXIT = json.dumps({"type": "attachment", "attachment": {"type": "plan_mode_exit"}})


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        # Claude Code 2.1.337 writes ``permissionMode`` on each prompt's entry (seen in its
        # transcripts); the last one is the mode the session comes back in (the reference's
        # ``readResumedTail``, dist/resumed-session.js).
        ([_user("default"), _user("acceptEdits")], "acceptEdits"),
        ([_user("acceptEdits"), _user("default")], "default"),
        ([_user("plan")], "plan"),
        ([_user("plan"), PLAN_EXIT], None),  # a plan left: not plan mode again
        ([_user("acceptEdits"), _user("plan", isSidechain=True)], "acceptEdits"),  # a subagent's
        ([_user("acceptEdits"), _user("sudo")], None),  # no permission mode
        ([_user(None)], None),
        (["{not json", _user("dontAsk"), '{"type": "assistant", "permissionMode": "plan"}'], "dontAsk"),
    ],
)
def test_the_mode_a_stored_session_last_ran_in(
    lines: list[str], expected: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lifecycle.agent.stored import stored_mode

    sid, cwd = stored(tmp_path, monkeypatch, ("\n".join(lines) + "\n").encode())
    assert asyncio.run(stored_mode(sid, str(cwd))) == expected
    assert asyncio.run(stored_mode(str(uuid.uuid4()), str(cwd))) is None  # none stored
