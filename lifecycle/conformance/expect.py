"""The conformance expectations held against the frames an agent sent.

Rules
-----
* The matcher is tests/conformance/check.py's, unchanged in meaning: a partial object matches
  when every key given matches, recursively; lists match element by element and in length;
  ``"re:..."`` is a full-match regular expression (dot matches newline); ``"$absent"`` means the
  key must be missing; anything else must be equal and of the same type.
* ``sequence`` must appear in order (other messages may interleave); ``records`` are ALL typed
  records (``_meta.jetbrains.air.sessionFailure`` of a ``session/update`` or a prompt response),
  in order and exactly that many, each with its ``carrier`` and next to ``version: 1``;
  ``forbid`` substrings must appear nowhere in the output; no message may match a
  ``forbid_messages`` matcher.
* ``active`` (the trailer of ``lifecycle trace``: the adapter's internal set of open incidents)
  is not observable through ACP and is not checked at agent level.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["ABSENT", "check", "match", "records_of"]

ABSENT = "$absent"


def match(want: Any, got: Any, path: str = "") -> str | None:
    """None when ``got`` satisfies the partial matcher ``want``, else the reason."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"{path or '.'}: expected an object, got {json.dumps(got)[:120]}"
        for key, sub in want.items():
            where = f"{path}.{key}"
            if sub == ABSENT:
                if key in got:
                    return f"{where}: must be absent, got {json.dumps(got[key])[:120]}"
                continue
            if key not in got:
                return f"{where}: missing"
            reason = match(sub, got[key], where)
            if reason:
                return reason
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return f"{path}: expected {json.dumps(want)[:120]}, got {json.dumps(got)[:120]}"
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            reason = match(w, g, f"{path}[{i}]")
            if reason:
                return reason
        return None
    if isinstance(want, str) and want.startswith("re:"):
        if not isinstance(got, str) or re.fullmatch(want[3:], got, re.S) is None:
            return f"{path}: {json.dumps(got)[:160]} does not match /{want[3:]}/"
        return None
    if type(want) is not type(got) or want != got:
        return f"{path}: expected {json.dumps(want)[:120]}, got {json.dumps(got)[:120]}"
    return None


def records_of(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every typed record, in order, with its ``carrier`` and the ``version`` beside it."""
    out = []
    for m in messages:
        if m.get("method") == "session/update":
            meta = (m.get("params", {}).get("update", {}) or {}).get("_meta") or {}
            carrier = "session_info_update"
        elif isinstance(m.get("result"), dict):
            meta = m["result"].get("_meta") or {}
            carrier = "prompt_response"
        else:
            continue
        air = (meta.get("jetbrains") or {}).get("air") or {}
        rec = air.get("sessionFailure")
        if rec is not None:
            out.append({**rec, "carrier": carrier, "_air_version": air.get("version")})
    return out


def check(messages: list[dict[str, Any]], raw: str, expect: dict[str, Any]) -> list[str]:
    """The reasons ``messages`` (and their text ``raw``) fall short of ``expect``; empty: they hold."""
    failures: list[str] = []
    pos = 0
    for i, want in enumerate(expect.get("sequence", [])):
        while pos < len(messages) and match(want, messages[pos]) is not None:
            pos += 1
        if pos == len(messages):
            failures.append(f"sequence[{i}] not found in order: {json.dumps(want)[:200]}")
            break
        pos += 1

    recs = records_of(messages)
    for r in recs:
        if r.get("_air_version") != 1:
            failures.append(f"record {r.get('id')} is not next to version 1")
    if "records" in expect:
        want_recs = expect["records"]
        if len(want_recs) != len(recs):
            summary = [{k: r.get(k) for k in ("id", "revision", "severity", "carrier")} for r in recs]
            failures.append(f"expected {len(want_recs)} records, got {len(recs)}: " + json.dumps(summary)[:400])
        for i, (w, g) in enumerate(zip(want_recs, recs, strict=False)):
            reason = match(w, g, f"records[{i}]")
            if reason:
                failures.append(reason)

    for i, want in enumerate(expect.get("forbid_messages", [])):
        for m in messages:
            if match(want, m) is None:
                failures.append(f"forbid_messages[{i}] matched: {json.dumps(m)[:200]}")
                break

    for s in expect.get("forbid", []):
        if s in raw:
            failures.append(f"forbidden text present: {s!r}")
    return failures
