"""Issue 32, points 1 and 3: a usage-limit window is an incident of its own (``SessionLedger`` on
:class:`lifecycle.events.RateLimitWindow`).

Expected values are literals from the issue ("category ``limit``, severity ``warning``, no
actions, carrier ``session_info_update``, one id per window"), the spec ("Session-scoped incidents
use an adapter-session epoch plus an incident sequence"; "a producer may publish a higher revision
only when it has a real new user-facing status to show"; recovery publishes no tombstone) and the
title wording documented in docs/acp-agent.md ("Rate-limit windows"). Reset times are the ones
Claude Code 2.1.332 printed against the fake API (tests/test_rate_limit_event.py): 1796421723 is
2026-12-04 22:02:03 UTC, a Friday; 1796850123 is 2026-12-09 21:02:03 UTC, a Wednesday.
"""

from __future__ import annotations

from typing import Any

import pytest

from lifecycle.conditions import Recovery
from lifecycle.events import (
    Assistant,
    Cancelled,
    Outbound,
    PromptErrorOut,
    PromptResponseOut,
    PromptStarted,
    RateLimitWindow,
    Result,
    RuntimeReplaced,
    SessionUpdateOut,
)
from lifecycle.ledger import SessionLedger
from lifecycle.titles import window_title

FIVE_HOUR_RESET = 1796421723
WEEKLY_RESET = 1796850123


class Recorder:
    def __init__(self) -> None:
        self.transitions: list[tuple[str, str, str, str]] = []
        self.notes: list[str] = []

    def transition(
        self, *, session_id: str, incident_id: str, source: str, target: str, event: str, revision: int
    ) -> None:
        self.transitions.append((incident_id, source, target, event))

    def note(self, what: str, **fields: object) -> None:
        self.notes.append(what)


def five_hour(status: str, share: float | None = 0.9, resets_at: int | None = FIVE_HOUR_RESET) -> RateLimitWindow:
    return RateLimitWindow(window="five_hour", status=status, utilization=share, resets_at=resets_at)


def weekly(share: float = 0.8) -> RateLimitWindow:
    return RateLimitWindow(window="seven_day", status="allowed_warning", utilization=share, resets_at=WEEKLY_RESET)


class Session:
    def __init__(self, *, negotiated: bool = True, notices: bool = False, **kw: Any) -> None:
        self.recorder = Recorder()
        self.ledger = SessionLedger(
            "s1", negotiated=negotiated, epoch="e1", observer=self.recorder, notices=notices, **kw
        )

    def feed(self, *events: Any, fail: bool = False) -> list[Outbound]:
        sent: list[Outbound] = []
        for ev in events:
            self.ledger.feed(ev)
            while (out := self.ledger.next_outbound()) is not None:
                sent.append(out)
                if fail:
                    self.ledger.delivery_failed()
                else:
                    self.ledger.delivered()
        return sent

    def records(self, sent: list[Outbound]) -> list[tuple[str, int, str]]:
        return [(o.record.id, o.record.revision, o.record.title) for o in sent if o.record is not None]


T90 = "You've used 90% of your 5-hour limit · resets 10:02 pm (UTC)"
T95 = "You've used 95% of your 5-hour limit · resets 10:02 pm (UTC)"


def test_a_warning_is_a_session_scoped_limit_warning_on_session_info_update() -> None:
    s = Session()
    (out,) = s.feed(five_hour("allowed_warning"))
    assert isinstance(out, SessionUpdateOut) and out.update == {"sessionUpdate": "session_info_update"}
    assert out.record is not None
    assert out.record.to_wire() == {
        "id": "s1:e1:1",
        "revision": 1,
        "category": "limit",
        "severity": "warning",
        "title": T90,
        "actions": [],
    }
    (active,) = s.ledger.active
    assert (active.id, active.state, active.recovery) == ("s1:e1:1", "warned", Recovery.WINDOW_RESET)
    assert s.recorder.transitions == [("s1:e1:1", "pending", "warned", "window_warn")]


def test_a_higher_share_is_a_higher_revision_and_an_identical_repeat_publishes_nothing() -> None:
    s = Session()
    sent = s.feed(
        five_hour("allowed_warning", 0.9), five_hour("allowed_warning", 0.9), five_hour("allowed_warning", 0.95)
    )
    assert s.records(sent) == [("s1:e1:1", 1, T90), ("s1:e1:1", 2, T95)]
    assert "rate_limit_window_repeat_not_shown" in s.recorder.notes


def test_a_share_that_rounds_the_same_is_no_new_status() -> None:
    s = Session()
    assert s.records(s.feed(five_hour("allowed_warning", 0.9), five_hour("allowed_warning", 0.901))) == [
        ("s1:e1:1", 1, T90)
    ]


def test_a_lower_share_without_a_reset_is_a_new_status_of_the_same_entry() -> None:
    s = Session()
    sent = s.feed(five_hour("allowed_warning", 0.95), five_hour("allowed_warning", 0.9))
    assert s.records(sent) == [("s1:e1:1", 1, T95), ("s1:e1:1", 2, T90)]


def test_two_windows_are_two_entries() -> None:
    s = Session()
    sent = s.feed(five_hour("allowed_warning"), weekly(), five_hour("allowed_warning", 0.95))
    assert s.records(sent) == [
        ("s1:e1:1", 1, T90),
        ("s1:e1:2", 1, "You've used 80% of your weekly limit · resets Wed 9:02 pm (UTC)"),
        ("s1:e1:1", 2, T95),
    ]
    assert [a.id for a in s.ledger.active] == ["s1:e1:1", "s1:e1:2"]


def test_allowed_ends_it_silently_and_the_next_warning_is_a_new_id() -> None:
    s = Session()
    s.feed(five_hour("allowed_warning"), weekly())
    assert s.feed(five_hour("allowed", None)) == []  # no tombstone
    assert [a.id for a in s.ledger.active] == ["s1:e1:2"]  # the weekly window is another entry
    assert ("s1:e1:1", "warned", "historical", "window_reset") in s.recorder.transitions
    assert s.records(s.feed(five_hour("allowed_warning"))) == [("s1:e1:3", 1, T90)]


def test_allowed_with_nothing_shown_publishes_nothing() -> None:
    s = Session()
    assert s.feed(five_hour("allowed", 0.1)) == [] and s.ledger.active == ()


def test_a_later_reset_time_ends_the_old_period_and_its_warning_is_a_new_id() -> None:
    s = Session()
    s.feed(five_hour("allowed_warning", 0.9))
    later = FIVE_HOUR_RESET + 5 * 3600  # 2026-12-05 03:02:03 UTC
    sent = s.feed(five_hour("allowed_warning", 0.9, later))
    assert s.records(sent) == [("s1:e1:2", 1, "You've used 90% of your 5-hour limit · resets 3:02 am (UTC)")]
    assert [a.id for a in s.ledger.active] == ["s1:e1:2"]
    assert ("s1:e1:1", "warned", "historical", "window_reset") in s.recorder.transitions


def test_a_later_reset_with_allowed_ends_it_and_publishes_nothing() -> None:
    s = Session()
    s.feed(five_hour("allowed_warning"))
    assert s.feed(five_hour("allowed", 0.0, FIVE_HOUR_RESET + 18000)) == [] and s.ledger.active == ()


def test_rejected_updates_a_shown_warning_and_shows_nothing_of_its_own() -> None:
    s = Session()
    assert s.feed(five_hour("rejected", None)) == []  # Claude Code's usage-limit message fails the turn
    s.feed(five_hour("allowed_warning"))
    sent = s.feed(five_hour("rejected", None))
    assert s.records(sent) == [("s1:e1:1", 2, "You've used all of your 5-hour limit · resets 10:02 pm (UTC)")]


def test_the_window_is_never_the_turns_failure() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"))
    sent = s.feed(five_hour("allowed_warning"))
    assert not any(isinstance(o, (PromptResponseOut, PromptErrorOut)) for o in sent)
    assert s.ledger.flow == "running"
    # the turn's own usage-limit failure keeps its rules: <turnId>:error on the PromptResponse
    limit = "You've hit your 5-hour limit · resets 10pm (UTC)"
    sent = s.feed(
        five_hour("rejected", None),
        Assistant(text=limit, model="<synthetic>", error="rate_limit"),
        Result(subtype="success", is_error=True, result=limit),
    )
    settle = [o for o in sent if isinstance(o, PromptResponseOut)]
    assert len(settle) == 1 and settle[0].record is not None
    assert (settle[0].record.id, settle[0].record.title, settle[0].stop_reason) == ("t1:error", limit, "end_turn")
    assert {a.id: a.state for a in s.ledger.active} == {"s1:e1:1": "warned", "t1:error": "failed"}


def test_no_other_recovery_ends_a_window_warning() -> None:
    s = Session()
    s.feed(five_hour("allowed_warning"))
    s.feed(PromptStarted(turn_id="t1"), Assistant(text="hi", model="claude-x"))
    s.feed(Result(subtype="success", is_error=False, stop_reason="end_turn"), RuntimeReplaced())
    assert [a.id for a in s.ledger.active] == ["s1:e1:1"]


def test_judged_while_a_cancelled_turn_drains() -> None:
    s = Session()
    s.feed(PromptStarted(turn_id="t1"), Cancelled())
    assert s.records(s.feed(five_hour("allowed_warning"))) == [("s1:e1:1", 1, T90)]
    assert s.ledger.flow == "cancelled"


def test_from_a_replaced_runtime_it_is_refused() -> None:
    s = Session()
    s.feed(RuntimeReplaced())
    assert s.ledger.feed(five_hour("allowed_warning"), runtime=0) is False
    assert s.ledger.next_outbound() is None and s.ledger.active == ()


def test_a_failed_send_leaves_the_window_as_the_client_saw_it() -> None:
    s = Session()
    s.feed(five_hour("allowed_warning", 0.9))
    s.feed(five_hour("allowed_warning", 0.95), fail=True)
    assert s.ledger.revision_of("s1:e1:1") == 1
    assert s.records(s.feed(five_hour("allowed_warning", 0.95))) == [("s1:e1:1", 2, T95)]


def test_a_notices_only_client_gets_a_notice_and_a_legacy_client_nothing() -> None:
    s = Session(negotiated=False, notices=True)
    sent = s.feed(five_hour("allowed_warning"), five_hour("allowed_warning"))
    assert [o.update for o in sent if isinstance(o, SessionUpdateOut)] == [
        {"sessionUpdate": "notice", "severity": "warning", "title": T90}
    ]
    legacy = Session(negotiated=False)
    sent = legacy.feed(five_hour("allowed_warning"), five_hour("allowed", None))
    assert sent == [] and legacy.ledger.active == ()
    assert legacy.recorder.notes == ["rate_limit_window_legacy_not_shown"]


def test_past_sixteen_windows_the_oldest_warning_ends_and_its_next_one_is_a_new_id() -> None:
    """docs/acp-agent.md, "Rate-limit windows": the ledger remembers at most 16 windows."""

    def warning(n: int) -> RateLimitWindow:
        return RateLimitWindow(window=f"w{n:02}", status="allowed_warning", utilization=0.9, resets_at=FIVE_HOUR_RESET)

    s = Session()
    first = s.records(s.feed(*(warning(n) for n in range(17))))
    assert len({record_id for record_id, _, _ in first}) == 17
    assert sorted(a.id for a in s.ledger.active) == sorted(record_id for record_id, _, _ in first[1:])
    assert s.feed(warning(1)) == []  # still remembered: the same status again is nothing new
    ((again, revision, _),) = s.records(s.feed(warning(0)))
    assert again not in {record_id for record_id, _, _ in first} and revision == 1


def test_the_zone_is_the_embedders() -> None:
    s = Session(zone=lambda seconds: (3600, "CET"))
    (out,) = s.feed(five_hour("allowed_warning"))
    assert out.record is not None and out.record.title == "You've used 90% of your 5-hour limit · resets 11:02 pm (CET)"


@pytest.mark.parametrize(
    ("window", "status", "share", "resets_at", "title"),
    [
        (
            "five_hour",
            "allowed_warning",
            None,
            FIVE_HOUR_RESET,
            "You're close to your 5-hour limit · resets 10:02 pm (UTC)",
        ),
        ("five_hour", "allowed_warning", 0.9, None, "You've used 90% of your 5-hour limit"),
        (None, "allowed_warning", None, None, "You're close to your usage limit"),
        (
            "seven_day_opus",
            "allowed_warning",
            0.75,
            WEEKLY_RESET,
            "You've used 75% of your weekly Opus limit · resets Wed 9:02 pm (UTC)",
        ),
        ("seven_day_sonnet", "rejected", None, None, "You've used all of your weekly Sonnet limit"),
        ("overage", "allowed_warning", 0.5, None, "You've used 50% of your extra usage limit"),
        ("seven_day_oauth_apps", "allowed_warning", 1.0, None, "You've used 100% of your seven day oauth apps limit"),
        (
            "five_hour",
            "allowed_warning",
            0.5,
            1796428800,
            "You've used 50% of your 5-hour limit · resets 12:00 am (UTC)",
        ),
        (
            "five_hour",
            "allowed_warning",
            0.5,
            1796472000,
            "You've used 50% of your 5-hour limit · resets 12:00 pm (UTC)",
        ),
    ],
)
def test_the_title_says_what_it_knows(
    window: str | None, status: str, share: float | None, resets_at: int | None, title: str
) -> None:
    assert window_title(window, status, share, resets_at) == title
    assert "None" not in title
