"""Issue 52, points 5 and 6: usage-limit windows kept to their bound, once each.

An adversarial run found that an event reporting 18 windows gave a 17-entry ``rateLimits`` list
and the same event sent again republished all 17 warnings under new ids: the list was larger than
the ledger's memory, so each event evicted the windows it was about to report again. One bound
(:data:`lifecycle.events.MAX_WINDOWS`, 16) is now shared by the list and the ledger; a repeat
publishes nothing ("a producer may publish a higher revision only when it has a real new
user-facing status to show"); a window whose reset has passed when it is read is not titled as
upcoming (its warning ends); a reading whose reset is absurdly far, or of a period older than the
one shown, is ignored and counted (an observer note).

Expected values are literals: the titles' wording is docs/acp-agent.md's ("Rate-limit windows");
1796421723 is 2026-12-04 22:02:03 UTC, a Friday (the reset Claude Code 2.1.332 printed against the
fake API, tests/test_rate_limit_event.py).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from lifecycle.agent.translate import rate_limit_update
from lifecycle.claude import rate_limit_from_stream_json, unified_windows
from lifecycle.events import Outbound, RateLimitWindow
from lifecycle.ledger import SessionLedger

RESET = 1796421723
LATER_RESET = RESET + 7 * 86400
BEFORE = RESET - 3600  # read an hour before the reset
AFTER = RESET + 60  # read a minute after it


class Notes:
    def __init__(self) -> None:
        self.notes: list[str] = []

    def transition(self, **fields: object) -> None:
        pass

    def note(self, what: str, **fields: object) -> None:
        self.notes.append(what)


class Session:
    def __init__(self, *, notices: bool = False, negotiated: bool = True) -> None:
        self.observer = Notes()
        self.ledger = SessionLedger("s1", negotiated=negotiated, epoch="e1", observer=self.observer, notices=notices)

    def feed(self, *events: RateLimitWindow) -> list[Outbound]:
        sent: list[Outbound] = []
        for ev in events:
            self.ledger.feed(ev)
            while (out := self.ledger.next_outbound()) is not None:
                sent.append(out)
                self.ledger.delivered()
        return sent


def records(sent: list[Outbound]) -> list[tuple[str, int, str]]:
    return [(o.record.id, o.record.revision, o.record.title) for o in sent if o.record is not None]


def eighteen_windows(observed_at: int | None = BEFORE) -> tuple[RateLimitWindow, ...]:
    """The adversarial event: its own window and 17 others, each at 90 % (issue 52.5)."""
    others = {f"w{n:02}": {"status": "allowed_warning", "utilization": 0.9, "resetsAt": RESET} for n in range(17)}
    info = {
        "status": "allowed_warning", "rateLimitType": "five_hour", "utilization": 0.9, "resetsAt": RESET,
        "unifiedWindows": others,
    }  # fmt: skip
    window = rate_limit_from_stream_json({"type": "rate_limit_event", "rate_limit_info": info})
    assert window is not None
    return unified_windows(replace(window, observed_at=observed_at))


def five_hour(
    status: str = "allowed_warning", share: float = 0.9, resets_at: int = RESET, observed_at: int | None = BEFORE
) -> RateLimitWindow:
    return RateLimitWindow(
        window="five_hour", status=status, utilization=share, resets_at=resets_at, observed_at=observed_at
    )


def test_eighteen_windows_are_sixteen_entries_and_sixteen_warnings_and_a_repeat_publishes_nothing() -> None:
    windows = eighteen_windows()
    update = rate_limit_update(windows[0], None)
    assert [e["window"] for e in update["_meta"]["rateLimits"]] == [
        "five_hour", "w00", "w01", "w02", "w03", "w04", "w05", "w06", "w07",
        "w08", "w09", "w10", "w11", "w12", "w13", "w14",
    ]  # fmt: skip
    s = Session()
    first = records(s.feed(*windows))
    assert [record_id for record_id, _, _ in first] == [f"s1:e1:{n}" for n in range(1, 17)]
    assert first[0] == ("s1:e1:1", 1, "You've used 90% of your 5-hour limit · resets 10:02 pm (UTC)")
    assert first[1] == ("s1:e1:2", 1, "You've used 90% of your w00 limit · resets Fri 10:02 pm (UTC)")
    assert s.feed(*eighteen_windows()) == []  # the same event again: nothing new to show
    assert len(s.ledger.active) == 16
    assert s.observer.notes == ["rate_limit_window_repeat_not_shown"] * 16


def test_a_warning_read_after_its_reset_is_not_shown() -> None:
    s = Session()
    assert s.feed(five_hour(observed_at=AFTER)) == []
    assert s.ledger.active == () and s.observer.notes == ["rate_limit_window_reset_passed"]


def test_a_shown_warning_whose_reset_has_passed_when_read_again_ends_silently() -> None:
    s = Session()
    ((record_id, _, _),) = records(s.feed(five_hour(share=0.9)))
    assert s.feed(five_hour(share=0.95, observed_at=AFTER)) == []  # never "95% … resets 10:02 pm" for the past
    assert s.ledger.active == ()
    # the next period's warning is a new entry
    ((again, revision, title),) = records(s.feed(five_hour(resets_at=LATER_RESET, observed_at=AFTER)))
    assert (again != record_id, revision, title) == (
        True, 1, "You've used 90% of your 5-hour limit · resets 10:02 pm (UTC)"
    )  # fmt: skip


def test_a_reading_without_its_time_is_judged_as_before() -> None:
    """A recorded trace has no reading time (``observed_at`` None): nothing is judged past."""
    s = Session()
    assert [t for _, _, t in records(s.feed(five_hour(observed_at=None)))] == [
        "You've used 90% of your 5-hour limit · resets 10:02 pm (UTC)"
    ]


def test_a_reset_absurdly_far_is_ignored_and_counted() -> None:
    """Issue 52.6: a reset more than 35 days after its reading is no reset time."""
    s = Session()
    assert s.feed(five_hour(resets_at=BEFORE + 36 * 86400)) == []
    assert s.ledger.active == () and s.observer.notes == ["rate_limit_window_reset_implausible"]
    assert len(records(s.feed(five_hour(resets_at=BEFORE + 34 * 86400)))) == 1  # a month's window is plausible


def test_a_reading_of_an_older_period_is_ignored_and_counted() -> None:
    """Issue 52.6: out of order, a reading of the period before the one shown changes nothing
    (before, it would have retitled the warning with the older reset)."""
    s = Session()
    ((record_id, _, _),) = records(s.feed(five_hour(resets_at=LATER_RESET, observed_at=BEFORE)))
    assert s.feed(five_hour(share=0.95, resets_at=RESET, observed_at=BEFORE)) == []
    assert s.feed(five_hour(status="allowed", resets_at=RESET, observed_at=BEFORE)) == []
    assert [a.id for a in s.ledger.active] == [record_id]
    assert s.observer.notes == ["rate_limit_window_out_of_order"] * 2


def test_a_notices_client_gets_each_window_once_too() -> None:
    s = Session(notices=True, negotiated=False)
    first = s.feed(*eighteen_windows())
    assert len(first) == 16 and s.feed(*eighteen_windows()) == []


NAMES = ("five_hour", "seven_day", *(f"w{n:02}" for n in range(17)))


@settings(max_examples=60, stateful_step_count=25, deadline=None, derandomize=True, database=None)
class WindowsOnceEach(RuleBasedStateMachine):
    """Claude Code reports events naming up to 19 windows, periods and reading times at random,
    and sometimes the last event again. Checked after every step, independently of the ledger's
    code: the list names at most 16 windows and every entry names one; a repeat publishes nothing;
    no title is published for a reading whose reset has passed; at most 16 warnings are active,
    and one id never serves two windows."""

    def __init__(self) -> None:
        super().__init__()
        self.session = Session()
        self.last: tuple[RateLimitWindow, ...] | None = None
        self.id_window: dict[str, str] = {}

    @rule(
        own=st.sampled_from(NAMES),
        others=st.lists(st.sampled_from(NAMES), max_size=18, unique=True),
        status=st.sampled_from(["allowed", "allowed_warning", "rejected"]),
        share=st.sampled_from([0.8, 0.9, 0.95]),
        reset=st.sampled_from([RESET, LATER_RESET]),
        read_at=st.sampled_from([None, BEFORE, AFTER, LATER_RESET + 60]),
    )
    def claude_code_reports_an_event(
        self, own: str, others: list[str], status: str, share: float, reset: int, read_at: int | None
    ) -> None:
        info: dict[str, Any] = {
            "status": status, "rateLimitType": own, "utilization": share, "resetsAt": reset,
            "unifiedWindows": {n: {"status": status, "utilization": share, "resetsAt": reset} for n in others},
        }  # fmt: skip
        window = rate_limit_from_stream_json({"type": "rate_limit_event", "rate_limit_info": info})
        assert window is not None
        windows = unified_windows(replace(window, observed_at=read_at))
        entries = rate_limit_update(windows[0], None)["_meta"].get("rateLimits", [])
        assert len(entries) <= 16 and all(isinstance(e.get("window"), str) for e in entries), entries
        sent = self.session.feed(*windows)
        if read_at is not None and reset <= read_at:
            assert records(sent) == [], sent  # a past reset is never titled as upcoming
        for o in sent:
            if o.record is not None:
                shown = [w.window for w in windows if w.window is not None and _label(w.window) in o.record.title]
                assert shown, o.record.title
                assert self.id_window.setdefault(o.record.id, shown[0]) in shown, (o.record.id, shown)
        self.last = windows

    @precondition(lambda self: self.last is not None)
    @rule()
    def claude_code_repeats_the_last_event(self) -> None:
        assert self.last is not None
        assert self.session.feed(*self.last) == []

    @invariant()
    def at_most_sixteen_warnings_are_active(self) -> None:
        assert len(self.session.ledger.active) <= 16


def _label(window: str) -> str:
    """How docs/acp-agent.md names a window in a title."""
    return {"five_hour": "5-hour", "seven_day": "weekly"}.get(window, window.replace("_", " "))


TestWindowsOnceEach = WindowsOnceEach.TestCase
