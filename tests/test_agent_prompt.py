"""The ACP prompt as Claude Code's user message (lifecycle.agent.prompt): the reference adapter's
``promptToClaude`` and ``blob-resources`` (dist/acp-agent.js, dist/blob-resources.js), written out
as literals; and the agent's ``session/prompt`` answering -32602 for what it refuses, with
nothing sent to Claude."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import acp
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
from acp_harness import Wire, recording_agent

from lifecycle.agent.prompt import PROMPT_CAPABILITIES, PromptRefused, prompt_capabilities, prompt_content, uri_link

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
PDF = "JVBERi0xLjEK"  # "%PDF-1.1\n"


def text(t: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=t)


def image(data: str = PNG, mime: str = "image/png", uri: str | None = None) -> ImageContentBlock:
    return ImageContentBlock(type="image", data=data, mime_type=mime, uri=uri)


def blob(uri: str, data: str, mime: str | None) -> EmbeddedResourceContentBlock:
    return EmbeddedResourceContentBlock(
        type="resource", resource=BlobResourceContents(uri=uri, blob=data, mime_type=mime)
    )


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


# ------------------------------------------------------------------ capabilities


def test_the_advertised_prompt_capabilities_are_images_and_embedded_context_without_audio() -> None:
    assert dict(PROMPT_CAPABILITIES) == {"image": True, "audio": False, "embeddedContext": True}
    # the ACP SDK's model of it (server.py's initialize) dumps the same JSON (startup's fast one)
    model = prompt_capabilities()
    assert model.model_dump(by_alias=True, exclude_none=True) == {
        "image": True,
        "audio": False,
        "embeddedContext": True,
    }


# ------------------------------------------------------------------ text alone stays a string


def test_text_links_and_text_resources_are_one_string_as_before() -> None:
    blocks = [
        text("explain"),
        ResourceContentBlock(type="resource_link", uri="file:///src/a.py", name="a.py"),
        EmbeddedResourceContentBlock(
            type="resource", resource=TextResourceContents(uri="file:///src/b.py", text="print('b')")
        ),
        text("thanks"),
    ]
    assert prompt_content(blocks) == (
        "explain\n\n@file:///src/a.py\n\n[@b.py](file:///src/b.py)\n\nthanks\n\n"
        "\n<context ref=\"file:///src/b.py\">\nprint('b')\n</context>"
    )


def test_json_blocks_are_read_like_models() -> None:
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": "see"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
    ]
    assert prompt_content(blocks) == [
        {"type": "text", "text": "see"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
    ]


# ------------------------------------------------------------------ images


def test_images_are_base64_or_url_blocks_in_place() -> None:
    content = prompt_content(
        [text("before"), image(), image("", "image/png", "https://example.com/x.png"), text("after")]
    )
    assert content == [
        {"type": "text", "text": "before"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/x.png"}},
        {"type": "text", "text": "after"},
    ]


def test_an_image_alone_is_a_prompt() -> None:
    assert prompt_content([image()]) == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    ]
    assert prompt_content([text("  "), image()]) == [
        {"type": "text", "text": "  "},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
    ]


@pytest.mark.parametrize(
    ("mime", "sent"),
    [
        ("image/jpg", "image/jpeg"),
        ("IMAGE/PNG", "image/png"),
        ("image/webp; q=1", "image/webp"),
        ("image/gif", "image/gif"),
    ],
)
def test_image_types_are_normalised(mime: str, sent: str) -> None:
    (block,) = prompt_content([image(mime=mime)])
    assert isinstance(block, dict) and block["source"]["media_type"] == sent


@pytest.mark.parametrize(
    ("block", "message"),
    [
        (image(mime="image/bmp"), "Images of type image/bmp are not supported (PNG, JPEG, GIF or WebP)"),
        (image("", "image/png", "file:///tmp/x.png"), "an image needs base64 data or an http(s) URL"),
        (image("", "image/png"), "an image needs base64 data or an http(s) URL"),
        (image("not base64!"), "the image is not valid base64"),
    ],
)
def test_images_claude_cannot_be_sent_are_refused(block: Any, message: str) -> None:
    with pytest.raises(PromptRefused) as refused:
        prompt_content([text("look"), block])
    assert refused.value.message == message


# ------------------------------------------------------------------ blobs and context


def test_image_and_pdf_blobs_follow_their_link() -> None:
    content = prompt_content(
        [
            blob("file:///docs/spec.pdf", PDF, "application/pdf"),
            blob("zed://buffer/7/shot.png", PNG, "image/jpg"),
            blob("https://example.com/p.gif", PNG, "image/gif"),
        ]
    )
    assert content == [
        {"type": "text", "text": "[@spec.pdf](file:///docs/spec.pdf)"},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}},
        {"type": "text", "text": "[@shot.png](zed://buffer/7/shot.png)"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": PNG}},
        {"type": "text", "text": "https://example.com/p.gif"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": PNG}},
    ]


def test_text_blobs_are_decoded_into_context_blocks_placed_last() -> None:
    content = prompt_content(
        [
            blob("file:///a.csv", b64("caf\xe9".encode("latin-1")), "text/csv; charset=iso-8859-1"),
            image(),
            blob("file:///b.json", b64(b"\xef\xbb\xbf{}"), "application/json"),
            blob("file:///c.txt", b64(b"ok"), 'text/plain; charset="UTF-8"'),
            blob("file:///d.svg", b64(b"<svg/>"), "image/svg+xml"),
        ]
    )
    assert content == [
        {"type": "text", "text": "[@a.csv](file:///a.csv)"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "text", "text": "[@b.json](file:///b.json)"},
        {"type": "text", "text": "[@c.txt](file:///c.txt)"},
        {"type": "text", "text": "[@d.svg](file:///d.svg)"},
        {"type": "text", "text": '\n<context ref="file:///a.csv">\ncafé\n</context>'},
        {"type": "text", "text": '\n<context ref="file:///b.json">\n{}\n</context>'},
        {"type": "text", "text": '\n<context ref="file:///c.txt">\nok\n</context>'},
        {"type": "text", "text": '\n<context ref="file:///d.svg">\n<svg/>\n</context>'},
    ]


@pytest.mark.parametrize(
    ("mime", "message"),
    [
        ("application/zip", "Embedded resources of type application/zip are not supported"),
        (None, "Embedded resources of type None are not supported"),
    ],
)
def test_blobs_of_other_types_are_refused(mime: str | None, message: str) -> None:
    with pytest.raises(PromptRefused) as refused:
        prompt_content([text("unpack"), blob("file:///x.bin", b64(b"PK"), mime)])
    assert refused.value.message == message
    assert refused.value.data == {"type": "resource", "mimeType": mime}


#: charsets a text blob is decoded with, and what "caf\xe9" / its UTF-8 bytes become: (charset, bytes,
#: text). The texts are the charsets' own tables (ISO-8859-1, Windows-1252, UTF-16 LE with its BOM,
#: Shift_JIS's half-width katakana), not this module's output.
DECODED = [
    (None, "café".encode(), "café"),  # no charset: UTF-8 (docs/acp-agent.md, the module's rules)
    ("utf-8", "café".encode(), "café"),
    ("UTF8", b"caf\xc3\xa9", "café"),
    ("latin-1", b"caf\xe9", "café"),
    ("iso-8859-1", b"caf\xe9", "café"),
    ("cp1252", b"\x80 caf\xe9", "€ café"),
    ("utf-16", b"\xff\xfec\x00a\x00f\x00\xe9\x00", "café"),
    ("shift_jis", b"\xb6\xcc\xaa", "ｶﾌｪ"),
    ("utf-8", b"caf\xe9", "caf\ufffd"),  # bytes the charset does not map: U+FFFD, not a refusal
]


@pytest.mark.parametrize(("charset", "raw", "decoded"), DECODED)
def test_text_blobs_are_decoded_with_the_charset_they_name(charset: str | None, raw: bytes, decoded: str) -> None:
    mime = "text/plain" if charset is None else f"text/plain; charset={charset}"
    content = prompt_content([blob("file:///a.txt", b64(raw), mime)])
    assert content == f'[@a.txt](file:///a.txt)\n\n\n<context ref="file:///a.txt">\n{decoded}\n</context>'


#: charsets Python has a codec for that is no character encoding of text (a bytes or str transform,
#: an escape syntax, a domain-name encoding), and names no codec has.
REFUSED_CHARSETS = [
    "idna",
    "punycode",
    "rot13",
    "base64_codec",
    "base64",
    "hex",
    "zlib",
    "uu",
    "bz2",
    "quopri",
    "unicode_escape",
    "raw_unicode_escape",
    "undefined",
    "charmap",
    "no-such-charset",
    "x-user-defined",
]


@pytest.mark.parametrize("charset", REFUSED_CHARSETS)
def test_a_text_blob_in_a_charset_that_is_no_text_encoding_is_refused(charset: str) -> None:
    with pytest.raises(PromptRefused) as refused:
        prompt_content([text("read"), blob("file:///a.txt", b64(b"xn--bcher-kva"), f"text/plain; charset={charset}")])
    assert refused.value.message == f'unsupported charset "{charset}"'
    assert refused.value.data == {"type": "resource", "charset": charset}


def test_a_quoted_charset_is_read_and_a_long_one_is_cut_in_the_message() -> None:
    with pytest.raises(PromptRefused) as refused:
        prompt_content([blob("file:///a.txt", b64(b"x"), 'text/plain; Charset="IDNA"')])
    assert refused.value.message == 'unsupported charset "IDNA"'
    with pytest.raises(PromptRefused) as refused:
        prompt_content([blob("file:///a.txt", b64(b"x"), "text/plain; charset=" + "z" * 500)])
    assert refused.value.message == 'unsupported charset "' + "z" * 60 + '"'


def test_a_blob_that_is_not_base64_is_refused() -> None:
    with pytest.raises(PromptRefused) as refused:
        prompt_content([blob("file:///x.pdf", "%%%", "application/pdf")])
    assert refused.value.message == "the blob is not valid base64"


@pytest.mark.parametrize(
    ("uri", "link"),
    [
        ("file:///home/u/a.txt", "[@a.txt](file:///home/u/a.txt)"),
        ("file:///home/u/dir/", "[@/home/u/dir/](file:///home/u/dir/)"),
        ("zed://x/y", "[@y](zed://x/y)"),
        ("zed://x/", "[@zed://x/](zed://x/)"),
        ("https://e.com/a", "https://e.com/a"),
    ],
)
def test_embedded_resources_are_named_as_the_reference_names_them(uri: str, link: str) -> None:
    assert uri_link(uri) == link


# ------------------------------------------------------------------ refusals


def test_audio_is_refused_with_the_references_words() -> None:
    audio = AudioContentBlock(type="audio", data="UklGRg==", mime_type="audio/wav")
    with pytest.raises(PromptRefused) as refused:
        prompt_content([text("listen"), audio])
    assert refused.value.message == "Content blocks of type audio are not supported"
    assert refused.value.data == {"type": "audio"}


@pytest.mark.parametrize("blocks", [[], [text("")], [text(" \n ")]])
def test_an_empty_prompt_is_refused(blocks: list[Any]) -> None:
    with pytest.raises(PromptRefused) as refused:
        prompt_content(blocks)
    assert refused.value.message == "the prompt is empty"


# ------------------------------------------------------------------ through the agent


def test_the_agent_sends_content_blocks_and_answers_minus_32602_for_audio(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent, clients = recording_agent(tmp_path, monkeypatch)

    async def go() -> tuple[RequestError, Any, Any]:
        wire = Wire(agent)  # type: ignore[arg-type]
        sid = await wire.open()
        with pytest.raises(RequestError) as refused:
            await wire.conn.prompt(
                session_id=sid,
                prompt=[text("hear"), AudioContentBlock(type="audio", data="AA==", mime_type="audio/wav")],
            )
        first = await wire.conn.prompt(session_id=sid, prompt=[image()])
        second = await wire.conn.prompt(session_id=sid, prompt=[acp.text_block("plain")])
        return refused.value, first, second

    error, first, second = asyncio.run(asyncio.wait_for(go(), 10))
    assert (error.code, str(error), error.data) == (
        -32602,
        "Invalid params: Content blocks of type audio are not supported",
        {"type": "audio"},
    )
    assert first.stop_reason == "end_turn" and second.stop_reason == "end_turn"
    (client,) = clients
    assert [m["message"]["content"] for m in client.sent] == [
        [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}],
        "plain",
    ]


def test_the_agent_answers_minus_32602_naming_the_charset_and_the_session_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent, clients = recording_agent(tmp_path, monkeypatch)

    async def go() -> tuple[RequestError, Any]:
        wire = Wire(agent)  # type: ignore[arg-type]
        sid = await wire.open()
        with pytest.raises(RequestError) as refused:
            await wire.conn.prompt(
                session_id=sid, prompt=[blob("file:///h.txt", b64(b"xn--bcher-kva"), "text/plain; charset=idna")]
            )
        after = await wire.conn.prompt(session_id=sid, prompt=[acp.text_block("plain")])
        return refused.value, after

    error, after = asyncio.run(asyncio.wait_for(go(), 10))
    assert (error.code, str(error), error.data) == (
        -32602,
        'Invalid params: unsupported charset "idna"',
        {"type": "resource", "charset": "idna"},
    )
    assert after.stop_reason == "end_turn"
    (client,) = clients
    assert [m["message"]["content"] for m in client.sent] == ["plain"]
