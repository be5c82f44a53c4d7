"""Lines Claude Code does not print today but a later one may (issue 49, point 5): crafted
``stream-json`` lines of every message type the agent reads, with fields missing, null and of the
wrong type. Not a test module: tests/e2e/test_unexpected_lines.py slips them into the real
CLI's output, tests/test_agent_unexpected.py runs each through the SDK's parser and the lanes.

A line here is never a well-formed message: a result whose required fields are all of their type
would end the turn, and a ``rate_limit_event`` in ``allowed_warning`` or an ``api_retry`` is a real
event whatever its other fields (the usage-limit window and the retry are their own rules), so
the usage-limit lines here are ``allowed`` or unreadable, and no ``api_retry`` is sent.
"""

from __future__ import annotations

from typing import Any

SESSION = "00000000-0000-0000-0000-000000000000"
UUID = "11111111-2222-3333-4444-555555555555"
MISSING = object()


def _with(base: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    line = dict(base)
    if value is not MISSING:
        line[key] = value
    return line


def crafted_lines() -> list[dict[str, Any]]:
    """Every crafted line, in the order they are slipped in."""
    return [*_rate_limits(), *_system(), *_assistant(), *_user(), *_results(), *_stream(), *_others()]


def _rate_limits() -> list[dict[str, Any]]:
    base = {"type": "rate_limit_event", "uuid": UUID, "session_id": SESSION}
    infos: list[Any] = [MISSING, None, "five_hour", 5, [], {}, {"status": None}, {"status": 5}]
    out = [_with(base, "rate_limit_info", info) for info in infos]
    # a known status, every other field of the wrong type; then the ids missing
    out.append({**base, "rate_limit_info": {"status": "allowed", "resetsAt": "soon", "utilization": "lots",
                                            "rateLimitType": 7, "overageStatus": []}})  # fmt: skip
    out.append({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}})
    return out


def _system() -> list[dict[str, Any]]:
    ids = {"uuid": UUID, "session_id": SESSION}
    cases: list[tuple[Any, dict[str, Any]]] = [
        ("task_notification", {}),
        ("task_notification", {"task_id": 5, "status": None, "output_file": 7, "summary": None, **ids}),
        (
            "task_notification",
            {
                "task_id": "t1",
                "status": "completed",
                "output_file": "",
                "summary": "",
                "usage": "x",
                "tool_use_id": 3,
                **ids,
            },
        ),
        ("task_started", {}),
        ("task_started", {"task_id": None, "description": 5, "tool_use_id": [], **ids}),
        ("task_progress", {"task_id": "t1", "description": "d", "usage": "x", **ids}),
        ("task_updated", {"task_id": 5, "patch": "x"}),
        ("task_updated", {"patch": {"status": 5}}),
        ("status", {"status": 5}),
        ("status", {"status": "compacting", "uuid": 5}),
        ("compact_boundary", {"compact_metadata": "x"}),
        ("init", {"mcp_servers": "x", "model": 5, "capabilities": 5}),
        ("hook_started", {}),
        ("hook_response", {"hook_event": 5}),
        ("mirror_error", {}),
        ("a_future_subtype", {"anything": None}),
        (MISSING, {}),
        (None, {}),
        (5, {}),
    ]
    return [_with({"type": "system", **fields}, "subtype", subtype) for subtype, fields in cases]


def _assistant() -> list[dict[str, Any]]:
    base = {"type": "assistant", "parent_tool_use_id": None, "session_id": SESSION, "uuid": UUID}
    messages: list[Any] = [
        MISSING, None, "text", {},
        {"content": None, "model": "m"},
        {"content": "text", "model": "m"},
        {"content": [], "model": None},
        {"content": [{"type": "text"}], "model": "m"},
        {"content": [{"type": "text", "text": None}], "model": "m"},
        {"content": [{"type": "tool_use", "id": 5, "name": None, "input": "x"}], "model": "m"},
        {"content": [{"type": "thinking", "thinking": None, "signature": 5}], "model": "m"},
        {"content": [5, None, "x"], "model": "m"},
        {"content": [{"type": "a_future_block"}], "model": "m"},
        {"content": [], "model": "m", "usage": "x", "stop_reason": 5, "id": 5},
    ]  # fmt: skip
    out = [_with(base, "message", message) for message in messages]
    out.append({**base, "message": {"content": [], "model": "m"}, "parent_tool_use_id": 5, "error": 7})
    return out


def _user() -> list[dict[str, Any]]:
    base = {"type": "user", "parent_tool_use_id": None, "session_id": SESSION}
    messages: list[Any] = [
        MISSING, None, {},
        {"content": None},
        {"content": 5},
        {"content": [{"type": "tool_result"}]},
        {"content": [{"type": "tool_result", "tool_use_id": None, "content": 5, "is_error": "no"}]},
        {"content": [{"type": "tool_result", "tool_use_id": "toolu_unknown", "content": {"x": 1}}]},
        {"content": [{"type": "text", "text": 5}]},
        {"content": [None, 5]},
    ]  # fmt: skip
    out = [_with(base, "message", message) for message in messages]
    out.append({**base, "message": {"content": "x"}, "uuid": 5, "tool_use_result": "x", "parent_tool_use_id": 7})
    return out


def _results() -> list[dict[str, Any]]:
    good = {"type": "result", "subtype": "success", "duration_ms": 1, "duration_api_ms": 1, "is_error": False,
            "num_turns": 1, "session_id": SESSION}  # fmt: skip
    out = []
    for key in ("subtype", "duration_ms", "duration_api_ms", "is_error", "num_turns", "session_id"):
        wrong = 5 if key in ("subtype", "session_id") else "x"
        for value in (MISSING, None, wrong, []):
            line = {k: v for k, v in good.items() if k != key}
            out.append(_with(line, key, value))
    out.append({**good, "is_error": 0})  # an int is no bool
    out.append({**good, "num_turns": True})  # a bool is no count
    out.append({**good, "deferred_tool_use": "x"})
    out.append({**good, "deferred_tool_use": {"id": 1}})
    return out


def _stream() -> list[dict[str, Any]]:
    base = {"type": "stream_event", "uuid": UUID, "session_id": SESSION}
    out = [_with(base, "event", event) for event in (MISSING, None, "x", 5, [])]
    out.append({"type": "stream_event", "event": {"type": "message_start"}})  # no uuid, no session
    return out


def _others() -> list[dict[str, Any]]:
    return [
        {"type": "prompt_suggestion", "suggestion": 5},
        {"type": "prompt_suggestion"},
        {"type": "conversation_reset"},
        {"no_type": True},
        {"type": 5},
        {"type": None},
    ]
