"""What every redaction rule shares: the placeholders it writes, and where it reports the secret
values it masked so that their other occurrences are masked too (rule 13 of :mod:`lifecycle.redaction`).

Rules: a placeholder contains a space and brackets, which no rule accepts inside a secret, so it is
inert; a reported value is trimmed of quotes and sentence punctuation and kept only when it is long
enough to recur meaningfully (not all digits, no placeholder, one line). Standard library only.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Final

__all__ = [
    "CREDENTIAL_PLACEHOLDER",
    "ENV_PLACEHOLDER",
    "FALLBACK_PLACEHOLDER",
    "FOUND",
    "FRAME_PLACEHOLDER",
    "KEY_PLACEHOLDER",
    "PATH_PLACEHOLDER",
    "PEM_PLACEHOLDER",
    "PLACEHOLDER_PREFIX",
    "TRAILING_PUNCT",
    "remember",
    "remember_credential",
    "split_trailing",
]

PEM_PLACEHOLDER: Final = "[redacted pem]"
FRAME_PLACEHOLDER: Final = "[redacted frame]"
CREDENTIAL_PLACEHOLDER: Final = "[redacted credential]"
ENV_PLACEHOLDER: Final = "[redacted env]"
KEY_PLACEHOLDER: Final = "[redacted key]"
PATH_PLACEHOLDER: Final = "[redacted path]"
FALLBACK_PLACEHOLDER: Final = "[redacted]"

PLACEHOLDER_PREFIX: Final = "[redacted"
TRAILING_PUNCT: Final = ".,;:!?"


# The secret values the running redaction (:func:`lifecycle.redaction.redact` and the others) found
# (None outside of one): each rule that masks
# a credential reports the value, so that its other occurrences are masked too (rule 13).
FOUND: ContextVar[set[str] | None] = ContextVar("lifecycle_redaction_found", default=None)
MIN_RECURRING: Final = 6


def remember(value: str) -> None:
    """Report a masked secret ``value`` (quotes and sentence punctuation trimmed)."""
    found = FOUND.get()
    if found is None:
        return
    value = value.strip().strip("\\\"'").rstrip(TRAILING_PUNCT)
    if len(value) >= MIN_RECURRING and not value.isdigit() and PLACEHOLDER_PREFIX not in value and "\n" not in value:
        found.add(value)


def remember_credential(cred: str) -> None:
    """A credential and its parts: ``user:password`` -> the password, ``a=1; b=2`` -> each value."""
    remember(cred)
    if ":" in cred:
        remember(cred.split(":", 1)[1])
    for pair in cred.split(";"):
        if "=" in pair:
            remember(pair.split("=", 1)[1])


def split_trailing(value: str) -> tuple[str, str]:
    """``(core, trailing sentence punctuation)``."""
    core = value.rstrip(TRAILING_PUNCT)
    return core, value[len(core) :]
