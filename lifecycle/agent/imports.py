"""Importing the agent's SDKs at the process's start, faster and with the same models: field
docstrings read from one pass over their module, model builds deferred to first use, no cyclic
garbage collection meanwhile.

Rules
-----
* The models are the same: every field's ``description`` is what pydantic's own extraction gives,
  and every model validates and serialises as when built at import (``tests/test_agent_imports.py``
  compares every model's fields and JSON Schema, imported both ways, in fresh interpreters, and
  the agent's end-to-end tests run on models imported this way).
* Only classes of :data:`ONE_PASS_MODULES` get their docstrings here, and only those whose name
  is on one ``class`` line of their module, at its top level; any other class, a module whose
  source cannot be read, a block that does not parse, and a pydantic without the hook point go to
  pydantic's own extraction.
* Only models of :data:`DEFERRED_MODULES` are deferred (pydantic's ``defer_build``: the validator
  and serialiser are built when the model is first used), and not one whose own config says
  otherwise. The ACP SDK's are built after the agent's first prompt is answered, on the event
  loop, one at a time (:func:`build_deferred`).
* The hooks are in place only while :func:`import_server` imports, and removed after it, whatever
  happened; the hook points are module state of pydantic, so two imports at once in one process
  must not overlap (the agent's entry makes one). Without a hook point (another pydantic), the
  import is pydantic's own.
* No SDK and no pydantic at import time (the entry imports this module before them).

Theory of operation
-------------------
``lifecycle acp`` answers ``initialize`` at once, but the first prompt waits for the ACP SDK and
the Claude SDK (docs/performance.md). Three costs of that import are not the models' own:

* ``acp.schema``'s base model sets ``use_attribute_docstrings=True``, so for each of its ~270
  classes pydantic (on Python < 3.13) walks the stack to the module's frame, cuts the class's
  block out of the module's lines with ``inspect.getblock`` (a tokenisation in Python) and parses
  it. Reading the module once, cutting each top-level class's block at the next line that starts
  in column 0, and parsing that block when its class asks, gives pydantic's ``DocstringVisitor``
  the same statement. (One parse of the whole module would hold the interpreter lock for tens of
  milliseconds at once, while the event loop launches Claude Code.)
* Building a model's validator and serialiser (pydantic-core) for each of ``acp.schema``'s and
  ``mcp.types``' models before the first prompt, which uses a dozen of them (``mcp.types`` is
  imported by the Claude SDK for in-process MCP servers, which this agent does not run). The
  rest of the ACP SDK's are built once the first prompt is answered, so a later turn's first
  permission question (about 20 ms of builds) does not pay for them.
* The cyclic garbage collector walking the growing heap during the import; after it, what was
  imported is moved to the permanent generation (``gc.freeze``), so later collections skip it.

The docstring hook replaces the name ``extract_docstrings_from_cls`` in
``pydantic._internal._fields``, the deferral hook ``ConfigWrapper.for_model`` in
``pydantic._internal._config`` (adding ``defer_build=True`` to the class keywords it reads);
each calls the original for everything else.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import gc
import importlib
import re
import sys
import time
import tokenize
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, Final

import structlog

__all__ = [
    "BUILT_LATER", "DEFERRED_MODULES", "FIRST_PROMPT_MODELS", "FIRST_PROMPT_MODULES", "ONE_PASS_MODULES",
    "SERVER_MODULE", "build_deferred", "deferred_builds", "import_server", "one_pass_docstrings", "warm_first_prompt",
]  # fmt: skip

log = structlog.get_logger("lifecycle.agent")

#: The modules whose models get their field docstrings from one read of their source (the ACP
#: SDK's schema).
ONE_PASS_MODULES: Final = frozenset({"acp.schema"})

#: The modules whose models are built at their first use (the ACP SDK's schema; MCP's types,
#: which the Claude SDK imports).
DEFERRED_MODULES: Final = frozenset({"acp.schema", "mcp.types"})

#: The deferred modules whose models :func:`build_deferred` builds after the first prompt (the
#: ACP SDK's: a session's later requests use them; MCP's types stay unbuilt).
BUILT_LATER: Final = frozenset({"acp.schema"})

#: What the agent's entry imports in the background (the SDKs and the agent).
SERVER_MODULE: Final = "lifecycle.agent.server"

#: The ACP SDK's models every first prompt builds on its way (the ``session/new`` answer, the
#: prompt request, its updates, its answer), and the module a ledger imports at its first event
#: (the turn machine, python-statemachine with it): :func:`warm_first_prompt`.
FIRST_PROMPT_MODELS: Final = ("NewSessionResponse", "PromptRequest", "SessionNotification", "PromptResponse")
FIRST_PROMPT_MODULES: Final = ("lifecycle.session_flow",)

_HOOK_MODULE: Final = "pydantic._internal._fields"
_HOOK_NAME: Final = "extract_docstrings_from_cls"
_CONFIG_MODULE: Final = "pydantic._internal._config"
_VISITOR_MODULE: Final = "pydantic._internal._docs_extraction"

_Extract = Callable[..., dict[str, str]]


_CLASS_LINE: Final = re.compile(r"^class[ \t]+(\w+)[ \t]*[(:]")
_ANY_CLASS_LINE: Final = re.compile(r"^[ \t]*class[ \t]+(\w+)", re.MULTILINE)


class _Source:
    """One module's source: each top-level class's block, parsed when its class asks.

    A block runs from its ``class`` line to the next line that starts in column 0 with anything
    but a comment. Such a line inside the class's own statement (a string or a bracket continued
    in column 0) leaves the block unterminated: it does not parse and the class goes to pydantic,
    as does a class whose name is on more than one ``class`` line of the module."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)
        self.starts: dict[str, int] = {}
        for number, line in enumerate(self.lines):
            found = _CLASS_LINE.match(line)
            if found is not None:
                self.starts[found.group(1)] = number
        self.named: dict[str, int] = {}
        for found in _ANY_CLASS_LINE.finditer(text):
            self.named[found.group(1)] = self.named.get(found.group(1), 0) + 1

    def block(self, name: str) -> ast.ClassDef | None:
        start = self.starts.get(name)
        if start is None or self.named.get(name) != 1:
            return None
        end = start + 1
        while end < len(self.lines):
            line = self.lines[end]
            if line[:1] not in ("", " ", "\t", "\n", "\r", "#", "\f"):
                break
            end += 1
        try:
            tree = ast.parse("".join(self.lines[start:end]))
        except (SyntaxError, ValueError):
            return None
        if len(tree.body) != 1:
            return None
        node = tree.body[0]
        return node if isinstance(node, ast.ClassDef) and node.name == name else None


class _OnePass:
    """The hook: answers the classes of the one-pass modules from one read of each."""

    def __init__(self, original: _Extract, visitor: Callable[[], Any], modules: frozenset[str]) -> None:
        self.original = original
        self.visitor = visitor  # pydantic's own DocstringVisitor: its rules of what a field's docstring is
        self.modules = modules
        self.sources: dict[str, _Source | None] = {}
        self.answered = 0

    def _source(self, module_name: str) -> _Source | None:
        if module_name not in self.sources:
            module = sys.modules.get(module_name)
            path = getattr(module, "__file__", None)
            found: _Source | None = None
            if isinstance(path, str) and path.endswith(".py"):
                try:
                    with tokenize.open(path) as f:  # the source's own encoding, as inspect reads it
                        found = _Source(f.read())
                except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
                    found = None
            self.sources[module_name] = found
        return self.sources[module_name]

    def __call__(self, cls: type[Any], use_inspect: bool = False) -> dict[str, str]:
        module_name = getattr(cls, "__module__", None)
        if isinstance(module_name, str) and module_name in self.modules and cls.__qualname__ == cls.__name__:
            source = self._source(module_name)
            node = source.block(cls.__name__) if source is not None else None
            if node is not None:
                visitor = self.visitor()
                visitor.generic_visit(node)
                self.answered += 1
                attrs: dict[str, str] = visitor.attrs
                return attrs
        return self.original(cls, use_inspect=use_inspect)


@contextlib.contextmanager
def one_pass_docstrings(modules: frozenset[str] = ONE_PASS_MODULES) -> Iterator[_OnePass | None]:
    """While in the block, models of ``modules`` get their field docstrings from one read of
    their module's source; yields the hook (None when this pydantic has no hook point)."""
    try:
        fields: ModuleType | None = importlib.import_module(_HOOK_MODULE)
        visitor: Any = importlib.import_module(_VISITOR_MODULE).DocstringVisitor
    except (ImportError, AttributeError):
        fields = visitor = None
    original = getattr(fields, _HOOK_NAME, None)
    if fields is None or not callable(original) or not callable(visitor):
        yield None
        return
    hook = _OnePass(original, visitor, modules)
    setattr(fields, _HOOK_NAME, hook)
    try:
        yield hook
    finally:
        setattr(fields, _HOOK_NAME, original)


class _Deferring:
    """The deferral hook: ``ConfigWrapper.for_model`` for a class of the deferred modules."""

    def __init__(self, original: Callable[..., Any], modules: frozenset[str]) -> None:
        self.original = original
        self.modules = modules
        self.deferred = 0

    def __call__(self, bases: tuple[type[Any], ...], namespace: dict[str, Any], kwargs: dict[str, Any]) -> Any:
        own = namespace.get("model_config")
        if (
            namespace.get("__module__") in self.modules
            and "defer_build" not in kwargs
            and not (isinstance(own, dict) and "defer_build" in own)
        ):
            kwargs["defer_build"] = True  # read (and taken out of the class keywords) by for_model
            self.deferred += 1
        return self.original(bases, namespace, kwargs)


@contextlib.contextmanager
def deferred_builds(modules: frozenset[str] = DEFERRED_MODULES) -> Iterator[_Deferring | None]:
    """While in the block, models of ``modules`` are created with ``defer_build=True``; yields the
    hook (None when this pydantic has no hook point)."""
    try:
        config: ModuleType | None = importlib.import_module(_CONFIG_MODULE)
    except ImportError:
        config = None
    wrapper = getattr(config, "ConfigWrapper", None)
    raw = vars(wrapper).get("for_model") if isinstance(wrapper, type) else None
    if wrapper is None or not isinstance(raw, classmethod):
        yield None
        return
    hook = _Deferring(wrapper.for_model, modules)  # the original, bound to the class
    # A plain callable on the class (not a descriptor): ``ConfigWrapper.for_model(...)`` calls it.
    wrapper.for_model = hook
    try:
        yield hook
    finally:
        wrapper.for_model = raw


async def build_deferred(modules: frozenset[str] = BUILT_LATER) -> int:
    """Build the models of ``modules`` that are still deferred, one per turn of the event loop (a
    request that arrives meanwhile waits for one model's build at most); the number built.

    The agent calls it once its first prompt is answered: the models a later turn needs (a
    permission question's) are then ready before it, and the first prompt did not wait for them. A
    model that cannot be built yet is left to its first use, as pydantic leaves it."""
    started, built = time.perf_counter(), 0
    for module_name in sorted(modules):
        module = sys.modules.get(module_name)
        for value in list(vars(module).values()) if module is not None else []:
            rebuild = _rebuild_if_deferred(value, module_name)
            if rebuild is not None:
                with contextlib.suppress(Exception):
                    rebuild()
                    built += 1
                await asyncio.sleep(0)
    # Wall time from the first build to the last, the other tasks' turns in between included.
    log.info("agent.models_built", built=built, seconds=round(time.perf_counter() - started, 3))
    return built


_warming: dict[str, asyncio.Future[None]] = {}  # the one warm-up of this process (a reference keeps it running)


def warm_first_prompt() -> None:
    """Once per process, in the background: import :data:`FIRST_PROMPT_MODULES` and build those of
    :data:`FIRST_PROMPT_MODELS` still deferred, one per turn of the event loop. The agent calls it
    as the first session's Claude Code starts: until Claude Code answers the SDK's ``initialize``
    the loop is idle, and what is done then is not done on the way to the first prompt's answer
    (where each would otherwise be, at its first use). Called again, it does nothing."""
    if "first_prompt" in _warming or not sys.modules.get("acp.schema"):
        return
    _warming["first_prompt"] = asyncio.ensure_future(_warm())


async def _warm() -> None:
    for name in FIRST_PROMPT_MODULES:
        await asyncio.sleep(0)  # the start goes first, then one step per turn
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    schema = sys.modules.get("acp.schema")
    for name in FIRST_PROMPT_MODELS:
        await asyncio.sleep(0)
        rebuild = _rebuild_if_deferred(getattr(schema, name, None), "acp.schema")
        if rebuild is not None:
            with contextlib.suppress(Exception):  # left to its first use, as pydantic leaves it
                rebuild()


def _rebuild_if_deferred(value: object, module_name: str) -> Callable[[], object] | None:
    """``value.model_rebuild`` when ``value`` is a model class of ``module_name`` not built yet."""
    if not isinstance(value, type) or value.__module__ != module_name:
        return None
    if getattr(value, "__pydantic_complete__", True) is not False:
        return None
    rebuild = getattr(value, "model_rebuild", None)
    return rebuild if callable(rebuild) else None


def import_server(*, pause_gc: bool = False) -> ModuleType:
    """Import :data:`SERVER_MODULE` (the SDKs and the agent) with both hooks, and log
    ``agent.imported`` (seconds, classes whose docstrings were read in one pass, models deferred).

    With ``pause_gc`` (for the process's entry, which owns the process) the cyclic garbage
    collector does not run during the import, and what was imported is then moved to its permanent
    generation (``gc.freeze``); it is enabled again either way.
    """
    started = time.perf_counter()
    paused = pause_gc and gc.isenabled()
    if paused:
        gc.disable()
    try:
        with one_pass_docstrings() as docs, deferred_builds() as builds:
            module = importlib.import_module(SERVER_MODULE)
        if paused:
            gc.freeze()
    finally:
        if paused:
            gc.enable()
    log.info(
        "agent.imported",
        seconds=round(time.perf_counter() - started, 3),
        docstrings_one_pass=docs.answered if docs is not None else None,
        models_deferred=builds.deferred if builds is not None else None,
        gc_paused=paused,
    )
    return module
