"""Spec: "Title and details"."""

from __future__ import annotations

from lifecycle.titles import FALLBACK_TITLES, TITLE_LIMIT, claude_text, present, retry_title

PROMPT_TOO_LONG = (
    "Prompt is too long · the request is ~250000 tokens (limit 200000) but this conversation is only ~2499 "
    "tokens — the rest is system prompt, tool definitions, and attachment content. A single-exchange "
    "conversation cannot be compacted; reduce attached files/tools or start with less context."
)


def test_claudes_text_is_the_title_and_details_are_omitted_when_it_fits() -> None:
    assert present(PROMPT_TOO_LONG, "error_result") == (PROMPT_TOO_LONG, None)


def test_details_only_when_the_complete_text_is_too_long_for_a_title() -> None:
    long = ("This is one sentence of a long explanation. " * 30).strip()
    title, details = present(long, "error_result")
    assert details == long
    assert len(title) <= TITLE_LIMIT and long.startswith(title.rstrip("…").rstrip())
    assert title.endswith(".")


def test_a_long_text_without_sentences_is_cut_at_a_word() -> None:
    long = " ".join(["word"] * 300)
    title, details = present(long, "error_result")
    assert details == long and title.endswith("…") and len(title) <= TITLE_LIMIT


def test_adapter_text_only_when_claude_gave_none() -> None:
    assert present("", "query_error") == (FALLBACK_TITLES["query_error"], None)
    assert present("   ", "worker_shutdown") == (FALLBACK_TITLES["worker_shutdown"], None)


def test_precedence_first_non_empty_text() -> None:
    assert claude_text("assistant text", "result text") == "assistant text"
    assert claude_text("", None, "result text") == "result text"
    assert claude_text(None, ["Reached maximum number of turns (2)"]) == "Reached maximum number of turns (2)"
    assert claude_text(None, [], "") == ""


def test_retry_progress_titles() -> None:
    assert retry_title(2, 10, has_response=True) == "Retrying Claude, attempt 2 of 10."
    assert retry_title(1, 10, has_response=False) == "Reconnecting to Claude, attempt 1 of 10."
    assert retry_title("x", None, has_response=True) == "Retrying Claude."
    assert retry_title(True, 3, has_response=True) == "Retrying Claude."
