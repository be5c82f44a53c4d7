"""The developer workshop of the ``acp-lifecycle`` repository: the tools that check and measure the
product, run from a checkout as ``python -m workshop <command>`` (:mod:`workshop.cli`).

Rules
-----
* The workshop is not the product: no wheel or sdist carries it (pyproject.toml packages only
  ``lifecycle``; tests/test_packaging.py checks the wheel), and nothing in ``lifecycle`` imports it.
* It runs from the repository root (``python -m workshop`` finds it on ``sys.path`` there); the
  tests import it through pytest's ``pythonpath = ["."]`` (pyproject.toml), and a test that starts
  a ``python -m workshop`` subprocess runs it from the root.
* It imports the product only by its public module paths (``lifecycle.<module>``).

Contents
--------
==========================  ============================================================================
:mod:`workshop.explorer`    ``workshop check``: the exhaustive explorer of one session (docs/checking.md)
:mod:`workshop.mutants`     ``workshop check --mutants``: the seeded bugs the explorer must catch
:mod:`workshop.diagrams`    ``workshop diagrams``: the machines rendered into ``diagrams/`` and the docs
:mod:`workshop.bench`       ``workshop bench``: the benchmark and its data (docs/performance.md)
:mod:`workshop.cli`         the ``python -m workshop`` command line
==========================  ============================================================================

Each tool is imported only when its command runs, so this package imports nothing itself.
"""

from __future__ import annotations

__all__: list[str] = []
