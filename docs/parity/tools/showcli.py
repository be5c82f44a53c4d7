import json, sys
for path in sys.argv[1:]:
    print("=====", path)
    for l in open(path):
        try:
            o = json.loads(l)
        except ValueError:
            continue
        if not isinstance(o, dict): continue
        t = o.get("type")
        if t in ("stream_event", "control_response", "control_request", "rate_limit_event"): continue
        if t == "system" and o.get("subtype") in ("init", "session_state_changed", "hook_started", "hook_response", "commands_changed", "status"):
            print("  ", t, o.get("subtype"), "..."); continue
        print(json.dumps(o, ensure_ascii=False)[:1400])
