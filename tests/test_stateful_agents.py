"""Stateful tests of the proxy's edge (issue 53.3): hypothesis's random search of
tests/stateful_agents.py (a real ``Relay`` over the core's ``SessionLedger``, fed with
provider-neutral events, beside a reference model). The "ci" profile (tests/conftest.py) is
derandomised, so every run explores the same examples.
"""

from __future__ import annotations

from hypothesis import settings
from stateful_agents import ProxySession

ProxySession.TestCase.settings = settings(
    settings.default, max_examples=settings.default.max_examples, stateful_step_count=50
)
TestProxySession = ProxySession.TestCase
