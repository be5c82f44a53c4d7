"""Issue 52, point 2: the reset time on every limit failure, machine-readable.

The turn is the one Claude Code 2.1.332 printed for a gateway token refused by its 5-hour window
(``usage_limit_gateway.sdk.jsonl`` of tests/fixtures/claude-cli-2.1.332: a ``rate_limit_event``
``rejected`` with ``resetsAt`` 1796227569, then the synthetic "You've hit your 5-hour limit ·
resets 4:06pm (UTC)" with error ``rate_limit``, then an error result, 429). Expected values are
literals: 1796227569 is 2026-12-02T16:06:09Z; read 3 hours before it, 10800 seconds remain.

A legacy client's JSON-RPC error carries ``data.resetsAt`` (ISO 8601) and
``data.retryAfterSeconds`` beside ``errorKind`` (the issue's words); a capable client's
``PromptResponse`` carries the record exactly as the spec has it (docs/spec/session-failure.md,
"Record fields") and, beside it in ``_meta``, ``rateLimits`` with the refused window.
"""

from __future__ import annotations

from typing import Any

import pytest

from lifecycle import RateLimitWindow
from lifecycle.events import Assistant, Outbound, PromptErrorOut, PromptResponseOut, PromptStarted, Result
from lifecycle.ledger import SessionLedger
from lifecycle.limits import iso_time, reading_status, refused_after

RESET = 1796227569
READ_AT = RESET - 3 * 3600
LIMIT_TEXT = "You've hit your 5-hour limit · resets 4:06pm (UTC)"
RAW = {
    "status": "rejected", "resetsAt": RESET, "rateLimitType": "five_hour", "overageStatus": "rejected",
    "overageDisabledReason": "org_level_disabled", "isUsingOverage": False,
}  # fmt: skip


def rejected(observed_at: int | None = READ_AT, window: str | None = "five_hour") -> RateLimitWindow:
    return RateLimitWindow(window=window, status="rejected", resets_at=RESET, raw=RAW, observed_at=observed_at)


def limit_turn(turn: str, *before: RateLimitWindow) -> list[Any]:
    return [
        PromptStarted(turn_id=turn),
        *before,
        Assistant(text=LIMIT_TEXT, model="<synthetic>", error="rate_limit"),
        Result(
            subtype="success", is_error=True, result=LIMIT_TEXT, api_error_status=429, terminal_reason="api_error"
        ),
    ]


def run(negotiated: bool, events: list[Any]) -> list[Outbound]:
    ledger = SessionLedger("s1", negotiated=negotiated, epoch="e1")
    sent: list[Outbound] = []
    for ev in events:
        ledger.feed(ev)
        while (out := ledger.next_outbound()) is not None:
            sent.append(out)
            ledger.delivered()
    return sent


def answer(sent: list[Outbound]) -> dict[str, Any]:
    (settled,) = [o for o in sent if isinstance(o, (PromptResponseOut, PromptErrorOut))]
    return settled.to_jsonrpc()


def test_a_legacy_clients_error_carries_the_reset_beside_the_error_kind() -> None:
    assert answer(run(False, limit_turn("t1", rejected()))) == {
        "jsonrpc": "2.0",
        "id": "t1",
        "error": {
            "code": -32603,
            "message": "Internal error: You've hit your 5-hour limit · resets 4:06pm (UTC)",
            "data": {"errorKind": "rate_limit", "resetsAt": "2026-12-02T16:06:09Z", "retryAfterSeconds": 10800},
        },
    }


def test_a_capable_clients_failed_prompt_carries_the_refused_window_beside_the_record() -> None:
    assert answer(run(True, limit_turn("t1", rejected()))) == {
        "jsonrpc": "2.0",
        "id": "t1",
        "result": {
            "stopReason": "end_turn",
            "_meta": {
                "jetbrains": {
                    "air": {
                        "version": 1,
                        "sessionFailure": {
                            "id": "t1:error",
                            "revision": 1,
                            "category": "limit",
                            "severity": "error",
                            "title": "You've hit your 5-hour limit · resets 4:06pm (UTC)",
                            "actions": [],
                        },
                    }
                },
                "rateLimits": [{"window": "five_hour", "status": "rejected", "resetsAt": "2026-12-02T16:06:09Z"}],
            },
        },
    }


def test_without_a_reading_time_the_reset_is_given_and_no_wait_is_invented() -> None:
    data = answer(run(False, limit_turn("t1", rejected(observed_at=None))))["error"]["data"]
    assert data == {"errorKind": "rate_limit", "resetsAt": "2026-12-02T16:06:09Z"}


def test_a_limit_failure_with_no_window_reported_carries_nothing_invented() -> None:
    assert answer(run(False, limit_turn("t1")))["error"]["data"] == {"errorKind": "rate_limit"}
    assert "rateLimits" not in answer(run(True, limit_turn("t1")))["result"]["_meta"]


def test_the_window_refused_in_an_earlier_turn_still_refuses_until_it_is_allowed() -> None:
    """Claude Code prints a window's state only when it changes: the next refused turn of the
    same period gets no new event, and still carries the reset."""
    allowed = RateLimitWindow(window="five_hour", status="allowed", resets_at=RESET + 18000, observed_at=RESET + 60)
    sent = run(False, [*limit_turn("t1", rejected()), *limit_turn("t2"), allowed, *limit_turn("t3")])
    errors = [o.to_jsonrpc()["error"]["data"] for o in sent if isinstance(o, PromptErrorOut)]
    assert errors == [
        {"errorKind": "rate_limit", "resetsAt": "2026-12-02T16:06:09Z", "retryAfterSeconds": 10800},
        {"errorKind": "rate_limit", "resetsAt": "2026-12-02T16:06:09Z", "retryAfterSeconds": 10800},
        {"errorKind": "rate_limit"},
    ]


def test_a_window_of_no_name_gives_the_legacy_reset_and_no_entry() -> None:
    """Issue 52.5: an entry always names its window; the legacy data needs no name."""
    assert "rateLimits" not in answer(run(True, limit_turn("t1", rejected(window=None))))["result"]["_meta"]
    assert answer(run(False, limit_turn("t1", rejected(window=None))))["error"]["data"]["resetsAt"] == (
        "2026-12-02T16:06:09Z"
    )


def test_a_rejected_reading_whose_reset_passed_refuses_nothing() -> None:
    assert answer(run(False, limit_turn("t1", rejected(observed_at=RESET + 1))))["error"]["data"] == {
        "errorKind": "rate_limit"
    }


@pytest.mark.parametrize(
    ("reading", "after"),
    [
        (RateLimitWindow(window="five_hour", status="allowed", resets_at=RESET), None),
        (RateLimitWindow(window="five_hour", status="allowed_warning", resets_at=RESET + 1), None),
        (RateLimitWindow(window="five_hour", status="allowed_warning", resets_at=RESET), "kept"),
        (RateLimitWindow(window="seven_day", status="allowed", resets_at=RESET), "kept"),
    ],
)
def test_what_ends_a_refusal(reading: RateLimitWindow, after: str | None) -> None:
    refused = rejected()
    assert refused_after(refused, reading) == (refused if after == "kept" else None)


@pytest.mark.parametrize(
    ("seconds", "iso"),
    [
        (0, "1970-01-01T00:00:00Z"),
        (951782400, "2000-02-29T00:00:00Z"),  # a leap day of a century leap year
        (RESET, "2026-12-02T16:06:09Z"),
        (253402300799, "9999-12-31T23:59:59Z"),
    ],
)
def test_iso_time(seconds: int, iso: str) -> None:
    assert iso_time(seconds) == iso


# Claude Code 2.1.337's early-warning table (the status it gives a reading with none): the 5-hour
# window warns at 90 % within the first 72 % of its 5 hours; the weekly at 75 % within 60 %, 50 %
# within 35 %, 25 % within 15 % of its week; all used is rejected. Read at 0, the reset at the
# window's length minus the time gone (elapsed share = time gone / length).
@pytest.mark.parametrize(
    ("window", "used", "gone", "status"),
    [
        ("five_hour", 0.9, 12960, "allowed_warning"),  # 72 % of 18000 s gone: still within
        ("five_hour", 0.9, 12961, "allowed"),  # just past 72 %
        ("five_hour", 0.89, 0, "allowed"),
        ("five_hour", 1.0, 17999, "rejected"),
        ("seven_day", 0.75, 362880, "allowed_warning"),  # 60 % of 604800 s
        ("seven_day", 0.75, 362881, "allowed"),
        ("seven_day", 0.5, 211680, "allowed_warning"),  # 35 %
        ("seven_day", 0.5, 211681, "allowed"),
        ("seven_day", 0.25, 90720, "allowed_warning"),  # 15 %
        ("seven_day", 0.24, 0, "allowed"),
        ("seven_day_opus", 0.99, 0, "allowed"),  # no table for it: only all used is a status of its own
        ("seven_day_opus", 1.0, 0, "rejected"),
    ],
)
def test_a_reading_without_status_gets_claude_codes(window: str, used: float, gone: int, status: str) -> None:
    length = {"five_hour": 18000, "seven_day": 604800}.get(window, 604800)
    assert reading_status(window, used, length - gone, 0) == status
    assert reading_status(window, used, None, 0) == ("rejected" if used >= 1 else "allowed")  # no reset known
