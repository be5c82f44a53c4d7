"""Stateful tests: hypothesis's random search of the adapter-session machine
(tests/stateful_session.py: every rule named after something that happens to an adapter, every
invariant's docstring the spec sentence it checks).

The "ci" profile (tests/conftest.py) is derandomised, so every run explores the same examples; this
module asks it for six times the default's examples, and ``HYPOTHESIS_PROFILE=long`` runs a longer
search by hand. A failure prints the shortest step list; rule arguments are plain strings, numbers
and booleans, so it can be pasted back as is.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from hypothesis import settings
from stateful_session import AdapterSession

_PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
#: The ci profile's 200 examples take a few seconds here; 6x that is still ~1 minute on 2 cores.
_EXAMPLES = settings.default.max_examples * (6 if _PROFILE == "ci" else 1)

AdapterSession.TestCase.settings = settings(settings.default, max_examples=_EXAMPLES)
TestAdapterSession = AdapterSession.TestCase


def test_the_spec_sentences_the_invariants_quote_are_verbatim() -> None:
    """Where this machine's docstrings quote the spec (a double-quoted fragment of 25 characters or
    more), the fragment is in docs/spec/session-failure.md as written."""
    spec_path = Path(__file__).resolve().parent.parent / "docs" / "spec" / "session-failure.md"
    spec = " ".join(spec_path.read_text().split())
    docs = [getattr(v, "__doc__", None) or "" for v in vars(AdapterSession).values() if callable(v)]
    quotes = [q for d in docs for q in re.findall(r'"([^"]{25,})"', " ".join(d.split()))]
    assert len(quotes) >= 2
    assert [q for q in quotes if q not in spec] == []
