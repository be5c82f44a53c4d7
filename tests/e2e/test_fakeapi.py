"""The fake Messages API on its own (no CLI): wire format, faults, request log."""

from __future__ import annotations

import http.client
import json
import socket
import time

import pytest

from .fakeapi import SCENARIOS, FakeAnthropicAPI, StallReply, error_reply, gateway_jwt

pytestmark = pytest.mark.timeout(30)

BODY = {
    "model": "claude-opus-5-5",
    "max_tokens": 128000,
    "stream": True,
    "messages": [{"role": "user", "content": "hi"}],
}


def post(api: FakeAnthropicAPI, body=BODY, path="/v1/messages?beta=true"):
    c = http.client.HTTPConnection("127.0.0.1", api.port, timeout=10)
    c.request("POST", path, body=json.dumps(body), headers={"content-type": "application/json"})
    return c, c.getresponse()


def sse(raw: bytes) -> list[tuple[str, dict]]:
    out = []
    for chunk in raw.decode().split("\n\n"):
        if chunk.strip():
            lines = dict(line.split(": ", 1) for line in chunk.splitlines())
            out.append((lines["event"], json.loads(lines["data"])))
    return out


def test_success_stream_shape() -> None:
    with FakeAnthropicAPI("success") as api:
        assert api.base_url == f"http://127.0.0.1:{api.port}"
        _, r = post(api)
        assert r.status == 200 and r.getheader("content-type") == "text/event-stream"
        assert r.getheader("request-id").startswith("req_fake")
        events = sse(r.read())
    assert [e for e, _ in events] == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert "".join(d["delta"]["text"] for e, d in events if e == "content_block_delta") == "Hello from the fake API."
    assert events[0][1]["message"]["id"].startswith("msg_fake")
    assert events[0][1]["message"]["model"] == "claude-opus-5-5"
    assert events[-2][1]["delta"]["stop_reason"] == "end_turn"
    assert events[-2][1]["usage"]["output_tokens"] == 9
    (rec,) = api.requests
    assert (rec.method, rec.path, rec.model, rec.stream, rec.max_tokens) == (
        "POST",
        "/v1/messages?beta=true",
        "claude-opus-5-5",
        True,
        128000,
    )


def test_non_streaming_message_and_error_envelope() -> None:
    with FakeAnthropicAPI(["success", "http529"]) as api:
        _, r = post(api, {**BODY, "stream": False})
        msg = json.loads(r.read())
        assert msg["content"] == [{"type": "text", "text": "Hello from the fake API."}]
        _, r = post(api)
        body = json.loads(r.read())
        assert r.status == 529
        assert body["type"] == "error" and body["error"] == {"type": "overloaded_error", "message": "Overloaded"}
        assert body["request_id"].startswith("req_fake")
        _, r = post(api)  # the script's tail repeats
        assert r.status == 529
        r.read()


def test_conn_refused_has_nothing_listening() -> None:
    with FakeAnthropicAPI("conn_refused") as api, pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", api.port), timeout=2)
    assert api.requests == []


def test_conn_closed_sends_no_bytes() -> None:
    with FakeAnthropicAPI("conn_closed") as api:
        with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError)):
            post(api)
        assert len(api.message_requests) == 1


def test_sse_truncated_lacks_terminating_chunk() -> None:
    with FakeAnthropicAPI("sse_truncated") as api:
        _, r = post(api)
        with pytest.raises(http.client.IncompleteRead):
            r.read()
        with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError)):
            post(api, {**BODY, "stream": False})  # the non-streaming fallback is dropped too


def test_midstream_error_and_usage_limit_headers() -> None:
    with FakeAnthropicAPI("sse_midstream_overloaded") as api:
        _, r = post(api)
        events = sse(r.read())
        assert events[-1] == (
            "error",
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        )
        _, r = post(api, {**BODY, "stream": False})
        assert r.status == 529
        r.read()
    with FakeAnthropicAPI("usage_limit_gateway") as api:
        before = int(time.time())
        _, r = post(api)
        r.read()
        after = int(time.time())
        assert r.status == 429 and r.getheader("x-should-retry") == "false"
        reset = int(r.getheader("anthropic-ratelimit-unified-reset"))
        # on the hour, two to three hours after the request (the same for every request of a test)
        assert reset % 3600 == 0 and before + 2 * 3600 < reset <= after + 3 * 3600
        assert r.getheader("anthropic-ratelimit-unified-representative-claim") == "five_hour"
        assert api.message_requests[0].reply_headers["anthropic-ratelimit-unified-status"] == "rejected"


def test_tool_use_stream_and_other_routes() -> None:
    with FakeAnthropicAPI("max_turns", read_file="/x/hello.txt") as api:
        _, r = post(api)
        events = sse(r.read())
        starts = [d["content_block"] for e, d in events if e == "content_block_start"]
        assert [b["type"] for b in starts] == ["text", "tool_use"]
        assert starts[1]["name"] == "Read" and starts[1]["id"].startswith("toolu_fake")
        deltas = [d["delta"] for e, d in events if e == "content_block_delta"]
        assert json.loads(deltas[-1]["partial_json"]) == {"file_path": "/x/hello.txt"}
        c = http.client.HTTPConnection("127.0.0.1", api.port, timeout=5)
        c.request("GET", "/api/claude_code/settings")
        assert c.getresponse().status == 404
        assert [q.route for q in api.requests] == ["/v1/messages", "/api/claude_code/settings"]
        assert len(api.message_requests) == 1


def test_stall_is_released_on_stop_and_callables() -> None:
    api = FakeAnthropicAPI(lambda req: StallReply(60) if req.stream else error_reply(418, "x", "y"))
    with api:
        _, r = post(api, {**BODY, "stream": False})
        assert r.status == 418
        r.read()
        # the client gives up after 10 s, long before the 60 s stall would end by itself: were the
        # stall not released, getresponse() would raise TimeoutError, which pytest.raises rejects
        c = http.client.HTTPConnection("127.0.0.1", api.port, timeout=10)
        c.request("POST", "/v1/messages", body=json.dumps(BODY))
        assert api.wait_for_requests(2, timeout=5)
    with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError)):
        c.getresponse()  # stop() released the stalled request


def test_every_scenario_name_and_jwt() -> None:
    assert {"success", "usage_limit_gateway", "max_budget", "conn_refused"} <= set(SCENARIOS)
    with pytest.raises(ValueError):
        FakeAnthropicAPI("no_such_scenario")
    head, payload, sig = gateway_jwt().split(".")
    import base64

    pad = lambda s: s + "=" * (-len(s) % 4)  # noqa: E731
    assert json.loads(base64.urlsafe_b64decode(pad(payload))) == {"aud": "claude-gateway", "sub": "fake-user"}
    assert json.loads(base64.urlsafe_b64decode(pad(head)))["alg"] == "none" and sig == "sig"


TITLE_BODY = {
    **BODY,
    "system": [{"type": "text", "text": "You are naming a coding session. Reply with JSON."}],
    "messages": [{"role": "user", "content": "<session>\nread notes.txt\n</session>"}],
    "output_config": {"format": {"type": "json_schema", "schema": {"properties": {"title": {"type": "string"}}}}},
}
UNIFIED = {
    "anthropic-ratelimit-unified-status": "allowed_warning",
    "anthropic-ratelimit-unified-5h-utilization": "0.9",
}


def test_a_title_request_before_any_answer_waits_and_carries_the_accounts_reading() -> None:
    """The CI run of stop 42 failed once: Claude Code's title side request was answered before the
    scenario's first answer, without rate-limit headers, and Claude Code read that as a window's
    change (an extra ``rate_limit_event``). The real API reports the account's state on every
    answer, so the fake's side answers carry the last reading, and one that comes first waits."""
    from threading import Thread

    from .fakeapi import text_reply

    with FakeAnthropicAPI([text_reply("first", headers=dict(UNIFIED)), text_reply("second")]) as api:
        got: dict[str, object] = {}

        def ask_title() -> None:
            _, r = post(api, TITLE_BODY)
            got["headers"] = {k.lower(): v for k, v in r.getheaders()}
            got["at"] = time.monotonic()
            r.read()

        title = Thread(target=ask_title)
        title.start()
        time.sleep(0.5)
        assert "at" not in got  # still waiting: no scenario answer yet
        sent = time.monotonic()
        _, r = post(api)
        r.read()
        title.join(10)
        assert got["at"] >= sent
        headers = got["headers"]
        assert isinstance(headers, dict)
        assert {k: v for k, v in headers.items() if k.startswith("anthropic-ratelimit-unified-")} == UNIFIED
        (t,) = api.title_requests
        assert len(api.message_requests) == 1 and t.reply_status == 200
        _, r = post(api)  # the next answer has no reading: a later side request carries none
        r.read()
        _, r = post(api, TITLE_BODY)
        assert [k for k, _ in r.getheaders() if k.lower().startswith("anthropic-ratelimit-unified-")] == []
        r.read()
