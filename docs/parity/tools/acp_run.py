#!/usr/bin/env python3
"""Drive the reference adapter (node /tmp/ref/package/dist/index.js) over ACP stdio against the
loopback fake Messages API, and record every JSON-RPC frame in both directions.

usage: acp_run.py --name NAME --scenario S[,S...] [--client air|legacy|notices|air+notices]
                  [--prompt TEXT]... [--cancel-after SECS] [--fake-cli PATH] [--out DIR]
Every step is bounded by timeouts; the whole run is killed after --deadline seconds.
"""
import argparse, asyncio, base64, json, os, shutil, subprocess, sys, tempfile, time

p = argparse.ArgumentParser()
p.add_argument("--name", required=True)
p.add_argument("--scenario", default="success")
p.add_argument("--client", default="air")
p.add_argument("--prompt", action="append")
p.add_argument("--cancel-after", type=float, default=None)
p.add_argument("--fake-cli", default=None, help="CLAUDE_CODE_EXECUTABLE: a scripted stand-in for the Claude CLI")
p.add_argument("--fake-cli-script", default=None, help="scenario file for the scripted CLI")
p.add_argument("--tee-cli", action="store_true", help="record the real CLI's stream-json stdout")
p.add_argument("--proxy-mode", default=None, help="run the real CLI behind cli-proxy.py with this PROXY_MODE")
p.add_argument("--gateway-jwt", action="store_true", help="auth with an unsigned aud=claude-gateway JWT instead of an API key")
p.add_argument("--out", default="/tmp/parity/out")
p.add_argument("--env", action="append", default=[], help="extra KEY=VALUE for the agent's environment")
p.add_argument("--load-session", default=None, help="session/load this id instead of session/new (no prompts)")
p.add_argument("--config-dir", default=None, help="CLAUDE_CONFIG_DIR to use (default: a fresh temp dir)")
p.add_argument("--cwd", default=None, help="project directory (default: a fresh temp dir)")
p.add_argument("--gap", type=float, default=0, help="seconds to wait between prompts")
p.add_argument("--prompt-timeout", type=float, default=90)
p.add_argument("--deadline", type=float, default=180)
args = p.parse_args()
prompts = args.prompt or ["hi"]

AIR = {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}
CAPS = {
    "legacy": {},
    "air": {"_meta": AIR},
    "notices": {"session": {"notices": {}}},
    "air+notices": {"_meta": AIR, "session": {"notices": {}}},
}[args.client]

os.makedirs(args.out, exist_ok=True)
work = tempfile.mkdtemp(prefix=f"parity-{args.name}-")
home = os.path.join(work, "home"); os.makedirs(home)
cfg = args.config_dir or os.path.join(work, "claude-config"); os.makedirs(cfg, exist_ok=True)
proj = args.cwd or os.path.join(work, "project"); os.makedirs(proj, exist_ok=True)
port_file = os.path.join(work, "port")
api_log = os.path.join(args.out, f"{args.name}.api-requests.jsonl")
frames_path = os.path.join(args.out, f"{args.name}.frames.jsonl")
for f in (api_log, frames_path):
    if os.path.exists(f):
        os.remove(f)
T0 = time.monotonic()
frames = []


def record(direction, msg):
    frames.append({"t": round(time.monotonic() - T0, 3), "dir": direction, "msg": msg})


async def main():
    fake = await asyncio.create_subprocess_exec(
        sys.executable, "/tmp/parity/fakeapi.py", "--scenario", args.scenario, "--port-file", port_file,
        "--log", api_log, "--lifetime", str(args.deadline + 10))
    for _ in range(100):
        if os.path.exists(port_file) and open(port_file).read().strip():
            break
        await asyncio.sleep(0.05)
    port = open(port_file).read().strip()
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "CLAUDE_CONFIG_DIR": cfg,
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "CLAUDE_CODE_MAX_RETRIES": "2",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "TMPDIR": work,
    }
    for kv in args.env:
        k, _, v = kv.partition("=")
        env[k] = v
    if args.gateway_jwt:
        b = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
        env["ANTHROPIC_AUTH_TOKEN"] = f'{b({"alg": "none", "typ": "JWT"})}.{b({"aud": "claude-gateway", "sub": "fake-user"})}.sig'
    else:
        env["ANTHROPIC_API_KEY"] = "sk-test"
    if args.proxy_mode:
        env["CLAUDE_CODE_EXECUTABLE"] = "/tmp/parity/cli-proxy.py"
        env["PROXY_MODE"] = args.proxy_mode
        args.tee_cli = True
    elif args.tee_cli:
        env["CLAUDE_CODE_EXECUTABLE"] = "/tmp/parity/tee-cli.sh"
    if args.tee_cli:
        env["TEE_CLI_LOG"] = os.path.join(args.out, f"{args.name}.cli-stdout.jsonl")
        if os.path.exists(env["TEE_CLI_LOG"]):
            os.remove(env["TEE_CLI_LOG"])
    if args.fake_cli:
        env["CLAUDE_CODE_EXECUTABLE"] = args.fake_cli
        env["FAKE_CLI_SCRIPT"] = args.fake_cli_script or ""
        env["FAKE_CLI_LOG"] = os.path.join(args.out, f"{args.name}.fake-cli.log")
    agent = await asyncio.create_subprocess_exec(
        "node", "/tmp/ref/package/dist/index.js", cwd=proj, env=env,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        limit=64 * 1024 * 1024)
    pending = {}
    next_id = [0]
    stderr_lines = []

    async def send(obj):
        record("client->agent", obj)
        agent.stdin.write((json.dumps(obj) + "\n").encode())
        await agent.stdin.drain()

    async def request(method, params, timeout=30.0):
        next_id[0] += 1
        rid = next_id[0]
        fut = asyncio.get_running_loop().create_future()
        pending[rid] = fut
        await send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return await asyncio.wait_for(fut, timeout)

    async def reader():
        while True:
            line = await agent.stdout.readline()
            if not line:
                return
            try:
                msg = json.loads(line)
            except ValueError:
                record("agent->client(raw)", line.decode(errors="replace"))
                continue
            record("agent->client", msg)
            if "id" in msg and ("result" in msg or "error" in msg) and "method" not in msg:
                fut = pending.pop(msg["id"], None)
                if fut and not fut.done():
                    fut.set_result(msg)
            elif "id" in msg and "method" in msg:
                # a request from the agent: answer conservatively
                if msg["method"] == "session/request_permission":
                    await send({"jsonrpc": "2.0", "id": msg["id"], "result": {"outcome": {"outcome": "cancelled"}}})
                else:
                    await send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}})

    async def errreader():
        while True:
            line = await agent.stderr.readline()
            if not line:
                return
            stderr_lines.append(line.decode(errors="replace").rstrip())

    rt = asyncio.create_task(reader())
    et = asyncio.create_task(errreader())
    try:
        await request("initialize", {"protocolVersion": 1, "clientCapabilities": CAPS, "clientInfo": {"name": "parity-probe", "version": "0"}}, 60)
        if args.load_session:
            await request("session/load", {"sessionId": args.load_session, "cwd": proj, "mcpServers": []}, 90)
            prompts[:] = []
            sid = args.load_session
        else:
            new = await request("session/new", {"cwd": proj, "mcpServers": []}, 90)
            sid = new["result"]["sessionId"]
        for n, text in enumerate(prompts):
            if n and args.gap:
                await asyncio.sleep(args.gap)
            fut = asyncio.ensure_future(request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}, args.prompt_timeout))
            if args.cancel_after is not None:
                await asyncio.sleep(args.cancel_after)
                await send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
            try:
                await fut
            except asyncio.TimeoutError:
                record("note", f"prompt {text!r} timed out after {args.prompt_timeout}s")
        await asyncio.sleep(3)  # trailing frames
    finally:
        try:
            agent.stdin.close()
        except Exception:
            pass
        try:
            await asyncio.wait_for(agent.wait(), 10)
        except asyncio.TimeoutError:
            agent.kill()
            await agent.wait()
        fake.terminate()
        await fake.wait()
        rt.cancel(); et.cancel()
        with open(frames_path, "w") as f:
            for fr in frames:
                f.write(json.dumps(fr, ensure_ascii=False) + "\n")
        with open(os.path.join(args.out, f"{args.name}.agent-stderr.log"), "w") as f:
            f.write("\n".join(stderr_lines[-400:]) + "\n")
        shutil.rmtree(work, ignore_errors=True)


asyncio.run(asyncio.wait_for(main(), args.deadline))
