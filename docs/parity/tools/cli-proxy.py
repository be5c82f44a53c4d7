#!/usr/bin/env python3
"""CLAUDE_CODE_EXECUTABLE stand-in: runs the real bundled Claude CLI 2.1.318 with the same argv and
stdin, forwards its stdout (stream-json) line by line, copies it to $TEE_CLI_LOG, and applies
$PROXY_MODE to simulate a runtime loss at a chosen point:

  tee                         forward everything (no fault)
  kill_after_error_result     after forwarding the first `result` with is_error=true: kill the CLI, exit 1
  kill_after_assistant_error  after forwarding the first top-level assistant with `error`: kill the CLI, exit 1
  shutdown_after_error_result after the first error `result`: inject system/worker_shutting_down, then EOF (exit 0)
  shutdown_after_assistant_error  after the first assistant `error`: inject worker_shutting_down, then EOF (exit 0)
Lines the proxy itself adds are also copied to $TEE_CLI_LOG, marked with "_injected_by_proxy": true there only.
"""
import json, os, subprocess, sys, time, uuid

REAL = "/tmp/ref/package/node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude"
mode = os.environ.get("PROXY_MODE", "tee")
log = open(os.environ.get("TEE_CLI_LOG", "/dev/null"), "a")
child = subprocess.Popen([REAL] + sys.argv[1:], stdout=subprocess.PIPE)
out = sys.stdout.buffer
session_id = None


def emit(raw):
    out.write(raw); out.flush(); log.write(raw.decode(errors="replace")); log.flush()


def finish(code):
    try:
        child.kill()
    except Exception:
        pass
    log.write(json.dumps({"_proxy": f"{mode}: ended the CLI, exit {code}"}) + "\n"); log.flush()
    os._exit(code)


for raw in child.stdout:
    emit(raw)
    try:
        o = json.loads(raw)
    except ValueError:
        continue
    if not isinstance(o, dict):
        continue
    session_id = o.get("session_id", session_id)
    err_result = o.get("type") == "result" and o.get("is_error") is True
    asst_error = o.get("type") == "assistant" and o.get("parent_tool_use_id") is None and o.get("error")
    if mode in ("kill_after_error_result", "shutdown_after_error_result") and err_result or \
       mode in ("kill_after_assistant_error", "shutdown_after_assistant_error") and asst_error:
        time.sleep(0.3)
        if mode.startswith("shutdown"):
            line = {"type": "system", "subtype": "worker_shutting_down", "reason": "host_exit", "uuid": str(uuid.uuid4()), "session_id": session_id}
            out.write((json.dumps(line) + "\n").encode()); out.flush()
            log.write(json.dumps({**line, "_injected_by_proxy": True}) + "\n"); log.flush()
            time.sleep(0.3)
            out.close()
            finish(0)
        finish(1)
child.wait()
os._exit(child.returncode or 0)
