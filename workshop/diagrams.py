"""``workshop diagrams``: render the machines and the conditions table for review.

Everything is rendered from the python-statemachine classes themselves
(:class:`lifecycle.incident.IncidentMachine`, :class:`lifecycle.session_flow.SessionFlow`) and from
:data:`lifecycle.conditions.CONDITIONS`: Mermaid (``.md``, shown inline on GitHub), Graphviz DOT
(``.dot``) and SVG (``dot -Tsvg``, from Debian's ``graphviz``). A transition is labelled
``event [guard] / actions``: its guards (named after the recovery policies; the tables also give
each recovery transition's policy) and the actions it declares (for ``SessionFlow``, the ledger's
effects). The transitions between the same two states are one edge whose label lists them, one
per line; a compound state (``SessionFlow.in_turn``) is drawn around its children (Mermaid
``state X { ... }``, a DOT cluster) and a transition declared on it is drawn once, from it.
Output is deterministic: declaration order, no timestamps, no paths, and the Graphviz version
comment is dropped from the SVG.

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
from typing import NamedTuple

from statemachine import State, StateMachine

from lifecycle.answers import RECOVERY_EVENTS
from lifecycle.conditions import render_conditions_markdown
from lifecycle.families import render_families_markdown
from lifecycle.incident import IncidentMachine
from lifecycle.session_flow import SessionFlow

__all__ = [
    "BLOCKS",
    "EXAMPLE",
    "MACHINES",
    "Transition",
    "block_files",
    "blocks_in",
    "cli_main",
    "edges",
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
        "The machine that decides the prompt turn. `SessionLedger` classifies each input into one of "
        "its events, asks it (its `MachineAnswers` asks a real instance once per state and event) and "
        "performs the effects the transition's actions name, in order; an event with no transition "
        "from the current state changes nothing. A transition declared on `in_turn` applies in each of "
        "its states; entering `in_turn` enters `running`. `workshop check` checks that the ledger's "
        "turn moves exactly as declared (`session_flow_is_the_truth`).",
    ),
}

#: The generated blocks, by marker name, in the order :func:`generated_blocks` renders them.
BLOCKS = ("example-trace", "incident-diagram", "session-flow-diagram", "conditions", "families")

#: The bundled example the ``example-trace`` block shows (``lifecycle trace --example NAME``).
EXAMPLE = "rate-limit-then-recovery"

#: recovery event -> the policy it ends (``RECOVERY_EVENTS`` inverted)
_POLICY_OF_EVENT = {event: policy.value for policy, event in RECOVERY_EVENTS.items()}


class Transition(NamedTuple):
    """One declared transition of one event: its source and target state ids, the guards that
    must hold, and the actions it runs (for ``SessionFlow``, the names of the ledger's effects)."""

    source: str
    event: str
    target: str
    guards: tuple[str, ...]
    actions: tuple[str, ...]

    @property
    def label(self) -> str:
        """``event [guard and guard] / action, action``."""
        text = self.event + (f" [{' and '.join(self.guards)}]" if self.guards else "")
        return text + (f" / {', '.join(self.actions)}" if self.actions else "")


def transitions(cls: type[StateMachine]) -> Iterator[Transition]:
    """Every declared transition (one per event), in declaration order, nested states included.

    A transition declared on a compound state is listed once, from the compound; its actions are
    the callbacks its declaration names (python-statemachine's naming conventions, such as
    ``on_<event>``, are not declarations and are left out).
    """
    for state in cls.states_map.values():
        for t in state.transitions:
            guards = tuple(str(c) for c in t.cond)
            actions = tuple(str(a) for a in t.on if not a.is_convention)
            for event in t.events:
                yield Transition(state.id, str(event.id), t.target.id, guards, actions)


def edges(cls: type[StateMachine]) -> dict[tuple[str, str], list[Transition]]:
    """The transitions grouped by ``(source, target)``: one drawn edge each, in the order of each
    pair's first declaration, its transitions in declaration order."""
    out: dict[tuple[str, str], list[Transition]] = {}
    for t in transitions(cls):
        out.setdefault((t.source, t.target), []).append(t)
    return out


def _compounds(cls: type[StateMachine]) -> list[State]:
    """The compound states, in declaration order."""
    return [s for s in cls.states_map.values() if s.states]


def _initial_child(state: State) -> State:
    return next(s for s in state.states if s.initial)


def _inside(cls: type[StateMachine], state_id: str) -> str | None:
    """The id of the compound state that directly holds ``state_id`` (None: top level)."""
    parent = cls.states_map[state_id].parent
    return parent.id if parent is not None else None


def _policy(event: str, guards: tuple[str, ...]) -> str | None:
    """The recovery policy a guarded recovery transition belongs to (None for the others)."""
    if any(g.startswith("recovers_on_") for g in guards):
        return _POLICY_OF_EVENT.get(event)
    return None


def render_mermaid(cls: type[StateMachine]) -> str:
    """A Mermaid ``stateDiagram-v2`` of ``cls``: compound states as ``state X { ... }`` blocks,
    one edge per pair of states whose label lists its transitions, one per line (``<br/>``)."""
    lines = ["stateDiagram-v2", "    direction LR"]
    initial = next(s.id for s in cls.states if s.initial)
    lines.append(f"    [*] --> {initial}")
    grouped = edges(cls)

    def edge(key: tuple[str, str], indent: str) -> str:
        return f"{indent}{key[0]} --> {key[1]} : {'<br/>'.join(t.label for t in grouped[key])}"

    for compound in _compounds(cls):
        if compound.parent is not None:
            continue  # drawn inside its parent's block
        lines.extend(_mermaid_block(cls, compound, grouped, edge, "    "))
    for key in grouped:
        if _inside(cls, key[0]) is None or _inside(cls, key[0]) != _inside(cls, key[1]):
            lines.append(edge(key, "    "))
    for s in cls.states_map.values():
        if s.final:
            lines.append(f"    {s.id} --> [*]")
    return "\n".join(lines) + "\n"


def _mermaid_block(
    cls: type[StateMachine],
    compound: State,
    grouped: dict[tuple[str, str], list[Transition]],
    edge: Callable[[tuple[str, str], str], str],
    indent: str,
) -> list[str]:
    inner = indent + "    "
    lines = [f"{indent}state {compound.id} {{", f"{inner}[*] --> {_initial_child(compound).id}"]
    for child in compound.states:
        if child.states:
            lines.extend(_mermaid_block(cls, child, grouped, edge, inner))
    for key in grouped:
        if _inside(cls, key[0]) == compound.id and _inside(cls, key[1]) == compound.id:
            lines.append(edge(key, inner))
    lines.append(f"{indent}}}")
    return lines


def _table(cls: type[StateMachine]) -> str:
    declared = list(transitions(cls))
    with_actions = any(t.actions for t in declared)
    head = "| state | event | guard (recovery policy) |" + (" effects (actions) |" if with_actions else "")
    rows = [head + " target |", "| --- | --- | --- |" + (" --- |" if with_actions else "") + " --- |"]
    for t in declared:
        guard = ", ".join(f"`{g}`" for g in t.guards) or "-"
        policy = _policy(t.event, t.guards)
        if policy:
            guard += f" (`{policy}`)"
        source = f"`{t.source}`"
        state = cls.states_map[t.source]
        if state.states:
            source += " (any of " + ", ".join(f"`{c.id}`" for c in state.states) + ")"
        target = f"`{t.target}`"
        if cls.states_map[t.target].states:
            target += f" (enters `{_initial_child(cls.states_map[t.target]).id}`)"
        effects = (" " + (", ".join(f"`{a}`" for a in t.actions) or "-") + " |") if with_actions else ""
        rows.append(f"| {source} | `{t.event}` | {guard} |{effects} {target} |")
    return "\n".join(rows) + "\n"


def render_markdown(stem: str) -> str:
    """The ``diagrams/<stem>.md`` page: Mermaid diagram and transition table."""
    cls, title, about = MACHINES[stem]
    doc = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())  # its first paragraph
    return (
        f"# {title}\n\n"
        f"Generated by `python -m workshop diagrams` from `{cls.__module__}.{cls.__name__}` ({doc}). Do not edit.\n\n"
        f"{about}\n\n"
        f"```mermaid\n{render_mermaid(cls)}```\n\n{_table(cls)}"
    )


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _dot_lines(lines: list[str]) -> str:
    """A DOT label of several left-aligned lines (``\\l`` ends each line)."""
    return '"' + "".join(_quote(line)[1:-1] + "\\l" for line in lines) + '"'


def render_dot(cls: type[StateMachine]) -> str:
    """Graphviz DOT of ``cls``: a compound state is a cluster (``subgraph cluster_<id>``) with its
    own start point, where an edge into it ends; an edge out of it is clipped at the cluster's
    border (``ltail``); one edge per pair of states, its transitions one per line (``\\l``)."""
    out = [
        f"digraph {_quote(cls.__name__)} {{",
        "    rankdir=LR;",
        "    compound=true;",
        "    nodesep=0.5;",
        "    ranksep=0.9;",
        '    node [shape=box, style="rounded", fontname="Helvetica"];',
        '    edge [fontname="Helvetica", fontsize=10];',
        '    "__start" [shape=point, label=""];',
    ]
    for s in cls.states:
        out.extend(_dot_state(s, "    "))
    initial = next(s for s in cls.states if s.initial)
    out.append(f'    "__start" -> {_node(initial)};')
    order = {state_id: i for i, state_id in enumerate(cls.states_map)}
    for (source, target), group in edges(cls).items():
        tail, head = cls.states_map[source], cls.states_map[target]
        label = _dot_lines([t.label for t in group])
        if order[target] < order[source] and not _contains(tail, head):
            # A way back (to a state declared earlier): drawn reversed, so that the layout
            # follows declaration order and the way back does not pull its target forward.
            out.append(f"    {_node(head)} -> {_node(tail)} [label={label}, dir=back{_clip('lhead', tail)}];")
        else:
            out.append(f"    {_node(tail)} -> {_node(head)} [label={label}{_clip('ltail', tail)}];")
    out.append("}")
    return "\n".join(out) + "\n"


def _contains(outer: State, inner: State) -> bool:
    """Whether ``inner`` is ``outer`` or one of its descendants."""
    node: State | None = inner
    while node is not None:
        if node is outer:
            return True
        node = node.parent
    return False


def _node(state: State) -> str:
    """The DOT node an edge from or to ``state`` is drawn at: a compound's own start point (an
    edge into the compound enters it there; one out of it is clipped at its border)."""
    return _quote(f"__start_{state.id}" if state.states else state.id)


def _clip(attr: str, state: State) -> str:
    return f", {attr}={_quote('cluster_' + state.id)}" if state.states else ""


def _dot_state(state: State, indent: str) -> list[str]:
    if not state.states:
        shape = ", peripheries=2" if state.final else ""
        return [f"{indent}{_quote(state.id)} [label={_quote(state.id)}{shape}];"]
    inner = indent + "    "
    start = _quote(f"__start_{state.id}")
    lines = [
        f"{indent}subgraph {_quote('cluster_' + state.id)} {{",
        f'{inner}label={_quote(state.id)}; style="rounded"; fontname="Helvetica";',
        f'{inner}{start} [shape=point, label=""];',
    ]
    for child in state.states:
        lines.extend(_dot_state(child, inner))
    lines.append(f"{inner}{start} -> {_quote(_initial_child(state).id)};")
    lines.append(f"{indent}}}")
    return lines


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
        "# Claude conditions\n\nGenerated by `python -m workshop diagrams` from `lifecycle.conditions.CONDITIONS`. "
        "Do not edit.\n\n" + render_conditions_markdown()
    )
    return files


def render_example(name: str = EXAMPLE) -> str:
    """What ``lifecycle trace --example NAME`` prints, run in process through the command itself.

    Raises:
        RuntimeError: the command failed or reported something on stderr (the example is broken).
    """
    from lifecycle.cli import main

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
        "families": render_families_markdown(),
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
    return re.search(r'^name\s*=\s*"acp-lifecycle"', pyproject.read_text(encoding="utf-8"), re.M) is not None


def find_root(cwd: Path | None = None) -> Path:
    """The repository root: the current directory when it is the repository, else the one the
    package was imported from (an editable install of a clone), else the current directory."""
    here = (cwd or Path.cwd()).resolve()
    if _is_repo(here):
        return here
    package_parent = Path(__file__).resolve().parents[1]
    return package_parent if _is_repo(package_parent) else here


def _shown(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def cli_main(argv: list[str]) -> int:
    """``workshop diagrams [--check] [--out DIR] [--doc PATH]...``."""
    parser = argparse.ArgumentParser(prog="python -m workshop diagrams", description=(__doc__ or "").split("\n\n")[0])
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
            print(f"workshop diagrams: {exc}", file=sys.stderr)
            return 1
        print(f"workshop diagrams --check: warning: {exc}; the SVGs are not checked", file=sys.stderr)
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
        print(f"workshop diagrams: {b}", file=sys.stderr)
    if args.check:
        if stale or extra or broken:
            for s in stale:
                print(f"stale: {s}", file=sys.stderr)
            for e in extra:
                print(f"not generated (remove it): {_shown(out / e, root)}", file=sys.stderr)
            if stale or extra:
                fix = "run `python -m workshop diagrams` and commit"
                print(f"workshop diagrams --check: out of date; {fix}", file=sys.stderr)
            if broken:
                print("workshop diagrams --check: fix the generated-block markers above", file=sys.stderr)
            return 1
        fresh = f"{len(files)} files and the generated blocks of {len(docs)} documents are fresh"
        print(f"workshop diagrams --check: {fresh}")
        return 0
    print(f"workshop diagrams: {len(files)} files in {_shown(out, root)}/, {len(stale)} updated")
    return 1 if broken else 0
