"""Prompt conversion: the ACP ``session/prompt`` content blocks as the user message Claude Code
receives.

Rules
-----
* ``text`` blocks are the text; a ``resource_link`` is ``@uri`` (Claude Code reads it itself); an
  embedded text ``resource`` is a ``<context uri=...>`` block with its text.
* Blocks are joined with a blank line; empty parts are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["prompt_text"]


def prompt_text(blocks: Sequence[Any]) -> str:
    """The prompt as Claude sees it: text blocks, resource links as ``@uri``, embedded text."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(f"@{block.uri}")
        elif kind == "resource":
            text = getattr(block.resource, "text", None)
            if isinstance(text, str):
                parts.append(f"<context uri={block.resource.uri!r}>\n{text}\n</context>")
    return "\n\n".join(p for p in parts if p)
