"""What a session request (``session/new``, ``session/load``, ``session/resume``, ``session/fork``)
asks for beyond the SDK's models: a working directory that exists, the client's system prompt and
the ``_meta`` session options this agent takes. Standard library only (the early launch reads it
before the SDKs are imported).

Rules
-----
* A ``cwd`` that is relative, missing or not a directory is refused at once, before anything is
  started or read, with the reference adapter's words and ``data`` (``validateCwd`` in its
  ``dist/acp-agent.js``): ``Invalid params: `cwd` must be an absolute path, but received: X``,
  ``... does not exist on the machine running the agent: X``, ``... is not a directory: X``;
  ``data`` is ``{"cwd": X}``. The agent's transport redacts every JSON-RPC error, so a home or
  temporary path is echoed as ``[redacted path]`` (docs/security.md, docs/parity).
* The ACP ``systemPrompt`` (unstable: ``{mode, content}``) as the reference applies it
  (``dist/client-system-prompt.js``): ``append`` adds the text to Claude Code's own system prompt,
  ``override`` replaces it; the text is the content's text blocks joined by a blank line. Another
  mode, a block that is not text, a shape that is not the schema's, or a text over
  :data:`MAX_SYSTEM_PROMPT_BYTES` is a ``-32602`` and no session (the RFD: an agent that cannot
  apply a prompt must not create the session).
* ``_meta.systemPrompt`` (the reference's older extension): a string replaces Claude Code's system
  prompt, an object's ``append`` is appended; the ACP ``systemPrompt`` wins over it.
* ``_meta.claudeCode.options.tools`` (a list of tool names: the built-in tools Claude Code
  offers) and ``_meta.disableBuiltInTools: true`` (no built-in tool) as the reference reads them.
  Every other ``_meta.claudeCode.options`` key (``env``, ``executable``, ``settings``, hooks...)
  is not taken: it could run code or re-route credentials in the agent's name (docs/parity).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "MAX_SYSTEM_PROMPT_BYTES",
    "BadSessionRequest",
    "SessionOptions",
    "check_cwd",
    "route_session_requests",
    "routed_model",
    "session_options",
]

#: The largest system prompt text (UTF-8 bytes) a session takes: Claude Code receives it as one
#: command-line argument, and Linux refuses an argument over 128 KiB (``MAX_ARG_STRLEN``).
MAX_SYSTEM_PROMPT_BYTES: Final = 100_000
#: The most tool names ``_meta.claudeCode.options.tools`` may list, and the longest name.
MAX_TOOLS: Final = 256
MAX_TOOL_NAME_CHARS: Final = 200
#: Claude Code's own system prompt (the agent's default: ``cli_options``).
PRESET: Final[Mapping[str, str]] = {"type": "preset", "preset": "claude_code"}


class BadSessionRequest(ValueError):
    """A session request this agent refuses: the JSON-RPC ``-32602`` error's ``message`` (without
    the ``Invalid params: `` prefix) and ``data``."""

    def __init__(self, message: str, data: dict[str, Any]) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


def check_cwd(cwd: object) -> str:
    """``cwd`` when it is an absolute path to an existing directory, else :class:`BadSessionRequest`
    with the reference adapter's message and ``data``."""
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise BadSessionRequest(f"`cwd` must be an absolute path, but received: {cwd}", {"cwd": cwd})
    try:
        is_dir = os.path.isdir(cwd) if os.path.exists(cwd) else None
    except (OSError, ValueError):  # a NUL byte, a path too long for the system
        is_dir = None
    if is_dir is None:
        raise BadSessionRequest(f"`cwd` does not exist on the machine running the agent: {cwd}", {"cwd": cwd})
    if not is_dir:
        raise BadSessionRequest(f"`cwd` is not a directory: {cwd}", {"cwd": cwd})
    return cwd


@dataclass(frozen=True, slots=True)
class SessionOptions:
    """What a session request asks of Claude Code: ``ClaudeAgentOptions`` keywords
    (``system_prompt``, ``tools``), empty when it asks for nothing beyond the defaults."""

    claude: Mapping[str, Any] = field(default_factory=dict)


def _text(value: str, where: str) -> str:
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_SYSTEM_PROMPT_BYTES:
        raise BadSessionRequest(
            f"{where} is {size} bytes; at most {MAX_SYSTEM_PROMPT_BYTES} are taken",
            {where: {"bytes": size, "limit": MAX_SYSTEM_PROMPT_BYTES}},
        )
    return value


def _client_prompt(value: object) -> str | dict[str, Any] | None:
    """The SDK ``system_prompt`` for an ACP ``systemPrompt`` (None: none given)."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise BadSessionRequest("systemPrompt must be an object {mode, content}", {"systemPrompt": "not an object"})
    mode, content = value.get("mode"), value.get("content")
    if mode not in ("append", "override"):
        shown = mode if isinstance(mode, str) else repr(mode)
        raise BadSessionRequest(f"Unsupported systemPrompt mode: {shown}", {"systemPrompt": {"mode": mode}})
    if not isinstance(content, list):
        raise BadSessionRequest("systemPrompt content must be a list of content blocks", {"systemPrompt": "content"})
    texts: list[str] = []
    for block in content:
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind != "text":
            shown = kind if isinstance(kind, str) else "non-object"
            raise BadSessionRequest(
                f"systemPrompt content must be text, but received a {shown} block",
                {"systemPrompt": {"content": {"type": kind if isinstance(kind, str) else None}}},
            )
        assert isinstance(block, Mapping)
        text = block.get("text")
        if not isinstance(text, str):
            raise BadSessionRequest("a systemPrompt text block needs a string text", {"systemPrompt": "content"})
        texts.append(text)
    joined = _text("\n\n".join(texts), "systemPrompt")
    if mode == "override":
        return joined
    return {**PRESET, "append": joined} if joined else dict(PRESET)


def _meta_prompt(value: object) -> str | dict[str, Any] | None:
    """The SDK ``system_prompt`` for the reference's ``_meta.systemPrompt`` extension: a string
    replaces, an object's ``append`` appends (None: none, or a shape it does not read)."""
    if isinstance(value, str) and value:
        return _text(value, "_meta.systemPrompt")
    if isinstance(value, Mapping):
        append = value.get("append")
        if isinstance(append, str) and append:
            return {**PRESET, "append": _text(append, "_meta.systemPrompt")}
        return None
    return None


def _tools(meta: Mapping[str, Any]) -> list[str] | None:
    """``_meta.claudeCode.options.tools`` (a list of names), else ``[]`` for
    ``_meta.disableBuiltInTools: true``, else None (Claude Code's own set)."""
    code = meta.get("claudeCode")
    options = code.get("options") if isinstance(code, Mapping) else None
    tools = options.get("tools") if isinstance(options, Mapping) else None
    if tools is not None:
        if (
            not isinstance(tools, list)
            or len(tools) > MAX_TOOLS
            or not all(isinstance(t, str) and 0 < len(t) <= MAX_TOOL_NAME_CHARS and "," not in t for t in tools)
        ):
            raise BadSessionRequest(
                f"_meta.claudeCode.options.tools must be a list of at most {MAX_TOOLS} tool names",
                {"tools": "invalid"},
            )
        return list(dict.fromkeys(tools))
    if meta.get("disableBuiltInTools") is True:
        return []
    return None


def session_options(system_prompt: object, meta: object) -> SessionOptions:
    """What a session request's ``systemPrompt`` and ``_meta`` ask of Claude Code; raises
    :class:`BadSessionRequest` for one this agent cannot apply."""
    meta = meta if isinstance(meta, Mapping) else {}
    claude: dict[str, Any] = {}
    prompt = _client_prompt(system_prompt)
    if prompt is None:
        prompt = _meta_prompt(meta.get("systemPrompt"))
    if prompt is not None and prompt != PRESET:
        claude["system_prompt"] = prompt
    tools = _tools(meta)
    if tools is not None:
        claude["tools"] = tools
    return SessionOptions(claude)


#: The session requests that carry a ``systemPrompt`` (the ACP schema's unstable field, which the
#: ACP SDK 0.12.1's models drop): the method, the SDK's request model, the agent's handler.
_ROUTED: Final = (
    ("session/new", "NewSessionRequest", "new_session"),
    ("session/load", "LoadSessionRequest", "load_session"),
    ("session/resume", "ResumeSessionRequest", "resume_session"),
    ("session/fork", "ForkSessionRequest", "fork_session"),
)


def routed_model(name: str) -> type[Any]:
    """The ACP SDK's request model ``name`` (one of :data:`_ROUTED`) with ``systemPrompt`` (the
    handler's ``system_prompt`` keyword).

    Built at its first request (one of the four is the first session's), and with no field
    docstrings read from source: the one field added has none, the base's fields keep theirs, and
    pydantic's search for the source of a class made here walks every module (the four together
    took about 0.1 s on the way to the first ``session/new``, for the same models)."""
    from acp import schema
    from pydantic import Field, create_model

    model: type[Any] = create_model(
        f"{name}WithSystemPrompt",
        __base__=getattr(schema, name),
        __cls_kwargs__={"defer_build": True, "use_attribute_docstrings": False},
        system_prompt=(Any, Field(default=None, alias="systemPrompt")),
    )
    return model


def route_session_requests(conn: object, agent: object) -> None:
    """Route the session requests of :data:`_ROUTED` on ``conn`` to ``agent`` through the SDK's
    models extended with ``systemPrompt`` (:func:`routed_model`)."""
    from . import sdk

    for method, name, attr in _ROUTED:
        if not sdk.route_request(conn, method, routed_model(name), agent, attr):
            return
