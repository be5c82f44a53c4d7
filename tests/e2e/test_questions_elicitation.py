"""Claude's questions to the user end to end: the real Claude Code CLI's ``AskUserQuestion`` tool,
through ``python -m lifecycle.agent`` and the real ACP client, against the fake Anthropic API.

A client that advertises ``elicitation.form`` gets an ``elicitation/create`` request (ACP
elicitation, form mode), written out below as the reference adapter 0.101.0 sends it
(``dist/elicitation.js``, ``askUserQuestionsToCreateRequest``): the question as the message, one
``question_0`` field whose ``oneOf`` holds the options (label as value and title, description),
an optional ``question_0_custom`` "Other" field, the tool call id. The answer reaches the model in
the tool's result, written by Claude Code's own AskUserQuestion tool; a decline reaches it as an
answer-less result, a cancel as an aborted tool use ("Tool use aborted", the reference's words).
A client without form elicitation sees the tool call end; a ``session/cancel`` while the question
is open withdraws it (``$/cancel_request``), as permission questions are withdrawn.
"""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any

import acp
import pytest

from . import harness
from .fakeapi import text_reply
from .harness import Run, Script, agent, result_text, run_async, tool_results, tool_turn, tool_use

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

_spawn = acp.spawn_agent_process
FORM_CAPS: dict[str, Any] = {"elicitation": {"form": {}}}
QUESTION = "Which colour should the button be?"
ASK_INPUT = {
    "questions": [
        {
            "question": QUESTION,
            "header": "Colour",
            "options": [
                {"label": "Red", "description": "A warm colour"},
                {"label": "Blue", "description": "A cool colour"},
            ],
            "multiSelect": False,
        }
    ]
}


def expected_request(session_id: str, tool_call_id: str) -> dict[str, Any]:
    """The reference's ``elicitation/create`` params for ``ASK_INPUT`` (written out)."""
    return {
        "mode": "form",
        "sessionId": session_id,
        "toolCallId": tool_call_id,
        "message": QUESTION,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "question_0": {
                    "type": "string",
                    "oneOf": [
                        {"const": "Red", "title": "Red", "description": "A warm colour"},
                        {"const": "Blue", "title": "Blue", "description": "A cool colour"},
                    ],
                    "title": "Colour",
                },
                "question_0_custom": {
                    "type": "string",
                    "title": "Other",
                    "description": "Type your own answer, or add a note to the option you chose above (optional).",
                },
            },
        },
    }


class ElicitingClient(harness.Client):
    """The harness's client, which also answers ``elicitation/create`` with ``reply`` (a response
    dict, or a coroutine function's)."""

    reply: Any = None

    def __init__(self, answer: Any) -> None:
        super().__init__(answer)
        self.elicited = asyncio.Event()

    async def create_elicitation(self, message: str, mode: Any, **kw: Any) -> Any:
        self.elicited.set()
        result = type(self).reply
        if callable(result):
            result = await result()
        return result


@pytest.fixture
def eliciting(monkeypatch: pytest.MonkeyPatch) -> type[ElicitingClient]:
    """The harness's agent with this client, on the ACP SDK's unstable protocol (elicitation is
    unstable in ACP: without it the SDK's client answers ``-32601``)."""
    cls = type("Eliciting", (ElicitingClient,), {})
    monkeypatch.setattr(harness, "Client", cls)
    monkeypatch.setattr(acp, "spawn_agent_process", functools.partial(_spawn, use_unstable_protocol=True))
    return cls


def elicitations(run: Run) -> list[dict[str, Any]]:
    return [m for m in run.incoming() if m.get("method") == "elicitation/create"]


def asked_permission(run: Run) -> bool:
    return any(m.get("method") == "session/request_permission" for m in run.incoming())


def ask_script() -> Script:
    return Script(tool_turn(tool_use("AskUserQuestion", "toolu_ask", **ASK_INPUT)), text_reply("Noted."))


def reject(params: dict[str, Any]) -> Any:
    return {"outcome": {"outcome": "selected", "optionId": "reject"}}


def test_the_chosen_answer_reaches_the_model(tmp_path: Path, eliciting: type[ElicitingClient]) -> None:
    eliciting.reply = {"action": "accept", "content": {"question_0": "Blue"}}

    async def go() -> None:
        async with agent(tmp_path, ask_script(), reject, raw_caps=FORM_CAPS) as run:
            assert (await run.prompt("pick a colour")).stop_reason == "end_turn"
            (request,) = elicitations(run)
            assert request["params"] == expected_request(run.sid, "toolu_ask")
            assert not asked_permission(run)  # a question, not a permission
            (result,) = tool_results(run.api.message_requests[1])
            assert result["tool_use_id"] == "toolu_ask"
            assert not result.get("is_error")
            # Claude Code's AskUserQuestion result: the question and the answer, quoted.
            text = result_text(result)
            assert f'"{QUESTION}"="Blue"' in text and "Red" not in text
            state = run.tool_state("toolu_ask")
            assert state["status"] == "completed"
            assert state["rawInput"] == ASK_INPUT
            assert run.records() == []

    run_async(go())


def test_a_declined_question_reaches_the_model_unanswered(tmp_path: Path, eliciting: type[ElicitingClient]) -> None:
    """Decline: the tool still runs, with no answer (the reference's: "the model is told the
    user skipped rather than the turn aborting")."""
    eliciting.reply = {"action": "decline"}

    async def go() -> None:
        async with agent(tmp_path, ask_script(), reject, raw_caps=FORM_CAPS) as run:
            assert (await run.prompt("pick a colour")).stop_reason == "end_turn"
            assert len(elicitations(run)) == 1
            (result,) = tool_results(run.api.message_requests[1])
            assert not result.get("is_error")
            # Claude Code 2.1.332's words for an AskUserQuestion run without answers.
            assert result_text(result) == "The user did not answer the questions."
            assert run.tool_state("toolu_ask")["status"] == "completed"

    run_async(go())


def test_a_cancelled_question_aborts_the_tool_use(tmp_path: Path, eliciting: type[ElicitingClient]) -> None:
    eliciting.reply = {"action": "cancel"}

    async def go() -> None:
        async with agent(tmp_path, ask_script(), reject, raw_caps=FORM_CAPS) as run:
            assert (await run.prompt("pick a colour")).stop_reason == "end_turn"
            (result,) = tool_results(run.api.message_requests[1])
            assert result.get("is_error") is True
            assert "Tool use aborted" in result_text(result)
            assert run.tool_state("toolu_ask")["status"] == "failed"

    run_async(go())


def test_without_form_elicitation_the_question_ends_at_once(tmp_path: Path) -> None:
    async def go() -> None:
        async with agent(tmp_path, ask_script(), reject, capable=False) as run:
            response = await asyncio.wait_for(run.prompt("pick a colour"), 90)
            assert response.stop_reason == "end_turn"
            assert elicitations(run) == []
            assert not asked_permission(run)
            (result,) = tool_results(run.api.message_requests[1])
            assert result.get("is_error") is True
            assert "cannot show this question" in result_text(result)
            assert run.tool_state("toolu_ask")["status"] == "failed"

    run_async(go())


def test_a_cancel_withdraws_the_open_question(tmp_path: Path, eliciting: type[ElicitingClient]) -> None:
    async def forever() -> Any:
        await asyncio.sleep(3600)

    eliciting.reply = forever

    async def go() -> None:
        async with agent(tmp_path, ask_script(), reject, raw_caps=FORM_CAPS) as run:
            prompt = asyncio.ensure_future(run.prompt("pick a colour"))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 60
            while not elicitations(run) and loop.time() < deadline:
                await asyncio.sleep(0.05)
            (request,) = elicitations(run)
            await run.conn.cancel(session_id=run.sid)
            assert (await asyncio.wait_for(prompt, 30)).stop_reason == "cancelled"
            deadline = loop.time() + 10
            cancels: list[dict[str, Any]] = []
            while not cancels and loop.time() < deadline:
                cancels = [m for m in run.incoming() if m.get("method") == "$/cancel_request"]
                await asyncio.sleep(0.05)
            assert [c["params"]["requestId"] for c in cancels] == [request["id"]]
            assert run.records() == []

    run_async(go())
