"""Spec: "Title and details"."""

from __future__ import annotations

from lifecycle.titles import FALLBACK_TITLES, TITLE_LIMIT, claude_text, legacy_result_text, present, retry_title

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


def test_a_records_title_joins_a_results_errors_as_the_reference_does() -> None:
    # dist/acp-agent.js:5544, :5552, :5559: the record's title is errors.join(", ") too
    assert claude_text(None, ["Tool execution failed", "Hook blocked the write"]) == (
        "Tool execution failed, Hook blocked the write"
    )


def test_the_legacy_text_of_an_error_result_is_the_reference_adapters() -> None:
    # dist/acp-agent.js: a success result's own text; otherwise errors.join(", ") || subtype.
    assert legacy_result_text("error_during_execution", None, ("Tool execution failed", "Hook blocked the write")) == (
        "Tool execution failed, Hook blocked the write"
    )
    assert legacy_result_text("error_max_turns", None, ("Reached maximum number of turns (2)",)) == (
        "Reached maximum number of turns (2)"
    )
    assert legacy_result_text("error_during_execution", None, ()) == "error_during_execution"
    assert legacy_result_text("error_max_budget_usd", None, ()) == "error_max_budget_usd"
    assert legacy_result_text("error_max_structured_output_retries", None, ()) == "error_max_structured_output_retries"
    assert legacy_result_text("error_during_execution", "ignored", ()) == "error_during_execution"
    assert legacy_result_text("success", "API Error: 500", ()) == "API Error: 500"
    assert legacy_result_text("success", "", ()) == ""
    assert legacy_result_text("success", None, ("x",)) == ""
    assert legacy_result_text(None, "text", ("a", "b")) == "text"
    assert legacy_result_text(None, None, ("a", "b")) == "a, b"
    assert legacy_result_text(None, None, ()) == ""


def test_retry_progress_titles() -> None:
    assert retry_title(2, 10, has_response=True) == "Retrying Claude, attempt 2 of 10."
    assert retry_title(1, 10, has_response=False) == "Reconnecting to Claude, attempt 1 of 10."
    assert retry_title("x", None, has_response=True) == "Retrying Claude."
    assert retry_title(True, 3, has_response=True) == "Retrying Claude."


# ---------------------------------------------------------------- exact values (spec: "Title and details")
# Expected titles are written out by hand from the rule in lifecycle/titles.py: a text longer than
# 500 characters is cut at the last sentence boundary (". ", " · ", "! ", "? ", "; ") found in its
# first 500 characters, if that boundary lies at index 166 (500 // 3) or later; ". ", "! " and
# "? " keep their punctuation, " · " and "; " end the title with " …"; otherwise at the last space
# at index 166 or later, else after 499 characters; "…" marks a word cut.

A200, B400 = "a" * 200, "b" * 400


def test_the_title_limit_is_500_characters() -> None:
    assert TITLE_LIMIT == 500
    assert present("a" * 500, "error_result") == ("a" * 500, None)
    assert present("a" * 501, "error_result") == ("a" * 499 + "…", "a" * 501)


def test_the_text_is_trimmed_before_it_is_measured() -> None:
    assert present("  " + "a" * 500 + " \n", "error_result") == ("a" * 500, None)
    assert present("  Rate limited · try later \n", "error_result") == ("Rate limited · try later", None)


def test_details_carry_the_complete_text_exactly_when_the_title_is_cut() -> None:
    text = A200 + ". " + B400
    assert present(text, "error_result") == (A200 + ".", text)


def test_a_cut_at_each_sentence_boundary() -> None:
    assert present(A200 + ". " + B400, "error_result")[0] == A200 + "."
    assert present(A200 + "! " + B400, "error_result")[0] == A200 + "!"
    assert present(A200 + "? " + B400, "error_result")[0] == A200 + "?"
    assert present(A200 + " · " + B400, "error_result")[0] == A200 + " …"
    assert present(A200 + "; " + B400, "error_result")[0] == A200 + " …"


def test_the_last_boundary_within_the_limit_wins() -> None:
    text = A200 + ". " + "b" * 100 + "; " + "c" * 400
    assert present(text, "error_result")[0] == A200 + ". " + "b" * 100 + " …"
    text = "a" * 100 + ". " + "b" * 100 + " · " + "c" * 400
    assert present(text, "error_result")[0] == "a" * 100 + ". " + "b" * 100 + " …"
    # A boundary beyond the first 500 characters does not count.
    text = A200 + ". " + "b" * 350 + ". " + "c" * 100
    assert present(text, "error_result")[0] == A200 + "."


def test_whitespace_before_a_middle_dot_cut_is_dropped() -> None:
    assert present(A200 + "   · " + B400, "error_result")[0] == A200 + " …"


def test_a_sentence_boundary_counts_from_index_166() -> None:
    assert present("a" * 166 + ". " + B400, "error_result")[0] == "a" * 166 + "."
    # At 165 it is too early: the cut falls back to the last space (index 166), a word cut.
    assert present("a" * 165 + ". " + B400, "error_result")[0] == "a" * 165 + ".…"


def test_a_word_cut_at_the_last_space_from_index_166() -> None:
    assert present("a" * 166 + " " + B400, "error_result")[0] == "a" * 166 + "…"
    # A space before index 166 is too early: 499 characters and the ellipsis.
    title = present("a" * 165 + " " + B400, "error_result")[0]
    assert title == "a" * 165 + " " + "b" * 333 + "…"
    assert len(title) == 500


def test_whitespace_before_a_word_cut_is_dropped() -> None:
    assert present(A200 + "     " + B400, "error_result")[0] == A200 + "…"


def test_every_fallback_title_written_out() -> None:
    assert dict(FALLBACK_TITLES) == {
        "query_error": "The connection to Claude Code was lost. Send a message to restart it, or start a new session.",
        "worker_shutdown": "Claude Code shut down. Send a message to restart it, or start a new session.",
        "missing_result": "Claude Code ended the turn without a result. Try again.",
        "internal_error": "The adapter hit an internal error. Try again.",
        "error_result": "Claude Code reported an error without a message. Try again.",
        "model_fallback": "Claude switched to a fallback model.",
        "mcp_server_not_started": "An MCP server did not start; its tools are unavailable in this session.",
    }
    assert present("", "internal_error") == ("The adapter hit an internal error. Try again.", None)
    assert present("\n", "model_fallback") == ("Claude switched to a fallback model.", None)
    assert present(" ", "mcp_server_not_started") == (
        "An MCP server did not start; its tools are unavailable in this session.",
        None,
    )


def test_titles_are_redacted() -> None:
    title, details = present("Invalid API key sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 4, "error_result")
    assert "A1b2C3d4E5f6G7h8I9j0" not in title and details is None
    assert title.startswith("Invalid API key")


def test_claude_text_joins_the_non_empty_strings_of_a_list() -> None:
    assert claude_text(None, ["first", "", "  ", 7, "second"]) == "first, second"
    assert claude_text(("only",)) == "only"
    assert claude_text("   ", "x") == "x"
    assert claude_text(7, ["", None]) == ""


def test_retry_counters_a_person_can_read() -> None:
    assert retry_title(0, 0, has_response=True) == "Retrying Claude, attempt 0 of 0."
    assert retry_title(999_999_999, 3, has_response=False) == "Reconnecting to Claude, attempt 999999999 of 3."
    assert retry_title(10**9, 3, has_response=True) == "Retrying Claude."
    assert retry_title(3, 10**9, has_response=True) == "Retrying Claude, attempt 3."
    assert retry_title(-1, 3, has_response=False) == "Reconnecting to Claude."
    assert retry_title(2, True, has_response=True) == "Retrying Claude, attempt 2."


def test_a_word_cut_uses_the_last_space_not_the_first() -> None:
    text = "a" * 170 + " " + "b" * 10 + " " + "c" * 400
    assert present(text, "error_result")[0] == "a" * 170 + " " + "b" * 10 + "…"


# ---------------------------------------------------------------- headers are never title material


def test_header_lines_are_left_out_and_the_rest_kept() -> None:
    from lifecycle.titles import strip_headers

    text = "API Error: 400\nHost: api.example.com\nUser-Agent: claude-cli/2.1\nDate: Mon\nrest of text"
    assert strip_headers(text) == "API Error: 400\nrest of text"  # "Date" goes: it is next to a header
    assert strip_headers("Server: down for maintenance") == "Server: down for maintenance"  # a common word alone
    assert strip_headers("Note: Sec-Fetch is fine\nFrom: me") == "Note: Sec-Fetch is fine\nFrom: me"
    assert strip_headers("HTTP/1.1 429 Too Many Requests\nretry later") == "retry later"
    assert strip_headers("GET /v1/messages HTTP/1.1\r\nx-api-key: [redacted]\r\nbody") == "body"
    assert strip_headers("a\\nHost: x\\nb") == "a\\nb"  # JSON-escaped line breaks delimit lines too
    quoted = 'Request failed {"user-agent": "claude-cli/2.1", "model": "opus"}'
    assert strip_headers(quoted) == 'Request failed {"model": "opus"}'
    assert strip_headers("no colon here") == "no colon here"


def test_a_title_never_shows_a_header() -> None:
    assert present("Rate limited\nRetry-After: 30\nX-Request-Id: abc", "error_result") == ("Rate limited", None)
    assert present("Host: api.example.com", "internal_error") == (
        "The adapter hit an internal error. Try again.",
        None,
    )


def test_a_common_word_is_a_header_line_only_right_next_to_one() -> None:
    """``Date``, ``From``, ...: dropped when the line just before or just after is a header line;
    a name that is no header name at all is never dropped, whatever surrounds it."""
    from lifecycle.titles import strip_headers

    assert strip_headers("Date: Mon\nHost: api.example.com\nrest") == "rest"  # the header line after it
    assert strip_headers("Host: api.example.com\nDate: Mon\nrest") == "rest"  # the first line is a neighbour
    assert strip_headers("Host: x\nplain\nDate: Mon") == "plain\nDate: Mon"  # two lines away: kept
    assert strip_headers("Date: Mon\nplain\nHost: x") == "Date: Mon\nplain"
    assert strip_headers("Note: hi\nHost: x\nSummary: ok") == "Note: hi\nSummary: ok"


def test_quoted_header_pairs_go_in_either_quotes() -> None:
    from lifecycle.titles import strip_headers

    quoted = "Request failed {'user-agent': 'claude-cli/2.1', 'model': 'opus'}"
    assert strip_headers(quoted) == "Request failed {'model': 'opus'}"
    assert strip_headers("Request failed: user-agent is claude-cli") == "Request failed: user-agent is claude-cli"


# ------------------------------------------------------------------ model refusal fallback
# The reference adapter's rules (acp-agent.js, "model_refusal_fallback"; MAX_NOTICE_TITLE_LENGTH 256):
# the record joins summary and explanation with a blank line unless ``summary.length + 2 +
# explanation.length > 256``; the notice keeps the summary as its title unless it is longer than
# 256, then the title is "Model fallback"; the transcript line is "**Model fallback:** ...".


def test_an_empty_explanation_is_no_explanation() -> None:
    """The reference: ``message.api_refusal_explanation || undefined``."""
    from lifecycle.titles import refusal_fallback_texts

    summary = (
        "claude-opus-5 declined this request (cyber); retried with claude-sonnet-5. "
        "The session will continue on claude-sonnet-5."
    )
    args = {"direction": None, "scope": None, "category": "cyber"}
    assert refusal_fallback_texts("claude-opus-5", "claude-sonnet-5", **args, explanation="") == (summary, None)
    assert refusal_fallback_texts("claude-opus-5", "claude-sonnet-5", **args, explanation="Why.") == (summary, "Why.")


def test_the_record_keeps_the_explanation_in_its_title_up_to_256_characters() -> None:
    from lifecycle.titles import refusal_fallback_record

    summary = "s" * 100
    assert refusal_fallback_record(summary, None) == (summary, None)
    assert refusal_fallback_record(summary, "e" * 154) == (summary + "\n\n" + "e" * 154, None)  # 256: joined
    assert refusal_fallback_record(summary, "e" * 155) == (summary, "e" * 155)  # 257: details


def test_the_notice_keeps_a_summary_of_up_to_256_characters_as_its_title() -> None:
    from lifecycle.titles import refusal_fallback_notice

    assert refusal_fallback_notice("s" * 256, "why") == ("s" * 256, "why")
    assert refusal_fallback_notice("s" * 256, None) == ("s" * 256, None)
    assert refusal_fallback_notice("s" * 257, "why") == ("Model fallback", "s" * 257 + "\n\nwhy")
    assert refusal_fallback_notice("s" * 257, None) == ("Model fallback", "s" * 257)


def test_the_transcript_line_of_a_legacy_client() -> None:
    from lifecycle.titles import refusal_fallback_transcript

    assert refusal_fallback_transcript("A declined.", None) == "**Model fallback:** A declined."
    assert refusal_fallback_transcript("A declined.", "Why.") == "**Model fallback:** A declined.\n\nWhy."


# ------------------------------------------------------------------ free-form notices
# The reference's splitNoticeText (session-notices.js): light markdown dropped (headings, bold,
# inline code), trimmed; the first line is the title when it has at most 256 characters and the
# trimmed rest, if any, the description; otherwise the whole text is the description under the
# fallback title.

FALLBACK = "Notice"


def test_a_notice_text_split_into_title_and_description() -> None:
    from lifecycle.titles import split_notice_text

    cases = {
        "": (FALLBACK, None),
        "  \n\t \n": (FALLBACK, None),
        "One line": ("One line", None),
        "  One line  ": ("One line", None),
        "Title\nrest of it": ("Title", "rest of it"),
        "Title \t\r\n\n  rest\nmore  \n": ("Title", "rest\nmore"),
        "Title\n   \n": ("Title", None),
        "## Heading\n**bold** and `code`": ("Heading", "bold and code"),
        "  ### indented heading": ("indented heading", None),
        "####### seven is no heading": ("####### seven is no heading", None),
        "#no space is no heading": ("#no space is no heading", None),
        "__under__ line": ("under line", None),
        "** not bold**": ("** not bold**", None),
        "**across\nlines**": ("across", "lines"),
        "a`b` stays": ("a`b` stays", None),
        "`a` `b`": ("a b", None),
        "**": ("**", None),
    }
    for text, expected in cases.items():
        assert split_notice_text(text, FALLBACK) == expected, text


def test_a_first_line_over_256_characters_is_no_title() -> None:
    from lifecycle.titles import split_notice_text

    assert split_notice_text("x" * 256, FALLBACK) == ("x" * 256, None)
    assert split_notice_text("x" * 256 + "\nmore", FALLBACK) == ("x" * 256, "more")
    assert split_notice_text("x" * 257, FALLBACK) == (FALLBACK, "x" * 257)
    assert split_notice_text("x" * 257 + "\nmore", FALLBACK) == (FALLBACK, "x" * 257 + "\nmore")
    assert split_notice_text("**" + "x" * 256 + "**", FALLBACK) == ("x" * 256, None)  # measured without markers
    assert split_notice_text("x" * 256 + "   \nmore", FALLBACK) == ("x" * 256, "more")  # and trailing blanks


def test_header_lines_are_never_title_material() -> None:
    from lifecycle.titles import present, strip_headers

    text = (
        "API Error: 400 bad request\nPOST /v1/messages?beta=true HTTP/1.1\nHost: 127.0.0.1:4242\n"
        "User-Agent: claude-cli/2.1.332\nX-Stainless-Lang: js\nAuthorization: Bearer abc123def456ghi\n"
        "anthropic-version: 2023-06-01\nDate: Tue, 01 Dec 2026\nthe gateway refused abc123def456ghi"
    )
    assert present(text, "error_result") == (
        "API Error: 400 bad request\nthe gateway refused [redacted credential]",
        None,
    )
    # JSON-escaped line breaks, and header pairs quoted inside other text
    assert strip_headers("failed\\nHost: a:1\\nUser-Agent: b\\nreason") == "failed\\nreason"
    assert strip_headers('{"msg": "no", "headers": {"user-agent": "x/1", "X-Request-Id": "r1"}}') == (
        '{"msg": "no", "headers": {}}'
    )
    # Claude's own words that merely look like "Name: value" stay
    for kept in ("API Error: 529 Overloaded", "Warning: the thing", "Request ID: req_011", "Token: expired"):
        assert strip_headers(kept) == kept
    assert present("Host: a\nUser-Agent: b", "error_result")[0].startswith("Claude Code reported an error")


def test_the_connection_fallbacks_say_what_happens_next() -> None:
    from lifecycle.conditions import CONDITIONS
    from lifecycle.titles import FALLBACK_TITLES
    from lifecycle.wire import Action

    for key in ("query_error", "worker_shutdown"):
        assert "Send a message to restart it" in FALLBACK_TITLES[key]
        assert CONDITIONS[key].actions == (Action.NEW_SESSION,)  # the spec's action stays offered
        assert CONDITIONS[key].recovery.value == "runtime_replaced"
