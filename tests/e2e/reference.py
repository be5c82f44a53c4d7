"""The reference ACP adapter, ``@agentclientprotocol/claude-agent-acp`` 0.101.0, installed for the tests.

:func:`ensure_reference` installs it once per machine into a cache directory and returns the
package folder (``node <folder>/dist/index.js`` speaks ACP on stdio):

* the cache is ``$LIFECYCLE_TEST_CACHE`` or ``$XDG_CACHE_HOME/lifecycle-tests`` or
  ``~/.cache/lifecycle-tests``, and the install goes to ``reference-0.101.0/package`` in it;
* ``npm pack @agentclientprotocol/claude-agent-acp@0.101.0``, untar, ``npm install --omit=dev``
  in the unpacked folder (the package's own lockfile pins the dependencies); a marker file is
  written last, so an interrupted install is redone, never half-used;
* a file lock serialises concurrent installs; a complete install is reused.

Missing ``node``/``npm``, or a ``node`` older than :data:`MIN_NODE_MAJOR`, **fails** the test
with what to install (the project never skips). ``.ci/run`` installs them (docs/parity/README.md,
"The reference as an oracle").
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

__all__ = [
    "MIN_NODE_MAJOR",
    "PACKAGE",
    "REFERENCE_VERSION",
    "cache_dir",
    "ensure_reference",
    "node_binary",
    "reference_cli",
]

PACKAGE = "@agentclientprotocol/claude-agent-acp"
REFERENCE_VERSION = "0.101.0"
#: The package declares ``engines.node >= 22``; it has been run with Node 20.20 (NodeSource) here.
MIN_NODE_MAJOR = 20
INSTALL_HINT = (
    "the reference-oracle test needs Node.js >= 20 with npm on PATH. On Debian/Ubuntu: "
    "curl -fsSL https://deb.nodesource.com/setup_22.x | bash - && apt-get install -y nodejs "
    "(NodeSource's nodejs package includes npm)"
)
_MARKER = ".lifecycle-installed"


def cache_dir() -> Path:
    """Where the reference is installed (created on first use)."""
    explicit = os.environ.get("LIFECYCLE_TEST_CACHE")
    if explicit:
        base = Path(explicit)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / "lifecycle-tests"
    return base / f"reference-{REFERENCE_VERSION}"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise AssertionError(f"`{name}` not found: {INSTALL_HINT}")
    return path


def node_binary() -> str:
    """``node`` on PATH, checked to be new enough (AssertionError with an install hint otherwise)."""
    node = _tool("node")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=True).stdout
    match = re.match(r"v(\d+)\.", version.strip())
    if match is None or int(match.group(1)) < MIN_NODE_MAJOR:
        raise AssertionError(f"node {version.strip()!r} is too old: {INSTALL_HINT}")
    return node


def _run(args: list[str], cwd: Path, timeout: float) -> None:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        )


def ensure_reference(timeout: float = 420) -> Path:
    """The installed reference package folder (holds ``dist/index.js``), installing it if needed."""
    node_binary()
    root = cache_dir()
    package = root / "package"
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (root / _MARKER).is_file() and (package / "dist" / "index.js").is_file():
            return package
        npm = _tool("npm")
        shutil.rmtree(package, ignore_errors=True)
        with tempfile.TemporaryDirectory(dir=root) as tmp:
            work = Path(tmp)
            _run([npm, "pack", f"{PACKAGE}@{REFERENCE_VERSION}", "--silent"], work, timeout)
            (tarball,) = work.glob("*.tgz")
            with tarfile.open(tarball) as tar:
                tar.extractall(work, filter="data")
            (work / "package").rename(package)
        _run([npm, "install", "--omit=dev", "--no-audit", "--no-fund", "--loglevel=error"], package, timeout)
        if not (package / "dist" / "index.js").is_file():
            raise AssertionError(f"{PACKAGE}@{REFERENCE_VERSION} installed without dist/index.js in {package}")
        (root / _MARKER).write_text(f"{PACKAGE}@{REFERENCE_VERSION}\n")
        return package


def reference_cli(package: Path) -> Path:
    """The Claude Code CLI the reference's SDK bundles (2.1.318 for 0.101.0), for the record."""
    (cli,) = package.glob("node_modules/@anthropic-ai/claude-agent-sdk-*/claude")
    return cli
