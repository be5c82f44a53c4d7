"""The relay's records through the core's ledger (issue 53.2, 53.3): silent failures, a cancelled
turn, and records that survive ``session/load`` (docs/proxy.md).

Frames are written out as the three agents send them (recorded by tests/e2e/test_proxy_*.py and
in issue 53): gemini-cli 0.61.0's SAFETY stop is ``end_turn`` with nothing shown; codex-acp
0.16.0 starts every prompt with its notice "Model metadata for `<model>` not found. ..." as one
agent text chunk.
"""

from __future__ import annotations

import json
from itertools import count
from typing import Any

from lifecycle.proxy import Relay, ToClient

CAPABLE = {"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}}
#: codex-acp 0.16.0's notice, verbatim (measured against the fake Responses API)
CODEX_NOTICE = (
    "Model metadata for `fake-model` not found. Defaulting to fallback metadata; this can degrade "
    "performance and cause issues."
)
#: the spec's wire record of the silent turn (docs/proxy.md "Silent failures": unknown, retry)
EMPTY = {
    "category": "unknown",
    "severity": "error",
    "title": "The agent ended its turn without an answer. Try again.",
    "actions": ["retry"],
}


def relay(agent: str = "gemini-cli", caps: dict[str, Any] | None = None) -> Relay:
    ids, epochs = count(1), count(1)
    r = Relay(command="agent", new_turn_id=lambda: f"t{next(ids)}", new_epoch=lambda: f"e{next(epochs)}")
    init = {"clientCapabilities": CAPABLE if caps is None else caps}
    r.from_client(line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
    r.from_agent(line({"jsonrpc": "2.0", "id": 0, "result": {"agentInfo": {"name": agent}}}))
    return r


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def sent(outs: list[Any]) -> list[Any]:
    return [json.loads(o.line) for o in outs if isinstance(o, ToClient)]


def prompt(r: Relay, n: int, session: str = "s1") -> None:
    params = {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
    r.from_client(line({"jsonrpc": "2.0", "id": n, "method": "session/prompt", "params": params}))


def update(kind: str, session: str = "s1", **fields: Any) -> bytes:
    upd = {"sessionUpdate": kind, **fields}
    return line({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": upd}})


def text(kind: str, words: str, session: str = "s1") -> bytes:
    return update(kind, session, content={"type": "text", "text": words})


def answer(n: int, stop: str = "end_turn") -> bytes:
    return line({"jsonrpc": "2.0", "id": n, "result": {"stopReason": stop}})


def error(n: int, code: int = 429, message: str = "Resource has been exhausted (e.g. check quota).") -> bytes:
    return line({"jsonrpc": "2.0", "id": n, "error": {"code": code, "message": message}})


def record_of(message: dict[str, Any]) -> dict[str, Any] | None:
    holder = message.get("result") or message.get("params", {}).get("update") or {}
    rec: dict[str, Any] | None = holder.get("_meta", {}).get("jetbrains", {}).get("air", {}).get("sessionFailure")
    return rec


# ------------------------------------------------------------------ silent failures


def test_a_turn_that_shows_nothing_is_a_record_on_its_own_answer() -> None:
    r = relay()
    prompt(r, 1)
    [out] = sent(r.from_agent(answer(1)))
    assert out["result"]["stopReason"] == "end_turn"
    assert record_of(out) == {"id": "t1:error", "revision": 1, **EMPTY}


def test_a_turn_that_shows_a_tool_call_or_a_thought_but_no_text_is_no_failure() -> None:
    r = relay()
    for n, shown in ((1, update("tool_call", toolCallId="c1", title="ls")), (2, text("agent_thought_chunk", "hmm"))):
        prompt(r, n)
        assert sent(r.from_agent(shown)) == [json.loads(shown)]
        assert sent(r.from_agent(answer(n))) == [json.loads(answer(n))]
    assert r.active("s1") == ()


def test_codexs_notice_is_passed_on_and_is_no_answer() -> None:
    r = relay("codex-acp")
    prompt(r, 1)
    r.from_agent(error(1, -32603, "Internal error"))
    assert r.active("s1") == ("t1:error",)
    prompt(r, 2)
    notice = text("agent_message_chunk", CODEX_NOTICE)
    assert [o.line for o in r.from_agent(notice)] == [notice]  # unchanged, for a capable client too
    # the notice is all the turn showed: a silent turn, and the earlier failure is still active
    [out] = sent(r.from_agent(answer(2)))
    assert record_of(out) == {"id": "t2:error", "revision": 1, **EMPTY}
    assert r.active("s1") == ("t1:error", "t2:error")
    prompt(r, 3)
    r.from_agent(notice)
    r.from_agent(text("agent_message_chunk", "Hello"))
    assert sent(r.from_agent(answer(3))) == [json.loads(answer(3))]
    assert r.active("s1") == ()


def test_a_plain_client_gets_the_silent_turn_as_it_is() -> None:
    r = relay(caps={})
    prompt(r, 1)
    assert [o.line for o in r.from_agent(answer(1))] == [answer(1)]


# ------------------------------------------------------------------ cancel


def test_a_cancelled_turn_makes_no_record() -> None:
    # lifecycle.session_flow: "a cancelled turn makes no record and shows nothing more"; the
    # agent's own answer (opencode 1.18.33 answers a cancel end_turn) is passed on as it is.
    r = relay()
    for n, late in ((1, error(1)), (2, answer(2)), (3, answer(3, "cancelled"))):
        prompt(r, n)
        r.from_client(line({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}))
        assert [o.line for o in r.from_agent(late)] == [late]
    assert r.active("s1") == () and r.kept("s1") == ()


# ------------------------------------------------------------------ session/load


def _load(r: Relay, n: int, session: str = "s1") -> None:
    params = {"sessionId": session, "cwd": "/p", "mcpServers": []}
    r.from_client(line({"jsonrpc": "2.0", "id": n, "method": "session/load", "params": params}))


def test_records_are_replayed_at_their_places_on_session_load() -> None:
    # Issue 53.2: "the proxy keeps what it published per session and replays it at the same
    # transcript positions"; spec "History replay": "Every recognized occurrence is replayed as a
    # typed record at its original transcript position"; the same id and revision (spec "Identity":
    # "The same or a lower revision is idempotently ignored by the client").
    r = relay()
    params = {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}, {"type": "text", "text": " there"}]}
    r.from_client(line({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": params}))
    [first] = sent(r.from_agent(error(1)))
    prompt(r, 2)
    r.from_agent(text("agent_message_chunk", "Hello"))
    r.from_agent(answer(2))
    prompt(r, 3)
    [third] = sent(r.from_agent(error(3, 503, "The model is overloaded.")))
    _load(r, 10)
    replay = [
        text("user_message_chunk", "hi"),
        text("user_message_chunk", " there"),  # the first prompt's two blocks, no messageId
        text("user_message_chunk", "again"),  # the failed first prompt showed nothing: no break
        text("agent_message_chunk", "Hello"),
        text("user_message_chunk", "once more"),
    ]
    out = [sent(r.from_agent(frame)) for frame in replay]
    info = {"sessionUpdate": "session_info_update", "_meta": first["result"]["_meta"]}
    replayed_first = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": info}}
    assert out == [
        [json.loads(replay[0])],
        [json.loads(replay[1])],
        [replayed_first, json.loads(replay[2])],  # before the second prompt's user message
        [json.loads(replay[3])],
        [json.loads(replay[4])],  # the second prompt's answer made no record
    ]
    loaded = line({"jsonrpc": "2.0", "id": 10, "result": {}})
    [last, answer_line] = sent(r.from_agent(loaded))
    assert record_of(last) == record_of(third) == {**record_of(third), "id": "t3:error", "revision": 1}  # type: ignore[dict-item]
    assert answer_line == {"jsonrpc": "2.0", "id": 10, "result": {}}
    # a second load replays them again (they are kept, not used up)
    _load(r, 11)
    assert [record_of(m) for m in sent(r.from_agent(line({"jsonrpc": "2.0", "id": 11, "result": {}})))] == [
        record_of(first),
        record_of(third),
        None,
    ]


def test_a_failed_load_replays_nothing_and_a_plain_client_is_kept_nothing() -> None:
    r = relay()
    prompt(r, 1)
    r.from_agent(error(1))
    _load(r, 10)
    failed = line({"jsonrpc": "2.0", "id": 10, "error": {"code": -32002, "message": "Resource not found"}})
    assert [o.line for o in r.from_agent(failed)] == [failed]
    plain = relay(caps={})
    prompt(plain, 1)
    plain.from_agent(error(1))
    _load(plain, 10)
    loaded = line({"jsonrpc": "2.0", "id": 10, "result": {}})
    assert [o.line for o in plain.from_agent(loaded)] == [loaded]
    assert plain.kept("s1") == ()


def test_loads_never_answered_hold_bounded_memory() -> None:
    # a hostile client's unanswered loads: the oldest of more than 64 is let go (its late answer
    # then passes as it is, with nothing replayed)
    r = relay()
    prompt(r, 1)
    r.from_agent(error(1))
    for n in range(100, 165):
        _load(r, n)
    first = line({"jsonrpc": "2.0", "id": 100, "result": {}})
    assert [o.line for o in r.from_agent(first)] == [first]
    last = line({"jsonrpc": "2.0", "id": 164, "result": {}})
    assert [record_of(m)["id"] for m in sent(r.from_agent(last))[:-1]] == ["t1:error"]  # type: ignore[index]
