"""Re-record section A of the recorded CLI runs (tests/fixtures/README.md) in the vendored file format.

Not a test: the bundled Claude Code CLI against the project's own fake API (``tests/e2e/fakeapi.py``,
127.0.0.1 only), one fresh API and isolated run per scenario (``claude_cli.run_query``), with the
README's scrubbing (machine paths only). From the repository root::

    RERECORD_DIR=tests/fixtures/claude-cli-<version> .venv/bin/python tests/e2e/rerecord.py [scenario ...]

Writes ``$RERECORD_DIR`` (default ``/tmp/claude-cli-rerecord``); all of ``fakeapi.SCENARIOS`` when
no scenario is named. ``tests/fixtures/claude-cli-2.1.337/`` was made with it (its README).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for ``e2e``

import claude_agent_sdk

from e2e.claude_cli import RECORDED_OPTIONS, run_query, sanitize_path
from e2e.fakeapi import SCENARIOS

WITH_SESSION_FILES = {"http429", "usage_limit_gateway", "max_tokens", "success"}
HEADERS = ("anthropic-beta", "anthropic-version", "user-agent", "x-app")
RAISED_ATTRS = ("exit_code", "subtype", "errors", "result", "api_error_status", "terminal_reason", "session_id")


def dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=True, default=str)


def record(name: str, out: Path) -> None:
    """Run scenario ``name`` once and write its files into ``out``."""
    run = run_query(name, **RECORDED_OPTIONS.get(name, {}))  # a fresh fake API on 127.0.0.1
    subs = [  # the README's scrubbing: machine paths only
        (str(run.config_dir), "$HOME/.claude"),
        (sanitize_path(str(run.cwd)), "-home-user-project"),
        (str(run.cwd), "/home/user/project"),
        (str(run.root / "tmp"), "$TMPDIR"),
        (str(run.home), "$HOME"),
    ]

    def write(suffix: str, lines: list[str]) -> None:
        text = "".join(line + "\n" for line in lines)
        for old, new in subs:
            text = text.replace(old, new)
        (out / f"{name}.{suffix}").write_text(text)

    sdk = [dump({"class": type(m).__name__, "fields": dataclasses.asdict(m)}) for m in run.messages]
    if (e := run.exception) is not None:
        cause = e.__cause__ or e.__context__
        raised: dict[str, Any] = {
            "raised": type(e).__name__,
            "message": str(e),
            "attrs": {k: getattr(e, k, None) for k in RAISED_ATTRS},
            "cause": f"{type(cause).__name__}: {cause}" if cause else None,
        }
        sdk.append(dump(raised))
    write("sdk.jsonl", sdk)
    requests = [
        dump({
            "method": r.method, "path": r.path, "model": r.model, "stream": r.stream, "max_tokens": r.max_tokens,
            "body_bytes": r.body_bytes, "n": r.n, "mode": name, "t": round(r.t, 3),
            "headers": {
                k: v for k, v in r.headers.items() if k.lower() in HEADERS or k.lower().startswith("x-stainless-")
            },
        })
        for r in run.requests
    ]  # fmt: skip
    write("requests.jsonl", requests)
    if run.transcript_path is not None:
        write("transcript.jsonl", run.transcript_path.read_text().splitlines())
    if name in WITH_SESSION_FILES:
        os.environ["CLAUDE_CONFIG_DIR"] = str(run.config_dir)  # where this run's CLI wrote its sessions
        messages = claude_agent_sdk.get_session_messages(run.session_id, directory=str(run.cwd))
        write("session_messages.jsonl", [dump({"class": "SessionMessage", "fields": dataclasses.asdict(m)}) for m in messages])  # noqa: E501
        info = claude_agent_sdk.get_session_info(run.session_id, directory=str(run.cwd))
        assert info is not None, name
        write("session_info.json", [json.dumps({"class": "SDKSessionInfo", "fields": dataclasses.asdict(info)}, indent=1)])  # noqa: E501
    print(name, "->", len(run.messages), "messages,", len(run.requests), "requests", file=sys.stderr)
    run.cleanup()


def main(names: list[str]) -> None:
    out = Path(os.environ.get("RERECORD_DIR", "/tmp/claude-cli-rerecord"))
    out.mkdir(parents=True, exist_ok=True)
    for name in names or sorted(SCENARIOS):
        record(name, out)


if __name__ == "__main__":
    main(sys.argv[1:])
