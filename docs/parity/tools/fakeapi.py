#!/usr/bin/env python3
"""Tiny loopback fake of the Anthropic Messages API, for parity runs only.

Binds 127.0.0.1 only; answers POST /v1/messages (any query string) with the scripted scenario and
every other path with 404; exits by itself after --lifetime seconds.
usage: fakeapi.py --scenario NAME[,NAME...] --port-file F --log F [--lifetime 120]
Each /v1/messages request consumes the next scenario name (the last one repeats).
"""
import argparse, base64, json, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

p = argparse.ArgumentParser()
p.add_argument("--scenario", required=True)
p.add_argument("--port-file", required=True)
p.add_argument("--log", required=True)
p.add_argument("--lifetime", type=float, default=120)
args = p.parse_args()
script = args.scenario.split(",")
lock = threading.Lock()
count = [0]


def sse(events):
    out = []
    for name, data in events:
        out.append(f"event: {name}\ndata: {json.dumps(data)}\n\n")
    return "".join(out).encode()


def stream(model, text, stop_reason, stop_details=None, usage_out=9):
    delta = {"stop_reason": stop_reason, "stop_sequence": None}
    if stop_details is not None:
        delta["stop_details"] = stop_details
    ev = [
        ("message_start", {"type": "message_start", "message": {"id": f"msg_fake{count[0]:04d}", "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}),
        ("ping", {"type": "ping"}),
    ]
    if text:
        ev += [
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ]
    ev += [
        ("message_delta", {"type": "message_delta", "delta": delta, "usage": {"output_tokens": usage_out}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return sse(ev)


def error_body(kind, message):
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_fake"}).encode()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _log(self, extra):
        with open(args.log, "a") as f:
            f.write(json.dumps({"t": round(time.time(), 3), "method": self.command, "path": self.path, **extra}) + "\n")

    def _send(self, status, body, ctype="application/json", headers=()):
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.send_header("request-id", "req_fake")
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._log({})
        self._send(404, error_body("not_found_error", "not found"))

    do_HEAD = do_GET
    do_DELETE = do_GET
    do_PUT = do_GET

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        path = self.path.split("?", 1)[0]
        if path != "/v1/messages":
            self._log({"status": 404})
            self._send(404, error_body("not_found_error", "not found"))
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        with lock:
            i = count[0]
            count[0] += 1
        name = script[min(i, len(script) - 1)]
        if name.startswith("slow:"):
            name = name[5:]
            time.sleep(4)
        model = body.get("model", "claude-test")
        is_stream = bool(body.get("stream"))
        self._log({"scenario": name, "model": model, "stream": is_stream, "max_tokens": body.get("max_tokens"), "n_messages": len(body.get("messages") or []), "has_tools": bool(body.get("tools"))})
        if name == "success":
            text = "Hello from the fake API."
            if is_stream:
                self._send(200, stream(model, text, "end_turn"), "text/event-stream")
            else:
                self._send(200, json.dumps({"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 9}}).encode())
        elif name == "http429":
            self._send(429, error_body("rate_limit_error", "Number of requests has exceeded your rate limit"), headers=[("retry-after", "0")])
        elif name == "http529":
            self._send(529, error_body("overloaded_error", "Overloaded"), headers=[("retry-after", "0")])
        elif name == "http401":
            self._send(401, error_body("authentication_error", "invalid x-api-key"))
        elif name == "usage_limit":
            reset = str(int(time.time()) + 3 * 3600)
            self._send(429, error_body("rate_limit_error", "This request would exceed your account's rate limit. Please try again later."), headers=[
                ("anthropic-ratelimit-unified-status", "rejected"),
                ("anthropic-ratelimit-unified-reset", reset),
                ("anthropic-ratelimit-unified-5h-reset", reset),
                ("anthropic-ratelimit-unified-5h-status", "rejected"),
                ("anthropic-ratelimit-unified-representative-claim", "five_hour"),
                ("anthropic-ratelimit-unified-overage-status", "rejected"),
                ("anthropic-ratelimit-unified-overage-disabled-reason", "org_level_disabled"),
                ("x-should-retry", "false")])
        elif name == "refusal":
            details = {"type": "refusal", "category": "cyber", "explanation": "This request was declined by the fake safety classifier."}
            self._send(200, stream(model, "", "refusal", details, usage_out=1), "text/event-stream")
        elif name == "refusal_nocat":
            details = {"type": "refusal", "category": None, "explanation": "Declined by the fake classifier (no category)."}
            self._send(200, stream(model, "", "refusal", details, usage_out=1), "text/event-stream")
        elif name == "refusal_long":
            expl = ("This request was declined by the fake safety classifier because it matched a pattern that the "
                    "classifier associates with potentially harmful security work. The explanation is deliberately long "
                    "so that the summary plus the explanation is longer than the 256-character notice title limit.")
            details = {"type": "refusal", "category": "cyber", "explanation": expl}
            self._send(200, stream(model, "", "refusal", details, usage_out=1), "text/event-stream")
        elif name == "max_tokens":
            self._send(200, stream(model, "This answer was cut off because it hit the max", "max_tokens"), "text/event-stream")
        else:
            self._send(500, error_body("api_error", f"unknown fake scenario {name}"))


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.daemon_threads = True
with open(args.port_file, "w") as f:
    f.write(str(srv.server_address[1]))
threading.Timer(args.lifetime, srv.shutdown).start()
srv.serve_forever()
