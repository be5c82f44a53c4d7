"""The reference adapter as an oracle: one fault matrix through both agents, one ACP client.

``python -m lifecycle.agent`` and the reference ``@agentclientprotocol/claude-agent-acp`` 0.101.0
(installed by :mod:`tests.e2e.reference` into a cache dir) are each driven by the real Python ACP
SDK client over stdio (the harness of ``agent_under_test.py``), against their own loopback fake API
(``fakeapi.py``, 127.0.0.1 only) answering the same script, and both run **the same Claude Code
CLI**: 2.1.332, the one ``claude-agent-sdk`` bundles (``LIFECYCLE_ACP_CLI`` for ours,
``CLAUDE_CODE_EXECUTABLE`` for the reference). Not the reference's own 2.1.318: only 2.1.332 turns
the gateway-token 429 into the CLI's usage-limit message (docs/parity/README.md, "One attempt did
not reproduce anything useful"), and it is the CLI every other e2e test and recording uses.

What each client received is normalised (session ids, UUIDs, epochs, ports) and compared field
by field: the prompt's answer (stop reason, or a legacy error's code/message/data), the typed
records (carrier, id, revision, category, severity, title, details, actions), the ACP notices and
the agent text, chunk by chunk (both agents stream Claude's text one ``agent_message_chunk`` per
text delta, and send a failure's prose or a notice banner as one chunk). Update kinds that carry
no failure (``available_commands_update``, ``usage_update``, ...) and the answer's ``usage`` are
not compared: the reference sends ``usage_update`` while a message streams as well as at its
result, and a zero ``usage`` on a failed turn; the project one ``usage_update`` per result, and
``usage`` only with a result's counts (``test_reference_oracle_tools.py`` compares a coding turn's
``usage`` and last ``usage_update``).

Every difference must be listed in :data:`KNOWN`, each under a point of :data:`SPEC_OVER_REFERENCE`,
which is the table "Where the project follows the spec and not the reference" of
docs/parity/README.md, encoded as data (``test_the_known_points_are_the_documented_table`` keeps the
two in sync). An unlisted difference fails: it is a divergence to fix, or a point to document.
A listed difference excuses only what its point is about (:data:`STILL_AGREE`: the retry records
are still compared without their ids and revisions). Each exchange must also have reached the fake
API and used up its script, so two agents failing the same way before the fault is injected (a
CLI that does not start, a wrong port) cannot agree their way to a pass.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import acp
import pytest

from .agent_under_test import overloaded, rate_limited, unauthorized
from .fakeapi import CloseReply, StallReply, refusal_reply
from .harness import AIR, MAX_RETRIES, ROOT, Outcome, first_model_refuses, is_prompt_suggestion
from .oracle import IMPLS, OracleAgent, Seen, pair, seen

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

README = ROOT / "docs" / "parity" / "README.md"
# ------------------------------------------------------------------ the documented differences

#: docs/parity/README.md, "Where the project follows the spec and not the reference": the first
#: column of every row, verbatim. Keep in sync (checked below).
SPEC_OVER_REFERENCE: tuple[str, ...] = (
    "`api_retry` progress",
    "authentication, capable client",
    "prompt too long",
    "`system/model_fallback`",
    "`reason` field on records",
    "stream ends without a result",
    "replayed occurrence ids",
    "login messages in a legacy client's replay",
    "`verification_required`, `cloud_credential_error`",
    "recoverable internal error actions",
    "replayed record revision",
    "where `sessionFailure` is advertised",
    "notices kept active",
    "authentication recovery",
    "`account_on_hold`, `billing_error`",
    "`error_max_*` result without `is_error`",
    "a usage limit's reset in a legacy error",
)

#: (scenario, client, field) -> the point of SPEC_OVER_REFERENCE that explains the difference.
KNOWN: dict[tuple[str, str, str], str] = {
    # retry warnings: the reference's are session-scoped, ours revise the turn's failure id
    **{
        (s, "capable", "records"): "`api_retry` progress"
        for s in ("rate_limit", "overloaded", "overloaded_then_ok", "dropped", "fail_then_ok", "cancel_during_retry")
    },
    ("unauthorized", "capable", "records"): "authentication, capable client",
    ("unauthorized", "capable", "answer"): "authentication, capable client",
    ("prompt_too_long", "capable", "records"): "prompt too long",
    ("load_usage_limit", "capable", "records"): "replayed record revision",
}

#: For a known difference, the part of the field that must still agree: the ``api_retry`` point is
#: about ids and revisions only (session-scoped ids there, one revised id here), so the records'
#: carriers, categories, severities, titles, details and actions are still compared, in order.
STILL_AGREE: dict[str, Callable[[Any], Any]] = {
    "`api_retry` progress": lambda records: [[r[0], *r[3:]] for r in records],
    "a usage limit's reset in a legacy error": lambda answer: _without_reset(answer),
}


def _without_reset(answer: Any) -> Any:
    """A legacy answer without the reset our agent adds beside ``errorKind`` (issue 52.2): the
    agent keeps the last window Claude Code reported rejected across its sessions, so with one
    agent serving the scenarios one after another, any later limit failure may carry it."""
    if not isinstance(answer, dict) or not isinstance(answer.get("error"), dict):
        return answer
    error = dict(answer["error"])
    if isinstance(error.get("data"), dict):
        error["data"] = {k: v for k, v in error["data"].items() if k not in ("resetsAt", "retryAfterSeconds")}
    return {**answer, "error": error}

#: Differences found once the retry records were compared, that docs/parity/README.md does not list
#: yet (a row there is the lead's to add; then the entry moves to :data:`KNOWN`). Each is exactly one
#: field of the turn's terminal record: (ours, the reference's); everything else must agree. None
#: today: ``dropped``'s terminal record (``connection`` here before issue 21's rule 3) is
#: ``service`` on both sides now ("`server_error` ... → `service`"; only a retry without an HTTP
#: response is ``connection``).
AWAITING_A_ROW: dict[tuple[str, str, str], tuple[str, str]] = {}


def _terminal_category(records: list[Any], category: str) -> list[Any]:
    """``records`` (carrier, category, severity, ...: without ids and revisions) with the terminal
    record's category checked to be ``category`` and left out."""
    *rest, last = records
    assert last[0] == "prompt_response" and last[1] == category, last
    return [*rest, [last[0], *last[2:]]]


# ------------------------------------------------------------------ both agents


def compare(scenario: str, client: str, ours: list[Seen], ref: list[Seen]) -> None:
    """Fail on any difference that :data:`KNOWN` does not list."""
    assert len(ours) == len(ref)
    unlisted = []
    for step, (a, b) in enumerate(zip(ours, ref, strict=True)):
        for name in ("answer", "records", "notices", "text"):
            mine, theirs = getattr(a, name), getattr(b, name)
            point = KNOWN.get((scenario, client, name))
            awaited = AWAITING_A_ROW.get((scenario, client, name))
            if awaited is not None:
                mine, theirs = STILL_AGREE["`api_retry` progress"](mine), STILL_AGREE["`api_retry` progress"](theirs)
                mine, theirs = _terminal_category(mine, awaited[0]), _terminal_category(theirs, awaited[1])
            elif point in STILL_AGREE:
                mine, theirs = STILL_AGREE[point](mine), STILL_AGREE[point](theirs)
            elif point is not None:
                continue
            if mine != theirs:
                unlisted.append(f"step {step} {name}:\n  ours:      {mine!r}\n  reference: {theirs!r}")
    assert not unlisted, f"{scenario} / {client}: unlisted differences\n" + "\n".join(unlisted)


# ------------------------------------------------------------------ the matrix

Exchange = Callable[[OracleAgent, str], Outcome]


def prompt(*replies: Any, then: Any = "success") -> Exchange:
    return lambda agent, sid: agent.run_prompt(sid, "hi", *replies, then=then)


def load() -> Exchange:
    exchange: Exchange = lambda agent, sid: agent.load(sid)  # noqa: E731
    LOADS.add(exchange)
    return exchange


#: The exchanges that ask Claude nothing (``session/load`` replays the transcript).
LOADS: set[Exchange] = set()


def cancel_during_retry() -> Exchange:
    def run(agent: OracleAgent, sid: str) -> Outcome:
        agent.script.load(rate_limited(), then=StallReply(30))
        before = len(agent.api.message_requests)

        async def go() -> Any:
            task = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[acp.text_block("hi")]))
            await asyncio.to_thread(agent.api.wait_for_requests, before + 2, 30)  # the retry is in flight
            await agent.conn.cancel(session_id=sid)
            return await asyncio.wait_for(task, 30)

        return agent.exchange(sid, go(), 90)

    return run


def refusal_then_fallback() -> Exchange:
    """The first model refuses every request; the CLI's fallback model answers."""

    def run(agent: OracleAgent, sid: str) -> Outcome:
        agent.script.load(then=first_model_refuses(refusal_reply, "success"))
        return agent.exchange(sid, agent.conn.prompt(session_id=sid, prompt=[acp.text_block("hi")]), 90)

    return run


R429 = [rate_limited()] * (MAX_RETRIES + 1)
SCENARIOS: dict[str, list[Exchange]] = {
    "rate_limit": [prompt(*R429)],
    "overloaded": [prompt(*[overloaded()] * (MAX_RETRIES + 1))],
    "overloaded_then_ok": [prompt(overloaded(), "success")],
    "dropped": [prompt(*[CloseReply()] * (MAX_RETRIES + 1))],
    "unauthorized": [prompt(then=unauthorized())],
    "bad_request": [prompt(then="http400")],
    "prompt_too_long": [prompt(then="http400_prompt_too_long")],
    "billing_402": [prompt(then="http402_billing")],
    "model_404": [prompt(then="http404_model")],
    "usage_limit": [prompt("usage_limit_gateway")],
    "fail_then_ok": [prompt(*R429), prompt("success")],
    "cancel_during_retry": [cancel_during_retry()],
    "load_usage_limit": [prompt("usage_limit_gateway"), load()],
    "refusal_fallback": [refusal_then_fallback()],
}
MATRIX = [(s, c) for s in SCENARIOS for c in ("capable", "plain")] + [("refusal_fallback", "notices")]
KNOWN.update({(s, "plain", "answer"): "a usage limit's reset in a legacy error" for s in SCENARIOS})


@pytest.mark.parametrize(("scenario", "client"), MATRIX, ids=[f"{s}-{c}" for s, c in MATRIX])
def test_both_agents_agree(scenario: str, client: str, oracle_pairs: Callable[[str], dict[str, OracleAgent]]) -> None:
    """Each scenario in a new session of the module's two agents for its client kind."""
    observed: dict[str, list[Seen]] = {}
    for impl, agent in oracle_pairs(client).items():
        sid = agent.new_session()
        observed[impl] = []
        for step in SCENARIOS[scenario]:
            before = len(agent.api.message_requests)
            observed[impl].append(seen(step(agent, sid)))
            scripted = [r for r in agent.api.message_requests[before:] if not is_prompt_suggestion(r)]
            # the fault really happened: the API was asked, and every scripted reply was given
            # (two agents failing the same way before reaching it would otherwise agree)
            assert agent.script.left == 0, (impl, step, agent.script.left)
            if step not in LOADS:
                assert scripted, (impl, "no request reached the fake API")
    compare(scenario, client, observed["ours"], observed["reference"])


NEGOTIATION: dict[str, dict[str, Any]] = {
    "air-v1": {"_meta": AIR},
    "air-v2-extra": {"_meta": {"jetbrains": {"air": {"version": 2, "capabilities": ["x", "sessionFailure"]}}}},
    "air-v0": {"_meta": {"jetbrains": {"air": {"version": 0, "capabilities": ["sessionFailure"]}}}},
    "air-other-capability": {"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["other"]}}}},
    "plain": {},
}


def _advertises(meta: Any) -> bool:
    air = (meta or {}).get("jetbrains", {}).get("air", {})
    return "sessionFailure" in (air.get("capabilities") or [])


def test_negotiation_variants_agree(reference_package: Path, tmp_path: Path) -> None:
    """Where each agent advertises ``sessionFailure`` (the ``InitializeResponse``'s own ``_meta``,
    or ``agentCapabilities._meta``) and ``loadSession``, for each client declaration: the part of
    ``initialize`` the extension owns."""
    advertised: dict[str, dict[str, Any]] = {impl: {} for impl in IMPLS}
    with pair("plain", tmp_path, reference_package) as agents:
        for impl, agent in agents.items():
            for name, caps in NEGOTIATION.items():
                agent.call(agent.initialize(caps))
                result = agent.init["result"]
                advertised[impl][name] = {
                    "loadSession": result["agentCapabilities"].get("loadSession"),
                    "initialize._meta": _advertises(result.get("_meta")),
                    "agentCapabilities._meta": _advertises(result["agentCapabilities"].get("_meta")),
                }
    # "where `sessionFailure` is advertised" (docs/parity/README.md): the reference advertises in
    # the InitializeResponse's own _meta to every client that declared AIR at all (not to a plain
    # client); we advertise in agentCapabilities._meta
    # to a client that negotiated it, and leave a legacy client's initialize unchanged.
    negotiated = {"air-v1": True, "air-v2-extra": True, "air-v0": False, "air-other-capability": False, "plain": False}
    assert advertised["ours"] == {
        name: {"loadSession": True, "initialize._meta": False, "agentCapabilities._meta": ok}
        for name, ok in negotiated.items()
    }
    assert advertised["reference"] == {
        name: {"loadSession": True, "initialize._meta": name != "plain", "agentCapabilities._meta": False}
        for name in negotiated
    }


def test_the_known_points_are_the_documented_table() -> None:
    """:data:`SPEC_OVER_REFERENCE` is the README table's first column, and every allowance in
    :data:`KNOWN` names one of its points and a real scenario."""
    text = README.read_text()
    section = text.split("## Where the project follows the spec and not the reference", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| point")]
    points = tuple(row.split(" | ")[0].removeprefix("| ").strip() for row in rows if not row.startswith("| ---"))
    assert points == SPEC_OVER_REFERENCE
    for (scenario, client, name), point in KNOWN.items():
        assert point in SPEC_OVER_REFERENCE
        assert (scenario, client) in MATRIX and name in ("answer", "records", "notices", "text")
