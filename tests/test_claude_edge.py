"""The Claude edge (``lifecycle.claude``), message by message, with the exact event each becomes.

``tests/test_claude.py`` holds the edge against the CLI's recordings; this module pins the
translation rules themselves (FORMAT.md's stream-json lines, the SDK's classes recognised by name),
including every malformed shape: nothing may turn a failure into a success.
"""

from __future__ import annotations

from typing import Any

import pytest
from claude_agent_sdk import ResultError as SdkResultError
from sdk_messages import PROXY_MESSAGE, PROXY_SHOWN, STARTUP_LINE, result_message

from lifecycle.claude import MalformedMessage, from_sdk_exception, from_sdk_message, from_stream_json, text_of
from lifecycle.events import (
    ApiRetry,
    Assistant,
    AuthStatus,
    ModelFallback,
    QueryError,
    Result,
    WorkerShuttingDown,
)

# ---------------------------------------------------------------- result: only an explicit success succeeds


def result_line(**fields: Any) -> dict[str, Any]:
    return {"type": "result", **fields}


def test_an_explicit_success_is_a_success_with_every_field_kept() -> None:
    line = result_line(
        subtype="success",
        is_error=False,
        result="Hello",
        errors=[],
        api_error_status=None,
        stop_reason="end_turn",
        terminal_reason="completed",
    )
    assert from_stream_json(line) == Result(
        subtype="success",
        is_error=False,
        result="Hello",
        errors=(),
        api_error_status=None,
        stop_reason="end_turn",
        terminal_reason="completed",
    )


@pytest.mark.parametrize(
    ("subtype", "is_error"),
    [
        ("error_during_execution", False),  # an error subtype with is_error false: still an error
        ("error_max_turns", False),
        ("success", True),
        ("success", None),  # a missing flag
        ("success", "false"),  # a garbled flag
        ("success", 0),
        (None, False),
        (7, False),
    ],
)
def test_anything_but_an_explicit_success_is_a_failure(subtype: Any, is_error: Any) -> None:
    line = result_line(subtype=subtype, is_error=is_error)
    if is_error is None:
        del line["is_error"]
    ev = from_stream_json(line)
    assert isinstance(ev, Result) and ev.is_error is True
    assert ev.subtype == (subtype if isinstance(subtype, str) else None)


def test_result_fields_of_the_wrong_type_are_dropped() -> None:
    ev = from_stream_json(
        result_line(
            subtype="error_max_turns",
            is_error=True,
            result=["not", "a", "string"],
            errors=["Reached maximum number of turns (2)", 7, None, "second"],
            api_error_status=True,
            stop_reason=3,
            terminal_reason={"x": 1},
        )
    )
    assert ev == Result(
        subtype="error_max_turns",
        is_error=True,
        result=None,
        errors=("Reached maximum number of turns (2)", "second"),
        api_error_status=None,
        stop_reason=None,
        terminal_reason=None,
    )


@pytest.mark.parametrize("errors", ["a string is not a list", b"bytes", bytearray(b"x"), 5, None, {"e": "x"}])
def test_errors_must_be_an_array(errors: Any) -> None:
    ev = from_stream_json(result_line(subtype="success", is_error=True, errors=errors))
    assert isinstance(ev, Result) and ev.errors == ()


def test_an_http_status_is_kept_as_an_int() -> None:
    ev = from_stream_json(result_line(subtype="success", is_error=True, api_error_status=429, errors=("a",)))
    assert isinstance(ev, Result) and (ev.api_error_status, ev.errors) == (429, ("a",))


# ---------------------------------------------------------------- assistant


def test_an_assistant_line_with_every_field() -> None:
    line = {
        "type": "assistant",
        "uuid": "m1",
        "parent_tool_use_id": None,
        "error": "rate_limit",
        "message": {"model": "<synthetic>", "content": [{"type": "text", "text": "API Error: 429"}]},
    }
    assert from_stream_json(line) == Assistant(
        text="API Error: 429", model="<synthetic>", error="rate_limit", top_level=True, uuid="m1"
    )


def test_a_subagent_line_is_not_top_level_and_odd_fields_are_dropped() -> None:
    line = {
        "type": "assistant",
        "uuid": 5,
        "parent_tool_use_id": "toolu_1",
        "message": {"model": 7, "content": "plain text"},
    }
    assert from_stream_json(line) == Assistant(text="plain text", model=None, error=None, top_level=False, uuid=None)


def test_a_missing_parent_tool_use_id_is_top_level() -> None:
    ev = from_stream_json({"type": "assistant", "message": {"model": "claude-x", "content": "hi"}})
    assert ev == Assistant(text="hi", model="claude-x", error=None, top_level=True, uuid=None)


@pytest.mark.parametrize(("error", "kind"), [(None, None), ("", ""), ("overloaded", "overloaded"), (7, "unrecognized"),
                                               ({"type": "x"}, "unrecognized"), (False, "unrecognized")])
def test_an_error_value_that_is_not_a_string_still_fails(error: Any, kind: str | None) -> None:
    line = {"type": "assistant", "error": error, "message": {"model": "<synthetic>", "content": "x"}}
    ev = from_stream_json(line)
    assert isinstance(ev, Assistant) and ev.error == kind


@pytest.mark.parametrize("message", [None, "text", ["a"], 5])
def test_an_assistant_without_a_message_object_is_malformed(message: Any) -> None:
    with pytest.raises(MalformedMessage, match="assistant message without a message object"):
        from_stream_json({"type": "assistant", "message": message})
    with pytest.raises(MalformedMessage):
        from_stream_json({"type": "assistant"})


# ---------------------------------------------------------------- text_of


class Block:
    def __init__(self, text: Any) -> None:
        self.text = text


class ThinkingBlock(Block):
    def __init__(self, text: Any) -> None:
        super().__init__(text)
        self.thinking = "hmm"


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ("plain", "plain"),
        ("", ""),
        ([{"type": "text", "text": "one"}], "one"),
        ([{"text": "untyped means text"}], "untyped means text"),
        ([{"type": "thinking", "text": "secret thoughts"}], ""),
        ([{"type": "text", "text": 7}], ""),
        ([{"type": "text"}], ""),
        (["a bare string"], ""),
        ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "ab"),
        ([{"type": "text", "text": "a"}, {"type": "tool_use", "text": "x"}, {"text": "b"}], "ab"),
        ([{"type": "text", "text": "a"}, {"type": "text", "text": 5}, {"type": "text", "text": "c"}], "ac"),
        (({"type": "text", "text": "tuple"},), "tuple"),
        ([Block("obj")], "obj"),
        ([Block("x"), Block("y")], "xy"),
        ([Block("x"), ThinkingBlock("thought"), Block(3), Block("z")], "xz"),
        ([], ""),
        (None, ""),
        (7, ""),
        ({"type": "text", "text": "a dict is not a block list"}, ""),
        (b"bytes", ""),
        (bytearray(b"bytes"), ""),
    ],
)
def test_text_of(content: Any, text: str) -> None:
    assert text_of(content) == text


def test_text_of_reads_any_sequence_of_mappings() -> None:
    from collections import UserList
    from types import MappingProxyType

    blocks = UserList([MappingProxyType({"type": "text", "text": "a"}), MappingProxyType({"text": "b"})])
    assert text_of(blocks) == "ab"
    assert text_of(UserList([{"type": "text", "text": "only"}])) == "only"


# ---------------------------------------------------------------- system lines


def test_api_retry_with_every_field() -> None:
    line = {
        "type": "system",
        "subtype": "api_retry",
        "attempt": 2,
        "max_retries": 10,
        "retry_delay_ms": 1200,
        "error_status": 529,
        "error": "overloaded",
    }
    assert from_stream_json(line) == ApiRetry(attempt=2, max_retries=10, error_status=529, error="overloaded")


def test_api_retry_without_a_response_and_with_garbled_fields() -> None:
    line = {"type": "system", "subtype": "api_retry", "attempt": "2", "error_status": True, "error": 5}
    assert from_stream_json(line) == ApiRetry(attempt="2", max_retries=None, error_status=None, error=None)
    line = {"type": "system", "subtype": "api_retry", "error_status": None}
    assert from_stream_json(line) == ApiRetry(attempt=None, max_retries=None, error_status=None, error=None)


def test_model_fallback_keeps_the_exact_content() -> None:
    line = {"type": "system", "subtype": "model_fallback", "content": "Switched to Opus 5", "trigger": "x"}
    assert from_stream_json(line) == ModelFallback(content="Switched to Opus 5")
    assert from_stream_json({"type": "system", "subtype": "model_fallback"}) == ModelFallback(content="")
    assert from_stream_json({"type": "system", "subtype": "model_fallback", "content": 3}) == ModelFallback(content="")


def test_worker_shutting_down() -> None:
    line: dict[str, Any] = {"type": "system", "subtype": "worker_shutting_down", "reason": "idle"}
    assert from_stream_json(line) == WorkerShuttingDown(reason="idle")
    line = {"type": "system", "subtype": "worker_shutting_down", "reason": 1}
    assert from_stream_json(line) == WorkerShuttingDown(reason=None)


@pytest.mark.parametrize("subtype", ["init", "compact_boundary", None, "API_RETRY"])
def test_other_system_lines_are_traffic(subtype: Any) -> None:
    assert from_stream_json({"type": "system", "subtype": subtype, "content": "x"}) is None


# ---------------------------------------------------------------- auth_status


@pytest.mark.parametrize(
    ("line", "event"),
    [
        ({"isAuthenticating": True}, None),  # still in progress: nothing yet
        ({"isAuthenticating": False}, AuthStatus(ok=True)),
        ({"isAuthenticating": False, "error": None}, AuthStatus(ok=True)),
        ({"isAuthenticating": False, "error": ""}, AuthStatus(ok=True)),
        ({"isAuthenticating": False, "error": "Login failed"}, AuthStatus(ok=False)),
        ({"isAuthenticating": False, "error": 0}, AuthStatus(ok=False)),
        ({"isAuthenticating": False, "error": False}, AuthStatus(ok=False)),
        ({}, AuthStatus(ok=False)),  # no flag: not a success
        ({"isAuthenticating": "false"}, AuthStatus(ok=False)),
        ({"isAuthenticating": 0}, AuthStatus(ok=False)),
        ({"isAuthenticating": None, "error": None}, AuthStatus(ok=False)),
    ],
)
def test_auth_status_success_is_exactly_not_authenticating_and_no_error(line: dict[str, Any], event: Any) -> None:
    assert from_stream_json({"type": "auth_status", "output": [], **line}) == event


# ---------------------------------------------------------------- other lines


@pytest.mark.parametrize(
    "line",
    [
        {"type": "user", "message": {"content": "hi"}},
        {"type": "stream_event"},
        {"type": ["unhashable"]},
        {"type": {"unhashable": 1}},
        {},
    ],
)
def test_traffic_translates_to_none(line: dict[str, Any]) -> None:
    assert from_stream_json(line) is None


# ---------------------------------------------------------------- SDK objects (recognised by class name)


class AssistantMessage:
    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)


class ResultMessage(AssistantMessage):
    pass


class SystemMessage(AssistantMessage):
    pass


class ResultError(Exception):
    def __init__(self, **kw: Any) -> None:
        super().__init__("Claude Code returned an error result")
        self.__dict__.update(kw)


def test_an_sdk_assistant_message() -> None:
    msg = AssistantMessage(
        content=[Block("Hello "), ThinkingBlock("no"), Block("there")],
        model="claude-opus-5-5",
        error=None,
        parent_tool_use_id=None,
        uuid="m1",
    )
    assert from_sdk_message(msg) == Assistant(
        text="Hello there", model="claude-opus-5-5", error=None, top_level=True, uuid="m1"
    )


def test_an_sdk_assistant_message_with_odd_fields() -> None:
    msg = AssistantMessage(content="x", model=5, error=["odd"], parent_tool_use_id="toolu", uuid=9)
    assert from_sdk_message(msg) == Assistant(text="x", model=None, error="unrecognized", top_level=False, uuid=None)
    assert from_sdk_message(AssistantMessage()) == Assistant(
        text="", model=None, error=None, top_level=True, uuid=None
    )


def test_an_sdk_result_message() -> None:
    msg = ResultMessage(
        subtype="success",
        is_error=False,
        result="done",
        errors=None,
        api_error_status=None,
        stop_reason="max_tokens",
        terminal_reason="completed",
    )
    assert from_sdk_message(msg) == Result(
        subtype="success",
        is_error=False,
        result="done",
        errors=(),
        api_error_status=None,
        stop_reason="max_tokens",
        terminal_reason="completed",
    )
    failed = ResultMessage(subtype="error_max_turns", is_error=False, errors=["Reached maximum number of turns (2)"],
                           api_error_status=500)
    assert from_sdk_message(failed) == Result(
        subtype="error_max_turns",
        is_error=True,
        result=None,
        errors=("Reached maximum number of turns (2)",),
        api_error_status=500,
        stop_reason=None,
        terminal_reason=None,
    )
    assert from_sdk_message(ResultMessage()).is_error is True  # type: ignore[union-attr]


def test_an_sdk_system_message_reads_its_data() -> None:
    retry = SystemMessage(
        subtype="api_retry",
        data={"attempt": 1, "max_retries": 10, "error_status": None, "error": "unknown", "subtype": "api_retry"},
    )
    assert from_sdk_message(retry) == ApiRetry(attempt=1, max_retries=10, error_status=None, error="unknown")
    fallback = SystemMessage(subtype="model_fallback", data={"content": "Switched"})
    assert from_sdk_message(fallback) == ModelFallback(content="Switched")
    assert from_sdk_message(SystemMessage(subtype="init", data={})) is None
    assert from_sdk_message(SystemMessage(subtype="api_retry", data=None)) is None
    assert from_sdk_message(SystemMessage(subtype=None, data={"attempt": 1})) is None
    assert from_sdk_message(object()) is None


def test_a_result_error_becomes_the_error_result_it_follows() -> None:
    exc = ResultError(
        subtype="error_during_execution",
        result="partial",
        errors=["boom", 3],
        api_error_status=529,
        terminal_reason="api_error",
        stop_reason="end_turn",
    )
    assert from_sdk_exception(exc) == Result(
        subtype="error_during_execution",
        is_error=True,
        result="partial",
        errors=("boom",),
        api_error_status=529,
        stop_reason=None,  # a ResultError is never a stop reason
        terminal_reason="api_error",
    )
    # Even a ResultError claiming success is a failure.
    assert from_sdk_exception(ResultError(subtype="success")) == Result(
        subtype="success", is_error=True, result=None, errors=(), api_error_status=None, stop_reason=None,
        terminal_reason=None,
    )


def test_any_other_exception_is_a_query_error_named_by_its_class_only() -> None:
    exc = ConnectionError("ProcessTransport is not ready for writing sk-ant-api03-secret")
    assert from_sdk_exception(exc) == QueryError(message="ConnectionError")
    assert from_sdk_exception(KeyboardInterrupt()) == QueryError(message="KeyboardInterrupt")


# ---------------------------------------------------------------- the system notices, field by field


def _both(subtype: str, data: dict[str, Any]) -> tuple[Any, Any]:
    """The event of one system message as a stream-json line and as the SDK's ``SystemMessage``."""
    from claude_agent_sdk import SystemMessage

    return (
        from_stream_json({"type": "system", "subtype": subtype, **data}),
        from_sdk_message(SystemMessage(subtype=subtype, data={"type": "system", "subtype": subtype, **data})),
    )


def test_an_informational_notice_keeps_its_content_level_and_tool_use() -> None:
    from lifecycle.events import Informational

    full = {"content": "Hook PreToolUse blocked Bash", "level": "warning", "tool_use_id": "toolu_1"}
    for event in _both("informational", full):
        assert event == Informational(content="Hook PreToolUse blocked Bash", level="warning", tool_use_id="toolu_1")
    for event in _both("informational", {"CONTENT": "x", "LEVEL": "info", "TOOL_USE_ID": "t"}):
        assert event == Informational(content="", level=None, tool_use_id=None)
    for event in _both("informational", {"content": 5, "level": ["info"], "tool_use_id": 7}):
        assert event == Informational(content="", level=None, tool_use_id=None)


def test_a_refusal_without_fallback_is_explained_only_by_a_banner_about_the_users_message() -> None:
    """The reference adapter: ``refused_user_message_uuid: null`` is a banner about something else
    (no explanation); otherwise the API's explanation, else the banner's content."""
    from lifecycle.events import ModelRefusalNoFallback as NoFallback

    cases = [
        ({"api_refusal_explanation": "Policy X.", "content": "Banner."}, NoFallback(explanation="Policy X.")),
        ({"content": "Banner."}, NoFallback(explanation="Banner.")),
        ({"api_refusal_explanation": "", "content": "Banner."}, NoFallback(explanation="Banner.")),
        ({}, NoFallback(explanation=None)),
        ({"api_refusal_explanation": "", "content": ""}, NoFallback(explanation=None)),
        ({"refused_user_message_uuid": "u1", "api_refusal_explanation": "P."}, NoFallback(explanation="P.")),
        ({"refused_user_message_uuid": None, "api_refusal_explanation": "Policy X.", "content": "B."}, NoFallback()),
        ({"API_REFUSAL_EXPLANATION": "P.", "CONTENT": "B."}, NoFallback(explanation=None)),
    ]
    for data, expected in cases:
        for event in _both("model_refusal_no_fallback", data):
            assert event == expected, data


def test_a_refusal_fallback_without_model_names_says_the_model() -> None:
    from lifecycle.events import ModelRefusalFallback

    for event in _both("model_refusal_fallback", {}):
        assert event == ModelRefusalFallback(original_model="the model", fallback_model="the fallback model")


def test_other_subtypes_and_other_spellings_are_traffic() -> None:
    for subtype in ("INFORMATIONAL", "Model_Refusal_No_Fallback", "status", "init"):
        assert _both(subtype, {"content": "x"}) == (None, None), subtype


def test_a_refusals_explanation_comes_only_from_its_stop_details() -> None:
    base = {"type": "assistant", "uuid": "u1", "parent_tool_use_id": None, "error": None}
    refused = {"model": "m", "content": [], "stop_reason": "refusal"}
    event = from_stream_json({**base, "message": {**refused, "stop_details": {"explanation": "Policy X."}}})
    assert event is not None and event.refusal == "Policy X."  # type: ignore[union-attr]
    for details in (None, "Policy X.", ["Policy X."], {"reason": "Policy X."}):
        event = from_stream_json({**base, "message": {**refused, "stop_details": details}})
        assert event is not None and event.refusal is None, details  # type: ignore[union-attr]
    ended = {**refused, "stop_reason": "end_turn", "stop_details": {"explanation": "x"}}
    event = from_stream_json({**base, "message": ended})
    assert event is not None and event.refusal is None  # type: ignore[union-attr]


def test_an_assistant_line_without_a_message_object_is_malformed_and_says_so() -> None:
    with pytest.raises(MalformedMessage, match=r"^assistant message without a message object$"):
        from_stream_json({"type": "assistant", "message": "text"})


def test_the_claude_edge_reads_the_reason_from_the_raw_line() -> None:
    event = from_stream_json(STARTUP_LINE)
    assert isinstance(event, Result) and event.startup_failure == "proxy_invalid"
    assert event.errors == (PROXY_SHOWN,) and event.is_error
    for value in (None, "", 7):
        other = from_stream_json({**STARTUP_LINE, "startup_failure_reason": value})
        assert isinstance(other, Result) and other.startup_failure is None
    # the SDK's ResultError keeps the raw line (its ResultMessage has no field for the reason)
    exc = SdkResultError(f"Claude Code returned an error result: {PROXY_MESSAGE}", data=STARTUP_LINE, exit_code=1)
    event = from_sdk_exception(exc)
    assert isinstance(event, Result) and event.startup_failure == "proxy_invalid"
    plain = from_sdk_exception(SdkResultError("x", data={**STARTUP_LINE, "startup_failure_reason": None}, exit_code=1))
    assert isinstance(plain, Result) and plain.startup_failure is None
    assert isinstance(from_sdk_exception(SdkResultError("x", exit_code=1)), Result)  # no line at all
    # a ResultMessage the agent set the reason on (lifecycle/agent/adopt.py) reads as the line does
    message = result_message(subtype="error_during_execution", is_error=True, errors=[PROXY_MESSAGE])
    message.startup_failure_reason = "proxy_invalid"  # type: ignore[attr-defined]  # as agent/adopt.py sets it
    got = from_sdk_message(message)
    assert isinstance(got, Result) and got.startup_failure == "proxy_invalid"
    assert from_sdk_message(result_message(subtype="error_during_execution", is_error=True)).startup_failure is None  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "value",
    ["alice:s3cretpass@proxy.corp:8080", "corp.user%40x:p%21ss@10.0.0.1", "not-a-url", "proxy.corp:8080", ""],
)
def test_a_start_up_failure_never_shows_the_environment_value_it_quotes(value: str) -> None:
    """Developers' guide, Security: no environment value in any title, details or log line. Claude
    Code 2.1.337 quotes ``HTTPS_PROXY`` as the user set it (issue 49 point 2); only the name stays."""
    text = PROXY_MESSAGE.replace("not-a-url", value)
    event = from_stream_json({**STARTUP_LINE, "errors": [text], "result": text})
    assert isinstance(event, Result) and event.errors == (PROXY_SHOWN,) and event.result == PROXY_SHOWN
    plain = from_stream_json({**STARTUP_LINE, "errors": [text], "startup_failure_reason": None})
    assert isinstance(plain, Result) and plain.errors == (text,)  # only a start-up failure's message


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Cannot reach proxy alice:s3cretpass@proxy.corp:8080.",
         "Cannot reach proxy alice:[redacted credential]@proxy.corp:8080."),
        ('Bad value in X: "a b"', 'Bad value in X: "a b"'),  # not an environment name: as it is
        ('NO_PROXY: "*.corp" and HTTP_PROXY: "h"', 'NO_PROXY: "[redacted env]" and HTTP_PROXY: "[redacted env]"'),
    ],
)
def test_a_start_up_failure_masks_credentials_quoted_any_other_way(text: str, shown: str) -> None:
    """A password in a value without ``scheme://`` (which the redaction's URL rule needs) is masked too."""
    event = from_stream_json({**STARTUP_LINE, "errors": [text]})
    assert isinstance(event, Result) and event.errors == (shown,)
