"""Not a test: what the ledger's tests (``test_ledger*.py``) feed and expect.

* inputs: ``RATE``, ``LIMIT`` (Claude Code's texts), ``retry``, ``synthetic``, ``answer``,
  ``error_result``, ``OK``, ``failed_turn``;
* the exact wire output: what the client receives, written out as JSON-RPC literals (FORMAT.md:
  the record at _meta.jetbrains.air.sessionFailure next to version 1; a turn-terminal failure on
  the PromptResponse with stopReason end_turn; everything else on a session_info_update; a legacy
  client gets the JSON-RPC error): ``rec``, ``info``, ``ends_turn``, ``settled``, ``legacy_error``,
  ``agent_text``, ``wire`` and the fallback titles (``QUERY_ERROR_TITLE``, ``WORKER_TITLE``,
  ``MISSING_TITLE``, ``INTERNAL_TITLE``, ``NO_MESSAGE_TITLE``).
"""

from __future__ import annotations

from session_harness import Session

from lifecycle import (
    ApiRetry,
    Assistant,
    PromptStarted,
    Result,
)

RATE = "API Error: Request rejected (429) · Number of requests has exceeded your rate limit"
LIMIT = "You've hit your 5-hour limit · resets 4:06pm (UTC)"


def retry(attempt: int, status: int | None = 429, kind: str = "rate_limit") -> ApiRetry:
    return ApiRetry(attempt=attempt, max_retries=10, error_status=status, error=kind)


def synthetic(text: str, error: str | None) -> Assistant:
    return Assistant(text=text, model="<synthetic>", error=error)


def answer(text: str = "Hello") -> Assistant:
    return Assistant(text=text, model="claude-opus-5-5")


def error_result(text: str, status: int | None = 429) -> Result:
    return Result(subtype="success", is_error=True, result=text, api_error_status=status, terminal_reason="api_error")


OK = Result(subtype="success", is_error=False, result="Hello", stop_reason="end_turn")


def failed_turn(s: Session, turn: str, text: str = RATE, kind: str = "rate_limit") -> None:
    s.feed(PromptStarted(turn_id=turn), synthetic(text, kind), error_result(text))


QUERY_ERROR_TITLE = "The connection to Claude Code was lost. Send a message to restart it, or start a new session."
WORKER_TITLE = "Claude Code shut down. Send a message to restart it, or start a new session."
MISSING_TITLE = "Claude Code ended the turn without a result. Try again."
INTERNAL_TITLE = "The adapter hit an internal error. Try again."
NO_MESSAGE_TITLE = "Claude Code reported an error without a message. Try again."


def rec(
    id_: str, revision: int, category: str, severity: str, title: str, actions: list[str], details: str | None = None
) -> dict[str, object]:
    out: dict[str, object] = {"id": id_, "revision": revision, "category": category, "severity": severity}
    out["title"] = title
    if details is not None:
        out["details"] = details
    out["actions"] = actions
    return out


def info(record: dict[str, object], session: str = "s1") -> dict[str, object]:
    meta = {"jetbrains": {"air": {"version": 1, "sessionFailure": record}}}
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": {"sessionUpdate": "session_info_update", "_meta": meta}},
    }


def ends_turn(turn: str, record: dict[str, object]) -> dict[str, object]:
    meta = {"jetbrains": {"air": {"version": 1, "sessionFailure": record}}}
    return {"jsonrpc": "2.0", "id": turn, "result": {"stopReason": "end_turn", "_meta": meta}}


def settled(turn: str, stop: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": turn, "result": {"stopReason": stop}}


def legacy_error(turn: str, code: int, message: str, error_kind: str | None = None) -> dict[str, object]:
    # The reference adapter's legacy errors (contract parity item 8): "Internal error: <Claude's
    # text>" with data {"errorKind": <SDK kind>} when there is one; -32000 with no data.
    error: dict[str, object] = {"code": code, "message": message}
    if error_kind is not None:
        error["data"] = {"errorKind": error_kind}
    return {"jsonrpc": "2.0", "id": turn, "error": error}


def agent_text(text: str) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk",
                                                 "content": {"type": "text", "text": text}}},
    }


def wire(s: Session, *events: object) -> list[dict[str, object]]:
    return [m.to_jsonrpc() for m in s.feed(*events)]  # type: ignore[arg-type]
