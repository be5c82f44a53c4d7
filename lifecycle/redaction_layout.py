"""Redaction rules 1 and 2 of :mod:`lifecycle.redaction`: PEM blocks and stack frames, the parts of
a text recognised by its layout (a block between markers, a line of frames).

Rules: both are scanned with explicit loops that never rescan text (linear time); a line made only
of frames is removed, a frame inside other text is replaced. Standard library only.
"""

from __future__ import annotations

import re
from typing import Final

from .redaction_found import FRAME_PLACEHOLDER, PEM_PLACEHOLDER

__all__ = ["redact_frames", "redact_pem"]


# --------------------------------------------------------------------------------------------
# 1. PEM blocks
# --------------------------------------------------------------------------------------------

_PEM_BEGIN_RE: Final = re.compile(r"-----BEGIN[ A-Za-z0-9]{0,64}-----")
_PEM_END_RE: Final = re.compile(r"-----END[ A-Za-z0-9]{0,64}-----")


def redact_pem(text: str) -> str:
    if "-----BEGIN" not in text:
        return text
    out: list[str] = []
    pos = 0
    while (begin := _PEM_BEGIN_RE.search(text, pos)) is not None:
        out.append(text[pos : begin.start()])
        out.append(PEM_PLACEHOLDER)
        end = _PEM_END_RE.search(text, begin.end())
        if end is None:  # unterminated (truncated) key material: nothing after it is trusted
            return "".join(out)
        pos = end.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# --------------------------------------------------------------------------------------------
# 2. Stack frames
# --------------------------------------------------------------------------------------------

# ``at`` must start a word (or follow a JSON-escaped newline). Callee and bare locations are
# single tokens (possessive); a parenthesised location may contain spaces but no parentheses.
_NODE_FRAME_RE: Final = re.compile(
    r"""
    (?:(?<![\w$.])|(?<=\\n))
    at[ ]++
    (?:(?:async|new)[ ]++)*+
    (?:
        [^\s()]++(?:[ ]\[as[ ][^\]\s]++\])?[ ]
        \((?:(?P<ploc>[^()\n]*?:\d++:\d++)|native|<anonymous>|index[ ]\d++|unknown[ ]location)\)
      | (?P<bloc>[^\s()]+:\d+:\d+)
      | <anonymous>
    )
    """,
    re.X,
)
_FILE_LIKE_RE: Final = re.compile(r"[/\\]|\.[A-Za-z]\w*+$")
_LINE_COL_RE: Final = re.compile(r":\d++:\d++$")
_PY_FRAME_RE: Final = re.compile(
    r"""
    (?:(?<!\w)|(?<=\\n))
    File[ ]\\?"[^"\n]*+",[ ]line[ ]\d++(?:,[ ]in[ ][^\s,"\\]++)?
    (?:\\n[ ]{3,}+[^\\"\n]*+)?
    """,
    re.X,
)
_PY_TRACEBACK_RE: Final = re.compile(r"Traceback[ ]\(most[ ]recent[ ]call[ ]last\):?")


def _node_frame_repl(m: re.Match[str]) -> str:
    loc = m["ploc"] or m["bloc"]
    if loc is not None:
        path = _LINE_COL_RE.sub("", loc)
        if not _FILE_LIKE_RE.search(path):
            return m.group()  # e.g. "at 4:06:30", not a frame
        if "://" in path and not path.startswith(("file://", "webpack://", "http://", "https://")):
            return m.group()
    return FRAME_PLACEHOLDER


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def redact_frames(text: str) -> str:
    if "at " not in text and "File " not in text and "Traceback" not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    changed = False
    source_indent = -1  # >= 0 while dropping the source lines under a dropped Python "File" line
    for line in lines:
        if source_indent >= 0:
            if line.strip() and _indent(line) > source_indent and not _PY_FRAME_RE.search(line):
                changed = True
                continue
            source_indent = -1
        new = line
        py_frame = False
        if "at " in line:
            new = _NODE_FRAME_RE.sub(_node_frame_repl, new)
        if "File " in line:
            newer = _PY_FRAME_RE.sub(FRAME_PLACEHOLDER, new)
            py_frame = newer != new
            new = newer
        if "Traceback" in line:
            new = _PY_TRACEBACK_RE.sub(FRAME_PLACEHOLDER, new)
        if new != line:
            changed = True
            if not new.replace(FRAME_PLACEHOLDER, "").strip():
                if py_frame:
                    source_indent = _indent(line)
                continue
        out.append(new)
    return "\n".join(out) if changed else text
