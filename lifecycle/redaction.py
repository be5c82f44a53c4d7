"""Redaction of secrets and private data from user-facing transcript text.

Threat model
============
Titles and details of transcript entries are normally Claude's own user-facing text, but the raw
material they are built from (exception messages, SDK results, API error bodies, stored transcripts,
log lines) can carry whatever the process had at hand: API keys and OAuth tokens, ``Authorization``
headers, cookies, URLs with credentials, ``NAME=value`` environment dumps, PEM private keys, stack
traces revealing code layout, and filesystem paths revealing user names and temp directories. Such
text is shown to users, persisted, and may be shared (screenshots, bug reports, telemetry), so it must
not carry any of that, *whatever the source*. At the same time Claude's own messages (which name
environment variables, slash commands such as ``/login``, status URLs and ``host:port`` gateways)
must come through byte for byte.

:func:`redact` therefore applies a fixed list of rules (:data:`RULES`, in order). Each rule replaces
the sensitive part with a short, stable placeholder, keeping the harmless context (header names,
variable names, URL scheme and host, sentence punctuation) so the message stays useful:

==============================  =========================================================
placeholder                     replaces
==============================  =========================================================
``[redacted pem]``              a PEM block (``-----BEGIN ...-----`` through ``-----END ...-----``)
``[redacted frame]``            a stack frame that shares its line with other text
(line removed)                  a line holding only stack frames (and, for Python, the source
                                and caret lines indented under a ``File "..."`` frame)
``[redacted credential]``       auth header values, cookies, URL userinfo, secret URL query
                                values, values assigned to secret-named keys
``[redacted env]``              the value of a ``NAME=value`` environment assignment
``[redacted key]``              vendor API keys / tokens, JWTs, long high-entropy strings
``[redacted path]``             home, temp and Windows user paths (through the end of the path)
``[redacted]``                  the whole text, only if redaction failed to settle (fail closed)
==============================  =========================================================

Rules
=====
1. ``pem_block``: ``-----BEGIN <label>-----`` through the next ``-----END <label>-----``, also with
   JSON-escaped ``\\n`` inside; an unterminated block is redacted to the end of the text.
2. ``stack_frame``: Node frames (``at fn (/x.js:1:2)``, ``at /x.js:1:2``, ``at async fn (file:///...)``,
   ``at new X (<anonymous>)``, ``at Promise.all (index 0)``) and Python frames
   (``Traceback (most recent call last):``, ``File "/x.py", line 3, in f``). A line made only of
   frames is removed (for a Python ``File`` line, so are the more-indented source/caret lines under
   it); a frame inside other text becomes ``[redacted frame]``. The human message line survives. A
   Node location must look like a file (contain ``/``, ``\\`` or ``name.ext``) so that times such as
   ``at 4:06:30`` are left alone.
3. ``auth_header``: the value of ``Authorization`` / ``Proxy-Authorization`` (scheme kept, e.g.
   ``Authorization: Bearer [redacted credential]``), a free-standing ``Bearer <token>`` when the
   token contains a digit or symbol (so "Bearer authentication" stays), and curl's
   ``-u user:password`` / ``--user=user:password``.
4. ``cookie_header``: the value of ``Cookie:`` / ``Set-Cookie:`` (all ``name=value`` pairs).
5. ``env_assignment``: ``NAME=value`` where ``NAME`` is an upper-case identifier of 2+ characters
   (with or without ``export``/``set``/``$env:`` before it); quoted, unquoted and JSON-escaped values.
   A variable *named* alone (``ANTHROPIC_API_KEY``) is not touched, nor ``IS_SANDBOX=1`` (the switch
   the agent's own advice names: a fixed, public value).
6. ``secret_assignment``: ``name=value`` / ``name: value`` / ``"name": "value"`` where the name
   denotes a secret (contains secret, password, passwd, pwd, credential, signature, api_key, apiKey,
   private_key, access_key, auth (not author), cookie, session, bearer, jwt, token (not ``tokens``,
   ``max_tokens`` and other token *counts*), or has a segment key, pass, sig, pat, otp). Covers
   ``x-api-key:`` and similar headers, ``--password=...`` flags, YAML, JSON and INI. With ``:`` and an
   unquoted, single plain word as the name, only password/passwd/pwd/passphrase/secret count, so
   prose such as "Invalid API key: ..." or "Token: expired" is kept.
7. ``url_userinfo``: ``scheme://user:pass@host`` becomes ``scheme://[redacted credential]@host``.
8. ``url_secret_param``: query parameters with a secret-like name (the names of rule 6, plus
   ``code``, ``sid``; e.g. ``token``, ``access_token``, ``api_key``, ``key``, ``sig``,
   ``X-Amz-Signature``, ``X-Amz-Credential``) keep the name and lose the value.
9. ``vendor_token``: known key formats: Anthropic ``sk-ant-...``, OpenAI ``sk-...``/``sk-proj-...``,
   Stripe ``sk_live_``/``rk_``/``pk_``/``whsec_``, AWS access key ids (``AKIA``, ``ASIA``, ...),
   Google ``AIza...``/``ya29.``/``GOCSPX-``, GitHub ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_``/
   ``github_pat_``, GitLab ``glpat-``, Slack ``xox?-``/``xapp-`` and webhook paths, npm ``npm_``,
   Hugging Face ``hf_``, PyPI ``pypi-``, SendGrid ``SG.``, DigitalOcean ``dop_v1_``, Shopify ``shp*_``.
10. ``jwt``: three (or more) base64url segments starting with ``eyJ``.
11. ``private_path``: ``/home/<user>``, ``/Users/<user>``, ``/root``, ``~/``, ``~user/``, ``$HOME/``,
    ``/tmp``, ``/var/tmp``, ``/var/folders``, ``/private/var``, ``/private/tmp``, ``/dev/shm``,
    ``/run/user``, ``/mnt/<drive>/Users``, ``file://`` forms of these, ``X:\\Users\\...`` (also with
    ``/`` or JSON-doubled backslashes), ``X:\\Windows\\Temp``, ``%USERPROFILE%``-style variables and
    UNC ``\\\\server\\share`` paths, each through the end of the path; a path preceded by a word
    character, ``.`` or ``%`` (i.e. inside a URL such as ``https://host/home/x``) is not a filesystem
    path. ``/login`` and other slash commands are not paths.
12. ``high_entropy``: a run of 40+ base64/base64url characters mixing upper case, lower case and
    digits with a Shannon entropy of at least 4.3 bits per character (random 40-character keys score
    4.6 to 5.0, identifiers and paths about 4.0 to 4.3), unless it reads as a path (two or more
    lower-case ``/`` segments); this catches keys of unknown formats.
13. ``recurrence``: a value one of the rules above masked as a secret (an ``Authorization`` or cookie
    value, a URL password, the value of a secret-named key or environment variable, a vendor key, a
    JWT, a high-entropy key) of 6+ characters, not all digits, is masked (``[redacted credential]``)
    at every other occurrence in the text too: ``hunter2pass`` in "... cookie hunter2pass" after
    ``https://carol:hunter2pass@host``. Placeholders are never touched. :class:`SecretMemory` carries
    the values found from one text to the next (the texts of a session, of a failure).

Prose
=====
Transcript prose (Claude's messages, the user's prompts) is shown as it is, but never with a
credential in it: :func:`mask_credentials` applies the credential rules only (1, 3, 4, 6, 7, 8, 9,
10 and 13) and leaves everything else byte for byte: stack frames, paths, non-secret environment
values, unknown-format high-entropy strings, and code that assigns an expression to a secret-named
key (``token = get_token()``, ``api_key = os.environ["KEY"]``).

Guarantees
==========
* **Total**: :func:`redact` never raises for any ``str`` (lone surrogates, NUL, megabytes). All work
  is ``str``/``re`` operations on the text; as a last resort any internal error fails closed to
  ``[redacted]``.
* **Idempotent**: ``redact(redact(x)) == redact(x)``. Placeholders contain a space and brackets, which
  no rule accepts inside a secret, so they are inert; because one replacement can expose a new
  boundary for an earlier rule (``...[redacted key]/home/bob``), :func:`redact` repeats the rule list
  until nothing changes (at most :data:`_MAX_PASSES` passes, normally one or two) and fails closed to
  ``[redacted]`` if it did not settle, so the result is always a fixed point.
* **Linear time**: every regex is written to avoid catastrophic backtracking: matches may only start
  after a non-word character (lookbehinds), open with a literal, use possessive quantifiers and
  atomic groups, and use character classes that exclude their own delimiters, so each character is
  examined a bounded number of times. PEM blocks, assignments and stack frames are scanned with
  explicit loops that never rescan text. Clean text without any trigger character (``: = / \\ ~ $ %``)
  or token-like run takes a single precompiled ``search`` (the fast path every error title hits).
* **No I/O**, standard library only.

Limitations: secrets of unknown formats that are short, low in entropy and not introduced by a
secret-like name, header or assignment cannot be recognised; paths with spaces are redacted up to
the first space (the user-identifying prefix is always covered).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Sequence
from contextvars import ContextVar
from typing import Final, NamedTuple

__all__ = [
    "CREDENTIAL_PLACEHOLDER",
    "ENV_PLACEHOLDER",
    "FALLBACK_PLACEHOLDER",
    "FRAME_PLACEHOLDER",
    "KEY_PLACEHOLDER",
    "PATH_PLACEHOLDER",
    "PEM_PLACEHOLDER",
    "RULES",
    "VERBATIM_UPDATES",
    "Rule",
    "SecretMemory",
    "contains_secret",
    "mask_credentials",
    "redact",
]

PEM_PLACEHOLDER: Final = "[redacted pem]"
FRAME_PLACEHOLDER: Final = "[redacted frame]"
CREDENTIAL_PLACEHOLDER: Final = "[redacted credential]"
ENV_PLACEHOLDER: Final = "[redacted env]"
KEY_PLACEHOLDER: Final = "[redacted key]"
PATH_PLACEHOLDER: Final = "[redacted path]"
FALLBACK_PLACEHOLDER: Final = "[redacted]"

#: Upper bound on passes of the rule list (see "Idempotent" above).
_MAX_PASSES: Final = 4

_PLACEHOLDER_PREFIX: Final = "[redacted"
_TRAILING_PUNCT: Final = ".,;:!?"


class Rule(NamedTuple):
    """One redaction rule, for documentation."""

    name: str
    description: str


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


# The secret values the running :func:`_settle` found (None outside of one): each rule that masks
# a credential reports the value, so that its other occurrences are masked too (rule 13).
_FOUND: ContextVar[set[str] | None] = ContextVar("lifecycle_redaction_found", default=None)
_MIN_RECURRING: Final = 6


def _remember(value: str) -> None:
    """Report a masked secret ``value`` (quotes and sentence punctuation trimmed)."""
    found = _FOUND.get()
    if found is None:
        return
    value = value.strip().strip("\\\"'").rstrip(_TRAILING_PUNCT)
    if len(value) >= _MIN_RECURRING and not value.isdigit() and _PLACEHOLDER_PREFIX not in value and "\n" not in value:
        found.add(value)


def _remember_credential(cred: str) -> None:
    """A credential and its parts: ``user:password`` -> the password, ``a=1; b=2`` -> each value."""
    _remember(cred)
    if ":" in cred:
        _remember(cred.split(":", 1)[1])
    for pair in cred.split(";"):
        if "=" in pair:
            _remember(pair.split("=", 1)[1])


def _split_trailing(value: str) -> tuple[str, str]:
    """``(core, trailing sentence punctuation)``."""
    core = value.rstrip(_TRAILING_PUNCT)
    return core, value[len(core) :]


# A value after ``=`` or ``:``: double-quoted (with escapes), single-quoted, JSON-escaped quotes,
# an unterminated quote (to the end of the line), or a bare run without spaces, quotes, brackets or
# "&" (which ends a query parameter or a shell command); a backslash is allowed unless it escapes a
# quote, so JSON-escaped strings end cleanly.
_VALUE: Final = r"""(?:
    "(?:[^"\\\n]|\\.)*+"
  | '[^'\n]*+'
  | \\"[^"\\\n]*+\\"
  | \\?["'][^"'\n]*+
  | (?:[^\s"'`<>()\[\]{}&\\]|\\(?!["']))++
)"""
_VALUE_RE: Final = re.compile(_VALUE, re.X)


def _replace_value(value: str, placeholder: str) -> str | None:
    """The replacement for an assigned ``value`` (quotes kept), or ``None`` to keep it."""
    for quote in ('\\"', '"', "'"):
        if value.startswith(quote):
            inner = value[len(quote) :]
            closed = inner.endswith(quote)
            if closed:
                inner = inner[: -len(quote)]
            if not inner.strip() or inner.startswith(_PLACEHOLDER_PREFIX):
                return None
            return quote + placeholder + (quote if closed else "")
    core, trail = _split_trailing(value)
    if not core or core.startswith(_PLACEHOLDER_PREFIX):
        return None
    return placeholder + trail


_CAMEL_RE: Final = re.compile(r"([a-z0-9])([A-Z])")
_NON_SECRET_TOKEN_RE: Final = re.compile(
    r"(?:max|min|input|output|budget|num|total|context|cache|thinking|completion|prompt)_?tokens?"
)
_SENSITIVE_NAME_RE: Final = re.compile(
    r"secret|passw|passphrase|pwd|credential|signature|api_?key|private_?key|access_?key"
    r"|auth(?!or)|cookie|session|bearer|jwt|token(?!s|i[sz]|_?(?:count|limit|budget|usage|type))"
)
_SENSITIVE_SEGMENTS: Final = frozenset({"key", "pass", "sig", "pat", "otp"})
_STRONG_PLAIN_NAMES: Final = frozenset({"password", "passwd", "pwd", "passphrase", "secret"})
_QUERY_EXTRA_NAMES: Final = frozenset({"code", "sid"})
# Names whose values the header rules handle (they have schemes / cookie lists).
_HEADER_NAMES: Final = frozenset({"authorization", "proxy_authorization", "cookie", "set_cookie"})


def _normalize_name(name: str) -> str:
    """``x-Api.Key`` / ``apiKey`` -> ``x_api_key`` / ``api_key``."""
    name = _CAMEL_RE.sub(r"\1_\2", name).lower()
    return name.replace("-", "_").replace(".", "_").replace("%", "_").strip("_")


def _name_is_sensitive(norm: str) -> bool:
    if _SENSITIVE_NAME_RE.search(_NON_SECRET_TOKEN_RE.sub("", norm)):
        return True
    return not _SENSITIVE_SEGMENTS.isdisjoint(norm.split("_"))


def _shannon_entropy(text: str) -> float:
    counts: dict[str, int] = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    total = len(text)
    return -sum(c / total * math.log2(c / total) for c in counts.values())


# --------------------------------------------------------------------------------------------
# 1. PEM blocks
# --------------------------------------------------------------------------------------------

_PEM_BEGIN_RE: Final = re.compile(r"-----BEGIN[ A-Za-z0-9]{0,64}-----")
_PEM_END_RE: Final = re.compile(r"-----END[ A-Za-z0-9]{0,64}-----")


def _redact_pem(text: str) -> str:
    if "-----BEGIN" not in text:
        return text
    out: list[str] = []
    pos = 0
    while (begin := _PEM_BEGIN_RE.search(text, pos)) is not None:
        out.append(text[pos : begin.start()])
        out.append(PEM_PLACEHOLDER)
        end = _PEM_END_RE.search(text, begin.end())
        if end is None:  # unterminated (truncated) key material: nothing after it is trusted
            return "".join(out)
        pos = end.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# --------------------------------------------------------------------------------------------
# 2. Stack frames
# --------------------------------------------------------------------------------------------

# ``at`` must start a word (or follow a JSON-escaped newline). Callee and bare locations are
# single tokens (possessive); a parenthesised location may contain spaces but no parentheses.
_NODE_FRAME_RE: Final = re.compile(
    r"""
    (?:(?<![\w$.])|(?<=\\n))
    at[ ]++
    (?:(?:async|new)[ ]++)*+
    (?:
        [^\s()]++(?:[ ]\[as[ ][^\]\s]++\])?[ ]
        \((?:(?P<ploc>[^()\n]*?:\d++:\d++)|native|<anonymous>|index[ ]\d++|unknown[ ]location)\)
      | (?P<bloc>[^\s()]+:\d+:\d+)
      | <anonymous>
    )
    """,
    re.X,
)
_FILE_LIKE_RE: Final = re.compile(r"[/\\]|\.[A-Za-z]\w*+$")
_LINE_COL_RE: Final = re.compile(r":\d++:\d++$")
_PY_FRAME_RE: Final = re.compile(
    r"""
    (?:(?<!\w)|(?<=\\n))
    File[ ]\\?"[^"\n]*+",[ ]line[ ]\d++(?:,[ ]in[ ][^\s,"\\]++)?
    (?:\\n[ ]{3,}+[^\\"\n]*+)?
    """,
    re.X,
)
_PY_TRACEBACK_RE: Final = re.compile(r"Traceback[ ]\(most[ ]recent[ ]call[ ]last\):?")


def _node_frame_repl(m: re.Match[str]) -> str:
    loc = m["ploc"] or m["bloc"]
    if loc is not None:
        path = _LINE_COL_RE.sub("", loc)
        if not _FILE_LIKE_RE.search(path):
            return m.group()  # e.g. "at 4:06:30", not a frame
        if "://" in path and not path.startswith(("file://", "webpack://", "http://", "https://")):
            return m.group()
    return FRAME_PLACEHOLDER


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _redact_frames(text: str) -> str:
    if "at " not in text and "File " not in text and "Traceback" not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    changed = False
    source_indent = -1  # >= 0 while dropping the source lines under a dropped Python "File" line
    for line in lines:
        if source_indent >= 0:
            if line.strip() and _indent(line) > source_indent and not _PY_FRAME_RE.search(line):
                changed = True
                continue
            source_indent = -1
        new = line
        py_frame = False
        if "at " in line:
            new = _NODE_FRAME_RE.sub(_node_frame_repl, new)
        if "File " in line:
            newer = _PY_FRAME_RE.sub(FRAME_PLACEHOLDER, new)
            py_frame = newer != new
            new = newer
        if "Traceback" in line:
            new = _PY_TRACEBACK_RE.sub(FRAME_PLACEHOLDER, new)
        if new != line:
            changed = True
            if not new.replace(FRAME_PLACEHOLDER, "").strip():
                if py_frame:
                    source_indent = _indent(line)
                continue
        out.append(new)
    return "\n".join(out) if changed else text


# --------------------------------------------------------------------------------------------
# 3./4. Auth and cookie headers
# --------------------------------------------------------------------------------------------

_CRED: Final = r"""[^\s"'`<>()\[\]{},;\\]++"""
_AUTH_HEADER_RE: Final = re.compile(
    r"""
    (?<![\w-])(?P<head>(?:proxy-)?authorization(?:\\?["'])?[ \t]*+[:=][ \t]*+(?:\\?["'])?
    (?:(?:bearer|basic|token|digest|negotiate|ntlm|apikey|api-key|key|sso-key|aws4-hmac-sha256
        |hmac|dpop|mac|oauth|pat)[ \t]++)?+)
    (?P<cred>"""
    + _CRED
    + r"""(?:,[ \t]*+[\w-]++=(?:"[^"\n]*+"|[^\s,"'`<>()\[\]{}\\]*+))*+)
    """,
    re.X | re.I,
)
# curl/wget style ``-u user:password`` / ``--user=user:password``.
_USER_FLAG_RE: Final = re.compile(
    r"(?<![\w-])(?P<head>(?:-u|--user|--proxy-user)(?:[ \t]++|=))(?P<cred>[^\s:\"'`<>()\[\]{}]++:[^\s\"'`<>()\[\]{}]++)"
)
_BEARER_RE: Final = re.compile(r"(?<![\w-])(?P<head>[Bb]earer[ \t]++)(?P<cred>[A-Za-z0-9._~+/=-]{8,}+)")
_COOKIE_RE: Final = re.compile(
    r"""
    (?<![\w-])(?P<head>(?:set-)?cookie(?:\\?["'])?[ \t]*+:[ \t]*+(?:\\?["'])?)
    (?P<cred>[^\s;,"'`<>()\[\]{}\\]++(?:;[ \t]?+[^\s;,="'`<>()\[\]{}\\]++=[^\s;,"'`<>()\[\]{}\\]*+)*+)
    """,
    re.X | re.I,
)


def _cred_repl(m: re.Match[str]) -> str:
    core, trail = _split_trailing(m["cred"])
    if not core:
        return m.group()
    _remember_credential(core)
    return m["head"] + CREDENTIAL_PLACEHOLDER + trail


def _bearer_repl(m: re.Match[str]) -> str:
    core, _ = _split_trailing(m["cred"])
    if core.isalpha():  # "Bearer authentication", not a token
        return m.group()
    return _cred_repl(m)


def _redact_auth(text: str) -> str:
    low = text.lower()
    if "authorization" in low:
        text = _AUTH_HEADER_RE.sub(_cred_repl, text)
    if "earer" in text:
        text = _BEARER_RE.sub(_bearer_repl, text)
    if "-u" in text:
        text = _USER_FLAG_RE.sub(_cred_repl, text)
    return text


def _redact_cookies(text: str) -> str:
    if "cookie" not in text.lower():
        return text
    return _COOKIE_RE.sub(_cred_repl, text)


# --------------------------------------------------------------------------------------------
# 5./6. Environment and secret assignments
# --------------------------------------------------------------------------------------------

_ENV_RE: Final = re.compile(
    r"(?<![\w.$-])(?P<name>[A-Z_][A-Z0-9_]++)=(?![=>~])(?P<value>" + _VALUE + ")",
    re.X,
)


#: ``NAME=value`` assignments whose value is public (shown in the agent's own advice).
_PUBLIC_ENV: Final = frozenset({"IS_SANDBOX=1"})


def _env_repl(m: re.Match[str]) -> str:
    if f"{m['name']}={_split_trailing(m['value'])[0]}" in _PUBLIC_ENV:
        return m.group()
    repl = _replace_value(m["value"], ENV_PLACEHOLDER)
    if repl is None:
        return m.group()
    if _name_is_sensitive(_normalize_name(m["name"])):
        _remember(m["value"])
    return m["name"] + "=" + repl


def _redact_env(text: str) -> str:
    if "=" not in text:
        return text
    return _ENV_RE.sub(_env_repl, text)


# The name holds a keyword (atomic lazy scan to the first one, then the rest of the name), so the
# loop only stops at candidate names; :func:`_assignment_is_sensitive` decides.
_ASSIGN_RE: Final = re.compile(
    r"""
    (?<![\w.$-])
    (?P<oq>\\?["'])?
    (?P<name>-{0,2}+(?!(?:set-)?cookie(?![\w.-])|(?:proxy-)?authorization(?![\w.-]))
        (?>[\w.-]*?(?:secret|token|pass|pwd|key|credential|auth|session|cookie|sig|jwt
        |pat|otp|bearer))[\w.-]*+)
    (?P<cq>\\?["'])?
    [ \t]*+
    (?P<sep>=(?![=>~])|:(?![:/\\]))
    [ \t]*+
    """,
    re.X | re.I,
)


def _assignment_is_sensitive(m: re.Match[str]) -> bool:
    name = m["name"].lstrip("-")
    norm = _normalize_name(name)
    if norm in _HEADER_NAMES or not _name_is_sensitive(norm):
        return False
    if m["sep"] == ":" and not m["cq"]:  # a quoted key has its closing quote before the ":"
        compound = any(c in name for c in "_-.") or _CAMEL_RE.search(name) is not None
        return compound or norm in _STRONG_PLAIN_NAMES
    return True


_ASSIGN_KEYWORDS: Final = (
    "secret", "token", "pass", "pwd", "key", "credential", "auth", "session", "cookie", "sig", "jwt",
    "pat", "otp", "bearer",
)  # fmt: skip


# A bare value that is code, not a secret (prose mode): ``get_token()``, ``os.environ[...]``,
# ``self.api_key``, ``None``.
_CODE_LITERALS: Final = frozenset({"None", "null", "nil", "true", "false", "True", "False", "undefined"})
_DOTTED_NAME_RE: Final = re.compile(r"[A-Za-z_$][\w$]*+(?:\.[A-Za-z_$][\w$]*+)++")


def _is_code(value: str, text: str, end: int) -> bool:
    if value[:1] in ("'", '"', "\\"):
        return False  # a quoted literal
    core, _ = _split_trailing(value)
    if core in _CODE_LITERALS or _DOTTED_NAME_RE.fullmatch(core):
        return True
    return end < len(text) and text[end] in "([{"


def _redact_assignments(text: str, *, prose: bool = False) -> str:
    if "=" not in text and ":" not in text:
        return text
    low = text.lower()
    if not any(word in low for word in _ASSIGN_KEYWORDS):
        return text
    out: list[str] = []
    last = pos = 0
    while (m := _ASSIGN_RE.search(text, pos)) is not None:
        pos = m.end()
        if not _assignment_is_sensitive(m):
            continue
        value = _VALUE_RE.match(text, pos)
        if value is None:
            continue
        if prose and _is_code(value.group(), text, value.end()):
            continue
        repl = _replace_value(value.group(), CREDENTIAL_PLACEHOLDER)
        if repl is None:
            continue
        _remember(value.group())
        out.append(text[last:pos])
        out.append(repl)
        last = pos = value.end()
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


# --------------------------------------------------------------------------------------------
# 7./8. URLs
# --------------------------------------------------------------------------------------------

# Userinfo runs to the last "@" of the authority (passwords may contain a raw "@").
_URL_USERINFO_RE: Final = re.compile(
    r"(?<![A-Za-z0-9+.-])(?P<head>[A-Za-z][A-Za-z0-9+.-]*+://)(?P<userinfo>[^\s/?#\"'`<>()\[\]{}\\]+)@"
)
_URL_PARAM_RE: Final = re.compile(r"(?P<head>[?&;](?P<name>[\w.%-]++)=)(?P<cred>[^&#\s\"'`<>()\[\]{}\\]++)")


def _userinfo_repl(m: re.Match[str]) -> str:
    userinfo = m["userinfo"]
    _remember(userinfo.split(":", 1)[1] if ":" in userinfo else userinfo)
    return m["head"] + CREDENTIAL_PLACEHOLDER + "@"


def _param_repl(m: re.Match[str]) -> str:
    norm = _normalize_name(m["name"])
    if norm in _QUERY_EXTRA_NAMES or _name_is_sensitive(norm):
        return _cred_repl(m)
    return m.group()


def _redact_userinfo(text: str) -> str:
    if "@" not in text or "://" not in text:
        return text
    return _URL_USERINFO_RE.sub(_userinfo_repl, text)


def _redact_params(text: str) -> str:
    if "=" not in text:
        return text
    return _URL_PARAM_RE.sub(_param_repl, text)


# --------------------------------------------------------------------------------------------
# 9./10./12. Tokens
# --------------------------------------------------------------------------------------------

_VENDOR_RE: Final = re.compile(
    r"""
    (?=[ASGTdghnprswxy])  # cheap first-character filter
    (?<![A-Za-z0-9_-])
    (?:
        sk-ant-[A-Za-z0-9_-]{16,}+
      | (?P<openai>sk-[A-Za-z0-9_-]{20,}+)
      | (?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}+
      | whsec_[A-Za-z0-9]{20,}+
      | (?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}(?![A-Za-z0-9])
      | AIza[A-Za-z0-9_-]{30,}+
      | ya29\.[A-Za-z0-9_-]{20,}+
      | GOCSPX-[A-Za-z0-9_-]{20,}+
      | gh[pousr]_[A-Za-z0-9]{20,}+
      | github_pat_[A-Za-z0-9_]{20,}+
      | glpat-[A-Za-z0-9_-]{20,}+
      | xox[abposre]-[A-Za-z0-9-]{10,}+
      | xapp-[A-Za-z0-9-]{10,}+
      | T[A-Z0-9]{8,}+/B[A-Z0-9]{8,}+/[A-Za-z0-9]{16,}+
      | npm_[A-Za-z0-9]{30,}+
      | hf_[A-Za-z0-9]{30,}+
      | pypi-[A-Za-z0-9_-]{40,}+
      | SG\.[A-Za-z0-9_-]{16,}+\.[A-Za-z0-9_-]{16,}+
      | do[por]_v1_[a-f0-9]{40,}+
      | shp(?:at|ss|ca|pa)_[A-Fa-f0-9]{32,}+
    )
    """,
    re.X,
)
_HAS_DIGIT_RE: Final = re.compile(r"\d")
_JWT_RE: Final = re.compile(
    r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,}+\.[A-Za-z0-9_-]{10,}+\.[A-Za-z0-9_-]*+(?:\.[A-Za-z0-9_-]*+){0,2}"
)
_HIGH_ENTROPY_RE: Final = re.compile(r"(?<![A-Za-z0-9_+/=-])[A-Za-z0-9_+/=-]{40,}+")
_MIN_ENTROPY: Final = 4.3


def _vendor_repl(m: re.Match[str]) -> str:
    token = m.group()
    if m["openai"] is not None and not _HAS_DIGIT_RE.search(token):
        return token  # "sk-" + words, e.g. a kebab-case name, not a key
    _remember(token)
    return KEY_PLACEHOLDER


def _jwt_repl(m: re.Match[str]) -> str:
    core, trail = _split_trailing(m.group())
    _remember(core)
    return KEY_PLACEHOLDER + trail


def _looks_like_path(token: str) -> bool:
    """Two or more ``/``-separated lower-case segments: ``projects/my-proj/locations/...``."""
    words = 0
    for segment in token.split("/"):
        if len(segment) >= 3 and segment.islower():
            words += 1
            if words >= 2:
                return True
    return False


def _entropy_repl(m: re.Match[str]) -> str:
    token = m.group()
    if (
        any(c.isupper() for c in token)
        and any(c.islower() for c in token)
        and any(c.isdigit() for c in token)
        and _shannon_entropy(token) >= _MIN_ENTROPY
        and not _looks_like_path(token)
    ):
        _remember(token)
        return KEY_PLACEHOLDER
    return token


def _redact_vendor(text: str) -> str:
    return _VENDOR_RE.sub(_vendor_repl, text)


def _redact_jwt(text: str) -> str:
    if "eyJ" not in text:
        return text
    return _JWT_RE.sub(_jwt_repl, text)


def _redact_entropy(text: str) -> str:
    return _HIGH_ENTROPY_RE.sub(_entropy_repl, text)


# --------------------------------------------------------------------------------------------
# 11. Private paths
# --------------------------------------------------------------------------------------------

_PATH_STOP: Final = r"""\s"'`<>()\[\]{}|,;\\"""
_PATH_RE: Final = re.compile(
    r"""
    (?=[/~$%\\]|[A-Za-z]:|file:)  # cheap first-character filter
    (?:
      (?<![\w.%~+-])
      (?:
          (?:file://)?/
          (?:
              (?:mnt/[A-Za-z]/)?(?:home|Users)/(?=[^/"""
    + _PATH_STOP
    + r"""])
            | (?:root|(?:private/)?(?:tmp|var/tmp|var/folders)|private/var|dev/shm|run/user)(?![\w.-])
          )
        | ~(?:[A-Za-z_][\w.-]*+)?(?=/)
        | \$(?:HOME|TMPDIR|\{HOME\}|\{TMPDIR\})(?=[/\\])
        | %(?i:USERPROFILE|HOMEPATH|APPDATA|LOCALAPPDATA|TEMP|TMP)%
        | [A-Za-z]:(?:\\{1,4}|/)
          (?:(?i:Users|Documents[ ]and[ ]Settings)(?:\\{1,4}|/)|(?i:Windows)(?:\\{1,4}|/)(?i:Temp)(?![\w.-]))
      )
    | (?<![\w\\])\\\\(?:\\\\){0,3}[\w$-][\w.$-]*+\\{1,8}(?=[\w.$-])
    )
    (?:[^"""
    + _PATH_STOP
    + r"""]|\\(?!["'\s]))*+
    """,
    re.X,
)
# Every match contains one of these (lower-cased), so text without them skips the regex.
_PATH_HINTS: Final = (
    "/home/", "/users/", "/root", "/tmp", "/var/", "/private/", "/dev/shm", "/run/user", "~",
    "$home", "${home}", "$tmpdir", "${tmpdir}", "%", "\\\\", ":\\users", ":/users", ":\\\\users",
    ":\\documents", ":/documents", ":\\\\documents", "windows",
)  # fmt: skip


def _path_repl(m: re.Match[str]) -> str:
    _, trail = _split_trailing(m.group())
    return PATH_PLACEHOLDER + trail


def _redact_paths(text: str) -> str:
    low = text.lower()
    if not any(hint in low for hint in _PATH_HINTS):
        return text
    return _PATH_RE.sub(_path_repl, text)


# --------------------------------------------------------------------------------------------
# Pipeline
# --------------------------------------------------------------------------------------------

_PIPELINE: Final[tuple[tuple[Rule, Callable[[str], str]], ...]] = (
    (Rule("pem_block", "PEM blocks (BEGIN through END, or to the end if unterminated)"), _redact_pem),
    (
        Rule("stack_frame", "Node and Python stack frames: frame-only lines removed, inline frames replaced"),
        _redact_frames,
    ),
    (Rule("auth_header", "Authorization / Proxy-Authorization values, bare Bearer tokens, -u user:pass"), _redact_auth),
    (Rule("cookie_header", "Cookie / Set-Cookie header values"), _redact_cookies),
    (Rule("env_assignment", "values of NAME=value environment assignments"), _redact_env),
    (
        Rule("secret_assignment", "values assigned to secret-named keys (password=, api_key:, x-api-key:)"),
        _redact_assignments,
    ),
    (Rule("url_userinfo", "user:password@ in URLs"), _redact_userinfo),
    (
        Rule("url_secret_param", "secret query parameters (token=, access_token=, sig=, X-Amz-Signature=)"),
        _redact_params,
    ),
    (
        Rule("vendor_token", "known API key and token formats (sk-ant-, sk-, AKIA, AIza, ghp_, xoxb-, ...)"),
        _redact_vendor,
    ),
    (Rule("jwt", "JSON Web Tokens (eyJ... three base64url segments)"), _redact_jwt),
    (Rule("private_path", "home, temp and Windows user paths, UNC shares"), _redact_paths),
    (Rule("high_entropy", "40+ character high-entropy base64 strings of unknown formats"), _redact_entropy),
)

#: The rules :func:`redact` applies, in order: ``(name, description)`` pairs for documentation.
RULES: Final[tuple[Rule, ...]] = tuple(rule for rule, _ in _PIPELINE)

# Anything a rule can match contains one of these (the fast path for clean titles).
_SUSPICIOUS_RE: Final = re.compile(
    r"""[:=/\\~$%]|-----|Traceback|File[ ]\\?"|<anonymous>|\((?:native|index[ ])|earer|[A-Za-z0-9_+-]{12}""",
    re.X,
)


# The credential rules alone, for prose (:func:`mask_credentials`).
_CREDENTIAL_PIPELINE: Final[tuple[Callable[[str], str], ...]] = (
    _redact_pem,
    _redact_auth,
    _redact_cookies,
    lambda text: _redact_assignments(text, prose=True),
    _redact_userinfo,
    _redact_params,
    _redact_vendor,
    _redact_jwt,
)
_RULE_FUNCS: Final[tuple[Callable[[str], str], ...]] = tuple(apply for _, apply in _PIPELINE)

# Placeholders are left alone when recurrences are masked (a secret may be a word of one).
_PLACEHOLDER_RE: Final = re.compile(r"\[redacted(?: [a-z]+)?\]")


def _mask_known(text: str, secrets: Collection[str]) -> str:
    """``text`` with every occurrence of each of ``secrets`` masked (rule 13), placeholders kept."""
    present = [s for s in secrets if s in text]
    if not present:
        return text
    pattern = re.compile("|".join(re.escape(s) for s in sorted(present, key=len, reverse=True)))
    out: list[str] = []
    pos = 0
    for placeholder in _PLACEHOLDER_RE.finditer(text):
        out.append(pattern.sub(CREDENTIAL_PLACEHOLDER, text[pos : placeholder.start()]))
        out.append(placeholder.group())
        pos = placeholder.end()
    out.append(pattern.sub(CREDENTIAL_PLACEHOLDER, text[pos:]))
    return "".join(out)


def _apply(text: str, rules: Sequence[Callable[[str], str]], found: set[str], known: Collection[str]) -> str:
    for apply in rules:
        text = apply(text)
    return _mask_known(text, found.union(known)) if found or known else text


def _redact_once(text: str) -> str:
    """One pass of the rule list, with rule 13 for the secrets this pass found."""
    found: set[str] = set()
    token = _FOUND.set(found)
    try:
        return _apply(text, _RULE_FUNCS, found, ())
    finally:
        _FOUND.reset(token)


def _run(text: str, rules: Sequence[Callable[[str], str]], known: Collection[str] = ()) -> tuple[str, set[str]]:
    """Apply ``rules`` and rule 13 (for the secrets found and ``known``) until nothing changes:
    ``(result, secrets found)``. Never raises; fails closed to :data:`FALLBACK_PLACEHOLDER`."""
    try:
        if not text or (_SUSPICIOUS_RE.search(text) is None and not any(s in text for s in known)):
            return text, set()
        found: set[str] = set()
        token = _FOUND.set(found)
        try:
            current = text
            for _ in range(_MAX_PASSES):
                after = _apply(current, rules, found, known)
                if after == current:
                    return current, found
                current = after
            return FALLBACK_PLACEHOLDER, found  # did not settle: fail closed (keeps redact idempotent)
        finally:
            _FOUND.reset(token)
    except Exception:  # pragma: no cover - defensive: never raise, never leak
        return FALLBACK_PLACEHOLDER, set()


def redact(text: str) -> str:
    """``text`` with every secret, credential, stack frame and private path replaced.

    See the module documentation for the rules and placeholders. Total (never raises), idempotent
    and linear in ``len(text)``; Claude's own user-facing messages come back unchanged. A secret
    found anywhere in ``text`` is masked at every occurrence (rule 13).
    """
    return _run(text, _RULE_FUNCS)[0]


#: ACP ``sessionUpdate`` kinds sent verbatim, never masked: a tool card shows what runs and what
#: Claude was sent (docs/security.md, "What is masked where"); so is a ``session/request_permission``.
VERBATIM_UPDATES: Final = frozenset({"tool_call", "tool_call_update"})


def mask_credentials(text: str) -> str:
    """``text`` (transcript prose) with its credentials masked and everything else byte for byte
    (module documentation, "Prose"). Total and idempotent."""
    return _run(text, _CREDENTIAL_PIPELINE)[0]


def contains_secret(text: str) -> bool:
    """True when :func:`redact` would change ``text``."""
    return redact(text) != text


class SecretMemory:
    """The secrets found in the texts of one conversation (a session's, a failure's): a secret
    found in one text is masked in every later one too (rule 13 across texts). At most ``limit``
    values are kept (the oldest are forgotten first)."""

    __slots__ = ("_known", "_limit")

    def __init__(self, limit: int = 256) -> None:
        self._known: dict[str, None] = {}
        self._limit = limit

    def redact(self, text: str) -> str:
        """:func:`redact`, plus every secret remembered; remembers the new ones."""
        return self._remember(*_run(text, _RULE_FUNCS, self._known.keys()))

    def mask(self, text: str) -> str:
        """:func:`mask_credentials`, plus every secret remembered; remembers the new ones."""
        return self._remember(*_run(text, _CREDENTIAL_PIPELINE, self._known.keys()))

    def _remember(self, out: str, found: set[str]) -> str:
        for secret in found:
            self._known.pop(secret, None)
            self._known[secret] = None
        while len(self._known) > self._limit:
            del self._known[next(iter(self._known))]
        return out
