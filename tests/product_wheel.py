"""The product wheel, built from this checkout: what ``test_packaging.py`` inspects and
``e2e/test_installed_agent.py`` installs into a fresh venv.

Rules: not a test module (it imports no ``test_*`` module); it builds from a copy of the package
sources (``pyproject.toml``, ``README.md``, ``lifecycle/``, and ``workshop/`` beside it, which the
wheel must leave out) so the checkout is never written to;
its one assertion is the wheel's file name (issue 33's distribution name and version).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build_wheel(work: Path) -> Path:
    """The wheel ``pip wheel --no-deps .`` builds from a copy of this checkout's package sources
    (``work/src``), written to ``work`` (``tests/e2e/test_installed_agent.py`` installs it)."""
    src = work / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for package in ("lifecycle", "workshop"):
        shutil.copytree(ROOT / package, src / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    res = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q", ".", "-w", str(work)],
        cwd=src, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    (built,) = work.glob("*.whl")
    assert built.name == "acp_lifecycle-0.1.0-py3-none-any.whl"
    return built
