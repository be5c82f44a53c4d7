"""Redaction rules 3 to 8 of :mod:`lifecycle.redaction`: credentials by where they stand, in an
``Authorization`` or cookie header, an environment or secret-named assignment, a URL's userinfo or
secret query parameter.

Rules: the harmless context is kept (header and variable names, scheme and host, quotes and sentence
punctuation) and only the value becomes a placeholder; every masked value is reported
(:func:`~lifecycle.redaction_found.remember`) for rule 13. Which names denote a secret is decided
here once (:func:`_name_is_sensitive`). Standard library only.
"""

from __future__ import annotations

import re
from typing import Final

from .redaction_found import (
    CREDENTIAL_PLACEHOLDER,
    ENV_PLACEHOLDER,
    PLACEHOLDER_PREFIX,
    remember,
    remember_credential,
    split_trailing,
)

__all__ = ["redact_assignments", "redact_auth", "redact_cookies", "redact_env", "redact_params", "redact_userinfo"]


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
            if not inner.strip() or inner.startswith(PLACEHOLDER_PREFIX):
                return None
            return quote + placeholder + (quote if closed else "")
    core, trail = split_trailing(value)
    if not core or core.startswith(PLACEHOLDER_PREFIX):
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
    core, trail = split_trailing(m["cred"])
    if not core:
        return m.group()
    remember_credential(core)
    return m["head"] + CREDENTIAL_PLACEHOLDER + trail


def _bearer_repl(m: re.Match[str]) -> str:
    core, _ = split_trailing(m["cred"])
    if core.isalpha():  # "Bearer authentication", not a token
        return m.group()
    return _cred_repl(m)


def redact_auth(text: str) -> str:
    low = text.lower()
    if "authorization" in low:
        text = _AUTH_HEADER_RE.sub(_cred_repl, text)
    if "earer" in text:
        text = _BEARER_RE.sub(_bearer_repl, text)
    if "-u" in text:
        text = _USER_FLAG_RE.sub(_cred_repl, text)
    return text


def redact_cookies(text: str) -> str:
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
    if f"{m['name']}={split_trailing(m['value'])[0]}" in _PUBLIC_ENV:
        return m.group()
    repl = _replace_value(m["value"], ENV_PLACEHOLDER)
    if repl is None:
        return m.group()
    if _name_is_sensitive(_normalize_name(m["name"])):
        remember(m["value"])
    return m["name"] + "=" + repl


def redact_env(text: str) -> str:
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
    core, _ = split_trailing(value)
    if core in _CODE_LITERALS or _DOTTED_NAME_RE.fullmatch(core):
        return True
    return end < len(text) and text[end] in "([{"


def redact_assignments(text: str, *, prose: bool = False) -> str:
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
        remember(value.group())
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
    remember(userinfo.split(":", 1)[1] if ":" in userinfo else userinfo)
    return m["head"] + CREDENTIAL_PLACEHOLDER + "@"


def _param_repl(m: re.Match[str]) -> str:
    norm = _normalize_name(m["name"])
    if norm in _QUERY_EXTRA_NAMES or _name_is_sensitive(norm):
        return _cred_repl(m)
    return m.group()


def redact_userinfo(text: str) -> str:
    if "@" not in text or "://" not in text:
        return text
    return _URL_USERINFO_RE.sub(_userinfo_repl, text)


def redact_params(text: str) -> str:
    if "=" not in text:
        return text
    return _URL_PARAM_RE.sub(_param_repl, text)
