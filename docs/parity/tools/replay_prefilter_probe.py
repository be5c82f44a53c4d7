import json
from lifecycle.cli.replay import replay_lines
u = {"parentUuid": None, "isSidechain": False, "type": "user", "message": {"role": "user", "content": "hi"}, "uuid": "u1", "sessionId": "s1"}
a = {"parentUuid": "u1", "isSidechain": False, "type": "assistant", "uuid": "m1", "sessionId": "s1",
     "message": {"id": "x", "model": "<synthetic>", "role": "assistant", "type": "message", "stop_reason": "stop_sequence",
                 "content": [{"type": "text", "text": "You've hit your limit · resets 5pm"}]}, "isApiErrorMessage": True, "error": "rate_limit"}
def line(d): return json.dumps(d, separators=(",", ":")).encode()
def msgfirst(d):
    d2 = {"message": d["message"]}; d2.update({k: v for k, v in d.items() if k != "message"}); return line(d2)
def msgfirst_type_inside(d):
    # message first, and the message object itself has "type":"message"; type key last
    return msgfirst(d)
for name, lines in {
  "type-first": [line(u), line(a)],
  "message-first-both": [msgfirst(u), msgfirst(a)],
  "message-first-user-only": [msgfirst(u), line(a)],
  "message-first-assistant-only": [line(u), msgfirst(a)],
  "invalid-utf8-in-synthetic": [line(u), line(a).replace(b"resets 5pm", b"resets \xff5pm")],
  "invalid-utf8-elsewhere": [line(u), line(a)[:-1] + b',"cwd":"/tmp/\xc3("}'],
}.items():
    v = replay_lines(lines, "s1")
    print(name, json.dumps([(r["line"], r["record"]["id"]) for r in v.records]), "malformed", v.malformed, "active", v.active)
real = {"parentUuid": "m1", "isSidechain": False, "type": "assistant", "uuid": "m2", "sessionId": "s1",
        "message": {"id": "y", "model": "claude-opus-5-5", "role": "assistant", "type": "message", "stop_reason": "tool_use",
                    "content": [{"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {"type": "user", "file_path": "/tmp/x"}}],
                    "usage": {"input_tokens": 1, "output_tokens": 1}}}
u2 = dict(u, uuid="u2")
for name, lines in {
  "recovery type-first": [line(u), line(a), line(u2), line(real)],
  "recovery message-first": [line(u), line(a), line(u2), msgfirst(real)],
}.items():
    v = replay_lines(lines, "s1")
    print(name, json.dumps([(r["line"], r["record"]["id"]) for r in v.records]), "malformed", v.malformed, "active", v.active)
