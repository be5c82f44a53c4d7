"""The proxy's sans-I/O relay (lifecycle/proxy/relay.py, issue 53.1 and 53.2), line by line.

The agents' frames are the shapes recorded from the real agents (issue 53's text and
tests/e2e/test_proxy_gemini.py for gemini-cli 0.61.0; codex-acp 0.16.0 and opencode 1.18.33 as the
issue describes them). Expected records are literals: category and actions from the family
tables' basis (the spec's "Categories" and "Actions"), titles the agent's own words.
"""

from __future__ import annotations

import json
from itertools import count
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from secrets_corpus import CONTEXTS, SHAPES, SecretShape, embed, escaped_forms

from lifecycle.proxy import PARSE_ERROR, Problem, Relay, ToAgent, ToClient
from lifecycle.proxy.relay import MAX_KEPT

CAPABLE = {"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}}


def relay(command: str = "/usr/bin/gemini") -> Relay:
    ids = count(1)
    epochs = count(1)
    return Relay(command=command, new_turn_id=lambda: f"t{next(ids)}", new_epoch=lambda: f"e{next(epochs)}")


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def to_client(outs: list[Any]) -> list[Any]:
    return [json.loads(o.line) for o in outs if isinstance(o, ToClient)]


def start(r: Relay, caps: dict[str, Any], agent_name: str = "gemini-cli", agent_caps: Any = None) -> list[Any]:
    r.from_client(line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"clientCapabilities": caps}}))
    result: dict[str, Any] = {"protocolVersion": 1, "agentInfo": {"name": agent_name, "version": "1"}}
    if agent_caps is not None:
        result["agentCapabilities"] = agent_caps
    return to_client(r.from_agent(line({"jsonrpc": "2.0", "id": 0, "result": result})))


def prompt(r: Relay, request_id: int, session: str = "s1") -> None:
    params = {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
    outs = r.from_client(line({"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params}))
    assert outs == [ToAgent(line({"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params}))]


def record(answer: dict[str, Any]) -> dict[str, Any]:
    rec: dict[str, Any] = answer["result"]["_meta"]["jetbrains"]["air"]["sessionFailure"]
    return rec


def expected_record(category: str, title: str, actions: list[str], incident: str = "t1:error") -> dict[str, Any]:
    """A record as the spec's "Wire record" table writes it (revision 1: each incident is new)."""
    return {
        "id": incident,
        "revision": 1,
        "category": category,
        "severity": "error",
        "title": title,
        "actions": actions,
    }


def chunk(session: str, text: str) -> bytes:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return line({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}})


# ------------------------------------------------------------------ a plain client: byte for byte

PLAIN_SESSION = [
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}',
    b'{"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s1", "prompt": []}}',
    b'{"jsonrpc":"2.0","id":"x","result":{"outcome":{"outcome":"selected","optionId":"allow"}}}',
]
PLAIN_AGENT = [
    b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"gemini-cli"}}}',
    b'{"id":1,"jsonrpc":"2.0","error":{"code":429,"message":"Resource has been exhausted (e.g. check quota)."}}',
    b'{"jsonrpc":"2.0","id":2,"result":{"stopReason":"refusal"}}',
    b'{"jsonrpc":"2.0","id":"x","method":"session/request_permission","params":{}}',
    b"[1, 2]",
    b'{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","_meta":{"quota":{"n":1}}}}\r',
]


def test_a_plain_client_gets_every_line_byte_for_byte() -> None:
    # Issue 53.1: "every frame passes through unchanged (the same JSON value)"; the relay keeps
    # even the spacing and key order (the same bytes).
    r = relay()
    assert [r.from_client(b) for b in PLAIN_SESSION] == [[ToAgent(b)] for b in PLAIN_SESSION]
    assert [r.from_agent(b) for b in PLAIN_AGENT] == [[ToClient(b)] for b in PLAIN_AGENT]
    assert r.agent_exited() == []
    assert not r.records


def test_an_agent_that_advertises_session_failure_is_passed_through() -> None:
    # Issue 53.1: an agent that makes the records itself (lifecycle acp does) is left alone, even
    # for a capable client: its initialize answer and its prompt errors travel as they are.
    r = relay()
    r.from_client(line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"clientCapabilities": CAPABLE}}))
    answer = line({"jsonrpc": "2.0", "id": 0, "result": {"agentCapabilities": CAPABLE}})
    assert r.from_agent(answer) == [ToClient(answer)]
    prompt(r, 5)
    error = line({"jsonrpc": "2.0", "id": 5, "error": {"code": -32603, "message": "Internal error: boom"}})
    assert r.from_agent(error) == [ToClient(error)]
    assert not r.records


def test_a_capable_client_is_told_the_proxy_makes_the_records() -> None:
    # The proxy advertises for the agent (lifecycle.negotiation.agent_capabilities_meta's shape),
    # keeping the agent's own capabilities and _meta keys.
    r = relay()
    answer = start(r, CAPABLE, agent_caps={"loadSession": True, "_meta": {"x": 1}})
    assert answer[0]["result"]["agentCapabilities"] == {
        "loadSession": True,
        "_meta": {"x": 1, "jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}},
    }
    assert answer[0]["result"]["agentInfo"] == {"name": "gemini-cli", "version": "1"}
    assert r.records and r.family == "gemini"


# ------------------------------------------------------------------ records from errors


@pytest.mark.parametrize(
    ("agent", "error", "expected"),
    [
        # gemini-cli 0.61.0 (recorded by tests/e2e/test_proxy_gemini.py): the HTTP status as the code
        (
            "gemini-cli",
            {"code": 429, "message": "Resource has been exhausted (e.g. check quota)."},
            ("limit", "Resource has been exhausted (e.g. check quota).", ["retry"]),
        ),
        # ... and for a 500 the raw Google JSON body as the message: its own message is the title
        (
            "gemini-cli",
            {
                "code": 500,
                "message": '{"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}',
            },
            ("service", "Internal error encountered.", ["retry"]),
        ),
        (
            "gemini-cli",
            {
                "code": 401,
                "message": '{"error":{"code":401,"message":"API key not valid.","status":"UNAUTHENTICATED"}}',
            },
            ("access", "API key not valid.", ["login"]),
        ),
        (
            "gemini-cli",
            {
                "code": 400,
                "message": '{"error":{"code":400,"message":"Invalid argument.","status":"INVALID_ARGUMENT"}}',
            },
            ("request", "Invalid argument.", []),
        ),
        (
            "gemini-cli",
            {"code": 503, "message": "The model is overloaded."},
            ("service", "The model is overloaded.", ["retry"]),
        ),
        # codex-acp 0.16.0 (recorded by tests/e2e/test_proxy_codex.py): -32603 "Internal error", the
        # words in data.message, the kind in data.codex_error_info; a 401 is kind "other" and its
        # words carry the API URL (issue 53), taken out; a 429 names its status
        (
            "codex-acp",
            {
                "code": -32603,
                "message": "Internal error",
                "data": {
                    "message": "unexpected status 401 Unauthorized: Incorrect API key provided., url: http://127.0.0.1:42797/v1/responses",
                    "codex_error_info": "other",
                },
            },
            ("access", "unexpected status 401 Unauthorized: Incorrect API key provided.", ["login"]),
        ),
        (
            "codex-acp",
            {
                "code": -32603,
                "message": "Internal error",
                "data": {
                    "message": "We're currently experiencing high demand, which may cause temporary errors.",
                    "codex_error_info": "internal_server_error",
                },
            },
            ("service", "We're currently experiencing high demand, which may cause temporary errors.", ["retry"]),
        ),
        (
            "codex-acp",
            {
                "code": -32603,
                "message": "Internal error",
                "data": {
                    "message": "exceeded retry limit, last status: 429 Too Many Requests",
                    "codex_error_info": {"response_too_many_failed_attempts": {"http_status_code": 429}},
                },
            },
            ("limit", "exceeded retry limit, last status: 429 Too Many Requests", ["retry"]),
        ),
        (
            "codex-acp",
            {
                "code": -32603,
                "message": "Internal error",
                "data": {
                    "message": "Your input exceeds the context window.",
                    "codex_error_info": "contextWindowExceeded",
                },
            },
            ("limit", "Your input exceeds the context window.", ["new_session"]),
        ),
        # opencode: -32603 with data.errorName
        (
            "opencode",
            {
                "code": -32603,
                "message": "Internal error",
                "data": {"errorName": "ContextOverflowError", "message": "Context overflow"},
            },
            ("limit", "Context overflow", ["new_session"]),
        ),
        (
            "opencode",
            {"code": -32603, "message": "Bad Gateway", "data": {"errorName": "APIError"}},
            ("service", "Bad Gateway", ["retry"]),
        ),
        # an unknown family: the spec's service / retry, and with only a generic message the
        # adapter's fallback (spec: "Adapter-authored fallback text is allowed only when no ... message exists")
        (
            "some-agent",
            {"code": 401, "message": "Internal error"},
            ("service", "The agent reported an error without a message. Try again.", ["retry"]),
        ),
        # a kind the family's table does not know: service / retry too
        ("gemini-cli", {"code": 418, "message": "I'm a teapot"}, ("service", "I'm a teapot", ["retry"])),
    ],
)
def test_a_prompt_error_becomes_a_record_on_an_end_turn_answer(
    agent: str, error: dict[str, Any], expected: tuple[str, str, list[str]]
) -> None:
    # Spec "Delivery surfaces": a turn-terminal failure rides the successful PromptResponse
    # (stopReason end_turn); its id is <turnId>:error ("Identity"), revision 1.
    r = relay("agent")
    start(r, CAPABLE, agent_name=agent)
    prompt(r, 7)
    answer = to_client(r.from_agent(line({"jsonrpc": "2.0", "id": 7, "error": error})))
    category, title, actions = expected
    assert answer == [
        {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {
                "stopReason": "end_turn",
                "_meta": {
                    "jetbrains": {
                        "air": {
                            "version": 1,
                            "sessionFailure": expected_record(category, title, actions),
                        }
                    }
                },
            },
        }
    ]
    assert r.active("s1") == ("t1:error",)


@pytest.mark.parametrize("code", [-32602, -32601, -32600, -32700, -32002])
def test_a_protocol_error_is_passed_on_as_it_is(code: int) -> None:
    # a wrong request is no model failure: the client gets the agent's error (families.PROTOCOL_ERRORS)
    r = relay()
    start(r, CAPABLE)
    prompt(r, 1)
    error = line({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "Invalid params"}})
    assert r.from_agent(error) == [ToClient(error)]
    assert r.active("s1") == ()


def test_a_secret_in_the_agents_words_never_reaches_the_title() -> None:
    # Security rule: every title goes through lifecycle.titles.present (redaction).
    r = relay()
    start(r, CAPABLE)
    prompt(r, 1)
    words = "API key not valid: AIzaSyD-1234567890abcdefghijklmnopqrstu was rejected"
    [answer] = to_client(r.from_agent(line({"jsonrpc": "2.0", "id": 1, "error": {"code": 401, "message": words}})))
    assert "AIzaSyD-1234567890abcdefghijklmnopqrstu" not in json.dumps(answer)
    assert record(answer)["title"].startswith("API key not valid: ")


@pytest.mark.parametrize(
    ("stop", "category", "actions", "title"),
    [
        ("refusal", "request", [], "The model declined to answer this request."),
        ("max_tokens", "limit", ["new_session"], "The answer was cut off at the model's token limit."),
        ("max_turn_requests", "limit", ["new_session"], "The turn reached its limit of model requests."),
    ],
)
def test_a_turn_ended_short_keeps_its_stop_reason_and_carries_a_record(
    stop: str, category: str, actions: list[str], title: str
) -> None:
    r = relay()
    start(r, CAPABLE)
    prompt(r, 3)
    outs = r.from_agent(line({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": stop, "_meta": {"quota": 1}}}))
    [answer] = to_client(outs)
    assert answer["result"]["stopReason"] == stop
    assert answer["result"]["_meta"]["quota"] == 1
    assert record(answer) == expected_record(category, title, actions)


def test_an_agent_that_dies_mid_prompt_still_answers_the_prompt() -> None:
    # Issue 53.2: "the prompt still answered, a connection record with new_session".
    r = relay()
    start(r, CAPABLE)
    prompt(r, 4)
    prompt(r, 9, session="s2")
    answers = to_client(r.agent_exited())
    assert [a["id"] for a in answers] == [4, 9]
    assert [a["result"]["stopReason"] for a in answers] == ["end_turn", "end_turn"]
    assert [record(a) for a in answers] == [
        {
            "id": f"t{n}:error",
            "revision": 1,
            "category": "connection",
            "severity": "error",
            "title": "The agent stopped during this turn. Start a new session to go on.",
            "actions": ["new_session"],
        }
        for n in (1, 2)
    ]
    assert r.agent_exited() == []


def test_a_plain_client_gets_nothing_invented_when_the_agent_dies() -> None:
    r = relay()
    start(r, {})
    prompt(r, 4)
    assert r.agent_exited() == []


def test_recovery_at_the_next_real_answer_publishes_nothing() -> None:
    # Spec "Internal recovery": other turn-scoped failures stop being active at a later confirmed
    # attempt; "Recovery never removes the transcript record" (nothing is sent for it).
    r = relay()
    start(r, CAPABLE)
    prompt(r, 1)
    r.from_agent(line({"jsonrpc": "2.0", "id": 1, "error": {"code": 429, "message": "slow down"}}))
    prompt(r, 2)
    r.from_agent(line({"jsonrpc": "2.0", "id": 2, "error": {"code": 503, "message": "busy"}}))
    assert r.active("s1") == ("t1:error", "t2:error")
    # a turn without an answer (end_turn, no text: gemini's SAFETY stop) recovers nothing; it is
    # a failure of its own (docs/proxy.md "Silent failures")
    prompt(r, 3)
    end = line({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}})
    assert record(to_client(r.from_agent(end))[0])["id"] == "t3:error"
    assert r.active("s1") == ("t1:error", "t2:error", "t3:error")
    prompt(r, 4)
    assert r.from_agent(chunk("s1", "Hello")) == [ToClient(chunk("s1", "Hello"))]
    end = line({"jsonrpc": "2.0", "id": 4, "result": {"stopReason": "end_turn"}})
    assert r.from_agent(end) == [ToClient(end)]
    assert r.active("s1") == ()


def test_a_session_that_only_fails_keeps_a_bounded_number_of_records() -> None:
    r = relay()
    start(r, CAPABLE)
    for n in range(1, 301):
        prompt(r, n)
        r.from_agent(line({"jsonrpc": "2.0", "id": n, "error": {"code": 429, "message": "x"}}))
    kept = [rec.id for rec in r.kept("s1")]
    assert len(kept) == MAX_KEPT == 256
    assert kept[0] == "t45:error" and kept[-1] == "t300:error"


def test_an_answer_in_another_session_recovers_nothing_here() -> None:
    r = relay()
    start(r, CAPABLE)
    prompt(r, 1)
    r.from_agent(line({"jsonrpc": "2.0", "id": 1, "error": {"code": 429, "message": "slow down"}}))
    prompt(r, 2, session="s2")
    r.from_agent(chunk("s2", "Hello"))
    r.from_agent(line({"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}))
    assert r.active("s1") == ("t1:error",)


def test_string_and_number_ids_are_different_requests() -> None:
    # JSON-RPC 2.0: an id is a string or a number; "1" answers no request whose id was 1.
    r = relay()
    start(r, CAPABLE)
    prompt(r, 1)
    stray = line({"jsonrpc": "2.0", "id": "1", "error": {"code": 429, "message": "x"}})
    assert r.from_agent(stray) == [ToClient(stray)]
    assert r.active("s1") == ()


# ------------------------------------------------------------------ garbage


@pytest.mark.parametrize("garbage", [b"not json", b'{"jsonrpc":"2.0",', b"\xff\xfe{}"])
def test_a_malformed_client_line_is_answered_and_never_reaches_the_agent(garbage: bytes) -> None:
    # JSON-RPC 2.0 section 5.1: -32700 Parse error, id null.
    r = relay()
    outs = r.from_client(garbage)
    assert [o for o in outs if isinstance(o, ToAgent)] == []
    assert to_client(outs) == [
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": PARSE_ERROR, "message": "Parse error: the proxy received a line that is not JSON"},
        }
    ]
    [problem] = [o for o in outs if isinstance(o, Problem)]
    assert problem.side == "client" and garbage.decode(errors="replace") not in problem.what


@pytest.mark.parametrize("garbage", [b"Loaded cached credentials.", b"\xff\xfe{}"])
def test_a_malformed_agent_line_is_dropped_and_reported(garbage: bytes) -> None:
    r = relay()
    start(r, CAPABLE)
    prompt(r, 1)
    assert r.from_agent(garbage) == [Problem("agent", "a line that is not UTF-8 JSON: dropped")]
    # the session goes on: the prompt's answer still becomes its record
    [answer] = to_client(r.from_agent(line({"jsonrpc": "2.0", "id": 1, "error": {"code": 429, "message": "x"}})))
    assert record(answer)["category"] == "limit"


# ------------------------------------------------------------------ hostile input, any order

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
_KEYS = st.sampled_from(["id", "method", "params", "result", "error", "sessionId", "stopReason", "code", "data"])
_FRAME = st.dictionaries(_KEYS, _JSON | st.sampled_from(["session/prompt", "initialize", "s1", 1, "refusal"]))
_LINE = st.one_of(st.binary(max_size=40), _FRAME.map(line), _JSON.map(line))


@given(
    steps=st.lists(st.tuples(st.sampled_from(["client", "agent", "exit"]), _LINE), max_size=12), capable=st.booleans()
)
def test_any_lines_in_any_order_never_raise_and_plain_lines_pass_unchanged(
    steps: list[tuple[str, bytes]], capable: bool
) -> None:
    # Issue 53.5: "a malformed line from either side is a clear error and never a crash".
    r = relay()
    start(r, CAPABLE if capable else {})
    for side, raw in steps:
        if side == "exit":
            outs = r.agent_exited()
            assert capable or outs == []
            continue
        outs = r.from_client(raw) if side == "client" else r.from_agent(raw)
        for out in outs:
            if isinstance(out, (ToAgent, ToClient)):
                json.loads(out.line)  # whatever goes out is JSON
        if not capable and not any(isinstance(o, Problem) for o in outs):
            assert outs == [ToAgent(raw) if side == "client" else ToClient(raw)]


# ------------------------------------------------------------------ secrets (tests/secrets_corpus.py)

# where each family puts its words (docs/proxy.md): gemini's message and its raw JSON body,
# codex's data.message, opencode's "Internal error: ..." message
_WORD_PLACES: list[tuple[str, Any]] = [
    ("gemini-cli", lambda text: {"code": 429, "message": text}),
    ("gemini-cli", lambda text: {"code": 500, "message": json.dumps({"error": {"code": 500, "message": text}})}),
    ("codex-acp", lambda text: {"code": -32603, "message": "Internal error", "data": {"message": text}}),
    (
        "OpenCode",
        lambda text: {"code": -32603, "message": f"Internal error: {text}", "data": {"errorName": "APIError"}},
    ),
]
_SECRET_CASES = [(shape, example) for shape in SHAPES for example in shape.examples]


@pytest.mark.parametrize(
    ("shape", "example"), _SECRET_CASES, ids=[f"{s.name}-{i}" for i, (s, _) in enumerate(_SECRET_CASES)]
)
def test_no_secret_of_the_corpus_reaches_a_record(shape: SecretShape, example: str) -> None:
    # Security rule: "No secret reaches a client": every title goes through lifecycle.titles.present.
    # Each example in one embedding per place, rotating through the embeddings and contexts.
    forms = escaped_forms(shape.marker)
    n = _SECRET_CASES.index((shape, example))
    for k, (agent, error) in enumerate(_WORD_PLACES):
        embeddings = embed(example, CONTEXTS[(n + k) % len(CONTEXTS)])
        text = embeddings[(n + k) % len(embeddings)]
        r = relay("agent")
        start(r, CAPABLE, agent_name=agent)
        prompt(r, 1)
        outs = r.from_agent(line({"jsonrpc": "2.0", "id": 1, "error": error(text)}))
        [answer] = to_client(outs)
        sent = json.dumps(answer, ensure_ascii=False)
        assert not any(f in sent for f in forms), (agent, text)
