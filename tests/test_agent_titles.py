"""lifecycle/agent/titles.py: when a session's title is asked for, what is published, and when
nothing is. Expected values are literals or the reference adapter's documented rules
(``session-titles.js``: 256 characters with "…", whitespace collapsed, at least 10 characters of
prompt text, one title per session, a stored title wins)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from lifecycle.agent.titles import SessionTitle, prompt_text, sanitize_title

MS_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


class _Fake:
    def __init__(self, *, stored: str | None = None, titles: list[Any] | None = None) -> None:
        self.sent: list[dict[str, Any]] = []
        self.asked: list[str] = []
        self.stored = stored
        self.titles = list(titles or [])

    async def publish(self, update: Any) -> None:
        self.sent.append(dict(update))

    async def read_stored(self) -> str | None:
        return self.stored

    async def generate(self, description: str) -> str | None:
        self.asked.append(description)
        answer = self.titles.pop(0) if self.titles else None
        if isinstance(answer, Exception):
            raise answer
        return answer


def _run(fake: _Fake, *prompts: Any) -> SessionTitle:
    async def go() -> SessionTitle:
        title = SessionTitle("s1", fake.publish, fake.read_stored)
        for content in prompts:
            title.prompt_sent(content, fake.generate)
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            await asyncio.sleep(0)
        await title.close()
        return title

    return asyncio.run(go())


def test_a_generated_title_is_published_once_with_milliseconds() -> None:
    fake = _Fake(titles=["Login bug in auth.py"])
    _run(fake, "Please fix the login bug in auth.py", "and now the tests please")
    assert fake.asked == ["Please fix the login bug in auth.py"]
    [update] = fake.sent
    assert (update["sessionUpdate"], update["title"]) == ("session_info_update", "Login bug in auth.py")
    assert MS_Z.match(update["updatedAt"]), update


def test_a_short_prompt_asks_nothing_and_the_next_one_does() -> None:
    fake = _Fake(titles=["Greeting then a refactor"])
    _run(fake, "hi", [{"type": "text", "text": "refactor the parser"}, {"type": "image", "data": "x"}])
    assert fake.asked == ["refactor the parser"]
    assert [u["title"] for u in fake.sent] == ["Greeting then a refactor"]


def test_no_title_or_a_refusal_lets_the_next_prompt_try_again() -> None:
    fake = _Fake(titles=[None, RuntimeError("refused"), "Third time"])
    _run(fake, "first long prompt", "second long prompt", "third long prompt")
    assert fake.asked == ["first long prompt", "second long prompt", "third long prompt"]
    assert [u["title"] for u in fake.sent] == ["Third time"]


def test_a_stored_title_is_published_and_never_titled_over() -> None:
    fake = _Fake(stored="My renamed session", titles=["Something else"])
    _run(fake, "continue where we left off", "more work on it")
    assert fake.asked == []
    assert [u["title"] for u in fake.sent] == ["My renamed session"]


def test_sanitizing_is_the_references() -> None:
    assert sanitize_title("  Fix\n\nthe   bug\t ") == "Fix the bug"
    long = "word " * 100
    cut = sanitize_title(long)
    assert len(cut) == 256 and cut.endswith("…") and cut[:-1] == ("word " * 52)[:255]
    assert sanitize_title("x" * 256) == "x" * 256


def test_the_prompts_text_blocks_one_a_line() -> None:
    blocks = [{"type": "text", "text": "a"}, {"type": "resource_link"}, {"type": "text", "text": "b "}]
    assert prompt_text(blocks) == "a\nb"
    assert prompt_text("  plain  ") == "plain"


def test_a_closed_session_publishes_nothing_for_a_title_in_flight() -> None:
    async def go() -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []
        gate = asyncio.Event()

        async def publish(update: Any) -> None:
            sent.append(dict(update))

        async def stored() -> str | None:
            return None

        async def generate(description: str) -> str | None:
            await gate.wait()
            return "Too late"

        title = SessionTitle("s1", publish, stored)
        title.prompt_sent("a prompt long enough", generate)
        await asyncio.sleep(0)
        await title.close()
        gate.set()
        await asyncio.sleep(0)
        return sent

    assert asyncio.run(go()) == []


def test_a_title_goes_out_through_the_publisher_masked_like_transcript_prose() -> None:
    """A title is the model's text about what the user typed: a credential in it is masked as
    in an agent message (docs/security.md, "What is masked where")."""
    from acp_harness import FAKE_API_KEY, RecordingClient

    from lifecycle import SessionLedger
    from lifecycle.acp import SessionPublisher

    key = FAKE_API_KEY

    async def go() -> RecordingClient:
        client = RecordingClient()
        pub = SessionPublisher(client, SessionLedger("s1", negotiated=True, epoch="e"))

        async def publish(update: Any) -> None:
            await pub.show([dict(update)])

        fake = _Fake(titles=[f"Rotate {key} today"])
        title = SessionTitle("s1", publish, fake.read_stored)
        title.prompt_sent("please rotate my leaked key", fake.generate)
        for _ in range(5):
            await asyncio.sleep(0)
        await title.close()
        return client

    client = asyncio.run(go())
    [(sid, update)] = client.updates
    wire = update.model_dump(by_alias=True, exclude_none=True)
    assert sid == "s1" and wire["sessionUpdate"] == "session_info_update"
    assert key not in wire["title"] and wire["title"].startswith("Rotate ") and wire["title"].endswith(" today")
