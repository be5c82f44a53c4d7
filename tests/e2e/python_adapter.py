"""A third-party Python ACP adapter, ``claude-code-acp`` 0.5.1 from PyPI, installed for the tests.

:func:`ensure_python_adapter` installs it once per machine into its own virtualenv and returns
the adapter's console script (``claude-code-acp``: ``claude_code_acp:main``, ACP on stdio):

* the virtualenv is ``claude-code-acp-0.5.1/venv`` in the tests' cache folder, beside the
  reference adapter (``reference.py``'s ``cache_dir().parent``: ``$LIFECYCLE_TEST_CACHE`` or
  ``$XDG_CACHE_HOME/lifecycle-tests`` or ``~/.cache/lifecycle-tests``);
* its own venv because the adapter imports only with agent-client-protocol 0.10.x (the
  project's ``acp`` extra is 0.12); the packages are pinned (:data:`REQUIREMENTS`);
* ``--no-binary claude-agent-sdk``: the SDK's PyPI wheels bundle a Claude Code binary, which the
  SDK runs before anything else, and the adapter passes no ``cli_path`` (it reads neither
  ``CLAUDE_CODE_EXECUTABLE`` nor any other variable for it); the SDK built from its source
  distribution bundles none and runs ``claude`` from ``PATH``, where the conformance kit puts
  its fake CLI's launcher (docs/conformance-kit.md, "claude-code-acp 0.5.1");
* a marker file is written last, so an interrupted install is redone, never half-used; a file
  lock serialises concurrent installs; a complete install is reused.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
from pathlib import Path

from .reference import cache_dir

__all__ = ["ADAPTER_VERSION", "REQUIREMENTS", "ensure_python_adapter", "python_adapter_root"]

ADAPTER_VERSION = "0.5.1"
#: The adapter and the two SDKs it imports, pinned: ACP 0.10 (it does not import with 0.12),
#: claude-agent-sdk as the project's own ``claude`` extra pins it, mcp 1.x as the project does.
REQUIREMENTS = (
    f"claude-code-acp=={ADAPTER_VERSION}",
    "agent-client-protocol==0.10.1",
    "claude-agent-sdk==0.2.189",
    "mcp>=1.23,<2",
)
_MARKER = ".lifecycle-installed"


def python_adapter_root() -> Path:
    """The adapter's folder in the tests' cache (its virtualenv is ``venv`` in it)."""
    return cache_dir().parent / f"claude-code-acp-{ADAPTER_VERSION}"


def _run(args: list[str], timeout: float) -> None:
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        )


def ensure_python_adapter(timeout: float = 420) -> Path:
    """The installed ``claude-code-acp`` console script, installing it if needed."""
    root = python_adapter_root()
    venv = root / "venv"
    script = venv / "bin" / "claude-code-acp"
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (root / _MARKER).is_file() and script.is_file():
            return script
        shutil.rmtree(venv, ignore_errors=True)
        (root / _MARKER).unlink(missing_ok=True)
        _run([sys.executable, "-m", "venv", str(venv)], timeout)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        _run([*pip, "--no-binary", "claude-agent-sdk", *REQUIREMENTS], timeout)
        bundled = list(venv.glob("lib/python*/site-packages/claude_agent_sdk/_bundled/claude"))
        if not script.is_file() or bundled:
            raise AssertionError(f"claude-code-acp {ADAPTER_VERSION} installed wrongly in {venv}: {bundled or script}")
        (root / _MARKER).write_text("\n".join(REQUIREMENTS) + "\n")
        return script
