"""The reference adapter as an oracle for prompt content: the same ``session/prompt`` (text,
images, blobs, embedded text, links, audio) through both agents, and what reached the model.

The harness of ``oracle.py`` (both agents on Claude Code 2.1.332, each against its
own loopback fake API, a plain client). Compared: the prompt's answer (stop reason, or the JSON-RPC
error's code, message and data) and the content blocks of the user message the fake API received
(Claude Code's own blocks around the prompt's, its ``<system-reminder>`` and ``[Image: source:
...]`` notes, left out; a string content read as one text block; the newline Claude Code ends the
last text with dropped). Every difference must be listed in :data:`KNOWN` with its exact shape,
under a row of docs/parity/README.md's table "Where the coding turn differs from the reference"
(:data:`PROMPT_DIFFERENCES`, checked in sync by ``test_reference_oracle_tools.py``).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from .harness import PNG, is_prompt_suggestion
from .oracle import PROMPT_DIFFERENCES, Check, OracleAgent, exactly, unexplained

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

PDF = base64.b64encode(b"%PDF-1.1\ntrailer<</Root 1 0 R>>\n%%EOF\n").decode()
ZIP = base64.b64encode(b"PK\x05\x06" + bytes(18)).decode()


def _text(t: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=t)


def _blob(uri: str, data: str, mime: str) -> EmbeddedResourceContentBlock:
    return EmbeddedResourceContentBlock(
        type="resource", resource=BlobResourceContents(uri=uri, blob=data, mime_type=mime)
    )


def _notes() -> EmbeddedResourceContentBlock:
    return EmbeddedResourceContentBlock(
        type="resource", resource=TextResourceContents(uri="file:///docs/notes.md", text="# Notes\nmilk")
    )


SCENARIOS: dict[str, list[Any]] = {
    "images_and_blobs": [
        _text("compare these"),
        ImageContentBlock(type="image", data=PNG, mime_type="image/png"),
        ImageContentBlock(type="image", data="", mime_type="image/png", uri="https://example.com/a.png"),
        _blob("file:///docs/spec.pdf", PDF, "application/pdf"),
        _blob("file:///img/dot.png", PNG, "image/png"),
        _notes(),
    ],
    "image_alone": [ImageContentBlock(type="image", data=PNG, mime_type="image/png")],
    "text_and_context": [_text("read the notes"), _notes()],
    "resource_link": [_text("open"), ResourceContentBlock(type="resource_link", uri="file:///src/a.py", name="a.py")],
    "audio": [_text("listen"), AudioContentBlock(type="audio", data="UklGRg==", mime_type="audio/wav")],
    "zip_blob": [_text("unpack"), _blob("file:///x.zip", ZIP, "application/zip")],
}

_STRING, _LINK, _REFUSED = PROMPT_DIFFERENCES


def _joined(ours: Any, ref: Any) -> bool:
    """Ours: one text, the reference's text blocks joined by a blank line."""
    return bool(ours == [{"type": "text", "text": "\n\n".join(b["text"] for b in ref)}] and len(ref) > 1)


NOTES_CONTEXT = '\n<context ref="file:///docs/notes.md">\n# Notes\nmilk\n</context>'
#: (scenario, facet) -> (the point of PROMPT_DIFFERENCES, the exact difference).
KNOWN: dict[tuple[str, str], tuple[str, Check]] = {
    ("text_and_context", "sent"): (_STRING, _joined),
    ("resource_link", "sent"): (
        _LINK,
        exactly(
            [{"type": "text", "text": "open\n\n@file:///src/a.py"}],
            [{"type": "text", "text": "open"}, {"type": "text", "text": "[@a.py](file:///src/a.py)"}],
        ),
    ),
    ("zip_blob", "answer"): (
        _REFUSED,
        exactly(
            {
                "code": -32602,
                "message": "Invalid params: Embedded resources of type application/zip are not supported",
                "data": {"type": "resource", "mimeType": "application/zip"},
            },
            {"stopReason": "end_turn"},
        ),
    ),
    ("zip_blob", "sent"): (_REFUSED, exactly(None, [{"type": "text", "text": "unpack"}])),
}


def _prompt_blocks(agent: OracleAgent, before: int) -> Any:
    """The prompt's blocks in the user message of the first conversation request since request
    ``before`` (one that offers tools: the reference's title request and Claude Code's prompt
    suggestion offer none), or None (nothing sent)."""
    requests = agent.api.message_requests[before:]
    conversation = [r for r in requests if r.body.get("tools") and not is_prompt_suggestion(r)]
    if not conversation:
        return None
    messages = conversation[0].body["messages"]
    content = [m for m in messages if m["role"] == "user"][-1]["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    out = [
        {k: v for k, v in b.items() if k != "cache_control"}
        for b in blocks
        if not (b.get("type") == "text" and b["text"].startswith(("<system-reminder>", "[Image: source:")))
    ]
    if out and out[-1]["type"] == "text":
        out[-1] = {**out[-1], "text": out[-1]["text"].removesuffix("\n")}
    return out


def observe(agent: OracleAgent, blocks: list[Any]) -> dict[str, Any]:
    sid = agent.new_session()
    before = len(agent.api.message_requests)
    agent.script.load(then="success")
    out = agent.exchange(sid, agent.conn.prompt(session_id=sid, prompt=blocks), 60)
    if out.error is not None:
        answer: Any = {k: out.error.get(k) for k in ("code", "message", "data")}
    else:
        answer = {"stopReason": (out.result or {}).get("stopReason")}
    return {"answer": answer, "sent": _prompt_blocks(agent, before)}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_both_agents_send_the_prompt_alike(
    scenario: str, oracle_pairs: Callable[[str], dict[str, OracleAgent]]
) -> None:
    """Each scenario in a new session of the module's two agents."""
    observed = {impl: observe(agent, SCENARIOS[scenario]) for impl, agent in oracle_pairs("plain").items()}
    ours, ref = observed["ours"], observed["reference"]
    # Literally, on the reference's side: what its promptToClaude builds.
    if scenario == "images_and_blobs":
        assert ref["sent"] == [
            {"type": "text", "text": "compare these"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
            {"type": "text", "text": "[@spec.pdf](file:///docs/spec.pdf)"},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}},
            {"type": "text", "text": "[@dot.png](file:///img/dot.png)"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            {"type": "text", "text": "[@notes.md](file:///docs/notes.md)"},
            {"type": "text", "text": NOTES_CONTEXT},
        ], ref["sent"]
    if scenario == "audio":
        assert ref["answer"] == {
            "code": -32602,
            "message": "Invalid params: Content blocks of type audio are not supported",
            "data": {"type": "audio"},
        }, ref["answer"]
        assert ref["sent"] is None
    problems = unexplained(ours, ref, ("answer", "sent"), lambda name: KNOWN.get((scenario, name)))
    assert not problems, f"{scenario}:\n" + "\n".join(problems)


def test_every_listed_point_is_used() -> None:
    assert {point for point, _ in KNOWN.values()} == set(PROMPT_DIFFERENCES)
    assert {scenario for scenario, _ in KNOWN} <= set(SCENARIOS)
