"""Prompt content end to end: what an ACP client puts in ``session/prompt`` reaches the model as
the Messages API content blocks the reference adapter sends (``promptToClaude``,
``blob-resources``). The real ACP SDK client spawns ``python -m lifecycle.agent``, which runs the
real bundled Claude Code CLI against the fake Anthropic API on 127.0.0.1; the assertions read the
request the fake API received (its last user message).

The PNG and PDF below are small literal files; the expected blocks are written out.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from .fakeapi import text_reply
from .harness import PNG, Script, agent, last_user_content, select

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

#: a minimal one-page PDF
PDF = base64.b64encode(
    b"%PDF-1.1\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
    b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
    b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 10 10]>>endobj\n"
    b"trailer<</Root 1 0 R>>\n%%EOF\n"
).decode()


def run_async(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 200))


def test_an_image_beside_text_and_an_image_alone_reach_the_model(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(text_reply("A red pixel."), text_reply("Still a red pixel."))
        async with agent(tmp_path, script, select("reject")) as run:
            response = await run.conn.prompt(
                session_id=run.sid,
                prompt=[
                    TextContentBlock(type="text", text="what is this?"),
                    ImageContentBlock(type="image", data=PNG, mime_type="image/png"),
                ],
            )
            assert response.stop_reason == "end_turn"
            blocks = last_user_content(run, 0)
            assert {"type": "text", "text": "what is this?"} in blocks
            assert {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}} in blocks
            assert [b["type"] for b in blocks if b["type"] != "text"] == ["image"]
            # An image-only prompt (Claude Code sets the media type from the bytes it is sent).
            alone = await run.conn.prompt(
                session_id=run.sid, prompt=[ImageContentBlock(type="image", data=PNG, mime_type="image/png")]
            )
            assert alone.stop_reason == "end_turn"
            images = [b for b in last_user_content(run, 1) if b["type"] == "image"]
            assert images == [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]
            assert run.texts() == ["A red pixel.", "Still a red pixel."]

    run_async(go())


def test_an_image_url_a_pdf_blob_an_image_blob_and_text_context_reach_the_model(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(text_reply("Read them all."))
        async with agent(tmp_path, script, select("reject")) as run:
            cwd = Path(run.workspace.cwd)
            notes = (cwd / "notes.md").as_uri()
            response = await run.conn.prompt(
                session_id=run.sid,
                prompt=[
                    TextContentBlock(type="text", text="compare these"),
                    ImageContentBlock(type="image", data="", mime_type="image/png", uri="https://example.com/a.png"),
                    EmbeddedResourceContentBlock(
                        type="resource",
                        resource=BlobResourceContents(
                            uri="file:///docs/spec.pdf", blob=PDF, mime_type="application/pdf"
                        ),
                    ),
                    EmbeddedResourceContentBlock(
                        type="resource",
                        resource=BlobResourceContents(uri="file:///img/dot.png", blob=PNG, mime_type="image/png"),
                    ),
                    EmbeddedResourceContentBlock(
                        type="resource", resource=TextResourceContents(uri=notes, text="# Notes\nremember the milk")
                    ),
                    ResourceContentBlock(type="resource_link", uri="file:///tmp/linked.txt", name="linked.txt"),
                ],
            )
            assert response.stop_reason == "end_turn"
            blocks = last_user_content(run)
            # In order: the text, the URL image, each blob after its link, the text resource's
            # link, the resource link; the context block last (Claude Code ends the last text of
            # the prompt with a newline of its own).
            start = [b.get("text") for b in blocks].index("compare these")
            mine = blocks[start : start + 9]
            mine[-1] = {**mine[-1], "text": mine[-1]["text"].removesuffix("\n")}
            assert mine == [
                {"type": "text", "text": "compare these"},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
                {"type": "text", "text": "[@spec.pdf](file:///docs/spec.pdf)"},
                {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}},
                {"type": "text", "text": "[@dot.png](file:///img/dot.png)"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                {"type": "text", "text": f"[@notes.md]({notes})"},
                {"type": "text", "text": "@file:///tmp/linked.txt"},
                {"type": "text", "text": f'\n<context ref="{notes}">\n# Notes\nremember the milk\n</context>'},
            ]

    run_async(go())


def test_audio_is_refused_and_the_session_goes_on(tmp_path: Path) -> None:
    async def go() -> None:
        script = Script(text_reply("Text works."))
        async with agent(tmp_path, script, select("reject")) as run:
            with pytest.raises(RequestError) as refused:
                await run.conn.prompt(
                    session_id=run.sid,
                    prompt=[
                        TextContentBlock(type="text", text="listen"),
                        AudioContentBlock(type="audio", data="UklGRg==", mime_type="audio/wav"),
                    ],
                )
            assert refused.value.code == -32602
            assert str(refused.value) == "Invalid params: Content blocks of type audio are not supported"
            assert refused.value.data == {"type": "audio"}
            assert run.api.message_requests == []  # nothing reached Claude
            response = await run.prompt("just text then")
            assert response.stop_reason == "end_turn"
            assert run.texts() == ["Text works."]
            assert last_user_content(run)[-1] == {"type": "text", "text": "just text then"}

    run_async(go())
