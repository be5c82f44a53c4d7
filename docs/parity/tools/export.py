import json, os, glob, sys
SRC = "/tmp/parity/out"; DST = "docs/parity/transcripts"
RUNS = ["success-air", "success-notices", "http429-air", "http429-legacy", "max-tokens-air", "max-tokens-legacy",
        "http401-air", "http401-legacy", "refusal-fallback-ok-air", "refusal-fallback-ok-legacy", "refusal-fallback-ok-notices",
        "refusal-fallback-ok-air+notices", "refusal-long-air", "refusal-long-legacy", "refusal-long-notices",
        "refusal-air", "refusal-legacy", "refusal-nofallback-air", "refusal-nofallback-legacy",
        "transport-loss-after-error-result-air", "transport-loss-after-error-result-legacy",
        "transport-loss-after-assistant-error-air", "transport-loss-after-assistant-error-legacy",
        "worker-shutdown-after-error-result-air", "worker-shutdown-after-error-result-legacy",
        "worker-shutdown-after-assistant-error-air", "worker-shutdown-after-assistant-error-legacy",
        "cancel-air", "cancel-during-retry-air", "replay-item10-air", "transport-loss-race-legacy", "transport-loss-race-air", "http429-two-prompts-air"]
for run in RUNS:
    src = os.path.join(SRC, run + ".frames.jsonl")
    with open(src) as f, open(os.path.join(DST, run + ".frames.jsonl"), "w") as out:
        for line in f:
            fr = json.loads(line)
            m = fr["msg"]
            if isinstance(m, dict) and m.get("method") == "session/update":
                u = m["params"]["update"]
                if u.get("sessionUpdate") == "available_commands_update" and isinstance(u.get("availableCommands"), list):
                    u["availableCommands"] = f"[{len(u['availableCommands'])} commands elided]"
            out.write(json.dumps(fr, ensure_ascii=False) + "\n")
    cli = os.path.join(SRC, run + ".cli-stdout.jsonl")
    if os.path.exists(cli):
        with open(cli) as f, open(os.path.join(DST, run + ".cli-messages.jsonl"), "w") as out:
            for line in f:
                try:
                    o = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(o, dict) or o.get("type") in ("control_response", "control_request", "control_cancel_request", "keep_alive", "stream_event"):
                    continue
                out.write(line if line.endswith("\n") else line + "\n")
    req = os.path.join(SRC, run + ".api-requests.jsonl")
    if os.path.exists(req) and os.path.getsize(req):
        with open(req) as f, open(os.path.join(DST, run + ".api-requests.jsonl"), "w") as out:
            for line in f:
                if "count_tokens" not in line:
                    out.write(line)
print("ok")
