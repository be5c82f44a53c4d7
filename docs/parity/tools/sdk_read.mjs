// What the reference's SDK returns for the crafted transcript, and what the reference concludes from it.
import { getSessionMessages } from "/tmp/ref/package/node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs";
import { isSyntheticUsageLimitMessage, activeUsageLimitMessage, assistantMessageText } from "/tmp/ref/package/dist/session-failure-extension.js";
const [sid, cwd] = process.argv.slice(2);
const msgs = await getSessionMessages(sid, { dir: cwd });
for (const m of msgs) console.log(JSON.stringify({ type: m.type, uuid: m.uuid, model: m.message?.model, text: assistantMessageText(m.message)?.slice(0, 80), usageLimit: m.type === "assistant" ? isSyntheticUsageLimitMessage(m.message) : undefined }));
console.log("activeUsageLimitMessage:", JSON.stringify(activeUsageLimitMessage(msgs)));
