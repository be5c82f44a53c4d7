"""The stateful machine of the proxy's edge (issue 53.3): one real ``Relay`` (and so the core's
``SessionLedger`` fed with provider-neutral events) driven by what happens between an ACP client
and an ACP agent, with a tiny reference model beside it. Not a test module:
tests/test_stateful_agents.py runs it.

Every rule is named after something that happens (the client prompts, the provider rejects the
request, the agent exits, ...), and writes the frames as the agents of issue 53 send them
(gemini-cli's HTTP status as the code, codex-acp's ``-32603`` with ``data`` and its per-prompt
notice, ACP stop reasons; the agent is codex-acp);
every invariant's docstring is the spec sentence (or the issue's rule) it checks.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from lifecycle.proxy import Relay, ToAgent, ToClient

CAPABLE = {"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}}
SESSIONS = ("s1", "s2")
#: codex-acp 0.16.0's notice at every prompt (measured; docs/proxy.md "Silent failures and retries")
NOTICE = "Model metadata for `fake-model` not found. Defaulting to fallback metadata; this can degrade performance."
#: (JSON-RPC code, message, data) as the agents send a failed prompt (issue 53, docs/proxy.md)
ERRORS = {
    "gemini_429": (429, "Resource has been exhausted (e.g. check quota).", None),
    "gemini_500": (500, '{"error": {"code": 500, "message": "Internal error encountered."}}', None),
    "codex_capacity": (
        -32603,
        "Internal error",
        {"message": "Selected model is at capacity.", "codex_error_info": "server_overloaded"},
    ),
    "auth_required": (-32000, "Authentication required", None),
    "invalid_params": (-32602, "Invalid params", None),  # a protocol error: never a record
}


def _record(message: dict[str, Any]) -> dict[str, Any] | None:
    holder = message.get("result") or (message.get("params") or {}).get("update") or {}
    meta = holder.get("_meta") if isinstance(holder, dict) else None
    found: Any = meta.get("jetbrains", {}).get("air", {}).get("sessionFailure") if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else None


class ProxySession(RuleBasedStateMachine):
    """A client and an agent through one relay (see the module)."""

    def __init__(self) -> None:
        super().__init__()
        self._reset()

    def _reset(self) -> None:
        ids = itertools.count(1)
        self.relay = Relay(command="codex-acp", new_turn_id=lambda: f"t{next(ids)}", new_epoch=lambda: f"e{next(ids)}")
        self.capable = False
        self.exited = False
        self.next_id = itertools.count(10)
        # the reference model: per session, the running prompt's request id and what it showed
        self.running: dict[str, dict[str, Any]] = {}
        self.answered: set[object] = set()
        self.sent_by_agent: list[bytes] = []  # every agent line, for the plain client's check
        self.to_client: list[bytes] = []  # every line the client received from the agent's side
        self.seen: dict[str, int] = {}  # record id -> the highest revision the client received
        self.kept_ids: dict[str, list[str]] = {s: [] for s in SESSIONS}
        self.last: list[Any] = []  # what the last step sent the client
        self._last_session = ""

    # ------------------------------------------------------------------ driving

    def _agent(self, message: dict[str, Any]) -> list[Any]:
        line = json.dumps(message).encode()
        self.sent_by_agent.append(line)
        return self._take(self.relay.from_agent(line))

    def _take(self, outs: list[Any]) -> list[Any]:
        lines = [o.line for o in outs if isinstance(o, ToClient)]
        self.to_client.extend(lines)
        self.last = [json.loads(line) for line in lines]
        note(f"client got {self.last}")
        for message in self.last:
            rec = _record(message)
            if rec is not None:
                assert rec["revision"] > self.seen.get(rec["id"], 0) or self._replaying, (
                    f"spec 'Identity': a record's revision must increase: {rec}"
                )
                self.seen[rec["id"]] = max(rec["revision"], self.seen.get(rec["id"], 0))
        return self.last

    _replaying = False

    @initialize(capable=st.booleans())
    def client_initializes(self, capable: bool) -> None:
        self.capable = capable
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"clientCapabilities": CAPABLE if capable else {}},
        }
        assert self.relay.from_client(json.dumps(init).encode()) == [ToAgent(json.dumps(init).encode())]
        self._agent({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "agentInfo": {"name": "codex-acp"}}})

    # ------------------------------------------------------------------ rules

    @precondition(lambda self: not self.exited)
    @rule(session=st.sampled_from(SESSIONS))
    def client_prompts(self, session: str) -> None:
        if session in self.running:
            return  # one prompt at a time per session (ACP)
        request_id = next(self.next_id)
        params = {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params}).encode()
        assert self.relay.from_client(line) == [ToAgent(line)], "a client's line reaches the agent unchanged"
        self.running[session] = {"id": request_id, "shown": False, "answered": False, "cancelled": False}

    @precondition(lambda self: not self.exited and bool(self.running))
    @rule(data=st.data())
    def agent_streams_text(self, data: st.DataObject) -> None:
        self._text(data.draw(st.sampled_from(sorted(self.running))), "Hello")
        # a real answer (docs/proxy.md): what the turn showed, and what recovers
        self.running[self._last_session].update(shown=True, answered=True)

    @precondition(lambda self: not self.exited and bool(self.running))
    @rule(data=st.data())
    def codex_sends_its_notice(self, data: st.DataObject) -> None:
        # codex-acp's own notice is neither an answer nor something the turn showed
        self._text(data.draw(st.sampled_from(sorted(self.running))), NOTICE)

    def _text(self, session: str, words: str) -> None:
        self._last_session = session
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": words}}
        out = self._agent(
            {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}}
        )
        assert len(out) == 1 and _record(out[0]) is None, "issue 53: recovery publishes nothing"

    @precondition(lambda self: not self.exited and bool(self.running))
    @rule(data=st.data())
    def agent_runs_a_tool(self, data: st.DataObject) -> None:
        session = data.draw(st.sampled_from(sorted(self.running)))
        update = {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "ls"}
        self._agent({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}})
        self.running[session]["shown"] = True

    @precondition(lambda self: not self.exited and bool(self.running))
    @rule(data=st.data())
    def client_cancels(self, data: st.DataObject) -> None:
        session = data.draw(st.sampled_from(sorted(self.running)))
        line = json.dumps({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}).encode()
        self.relay.from_client(line)
        self.running[session]["cancelled"] = True

    @precondition(lambda self: not self.exited and bool(self.running))
    @rule(data=st.data(), kind=st.sampled_from(sorted(ERRORS)))
    def provider_rejects_the_request(self, data: st.DataObject, kind: str) -> None:
        session = data.draw(st.sampled_from(sorted(self.running)))
        prompt = self.running.pop(session)
        code, message, extra = ERRORS[kind]
        error: dict[str, Any] = {"code": code, "message": message, **({"data": extra} if extra else {})}
        [answer] = self._agent({"jsonrpc": "2.0", "id": prompt["id"], "error": error})
        self._answered(session, prompt, answer, failed=kind != "invalid_params")

    @precondition(lambda self: not self.exited and bool(self.running))
    @rule(data=st.data(), stop=st.sampled_from(("end_turn", "refusal", "max_tokens", "cancelled")))
    def agent_ends_the_turn(self, data: st.DataObject, stop: str) -> None:
        session = data.draw(st.sampled_from(sorted(self.running)))
        prompt = self.running.pop(session)
        [answer] = self._agent({"jsonrpc": "2.0", "id": prompt["id"], "result": {"stopReason": stop}})
        failed = stop in ("refusal", "max_tokens") or (stop == "end_turn" and not prompt["shown"])
        self._answered(session, prompt, answer, failed=failed)
        assert answer["result"]["stopReason"] == stop, "the agent's stop reason stays authoritative"

    @precondition(lambda self: not self.exited)
    @rule(session=st.sampled_from(SESSIONS))
    def client_loads_the_session(self, session: str) -> None:
        if session in self.running:
            return
        request_id = next(self.next_id)
        load = {"sessionId": session, "cwd": "/p", "mcpServers": []}
        self.relay.from_client(
            json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "session/load", "params": load}).encode()
        )
        self._replaying = True
        try:
            out = self._agent({"jsonrpc": "2.0", "id": request_id, "result": {}})
        finally:
            self._replaying = False
        replayed = [_record(m) for m in out[:-1]]
        assert [r["id"] for r in replayed if r] == self.kept_ids[session], (
            "issue 53.2: the records survive session/load, each once, in the order they were published"
        )
        assert all(r is not None and r["revision"] == self.seen[r["id"]] for r in replayed), (
            "replayed at its last revision"
        )

    @precondition(lambda self: not self.exited)
    @rule()
    def agent_process_exits(self) -> None:
        self.exited = True
        out = self._take(self.relay.agent_exited())
        answers = {m["id"]: m for m in out if "id" in m}
        assert sorted(answers) == (sorted(p["id"] for p in self.running.values()) if self.capable else []), (
            "issue 53.2: an agent that dies mid-prompt: the prompt still answered (a capable client)"
        )
        for prompt in self.running.values() if self.capable else ():
            answer = answers[prompt["id"]]
            rec = _record(answer)
            if prompt["cancelled"]:  # a cancelled turn makes no record: it is answered cancelled
                assert rec is None and answer["result"]["stopReason"] == "cancelled"
            else:
                assert rec is not None and rec["category"] == "connection" and rec["actions"] == ["new_session"]
            self.answered.add(prompt["id"])
        for message in out:
            rec = _record(message)
            assert rec is None or (rec["category"], rec["actions"]) == ("connection", ["new_session"])
        self.running.clear()

    @precondition(lambda self: self.exited)
    @rule()
    def client_starts_the_proxy_again(self) -> None:
        # The proxy exits with its agent: the editor starts a new one (nothing is carried over).
        capable = self.capable
        self._reset()
        self.client_initializes(capable)

    # ------------------------------------------------------------------ the model's bookkeeping

    def _answered(self, session: str, prompt: dict[str, Any], answer: dict[str, Any], *, failed: bool) -> None:
        assert answer["id"] == prompt["id"] and prompt["id"] not in self.answered, "a prompt is answered once"
        self.answered.add(prompt["id"])
        rec = _record(answer)
        if not self.capable or prompt["cancelled"]:
            assert rec is None, "no record for a plain client, nor for a cancelled turn"
            return
        if failed:
            assert rec is not None and rec["severity"] == "error", (
                "spec 'Delivery surfaces': the record rides the answer"
            )
            assert rec["id"].endswith(":error"), "spec 'Identity': live turn failures use <turnId>:error"
            assert rec["id"] not in self.kept_ids[session], "a later independent occurrence uses a new id"
            self.kept_ids[session].append(rec["id"])
        else:
            assert rec is None, "a turn that answered carries no record"
        if not failed and prompt["answered"]:
            assert self.relay.active(session) == (), "issue 53.2: recovery at the next real answer"

    # ------------------------------------------------------------------ invariants

    @invariant()
    def a_plain_client_gets_every_line_unchanged(self) -> None:
        """Issue 53.1: "For a client that did not negotiate ``sessionFailure``, every frame passes
        through unchanged"."""
        if not self.capable:
            assert self.to_client == self.sent_by_agent

    @invariant()
    def only_a_capable_client_has_records(self) -> None:
        """Spec "Capability negotiation": "If no capable client negotiated the extension, existing
        JSON-RPC errors and transcript text remain unchanged"."""
        if not self.capable:
            assert self.seen == {} and all(self.relay.kept(s) == () for s in SESSIONS)

    @invariant()
    def active_incidents_are_published_ones(self) -> None:
        """Spec "Internal recovery": active state is internal; every active incident is one the
        client was shown."""
        for session in SESSIONS:
            assert set(self.relay.active(session)) <= set(self.seen)
