"""A small fake OpenAI API for driving codex-acp (Responses) and opencode (Chat Completions).

``POST .../responses`` is answered in the Responses API's SSE events, ``POST .../chat/completions`` in Chat Completions'
SSE chunks; ``GET .../models`` lists one model. Each model request takes the next reply of the
script: the replies and the server are :mod:`.fakemodel`'s.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from .fakemodel import FakeModelAPI, Reply, ScriptedHandler, Status

__all__ = ["SIDE_MODEL", "SIDE_TEXT", "FakeOpenAIAPI", "openai_error"]


def openai_error(code: int, message: str, kind: str) -> Status:
    """An error as OpenAI's API writes it: ``{"error": {"message", "type", "code"}}``."""
    return Status(code, {"error": {"message": message, "type": kind, "code": kind}})


def _responses_events(text: str) -> list[dict[str, Any]]:
    item = {
        "type": "message",
        "role": "assistant",
        "id": "msg_1",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    usage = {
        "input_tokens": 5,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 10,
    }
    return [
        {"type": "response.created", "response": {"id": "resp_1"}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**item, "content": [], "status": "in_progress"},
        },
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": text,
        },
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {"id": "resp_1", "usage": usage}},
    ]


def _chat_chunks(text: str) -> list[dict[str, Any]]:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "fake-model"}
    return [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]},
        {
            **base,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
        },
    ]


#: a request for this model is the agent's own side request (opencode's session titles with its
#: ``small_model``): answered ``SIDE_TEXT``, never from the script
SIDE_MODEL = "fake-small"
SIDE_TEXT = "A title"


def _model_of(body: bytes) -> object:
    try:
        parsed = json.loads(body)
    except ValueError:
        return None
    return parsed.get("model") if isinstance(parsed, dict) else None


class _Handler(ScriptedHandler):
    not_found: ClassVar[dict[str, Any]] = {"error": {"message": "not found", "type": "not_found"}}

    def answer_get(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self.send_json(
                200, {"object": "list", "data": [{"id": "fake-model", "object": "model", "owned_by": "fake"}]}
            )
        else:
            self.send_json(404, self.not_found)

    def answer_side_request(self) -> bool:
        if not self.path.split("?")[0].endswith(("/responses", "/chat/completions")):
            self.send_json(404, self.not_found)
            return True
        if _model_of(self.body) == SIDE_MODEL:  # the agent's own side request (opencode's titles)
            self.answer_text(SIDE_TEXT)
            return True
        return False

    def answer_text(self, text: str) -> None:
        if self.path.split("?")[0].endswith("/responses"):
            events = _responses_events(text)
            data = b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)
        else:
            data = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in _chat_chunks(text)) + b"data: [DONE]\n\n"
        self.send_body(200, "text/event-stream", data)


class FakeOpenAIAPI(FakeModelAPI):
    """The fake OpenAI API (``base_url`` ends with ``/v1``)."""

    def __init__(self, script: list[Reply]) -> None:
        super().__init__(script, _Handler, "/v1")
