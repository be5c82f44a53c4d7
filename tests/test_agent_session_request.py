"""What a session request asks for (issue 50, part A): the cwd check, the client's system prompt
and the ``_meta`` options, read alone (:mod:`lifecycle.agent.session_request`), and how they reach
Claude Code's command line (:mod:`lifecycle.agent.launch`). The expected words are the reference
adapter 0.101.0's (``validateCwd`` in ``dist/acp-agent.js``, ``dist/client-system-prompt.js``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lifecycle.agent.config import AgentConfig
from lifecycle.agent.launch import cli_argv, cli_options
from lifecycle.agent.modes import SessionSettings
from lifecycle.agent.session_request import BadSessionRequest, check_cwd, routed_model, session_options
from lifecycle.history import history_entry, replayed_prompt, strip_markers


def _refused(call: Any, *args: Any) -> tuple[str, Any]:
    with pytest.raises(BadSessionRequest) as caught:
        call(*args)
    return caught.value.message, caught.value.data


def test_a_cwd_is_an_absolute_path_to_a_folder(tmp_path: Path) -> None:
    a_file = tmp_path / "f"
    a_file.write_text("x")
    assert check_cwd(str(tmp_path)) == str(tmp_path)
    assert _refused(check_cwd, "rel") == ("`cwd` must be an absolute path, but received: rel", {"cwd": "rel"})
    missing = str(tmp_path / "gone")
    assert _refused(check_cwd, missing) == (
        f"`cwd` does not exist on the machine running the agent: {missing}",
        {"cwd": missing},
    )
    assert _refused(check_cwd, str(a_file)) == (f"`cwd` is not a directory: {a_file}", {"cwd": str(a_file)})
    assert _refused(check_cwd, "/a\0b")[0].startswith("`cwd` does not exist")  # a NUL byte: no crash


def _block(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def _text(*texts: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": t} for t in texts]


def test_the_system_prompt_is_appended_or_replaces_as_the_reference_does() -> None:
    preset = {"type": "preset", "preset": "claude_code"}
    append = session_options({"mode": "append", "content": _text("a", "b")}, None).claude
    assert append == {"system_prompt": {**preset, "append": "a\n\nb"}}  # sdkSystemPrompt: joined by a blank line
    assert session_options({"mode": "override", "content": _text("o")}, None).claude == {"system_prompt": "o"}
    assert session_options({"mode": "append", "content": []}, None).claude == {}  # nothing to add
    assert session_options(None, None).claude == {}
    # The older _meta.systemPrompt: a string replaces, an object's append appends; the ACP field wins.
    assert session_options(None, {"systemPrompt": "m"}).claude == {"system_prompt": "m"}
    assert session_options(None, {"systemPrompt": {"append": "m"}}).claude == {
        "system_prompt": {**preset, "append": "m"}
    }
    both = session_options({"mode": "override", "content": _text("acp")}, {"systemPrompt": "meta"})
    assert both.claude == {"system_prompt": "acp"}


def test_a_system_prompt_the_agent_cannot_apply_is_refused() -> None:
    assert _refused(session_options, {"mode": "x", "content": []}, None) == (
        "Unsupported systemPrompt mode: x",
        {"systemPrompt": {"mode": "x"}},
    )
    image = {"mode": "append", "content": [{"type": "image", "data": "", "mimeType": "image/png"}]}
    assert _refused(session_options, image, None) == (
        "systemPrompt content must be text, but received a image block",
        {"systemPrompt": {"content": {"type": "image"}}},
    )
    for shape in ("text", ["a"], {"mode": "append"}, {"mode": "append", "content": [{"type": "text", "text": 1}]}):
        assert _refused(session_options, shape, None)[0].startswith(("systemPrompt", "a systemPrompt"))
    # The bound (docs/acp-agent.md): 100 000 UTF-8 bytes, counted after joining.
    assert session_options({"mode": "override", "content": _text("é" * 50_000)}, None).claude
    assert _refused(session_options, {"mode": "override", "content": _text("é" * 50_001)}, None)[1] == {
        "systemPrompt": {"bytes": 100_002, "limit": 100_000}
    }
    assert _refused(session_options, None, {"systemPrompt": "x" * 100_001})[0].startswith("_meta.systemPrompt is")


def test_tools_come_from_the_meta_options_or_disable_built_in_tools() -> None:
    tools = {"claudeCode": {"options": {"tools": ["Read", "Read", "Grep"]}}}
    assert session_options(None, tools).claude == {"tools": ["Read", "Grep"]}
    assert session_options(None, {"disableBuiltInTools": True}).claude == {"tools": []}
    # Every other option is not taken (env, executable: docs/parity/README.md).
    other = {"claudeCode": {"options": {"env": {"LD_PRELOAD": "x"}, "executable": "/bin/sh"}}}
    assert session_options(None, other).claude == {}
    for bad in ("Read", ["Re,ad"], [""], ["x"] * 257, [1]):
        assert _refused(session_options, None, {"claudeCode": {"options": {"tools": bad}}})[1] == {"tools": "invalid"}


def test_a_session_with_a_system_prompt_has_another_command_line_so_no_early_launch() -> None:
    settings = SessionSettings()
    settings.claude_options = {"system_prompt": "o"}
    options = cli_options(AgentConfig(), settings, cwd="/p", session_id="s", resume=False)
    assert options["system_prompt"] == "o"
    assert cli_argv("/claude", options) is None  # the early launch is never built for it
    assert cli_argv("/claude", cli_options(AgentConfig(), SessionSettings(), cwd="/p", session_id="s", resume=False))


def test_claude_codes_injected_context_is_stripped_from_a_replayed_prompt() -> None:
    notification = (
        "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n"
        "<output-file>/tmp/claude/tasks/b1.output</output-file>\n</task-notification>"
    )
    assert strip_markers(notification) == ""
    assert strip_markers(f"hi{notification} there") == "hi there"
    assert strip_markers("a<system-reminder>r</system-reminder>b") == "ab"
    assert strip_markers("<task-notification>never closed") == "<task-notification>never closed"
    assert strip_markers("<b>kept</b>") == "<b>kept</b>"
    # A local slash command's markers (the reference's stripLocalCommandMetadataText): the
    # command as typed, unless it is output or one the reference hides.
    command = "<command-message>review</command-message>\n<command-name>/review</command-name>"
    assert replayed_prompt(command + "\n<command-args>src/a.py</command-args>") == "/review src/a.py"
    assert replayed_prompt(command) == "/review"
    assert replayed_prompt("<command-name>/compact</command-name><command-args></command-args>") is None
    assert replayed_prompt("<local-command-stdout>Set model to haiku</local-command-stdout>") is None
    assert replayed_prompt("<command-name>/model</command-name>hi") == "hi"  # prose kept
    assert replayed_prompt(notification) is None
    assert replayed_prompt("a < b") == "a < b"
    # A stored message that is only a notification is no prompt; one with the user's words keeps them.
    only = history_entry({"type": "user", "uuid": "u", "message": {"role": "user", "content": notification}})
    assert only is not None and (only.prompt, only.text) == (False, "")
    mixed = {"type": "user", "uuid": "u", "message": {"role": "user", "content": _text("fix it", notification)}}
    entry = history_entry(mixed)
    assert entry is not None and (entry.prompt, entry.text) == (True, "fix it")


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
_prompts = st.one_of(
    _json,
    st.fixed_dictionaries(
        {"mode": st.sampled_from(["append", "override", "x"]) | _json, "content": st.lists(_json, max_size=3) | _json}
    ),
    st.fixed_dictionaries(
        {"mode": st.sampled_from(["append", "override"]), "content": st.lists(st.builds(_block, st.text()), max_size=3)}
    ),
)
_metas = st.one_of(
    _json,
    st.fixed_dictionaries({"systemPrompt": _json | st.text(), "disableBuiltInTools": _json}),
    st.fixed_dictionaries({"claudeCode": st.fixed_dictionaries({"options": st.fixed_dictionaries({"tools": _json})})}),
)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(prompt=_prompts, meta=_metas, cwd=_json | st.text())
def test_any_json_is_applied_or_refused_with_a_clear_error(prompt: object, meta: object, cwd: object) -> None:
    """docs/security.md ("What each parser may do with garbage"): a ``SessionOptions`` of the
    known keys, or ``BadSessionRequest``; nothing else escapes."""
    try:
        options = session_options(prompt, meta)
    except BadSessionRequest as bad:
        assert bad.message and isinstance(bad.data, dict)
    else:
        assert set(options.claude) <= {"system_prompt", "tools"}
        prompt_option = options.claude.get("system_prompt")
        assert prompt_option is None or isinstance(prompt_option, (str, dict))
        assert all(isinstance(t, str) for t in options.claude.get("tools", []))
    try:
        check_cwd(cwd)
    except BadSessionRequest as bad:
        assert bad.data == {"cwd": cwd}


@pytest.mark.parametrize(
    "name", ["NewSessionRequest", "LoadSessionRequest", "ResumeSessionRequest", "ForkSessionRequest"]
)
def test_a_routed_request_is_the_sdks_model_plus_system_prompt_built_at_its_first_request(name: str) -> None:
    from acp import schema

    model = routed_model(name)
    assert model.__pydantic_complete__ is False  # not built on the way to the first session/new
    base = getattr(schema, name).model_json_schema(by_alias=True)
    routed = model.model_json_schema(by_alias=True)
    # every field of the SDK's model, its description included, and the unstable systemPrompt
    assert routed["properties"].pop("systemPrompt") == {"default": None, "title": "Systemprompt"}
    assert routed["properties"] == base["properties"] and routed.get("required") == base.get("required")
    sample = {"cwd": "/w", "sessionId": "s", "mcpServers": [], "systemPrompt": {"append": "x"}}
    assert model.model_validate(sample).system_prompt == {"append": "x"}
