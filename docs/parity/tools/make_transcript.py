"""Writes a crafted Claude Code transcript for item 10 into CONFIG/projects/<encoded cwd>/<sid>.jsonl.
Lines: u1 prompt; m1 synthetic usage limit written message-first and with an invalid UTF-8 byte in its text;
u2 prompt; m2 synthetic usage limit (type-first, clean); u3 prompt; m3 a real answer written message-first
(as CLI 2.1.332 writes real answers) whose tool_use input holds a "type":"user" key."""
import json, os, sys
cfg, cwd, sid = sys.argv[1], sys.argv[2], sys.argv[3]
d = os.path.join(cfg, "projects", cwd.replace("/", "-"))
os.makedirs(d, exist_ok=True)
def dumps(o): return json.dumps(o, separators=(",", ":"), ensure_ascii=False).encode()
ts = "2026-12-03T07:00:00.000Z"
def base(uuid, parent): return {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid, "version": "2.1.332", "gitBranch": "", "uuid": uuid, "timestamp": ts}
def user(uuid, parent, text):
    return dumps({**base(uuid, parent), "type": "user", "message": {"role": "user", "content": text}})
def synth(uuid, parent, text, message_first=False):
    msg = {"id": "x-" + uuid, "container": None, "model": "<synthetic>", "role": "assistant", "stop_reason": "stop_sequence", "stop_sequence": "", "type": "message", "usage": {"input_tokens": 0, "output_tokens": 0}, "content": [{"type": "text", "text": text}]}
    b = base(uuid, parent)
    o = ({"parentUuid": parent, "isSidechain": False, "message": msg, **{k: v for k, v in b.items() if k not in ("parentUuid", "isSidechain")}, "type": "assistant"}
         if message_first else {**b, "type": "assistant", "message": msg})
    o.update({"error": "rate_limit", "isApiErrorMessage": True, "apiErrorStatus": 429})
    return dumps(o)
def real_msg_first(uuid, parent):
    msg = {"id": "msg_" + uuid, "type": "message", "role": "assistant", "model": "claude-opus-5-5", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {"type": "user", "file_path": "/tmp/x.json"}}], "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 9}}
    b = base(uuid, parent)
    return dumps({"parentUuid": parent, "isSidechain": False, "message": msg, "requestId": "req_fake", **{k: v for k, v in b.items() if k not in ("parentUuid", "isSidechain")}, "type": "assistant"})
lines = [
    user("u1", None, "first"),
    synth("m1", "u1", "You've hit your 5-hour limit \u00b7 resets 4:06pm (UTC) BAD", message_first=True).replace(b"BAD", b"\xff"),
    user("u2", "m1", "second"),
    synth("m2", "u2", "You've hit your weekly limit \u00b7 resets Dec 5, 1:06pm (UTC)"),
    user("u3", "m2", "third"),
    real_msg_first("m3", "u3"),
]
path = os.path.join(d, sid + ".jsonl")
with open(path, "wb") as f:
    f.write(b"\n".join(lines) + b"\n")
print(path)
