// Exercises the reference's own SessionFailureController / providerFailureCategory (dist/session-failure-extension.js)
// outside the agent: notice identity, the policy table and the error-kind mapping.
import { SessionFailureController, createSessionFailureState, providerFailureCategory } from "/tmp/ref/package/dist/session-failure-extension.js";
const caps = { _meta: { jetbrains: { air: { version: 1, capabilities: ["sessionFailure"] } } } };
const sent = [];
const state = createSessionFailureState();
state.epoch = "EPOCH"; // fixed for a readable transcript
const c = new SessionFailureController({ sessionId: "s1", state, capabilities: caps, isCurrent: () => true,
  sendUpdate: async (n) => { sent.push(n.update._meta.jetbrains.air.sessionFailure); }, logger: console });
const show = (label) => { const r = sent.at(-1); console.log(JSON.stringify({ step: label, id: r.id, revision: r.revision, title: r.title })); };
console.log("## notice identity");
await c.publish("advisory", { title: "A" }); show("advisory A");
await c.publish("advisory", { title: "A" }); show("advisory A again (consecutive)");
await c.publish("advisory", { title: "B" }); show("advisory B");
await c.publish("advisory", { title: "A" }); show("advisory A after B");
await c.publish("rate_limited", { title: "Retrying", severity: "warning" }); show("session-scoped warning (no turn)");
await c.publish("advisory", { title: "A" }); show("advisory A after another record");
await c.clear((f) => false); // what every result does (clearFailuresFromEarlierTurns): resets lastNotice
await c.publish("advisory", { title: "A" }); show("advisory A after a clear() (a result)");
console.log("active ids:", JSON.stringify([...state.active.keys()]));
console.log("## policy table (prepare(kind) for a turn-scoped error and for a session-scoped one)");
const kinds = ["access_denied","advisory","auth_required","bad_request","budget_exhausted","context_exhausted","internal_error","overloaded","provider_error","quota_exhausted","rate_limited","transport_lost","worker_shutdown"];
for (const k of kinds) {
  const t = await c.prepare(k, { turnId: "t1" });
  const s = await c.prepare(k, {});
  console.log(JSON.stringify({ kind: k, category: t.category, severity: t.severity, actions: t.actions, fallbackTitle: t.title, recovery_turn: t.recoveryPolicy, recovery_session: s.recoveryPolicy, id_turn: t.id }));
}
const w = await c.prepare("rate_limited", { turnId: "t1", severity: "warning", title: "Retrying Claude, attempt 1 of 2." });
console.log("warning on a turn:", JSON.stringify({ id: w.id, actions: w.actions, severity: w.severity, recovery: w.recoveryPolicy }));
console.log("## providerFailureCategory(errorKind)");
for (const k of ["authentication_failed","oauth_org_not_allowed","billing_error","account_on_hold","verification_required","cloud_credential_error","rate_limit","overloaded","invalid_request","model_not_found","max_output_tokens","server_error","unknown",undefined,"something_new"]) {
  console.log(JSON.stringify({ errorKind: k ?? null, kind: providerFailureCategory(k), usageLimit: providerFailureCategory(k, true) }));
}
