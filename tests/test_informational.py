"""``system/informational``: Claude Code's free-form notices reach a client as the reference adapter
sends them (docs/parity/reference-behaviour.md, section 2; dist/acp-agent.js "informational").

A client that declared ACP session notices gets a ``notice`` (``warning`` for level ``warning``,
else ``info``; never for level ``info``; one per tool use); every other client, capable or legacy,
gets a bold-label transcript line (plain for ``info``) with ``_meta.claudeCode``. Never a record.
"""

from __future__ import annotations

from typing import Any

from lifecycle import Informational, SessionLedger
from lifecycle.claude import from_stream_json

SAFEGUARD = "Opus 5.5's safeguards stopped the response above · continuing once with that noted"


def _sent(*events: Informational, notices: bool = False, negotiated: bool = True) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    ledger = SessionLedger("s1", negotiated=negotiated, epoch="e1", notices=notices)
    for ev in events:
        ledger.process(ev, lambda m: out.append(m.to_jsonrpc()["params"]["update"]))
    return out


def test_the_claude_edge_reads_the_line() -> None:
    line = {"type": "system", "subtype": "informational", "content": SAFEGUARD, "level": "notice"}
    assert from_stream_json(line) == Informational(content=SAFEGUARD, level="notice")


def test_a_notices_client_gets_a_notice_and_no_record() -> None:
    assert _sent(Informational(content=SAFEGUARD, level="notice"), notices=True) == [
        {"sessionUpdate": "notice", "severity": "info", "title": SAFEGUARD}
    ]
    warning = Informational(content="**Hook** blocked the turn\nbecause `lint` failed", level="warning")
    hook = {"title": "Hook blocked the turn", "description": "because lint failed"}
    assert _sent(warning, notices=True) == [{"sessionUpdate": "notice", "severity": "warning", **hook}]
    long = {"title": "Claude reported a warning", "description": "x" * 300}
    assert _sent(Informational(content="x" * 300, level="warning"), notices=True) == [
        {"sessionUpdate": "notice", "severity": "warning", **long}
    ]
    assert _sent(Informational(content="transcript-only", level="info"), notices=True) == []


def test_a_tools_repeated_notice_is_sent_once() -> None:
    again = Informational(content="blocked", level="warning", tool_use_id="tu1")
    other = Informational(content="blocked", level="warning", tool_use_id="tu2")
    assert len(_sent(again, again, other, notices=True)) == 2


def test_every_other_client_gets_a_bold_label_line() -> None:
    for negotiated in (True, False):
        assert _sent(Informational(content=SAFEGUARD, level="notice"), negotiated=negotiated) == [
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": f"**Notice:** {SAFEGUARD}"},
                "_meta": {"claudeCode": {"kind": "informational", "level": "notice"}},
            }
        ]
    assert _sent(Informational(content="just so you know", level="info"))[0]["content"]["text"] == "just so you know"


def test_a_notice_without_a_level_is_a_notice() -> None:
    """Project decision (the reference reads ``message.level`` as given): a missing level is
    ``notice``, the SDK's default, for either kind of client."""
    assert _sent(Informational(content="Hello"), notices=True) == [
        {"sessionUpdate": "notice", "severity": "info", "title": "Hello"}
    ]
    assert _sent(Informational(content="Hello")) == [
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "**Notice:** Hello"},
            "_meta": {"claudeCode": {"kind": "informational", "level": "notice"}},
        }
    ]


def test_a_long_notice_has_the_notice_fallback_title() -> None:
    assert _sent(Informational(content="x" * 300, level="suggestion"), notices=True) == [
        {"sessionUpdate": "notice", "severity": "info", "title": "Claude reported a notice", "description": "x" * 300}
    ]


def test_the_tools_already_noticed_are_the_last_64() -> None:
    """At most 64 tool uses are remembered: the oldest is forgotten first (its repeat is a notice
    again), the other 64 still are."""
    first = [Informational(content="blocked", level="warning", tool_use_id=f"tu{i}") for i in range(65)]
    repeats = [Informational(content="again", level="warning", tool_use_id=t) for t in ("tu1", "tu64", "tu0")]
    sent = _sent(*first, *repeats, notices=True)
    assert len(sent) == 66 and sent[-1] == {"sessionUpdate": "notice", "severity": "warning", "title": "again"}
