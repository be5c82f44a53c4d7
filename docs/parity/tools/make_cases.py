#!/usr/bin/env python3
"""Writes the proposed conformance cases (NAME.input.jsonl + NAME.expect.json).

SDK lines are shaped like Claude Code's stream-json output as recorded from CLI 2.1.318 (the
reference's bundled CLI, docs/parity/transcripts/*.cli-stdout.jsonl) and CLI 2.1.332
(tests/fixtures/claude-cli-2.1.332/*.sdk.jsonl); usage objects are trimmed.
"""
import json, os, sys

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
S = "s1"
AIR = {"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}}
NOTICES = {"session": {"notices": {}}}
ZERO = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
USAGE = {"input_tokens": 12, "output_tokens": 9, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def init(caps):
    return {"type": "adapter", "event": "initialize", "clientCapabilities": caps}


def session():
    return {"type": "adapter", "event": "session", "sessionId": S}


def prompt(t):
    return {"type": "adapter", "event": "prompt", "turnId": t}


def ev(name, **kw):
    return {"type": "adapter", "event": name, **kw}


def user_echo(t, text="hi"):
    return {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": text}]}, "session_id": S,
            "parent_tool_use_id": None, "uuid": t, "isReplay": True, "origin": {"kind": "human"}}


def api_retry(n, status=429, error="rate_limit", max_retries=2):
    return {"type": "system", "subtype": "api_retry", "attempt": n, "max_retries": max_retries, "retry_delay_ms": 510,
            "error_status": status, "error": error, "session_id": S, "uuid": f"retry-{n}"}


def synthetic(uuid, text, error=None, stop_reason="stop_sequence", stop_details=None):
    msg = {"id": f"api-{uuid}", "container": None, "model": "<synthetic>", "role": "assistant", "stop_reason": stop_reason,
           "stop_sequence": "", "type": "message", "usage": ZERO, "content": [{"type": "text", "text": text}], "context_management": None}
    if stop_details is not None:
        msg["stop_details"] = stop_details
    line = {"type": "assistant", "message": msg, "parent_tool_use_id": None, "session_id": S, "uuid": uuid}
    if error is not None:
        line["error"] = error
        line["is_api_error_message"] = True
    return line


def real(uuid, text, model="claude-opus-5-5"):
    return {"type": "assistant", "message": {"id": f"msg_{uuid}", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}], "stop_reason": None, "stop_sequence": None, "usage": USAGE,
            "context_management": None}, "parent_tool_use_id": None, "session_id": S, "uuid": uuid}


def result(uuid, *, subtype="success", is_error=False, text=None, stop_reason="end_turn", terminal_reason="completed",
           api_error_status=None, errors=None, num_turns=1):
    line = {"type": "result", "subtype": subtype, "is_error": is_error, "duration_ms": 1200, "duration_api_ms": 900,
            "num_turns": num_turns, "stop_reason": stop_reason, "session_id": S, "total_cost_usd": 0, "usage": ZERO,
            "terminal_reason": terminal_reason, "uuid": uuid}
    if subtype == "success":
        line["result"] = text if text is not None else ""
        line["api_error_status"] = api_error_status
    else:
        line["errors"] = errors or []
    return line


def refusal_fallback(*, original="claude-opus-5-5", fallback="claude-opus-4-8", category="cyber",
                     explanation="This request was declined by the fake safety classifier.", scope="session",
                     direction="retry", uuid="rf-1", refused="t1"):
    line = {"type": "system", "subtype": "model_refusal_fallback", "trigger": "refusal", "direction": direction,
            "original_model": original, "fallback_model": fallback, "request_id": "req_fake",
            "api_refusal_category": category, "api_refusal_explanation": explanation, "retracted_message_uuids": [],
            "refused_user_message_uuid": refused,
            "content": "Opus 5.5's safeguards flagged this session. You may be seeing this for the first time: Opus 5.5 is more capable and has stronger safeguards as a result, which can sometimes flag non-cybersecurity work. We're improving these safeguards to reduce the amount of incorrectly flagged messages. Opus 4.8 is answering instead, or you can edit and retry with Opus 5.5. You can learn more: https://support.claude.com/en/articles/8106465\n\nDetails: `[cyber]`",
            "session_id": S, "uuid": uuid}
    if scope is not None:
        line["scope"] = scope
    return line


def summary(original, fallback, category, outcome):
    cat = f" ({category})" if category else ""
    return f"{original} declined this request{cat}; retried with {fallback}. {outcome}"


RATE_TEXT = "API Error: Request rejected (429) · Number of requests has exceeded your rate limit"
EXPL = "This request was declined by the fake safety classifier."
LONG_EXPL = ("This request was declined by the fake safety classifier because it matched a pattern that the classifier "
             "associates with potentially harmful security work. The explanation is deliberately long so that the "
             "summary plus the explanation is longer than the 256-character notice title limit.")
SUM = summary("claude-opus-5-5", "claude-opus-4-8", "cyber", "The session will continue on claude-opus-4-8.")
NO_FALLBACK_EXPL = "Declined by the fake classifier (no category)."
NO_FALLBACK_TEXT = ("API Error: Opus 5.5's safeguards flagged this message (https://www.anthropic.com/legal/aup). This sometimes "
                    "happens with safe, normal conversations. Claude Code can't respond to this message with Opus 5.5.\n\n"
                    "Try rephrasing the request in a new session or change your model.\n\nLearn more: "
                    "https://support.claude.com/en/articles/8106465\n\nRequest ID: req_fake\n\nMessage ID: msg_fake0002")
MAXOUT_TEXT = ("API Error: Claude's response exceeded the 128000 output token maximum. To configure this behavior, set the "
               "CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable.")
FABLE_TEXT = "Fable 5 requires usage credits. /model to switch models."


def chunk_matcher(text_re):
    return {"method": "session/update", "params": {"update": {"sessionUpdate": "agent_message_chunk", "content": {"text": text_re}}}}


def rate_limited_turn(t, a="a1", r="result-1"):
    return [api_retry(1), api_retry(2), user_echo(t), synthetic(a, RATE_TEXT, "rate_limit"),
            result(r, is_error=True, text=RATE_TEXT, stop_reason="stop_sequence", terminal_reason="api_error", api_error_status=429)]


cases = {}

# ---------------------------------------------------------------- 1. model refusal fallback
cases["refusal-fallback-notice"] = (
    [init(AIR), session(), prompt("t1"), user_echo("t1"), refusal_fallback(), real("a1", "Hello from the fake API.", "claude-opus-4-8"),
     result("result-1", text="Hello from the fake API.")],
    {"description": "item 1: system/model_refusal_fallback is a warning notice (unknown, no actions, :notice: id) on a session_info_update; its title is composed like the reference's (both models, the refusal category, the outcome) with a short explanation appended after a blank line; the prompt ends normally; the notice is not cleared by the success (recorded live: docs/parity/transcripts/refusal-fallback-ok-air.*)",
     "records": [{"id": "re:s1:.*notice.*", "revision": 1, "category": "unknown", "severity": "warning", "actions": [],
                  "carrier": "session_info_update", "title": f"{SUM}\n\n{EXPL}", "details": "$absent"}],
     "sequence": [{"id": "t1", "result": {"stopReason": "end_turn"}}],
     "forbid_messages": [chunk_matcher("re:(?s).*(declined this request|safeguards flagged this session).*")],
     "active": {S: ["re:s1:.*notice.*"]}})

cases["refusal-fallback-long-explanation-details"] = (
    [init(AIR), session(), prompt("t1"), user_echo("t1"), refusal_fallback(explanation=LONG_EXPL),
     real("a1", "Hello from the fake API.", "claude-opus-4-8"), result("result-1", text="Hello from the fake API.")],
    {"description": "item 1, the reference's 256-character rule: when summary + blank line + explanation is longer than 256 characters the title is the summary alone and the explanation goes to details (recorded live: docs/parity/transcripts/refusal-long-air.*)",
     "records": [{"id": "re:s1:.*notice.*", "revision": 1, "category": "unknown", "severity": "warning", "actions": [],
                  "carrier": "session_info_update", "title": SUM, "details": LONG_EXPL}],
     "sequence": [{"id": "t1", "result": {"stopReason": "end_turn"}}]})

loc = summary("claude-sonnet-5-5", "claude-opus-4-8", "bio", "Only that response came from claude-opus-4-8; the session stays on claude-sonnet-5-5.")
rev = summary("claude-opus-5-5", "claude-opus-4-8", None, "The session stays on claude-opus-5-5.")
old = summary("claude-opus-5-5", "claude-opus-4-8", None, "The session will continue on claude-opus-4-8.")
cases["refusal-fallback-title-variants"] = (
    [init(AIR), session(), prompt("t1"), user_echo("t1"),
     refusal_fallback(original="claude-sonnet-5-5", category="bio", explanation=None, scope="local", uuid="rf-1"),
     refusal_fallback(category=None, explanation=None, direction="revert", scope="session", uuid="rf-2"),
     refusal_fallback(category=None, explanation="", scope=None, uuid="rf-3"),
     real("a1", "Hello from the fake API.", "claude-opus-4-8"), result("result-1", text="Hello from the fake API.")],
    {"description": "item 1, the three outcomes of the reference's title (dist/acp-agent.js:4878-4888): scope local -> 'Only that response came from F; the session stays on O.'; direction revert -> 'The session stays on O.'; no scope (older CLI) -> session swap; a null category adds no parentheses; a null or empty explanation adds nothing. Three different texts are three occurrences (item 3).",
     "records": [
         {"id": "re:s1:.*notice.*", "revision": 1, "severity": "warning", "category": "unknown", "actions": [], "title": loc, "details": "$absent"},
         {"id": "re:s1:.*notice.*", "revision": 1, "severity": "warning", "category": "unknown", "actions": [], "title": rev, "details": "$absent"},
         {"id": "re:s1:.*notice.*", "revision": 1, "severity": "warning", "category": "unknown", "actions": [], "title": old, "details": "$absent"}],
     "active": {S: ["re:s1:.*notice.*", "re:s1:.*notice.*", "re:s1:.*notice.*"]}})

cases["refusal-fallback-legacy-transcript"] = (
    [init({}), session(), prompt("t1"), user_echo("t1"), refusal_fallback(), real("a1", "Hello from the fake API.", "claude-opus-4-8"),
     result("result-1", text="Hello from the fake API.")],
    {"description": "item 1, legacy client: no record; the reference's transcript text '**Model fallback:** <summary>\\n\\n<explanation>' as an agent_message_chunk before the answer (recorded live: docs/parity/transcripts/refusal-fallback-ok-legacy.*)",
     "sequence": [{"method": "session/update", "params": {"sessionId": S, "update": {"sessionUpdate": "agent_message_chunk",
                   "content": {"type": "text", "text": f"**Model fallback:** {SUM}\n\n{EXPL}"}}}},
                  chunk_matcher("Hello from the fake API."),
                  {"id": "t1", "result": {"stopReason": "end_turn"}}],
     "records": [], "forbid": ["jetbrains", "sessionFailure"]})

cases["refusal-no-fallback-ends-refusal"] = (
    [init(AIR), session(), prompt("t1"), user_echo("t1"),
     {"type": "system", "subtype": "model_refusal_no_fallback", "uuid": "rnf-1", "original_model": "claude-opus-5-5", "request_id": "req_fake",
      "api_refusal_category": None, "api_refusal_explanation": NO_FALLBACK_EXPL, "refused_user_message_uuid": "t1", "content": "", "session_id": S},
     synthetic("a1", NO_FALLBACK_TEXT, "invalid_request", "refusal", {"type": "refusal", "category": None, "explanation": NO_FALLBACK_EXPL}),
     result("result-1", is_error=True, text=NO_FALLBACK_TEXT, stop_reason="refusal", terminal_reason="api_error")],
    {"description": "item 1 (+4): model_refusal_no_fallback then the refused turn's synthetic invalid_request error and an is_error result with stop_reason refusal: the prompt ends with stopReason refusal, the explanation is shown as an agent_message_chunk, no record is made, and a capable client does not get the synthetic error text (recorded live: docs/parity/transcripts/refusal-nofallback-air.*)",
     "sequence": [chunk_matcher(NO_FALLBACK_EXPL), {"id": "t1", "result": {"stopReason": "refusal"}}],
     "records": [],
     "forbid_messages": [chunk_matcher("re:(?s).*safeguards flagged this message.*")],
     "active": {S: []}})

# ---------------------------------------------------------------- 2. ACP standard notices
cases["refusal-fallback-acp-notice"] = (
    [init({**AIR, **NOTICES}), session(), prompt("t1"), user_echo("t1"), refusal_fallback(),
     real("a1", "Hello from the fake API.", "claude-opus-4-8"), result("result-1", text="Hello from the fake API.")],
    {"description": "item 2: a client that declares clientCapabilities.session.notices gets the fallback as an ACP notice update {sessionUpdate: notice, severity: warning, title: <summary>, description: <explanation>} and no typed record, even when it also negotiated sessionFailure (recorded live: docs/parity/transcripts/refusal-fallback-ok-air+notices.*)",
     "sequence": [{"method": "session/update", "params": {"sessionId": S, "update": {"sessionUpdate": "notice", "severity": "warning", "title": SUM, "description": EXPL}}},
                  {"id": "t1", "result": {"stopReason": "end_turn"}}],
     "records": []})

cases["refusal-fallback-acp-notice-long-summary"] = (
    [init(NOTICES), session(), prompt("t1"), user_echo("t1"),
     refusal_fallback(original="claude-opus-5-5-" + "x" * 120, fallback="claude-opus-4-8-" + "y" * 120, explanation=None),
     real("a1", "Hello from the fake API.", "claude-opus-4-8"), result("result-1", text="Hello from the fake API.")],
    {"description": "item 2, the 256-character rule on the notice lane: a summary longer than 256 characters becomes the description under the generic title 'Model fallback' (dist/acp-agent.js:4909-4914)",
     "sequence": [{"method": "session/update", "params": {"update": {"sessionUpdate": "notice", "severity": "warning", "title": "Model fallback",
                   "description": summary("claude-opus-5-5-" + "x" * 120, "claude-opus-4-8-" + "y" * 120, "cyber",
                                          "The session will continue on claude-opus-4-8-" + "y" * 120 + ".")}}},
                  {"id": "t1", "result": {"stopReason": "end_turn"}}],
     "records": [], "forbid": ["jetbrains"]})

# ---------------------------------------------------------------- 3. notice identity
FB1 = "Switched to Opus 4.8 due to high demand for Opus 5.5"
FB2 = "Switched to Sonnet 5.5 because Opus 4.8 is not available"


def model_fallback(uuid, content, original, fallback, trigger):
    # CLI 2.1.318 emits {type, subtype, uuid, trigger, original_model, fallback_model, content} (+ session_id)
    return {"type": "system", "subtype": "model_fallback", "uuid": uuid, "trigger": trigger, "original_model": original,
            "fallback_model": fallback, "content": content, "session_id": S}


cases["notice-identity-model-fallback"] = (
    [init(AIR), session(), prompt("t1"), user_echo("t1"),
     model_fallback("mf-1", FB1, "claude-opus-5-5", "claude-opus-4-8", "overloaded"),
     model_fallback("mf-2", FB1, "claude-opus-5-5", "claude-opus-4-8", "overloaded"),
     model_fallback("mf-3", FB2, "claude-opus-4-8", "claude-sonnet-5-5", "model_not_found"),
     real("a1", "Hello", "claude-sonnet-5-5"), result("result-1", text="Hello")],
    {"description": "item 3 with the model_fallback notice the project already handles: a consecutive update with the same text reuses the notice's id (revision 2); a notice with different text is a new occurrence (a new id, so revision 1); the newer notice does not retire the older one (both stay active: notices are never cleared by success)",
     "records": [
         {"id": "re:s1:.*notice.*", "revision": 1, "severity": "warning", "category": "unknown", "actions": [], "title": FB1, "carrier": "session_info_update"},
         {"id": "re:s1:.*notice.*", "revision": 2, "severity": "warning", "category": "unknown", "actions": [], "title": FB1, "carrier": "session_info_update"},
         {"id": "re:s1:.*notice.*", "revision": 1, "severity": "warning", "category": "unknown", "actions": [], "title": FB2, "carrier": "session_info_update"}],
     "active": {S: ["re:s1:.*notice.*", "re:s1:.*notice.*"]}})

cases["notice-identity-refusal-fallback"] = (
    [init(AIR), session(), prompt("t1"), user_echo("t1"),
     refusal_fallback(uuid="rf-1"), refusal_fallback(uuid="rf-2"),
     refusal_fallback(category="bio", uuid="rf-3"),
     real("a1", "Hello from the fake API.", "claude-opus-4-8"), result("result-1", text="Hello from the fake API.")],
    {"description": "item 3 on the reference's own notice (SessionFailureController.prepare, dist/session-failure-extension.js:255-273): same text -> same id, revision 2; different text (another category) -> new id; both stay active",
     "records": [
         {"id": "re:s1:.*notice.*", "revision": 1, "title": f"{SUM}\n\n{EXPL}"},
         {"id": "re:s1:.*notice.*", "revision": 2, "title": f"{SUM}\n\n{EXPL}"},
         {"id": "re:s1:.*notice.*", "revision": 1, "title": summary("claude-opus-5-5", "claude-opus-4-8", "bio", "The session will continue on claude-opus-4-8.") + f"\n\n{EXPL}"}],
     "active": {S: ["re:s1:.*notice.*", "re:s1:.*notice.*"]}})

# ---------------------------------------------------------------- 4. stop reasons win over is_error
cases["stop-reason-max-tokens-wins-over-is-error"] = (
    [init(AIR), session(), prompt("t1"), user_echo("t1"), real("a1", "This answer was cut off because it hit the max"),
     result("result-1", is_error=True, text="This answer was cut off because it hit the max", stop_reason="max_tokens", terminal_reason="completed"),
     prompt("t2"), user_echo("t2"), real("a2", "Partial"),
     result("result-2", subtype="error_during_execution", is_error=True, stop_reason="max_tokens", terminal_reason="completed",
            errors=["[ede_diagnostic] result_type=assistant last_content_type=text stop_reason=max_tokens"])],
    {"description": "item 4: a result with stop_reason max_tokens settles the prompt with stopReason max_tokens and publishes no failure even when is_error is true (subtype success and error_during_execution; dist/acp-agent.js:5492-5495, 5539-5542)",
     "sequence": [{"id": "t1", "result": {"stopReason": "max_tokens"}}, {"id": "t2", "result": {"stopReason": "max_tokens"}}],
     "records": [], "active": {S: []}})

cases["stop-reason-refusal-wins-over-is-error"] = (
    [init(AIR), session(), prompt("t1"), user_echo("t1"),
     synthetic("a1", NO_FALLBACK_TEXT, "invalid_request", "refusal", {"type": "refusal", "category": "cyber", "explanation": EXPL}),
     result("result-1", is_error=True, text=NO_FALLBACK_TEXT, stop_reason="refusal", terminal_reason="api_error"),
     prompt("t2"), user_echo("t2"),
     result("result-2", subtype="error_during_execution", is_error=True, stop_reason="refusal", terminal_reason="completed", errors=["refused"])],
    {"description": "item 4: a refusal (any subtype, even with is_error and a preceding assistant error kind) settles with stopReason refusal and no record; the assistant frame's stop_details.explanation is shown (dist/acp-agent.js:5432-5457)",
     "sequence": [chunk_matcher(EXPL), {"id": "t1", "result": {"stopReason": "refusal"}}, {"id": "t2", "result": {"stopReason": "refusal"}}],
     "records": [], "active": {S: []}})

# ---------------------------------------------------------------- 5. context and turn limits
cases["max-output-tokens-is-context-exhaustion"] = (
    [init(AIR), session(), prompt("t1"), user_echo("t1"), real("a1", "This answer was cut off because it hit the max"),
     synthetic("a2", MAXOUT_TEXT, "max_output_tokens"),
     result("result-1", is_error=True, text=MAXOUT_TEXT, stop_reason="stop_sequence", terminal_reason="api_error", num_turns=4)],
    {"description": "item 5: the max_output_tokens error kind is context exhaustion: limit with the new_session action, Claude's text as title (recorded live: docs/parity/transcripts/max-tokens-air.*; providerFailureCategory, dist/session-failure-extension.js:355-356)",
     "records": [{"id": "t1:error", "revision": 1, "category": "limit", "severity": "error", "actions": ["new_session"],
                  "title": MAXOUT_TEXT, "carrier": "prompt_response"}],
     "sequence": [{"id": "t1", "result": {"stopReason": "end_turn"}}]})

cases["max-turns-is-context-exhaustion"] = (
    [init(AIR), session(), prompt("t1"), user_echo("t1"), real("a1", "Let me read the file."),
     result("result-1", subtype="error_max_turns", is_error=True, stop_reason="tool_use", terminal_reason="max_turns",
            errors=["Reached maximum number of turns (2)"], num_turns=3)],
    {"description": "item 5: error_max_turns is context exhaustion (context_exhausted: limit, [new_session]); the title is the result's errors text (dist/acp-agent.js:5556-5562)",
     "records": [{"id": "t1:error", "revision": 1, "category": "limit", "severity": "error", "actions": ["new_session"],
                  "title": "Reached maximum number of turns (2)", "carrier": "prompt_response"}],
     "sequence": [{"id": "t1", "result": {"stopReason": "end_turn"}}]})

# ---------------------------------------------------------------- 6. runtime loss is never swallowed
cases["transport-loss-after-error-result"] = (
    [init(AIR), session(), prompt("t1")] + rate_limited_turn("t1") +
    [ev("query_error", message="Claude Code returned an error result: " + RATE_TEXT)],
    {"description": "item 6: a query transport loss after a turn's error result is not the SDK's ResultError echo: it is a session-scoped connection failure with new_session that stays active until runtime replacement (recorded live: docs/parity/transcripts/transport-loss-after-error-result-air.*)",
     "records": [
         {"id": "t1:error", "revision": 1, "severity": "warning", "carrier": "session_info_update"},
         {"id": "t1:error", "revision": 2, "severity": "warning", "carrier": "session_info_update"},
         {"id": "t1:error", "revision": 3, "severity": "error", "category": "limit", "carrier": "prompt_response", "title": RATE_TEXT},
         {"id": "re:s1:.+", "revision": 1, "severity": "error", "category": "connection", "actions": ["new_session"],
          "carrier": "session_info_update", "title": "re:.+"}],
     "forbid": ["returned an error result"],
     "active": {S: ["t1:error", "re:s1:.+"]}})

cases["transport-loss-between-assistant-error-and-result"] = (
    [init(AIR), session(), prompt("t1"), user_echo("t1"), synthetic("a1", RATE_TEXT, "rate_limit"),
     ev("query_error", message="Claude Code process exited with code 1")],
    {"description": "item 6: the query is lost after the failed turn's assistant error but before its result: the turn ends as a connection failure with new_session (not as the rate limit), active until runtime replacement (recorded live: docs/parity/transcripts/transport-loss-after-assistant-error-air.*)",
     "records": [{"id": "t1:error", "revision": 1, "severity": "error", "category": "connection", "actions": ["new_session"],
                  "carrier": "prompt_response", "title": "re:.+"}],
     "sequence": [{"id": "t1", "result": {"stopReason": "end_turn"}}],
     "forbid": ["exited with code"],
     "active": {S: ["t1:error"]}})

cases["worker-shutdown-announced-before-error-result"] = (
    [init(AIR), session(), prompt("t1"), user_echo("t1"), synthetic("a1", RATE_TEXT, "rate_limit"),
     {"type": "system", "subtype": "worker_shutting_down", "reason": "host_exit", "uuid": "ws-1", "session_id": S},
     result("result-1", is_error=True, text=RATE_TEXT, stop_reason="stop_sequence", terminal_reason="api_error", api_error_status=429),
     ev("query_end")],
    {"description": "item 6: worker_shutting_down arrives before the failed turn's result; the worker-shutdown EOF after that error result is a session-scoped connection failure with new_session, active until runtime replacement (dist/acp-agent.js:3984-4001: pendingWorkerShutdown at EOF)",
     "records": [
         {"id": "t1:error", "revision": 1, "severity": "error", "category": "limit", "carrier": "prompt_response"},
         {"id": "re:s1:.+", "revision": 1, "severity": "error", "category": "connection", "actions": ["new_session"], "carrier": "session_info_update"}],
     "active": {S: ["t1:error", "re:s1:.+"]}})

cases["worker-shutdown-after-error-result"] = (
    [init(AIR), session(), prompt("t1"), user_echo("t1"), synthetic("a1", RATE_TEXT, "rate_limit"),
     result("result-1", is_error=True, text=RATE_TEXT, stop_reason="stop_sequence", terminal_reason="api_error", api_error_status=429),
     {"type": "system", "subtype": "worker_shutting_down", "reason": "host_exit", "uuid": "ws-1", "session_id": S},
     ev("query_end")],
    {"description": "item 6 (regression guard): worker_shutting_down after the error result, then EOF: a session-scoped connection failure with new_session (recorded live: docs/parity/transcripts/worker-shutdown-after-error-result-air.*)",
     "records": [
         {"id": "t1:error", "revision": 1, "severity": "error", "category": "limit", "carrier": "prompt_response"},
         {"id": "re:s1:.+", "revision": 1, "severity": "error", "category": "connection", "actions": ["new_session"], "carrier": "session_info_update"}],
     "active": {S: ["t1:error", "re:s1:.+"]}})

cases["worker-shutdown-between-assistant-error-and-result"] = (
    [init(AIR), session(), prompt("t1"), user_echo("t1"), synthetic("a1", RATE_TEXT, "rate_limit"),
     {"type": "system", "subtype": "worker_shutting_down", "reason": "host_exit", "uuid": "ws-1", "session_id": S},
     ev("query_end")],
    {"description": "item 6: the worker shuts down after the failed turn's assistant error and the stream ends before its result: the turn ends as a worker-shutdown connection failure with new_session, active until runtime replacement (recorded live: docs/parity/transcripts/worker-shutdown-after-assistant-error-air.*)",
     "records": [{"id": "t1:error", "revision": 1, "severity": "error", "category": "connection", "actions": ["new_session"], "carrier": "prompt_response"}],
     "sequence": [{"id": "t1", "result": {"stopReason": "end_turn"}}],
     "active": {S: ["t1:error"]}})

# ---------------------------------------------------------------- 7. cancelled turn
cases["cancelled-turn-late-error-makes-no-record"] = (
    [init(AIR), session(), prompt("t1"), api_retry(1), user_echo("t1"), ev("cancel"),
     synthetic("a1", RATE_TEXT, "rate_limit"),
     result("result-1", subtype="error_during_execution", is_error=True, stop_reason=None, terminal_reason="aborted_streaming",
            errors=["[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null"], num_turns=2),
     prompt("t2"), user_echo("t2"), real("a2", "Hello"), result("result-2", text="Hello")],
    {"description": "item 7: after session/cancel the prompt ends cancelled; the cancelled turn's late assistant error and its error result make no record (and are not attributed to the next turn); the retry warning published before the cancel is the only record (recorded live: docs/parity/transcripts/cancel-during-retry-air.*)",
     "sequence": [{"id": "t1", "result": {"stopReason": "cancelled"}}, {"id": "t2", "result": {"stopReason": "end_turn"}}],
     "records": [{"id": "t1:error", "revision": 1, "severity": "warning", "carrier": "session_info_update"}],
     "active": {S: []}})

# ---------------------------------------------------------------- 8. legacy errors
cases["legacy-error-rate-limit"] = (
    [init({}), session(), prompt("t1")] + rate_limited_turn("t1"),
    {"description": "item 8: a legacy client gets Claude's text in the transcript and -32603 'Internal error: <result text>' with data {errorKind: <the SDK error kind>} (recorded live: docs/parity/transcripts/http429-legacy.*)",
     "sequence": [chunk_matcher(RATE_TEXT),
                  {"id": "t1", "error": {"code": -32603, "message": "Internal error: " + RATE_TEXT, "data": {"errorKind": "rate_limit"}}}],
     "records": [], "forbid": ["jetbrains"]})

cases["legacy-error-max-output-tokens"] = (
    [init({}), session(), prompt("t1"), user_echo("t1"), real("a1", "This answer was cut off because it hit the max"),
     synthetic("a2", MAXOUT_TEXT, "max_output_tokens"),
     result("result-1", is_error=True, text=MAXOUT_TEXT, stop_reason="stop_sequence", terminal_reason="api_error", num_turns=4)],
    {"description": "item 8: errorKind is the SDK kind as Claude named it (max_output_tokens), not the adapter's policy name (recorded live: docs/parity/transcripts/max-tokens-legacy.*)",
     "sequence": [{"id": "t1", "error": {"code": -32603, "message": "Internal error: " + MAXOUT_TEXT, "data": {"errorKind": "max_output_tokens"}}}],
     "records": []})

cases["legacy-error-max-turns-no-kind"] = (
    [init({}), session(), prompt("t1"), user_echo("t1"), real("a1", "Let me read the file."),
     result("result-1", subtype="error_max_turns", is_error=True, stop_reason="tool_use", terminal_reason="max_turns",
            errors=["Reached maximum number of turns (2)"], num_turns=3)],
    {"description": "item 8: without an assistant error kind there is no data at all; the message carries the result's errors text (dist/acp-agent.js:5559, errorKindData at 10211)",
     "sequence": [{"id": "t1", "error": {"code": -32603, "message": "Internal error: Reached maximum number of turns (2)", "data": "$absent"}}],
     "records": []})

cases["legacy-error-authentication"] = (
    [init({}), session(), prompt("t1"), api_retry(1, 401, "authentication_failed"), api_retry(2, 401, "authentication_failed"), user_echo("t1"),
     synthetic("a1", "Invalid API key · Fix external API key", "authentication_failed"),
     result("result-1", is_error=True, text="Invalid API key · Fix external API key", stop_reason="stop_sequence", terminal_reason="api_error", api_error_status=401)],
    {"description": "item 8: authentication is -32000 'Authentication required' with no data (recorded live: docs/parity/transcripts/http401-legacy.*)",
     "sequence": [{"id": "t1", "error": {"code": -32000, "message": "Authentication required", "data": "$absent"}}],
     "records": []})

cases["legacy-error-worker-shutdown"] = (
    [init({}), session(), prompt("t1"), user_echo("t1"), synthetic("a1", RATE_TEXT, "rate_limit"),
     {"type": "system", "subtype": "worker_shutting_down", "reason": "host_exit", "uuid": "ws-1", "session_id": S},
     ev("query_end")],
    {"description": "item 8 (+6): a worker-shutdown EOF mid-turn answers a legacy client -32603 'Internal error' (no text) with data {errorKind: worker_shutdown} (recorded live: docs/parity/transcripts/worker-shutdown-after-assistant-error-legacy.*)",
     "sequence": [{"id": "t1", "error": {"code": -32603, "message": "Internal error", "data": {"errorKind": "worker_shutdown"}}}],
     "records": []})

# ---------------------------------------------------------------- 9. every SDK usage-limit prefix
cases["usage-limit-fable-prefix-live"] = (
    [init(AIR), session(), prompt("t1"), user_echo("t1"), synthetic("a1", FABLE_TEXT, "rate_limit"),
     result("result-1", is_error=True, text=FABLE_TEXT, stop_reason="stop_sequence", terminal_reason="api_error", api_error_status=429)],
    {"description": "item 9: 'Fable 5 requires usage credits' is one of the SDK's 12 USAGE_LIMIT_ERROR_PREFIXES: the synthetic message is an account quota failure (limit, no actions), not a retryable rate limit (quota_exhausted, dist/session-failure-extension.js:64-68, 329-331)",
     "records": [{"id": "t1:error", "revision": 1, "category": "limit", "severity": "error", "actions": [], "title": FABLE_TEXT, "carrier": "prompt_response"}],
     "active": {S: ["t1:error"]}})

cases["usage-limit-fable-prefix-replay"] = (
    [init(AIR), ev("load", sessionId=S, history=[
        {"type": "user", "uuid": "u1", "session_id": S, "parent_tool_use_id": None, "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}},
        {"type": "assistant", "uuid": "m1", "session_id": S, "parent_tool_use_id": None, "message": {"id": "api-m1", "model": "<synthetic>", "role": "assistant", "type": "message", "stop_reason": "stop_sequence", "content": [{"type": "text", "text": FABLE_TEXT}]}}])],
    {"description": "item 9: session/load replays a synthetic 'Fable 5 requires usage credits' message as a typed usage-limit record with the stored user uuid as turn id; the prose is not duplicated; it stays active (isSyntheticUsageLimitMessage, dist/session-failure-extension.js:121-131)",
     "records": [{"id": "u1:error", "revision": 1, "category": "limit", "severity": "error", "actions": [], "title": FABLE_TEXT, "carrier": "session_info_update"}],
     "forbid_messages": [chunk_matcher("re:(?s).*Fable 5 requires usage credits.*")],
     "active": {S: ["u1:error"]}})

# ---------------------------------------------------------------- extra: login text variants (spec: synthetic login message -> access)
LOGIN_EXPIRED = "Login expired · Run /login to sign in again, or re-authenticate your Anthropic profile"
cases["login-expired-invalid-request-is-access"] = (
    [init(AIR), session(), prompt("t1"), user_echo("t1"), synthetic("a1", LOGIN_EXPIRED, "invalid_request"),
     result("result-1", is_error=True, text=LOGIN_EXPIRED, stop_reason="stop_sequence", terminal_reason="api_error", api_error_status=401)],
    {"description": "extra (spec: synthetic login message -> access, authentication -> login): an expired login arrives with the error kind invalid_request; the reference recognises any 'run /login' text (isLoginRequiredText, dist/acp-agent.js:836-838; isSyntheticLoginMessage 859-873) and treats it as authentication. Per the spec a capable client gets an access record with login on the PromptResponse (the reference answers -32000 instead)",
     "records": [{"id": "t1:error", "revision": 1, "category": "access", "severity": "error", "actions": ["login"], "title": LOGIN_EXPIRED, "carrier": "prompt_response"}],
     "active": {S: ["t1:error"]}})

for name, (lines, expect) in cases.items():
    with open(os.path.join(OUT, f"{name}.input.jsonl"), "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    with open(os.path.join(OUT, f"{name}.expect.json"), "w", encoding="utf-8") as f:
        json.dump(expect, f, ensure_ascii=False, indent=1)
        f.write("\n")
print(len(cases), "cases written to", OUT)
