"""``lifecycle replay`` (``lifecycle/cli/replay.py``): on the real CLI's transcripts
(tests/fixtures/claude-cli-2.1.337; tests/fixtures/README.md), and its byte pre-filter against a
full parse on the lines that fool it.

Contract parity, item 10 (docs/parity/reference-behaviour.md, "Replay pre-filter"): the reference
adapter reads every transcript line leniently (invalid UTF-8 becomes U+FFFD) and key order plays no
part. Two lines used to defeat the project's pre-filter: a real answer written message-first whose
tool input holds a ``"type":"user"`` key (taken for a user line, so the limit it recovers stayed
active), and a synthetic limit with one invalid byte (counted malformed, so its record was lost).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from conftest import FIXTURES, documented_count

from lifecycle.cli.replay import find_transcript, replay_lines, replay_stream, replay_transcript

TRANSCRIPTS = sorted(FIXTURES.glob("*.transcript.jsonl"))
USAGE_LIMIT = {"usage_limit_gateway": "You've hit your 5-hour limit · resets 5pm (UTC)"}


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "lifecycle"
    return subprocess.run([str(exe), "replay", *args], capture_output=True, text=True, timeout=120, env=env)


def test_every_recorded_transcript_is_covered() -> None:
    assert len(TRANSCRIPTS) == documented_count("transcripts")


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name.removesuffix(".transcript.jsonl"))
def test_replay_restores_only_usage_limits_with_the_clis_own_text(path: Path) -> None:
    scenario = path.name.removesuffix(".transcript.jsonl")
    res = run(str(path), "--json")
    assert res.returncode == 0, res.stderr
    view = json.loads(res.stdout)
    assert view["malformed"] == 0 and view["lines"] > 10
    if scenario in USAGE_LIMIT:
        (r,) = view["records"]
        rec = r["record"]
        assert (rec["category"], rec["severity"], rec["actions"], rec["title"]) == (
            "limit",
            "error",
            [],
            USAGE_LIMIT[scenario],
        )
        assert r["carrier"] == "session_info_update"
        # the turn id is the uuid of the preceding user message, as in the live turn
        prompts = [json.loads(x) for x in path.read_text().splitlines() if '"type":"user"' in x]
        assert rec["id"] == f"{prompts[0]['uuid']}:error"
        assert view["active"] == [{"id": rec["id"], "recovery": "real_model_answer"}]
    else:
        assert view["records"] == [] and view["active"] == []


def test_the_terminal_view_is_plain_when_piped() -> None:
    res = run(str(FIXTURES / "usage_limit_gateway.transcript.jsonl"))
    assert res.returncode == 0
    assert "\x1b[" not in res.stdout
    assert "You've hit your 5-hour limit" in res.stdout and "until real_model_answer" in res.stdout
    forced = run(str(FIXTURES / "usage_limit_gateway.transcript.jsonl"), "--color", "always")
    assert "\x1b[31m" in forced.stdout


def test_legacy_replay_restores_no_typed_record() -> None:
    view = replay_transcript(FIXTURES / "usage_limit_gateway.transcript.jsonl", negotiated=False)
    assert view.records == [] and view.active == []


def test_session_lookup_under_the_claude_config_dir(tmp_path: Path) -> None:
    src = FIXTURES / "usage_limit_gateway.transcript.jsonl"
    project = tmp_path / "home" / "user" / "project"
    encoded = "-" + str(project).strip("/").replace("/", "-").replace("_", "-").replace(".", "-")
    folder = tmp_path / "cfg" / "projects" / encoded
    folder.mkdir(parents=True)
    (folder / "ee6c8547-9018-40c3-93e8-c7032354843e.jsonl").write_bytes(src.read_bytes())
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    res = run("--session", "ee6c8547-9018-40c3-93e8-c7032354843e", "--dir", str(project), "--json", env=env)
    assert res.returncode == 0, res.stderr
    assert len(json.loads(res.stdout)["records"]) == 1
    assert run("--session", "../../etc/passwd", "--json", env=env).returncode == 2
    with pytest.raises(FileNotFoundError):
        find_transcript("nope", str(project))


def test_truncated_last_line_bom_crlf_and_garbage_are_survived(tmp_path: Path) -> None:
    raw = (FIXTURES / "usage_limit_gateway.transcript.jsonl").read_bytes()
    lines = raw.splitlines()
    body = b"\xef\xbb\xbf" + b"\r\n".join(lines) + b'\r\n{"type":"user","uuid":"x","message":{"content":"tr'
    path = tmp_path / "t.jsonl"
    path.write_bytes(body + b"\n\xff\xfe\x00\n")
    view = replay_transcript(path)
    assert view.malformed == 1 and len(view.records) == 1


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    assert replay_transcript(path).records == []


def _synthetic_transcript(copies: int) -> list[bytes]:
    base = (FIXTURES / "usage_limit_gateway.transcript.jsonl").read_bytes().splitlines()
    return [line for _ in range(copies) for line in base]


def test_memory_stays_bounded_as_the_transcript_grows() -> None:
    def peak(copies: int) -> int:
        one = _synthetic_transcript(1)
        tracemalloc.start()
        view = replay_lines((line for _ in range(copies) for line in one), "s")
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert view.lines == copies * len(one) and len(view.records) == copies
        return top

    small, large = peak(5), peak(50)
    assert large < 2 * small + 512 * 1024


def _full_replay(lines: list[bytes]) -> tuple[list[dict[str, object]], list[str]]:
    """Every line parsed and every message fed to the same ledger: what the lazy replay must
    equal. A differential check of the byte pre-filter only; what the records should be is
    checked against literal expectations above and in tests/test_history.py."""
    from lifecycle import SessionLedger
    from lifecycle.history import load_history

    ledger = SessionLedger("s", negotiated=True, epoch="replay")
    records: list[dict[str, object]] = []
    for raw in lines:
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict):
            ledger.process(
                load_history([obj]), lambda out: records.append(out.record.to_wire()) if out.record else None
            )
    return records, [a.id for a in ledger.active]


LIMIT_LINE = (
    b'{"type":"assistant","uuid":"%s","isSidechain":false,"message":{"model":"<synthetic>",'
    rb'"content":[{"type":"text","text":"You\u0027ve hit your %s limit"}]}}'
)
PROMPT_LINE = b'{"type":"user","uuid":"%s","isSidechain":false,"message":{"role":"user","content":"%s"}}'
TOOL_LINE = (
    b'{"type":"user","uuid":"%s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t",'
    b'"content":"ok"}]}}'
)
META_LINE = b'{"type":"user","uuid":"%s","isMeta":true,"message":{"role":"user","content":"resume"}}'
ANSWER_LINE = (
    b'{"type":"assistant","uuid":"%s","message":{"model":"claude-opus-5-5","content":[{"type":"text","text":"ok"}]}}'
)
SIDE_LINE = (
    b'{"type":"assistant","uuid":"%s","isSidechain":true,"message":{"model":"claude-opus-5-5",'
    b'"content":[{"type":"text","text":"sub"}]}}'
)
NOISE_LINE = b'{"type":"attachment","uuid":"%s","attachment":{"type":"date"}}'


def test_the_lazy_replay_equals_feeding_every_message() -> None:
    """Random transcripts of prompts, tool results, meta turns, limits, answers, sidechains, noise."""
    import random

    rng = random.Random(7)
    kinds = [PROMPT_LINE, TOOL_LINE, META_LINE, LIMIT_LINE, ANSWER_LINE, SIDE_LINE, NOISE_LINE, b"{garbage"]
    for trial in range(300):
        lines = []
        for i in range(rng.randint(0, 25)):
            k = rng.choice(kinds)
            uuid = f"m{trial}-{i}".encode()
            if k in (PROMPT_LINE, LIMIT_LINE):
                lines.append(k % (uuid, b'say tool_result and \\"isMeta\\":true' if rng.random() < 0.3 else b"x"))
            elif k == b"{garbage":
                lines.append(k)
            else:
                lines.append(k % uuid)
        view = replay_lines(iter(lines), "s")
        want_records, want_active = _full_replay(lines)
        assert [r["record"] for r in view.records] == want_records, lines
        assert [a["id"] for a in view.active] == want_active, lines


# ------------------------------------------------------------------ the byte pre-filter

LIMIT = "You've hit your 5-hour limit · resets 4:06pm (UTC)"
WEEKLY = "You've hit your weekly limit · resets Dec 5, 1:06pm (UTC)"


def _user(uuid: str, text: str) -> bytes:
    return json.dumps({"type": "user", "uuid": uuid, "message": {"role": "user", "content": text}}).encode()


def _limit_message_first(uuid: str, text: bytes) -> bytes:
    # The CLI writes some assistant lines with ``message`` before ``type``.
    head = b'{"parentUuid":null,"message":{"model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"'
    return head + text + b'"}]},"uuid":"' + uuid.encode() + b'","type":"assistant","error":"rate_limit"}'


def _answer_message_first(uuid: str) -> bytes:
    message = {
        "model": "claude-opus-5-5",
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Done."},
            {"type": "tool_use", "id": "tu1", "name": "Task", "input": {"type": "user", "prompt": "x"}},
        ],
    }
    return json.dumps({"message": message, "uuid": uuid, "type": "assistant"}, separators=(",", ":")).encode()


def _transcript() -> list[bytes]:
    return [
        _user("u1", "first"),
        _limit_message_first("m1", LIMIT.encode() + b" \xff"),  # one invalid UTF-8 byte
        _user("u2", "second"),
        _limit_message_first("m2", WEEKLY.encode()),
        _user("u3", "third"),
        _answer_message_first("m3"),
    ]


def test_a_bad_byte_does_not_hide_a_usage_limit_and_a_nested_type_does_not_make_a_user_line() -> None:
    for view in (
        replay_lines(_transcript(), "s1"),
        replay_stream(io.BytesIO(b"\n".join(_transcript()) + b"\n"), "s1", chunk_size=7),
    ):
        assert view.malformed == 0
        assert [(r["record"]["id"], r["record"]["title"]) for r in view.records] == [
            ("u1:error", LIMIT + " \ufffd"),
            ("u2:error", WEEKLY),
        ]
        assert view.active == []  # m3 is a real answer: the latest limit recovered
        assert view.messages == 6


def test_without_the_answer_the_latest_limit_stays_active() -> None:
    view = replay_lines(_transcript()[:-1], "s1")
    assert view.active == [{"id": "u2:error", "recovery": "real_model_answer"}]


def test_a_message_first_user_line_holding_an_assistant_marker_is_still_a_user_line() -> None:
    # The nested marker says assistant; the line is a user prompt (its uuid becomes the turn id).
    nested_user = json.dumps(
        {"message": {"role": "user", "content": [{"type": "text", "text": "hi", "meta": {"type": "assistant"}}]},
         "uuid": "u9", "type": "user"},
        separators=(",", ":"),
    ).encode()
    view = replay_lines([nested_user, _limit_message_first("m9", LIMIT.encode())], "s1")
    assert [r["record"]["id"] for r in view.records] == ["u9:error"]
