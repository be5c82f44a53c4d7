"""Questions to the user: Claude Code's ``AskUserQuestion`` tool as an ACP form elicitation
(``elicitation/create``), as the reference adapter 0.101.0 shows it (``dist/elicitation.js``).

Rules
-----
* ``AskUserQuestion`` reaches the agent through ``can_use_tool`` (Claude Code hands the question
  dialog to its host). It is a question, not a permission: answering it allows that one tool use
  to report the answers, grants nothing else, and has no "always".
* A client that advertises ``clientCapabilities.elicitation.form`` gets an ``elicitation/create``
  request: mode ``form``, the session, the tool call id; one field per question,
  ``question_<n>`` (a ``oneOf`` of the options for a single choice, an ``array`` of ``anyOf`` for
  a multi-select; each option's value and title are its label, its description the option's),
  each followed by an optional free-text ``question_<n>_custom`` ("Other"). The message is the
  question when there is one, else "Please answer the following questions.". Every text is
  exactly the model's; nothing is required.
* ``accept``: Claude Code gets the tool's input with ``answers`` (``{question: label}``; a
  multi-select's labels joined with ", ", a label holding ", " or a quote JSON-quoted, the custom
  text added; a single choice's custom text is the answer when nothing was picked, else its
  ``notes`` annotation). The tool itself reports the answers to the model. ``decline``: empty
  answers (the model hears the user skipped). ``cancel``, anything else, an error reply or an
  unreadable answer: the tool use is aborted (:data:`ABORTED_MESSAGE`).
* Without form elicitation the question is refused at once with words Claude can act on
  (:data:`NO_FORM_MESSAGE`): the tool call ends, nothing waits. Input without a usable question
  (a string ``question`` with options) is refused unasked.
* A question is open only while its turn runs, exactly as a permission question
  (:mod:`lifecycle.agent.permissions`): the broker registers the request with the ones it withdraws,
  so a cancel of the prompt cancels it on the wire and a late answer is not honoured.

Theory of operation
-------------------
Pure functions build the request (:func:`elicitation_request`) and read the answer
(:func:`answered_input`); :func:`ask` sends the request through the ``send`` it is given, keeps its
future on the broker's record of the question (:class:`Asked`), and returns the tool's new input
or a denial text. This module imports no SDK. Whether the client shows forms is
:attr:`lifecycle.negotiation.ClientState.form`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Protocol

__all__ = [
    "ABORTED_MESSAGE",
    "NO_FORM_MESSAGE",
    "NO_QUESTIONS_MESSAGE",
    "Asked",
    "answered_input",
    "ask",
    "elicitation_request",
    "valid_questions",
]

#: The tool use was aborted (the reference's words): the form was cancelled or unreadable.
ABORTED_MESSAGE: Final = "Tool use aborted"
#: The reference's words for input without a usable question.
NO_QUESTIONS_MESSAGE: Final = "AskUserQuestion called with no valid questions."
#: What Claude is told when the client cannot show a form (the reference removes the tool instead:
#: docs/parity.md).
NO_FORM_MESSAGE: Final = "The user's editor cannot show this question. Ask it in your reply instead, with its options."
_MANY: Final = "Please answer the following questions."
_MULTI_HINT: Final = "Type your own answer to add to your selection above (optional)."
_SINGLE_HINT: Final = "Type your own answer, or add a note to the option you chose above (optional)."
_OPTION_META: Final = "_claude/askUserQuestionOption"

Send = Callable[[dict[str, Any]], Awaitable[Any]]


def valid_questions(tool_input: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The well-formed questions of the tool's input (a string ``question`` and a non-empty list of
    options), or None when none is."""
    questions = tool_input.get("questions")
    if not isinstance(questions, list):
        return None
    valid = [
        q
        for q in questions
        if isinstance(q, dict)
        and isinstance(q.get("question"), str)
        and isinstance(q.get("options"), list)
        and q["options"]
        and all(isinstance(o, dict) and isinstance(o.get("label"), str) for o in q["options"])
    ]
    return valid or None


def _option(option: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"const": option["label"], "title": option["label"]}
    if isinstance(option.get("description"), str) and option["description"]:
        out["description"] = option["description"]
    if option.get("preview"):
        out["_meta"] = {_OPTION_META: {"preview": option["preview"]}}
    return out


def elicitation_request(questions: list[dict[str, Any]], session_id: str, tool_call_id: str) -> dict[str, Any]:
    """The ``elicitation/create`` params asking ``questions`` (see the module's rules)."""
    single = len(questions) == 1
    properties: dict[str, Any] = {}
    for index, question in enumerate(questions):
        options = [_option(o) for o in question["options"]]
        field: dict[str, Any] = {"type": "array", "items": {"anyOf": options}}
        if not question.get("multiSelect"):
            field = {"type": "string", "oneOf": options}
        header = question.get("header")
        if isinstance(header, str) and header:
            field["title"] = header
        if not single:
            field["description"] = question["question"]
        properties[f"question_{index}"] = field
        hint = _MULTI_HINT if question.get("multiSelect") else _SINGLE_HINT
        properties[f"question_{index}_custom"] = {"type": "string", "title": "Other", "description": hint}
    return {
        "mode": "form",
        "sessionId": session_id,
        "toolCallId": tool_call_id,
        "message": questions[0]["question"] if single else _MANY,
        "requestedSchema": {"type": "object", "properties": properties},
    }


def _joined(items: list[str]) -> str:
    """A multi-select answer as Claude Code's own dialog writes it (the tool splits it back)."""
    return ", ".join(json.dumps(i) if ", " in i or '"' in i else i for i in items)


def answered_input(
    response: object, tool_input: Mapping[str, Any], questions: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The tool's input carrying the answers of an elicitation ``response`` (raw JSON), or None
    when the tool use is aborted (cancel, an unknown action, an unreadable response)."""
    action = response.get("action") if isinstance(response, Mapping) else None
    if action == "decline":
        return {**tool_input, "answers": {}}
    if action != "accept":
        return None
    assert isinstance(response, Mapping)
    content = response.get("content")
    content = content if isinstance(content, Mapping) else {}
    answers: dict[str, str] = {}
    annotations: dict[str, dict[str, str]] = {}
    for index, question in enumerate(questions):
        text = question["question"]
        custom = content.get(f"question_{index}_custom")
        custom_text = custom.strip() if isinstance(custom, str) else ""
        value = content.get(f"question_{index}")
        picks = [
            str(v).lower() if isinstance(v, bool) else str(v)
            for v in (value if isinstance(value, list) else [value])
            if isinstance(v, (str, int, float, bool)) and str(v) != ""
        ]
        if question.get("multiSelect"):
            joined = _joined([*picks, custom_text] if custom_text else picks)
            if joined:
                answers[text] = joined
            continue
        picked = ", ".join(picks)
        if picked:
            answers[text] = picked
            if custom_text:
                annotations[text] = {"notes": custom_text}
        elif custom_text:
            answers[text] = custom_text
    out = {**tool_input, "answers": answers}
    if annotations:
        out["annotations"] = annotations
    return out


class Asked(Protocol):
    """The broker's record of the question (:class:`lifecycle.agent.permissions.Question`)."""

    tool_use_id: str
    asked: asyncio.Future[Any] | None
    request_id: object


async def ask(
    send: Send | None, session_id: str, question: Asked, tool_input: Mapping[str, Any]
) -> dict[str, Any] | str:
    """Ask the question of one ``AskUserQuestion`` use: the tool's new input (answered), or the
    denial Claude is told. ``send`` sends ``elicitation/create`` (None: the client has no form
    elicitation); ``question.asked`` holds the request while it is open (the broker withdraws it
    there: then :data:`ABORTED_MESSAGE`)."""
    questions = valid_questions(tool_input)
    if questions is None:
        return NO_QUESTIONS_MESSAGE
    if send is None:
        return NO_FORM_MESSAGE
    request = asyncio.ensure_future(send(elicitation_request(questions, session_id, question.tool_use_id)))
    question.asked = request
    try:
        response = await request
    except asyncio.CancelledError:
        if request.cancelled() and question.asked is None:
            return ABORTED_MESSAGE  # withdrawn
        raise
    except Exception:  # an error reply, a client that is gone
        return ABORTED_MESSAGE
    finally:
        question.asked, question.request_id = None, None
        if not request.done():
            request.cancel()
    answered = answered_input(response, tool_input, questions)
    return ABORTED_MESSAGE if answered is None else answered
