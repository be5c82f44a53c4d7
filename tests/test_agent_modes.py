"""The session settings an editor changes (lifecycle.agent.modes) and the agent methods around
them, in process: modes and config options as ACP and the reference adapter name them, choices
checked with the valid ones named, commands filtered as the reference filters them, and the
session methods (set mode/config, list, resume, close) with a stand-in Claude SDK client.

Expected values are literals: ids, names and categories from the reference adapter 0.101.0
(``dist/session-mode.js``, ``dist/session-model.js``, ``dist/session-effort.js``,
``getAvailableSlashCommands`` in ``dist/acp-agent.js``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import pytest
from acp import RequestError

from lifecycle.agent.modes import SessionSettings, SettingsError, available_commands, bypass_allowed

HAIKU = {
    "value": "haiku",
    "displayName": "Haiku",
    "description": "Fastest",
    "supportsEffort": True,
    "supportedEffortLevels": ["low", "medium", "high"],
}
INFO = {
    "models": [{"value": "default", "displayName": "Default (recommended)"}, HAIKU],
    "commands": [
        {"name": "compact", "description": "Compact", "argumentHint": "<instructions>"},
        {"name": "clear", "description": "terminal only"},
        {"name": "login", "description": "terminal only"},
        {"name": "mcp", "description": "replaced by the reference"},
        {"name": "two words", "description": "whitespace"},
        {"name": "compact", "description": "duplicate"},
        {"name": "docs (MCP)", "description": "an MCP prompt", "argumentHint": ["a", "b"]},
        {"name": 7},
    ],
}


def test_modes_are_the_reference_catalogue_plus_dont_ask() -> None:
    modes = SessionSettings().modes()
    assert modes["currentModeId"] == "default"
    assert [(m["id"], m["name"]) for m in modes["availableModes"]] == [
        ("default", "Manual"),
        ("acceptEdits", "Accept edits"),
        ("plan", "Plan"),
        ("dontAsk", "Don't ask"),
        ("auto", "Auto"),
        ("bypassPermissions", "Bypass permissions"),
    ]


def test_config_options_before_and_after_claude_code_reports() -> None:
    settings = SessionSettings()
    before = {o["id"]: o for o in settings.config_options()}
    assert list(before) == ["mode", "model"]  # no effort levels known yet
    assert (before["mode"]["category"], before["mode"]["type"]) == ("mode", "select")
    assert before["model"]["options"] == [{"value": "default", "name": "Default"}]
    assert settings.learn(INFO) is True
    assert settings.learn(INFO) is False  # nothing new
    settings.model = "haiku"
    after = {o["id"]: o for o in settings.config_options()}
    assert [o["value"] for o in after["model"]["options"]] == ["default", "haiku"]
    assert after["model"]["options"][1] == {"value": "haiku", "name": "Haiku", "description": "Fastest"}
    assert after["effort"]["category"] == "thought_level"
    assert [(o["value"], o["name"]) for o in after["effort"]["options"]] == [
        ("default", "Default"),
        ("low", "Low"),
        ("medium", "Medium"),
        ("high", "High"),
    ]


def test_a_model_claude_code_does_not_list_is_still_the_current_option() -> None:
    settings = SessionSettings(model="claude-custom-1")
    settings.learn(INFO)
    model = {o["id"]: o for o in settings.config_options()}["model"]
    assert model["currentValue"] == "claude-custom-1"
    assert model["options"][0] == {"value": "claude-custom-1", "name": "claude-custom-1"}


def test_choices_are_checked_naming_the_valid_ones() -> None:
    settings = SessionSettings()
    settings.learn(INFO)
    modes = "valid modes: default, acceptEdits, plan, dontAsk, auto, bypassPermissions"
    with pytest.raises(SettingsError, match=modes):
        settings.check_mode("yolo")
    with pytest.raises(SettingsError, match=r"not available.*root"):
        settings.check_mode("bypassPermissions")
    assert SessionSettings(allow_bypass=True).check_mode("bypassPermissions") == "bypassPermissions"
    with pytest.raises(SettingsError, match="valid models: default, haiku"):
        settings.check_model("gpt")
    with pytest.raises(SettingsError, match="has no effort levels"):
        settings.check_effort("low")  # the default model reported none
    settings.model = "haiku"
    with pytest.raises(SettingsError, match="valid values: default, low, medium, high"):
        settings.check_effort("max")
    with pytest.raises(SettingsError, match="valid options: mode, model, effort"):
        settings.check_config("temperature", "1")
    assert settings.check_config("effort", "low") == ("effort", "low")
    assert settings.check_config("mode", "plan") == ("mode", "plan")
    with pytest.raises(SettingsError):
        settings.check_mode(None)


def test_commands_filtered_renamed_and_unique() -> None:
    assert available_commands(INFO["commands"]) == [
        {"name": "compact", "description": "Compact", "input": {"hint": "<instructions>"}},
        {"name": "mcp:docs", "description": "an MCP prompt", "input": {"hint": "a b"}},
    ]


def test_bypass_is_refused_to_root_outside_a_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 0)
    assert bypass_allowed({}) is False
    assert bypass_allowed({"IS_SANDBOX": "yes"}) is False  # Claude Code wants exactly 1
    assert bypass_allowed({"IS_SANDBOX": "1"}) is True
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    assert bypass_allowed({}) is True


# ------------------------------------------------------------------ the agent's methods


class _Client:
    """A stand-in ``ClaudeSDKClient``: reports INFO, records mode/model/effort changes."""

    made: ClassVar[list[_Client]] = []

    def __init__(self, options: Any) -> None:
        self.options = options
        self.calls: list[tuple[str, Any]] = []
        self.refuse = False
        self._query = self
        _Client.made.append(self)

    async def connect(self) -> None:
        return None

    async def disconnect(self) -> None:
        return None

    async def receive_messages(self) -> AsyncIterator[Any]:
        await asyncio.Event().wait()
        yield None  # pragma: no cover

    async def query(self, prompt: Any) -> None:
        return None

    async def interrupt(self) -> None:
        return None

    async def get_server_info(self) -> dict[str, Any]:
        return INFO

    async def set_permission_mode(self, mode: str) -> None:
        if self.refuse:
            raise RuntimeError("refused")
        self.calls.append(("mode", mode))

    async def set_model(self, model: str | None) -> None:
        self.calls.append(("model", model))

    async def _send_control_request(self, request: dict[str, Any]) -> dict[str, Any]:
        if request.get("subtype") != "get_usage":  # the meter's reading at a start: test_agent_meter.py
            self.calls.append(("control", request))
        return {}


class _Conn:
    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        self.updates.append(update.model_dump(by_alias=True, exclude_none=True))


def _agent() -> tuple[Any, _Conn]:
    from lifecycle.agent import AgentConfig, ClaudeAcpAgent

    _Client.made.clear()
    agent = ClaudeAcpAgent(AgentConfig(), client_factory=_Client, env={})
    conn = _Conn()
    agent.on_connect(conn)
    return agent, conn


def test_session_methods_with_a_running_claude_code() -> None:
    async def go() -> None:
        agent, conn = _agent()
        await agent.initialize(protocol_version=1)
        new = await agent.new_session(cwd="/tmp")
        sid = new.session_id
        assert new.modes.current_mode_id == "default"
        session = agent._sessions[sid]
        await session.ensure_runtime()  # the early start, finished
        kinds = [u["sessionUpdate"] for u in conn.updates]
        assert kinds == ["config_option_update", "available_commands_update"]
        (client,) = _Client.made
        await agent.set_session_mode(session_id=sid, mode_id="plan")
        answer = await agent.set_config_option(config_id="model", session_id=sid, value="haiku")
        dumped = answer.model_dump(by_alias=True, exclude_none=True)["configOptions"]
        assert {o["id"]: o["currentValue"] for o in dumped}["model"] == "haiku"
        await agent.set_config_option(config_id="effort", session_id=sid, value="low")
        await agent.set_config_option(config_id="effort", session_id=sid, value="default")
        assert client.calls == [
            ("mode", "plan"),
            ("model", "haiku"),
            ("control", {"subtype": "apply_flag_settings", "settings": {"effortLevel": "low"}}),
            ("control", {"subtype": "apply_flag_settings", "settings": {"effortLevel": None}}),
        ]
        # Claude Code refusing a mode: a clear error, the old mode kept.
        client.refuse = True
        with pytest.raises(RequestError) as err:
            await agent.set_session_mode(session_id=sid, mode_id="acceptEdits")
        assert err.value.code == -32602 and "unchanged" in str(err.value.data)
        assert session.settings.mode == "plan"
        # A replacement runtime starts with the choices.
        options = session.claude_options(resume=False)
        assert (options.permission_mode, options.model, options.effort) == ("plan", "haiku", None)
        # A later session offers Claude Code's models in its answer at once (no effort: INFO's
        # default model reports no levels).
        later = await agent.new_session(cwd="/tmp")
        dumped = later.model_dump(by_alias=True, exclude_none=True)["configOptions"]
        assert [o["id"] for o in dumped] == ["mode", "model"]
        assert [o["value"] for o in dumped[1]["options"]] == ["default", "haiku"]
        # Close: a later request on the session is refused as closed, an unknown one as unknown.
        await agent.close_session(session_id=sid)
        with pytest.raises(RequestError) as err:
            await agent.set_session_mode(session_id=sid, mode_id="plan")
        assert err.value.data["details"] == "session closed"
        with pytest.raises(RequestError) as err:
            await agent.prompt(session_id="nope", prompt=[])
        assert err.value.data["details"] == "unknown session"
        await agent.shutdown()

    asyncio.run(go())


def test_choices_before_claude_code_runs_are_kept_for_its_start() -> None:
    async def go() -> None:
        from lifecycle.agent import AgentConfig, ClaudeAcpAgent

        agent = ClaudeAcpAgent(AgentConfig(start_early=False), client_factory=_Client, env={})
        agent.on_connect(_Conn())
        sid = (await agent.new_session(cwd="/tmp")).session_id
        await agent.set_session_mode(session_id=sid, mode_id="acceptEdits")
        options = agent._sessions[sid].claude_options(resume=False)
        assert options.permission_mode == "acceptEdits" and options.model is None
        await agent.shutdown()

    asyncio.run(go())


def test_list_sessions_pages_newest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    import lifecycle.agent as pkg

    class Info:
        def __init__(self, n: int) -> None:
            self.session_id = f"s{n}"
            self.summary = f"prompt {n}"
            self.custom_title = None
            self.first_prompt = None
            self.last_modified = 1_700_000_000_000 - n
            self.cwd = "/w"

    stored = [Info(n) for n in range(150)]
    seen: list[tuple[Any, Any, Any]] = []

    def fake_list(directory: Any = None, limit: Any = None, offset: int = 0) -> list[Any]:
        seen.append((directory, limit, offset))
        return stored[offset : offset + limit]

    monkeypatch.setattr(pkg, "list_sessions", fake_list, raising=False)

    async def go() -> None:
        agent, _ = _agent()
        page = await agent.list_sessions(cwd="/w")
        assert [s.session_id for s in page.sessions][:2] == ["s0", "s1"] and len(page.sessions) == 100
        assert page.sessions[0].title == "prompt 0"
        assert page.sessions[0].updated_at == "2023-11-14T22:13:20.000Z"  # JavaScript's toISOString
        assert page.next_cursor == "100"
        rest = await agent.list_sessions(cwd="/w", cursor="100")
        assert len(rest.sessions) == 50 and rest.next_cursor is None
        with pytest.raises(RequestError) as err:
            await agent.list_sessions(cwd="/w", cursor="-1")
        assert err.value.code == -32602
        for digits in ("\u0661\u0660\u0660", "\uff11\uff10\uff10", "1\u00b2"):  # Arabic-Indic, fullwidth, superscript
            with pytest.raises(RequestError) as err:
                await agent.list_sessions(cwd="/w", cursor=digits)
            assert err.value.code == -32602
        assert seen == [("/w", 101, 0), ("/w", 101, 100)]

    asyncio.run(go())


# ------------------------------------------------------------------ the mode Claude Code is in (issue 29)


def _write(path: Any, mode: object) -> None:
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": {"defaultMode": mode}}))


def test_the_settings_mode_follows_claude_codes_documented_precedence(tmp_path: Any) -> None:
    """Claude Code's settings docs: managed > local project > project > user; the user's folder is
    ``$CLAUDE_CONFIG_DIR`` when set, else ``~/.claude``."""
    from lifecycle.agent.launch import claude_settings_mode

    project, home, config = tmp_path / "project", tmp_path / "home", tmp_path / "config"
    managed = tmp_path / "etc" / "managed-settings.json"
    env = {"HOME": str(home)}
    project.mkdir()
    assert claude_settings_mode(str(project), env, managed=str(managed)) is None
    _write(home / ".claude" / "settings.json", "dontAsk")
    assert claude_settings_mode(str(project), env, managed=str(managed)) == "dontAsk"
    _write(config / "settings.json", "auto")
    with_config = {**env, "CLAUDE_CONFIG_DIR": str(config)}
    assert claude_settings_mode(str(project), with_config, managed=str(managed)) == "auto"
    _write(project / ".claude" / "settings.json", "plan")
    assert claude_settings_mode(str(project), env, managed=str(managed)) == "plan"
    _write(project / ".claude" / "settings.local.json", "acceptEdits")
    assert claude_settings_mode(str(project), env, managed=str(managed)) == "acceptEdits"
    _write(managed, "default")
    assert claude_settings_mode(str(project), env, managed=str(managed)) == "default"
    # A file that cannot be read, or names no mode, is passed over.
    managed.write_text("{not json")
    _write(project / ".claude" / "settings.local.json", "yolo")
    assert claude_settings_mode(str(project), env, managed=str(managed)) == "plan"


def test_only_a_mode_other_than_the_settings_one_is_passed(tmp_path: Any) -> None:
    from lifecycle.agent import AgentConfig
    from lifecycle.agent.launch import cli_options, initial_settings

    env = {"HOME": str(tmp_path / "home"), "IS_SANDBOX": "1"}
    _write(tmp_path / ".claude" / "settings.json", "acceptEdits")
    own = initial_settings(AgentConfig(), env, str(tmp_path))
    assert (own.mode, own.settings_mode) == ("acceptEdits", "acceptEdits")
    kw = cli_options(AgentConfig(), own, cwd=str(tmp_path), session_id="s", resume=False)
    assert "permission_mode" not in kw  # Claude Code reads its settings itself
    explicit = initial_settings(AgentConfig(permission_mode="default"), env, str(tmp_path))
    assert explicit.mode == "default"
    kw = cli_options(AgentConfig(), explicit, cwd=str(tmp_path), session_id="s", resume=False)
    assert kw["permission_mode"] == "default"  # the agent's --permission-mode wins


class _SlowClient(_Client):
    """A stand-in whose Claude Code takes until ``release`` is set to start, and reports it runs
    in ``plan`` (``current_permission_mode`` of its initialize answer)."""

    release: ClassVar[asyncio.Event]
    connecting: ClassVar[asyncio.Event]

    async def connect(self) -> None:
        _SlowClient.connecting.set()
        await _SlowClient.release.wait()

    async def get_server_info(self) -> dict[str, Any]:
        return {**INFO, "current_permission_mode": "plan"}


def test_a_choice_while_claude_code_starts_is_applied_and_the_reported_mode_shown() -> None:
    async def go() -> None:
        from lifecycle.agent import AgentConfig, ClaudeAcpAgent

        _Client.made.clear()
        _SlowClient.release, _SlowClient.connecting = asyncio.Event(), asyncio.Event()
        agent = ClaudeAcpAgent(AgentConfig(), client_factory=_SlowClient, env={"HOME": "/nonexistent"})
        conn = _Conn()
        agent.on_connect(conn)
        new = await agent.new_session(cwd="/nonexistent")
        assert new.modes.current_mode_id == "default"
        await asyncio.wait_for(_SlowClient.connecting.wait(), 5)
        choice = asyncio.ensure_future(
            agent.set_config_option(config_id="model", session_id=new.session_id, value="haiku")
        )
        await asyncio.sleep(0)
        assert not choice.done()  # it waits for the Claude Code being started
        _SlowClient.release.set()
        answer = await asyncio.wait_for(choice, 5)
        (client,) = _Client.made
        assert client.calls == [("model", "haiku")]  # applied to the running Claude Code
        dumped = answer.model_dump(by_alias=True, exclude_none=True)["configOptions"]
        assert {o["id"]: o["currentValue"] for o in dumped} == {"mode": "plan", "model": "haiku", "effort": "default"}
        # What Claude Code said it runs in reached the editor.
        assert conn.updates[0] == {"sessionUpdate": "current_mode_update", "currentModeId": "plan"}
        assert conn.updates[1]["sessionUpdate"] == "config_option_update"
        await agent.shutdown()

    asyncio.run(go())


# ------------------------------------------------------------------ the machine's models cache (issue 30)


def test_models_cache_keeps_the_models_only_per_cli_file_and_environment(tmp_path: Any) -> None:
    from lifecycle.agent.modes import ModelsCache

    cli = tmp_path / "claude"
    cli.write_text("v1")
    env = {"HOME": str(tmp_path / "home"), "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/", "ANTHROPIC_API_KEY": "sk-x"}
    cache = ModelsCache(str(cli), env)
    assert cache.read() == []  # nothing cached yet
    cache.write([{**HAIKU, "extra": "dropped"}, {"value": ""}, "junk"])
    assert ModelsCache(str(cli), env).read() == [HAIKU]
    assert cache.path is not None and cache.path.parent == tmp_path / "home" / ".cache" / "lifecycle-acp"
    text = cache.path.read_text()
    for private in ("127.0.0.1", "sk-x", str(tmp_path), "dropped"):
        assert private not in text and private not in cache.path.name
    # Another provider endpoint, another Claude Code file (a new version): another cache.
    assert ModelsCache(str(cli), {**env, "ANTHROPIC_BASE_URL": "http://other/"}).read() == []
    cli.write_text("version 2")
    assert ModelsCache(str(cli), env).read() == []
    # The XDG cache folder wins; no executable or no absolute folder: no cache, nothing fails.
    xdg = ModelsCache(str(cli), {**env, "XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert xdg.path is not None and xdg.path.parent == tmp_path / "xdg" / "lifecycle-acp"
    for nothing in (ModelsCache(None, env), ModelsCache(str(cli), {"HOME": "relative"})):
        nothing.write([HAIKU])
        assert nothing.path is None and nothing.read() == []
    cache.path.write_text("{not json")
    assert cache.read() == []
