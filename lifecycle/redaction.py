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

Modules
=======
This module is the public API (``lifecycle.redaction``: the functions, :class:`SecretMemory`,
:data:`RULES`, the placeholders) and the pipeline that runs the rules; the rules themselves are in
sibling modules, by what they recognise a secret by:

===================================  ===========================================================
:mod:`lifecycle.redaction_found`     the placeholders, and the secrets found (rule 13's memory)
:mod:`lifecycle.redaction_layout`    rules 1 and 2: PEM blocks, stack frames
:mod:`lifecycle.redaction_credentials`  rules 3 to 8: headers, assignments, URLs
:mod:`lifecycle.redaction_shapes`    rules 9 to 12: vendor tokens, JWTs, private paths, high entropy
===================================  ===========================================================
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from typing import Final, NamedTuple

from .redaction_credentials import (
    redact_assignments,
    redact_auth,
    redact_cookies,
    redact_env,
    redact_params,
    redact_userinfo,
)
from .redaction_found import (
    CREDENTIAL_PLACEHOLDER,
    ENV_PLACEHOLDER,
    FALLBACK_PLACEHOLDER,
    FOUND,
    FRAME_PLACEHOLDER,
    KEY_PLACEHOLDER,
    PATH_PLACEHOLDER,
    PEM_PLACEHOLDER,
)
from .redaction_layout import redact_frames, redact_pem
from .redaction_shapes import redact_entropy, redact_jwt, redact_paths, redact_vendor

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

#: Upper bound on passes of the rule list (see "Idempotent" above).
_MAX_PASSES: Final = 4


class Rule(NamedTuple):
    """One redaction rule, for documentation."""

    name: str
    description: str


# --------------------------------------------------------------------------------------------
# Pipeline
# --------------------------------------------------------------------------------------------

_PIPELINE: Final[tuple[tuple[Rule, Callable[[str], str]], ...]] = (
    (Rule("pem_block", "PEM blocks (BEGIN through END, or to the end if unterminated)"), redact_pem),
    (
        Rule("stack_frame", "Node and Python stack frames: frame-only lines removed, inline frames replaced"),
        redact_frames,
    ),
    (Rule("auth_header", "Authorization / Proxy-Authorization values, bare Bearer tokens, -u user:pass"), redact_auth),
    (Rule("cookie_header", "Cookie / Set-Cookie header values"), redact_cookies),
    (Rule("env_assignment", "values of NAME=value environment assignments"), redact_env),
    (
        Rule("secret_assignment", "values assigned to secret-named keys (password=, api_key:, x-api-key:)"),
        redact_assignments,
    ),
    (Rule("url_userinfo", "user:password@ in URLs"), redact_userinfo),
    (
        Rule("url_secret_param", "secret query parameters (token=, access_token=, sig=, X-Amz-Signature=)"),
        redact_params,
    ),
    (
        Rule("vendor_token", "known API key and token formats (sk-ant-, sk-, AKIA, AIza, ghp_, xoxb-, ...)"),
        redact_vendor,
    ),
    (Rule("jwt", "JSON Web Tokens (eyJ... three base64url segments)"), redact_jwt),
    (Rule("private_path", "home, temp and Windows user paths, UNC shares"), redact_paths),
    (Rule("high_entropy", "40+ character high-entropy base64 strings of unknown formats"), redact_entropy),
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
    redact_pem,
    redact_auth,
    redact_cookies,
    lambda text: redact_assignments(text, prose=True),
    redact_userinfo,
    redact_params,
    redact_vendor,
    redact_jwt,
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
    token = FOUND.set(found)
    try:
        return _apply(text, _RULE_FUNCS, found, ())
    finally:
        FOUND.reset(token)


def _run(text: str, rules: Sequence[Callable[[str], str]], known: Collection[str] = ()) -> tuple[str, set[str]]:
    """Apply ``rules`` and rule 13 (for the secrets found and ``known``) until nothing changes:
    ``(result, secrets found)``. Never raises; fails closed to :data:`FALLBACK_PLACEHOLDER`."""
    try:
        if not text or (_SUSPICIOUS_RE.search(text) is None and not any(s in text for s in known)):
            return text, set()
        found: set[str] = set()
        token = FOUND.set(found)
        try:
            current = text
            for _ in range(_MAX_PASSES):
                after = _apply(current, rules, found, known)
                if after == current:
                    return current, found
                current = after
            return FALLBACK_PLACEHOLDER, found  # did not settle: fail closed (keeps redact idempotent)
        finally:
            FOUND.reset(token)
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
        return self.remember(*_run(text, _RULE_FUNCS, self._known.keys()))

    def mask(self, text: str) -> str:
        """:func:`mask_credentials`, plus every secret remembered; remembers the new ones."""
        return self.remember(*_run(text, _CREDENTIAL_PIPELINE, self._known.keys()))

    def remember(self, out: str, found: set[str]) -> str:
        for secret in found:
            self._known.pop(secret, None)
            self._known[secret] = None
        while len(self._known) > self._limit:
            del self._known[next(iter(self._known))]
        return out
