"""Prompt conversion: the ACP ``session/prompt`` content blocks as the user message Claude Code
receives (the reference adapter's ``promptToClaude`` and ``blob-resources``).

Rules
-----
* ``text`` is a text block. A ``resource_link`` is ``@uri`` (Claude Code reads it itself).
* An ``image`` with ``data`` is a base64 ``image`` block; one with only an ``http(s)`` ``uri`` is a
  ``url`` image block. Its MIME type is normalised (parameters and case dropped, ``image/jpg`` is
  ``image/jpeg``) and must be one the Messages API takes: PNG, JPEG, GIF or WebP.
* An embedded ``resource`` is named by a link (``[@name](file://...)`` for a ``file://`` or
  ``zed://`` uri, else the uri) where it stood. Its text, or a text blob decoded with its
  ``charset`` (UTF-8 when the MIME type names none, a byte order mark dropped, bytes the charset
  does not map replaced by U+FFFD), is a ``<context ref="uri">`` block placed after every other
  block; an image blob is an ``image`` block and a PDF blob a ``document`` block, right after its
  link.
* Refused with -32602 (the reference's words where it has them; nothing is sent to Claude):
  ``audio`` (no audio capability is advertised), any block type not listed here, an image without
  data or an http(s) URL, an image or blob whose base64 does not decode, an image type the API does
  not take, a blob of any other type (``application/zip``: the reference's v2 prompts refuse it
  too), a text blob whose charset is not a character encoding Python knows
  (``unsupported charset "idna"``: an unknown name, a bytes or str transform such as ``base64``,
  ``hex``, ``zlib`` or ``rot13``, or a Python text codec that is no charset: ``idna``,
  ``punycode``, the escape codecs), and a prompt with nothing in it.
* A prompt of text alone (text, links, text resources) is sent as one string, the blocks joined by
  a blank line: the user message stays what this agent sent before images (the transcript keeps it
  as one string); any image or document makes it a list of content blocks.

Theory of operation
-------------------
:func:`prompt_content` walks the blocks once: content blocks in order, context blocks aside; a
refusal raises :class:`PromptRefused`, which the agent's ``prompt`` handler turns into the
JSON-RPC error. Nothing here imports an SDK: :data:`PROMPT_CAPABILITIES` is the wire object
``initialize`` advertises (the fast ``initialize`` answers from raw JSON), and
:func:`prompt_capabilities` the ACP SDK's model of it.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from .config import PROMPT_CAPABILITIES

if TYPE_CHECKING:
    from acp.schema import PromptCapabilities

__all__ = [
    "PROMPT_CAPABILITIES",
    "PromptContent",
    "PromptRefused",
    "prompt_capabilities",
    "prompt_content",
    "uri_link",
]

#: ``agentCapabilities.promptCapabilities`` on the wire: images and embedded context, no audio
#: (every field written out, as the ACP SDK's model dumps it).

#: What Claude Code is sent: one string (text alone) or a list of Messages API content blocks.
PromptContent = str | list[dict[str, Any]]

#: Image types the Messages API accepts as an ``image`` block.
IMAGE_MIME_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
#: Non-``text/*`` types whose bytes are text (the reference's list).
TEXT_APPLICATION_MIME_TYPES: Final = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/typescript",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "application/x-sh",
        "application/sql",
        "application/graphql",
    }
)
_CHARSET = re.compile(r';\s*charset\s*=\s*"?([^";\s]+)', re.IGNORECASE)
#: Python codecs that turn bytes into text but are no charset of a document (``codecs`` names).
_NOT_CHARSETS: Final = frozenset({"idna", "punycode", "unicode-escape", "raw-unicode-escape", "undefined", "charmap"})


class PromptRefused(ValueError):
    """A prompt Claude cannot be sent: ``message`` follows ``Invalid params: `` in the -32602
    error, ``data`` is its ``data``."""

    def __init__(self, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


def prompt_capabilities() -> PromptCapabilities:
    """:data:`PROMPT_CAPABILITIES` as the ACP SDK's model (imports the ACP SDK)."""
    from acp.schema import PromptCapabilities

    return PromptCapabilities.model_validate(dict(PROMPT_CAPABILITIES))


def prompt_content(blocks: Sequence[Any]) -> PromptContent:
    """The user message's content for the ACP prompt ``blocks`` (models or their JSON objects).

    Raises:
        PromptRefused: a block Claude cannot be sent, or nothing to send at all.
    """
    content: list[dict[str, Any]] = []
    context: list[dict[str, Any]] = []
    for block in blocks:
        kind = _field(block, "type")
        if kind == "text":
            text = _field(block, "text")
            if isinstance(text, str) and text:
                content.append(_text(text))
        elif kind == "resource_link":
            content.append(_text(f"@{_field(block, 'uri')}"))
        elif kind == "image":
            content.append(_image(block))
        elif kind == "resource":
            _resource(_field(block, "resource"), content, context)
        else:
            raise PromptRefused(f"Content blocks of type {kind} are not supported", {"type": kind})
    content.extend(context)
    if not any(b["type"] != "text" or b["text"].strip() for b in content):
        raise PromptRefused("the prompt is empty")
    if all(b["type"] == "text" for b in content):
        return "\n\n".join(b["text"] for b in content)
    return content


# ------------------------------------------------------------------ the blocks


def _field(block: Any, name: str) -> Any:
    if isinstance(block, Mapping):
        return block.get({"mime_type": "mimeType"}.get(name, name))
    return getattr(block, name, None)


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _base_mime(mime_type: object) -> str | None:
    """The MIME type without parameters or case; ``image/jpg`` is ``image/jpeg``."""
    if not isinstance(mime_type, str):
        return None
    base = mime_type.split(";")[0].strip().lower()
    if base == "image/jpg":
        return "image/jpeg"
    return base or None


def _checked_base64(data: str, what: str) -> str:
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise PromptRefused(f"the {what} is not valid base64", {"type": what}) from None
    return data


def _image(block: Any) -> dict[str, Any]:
    data, uri = _field(block, "data"), _field(block, "uri")
    if isinstance(data, str) and data:
        mime = _base_mime(_field(block, "mime_type"))
        if mime not in IMAGE_MIME_TYPES:
            raise PromptRefused(f"Images of type {mime} are not supported (PNG, JPEG, GIF or WebP)", {"mimeType": mime})
        source = {"type": "base64", "media_type": mime, "data": _checked_base64(data, "image")}
        return {"type": "image", "source": source}
    if isinstance(uri, str) and uri.startswith(("http://", "https://")):
        return {"type": "image", "source": {"type": "url", "url": uri}}
    raise PromptRefused("an image needs base64 data or an http(s) URL", {"type": "image"})


def uri_link(uri: str) -> str:
    """How the reference names an embedded resource: ``[@name](uri)`` for a ``file://`` or
    ``zed://`` uri, the uri itself otherwise."""
    if uri.startswith("file://"):
        path = uri[7:]
        return f"[@{path.rsplit('/', 1)[-1] or path}]({uri})"
    if uri.startswith("zed://"):
        return f"[@{uri.rsplit('/', 1)[-1] or uri}]({uri})"
    return uri


def _resource(resource: Any, content: list[dict[str, Any]], context: list[dict[str, Any]]) -> None:
    uri = str(_field(resource, "uri") or "")
    text = _field(resource, "text")
    blob = _field(resource, "blob")
    if isinstance(blob, str) and not isinstance(text, str):
        mime = _base_mime(_field(resource, "mime_type"))
        if mime in IMAGE_MIME_TYPES or mime == "application/pdf":
            kind = "image" if mime in IMAGE_MIME_TYPES else "document"
            source = {"type": "base64", "media_type": mime, "data": _checked_base64(blob, "blob")}
            content.append(_text(uri_link(uri)))
            content.append({"type": kind, "source": source})
            return
        if mime is None or not _is_text_mime(mime):
            raise PromptRefused(
                f"Embedded resources of type {mime} are not supported", {"type": "resource", "mimeType": mime}
            )
        text = _decode(_checked_base64(blob, "blob"), _field(resource, "mime_type"))
    if isinstance(text, str):
        content.append(_text(uri_link(uri)))
        context.append(_text(f'\n<context ref="{uri}">\n{text}\n</context>'))


def _is_text_mime(mime: str) -> bool:
    return (
        mime.startswith("text/")
        or mime in TEXT_APPLICATION_MIME_TYPES
        or mime.endswith("+json")
        or mime.endswith("+xml")
    )


def _decode(blob: str, mime_type: object) -> str:
    """A text blob's bytes decoded with its ``charset`` (UTF-8 when the MIME type names none); a
    leading byte order mark is dropped.

    Raises:
        PromptRefused: the charset named is not a character encoding (:func:`_codec`).
    """
    match = _CHARSET.search(mime_type if isinstance(mime_type, str) else "")
    codec = _codec(match.group(1)) if match else "utf-8"
    return base64.b64decode(blob).decode(codec, errors="replace").removeprefix("\ufeff")


def _codec(charset: str) -> str:
    """The Python codec of a MIME ``charset``: one ``codecs`` knows as a text encoding (bytes to
    str, not a transform such as ``base64`` or ``rot13``) that is a charset (not ``idna``...)."""
    try:
        info = codecs.lookup(charset)
    except (LookupError, ValueError):  # ValueError: a name with a NUL in it
        info = None
    if info is None or not info._is_text_encoding or info.name in _NOT_CHARSETS:
        shown = charset[:60]
        raise PromptRefused(f'unsupported charset "{shown}"', {"type": "resource", "charset": shown})
    return info.name
