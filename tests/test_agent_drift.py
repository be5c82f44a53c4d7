"""A guard against the next SDK/CLI drift (issue 49, point 4): what ``lifecycle acp`` depends on in
the installed ``claude-agent-sdk`` and its bundled Claude Code CLI, read from them, against the list
checked in beside this file (``tests/agent_drift.json``).

What is read (the installed SDK and CLI, never the network):

* ``versions``: the SDK's ``__version__`` and the bundled CLI's ``--version`` line;
* ``classes``: every field of each SDK class the agent reads or builds (the message classes of
  ``lifecycle.agent.messages.KINDS`` and the system messages' subclasses, the content blocks, the
  rate-limit info, the stored sessions' classes, the permission classes);
* ``reads``: the fields the agent reads of them (a literal below, from ``lifecycle/claude``,
  ``lifecycle/agent/messages.py``, ``stream.py``, ``permissions.py``, ``stored.py``): each must
  still be a field;
* ``control_requests``: the subtype of each control request the agent sends, through the SDK's
  client (read from the SDK's ``Query`` method the agent calls) or raw through
  ``lifecycle.agent.sdk.control_request_sender`` (read from the agent's source), the ones it reads
  from Claude Code, and the hook events it registers (named by the list: the Python SDK does not type them all);
* ``command_line``: the shape of the SDK's command line (``lifecycle.agent.sdk.cli_command``) for
  two sessions that set every option the agent sets (values replaced by ``<value>``), and which of
  its flags ``claude --help`` lists;
* ``private_names``: :data:`lifecycle.agent.sdk.PRIVATE_NAMES` and ``INSTANCE_STATE``, each resolved;
* ``cli_words``: whether the bundled CLI's binary holds each word of :data:`CLI_WORDS` as a quoted
  string (the stream-json and control-protocol words of CLI 2.1.337 the agent reads, or will send
  once the Python SDK can: read in ``sdk.d.ts`` of npm ``@anthropic-ai/claude-agent-sdk`` 0.3.337).

A bump that changes any of it fails :func:`test_the_installed_sdk_and_cli_are_the_expected_ones`
with the list of what was added, removed or changed, key by key. After reviewing each change
against the agent, rewrite the list: ``.venv/bin/python tests/test_agent_drift.py --write``.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import claude_agent_sdk
import claude_agent_sdk.types as sdk_types
from claude_agent_sdk._internal.query import Query

from lifecycle.agent import sdk
from lifecycle.agent.config import AgentConfig, claude_cli
from lifecycle.agent.launch import cli_options
from lifecycle.agent.messages import KINDS, OWN_CLASSES
from lifecycle.agent.modes import SessionSettings

HERE = Path(__file__).parent
EXPECTED = HERE / "agent_drift.json"
AGENT = HERE.parent / "lifecycle" / "agent"

#: SDK classes the agent reads or builds: KINDS' (but the agent's own, OWN_CLASSES), the system
#: messages' subclasses it meets, the content blocks, and what stored sessions and permissions use.
CLASSES = sorted(
    {
        *(name for name in KINDS if name not in OWN_CLASSES),
        "TaskStartedMessage", "TaskProgressMessage", "TaskNotificationMessage", "RateLimitInfo",
        "TextBlock", "ThinkingBlock", "ToolUseBlock", "ToolResultBlock",
        "SDKSessionInfo", "SessionMessage",
        "ToolPermissionContext", "PermissionResultAllow", "PermissionResultDeny", "PermissionUpdate",
    }
)  # fmt: skip

#: The fields the agent reads of each class (grep of ``getattr(message, ...)``, ``.field`` reads
#: in lifecycle/claude/__init__.py, lifecycle/agent/messages.py, stream.py, permissions.py,
#: stored.py): each must still be a field of the installed class.
READS: dict[str, list[str]] = {
    "StreamEvent": ["event", "parent_tool_use_id", "user_message_uuid", "user_message_uuids"],
    "AssistantMessage": [
        "content", "model", "parent_tool_use_id", "error", "usage", "message_id", "stop_reason", "uuid",
        "user_message_uuid", "user_message_uuids",
    ],
    "UserMessage": ["content", "uuid", "parent_tool_use_id", "tool_use_result", "origin"],
    "ResultMessage": [
        "subtype", "is_error", "stop_reason", "total_cost_usd", "usage", "result", "model_usage", "errors",
        "api_error_status", "terminal_reason", "origin", "user_message_uuid", "user_message_uuids",
    ],
    "SystemMessage": ["subtype", "data"],
    "RateLimitEvent": ["rate_limit_info"],
    "RateLimitInfo": ["status", "resets_at", "rate_limit_type", "utilization", "raw"],
    "TextBlock": ["text"],
    "ThinkingBlock": ["thinking"],
    "ToolUseBlock": ["id", "name", "input"],
    "ToolResultBlock": ["tool_use_id", "content", "is_error"],
    "SDKSessionInfo": ["session_id", "summary", "last_modified", "custom_title", "first_prompt", "cwd"],
    "ToolPermissionContext": ["suggestions", "tool_use_id"],
}  # fmt: skip

#: The ``ClaudeSDKClient`` calls of lifecycle/agent/runtime.py that send a control request, by the
#: SDK ``Query`` method that sends it.
SDK_CONTROL_CALLS = ("initialize", "interrupt", "set_permission_mode", "set_model")
#: Control requests Claude Code sends that the agent reads (lifecycle/agent/adopt.py, session.py).
RECEIVED = ("can_use_tool", "hook_callback")


#: Words of CLI 2.1.337 (its ``sdk.d.ts``) the agent depends on, each with where: a bump that drops
#: or renames one changes ``cli_words`` (issue 49.3).
CLI_WORDS: dict[str, str] = {
    "Interrupt": "the hook event the agent registers (lifecycle/agent/interrupts.py)",
    "permission_denied": "an InterruptHookInput reason",
    "rewind": "an InterruptHookInput reason",
    "aborted_tools": "the terminal_reason of a turn an interrupt ended",
    "aborted_streaming": "the terminal_reason of a turn an interrupt ended",
    "SetGoal": "the goal tool (lifecycle/agent/tool_calls.py)",
    "supersedes": "the messages an assistant message replaces (lifecycle/agent/adopt.py, messages.py)",
    "decisionClassification": "PermissionResult's classification: the Python SDK 0.2.190 cannot send it",
    "user_permanent": "the classification of an 'always' answer (the reference's)",
    "config": "the classification of an answer the host decided by itself",
    "background_tasks_changed": "the level of live background tasks (lifecycle/agent/hold.py, terminal.py)",
    "cancel_async_message": "the control request that drops a queued steer (lifecycle/agent/session.py)",
}


def _cli_words(cli: str) -> dict[str, bool]:
    import mmap

    with open(cli, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return {word: data.find(b'"' + word.encode() + b'"') >= 0 for word in CLI_WORDS}


def _fields(name: str) -> list[str]:
    cls = getattr(sdk_types, name, None) or getattr(claude_agent_sdk, name)
    return [f.name for f in dataclasses.fields(cls)]


def _subtype_sent_by(method: str) -> str:
    found = re.search(r'"subtype":\s*"([a-z_]+)"', inspect.getsource(getattr(Query, method)))
    return found.group(1) if found else f"<none in Query.{method}>"


def _raw_control_requests() -> list[str]:
    """The subtypes the agent sends raw (``send({"subtype": ...})`` in lifecycle/agent)."""
    text = "".join(p.read_text() for p in sorted(AGENT.glob("*.py")))
    return sorted(set(re.findall(r'send\(\{"subtype":\s*"([a-z_]+)"', text)))


def _hooks() -> list[str]:
    text = (AGENT / "session.py").read_text()
    return sorted(set(re.findall(r'"([A-Z][A-Za-z]+)"\]?\s*[:=]\s*\[HookMatcher', text)))


def _shape(arg: str, cli: str) -> str:
    if arg == cli:
        return "<cli>"
    if arg.startswith("--"):
        flag, eq, _ = arg.partition("=")
        return f"{flag}=<value>" if eq else flag
    return "stream-json" if arg == "stream-json" else "<value>"


def _command_lines(cli: str) -> dict[str, list[str]]:
    from claude_agent_sdk import ClaudeAgentOptions
    from claude_agent_sdk.types import _configure_can_use_tool

    async def allow(*args: Any) -> Any:
        return None

    everything = SessionSettings(mode="plan", model="haiku", effort="high", allow_bypass=True)
    mcp = {"echo": {"type": "stdio", "command": "/bin/true", "args": [], "env": {}}}
    lines = {}
    for name, resume, servers in (("new session", False, None), ("resume with MCP servers", True, mcp)):
        kw = cli_options(AgentConfig(max_turns=3), everything, cwd="/w", session_id="s", resume=resume,
                         mcp_servers=servers)  # fmt: skip
        options = _configure_can_use_tool(ClaudeAgentOptions(**kw, can_use_tool=allow, stderr=lambda line: None))
        transport = sdk.CliTransport(prompt="", options=options)
        lines[name] = [_shape(a, cli) for a in sdk.cli_command(transport)]
    return lines


def installed_surface() -> dict[str, Any]:
    """What the agent depends on, read from the installed SDK and its bundled CLI."""
    cli = claude_cli()
    assert cli is not None, "no Claude Code CLI: install the agent extra (pip install -e '.[test]')"
    version = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    help_text = subprocess.run([cli, "--help"], capture_output=True, text=True, timeout=60).stdout
    lines = _command_lines(cli)
    flags = sorted({s.partition("=")[0] for line in lines.values() for s in line if s.startswith("--")})
    return {
        "versions": {"claude-agent-sdk": claude_agent_sdk.__version__, "cli": version},
        "classes": {name: _fields(name) for name in CLASSES},
        "control_requests": {
            "sent through the SDK": {m: _subtype_sent_by(m) for m in SDK_CONTROL_CALLS},
            "sent raw": _raw_control_requests(),
            "received": list(RECEIVED),
            "hooks": _hooks(),
        },
        "command_line": {
            **lines,
            "flags listed by claude --help": {f: bool(re.search(re.escape(f) + r"\b", help_text)) for f in flags},
        },
        "private_names": sorted(n.label for n in sdk.PRIVATE_NAMES)
        + sorted(f"{cls}().{a}" for _, cls, attrs in sdk.INSTANCE_STATE for a in attrs),
        "cli_words": _cli_words(cli),
    }


def differences(expected: Any, installed: Any, path: str = "") -> list[str]:
    """What changed from ``expected`` to ``installed``, one line each (added, removed, changed)."""
    if isinstance(expected, dict) and isinstance(installed, dict):
        out = []
        for key in sorted(set(expected) | set(installed), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in installed:
                out.append(f"removed {where}: {json.dumps(expected[key])}")
            elif key not in expected:
                out.append(f"added {where}: {json.dumps(installed[key])}")
            else:
                out += differences(expected[key], installed[key], where)
        return out
    if isinstance(expected, list) and isinstance(installed, list) and all(
        isinstance(x, str) for x in [*expected, *installed]
    ) and path.split(".")[0] in ("classes", "private_names"):
        gone = [x for x in expected if x not in installed]
        new = [x for x in installed if x not in expected]
        return [f"removed {path}: {x}" for x in gone] + [f"added {path}: {x}" for x in new]
    if expected != installed:
        return [f"changed {path}: {json.dumps(expected)} -> {json.dumps(installed)}"]
    return []


def test_the_installed_sdk_and_cli_are_the_expected_ones() -> None:
    changes = differences(json.loads(EXPECTED.read_text()), installed_surface())
    assert changes == [], "the SDK or CLI drifted from tests/agent_drift.json:\n" + "\n".join(changes)


def test_every_field_the_agent_reads_exists() -> None:
    missing = [f"{cls}.{f}" for cls, fields in READS.items() for f in fields if f not in _fields(cls)]
    assert missing == [], f"fields the agent reads are gone from the SDK: {missing}"


def test_every_control_request_and_hook_is_one_the_sdk_knows() -> None:
    surface = installed_surface()["control_requests"]
    assert all(not s.startswith("<none") for s in surface["sent through the SDK"].values()), surface
    # The hooks are the CLI's (the Python SDK's ``HookEvent`` type lists none of ``Interrupt``, CLI
    # 2.1.337's, ``PostCompact`` and ``PostModelSwitch``; all are in ``HOOK_EVENTS`` of
    # @anthropic-ai/claude-agent-sdk 0.3.337's sdk.d.ts): the snapshot names them; here, only that the
    # scan found the ones the agent registers (lifecycle/agent/session.py).
    assert surface["hooks"] == ["Interrupt", "PostCompact", "PostModelSwitch"], surface["hooks"]
    assert surface["sent raw"], "no raw control request found: the scan reads the wrong text"
    sdk.check_names()  # every private name resolves on the installed SDK


def test_a_drift_is_named_key_by_key() -> None:
    # The counter-example: the comparison must fail, naming what changed, on a drifted surface.
    expected = json.loads(EXPECTED.read_text())
    drifted = json.loads(EXPECTED.read_text())
    drifted["versions"]["cli"] = "9.9.9 (Claude Code)"
    drifted["classes"]["ResultMessage"].remove("terminal_reason")
    drifted["classes"]["ResultMessage"].append("startup_failure_reason")
    drifted["command_line"]["new session"][4] = "--model"
    del drifted["control_requests"]["sent through the SDK"]["interrupt"]
    drifted["cli_words"]["SetGoal"] = False
    assert differences(expected, drifted) == [
        "removed classes.ResultMessage: terminal_reason",
        "added classes.ResultMessage: startup_failure_reason",
        "changed cli_words.SetGoal: true -> false",
        'changed command_line.new session: ' + json.dumps(expected["command_line"]["new session"]) + " -> "
        + json.dumps(drifted["command_line"]["new session"]),
        'removed control_requests.sent through the SDK.interrupt: "interrupt"',
        'changed versions.cli: "2.1.337 (Claude Code)" -> "9.9.9 (Claude Code)"',
    ]
    assert all(w in READS for w in ("ResultMessage", "StreamEvent")) and set(READS) <= set(CLASSES)


def test_cli_2_1_337s_words_are_there_and_the_sdk_cannot_classify_an_answer() -> None:
    cli = claude_cli()
    assert cli is not None
    assert _cli_words(cli) == dict.fromkeys(CLI_WORDS, True)
    # CLI 2.1.337 reads a ``decisionClassification`` on each permission answer (sdk.d.ts:
    # ``user_temporary`` for allow once, ``user_permanent`` for always, ``user_reject`` for a deny,
    # ``config`` for an answer the host decided by itself with nobody asked; unset, the CLI infers
    # temporary for allow, reject for deny). The Python SDK's answer classes have no such field and
    # its ``can_use_tool`` response is built field by field: the agent can send none. When a bump
    # adds it, this fails: classify then (``config`` for the agent's own refusals: a question it
    # could not ask, a withdrawn one; the agent never allows by itself).
    for name in ("PermissionResultAllow", "PermissionResultDeny"):
        assert not [f for f in _fields(name) if "classification" in f], name
    assert "decisionClassification" not in inspect.getsource(Query._handle_control_request)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    EXPECTED.write_text(json.dumps(installed_surface(), indent=1) + "\n")
    print(f"wrote {EXPECTED}")
