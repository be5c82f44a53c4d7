"""``lifecycle.agent.questions``: AskUserQuestion as an ACP form elicitation.

Expected requests and answers are written out from the reference adapter 0.101.0
(``dist/elicitation.js``: ``askUserQuestionsToCreateRequest``, ``applyAskElicitationResponse``)
and the ACP schema (``elicitation.form``: ``{}`` means supported, omitted or null not).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from lifecycle.agent.permissions import Question
from lifecycle.agent.questions import (
    ABORTED_MESSAGE,
    NO_FORM_MESSAGE,
    NO_QUESTIONS_MESSAGE,
    answered_input,
    ask,
    elicitation_request,
    valid_questions,
)
from lifecycle.negotiation import ClientState

SINGLE = {"question": "Which DB?", "header": "DB", "options": [{"label": "Postgres"}, {"label": "SQLite"}]}
MULTI = {
    "question": "Which caches?",
    "options": [{"label": "Redis", "description": "in memory"}, {"label": "Disk, slow"}],
    "multiSelect": True,
}


@pytest.mark.parametrize(
    ("caps", "expected"),
    [
        ({"elicitation": {"form": {}}}, True),
        ({"elicitation": {"form": {}, "url": {}}}, True),
        ({"elicitation": {"form": None}}, False),
        ({"elicitation": {"url": {}}}, False),
        ({"elicitation": {}}, False),
        ({}, False),
        (None, False),
        ({"elicitation": "form"}, False),
    ],
)
def test_form_capability(caps: Any, expected: bool) -> None:
    assert ClientState.parse(caps).form is expected


def test_only_well_formed_questions_are_asked() -> None:
    malformed = [{"question": 3, "options": [{"label": "a"}]}, {"question": "q", "options": []}, "x"]
    assert valid_questions({"questions": [*malformed, SINGLE]}) == [SINGLE]
    assert valid_questions({"questions": malformed}) is None
    assert valid_questions({"questions": "Which DB?"}) is None
    assert valid_questions({}) is None


def test_two_questions_as_one_form() -> None:
    assert elicitation_request([SINGLE, MULTI], "s1", "toolu_1") == {
        "mode": "form",
        "sessionId": "s1",
        "toolCallId": "toolu_1",
        "message": "Please answer the following questions.",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "question_0": {
                    "type": "string",
                    "oneOf": [
                        {"const": "Postgres", "title": "Postgres"},
                        {"const": "SQLite", "title": "SQLite"},
                    ],
                    "title": "DB",
                    "description": "Which DB?",
                },
                "question_0_custom": {
                    "type": "string",
                    "title": "Other",
                    "description": "Type your own answer, or add a note to the option you chose above (optional).",
                },
                "question_1": {
                    "type": "array",
                    "items": {
                        "anyOf": [
                            {"const": "Redis", "title": "Redis", "description": "in memory"},
                            {"const": "Disk, slow", "title": "Disk, slow"},
                        ]
                    },
                    "description": "Which caches?",
                },
                "question_1_custom": {
                    "type": "string",
                    "title": "Other",
                    "description": "Type your own answer to add to your selection above (optional).",
                },
            },
        },
    }


def test_accepted_answers_as_the_tools_input() -> None:
    tool_input = {"questions": [SINGLE, MULTI]}
    content = {"question_0": "SQLite", "question_0_custom": " small app ", "question_1": ["Redis", "Disk, slow"],
               "question_1_custom": "memcached"}  # fmt: skip
    assert answered_input({"action": "accept", "content": content}, tool_input, [SINGLE, MULTI]) == {
        "questions": [SINGLE, MULTI],
        "answers": {"Which DB?": "SQLite", "Which caches?": 'Redis, "Disk, slow", memcached'},
        "annotations": {"Which DB?": {"notes": "small app"}},
    }


def test_a_typed_answer_alone_is_the_answer_and_objects_are_dropped() -> None:
    tool_input = {"questions": [SINGLE, MULTI]}
    content = {"question_0_custom": "MySQL", "question_1": [{"x": 1}]}
    assert answered_input({"action": "accept", "content": content}, tool_input, [SINGLE, MULTI]) == {
        "questions": [SINGLE, MULTI],
        "answers": {"Which DB?": "MySQL"},
    }


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ({"action": "decline"}, {"questions": [SINGLE], "answers": {}}),
        ({"action": "cancel"}, None),
        ({"action": "later"}, None),
        ("accept", None),
        (None, None),
        ({"action": "accept", "content": "SQLite"}, {"questions": [SINGLE], "answers": {}}),
    ],
)
def test_decline_cancel_and_unreadable_answers(response: Any, expected: Any) -> None:
    assert answered_input(response, {"questions": [SINGLE]}, [SINGLE]) == expected


def _ask(send: Any, question: Question | None = None) -> Any:
    return ask(send, "s1", question or Question("toolu_1"), {"questions": [SINGLE]})


def test_ask_without_form_or_questions_sends_nothing() -> None:
    assert asyncio.run(_ask(None)) == NO_FORM_MESSAGE

    async def send(params: dict[str, Any]) -> Any:
        raise AssertionError("nothing may be sent")

    assert asyncio.run(ask(send, "s1", Question("t"), {"questions": []})) == NO_QUESTIONS_MESSAGE


def test_ask_sends_the_request_and_returns_the_answer() -> None:
    sent: list[dict[str, Any]] = []

    async def send(params: dict[str, Any]) -> Any:
        sent.append(params)
        return {"action": "accept", "content": {"question_0": "Postgres"}}

    question = Question("toolu_1")
    assert asyncio.run(_ask(send, question)) == {"questions": [SINGLE], "answers": {"Which DB?": "Postgres"}}
    assert sent == [elicitation_request([SINGLE], "s1", "toolu_1")]
    assert sent[0]["message"] == "Which DB?"
    assert question.asked is None  # answered: no request held open


def test_an_error_reply_aborts_the_tool_use() -> None:
    async def send(params: dict[str, Any]) -> Any:
        raise ConnectionError("gone")

    assert asyncio.run(_ask(send)) == ABORTED_MESSAGE


def test_a_withdrawn_question_aborts_the_tool_use() -> None:
    async def go() -> Any:
        question = Question("toolu_1")
        started = asyncio.Event()

        async def send(params: dict[str, Any]) -> Any:
            started.set()
            await asyncio.sleep(3600)

        task = asyncio.ensure_future(_ask(send, question))
        await started.wait()
        asked, question.asked = question.asked, None  # what PermissionBroker.withdraw does
        assert asked is not None
        asked.cancel()
        return await asyncio.wait_for(task, 5)

    assert asyncio.run(go()) == ABORTED_MESSAGE
