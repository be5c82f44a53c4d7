"""Provider-neutral failures -> the core's conditions (issue 53.3).

Rules
-----
* An agent's failure (:class:`~lifecycle.events.AgentFailure`) names its category and actions
  itself (its family's row, :mod:`lifecycle.families`); this module only adds what the spec
  derives from them and never names a provider:

  - severity ``error`` (a failure the agent reported ended the turn); a retry report is a
    ``warning`` with no actions (spec: "Severity": "normally has no actions while recovery is in
    progress");
  - recovery (spec: "Internal recovery"): a lost transport (``connection`` offering
    ``new_session``: the agent process ended) "remain[s] active until runtime replacement";
    every other failure is turn-scoped and stops being active "at a later confirmed attempt
    boundary" (the next real answer: :class:`~lifecycle.events.AgentAnswered`);
  - the legacy JSON-RPC code: ``-32000`` for a failure that offers ``login`` (ACP's
    "Authentication required"), ``-32603`` otherwise.

* The title is the agent's own words (:func:`lifecycle.titles.present`: redacted, headers out,
  split only when too long), or the row's adapter fallback when the agent gave none.

Theory of operation
-------------------
A neutral condition is a :class:`~lifecycle.conditions.Condition` like Claude's rows, its key
``agent:<row key>`` so it never meets a Claude key (``LIMIT_FAILURES``, ``LEGACY_ADAPTER_ERRORS``
look keys up). Rows are made once per distinct failure shape and kept (:func:`agent_condition`
is cached), so a session of many failures builds few objects.
"""

from __future__ import annotations

from functools import lru_cache

from .conditions import AUTH_REQUIRED, INTERNAL_ERROR, Condition, Recovery
from .events import AgentFailure
from .redaction import redact
from .titles import present, strip_headers
from .wire import Action, Category, Severity

__all__ = ["agent_condition", "agent_title", "retry_condition_of"]


@lru_cache(maxsize=256)
def _condition(key: str, category: Category, actions: tuple[Action, ...]) -> Condition:
    lost = category is Category.CONNECTION and Action.NEW_SESSION in actions
    recovery = Recovery.RUNTIME_REPLACED if lost else Recovery.CONFIRMED_ATTEMPT
    legacy = AUTH_REQUIRED if Action.LOGIN in actions else INTERNAL_ERROR
    return Condition(f"agent:{key}", "an agent's report", category, Severity.ERROR, actions, recovery, legacy)


def agent_condition(failure: AgentFailure) -> Condition:
    """The core's condition for an agent's failure (see the module's rules)."""
    return _condition(failure.key, failure.category, tuple(failure.actions))


@lru_cache(maxsize=8)
def retry_condition_of(category: Category) -> Condition:
    """The warning an agent's retry report is: ``category``, no actions, turn-scoped."""
    attempt = Recovery.CONFIRMED_ATTEMPT
    return Condition("agent:retry", "an agent's retry report", category, Severity.WARNING, (), attempt, INTERNAL_ERROR)


def agent_title(words: str, fallback: str) -> tuple[str, str | None]:
    """``(title, details)``: the agent's ``words`` as :func:`~lifecycle.titles.present` shows
    them, or ``(fallback, None)`` when nothing of them is left after redaction and header removal
    (an empty ``fallback`` too: ``"The agent reported a problem."``)."""
    if strip_headers(redact(words)).strip():
        return present(words, "internal_error")
    return (fallback or "The agent reported a problem."), None
