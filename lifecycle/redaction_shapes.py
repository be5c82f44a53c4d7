"""Redaction rules 9 to 12 of :mod:`lifecycle.redaction`: secrets and private data recognised by
their shape alone: vendor key and token formats, JSON Web Tokens, private filesystem paths, and
high-entropy strings of unknown formats.

Rules: a match may only start after a non-word character; a masked key or token is reported
(:func:`~lifecycle.redaction_found.remember`) for rule 13; what reads as a path is not a key.
Standard library only.
"""

from __future__ import annotations

import math
import re
from typing import Final

from .redaction_found import KEY_PLACEHOLDER, PATH_PLACEHOLDER, remember, split_trailing

__all__ = ["redact_entropy", "redact_jwt", "redact_paths", "redact_vendor"]


def _shannon_entropy(text: str) -> float:
    counts: dict[str, int] = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    total = len(text)
    return -sum(c / total * math.log2(c / total) for c in counts.values())


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
    remember(token)
    return KEY_PLACEHOLDER


def _jwt_repl(m: re.Match[str]) -> str:
    core, trail = split_trailing(m.group())
    remember(core)
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
        remember(token)
        return KEY_PLACEHOLDER
    return token


def redact_vendor(text: str) -> str:
    return _VENDOR_RE.sub(_vendor_repl, text)


def redact_jwt(text: str) -> str:
    if "eyJ" not in text:
        return text
    return _JWT_RE.sub(_jwt_repl, text)


def redact_entropy(text: str) -> str:
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
    _, trail = split_trailing(m.group())
    return PATH_PLACEHOLDER + trail


def redact_paths(text: str) -> str:
    low = text.lower()
    if not any(hint in low for hint in _PATH_HINTS):
        return text
    return _PATH_RE.sub(_path_repl, text)
