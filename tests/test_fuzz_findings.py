"""The defects the hostile-input suite found (``test_fuzz.py``, ``test_secrets_everywhere.py``), each
with its minimal reproducer: every ``test_finding_*`` docstring starts with ``FINDING <n>`` and names
the change the core needs; such a test fails while its defect is in the core. :data:`FINDINGS`
lists them all, and a test checks that every finding has a reproducer and every reproducer a finding.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fuzz import harness as h
from fuzz.report import SECTIONS, install, record_delta
from hypothesis import example, given
from hypothesis import strategies as st

from lifecycle import (
    ApiRetry,
    AuthStatus,
    PromptStarted,
)
from lifecycle.claude import from_sdk_message, from_stream_json
from lifecycle.cli.replay import replay_lines
from lifecycle.history import load_history

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _counts(request: pytest.FixtureRequest, record_property: Callable[[str, object], None]) -> Iterator[None]:
    install(request.config)
    with record_delta(record_property):
        yield


@given(setup=st.sampled_from(["auth", "auth_open"]), negotiated=st.booleans(), line=h.garbled_auth_lines)
@example(setup="auth", negotiated=True, line={"type": "auth_status", "isAuthenticating": False, "error": 0})
def test_finding_garbled_auth_status_never_recovers_auth(
    setup: str, negotiated: bool, line: dict[str, Any]
) -> None:
    """FINDING 1. ``{"type":"auth_status","isAuthenticating":false,"error":0}`` (or ``false``,
    ``[]``, ``{}``) recovers the auth incident: ``claude.from_stream_json`` tests ``not
    line.get("error")``. Change: ``ok = line.get("isAuthenticating") is False and
    line.get("error") in (None, "")``."""
    h.check_garbage_never_recovers(setup, negotiated, line)


@given(
    setup=st.sampled_from(["quota_open", "retrying"]),
    negotiated=st.booleans(),
    line=h.garbled_assistant_lines(),
)
@example(setup="quota_open", negotiated=True, line={"type": "assistant", "message": {"content": "Hello"}})
@example(
    setup="quota_open",
    negotiated=True,
    line={"type": "assistant", "message": {"model": "claude-opus-5-5", "content": "Hi"}, "error": {"t": 1}},
)
def test_finding_garbled_assistant_line_never_recovers(
    setup: str, negotiated: bool, line: dict[str, Any]
) -> None:
    """FINDING 2. An assistant line without a model name (absent, ``""``, not a string) or with
    an ``error`` that is not a string counts as a *real model answer* and recovers a restored
    quota (the SDK itself rejects a missing model with MessageParseError). Changes:
    ``ledger._on_assistant``: only ``ev.model`` truthy and not ``<synthetic>`` proves an answer
    (as ``lifecycle.history.is_real_answer`` already requires for history); ``claude``: a present non-string
    ``error`` becomes an unrecognised kind (e.g. ``"unknown"``), which degrades to ``service``."""
    h.check_garbage_never_recovers(setup, negotiated, line)


def test_finding_sdk_assistant_message_without_model_recovers_quota() -> None:
    """FINDING 2, through the SDK classes: ``AssistantMessage(model=None)``."""
    from claude_agent_sdk.types import AssistantMessage, TextBlock

    probe = h.start("quota_open", True)
    before = [a.id for a in probe.ledger.active]
    ev = from_sdk_message(AssistantMessage(content=[TextBlock(text="Hello")], model=None))  # type: ignore[arg-type]
    assert ev is not None
    probe.feed(ev)
    assert [a.id for a in probe.ledger.active] == before


def test_finding_huge_retry_attempt_crashes_the_ledger() -> None:
    """FINDING 3. ``ApiRetry(attempt=10**5000)`` (an SDK ``SystemMessage`` can carry any int)
    raises ``ValueError: Exceeds the limit (4300 digits)`` out of ``feed`` from
    ``titles.retry_title``'s f-string. Change: ``titles._int`` also requires ``value <
    10**9`` (a bigger attempt counter is not a count a user can read)."""
    probe = h.start("open", True)
    probe.feed(ApiRetry(attempt=10**5000, max_retries=10**5000, error_status=529, error="overloaded"))
    (record,) = probe.records
    assert record.severity.value == "warning"


def test_finding_client_projection_accepts_a_record_next_to_version_0() -> None:
    """FINDING 4. ``ClientProjection`` shows a record next to ``version: 0`` (or -3), which
    ``wire.read_record`` rejects as malformed. Change in ``client._raw_record``: require
    ``type(version) is int and version >= AIR_VERSION`` (and count it malformed otherwise)."""
    rec = {"id": "x", "revision": 1, "category": "limit", "severity": "error", "title": "t", "actions": []}
    h._client_props(
        [
            {
                "jsonrpc": "2.0",
                "id": "t",
                "result": {"_meta": {"jetbrains": {"air": {"version": 0, "sessionFailure": rec}}}},
            }
        ]
    )


def test_finding_lifecycle_trace_drops_a_message_with_a_lone_surrogate(tmp_path: Path) -> None:
    """FINDING 5. A JSON escape such as ``"\\ud800"`` is valid JSON and decodes to a lone
    surrogate; ``trace.dumps`` writes ``ensure_ascii=False`` to a UTF-8 stdout, the write raises
    UnicodeEncodeError inside ``deliver`` and the message is silently counted as a failed
    send: ``lifecycle trace`` prints nothing for it (the in-process ``run_trace`` does). Change:
    ``trace.dumps`` uses ``ensure_ascii=True`` when the text does not encode as UTF-8 (or the
    CLI reconfigures stdout with ``errors="backslashreplace"``)."""
    lines = [
        json.dumps({"type": "adapter", "event": "initialize", "clientCapabilities": {}}),
        json.dumps({"type": "adapter", "event": "session", "sessionId": "s1"}),
        json.dumps({"type": "adapter", "event": "prompt", "turnId": "t1"}),
        '{"type":"assistant","message":{"model":"claude-opus-5-5","content":"a \\ud800 b"}}',
        json.dumps(h.STREAM_TEMPLATES["result_success"]),
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    res = subprocess.run(
        [sys.executable, "-m", "lifecycle", "trace", str(path)], cwd=ROOT, capture_output=True, timeout=60
    )
    kinds = [
        json.loads(x).get("params", {}).get("update", {}).get("sessionUpdate")
        for x in res.stdout.splitlines()
    ]
    assert "agent_message_chunk" in kinds, res.stdout


@pytest.mark.parametrize("reuse", ["prompt", "assistant"])
def test_finding_duplicate_uuids_in_a_stored_history_reuse_an_id(reuse: str) -> None:
    """FINDING 6 (corrupt input). Two stored occurrences behind the same user uuid (a copied
    message, a botched merge), or two assistant limits with the same uuid and no user message,
    after a real answer recovered the first: the second occurrence gets the first one's id
    with revision 1 again, so the client ignores it while the ledger holds it active. Change:
    ``ledger._on_history`` remembers the replay ids it published (a set, as small as the
    number of replayed failures) and falls back to ``history-error:<seq>`` for a repeat."""
    stored = (
        ["prompt", "limit", "answer", "prompt", "limit"]
        if reuse == "prompt"
        else ["limit", "answer", "limit"]
    )
    probe = h.Probe(True)
    probe.feed(load_history([h.HISTORY_TEMPLATES[k] for k in stored]))
    probe.check()


@pytest.mark.parametrize("writer", sorted(h.OTHER_WRITERS))
def test_finding_replay_prefilter_misses_a_limit_written_by_another_json_writer(writer: str) -> None:
    """FINDING 8. ``lifecycle replay``'s byte pre-filter matches ``"type": ?"..."`` and ``"model":
    ?"<synthetic>"`` literally, so the same transcript written with other (valid) JSON spacing or
    with ``<``/``>`` escaped as ``\\u003c``/``\\u003e`` (Go's encoder, ``jq``-style rewriters)
    restores no record: ``u1:error`` is lost. Change in ``replay_cmd``: whitespace-tolerant
    patterns (``"type"\\s*:\\s*"``, ``"model"\\s*:\\s*"``, ``<synthetic>`` also as ``\\u003c...``),
    and parse any line with a ``\\u`` escape the patterns reject."""
    lines = [h.OTHER_WRITERS[writer](h.HISTORY_TEMPLATES[k]) for k in ("prompt", "limit")]
    expected = h.unfiltered_replay(lines, True)
    assert [r["record"]["id"] for r in expected[0]] == ["u1:error"]
    view = replay_lines(iter(lines), "s1").to_json()
    assert (view["records"], view["active"]) == expected


@pytest.mark.parametrize(
    "text",
    ["Fable 5 requires usage credits · /model to pick another model"],  # the CLI's (and SDK's) prefix array
)
def test_finding_replay_misses_the_clis_usage_credit_limits(text: str) -> None:
    """FINDING 10 (found by check_history's oracle, which keeps its own copy of the CLI's list).
    The Claude Code CLI 2.1.332 recognises a usage limit by 12 prefixes (``fuzz.harness.
    CLI_USAGE_LIMIT_PREFIXES``); ``conditions.USAGE_LIMIT_PREFIXES`` had 11 (not "Fable 5 requires
    usage credits"), so a stored limit with such a text was replayed as prose. Fixed in
    ``conditions``; tests/test_usage_prefixes.py reads the list back from the installed CLI."""
    probe = h.Probe(True)
    probe.feed(
        load_history(
            [
                {"type": "user", "uuid": "u1", "message": {"content": "hi"}},
                {"type": "assistant", "uuid": "m1", "message": {"model": "<synthetic>", "content": text}},
            ]
        )
    )
    probe.check()
    assert [(r.id, r.title, r.category.value) for r in probe.records] == [("u1:error", text, "limit")]
    assert [a.id for a in probe.ledger.active] == ["u1:error"]


@pytest.mark.parametrize(("uuid", "shown"), [("\ud800-0", "\ufffd-0"), ("m\udfff", "m\ufffd")])
def test_finding_a_lone_surrogate_in_a_stored_uuid_crashes_the_replay(uuid: str, shown: str) -> None:
    """FINDING 11 (the nightly-size run, test_fuzz_history and test_fuzz_trace). A stored assistant
    limit without a user message, whose uuid holds a lone surrogate (valid JSON: ``"\\ud800"``),
    built ``s1:history-error:\\ud800-0``: not encodable text, so ``SessionFailure`` raised
    pydantic's ValidationError out of ``feed``. Change: ``lifecycle.ids`` replaces a lone
    surrogate in any id part with U+FFFD."""
    probe = h.Probe(True)
    limit = dict(h.HISTORY_TEMPLATES["limit"], uuid=uuid)
    probe.feed(load_history([limit]))
    probe.check()
    assert [r.id for r in probe.records] == [f"s1:history-error:{shown}"]
    json.dumps([r.to_wire() for r in probe.records]).encode("utf-8")


def _compact(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


@pytest.mark.parametrize(
    "between",
    [
        _compact({"type": "user", "uuid": "u2", "message": {"content": "partial"}})[:30],  # truncated
        _compact(
            {"type": "user", "uuid": "u3", "parent_tool_use_id": "toolu_1", "message": {"content": "x"}}
        ),
        b'["type", {"type":"user"}]',  # not an object
    ],
    ids=["truncated-user-line", "subagent-user-line", "not-an-object"],
)
def test_finding_replay_loses_the_prompt_behind_a_non_prompt_user_line(between: bytes) -> None:
    """FINDING 9 (found by test_fuzz_transcript's differential oracle). ``replay_lines`` keeps only
    the *latest* user line that looks like a prompt, as bytes; when that line turns out not to
    be one (truncated, a subagent's, not an object), the real prompt before it is gone and the
    restored limit gets ``s1:history-error:m1`` instead of the live turn's ``u1:error`` (which
    ``session/load`` and the unfiltered feed give). Change in ``replay_cmd.replay_lines``: keep
    the candidates since the last fed message and, when a limit needs its prompt, feed them
    (or parse back from the latest) until one is a prompt entry."""
    lines = [_compact(h.HISTORY_TEMPLATES["prompt"]), between, _compact(h.HISTORY_TEMPLATES["limit"])]
    expected = h.unfiltered_replay(lines, True)
    assert [r["record"]["id"] for r in expected[0]] == ["u1:error"]
    view = replay_lines(iter(lines), "s1").to_json()
    assert (view["records"], view["active"]) == expected


#: Every defect this suite found: number -> what it was (where). Each has at least one
#: ``test_finding_*`` reproducer whose docstring starts with "FINDING <number>"; a reproducer
#: fails while its defect is in the core.
FINDINGS: dict[int, str] = {
    1: "garbled auth_status recovers auth (claude.from_stream_json)",
    2: "assistant without model / with non-string error counts as a real answer (ledger, claude)",
    3: "ApiRetry with a >4300-digit attempt raises ValueError from feed (titles.retry_title)",
    4: "ClientProjection shows a record next to version 0 (client._raw_record)",
    5: "lifecycle trace drops a message holding a lone surrogate (trace.dumps)",
    6: "duplicate uuids in a stored history reuse an incident id (ledger._on_history)",
    7: "lifecycle trace echoes an unknown adapter event name (a secret) on stderr (trace)",
    8: "replay pre-filter misses limits written with other JSON spacing or \\u003c escapes (cli.replay)",
    9: "replay loses the prompt uuid behind a truncated/subagent user line (cli.replay.replay_lines)",
    10: "replay misses the CLI's usage-credit limits: the Fable prefix lacking (conditions)",
    11: "a stored uuid with a lone surrogate builds an id the wire model rejects (ids)",
}


FINDING_FILES = ("test_fuzz_findings.py", "test_secrets_everywhere.py")


def _finding_reproducers() -> dict[str, int | None]:
    """``file::test_finding_*`` -> the FINDING number its docstring starts with (None: none)."""
    out: dict[str, int | None] = {}
    for name in FINDING_FILES:
        tree = ast.parse((ROOT / "tests" / name).read_text())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_finding_"):
                m = re.match(r"FINDING (\d+)\b", ast.get_docstring(node) or "")
                out[f"{name}::{node.name}"] = int(m.group(1)) if m else None
    return out


def test_every_finding_has_a_reproducer_and_every_reproducer_a_finding() -> None:
    reproducers = _finding_reproducers()
    assert [t for t, n in reproducers.items() if n is None] == [], "a reproducer that names no FINDING"
    assert set(reproducers.values()) == set(FINDINGS)
    SECTIONS["fuzz: findings and their reproducers (they fail while the defect is in the core)"] = [
        f"{n} {FINDINGS[n]}: " + ", ".join(sorted(t for t, k in reproducers.items() if k == n)) for n in FINDINGS
    ]


def test_auth_status_success_shape_still_recovers() -> None:
    """Non-vacuity of finding 1's property: a well-formed login success does recover."""
    probe = h.start("auth", True)
    ev = from_stream_json(h.STREAM_TEMPLATES["auth_ok"])
    assert ev == AuthStatus(ok=True)
    probe.feed(ev)
    assert probe.ledger.active == ()
    probe.feed(PromptStarted(turn_id="t9"))
