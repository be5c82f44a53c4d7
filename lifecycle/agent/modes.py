"""A session's settings an editor can change: permission mode, model and effort, and the slash
commands it can offer (ACP ``modes``, ``configOptions``, ``available_commands_update``).

Rules
-----
* Modes are Claude Code's permission modes, named as the reference adapter names them:
  ``default`` ("Manual"), ``acceptEdits``, ``plan``, ``dontAsk``, ``auto`` and
  ``bypassPermissions``. Claude Code accepts ``bypassPermissions`` only when it was launched
  allowing it, which it refuses for root outside a sandbox (``IS_SANDBOX=1``): the mode is listed,
  and choosing it where it is not allowed is a ``-32602`` naming the reason; the old mode stays.
* Config options are ``mode`` (category ``mode``), ``model`` (category ``model``: the models Claude
  Code reported for the session, ``default`` when it has not reported yet) and ``effort``
  (category ``thought_level``: the levels the current model supports, plus ``default``; absent
  when the model supports none).
* An unknown mode, config id or value is a ``-32602`` whose message names the valid ones.
* The current mode is the one Claude Code is in: at first the mode the agent passes
  (``--permission-mode``) or else the one Claude Code starts in by itself (its settings'
  ``permissions.defaultMode``, :func:`lifecycle.agent.launch.claude_settings_mode`), then what Claude
  Code reports (``current_permission_mode`` of its ``initialize`` answer, :meth:`SessionSettings.learn_mode`).
  The mode is passed on Claude Code's command line only when it differs from the one it starts in.
* Slash commands: Claude Code's own, without those that only work in its terminal (the reference's
  list), each with its argument hint.
* The models a Claude Code reported are cached per machine (:class:`ModelsCache`), so a
  ``session/new`` answer lists them before its own Claude Code has started (clients check
  ``--model`` against that answer). One file per Claude Code executable (its real path, size and
  modification time: a new version is another file) and per what steers its list (the config
  folder, the provider and model variables), named by a digest of those; the file holds the models
  only (ids, names, descriptions, effort levels): no path, no variable, no credential. The cache
  folder is ``$XDG_CACHE_HOME/lifecycle-acp`` or ``~/.cache/lifecycle-acp``. A cache that cannot
  be read or written is no cache (nothing fails); a Claude Code that reports another list wins.

Theory of operation
-------------------
:class:`SessionSettings` holds one session's choices and what Claude Code reported
(:meth:`SessionSettings.learn`). The session applies a choice to the running Claude Code (no
restart) and keeps it here, so a replacement runtime starts with it. Everything here is plain data
(camelCase dicts as ACP sends them); :mod:`lifecycle.agent.server` validates them into the ACP
SDK's models.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

__all__ = [
    "EFFORT_CONFIG_ID",
    "MODEL_CONFIG_ID",
    "MODES",
    "MODE_CONFIG_ID",
    "MODE_IDS",
    "ModelsCache",
    "Offered",
    "SessionSettings",
    "SettingsError",
    "available_commands",
    "bypass_allowed",
]

MODE_CONFIG_ID: Final = "mode"
MODEL_CONFIG_ID: Final = "model"
EFFORT_CONFIG_ID: Final = "effort"
DEFAULT_MODEL: Final = "default"
DEFAULT_EFFORT: Final = "default"

#: (id, name, description) of every permission mode, in the order an editor lists them.
MODES: Final[tuple[tuple[str, str, str], ...]] = (
    ("default", "Manual", "Always ask before making changes"),
    ("acceptEdits", "Accept edits", "Automatically accept all file edits"),
    ("plan", "Plan", "Create a plan before making changes"),
    ("dontAsk", "Don't ask", "Never ask: tools not already allowed are denied"),
    ("auto", "Auto", "Claude handles permission decisions"),
    ("bypassPermissions", "Bypass permissions", "Accepts all permissions"),
)
#: Claude Code's permission modes, by id (one home: the launch, the answers and "always" read it).
MODE_IDS: Final = tuple(m[0] for m in MODES)

#: Commands whose UX lives in Claude Code's own terminal (the reference adapter leaves them out).
UNSUPPORTED_COMMANDS: Final = frozenset(
    {"clear", "cost", "keybindings-help", "login", "logout", "output-style:new", "release-notes", "todos", "mcp"}
)
MAX_COMMANDS: Final = 500
MAX_MODELS: Final = 100


class SettingsError(ValueError):
    """A choice the session cannot take; ``str(error)`` is the client's message."""


def bypass_allowed(env: Mapping[str, str] | None = None) -> bool:
    """Whether Claude Code may be launched allowing ``bypassPermissions`` (it refuses that for
    root, unless ``IS_SANDBOX=1``)."""
    env = os.environ if env is None else env
    geteuid = getattr(os, "geteuid", None)
    return geteuid is None or geteuid() != 0 or env.get("IS_SANDBOX") == "1"


def _levels_name(level: str) -> str:
    return " ".join(part[:1].upper() + part[1:] for part in level.replace("_", "-").split("-"))


def _valid(values: Sequence[str]) -> str:
    return ", ".join(values)


@dataclass
class SessionSettings:
    """One session's mode, model and effort, and the models and commands Claude Code reported."""

    mode: str = "default"
    #: The mode Claude Code starts in by itself (its settings); ``mode`` is passed when it differs.
    settings_mode: str = "default"
    model: str = DEFAULT_MODEL
    effort: str = DEFAULT_EFFORT
    allow_bypass: bool = False
    models: list[dict[str, Any]] = field(default_factory=list)
    commands: list[dict[str, Any]] = field(default_factory=list)
    #: The client's ``additionalDirectories`` (Claude Code's ``--add-dir``), absolute paths.
    add_dirs: tuple[str, ...] = ()
    #: What the session request asked of Claude Code (``ClaudeAgentOptions`` keywords: the
    #: client's ``system_prompt``, ``tools``; :mod:`lifecycle.agent.session_request`).
    claude_options: dict[str, Any] = field(default_factory=dict)

    # ---------------------------------------------------------------- what ACP shows

    def modes(self) -> dict[str, Any]:
        """ACP ``SessionModeState``."""
        return {
            "currentModeId": self.mode,
            "availableModes": [{"id": i, "name": n, "description": d} for i, n, d in MODES],
        }

    def config_options(self) -> list[dict[str, Any]]:
        """ACP ``configOptions``: mode, model, and effort when the model has levels."""
        options = [
            {
                "id": MODE_CONFIG_ID,
                "name": "Mode",
                "description": "Session permission mode",
                "category": "mode",
                "type": "select",
                "currentValue": self.mode,
                "options": [{"value": i, "name": n, "description": d} for i, n, d in MODES],
            },
            {
                "id": MODEL_CONFIG_ID,
                "name": "Model",
                "description": "AI model to use",
                "category": "model",
                "type": "select",
                "currentValue": self.model,
                "options": self._model_options(),
            },
        ]
        levels = self.effort_levels()
        if levels:
            options.append(
                {
                    "id": EFFORT_CONFIG_ID,
                    "name": "Effort",
                    "description": "Available effort levels for this model",
                    "category": "thought_level",
                    "type": "select",
                    "currentValue": self.effort if self.effort in levels else DEFAULT_EFFORT,
                    "options": [{"value": DEFAULT_EFFORT, "name": "Default"}]
                    + [{"value": level, "name": _levels_name(level)} for level in levels],
                }
            )
        return options

    def _model_options(self) -> list[dict[str, Any]]:
        options: list[dict[str, Any]] = []
        for model in self.models:
            entry: dict[str, Any] = {"value": model["value"], "name": model.get("displayName") or model["value"]}
            if isinstance(model.get("description"), str):
                entry["description"] = model["description"]
            options.append(entry)
        if not any(o["value"] == self.model for o in options):
            # ACP wants the current value among the options (Claude Code has not reported yet,
            # or runs a model it does not list).
            name = "Default" if self.model == DEFAULT_MODEL else self.model
            options.insert(0, {"value": self.model, "name": name})
        return options

    def effort_levels(self) -> list[str]:
        """The effort levels the current model supports (none when unknown)."""
        for model in self.models:
            if model["value"] == self.model and model.get("supportsEffort"):
                levels = model.get("supportedEffortLevels")
                if isinstance(levels, list):
                    return [lv for lv in levels if isinstance(lv, str)]
        return []

    # ---------------------------------------------------------------- what Claude Code reported

    def learn(self, info: Mapping[str, Any] | None) -> bool:
        """Take Claude Code's ``initialize`` answer (models, commands); whether anything changed."""
        if not isinstance(info, Mapping):
            return False
        models = reported_models(info.get("models"))
        commands = available_commands(info.get("commands") or [])
        changed = models != self.models or commands != self.commands
        self.models, self.commands = models, commands
        return changed

    def learn_mode(self, info: Mapping[str, Any] | None) -> bool:
        """Take the mode Claude Code reports it is in (``current_permission_mode`` of its
        ``initialize`` answer); whether the current mode changed."""
        reported = info.get("current_permission_mode") if isinstance(info, Mapping) else None
        if not isinstance(reported, str) or reported not in MODE_IDS or reported == self.mode:
            return False
        if self.mode == self.settings_mode:  # nothing was passed: this is the mode it starts in
            self.settings_mode = reported
        self.mode = reported
        return True

    # ---------------------------------------------------------------- choices

    def check_mode(self, mode_id: object) -> str:
        if not isinstance(mode_id, str) or mode_id not in MODE_IDS:
            raise SettingsError(f"Unknown mode {str(mode_id)[:80]!r}; valid modes: {_valid(MODE_IDS)}")
        if mode_id == "bypassPermissions" and not self.allow_bypass:
            raise SettingsError(
                "Mode bypassPermissions is not available: Claude Code refuses it when running as root "
                "outside a sandbox (IS_SANDBOX=1). The mode is unchanged."
            )
        return mode_id

    def check_model(self, value: object) -> str:
        known = [m["value"] for m in self.models] or [DEFAULT_MODEL]
        if not isinstance(value, str) or value not in known:
            raise SettingsError(f"Unknown model {str(value)[:80]!r}; valid models: {_valid(known)}")
        return value

    def check_effort(self, value: object) -> str:
        levels = self.effort_levels()
        if not levels:
            raise SettingsError(f"The model {self.model!r} has no effort levels")
        valid = [DEFAULT_EFFORT, *levels]
        if not isinstance(value, str) or value not in valid:
            raise SettingsError(f"Unknown effort {str(value)[:80]!r}; valid values: {_valid(valid)}")
        return value

    def check_config(self, config_id: object, value: object) -> tuple[str, str]:
        """The (config id, value) of a ``session/set_config_option``, checked."""
        ids = [o["id"] for o in self.config_options()]
        if config_id == MODE_CONFIG_ID:
            return MODE_CONFIG_ID, self.check_mode(value)
        if config_id == MODEL_CONFIG_ID:
            return MODEL_CONFIG_ID, self.check_model(value)
        if config_id == EFFORT_CONFIG_ID and EFFORT_CONFIG_ID in ids:
            return EFFORT_CONFIG_ID, self.check_effort(value)
        raise SettingsError(f"Unknown config option {str(config_id)[:80]!r}; valid options: {_valid(ids)}")


def reported_models(models: object) -> list[dict[str, Any]]:
    """The well-formed entries (a non-empty string ``value``) of Claude Code's ``models``."""
    if not isinstance(models, list):
        return []
    kept = (m for m in models[:MAX_MODELS] if isinstance(m, Mapping))
    return [dict(m) for m in kept if isinstance(m.get("value"), str) and m["value"]]


#: Variables that change the models Claude Code lists (provider, model overrides, endpoint).
_MODEL_VARIABLES: Final = (
    "CLAUDE_CONFIG_DIR", "HOME", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL", "ANTHROPIC_SMALL_FAST_MODEL",
    "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY",
)  # fmt: skip
_MODELS_KEYS: Final = ("value", "displayName", "description", "supportsEffort", "supportedEffortLevels")


class ModelsCache:
    """The models a Claude Code executable reported on this machine (see the module's rules).

    Args:
        cli: the Claude Code executable (None: not found; nothing is cached).
        env: the environment Claude Code runs with.
    """

    def __init__(self, cli: str | None, env: Mapping[str, str]) -> None:
        self.path: Path | None = None
        if cli is None:
            return
        try:
            real = os.path.realpath(cli)
            st = os.stat(real)
        except OSError:
            return
        key = json.dumps([real, st.st_size, st.st_mtime_ns, [env.get(k) for k in _MODEL_VARIABLES]])
        xdg = env.get("XDG_CACHE_HOME")
        home = env.get("HOME")
        if xdg and os.path.isabs(xdg):
            root = Path(xdg)
        elif home and os.path.isabs(home):
            root = Path(home) / ".cache"
        else:
            return
        self.path = root / "lifecycle-acp" / f"models-{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"

    def read(self) -> list[dict[str, Any]]:
        """The cached models (none when there is no readable cache)."""
        if self.path is None:
            return []
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return reported_models(data.get("models") if isinstance(data, dict) else None)
        return []

    def write(self, models: object) -> None:
        """Keep ``models`` (Claude Code's report; only the keys ACP shows) when they differ."""
        kept = [{k: m[k] for k in _MODELS_KEYS if k in m} for m in reported_models(models)]
        if self.path is None or not kept or kept == self.read():
            return
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(OSError, TypeError, ValueError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps({"models": kept}), encoding="utf-8")
            os.replace(tmp, self.path)
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


class Offered:
    """What the agent's Claude Code offered (its last ``initialize`` report: models, slash
    commands), shared by the agent's sessions: a later session offers it at once, a
    ``session/new`` with no model known waits for :attr:`reported`, and the machine's
    :class:`ModelsCache` (made on first use: it looks for the executable) keeps the models for
    the next agent.

    Args:
        cli: finds the Claude Code executable (called once, on first use of the cache).
        env: the environment Claude Code runs with.
    """

    def __init__(self, cli: Callable[[], str | None], env: Mapping[str, str]) -> None:
        self._cli = cli
        self._env = env
        self._cache: ModelsCache | None = None
        self.info: dict[str, Any] | None = None  # the last report
        self.reported = asyncio.Event()  # a Claude Code of this agent reported
        self.listener: Callable[[dict[str, Any]], None] | None = None  # told of each report (the account)

    @property
    def cache(self) -> ModelsCache:
        if self._cache is None:
            self._cache = ModelsCache(self._cli(), self._env)
        return self._cache

    def saw(self, info: dict[str, Any]) -> None:
        """A Claude Code's report: kept, its models cached for the machine, waiters woken."""
        self.info = info
        self.cache.write(info.get("models"))
        self.reported.set()
        if self.listener is not None:
            self.listener(info)


def available_commands(commands: Sequence[Any]) -> list[dict[str, Any]]:
    """ACP ``availableCommands`` from Claude Code's command list (unique names without
    whitespace; terminal-only commands left out)."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for command in commands:
        if len(out) >= MAX_COMMANDS:
            break
        if not isinstance(command, Mapping):
            continue
        name = command.get("name")
        if not isinstance(name, str) or not name or name in UNSUPPORTED_COMMANDS:
            continue
        if name.endswith(" (MCP)"):
            name = "mcp:" + name[: -len(" (MCP)")]
        if any(ch.isspace() for ch in name) or name in seen:
            continue
        seen.add(name)
        description = command.get("description")
        entry: dict[str, Any] = {"name": name, "description": description if isinstance(description, str) else ""}
        hint = command.get("argumentHint")
        if isinstance(hint, list):
            hint = " ".join(h for h in hint if isinstance(h, str))
        if isinstance(hint, str) and hint:
            entry["input"] = {"hint": hint}
        out.append(entry)
    return out
