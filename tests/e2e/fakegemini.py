"""A fake Gemini API (``generativelanguage`` v1beta) for driving the real gemini-cli.

gemini-cli 0.61.0 with ``GOOGLE_GEMINI_BASE_URL`` pointed here sends ``POST
/v1beta/models/M:streamGenerateContent?alt=sse`` for a turn (and may send ``:generateContent`` or
``:countTokens`` for its own checks: the first gets the script's reply too, the second a count).
The replies and the server are :mod:`.fakemodel`'s; a ``Text`` is one SSE ``data:`` event with
``finishReason: STOP``, an error Google's ``{"error": {"code", "message", "status"}}``
(:func:`google_error`).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from .fakemodel import FakeModelAPI, Reply, ScriptedHandler, Stall, Status, Text

__all__ = ["FakeGeminiAPI", "Stall", "Status", "Text", "google_error"]


def google_error(code: int, message: str, status: str) -> Status:
    """An error as Google's API writes it: ``{"error": {"code", "message", "status"}}``."""
    return Status(code, {"error": {"code": code, "message": message, "status": status}})


def _candidate(text: str) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 5, "totalTokenCount": 10},
        "modelVersion": "gemini-fake",
    }


class _Handler(ScriptedHandler):
    not_found: ClassVar[dict[str, Any]] = {"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}}

    def answer_side_request(self) -> bool:
        if ":countTokens" in self.path:
            self.send_json(200, {"totalTokens": 10})
            return True
        return False

    def answer_text(self, text: str) -> None:
        if ":streamGenerateContent" in self.path:
            self.send_body(200, "text/event-stream", b"data: " + json.dumps(_candidate(text)).encode() + b"\r\n\r\n")
        else:
            self.send_json(200, _candidate(text))


class FakeGeminiAPI(FakeModelAPI):
    """The fake Gemini API (``base_url`` is ``GOOGLE_GEMINI_BASE_URL``)."""

    def __init__(self, script: list[Reply]) -> None:
        super().__init__(script, _Handler)
