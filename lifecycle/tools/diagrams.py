"""``lifecycle diagrams``: render the machines and the conditions table for review.

Everything is rendered from the python-statemachine classes themselves
(:class:`lifecycle.incident.IncidentMachine`, :class:`lifecycle.session_flow.SessionFlow`) and from
:data:`lifecycle.conditions.CONDITIONS`: Mermaid (``.md``, shown inline on GitHub), Graphviz DOT
(``.dot``) and SVG (``dot -Tsvg``, from Debian's ``graphviz``). Transitions are labelled with their
event and their guard (the guards are named after the recovery policies; the tables also give
each recovery transition's policy). Output is deterministic: declaration order, no timestamps,
no paths, and the Graphviz version comment is dropped from the SVG.

It also fills the generated blocks of the documentation: every
``<!-- BEGIN GENERATED: name -->`` ... ``<!-- END GENERATED: name -->`` pair in ``README.md`` and
``docs/*.md`` (:data:`BLOCKS` names what may be generated; :func:`generated_blocks` renders them).
A marker with an unknown name, or one without its partner, is an error, and so is a block that no
file holds (with the default files), so a block cannot silently stop being checked.

``--check`` renders in memory and exits 1, naming the fix command, when ``diagrams/`` or any
generated block is stale. CI runs it.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from statemachine import StateMachine

from ..conditions import render_conditions_markdown
from ..incident import RECOVERY_EVENTS, IncidentMachine
from ..session_flow import SessionFlow

__all__ = [
    "BLOCKS",
    "EXAMPLE",
    "MACHINES",
    "block_files",
    "blocks_in",
    "cli_main",
    "find_root",
    "generated_blocks",
    "marker_problems",
    "render_all",
    "render_dot",
    "render_example",
    "render_markdown",
    "render_mermaid",
    "render_svg",
    "transitions",
    "update_blocks",
]

#: file stem -> (machine class, title, what the page adds)
MACHINES: dict[str, tuple[type[StateMachine], str, str]] = {
    "incident": (
        IncidentMachine,
        "One incident: warning/retrying -> terminal error -> historical",
        "Every transition an incident makes is the answer of a real instance of this class: the "
        "`MachineAnswers` held by whoever owns the incident's ledger asks one once per distinct "
        "question (state, event, recovery policy, replayed) and reuses the answer for every later "
        "incident. A guarded transition fires only when the incident's recovery policy names its event.",
    ),
    "session-flow": (
        SessionFlow,
        "One session's prompt turns",
        "The ledger's turn bookkeeping. `lifecycle check` steps this class in lockstep with the real "
        "`SessionLedger` through every reachable abstract state and fails when they disagree.",
    ),
}

#: The generated blocks, by marker name, in the order :func:`generated_blocks` renders them.
BLOCKS = ("example-trace", "incident-diagram", "session-flow-diagram", "conditions")

#: The bundled example the ``example-trace`` block shows (``lifecycle trace --example NAME``).
EXAMPLE = "rate-limit-then-recovery"

#: recovery event -> the policy it ends (``RECOVERY_EVENTS`` inverted)
_POLICY_OF_EVENT = {event: policy.value for policy, event in RECOVERY_EVENTS.items()}


def transitions(cls: type[StateMachine]) -> Iterator[tuple[str, str, str, tuple[str, ...]]]:
    """``(source, event, target, guards)`` for every declared transition, in declaration order."""
    for state in cls.states:
        for t in state.transitions:
            guards = tuple(str(c) for c in t.cond)
            for event in t.events:
                yield state.id, str(event.id), t.target.id, guards


def _policy(event: str, guards: tuple[str, ...]) -> str | None:
    """The recovery policy a guarded recovery transition belongs to (None for the others)."""
    if any(g.startswith("recovers_on_") for g in guards):
        return _POLICY_OF_EVENT.get(event)
    return None


def _label(event: str, guards: tuple[str, ...]) -> str:
    # The guards are named after the recovery policies (``recovers_on_auth``...): the label is
    # the event and its guard; the pages' tables add the policy's wire name.
    return event + (f" [{' and '.join(guards)}]" if guards else "")


def render_mermaid(cls: type[StateMachine]) -> str:
    """A Mermaid ``stateDiagram-v2`` of ``cls``."""
    lines = ["stateDiagram-v2", "    direction LR"]
    initial = next(s.id for s in cls.states if s.initial)
    lines.append(f"    [*] --> {initial}")
    for source, event, target, guards in transitions(cls):
        lines.append(f"    {source} --> {target} : {_label(event, guards)}")
    for s in cls.states:
        if s.final:
            lines.append(f"    {s.id} --> [*]")
    return "\n".join(lines) + "\n"


def _table(cls: type[StateMachine]) -> str:
    rows = ["| state | event | guard (recovery policy) | target |", "| --- | --- | --- | --- |"]
    for source, event, target, guards in transitions(cls):
        guard = ", ".join(f"`{g}`" for g in guards) or "-"
        policy = _policy(event, guards)
        if policy:
            guard += f" (`{policy}`)"
        rows.append(f"| `{source}` | `{event}` | {guard} | `{target}` |")
    return "\n".join(rows) + "\n"


def render_markdown(stem: str) -> str:
    """The ``diagrams/<stem>.md`` page: Mermaid diagram and transition table."""
    cls, title, about = MACHINES[stem]
    doc = (cls.__doc__ or "").strip().splitlines()[0]
    return (
        f"# {title}\n\n"
        f"Generated by `lifecycle diagrams` from `{cls.__module__}.{cls.__name__}` ({doc}). Do not edit.\n\n"
        f"{about}\n\n"
        f"```mermaid\n{render_mermaid(cls)}```\n\n{_table(cls)}"
    )


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_dot(cls: type[StateMachine]) -> str:
    """Graphviz DOT of ``cls``."""
    out = [
        f"digraph {_quote(cls.__name__)} {{",
        "    rankdir=LR;",
        '    node [shape=box, style="rounded", fontname="Helvetica"];',
        '    edge [fontname="Helvetica", fontsize=10];',
        '    "__start" [shape=point, label=""];',
    ]
    for s in cls.states:
        shape = ", peripheries=2" if s.final else ""
        out.append(f"    {_quote(s.id)} [label={_quote(s.id)}{shape}];")
    initial = next(s.id for s in cls.states if s.initial)
    out.append(f'    "__start" -> {_quote(initial)};')
    for source, event, target, guards in transitions(cls):
        out.append(f"    {_quote(source)} -> {_quote(target)} [label={_quote(_label(event, guards))}];")
    out.append("}")
    return "\n".join(out) + "\n"


_VERSION_COMMENT = re.compile(r"<!-- Generated by graphviz version [^>]*-->\n")


class GraphvizMissing(RuntimeError):
    """The Graphviz ``dot`` binary is not on PATH."""


def render_svg(dot_source: str) -> str:
    """SVG from the ``dot`` binary, normalised (no version comment).

    Raises:
        GraphvizMissing: ``dot`` is not installed (``apt-get install graphviz``).
    """
    exe = shutil.which("dot")
    if exe is None:
        raise GraphvizMissing("the Graphviz `dot` binary is missing (apt-get install graphviz)")
    proc = subprocess.run([exe, "-Tsvg"], input=dot_source, capture_output=True, text=True, check=True, timeout=60)
    return _VERSION_COMMENT.sub("", proc.stdout)


def render_all(*, svg: bool = True) -> dict[str, str]:
    """Every generated file of ``diagrams/``: name -> content (``svg=False``: without the SVGs)."""
    files: dict[str, str] = {}
    for stem, (cls, _, _) in MACHINES.items():
        dot = render_dot(cls)
        files[f"{stem}.md"] = render_markdown(stem)
        files[f"{stem}.dot"] = dot
        if svg:
            files[f"{stem}.svg"] = render_svg(dot)
    files["conditions.md"] = (
        "# Claude conditions\n\nGenerated by `lifecycle diagrams` from `lifecycle.conditions.CONDITIONS`. "
        "Do not edit.\n\n" + render_conditions_markdown()
    )
    return files


def render_example(name: str = EXAMPLE) -> str:
    """What ``lifecycle trace --example NAME`` prints, run in process through the command itself.

    Raises:
        RuntimeError: the command failed or reported something on stderr (the example is broken).
    """
    from ..cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["trace", "--example", name])
    if code != 0 or err.getvalue():
        raise RuntimeError(f"lifecycle trace --example {name} failed ({code}): {err.getvalue()[:300]}")
    return out.getvalue()


def generated_blocks() -> dict[str, str]:
    """What goes between each pair of ``<!-- BEGIN/END GENERATED: name -->`` markers (:data:`BLOCKS`)."""
    blocks = {
        "example-trace": f"```text\n$ lifecycle trace --example {EXAMPLE}\n{render_example()}```\n",
        "incident-diagram": f"```mermaid\n{render_mermaid(IncidentMachine)}```\n",
        "session-flow-diagram": f"```mermaid\n{render_mermaid(SessionFlow)}```\n",
        "conditions": render_conditions_markdown(),
    }
    assert tuple(blocks) == BLOCKS
    return blocks


#: A marker is a line of its own (a marker quoted inside other text is prose, not a marker).
_MARKER = re.compile(r"^<!-- (BEGIN|END) GENERATED: (\S*) -->$", re.M)
_MARKER_LIKE = re.compile(r"^[ \t]*<!--[ \t]*(?:BEGIN|END)[ \t]+GENERATED\b.*$", re.M)


def marker_problems(text: str) -> list[str]:
    """What is wrong with the markers of ``text``: unknown names, a BEGIN without its END (or the
    other way round), nested blocks, a line that looks like a marker but is not exactly one.
    Empty: all good."""
    problems: list[str] = []
    for m in _MARKER_LIKE.finditer(text):
        if not _MARKER.fullmatch(m.group(0)):
            line = text.count("\n", 0, m.start()) + 1
            problems.append(f"line {line}: not a well-formed marker: {m.group(0).strip()[:80]!r}")
    open_name: str | None = None
    for m in _MARKER.finditer(text):
        kind, name = m.groups()
        line = text.count("\n", 0, m.start()) + 1
        if name not in BLOCKS:
            problems.append(f"line {line}: unknown generated block {name!r} (known: {', '.join(BLOCKS)})")
            continue
        if kind == "BEGIN":
            if open_name is not None:
                problems.append(f"line {line}: BEGIN {name} inside the open block {open_name}")
            open_name = name
        elif open_name != name:
            problems.append(f"line {line}: END {name} without its BEGIN")
        else:
            open_name = None
    if open_name is not None:
        problems.append(f"BEGIN {open_name} without its END")
    return problems


def blocks_in(text: str) -> set[str]:
    """The names of the generated blocks ``text`` holds."""
    return {name for kind, name in _MARKER.findall(text) if kind == "BEGIN"}


def _replacer(body: str) -> Callable[[re.Match[str]], str]:
    def replace(m: re.Match[str]) -> str:
        return m.group(1) + body + m.group(2)

    return replace


def update_blocks(text: str, blocks: dict[str, str] | None = None) -> str:
    """``text`` with every generated block replaced (text without markers is left alone)."""
    for name, body in (blocks if blocks is not None else generated_blocks()).items():
        begin, end = f"<!-- BEGIN GENERATED: {name} -->", f"<!-- END GENERATED: {name} -->"
        pattern = re.compile(rf"(^{re.escape(begin)}\n).*?(^{re.escape(end)}$)", re.S | re.M)
        text = pattern.sub(_replacer(body), text)
    return text


def block_files(root: Path) -> list[Path]:
    """The files whose generated blocks are kept fresh by default: ``README.md`` and ``docs/*.md``."""
    files = [root / "README.md"] if (root / "README.md").is_file() else []
    docs = root / "docs"
    return files + (sorted(p for p in docs.glob("*.md") if p.is_file()) if docs.is_dir() else [])


def _is_repo(path: Path) -> bool:
    pyproject = path / "pyproject.toml"
    if not pyproject.is_file() or not (path / "lifecycle" / "__init__.py").is_file():
        return False
    return re.search(r'^name\s*=\s*"lifecycle"', pyproject.read_text(encoding="utf-8"), re.M) is not None


def find_root(cwd: Path | None = None) -> Path:
    """The repository root: the current directory when it is the repository, else the one the
    package was imported from (an editable install of a clone), else the current directory."""
    here = (cwd or Path.cwd()).resolve()
    if _is_repo(here):
        return here
    package_parent = Path(__file__).resolve().parents[2]
    return package_parent if _is_repo(package_parent) else here


def _shown(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def cli_main(argv: list[str]) -> int:
    """``lifecycle diagrams [--check] [--out DIR] [--doc PATH]...``."""
    parser = argparse.ArgumentParser(prog="lifecycle diagrams", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when diagrams/ or a generated block is stale")
    parser.add_argument("--out", type=Path, help="output folder (default: diagrams/ of the repository)")
    parser.add_argument(
        "--doc",
        "--readme",
        dest="docs",
        type=Path,
        action="append",
        help="a Markdown file with generated blocks (repeatable; default: README.md and docs/*.md of the repository)",
    )
    args = parser.parse_args(argv)
    root = find_root()
    out: Path = args.out or root / "diagrams"
    docs: list[Path] = args.docs if args.docs is not None else block_files(root)
    try:
        files = render_all()
    except GraphvizMissing as exc:
        if not args.check:
            print(f"lifecycle diagrams: {exc}", file=sys.stderr)
            return 1
        print(f"lifecycle diagrams --check: warning: {exc}; the SVGs are not checked", file=sys.stderr)
        files = render_all(svg=False)
    stale: list[str] = []
    for name, content in files.items():
        path = out / name
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == content:
            continue
        stale.append(_shown(path, root))
        if args.check and current is not None:
            diff = difflib.unified_diff(current.splitlines(), content.splitlines(), name, name, lineterm="", n=1)
            sys.stderr.write("\n".join(list(diff)[:40]) + "\n")
        elif not args.check:
            out.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
    expected = set(files) | {f"{stem}.svg" for stem in MACHINES}
    extra = sorted(p.name for p in out.iterdir() if p.is_file() and p.name not in expected) if out.is_dir() else []
    blocks = generated_blocks()
    broken: list[str] = []
    held: set[str] = set()
    for doc in docs:
        if not doc.is_file():
            continue
        text = doc.read_text(encoding="utf-8")
        problems = marker_problems(text)
        if problems:
            broken += [f"{_shown(doc, root)}: {p}" for p in problems]
            continue  # a file with broken markers is never rewritten
        held |= blocks_in(text)
        new = update_blocks(text, blocks)
        if new != text:
            stale.append(_shown(doc, root))
            if args.check:
                diff = difflib.unified_diff(text.splitlines(), new.splitlines(), doc.name, doc.name, lineterm="", n=1)
                sys.stderr.write("\n".join(list(diff)[:40]) + "\n")
            else:
                doc.write_text(new, encoding="utf-8")
    if args.docs is None:  # the repository's own files must hold every block
        shown = ", ".join(_shown(d, root) for d in docs) or "no README.md or docs/*.md"
        broken += [f"generated block {name!r} is in none of: {shown}" for name in BLOCKS if name not in held]
    for b in broken:
        print(f"lifecycle diagrams: {b}", file=sys.stderr)
    if args.check:
        if stale or extra or broken:
            for s in stale:
                print(f"stale: {s}", file=sys.stderr)
            for e in extra:
                print(f"not generated (remove it): {_shown(out / e, root)}", file=sys.stderr)
            if stale or extra:
                print("lifecycle diagrams --check: out of date; run `lifecycle diagrams` and commit", file=sys.stderr)
            if broken:
                print("lifecycle diagrams --check: fix the generated-block markers above", file=sys.stderr)
            return 1
        fresh = f"{len(files)} files and the generated blocks of {len(docs)} documents are fresh"
        print(f"lifecycle diagrams --check: {fresh}")
        return 0
    print(f"lifecycle diagrams: {len(files)} files in {_shown(out, root)}/, {len(stale)} updated")
    return 1 if broken else 0
