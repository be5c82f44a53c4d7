"""The follow-up prompt Claude Code predicts after a turn (issue 31 point 3, "prompt suggestions").

Rules
-----
* Claude Code predicts the next prompt only when the SDK's ``initialize`` asks for it
  (``promptSuggestions: true``; :class:`lifecycle.agent.adopt.AdoptingTransport`). It then sends
  one ``prompt_suggestion`` message (``{type, suggestion, uuid, session_id}``) after a turn's
  ``result``, from a model request of its own; it sends none on a session's first turn, after an
  API error, in plan mode or at the usage limit, and none when the user turned it off
  (``promptSuggestionEnabled`` in settings.json, ``CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION=false``).
* ACP has no field for it. Like the reference adapter 0.101.0, it travels as a
  ``session_info_update`` whose ``_meta.promptSuggestions`` is ``{"suggestions": [{"text": …}]}``,
  and only to a client that declared ``_meta.jetbrains.air``
  (:attr:`lifecycle.negotiation.ClientState.suggestions`): JetBrains
  AIR shows it as gray text in an empty composer, and nothing is sent until the user sends it.
* Better than the reference: the agent asks Claude Code for predictions only for such a client.
  The reference asks always and drops them for every other client, so their users pay for one
  more model request per turn that nobody sees (docs/parity.md).
* A prediction belongs to the turn whose ``result`` came last; one that comes after the next
  prompt was sent answers a turn the user has moved past and is dropped. A prediction of only
  whitespace says nothing: it clears (``{"suggestions": []}``) what the client holds. A
  prediction equal to the one shown is not sent again.
* When the user sends a prompt, the prediction shown is spent: it is cleared before the turn, so
  a turn that predicts nothing leaves no stale prediction in the composer. A session that shows
  none sends no clear.
* The text is the model's prose about the user's own work: it is masked like every other text of
  the transcript (the publisher's), and logged only as its length.

Theory of operation
-------------------
:class:`PromptSuggestions` is sans-I/O, the last of :data:`lifecycle.agent.lanes.LANES`:
:meth:`PromptSuggestions.see` takes each message record (a result opens the window, a
:class:`~lifecycle.agent.messages.PromptSuggestion` is published in it) and
:meth:`PromptSuggestions.prompt_sent` the user's prompt; each returns the updates to send. The
Claude SDK 0.2.190 drops the message (an unknown type), so the agent's SDK client reads it
(:class:`lifecycle.agent.adopt.SuggestingClient`) and hands it on as a :class:`PromptSuggestion`.
"""

from __future__ import annotations

from typing import Any, Final

import structlog

from .messages import ClaudeMessage, Kind, LaneParts, Pass, PromptSuggestion, Step

__all__ = ["META_KEY", "PromptSuggestion", "PromptSuggestions", "suggestion_update"]

log = structlog.get_logger("lifecycle.agent")

#: The ``_meta`` key the prediction travels under (the reference's; it names no vendor).
META_KEY: Final = "promptSuggestions"
#: The longest prediction sent; a longer one is cut (a prompt to type, not a document).
MAX_SUGGESTION: Final = 2_000


def suggestion_update(text: str | None) -> dict[str, Any]:
    """The ``session_info_update`` publishing ``text`` (None: the empty list, which clears)."""
    suggestions = [] if text is None else [{"text": text}]
    return {"sessionUpdate": "session_info_update", "_meta": {META_KEY: {"suggestions": suggestions}}}


class PromptSuggestions:
    """One session's predictions (see the module): whether one is expected, and the one shown."""

    def __init__(self, *, enabled: bool = False) -> None:
        self.enabled = enabled  # the client shows them, so Claude Code is asked for them
        self.expected = False  # a turn's result came, and no prediction for it yet
        self.shown: str | None = None  # the prediction the client holds

    @classmethod
    def build(cls, parts: LaneParts) -> PromptSuggestions:
        return cls(enabled=parts.client.suggestions)

    def run(self, p: Pass) -> list[Step]:
        """The lane (:mod:`lifecycle.agent.lanes`): a prediction's update, one step, last. A result
        held for a steer (:attr:`Pass.held`) ends no turn, so it opens no window."""
        if p.held:
            return []
        predicted = self.see(p.message)
        return [Step(predicted)] if predicted else []

    def see(self, message: ClaudeMessage) -> list[dict[str, Any]]:
        """The updates a message makes (only a prediction in its window makes one)."""
        if not self.enabled:
            return []
        if message.kind is Kind.RESULT:
            self.expected = True
            return []
        if message.kind is not Kind.SUGGESTION or not self.expected:
            return []
        self.expected = False
        text = str(message.data.get("suggestion", "")).strip()[:MAX_SUGGESTION] or None
        return self._publish(text)

    def prompt_sent(self) -> list[dict[str, Any]]:
        """The user sent a prompt: the prediction shown is spent, and a late one is dropped."""
        self.expected = False
        return self._publish(None)

    def _publish(self, text: str | None) -> list[dict[str, Any]]:
        if text == self.shown:
            return []
        self.shown = text
        log.info("session.prompt_suggestion", chars=0 if text is None else len(text))
        return [suggestion_update(text)]
