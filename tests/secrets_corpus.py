"""Secret shapes and must-survive texts for the redaction tests (data only).

Every key below is fake: made up for these tests, shaped like the real format (prefix, alphabet,
length) so the rules see what they would see in the wild. ``marker`` is the part of each example
that identifies the secret material and must not survive :func:`lifecycle.redaction.redact`.
"""

from __future__ import annotations

import json
from typing import NamedTuple

__all__ = ["CONTEXTS", "EXTRA_LEGIT_TEXTS", "LEGIT_TEXTS", "SHAPES", "SecretShape", "embed", "escaped_forms"]


class SecretShape(NamedTuple):
    name: str
    examples: tuple[str, ...]
    marker: str


# Fake key material, built from pieces so the file itself stays readable.
_ANT_API = "sk-ant-api03-" + "Zx9Qm2Lr7Tk4Vb8Nc1Hd6Jf3Gs5Pw0Ye" + "_FAKEfakeFAKE-" + "q" * 40 + "AA"
_ANT_OAT = "sk-ant-oat01-" + "Oa7Tk2Qz9Lm4Rb6Vc1Nd8Hf3Js5Gw0Px" + "-FAKEfake_" + "t" * 30 + "AA"
_OPENAI = "sk-" + "Fk3Ab9Cd2Ef7Gh1Ij6Kl4Mn8Op0Qr5St" + "T3BlbkFJ" + "Uv2Wx7Yz1Ab9"
_OPENAI_PROJ = "sk-proj-" + "Pj4Xr8Tz2Qm6Lk0Vb3Nc7Hd1Jf5Gs9Pw" + "_fakeFAKE-" + "Ab12Cd34Ef56"
_AWS_ID = "AKIAIOSFODNN7EXAMPLE"
_AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
_GCP_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDfakeFAKEfake0123"
_GOOGLE = "AIzaSyD-FAKEfake0123456789abcdEFGHijklm"
_GHP = "ghp_" + "Gh7Pq2Rs9Tu4Vw6Xy1Za8Bc3De5Fg0Hi2Jk"
_GHO = "gho_" + "Oa1Ut2Hx3Yz4Ab5Cd6Ef7Gh8Ij9Kl0Mn1Op"
_GHS = "ghs_" + "Sv9Rt8Qp7On6Ml5Kj4Ih3Gf2Ed1Cb0Az9Yx"
_GH_FINE = "github_pat_" + "11AFAKE0Y0" + "aBcDeFgHiJkLmNoPqRsTuV" + "_" + "WxYz0123456789" * 4
_SLACK = "xoxb-" + "1234567890123-4567890123456-" + "FaKeSlAcKtOkEn0123456789"
_STRIPE = "sk_live_" + "51FakeKeyAbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
_GITLAB = "glpat-" + "Gl4bFakeToken0123xyZ9"
_NPM = "npm_" + "Np3mFakeToken0123456789abcdefGHIJKLmn"
_HF = "hf_" + "HfFakeToken0123456789abcdefGHIJKLmnop"
_JWT_SIG = "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
_JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ." + _JWT_SIG
)
_PEM_BODY = "MIIEowIBAAKCAQEA7bq3nR9h2kFAKEfakeFAKEfake0123456789abcdefABCDEF"
_AMZ_SIG = "4f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"

SHAPES: list[SecretShape] = [
    # --- vendor keys and tokens -------------------------------------------------------------
    SecretShape(
        "anthropic_api_key",
        (_ANT_API, f"ANTHROPIC_API_KEY={_ANT_API}", f'{{"api_key": "{_ANT_API}"}}', f"key {_ANT_API} rejected"),
        "Zx9Qm2Lr7Tk4Vb8Nc1Hd6Jf3Gs5Pw0Ye",
    ),
    SecretShape(
        "anthropic_oauth_token",
        (_ANT_OAT, f"Authorization: Bearer {_ANT_OAT}", f"CLAUDE_CODE_OAUTH_TOKEN={_ANT_OAT}"),
        "Oa7Tk2Qz9Lm4Rb6Vc1Nd8Hf3Js5Gw0Px",
    ),
    SecretShape("openai_key", (_OPENAI, f"OPENAI_API_KEY={_OPENAI}", f"openai.api_key = '{_OPENAI}'"), "T3BlbkFJ"),
    SecretShape("openai_project_key", (_OPENAI_PROJ, f"Incorrect API key provided: {_OPENAI_PROJ}."), "Pj4Xr8Tz2Qm6"),
    SecretShape(
        "aws_access_key_id",
        (_AWS_ID, f"aws_access_key_id = {_AWS_ID}", f"AccessKeyId: {_AWS_ID}", f"Credential={_AWS_ID}/20250101"),
        _AWS_ID,
    ),
    SecretShape(
        "aws_secret_access_key",
        (
            f"aws_secret_access_key = {_AWS_SECRET}",
            f"AWS_SECRET_ACCESS_KEY={_AWS_SECRET}",
            f'"SecretAccessKey": "{_AWS_SECRET}"',
            f"aws_secret_access_key: {_AWS_SECRET}",
        ),
        "K7MDENG/bPxRfiCY",
    ),
    SecretShape(
        "gcp_service_account_private_key",
        (
            '{"type": "service_account", "project_id": "demo-proj", "private_key_id": "0f1e2d3c4b5a", '
            '"private_key": "-----BEGIN PRIVATE KEY-----\\n' + _GCP_BODY + '\\n-----END PRIVATE KEY-----\\n", '
            '"client_email": "svc@demo-proj.iam.gserviceaccount.com"}',
            '"private_key": "-----BEGIN PRIVATE KEY-----\\n' + _GCP_BODY + "\\n",
            _GCP_BODY,
        ),
        _GCP_BODY[20:52],
    ),
    SecretShape("google_api_key", (_GOOGLE, f"https://maps.example.com/geo?key={_GOOGLE}"), "FAKEfake0123456789abcd"),
    SecretShape("github_token_ghp", (_GHP, f"https://{_GHP}@github.com/org/repo.git"), _GHP[4:]),
    SecretShape("github_token_gho", (_GHO, f"GH_TOKEN={_GHO}"), _GHO[4:]),
    SecretShape("github_token_ghs", (_GHS, f"Authorization: token {_GHS}"), _GHS[4:]),
    SecretShape("github_fine_grained_pat", (_GH_FINE, f"GITHUB_TOKEN='{_GH_FINE}'"), "aBcDeFgHiJkLmNoPqRsTuV"),
    SecretShape("slack_bot_token", (_SLACK, f"slack token {_SLACK} revoked"), "FaKeSlAcKtOkEn0123456789"),
    SecretShape("stripe_live_key", (_STRIPE, f"Stripe: Invalid API Key provided: {_STRIPE}"), "51FakeKeyAbCdEf"),
    SecretShape("gitlab_token", (_GITLAB, f"PRIVATE-TOKEN: {_GITLAB}"), "Gl4bFakeToken0123"),
    SecretShape(
        "slack_webhook",
        ("https://hooks.slack.com/services/T0FAKE123/B0FAKE4567/FaKeWeBhOoKsEcReT0123456",),
        "FaKeWeBhOoKsEcReT0123456",
    ),
    SecretShape(
        "unknown_high_entropy_key",
        (
            "gateway rejected key Qm9vZ3lNYW4yMDI1K3Jhbm9tUz3cr3tF4k3KeyV4lu3Zx",
            "X-Gateway-Auth Qm9vZ3lNYW4yMDI1K3Jhbm9tUz3cr3tF4k3KeyV4lu3Zx",
        ),
        "Qm9vZ3lNYW4yMDI1K3Jhbm9tUz3cr3tF4k3KeyV4lu3Zx",
    ),
    SecretShape("npm_token", (_NPM, f"//registry.npmjs.org/:_authToken={_NPM}"), "Np3mFakeToken0123"),
    SecretShape("huggingface_token", (_HF, f"HF_TOKEN={_HF}"), "HfFakeToken0123"),
    # --- headers -----------------------------------------------------------------------------
    SecretShape(
        "bearer_auth_header",
        (
            "Authorization: Bearer q8Zr2LmX9vTa4KpW7nYc",
            "authorization: bearer q8Zr2LmX9vTa4KpW7nYc",
            '"Authorization": "Bearer q8Zr2LmX9vTa4KpW7nYc"',
            "-H 'Authorization: Bearer q8Zr2LmX9vTa4KpW7nYc'",
            "Bearer q8Zr2LmX9vTa4KpW7nYc",
        ),
        "q8Zr2LmX9vTa4KpW7nYc",
    ),
    SecretShape(
        "basic_auth_header",
        (
            "Authorization: Basic dXNlcjpwYXNzd29yZA==",
            "Proxy-Authorization: Basic dXNlcjpwYXNzd29yZA==",
            "{'authorization': 'Basic dXNlcjpwYXNzd29yZA=='}",
        ),
        "dXNlcjpwYXNzd29yZA",
    ),
    SecretShape(
        "curl_user_flag",
        ("curl -u alice:S3cretPa55 https://api.example.com/v1", "wget --user=alice:S3cretPa55 https://x.example"),
        "S3cretPa55",
    ),
    SecretShape(
        "x_api_key_header",
        (
            "x-api-key: 3f9a7c1e5b2d4f6a8c0e1b3d5f7a9c2e",
            "X-Api-Key: 3f9a7c1e5b2d4f6a8c0e1b3d5f7a9c2e",
            '"x-api-key": "3f9a7c1e5b2d4f6a8c0e1b3d5f7a9c2e"',
            "x-goog-api-key:3f9a7c1e5b2d4f6a8c0e1b3d5f7a9c2e",
        ),
        "3f9a7c1e5b2d4f6a8c0e1b3d5f7a9c2e",
    ),
    SecretShape(
        "cookie_header",
        (
            "Cookie: sessionid=8f14e45fceea167a5a36dedd4bea2543; csrftoken=Zq81",
            "cookie: _ga=GA1.1.1; sessionid=8f14e45fceea167a5a36dedd4bea2543",
            '"Cookie": "sessionid=8f14e45fceea167a5a36dedd4bea2543"',
        ),
        "8f14e45fceea167a5a36dedd4bea2543",
    ),
    SecretShape(
        "set_cookie_header",
        (
            "Set-Cookie: __Secure-next-auth.session-token=s3cr3tCookieValue42; Path=/; HttpOnly; Secure",
            "set-cookie: sid=s3cr3tCookieValue42",
        ),
        "s3cr3tCookieValue42",
    ),
    SecretShape(
        "jwt",
        (_JWT, f"id_token: {_JWT}", f"Authorization: Bearer {_JWT}", f"?jwt={_JWT}&x=1"),
        _JWT_SIG,
    ),
    # --- URLs --------------------------------------------------------------------------------
    SecretShape(
        "url_userinfo",
        (
            "https://alice:S3cretPa55@git.example.com/org/repo.git",
            "postgres://svc:S3cretPa55@db.internal:5432/app",
            "redis://:S3cretPa55@cache.internal:6379/0",
            "https://oauth2:S3cretPa55@gitlab.example.com/group/project.git",
        ),
        "S3cretPa55",
    ),
    SecretShape(
        "url_token_param",
        (
            "https://api.example.com/v1/export?format=csv&token=q8Zr2LmX9vTa4KpW",
            "GET /download?token=q8Zr2LmX9vTa4KpW HTTP/1.1",
        ),
        "q8Zr2LmX9vTa4KpW",
    ),
    SecretShape(
        "url_access_token_param",
        (
            "https://graph.example.com/me?fields=id&access_token=EAAGm0PX4ZCpsBAzzFakeTok",
            "wss://rt.example.com/socket?access_token=EAAGm0PX4ZCpsBAzzFakeTok#top",
        ),
        "EAAGm0PX4ZCpsBAzzFakeTok",
    ),
    SecretShape(
        "url_api_key_param",
        (
            "https://maps.example.com/api/geocode?address=Main+St&api_key=c0ffee1234deadbeef5678",
            "https://example.com/q?apiKey=c0ffee1234deadbeef5678",
        ),
        "c0ffee1234deadbeef5678",
    ),
    SecretShape(
        "url_sas_sig_param",
        (
            "https://acct.blob.core.windows.net/c/b.bin?sv=2022-11-02&sp=r&se=2026-01-01T00:00:00Z"
            "&sig=Ab3dEf9Gh%2BIjKlMn0pQrStUvWxYz%3D",
            "https://hooks.example.com/trigger?sig=Ab3dEf9Gh%2BIjKlMn0pQrStUvWxYz%3D",
        ),
        "Ab3dEf9Gh%2BIjKlMn0pQrStUvWxYz",
    ),
    SecretShape(
        "url_amz_signature_param",
        (
            "https://bucket.s3.amazonaws.com/report.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            "&X-Amz-Date=20250101T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host"
            f"&X-Amz-Signature={_AMZ_SIG}",
            f"/report.pdf?X-Amz-Signature={_AMZ_SIG}",
        ),
        _AMZ_SIG,
    ),
    # --- environment and secret assignments ---------------------------------------------------
    SecretShape(
        "env_anthropic_auth_token",
        (
            "ANTHROPIC_AUTH_TOKEN=gw-7f3k9q2m8x4v1z6b",
            'export ANTHROPIC_AUTH_TOKEN="gw-7f3k9q2m8x4v1z6b"',
            "set ANTHROPIC_AUTH_TOKEN=gw-7f3k9q2m8x4v1z6b",
            "$env:ANTHROPIC_AUTH_TOKEN='gw-7f3k9q2m8x4v1z6b'",
        ),
        "7f3k9q2m8x4v1z6b",
    ),
    SecretShape(
        "env_database_url",
        (
            "DATABASE_URL=postgres://app:dbpassw0rd@db.internal:5432/prod",
            'DATABASE_URL="mysql://root:dbpassw0rd@10.0.0.5/app"',
        ),
        "dbpassw0rd",
    ),
    SecretShape(
        "env_export_secret",
        ("export FOO_SECRET=shh-its-a-secret-42", "FOO_SECRET='shh-its-a-secret-42' npm start"),
        "shh-its-a-secret-42",
    ),
    SecretShape(
        "env_plain_value",
        ("MY_SERVICE_CONFIG=plainvalue123", "env MY_SERVICE_CONFIG=plainvalue123 node app.js"),
        "plainvalue123",
    ),
    SecretShape(
        "password_assignment",
        (
            "password=hunter2hunter2",
            '"password": "hunter2hunter2"',
            "--password=hunter2hunter2",
            "db_password: hunter2hunter2",
            "Password: hunter2hunter2",
        ),
        "hunter2hunter2",
    ),
    SecretShape(
        "api_key_assignment",
        ('api_key = "zq81-ab29-cd47-ef65"', "apiKey: 'zq81-ab29-cd47-ef65'", "client_secret=zq81-ab29-cd47-ef65"),
        "zq81-ab29-cd47-ef65",
    ),
    # --- PEM -----------------------------------------------------------------------------------
    SecretShape(
        "pem_private_key",
        (
            "-----BEGIN RSA PRIVATE KEY-----\n" + _PEM_BODY + "\nZm9vYmFy\n-----END RSA PRIVATE KEY-----",
            "-----BEGIN PRIVATE KEY-----\n" + _PEM_BODY + "\n-----END PRIVATE KEY-----\n",
            "-----BEGIN OPENSSH PRIVATE KEY-----\\n" + _PEM_BODY + "\\n-----END OPENSSH PRIVATE KEY-----",
            "-----BEGIN EC PRIVATE KEY----- " + _PEM_BODY + " -----END EC PRIVATE KEY-----",
        ),
        _PEM_BODY[10:40],
    ),
    # --- private paths -----------------------------------------------------------------------
    SecretShape(
        "home_path_linux",
        ("/home/alice/projects/app/.env", "/home/alice/.ssh/id_rsa", "file:///home/alice/notes.txt"),
        "/home/alice",
    ),
    SecretShape(
        "home_path_macos",
        ("/Users/bob/Library/Application Support/Claude/config.json", "/Users/bob/dev/app/index.ts:10:5"),
        "/Users/bob",
    ),
    SecretShape(
        "home_path_tilde",
        ("~/.claude/settings.json", "~/.claude/projects/-srv-app/7c1e.jsonl", "~/.claude/.credentials.json"),
        "~/.claude",
    ),
    SecretShape("home_path_root", ("/root/.config/claude/credentials.json", "/root/.npmrc"), "/root/."),
    SecretShape(
        "tmp_path",
        ("/tmp/claude-501/tasks/b7x.output", "/tmp/claude-501", "file:///tmp/claude-501/a.sock"),
        "/tmp/claude-501",
    ),
    SecretShape(
        "macos_var_folders",
        ("/var/folders/7x/k2h9q1xd3v5g0000gn/T/claude-abc/out.log", "/var/folders/7x/k2h9q1xd3v5g0000gn/T/"),
        "7x/k2h9q1xd3v5g0000gn",
    ),
    SecretShape(
        "macos_private_var",
        ("/private/var/folders/7x/zz/T/claude/x.log", "/private/var/tmp/claude-cache/a.bin"),
        "/private/var/",
    ),
    SecretShape(
        "windows_user_path",
        (
            "C:\\Users\\carol\\AppData\\Local\\Temp\\claude\\out.txt",
            "c:\\users\\carol\\.claude\\settings.json",
            "C:/Users/carol/Documents/notes.md",
            "D:\\\\Users\\\\carol\\\\repo",
        ),
        "carol",
    ),
    SecretShape(
        "windows_unc_path",
        ("\\\\fileserver01\\share$\\finance\\q3.xlsx", "\\\\fileserver01\\home\\dave"),
        "fileserver01",
    ),
    # --- stack traces ------------------------------------------------------------------------
    SecretShape(
        "node_stack_frame",
        (
            "    at Object.<anonymous> (/srv/app/index.js:10:5)",
            "at Module._compile (/srv/app/index.js:10:5)",
            "    at /srv/app/index.js:10:5",
            "    at Foo.bar [as baz] (/srv/app/index.js:10:5)",
        ),
        "/srv/app/index.js:10:5",
    ),
    SecretShape(
        "node_async_frame",
        (
            "    at async fn (file:///srv/app/lib/worker.mjs:42:17)",
            "at async Runner.run (file:///srv/app/lib/worker.mjs:42:17)",
            "    at new Worker (file:///srv/app/lib/worker.mjs:42:17)",
        ),
        "worker.mjs:42:17",
    ),
    SecretShape(
        "node_stack_trace",
        (
            "TypeError: fetch failed\n    at node:internal/deps/undici/undici:13502:13\n"
            "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\n"
            "    at async main (/srv/app/cli.js:7:3)",
        ),
        "undici:13502:13",
    ),
    SecretShape(
        "python_traceback",
        (
            "Traceback (most recent call last):\n"
            '  File "/usr/lib/python3.11/json/decoder.py", line 337, in decode\n'
            "    obj, end = self.raw_decode(s, idx)\n"
            "               ^^^^^^^^^^^^^^^^^^^^^^\n"
            "ValueError: Expecting value",
            "Traceback (most recent call last):",
        ),
        "most recent call last",
    ),
    SecretShape(
        "python_file_frame",
        (
            '  File "/usr/lib/python3.11/json/decoder.py", line 337, in decode',
            'File "/usr/lib/python3.11/json/decoder.py", line 337',
            'Traceback (most recent call last):\n  File "/usr/lib/python3.11/json/decoder.py", line 337, in <module>',
        ),
        'json/decoder.py", line 337',
    ),
]

#: Claude Code CLI's own user-facing texts: redaction must leave every one unchanged.
LEGIT_TEXTS: list[str] = [
    "API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a "
    "moment. If it persists, check https://status.claude.com.",
    "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment. If it "
    "persists, check your inference gateway (127.0.0.1:18102).",
    "You've hit your individual spend limit · run /usage-credits to ask your admin for a higher limit",
    "Invalid API key · Please run /login",
    "Invalid API key · Fix external API key",
    "Your ANTHROPIC_API_KEY belongs to a disabled organization · Update or unset the environment variable",
    "API Error: Connection dropped (ECONNRESET). Check the gateway set in ANTHROPIC_BASE_URL, then try again.",
    "You've hit your 5-hour limit · resets 4:06pm (UTC)",
    "Request too large (max 32MB). Accumulated images and attachments in the conversation pushed the request "
    "over the limit. Remove older images or compact the conversation.",
    "Prompt is too long · the request is ~250000 tokens (limit 200000) but this conversation is only ~2499 "
    "tokens — the rest is system prompt, tool definitions, and attachment content. A single-exchange "
    "conversation cannot be compacted; reduce attached files/tools or start with less context.",
    "API Error: Claude's response exceeded the 128000 output token maximum. To configure this behavior, set "
    "the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable.",
    "Switched to Opus 5 because Opus 5.5 is not available",
    "Reached maximum number of turns (2)",
    "Reached maximum budget ($0.01)",
    "Retrying Claude, attempt 2 of 10.",
    "There's an issue with the selected model (claude-opus-5-5). It may not exist or you may not have access to it.",
    "API Error: Request rejected (429) · Number of requests has exceeded your rate limit",
    "Failed to authenticate. API Error: 403 Your API key does not have permission to use the specified resource.",
    "Credit balance is too low",
]

#: More benign texts in the same style (near misses for the rules): must also survive.
EXTRA_LEGIT_TEXTS: list[str] = [
    "Your limit resets at 4:06:30pm",
    "Could not connect to the gateway at http://127.0.0.1:18102",
    "max_tokens: 64000 > 32000, which is the maximum allowed number of output tokens for claude-opus-5-5",
    "thinking.budget_tokens: Input should be greater than or equal to 1024",
    "Request ID: req_011CSHqyRE4vHz3mRVxRzSAn",
    "Resuming session 4f3c2a1e-9b7d-4c2a-8e1f-0123456789ab",
    "Run /model to pick a different model, or /compact to free up context",
    "Opened https://claude.ai/settings/usage in your browser",
    "See https://docs.claude.com/en/docs/claude-code/settings#environment-variables",
    "Invalid API key: run /login to sign in again",
    "Token: expired · Please run /login",
    "Bearer authentication failed · Please run /login",
    "Set ANTHROPIC_API_KEY or run /login",
    "Failed to read file at src/app.ts",
    "Auto-compact is enabled (threshold 80%)",
    "Press Esc twice to edit your previous message",
    "Session expired · Please run /login",
    '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
    "Model claude-opus-5-5-20260101 is not available in region us-east-1",
]

#: Benign sentences the secrets are embedded in.
CONTEXTS: tuple[str, ...] = (
    "API Error: request failed",
    "Claude could not finish the request",
)


def embed(secret: str, context: str) -> list[str]:
    """``secret`` in realistic surroundings built from the benign ``context``."""
    return [
        secret,
        f"{secret} {context}",  # start of a sentence
        f"{context} {secret} and then it stopped",  # middle
        f"{context} {secret}",  # end
        f'{context} "{secret}"',  # double-quoted
        f"{context} '{secret}'",  # single-quoted
        json.dumps({"error": context, "detail": secret}),  # inside JSON (escaped)
        json.dumps({"message": f"{context}: {secret}"}, ensure_ascii=False),
        f"{context}: {secret}",  # after a colon
        f"{context} ({secret})",  # inside parentheses
        f"{context} [{secret}]",  # inside brackets
        f"{context} {secret}.",  # trailing punctuation
        f"{context} {secret}, retrying!",
        f"{context}\n{secret}\n{context}",  # on its own line
        f"{context}\r\n{secret}\r\n",  # CRLF log line
    ]


def escaped_forms(marker: str) -> tuple[str, ...]:
    """``marker`` as it may appear in text: raw and JSON-escaped."""
    return tuple(dict.fromkeys((marker, json.dumps(marker)[1:-1], json.dumps(marker, ensure_ascii=False)[1:-1])))
