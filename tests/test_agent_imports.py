"""The agent's fast import of its SDKs (:mod:`lifecycle.agent.imports`); the launch window it
waits for is checked in ``tests/test_agent_launch.py``.

The oracle for the models is pydantic itself: the SDKs' models imported the ordinary way in a
fresh interpreter. Everything the hooks change must come out the same: every field's description,
every model's JSON Schema, and what a model validates and dumps.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from lifecycle.agent import imports

# ------------------------------------------------------------------ the SDKs' models, both ways

_DUMP = textwrap.dedent(
    """
    import contextlib, gc, json, sys
    hooked = sys.argv[1] == "hooked"
    report = {}
    with contextlib.ExitStack() as stack:
        if hooked:
            from lifecycle.agent.imports import deferred_builds, one_pass_docstrings
            docs = stack.enter_context(one_pass_docstrings())
            builds = stack.enter_context(deferred_builds())
        import acp.schema as schema
        import mcp.types as mcp_types
    if hooked:
        report["answered"] = docs.answered
        report["deferred"] = builds.deferred
    from pydantic import BaseModel

    def models(module):
        return {
            name: obj for name, obj in sorted(vars(module).items())
            if isinstance(obj, type) and issubclass(obj, BaseModel) and obj.__module__ == module.__name__
        }

    out = {"report": report}
    for module in (schema, mcp_types):
        found = models(module)
        out[module.__name__ + ":complete"] = sorted(n for n, m in found.items() if m.__pydantic_complete__)
        for name, model in found.items():
            fields = {k: f.description for k, f in model.model_fields.items()}
            try:
                js = model.model_json_schema()
            except Exception as exc:
                js = type(exc).__name__
            out[module.__name__ + ":" + name] = [fields, js]
    # What a model validates and dumps (ACP messages as a client and the agent send them).
    samples = [
        ("InitializeRequest", {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}}),
        ("NewSessionRequest", {"cwd": "/p", "mcpServers": [{"name": "e", "command": "c", "args": [], "env": []}]}),
        ("PromptRequest", {"sessionId": "s", "prompt": [
            {"type": "text", "text": "hi"}, {"type": "image", "mimeType": "image/png", "data": "aGk="},
            {"type": "resource", "resource": {"uri": "file:///a", "text": "t"}}]}),
        ("PromptRequest", {"sessionId": "s", "prompt": [{"type": "audio", "mimeType": "x", "data": 3}]}),
        ("SessionNotification", {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "x"}}}),
        ("SessionNotification", {"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": "t",
            "title": "Write", "kind": "edit", "status": "pending",
            "content": [{"type": "diff", "path": "/a", "oldText": None, "newText": "n"}]}}),
        ("RequestPermissionRequest", {"sessionId": "s", "toolCall": {"toolCallId": "t"},
            "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}]}),
        ("SetSessionModeRequest", {"sessionId": "s", "modeId": 7}),
        ("PromptResponse", {"stopReason": "end_turn"}),
    ]
    for name, payload in samples:
        try:
            value = getattr(schema, name).model_validate(payload)
            got = value.model_dump(mode="json", by_alias=True, exclude_none=True)
        except Exception as exc:
            got = [type(exc).__name__, str(exc).splitlines()[0]]
        out.setdefault("samples", []).append([name, got])
    tool = mcp_types.Tool.model_validate({"name": "t", "inputSchema": {"type": "object"}})
    out["mcp_tool"] = tool.model_dump(mode="json")
    print(json.dumps(out, sort_keys=True))
    """
)


def _dump(way: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", _DUMP, way], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def both_ways() -> tuple[dict[str, Any], dict[str, Any]]:
    return _dump("plain"), _dump("hooked")


def test_every_model_is_the_same_imported_either_way(both_ways: tuple[dict[str, Any], dict[str, Any]]) -> None:
    plain, hooked = both_ways
    keys = [k for k in plain if ":" in k and not k.endswith(":complete")]
    assert len([k for k in keys if k.startswith("acp.schema:")]) > 250  # the ACP SDK's ~280 models
    assert len([k for k in keys if k.startswith("mcp.types:")]) > 150
    described = sum(1 for k in keys for d in plain[k][0].values() if d)
    assert described > 800  # the ACP schema documents its fields: the comparison is not of empties
    for key in keys:
        assert hooked[key] == plain[key], key
    assert set(keys) == {k for k in hooked if ":" in k and not k.endswith(":complete")}


def test_what_the_models_validate_and_dump_is_the_same(both_ways: tuple[dict[str, Any], dict[str, Any]]) -> None:
    plain, hooked = both_ways
    assert hooked["samples"] == plain["samples"]
    assert hooked["mcp_tool"] == plain["mcp_tool"]
    outcomes = {name: got for name, got in plain["samples"] if name in ("SetSessionModeRequest", "PromptResponse")}
    assert outcomes["PromptResponse"] == {"stopReason": "end_turn"}
    assert outcomes["SetSessionModeRequest"][0] == "ValidationError"  # refused both ways


def test_the_hooks_did_the_work(both_ways: tuple[dict[str, Any], dict[str, Any]]) -> None:
    plain, hooked = both_ways
    models = len([k for k in plain if k.startswith("acp.schema:") and not k.endswith(":complete")])
    # Every ACP model class but the root models (no ``use_attribute_docstrings`` of their own base).
    assert hooked["report"]["answered"] >= models * 0.9
    assert hooked["report"]["deferred"] > 400
    # Built at import the ordinary way; deferred ones were built only by use (the JSON Schemas above
    # came after this list was taken).
    assert len(plain["acp.schema:complete"]) > 250
    assert len(hooked["acp.schema:complete"]) < 10


# ------------------------------------------------------------------ the docstring hook's rules

_TRICKY = '''\
from pydantic import BaseModel, ConfigDict


class Base(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)


class Plain(Base):
    a: int = 0
    """The a."""
    b: str = ""
    # a comment between a field and its docstring
    """The b."""
    c: int = 0

    """Still c's, after a blank line."""


class Continued(Base):
    x: int = 0
    """First line
second line in column 0"""
    y: int = 1
    """The y."""


class Twice(Base):
    z: int = 0
    """Outer z."""


def make():
    class Twice(Base):
        w: int = 0
        """Inner w."""

    return Twice


class AfterCode(Base):
    v: int = 0
    """The v."""
X = 1
'''


def _described(module: Any) -> dict[str, dict[str, str | None]]:
    classes = {"Plain": module.Plain, "Continued": module.Continued, "Twice": module.Twice}
    classes.update({"AfterCode": module.AfterCode, "make().Twice": module.make()})
    return {name: {k: f.description for k, f in cls.model_fields.items()} for name, cls in classes.items()}


def test_a_listed_module_gets_pydantics_own_descriptions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "onepass_plain.py").write_text(_TRICKY)
    (tmp_path / "onepass_hooked.py").write_text(_TRICKY)
    monkeypatch.syspath_prepend(str(tmp_path))
    import onepass_plain  # type: ignore[import-not-found]

    with imports.one_pass_docstrings(frozenset({"onepass_hooked"})) as hook:
        import onepass_hooked  # type: ignore[import-not-found]

        nested = onepass_hooked.make()  # a nested class of a listed module: pydantic's own
    assert hook is not None
    assert _described(onepass_hooked) == _described(onepass_plain)
    assert {k: f.description for k, f in nested.model_fields.items()} == {"w": "Inner w."}
    assert _described(onepass_plain)["Plain"] == {"a": "The a.", "b": "The b.", "c": "Still c's, after a blank line."}
    assert _described(onepass_plain)["Continued"] == {"x": "First line\nsecond line in column 0", "y": "The y."}
    # Answered here: Base, Plain, AfterCode. Continued (its block is cut in column 0 and does not
    # parse), Twice (two ``class Twice`` lines) and the nested class went to pydantic.
    assert hook.answered == 3


def test_other_modules_go_to_pydantic() -> None:
    with imports.one_pass_docstrings(frozenset({"somewhere.else"})) as hook:

        class Here(BaseModel):
            model_config = ConfigDict(use_attribute_docstrings=True)
            n: int = 0
            """The n."""

    assert hook is not None and hook.answered == 0
    assert Here.model_fields["n"].description == "The n."


def test_the_hooks_are_in_place_only_inside(monkeypatch: pytest.MonkeyPatch) -> None:
    import pydantic._internal._config as config
    import pydantic._internal._fields as fields

    extract, for_model = fields.extract_docstrings_from_cls, vars(config.ConfigWrapper)["for_model"]
    with pytest.raises(RuntimeError), imports.one_pass_docstrings() as docs, imports.deferred_builds() as builds:
        assert fields.extract_docstrings_from_cls is docs
        assert config.ConfigWrapper.for_model is builds
        raise RuntimeError("an import that fails")
    assert fields.extract_docstrings_from_cls is extract
    assert vars(config.ConfigWrapper)["for_model"] is for_model


def test_without_a_hook_point_the_import_is_pydantics(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(imports, "_HOOK_MODULE", "pydantic._internal._no_such_module")
    monkeypatch.setattr(imports, "_CONFIG_MODULE", "pydantic._internal._no_such_module")
    with imports.one_pass_docstrings() as docs, imports.deferred_builds() as builds:

        class Model(BaseModel):
            model_config = ConfigDict(use_attribute_docstrings=True)
            n: int = 0
            """The n."""

    assert docs is None and builds is None
    assert Model.model_fields["n"].description == "The n." and Model.__pydantic_complete__


# ------------------------------------------------------------------ deferred builds

_DEFERRED = """\
from pydantic import BaseModel, ConfigDict


class Lazy(BaseModel):
    n: int


class Eager(BaseModel):
    model_config = ConfigDict(defer_build=False)
    n: int
"""


def test_a_listed_modules_models_are_built_at_first_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "deferred_models.py").write_text(_DEFERRED)
    monkeypatch.syspath_prepend(str(tmp_path))
    with imports.deferred_builds(frozenset({"deferred_models"})) as hook:
        import deferred_models  # type: ignore[import-not-found]

        class Elsewhere(BaseModel):
            n: int

    assert hook is not None and hook.deferred == 1
    assert not deferred_models.Lazy.__pydantic_complete__
    assert deferred_models.Eager.__pydantic_complete__  # its own config says so
    assert Elsewhere.__pydantic_complete__  # not a listed module
    assert deferred_models.Lazy.model_validate({"n": "3"}).n == 3
    assert deferred_models.Lazy.__pydantic_complete__
    with pytest.raises(ValidationError):
        deferred_models.Lazy(n="three")


def test_deferred_models_are_built_later_one_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "deferred_later.py").write_text(_DEFERRED + "\n\nclass Other(BaseModel):\n    m: str\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with imports.deferred_builds(frozenset({"deferred_later"})) as hook:
        import deferred_later  # type: ignore[import-not-found]

    assert hook is not None and hook.deferred == 2
    turns: list[int] = []

    async def go() -> int:
        async def count() -> None:  # another task: it gets a turn between two builds
            while True:
                turns.append(sum(m.__pydantic_complete__ for m in (deferred_later.Lazy, deferred_later.Other)))
                await asyncio.sleep(0)

        counting = asyncio.ensure_future(count())
        await asyncio.sleep(0)
        try:
            return await imports.build_deferred(frozenset({"deferred_later", "not_imported_here"}))
        finally:
            counting.cancel()

    assert asyncio.run(go()) == 2
    assert deferred_later.Lazy.__pydantic_complete__ and deferred_later.Other.__pydantic_complete__
    assert 1 in turns  # the other task ran after the first build, before the second
    assert asyncio.run(imports.build_deferred(frozenset({"deferred_later"}))) == 0  # nothing left


# ------------------------------------------------------------------ the garbage collector

_GC = textwrap.dedent(
    """
    import gc, json, sys
    from lifecycle.agent import imports
    imports.SERVER_MODULE = sys.argv[1]
    try:
        imports.import_server(pause_gc=True)
        outcome = "imported"
    except ImportError:
        outcome = "failed"
    print("RESULT", json.dumps([outcome, gc.isenabled(), gc.get_freeze_count()]))
    """
)


@pytest.mark.parametrize(
    ("module", "expected"),
    [("json", ["imported", True, True]), ("no_such_module_here", ["failed", True, False])],
    ids=["imported", "failed"],
)
def test_the_collector_is_enabled_again(module: str, expected: list[Any]) -> None:
    done = subprocess.run([sys.executable, "-c", _GC, module], capture_output=True, text=True, timeout=60, check=True)
    (result,) = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    outcome, enabled, frozen = json.loads(result.removeprefix("RESULT "))
    assert [outcome, enabled, frozen > 0] == expected


# ------------------------------------------------------------------ the first prompt's warm-up

_WARM = textwrap.dedent(
    """
    import asyncio, json, sys
    from lifecycle.agent import imports
    imports.import_server()
    from acp import schema
    def state():
        return [getattr(schema, n).__pydantic_complete__ for n in imports.FIRST_PROMPT_MODELS] + [
            m in sys.modules for m in imports.FIRST_PROMPT_MODULES]
    async def go():
        imports.warm_first_prompt()
        imports.warm_first_prompt()  # once per process
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        await asyncio.gather(*others)
        return len(others)
    before = state()
    started = asyncio.run(go())
    print("RESULT", json.dumps([before, state(), started, asyncio.run(go())]))
    """
)


def test_the_first_prompts_models_and_machine_are_ready_once_warmed() -> None:
    done = subprocess.run([sys.executable, "-c", _WARM], capture_output=True, text=True, timeout=120, check=True)
    (result,) = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    before, after, started, again = json.loads(result.removeprefix("RESULT "))
    # the session/new answer, the prompt, its updates, its answer, and the ledger's turn machine
    assert before == [False] * 5 and after == [True] * 5
    assert (started, again) == (1, 0)
