import json, sys
SKIP = {"available_commands_update", "usage_update", "config_option_update", "current_mode_update"}
for path in sys.argv[1:]:
    print("=====", path)
    for l in open(path):
        f = json.loads(l)
        m = f["msg"]
        if isinstance(m, dict):
            if m.get("method") == "session/update" and m["params"]["update"].get("sessionUpdate") in SKIP:
                continue
            if m.get("method") == "initialize" or (m.get("id") in (1, 2) and "result" in m):
                continue
            if "result" in m and isinstance(m["result"], dict):
                r = dict(m["result"]); r.pop("usage", None)
                meta = r.get("_meta")
                if isinstance(meta, dict):
                    meta = dict(meta); meta.pop("quota", None); r["_meta"] = meta
                m = {**m, "result": r}
        print(f["t"], f["dir"], json.dumps(m, ensure_ascii=False)[:900])
