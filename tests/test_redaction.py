"""Redaction (spec: no secret, header, credentialed URL, environment value, PEM block, stack frame or
private path in any title, details or log line; Claude's own text intact)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from secrets_corpus import CONTEXTS, EXTRA_LEGIT_TEXTS, LEGIT_TEXTS, SHAPES, SecretShape, embed, escaped_forms

from lifecycle import redaction
from lifecycle.redaction import (
    _MAX_PASSES,
    _SUSPICIOUS_RE,
    CREDENTIAL_PLACEHOLDER,
    ENV_PLACEHOLDER,
    FRAME_PLACEHOLDER,
    KEY_PLACEHOLDER,
    PATH_PLACEHOLDER,
    PEM_PLACEHOLDER,
    _redact_once,
    contains_secret,
    redact,
)

ALL_LEGIT = LEGIT_TEXTS + EXTRA_LEGIT_TEXTS
CASES = [(shape, ex) for shape in SHAPES for ex in shape.examples]
# Examples that end where they end (an unterminated PEM block is redacted to the end of the text).
SELF_DELIMITING = [(shape, ex) for shape, ex in CASES if "-----BEGIN" not in ex or "-----END" in ex]


def _passes_to_settle(text: str) -> int:
    """How many passes of the rule list :func:`redact` needs on ``text`` (the last one changes nothing)."""
    for n in range(1, 20):
        after = _redact_once(text)
        if after == text:
            return n
        text = after
    return 99


def _assert_marker_gone(shape: SecretShape, text: str) -> str:
    out = redact(text)
    for form in escaped_forms(shape.marker):
        assert form not in out, f"{shape.name}: {form!r} survived in {out!r} (from {text!r})"
    return out


# --------------------------------------------------------------------------------------------
# (e) the corpus itself
# --------------------------------------------------------------------------------------------


def test_corpus_matrix_size() -> None:
    embeddings = len(embed("x", CONTEXTS[0]))
    examples = sum(len(shape.examples) for shape in SHAPES)
    matrix = examples * embeddings * len(CONTEXTS)
    print(f"\nsecrets corpus: {len(SHAPES)} shapes, {examples} examples, {embeddings} embeddings x "
          f"{len(CONTEXTS)} contexts = {matrix} redaction cases")  # fmt: skip
    assert len(SHAPES) >= 30
    assert len({shape.name for shape in SHAPES}) == len(SHAPES)
    assert matrix >= 30 * embeddings * len(CONTEXTS)


@pytest.mark.parametrize(("shape", "example_text"), CASES, ids=[f"{s.name}-{i}" for i, (s, _) in enumerate(CASES)])
def test_corpus_example_holds_its_marker(shape: SecretShape, example_text: str) -> None:
    assert shape.marker in example_text
    for context in CONTEXTS:
        assert not contains_secret(context)
        for form in escaped_forms(shape.marker):
            assert form not in context


# --------------------------------------------------------------------------------------------
# (a) every example in every embedding
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("shape", "example_text"), CASES, ids=[f"{s.name}-{i}" for i, (s, _) in enumerate(CASES)])
def test_every_embedding_loses_the_marker(shape: SecretShape, example_text: str) -> None:
    for context in CONTEXTS:
        for text in embed(example_text, context):
            assert any(form in text for form in escaped_forms(shape.marker)), text
            out = _assert_marker_gone(shape, text)
            assert contains_secret(text)
            assert redact(out) == out
            assert _passes_to_settle(text) <= _MAX_PASSES


@pytest.mark.parametrize(("shape", "example_text"), SELF_DELIMITING, ids=[s.name for s, _ in SELF_DELIMITING])
def test_the_context_around_a_secret_survives(shape: SecretShape, example_text: str) -> None:
    for context in CONTEXTS:
        out = redact(f"{context} {example_text} and then it stopped")
        assert out.startswith(context), out
        assert out.endswith("and then it stopped"), out


# --------------------------------------------------------------------------------------------
# (b) Claude's own texts
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ALL_LEGIT)
def test_legit_text_is_unchanged(text: str) -> None:
    assert redact(text) == text
    assert not contains_secret(text)


@pytest.mark.parametrize("text", ALL_LEGIT)
def test_legit_text_is_unchanged_in_json_and_lines(text: str) -> None:
    for wrapped in (
        json.dumps({"type": "error", "error": {"message": text}}),
        json.dumps({"message": text}, ensure_ascii=False),
        f"{text}\n{text}",
        f"[{text}]",
        f"Error: {text}",
    ):
        assert redact(wrapped) == wrapped


def test_all_legit_texts_together_are_unchanged() -> None:
    joined = "\n".join(ALL_LEGIT)
    assert redact(joined) == joined


# --------------------------------------------------------------------------------------------
# Placeholders and what each rule keeps
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnop0123", f"ANTHROPIC_API_KEY={ENV_PLACEHOLDER}"),
        ("export FOO_SECRET='a b c'", f"export FOO_SECRET='{ENV_PLACEHOLDER}'"),
        ("Authorization: Bearer abc123def456", f"Authorization: Bearer {CREDENTIAL_PLACEHOLDER}"),
        ('{"x-api-key": "abc123"}', f'{{"x-api-key": "{CREDENTIAL_PLACEHOLDER}"}}'),
        ("Cookie: a=1; b=2", f"Cookie: {CREDENTIAL_PLACEHOLDER}"),
        ("https://u:p@example.com/x?y=1", f"https://{CREDENTIAL_PLACEHOLDER}@example.com/x?y=1"),
        ("https://e.com/x?token=abc123&page=2", f"https://e.com/x?token={CREDENTIAL_PLACEHOLDER}&page=2"),
        ("key sk-ant-api03-abcdefghijklmnop0123 failed", f"key {KEY_PLACEHOLDER} failed"),
        ("see /home/alice/x.txt.", f"see {PATH_PLACEHOLDER}."),
        ("open 'C:\\Users\\carol\\x.txt'", f"open '{PATH_PLACEHOLDER}'"),
        ("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", PEM_PLACEHOLDER),
        ("Error: boom\n    at foo (/srv/x.js:1:2)\n    at bar (node:internal/y:3:4)", "Error: boom"),
        ("Error: boom at foo (/srv/x.js:1:2)", f"Error: boom {FRAME_PLACEHOLDER}"),
        (
            'Traceback (most recent call last):\n  File "/x.py", line 3, in f\n    f()\n    ^^^\nValueError: boom',
            "ValueError: boom",
        ),
        ("Run /login or /usage-credits", "Run /login or /usage-credits"),
        ("gateway (127.0.0.1:18102)", "gateway (127.0.0.1:18102)"),
    ],
)
def test_placeholders(text: str, expected: str) -> None:
    assert redact(text) == expected


SECURITY_MD = Path(__file__).resolve().parent.parent / "docs" / "security.md"
#: One text per placeholder of docs/security.md's redaction table, and what ``redact`` makes of
#: it: the placeholder that row documents, and no other, with the harmless context kept.
DOCUMENTED_EXAMPLES = {
    "[redacted pem]": (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        "[redacted pem]",
    ),
    "[redacted frame]": (
        "crashed: at Object.<anonymous> (/srv/app/index.js:10:5) while loading",
        "crashed: [redacted frame] while loading",
    ),
    "[redacted credential]": (
        "Authorization: Bearer abcdef0123456789abcdef",
        "Authorization: Bearer [redacted credential]",
    ),
    "[redacted env]": ("run with DEPLOY_TOKEN=hunter2hunter2 set", "run with DEPLOY_TOKEN=[redacted env] set"),
    "[redacted key]": (
        "the key sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 4 + " was refused",
        "the key [redacted key] was refused",
    ),
    "[redacted path]": ("cannot open /home/alice/notes.txt", "cannot open [redacted path]"),
}
#: the table's fail-closed row: the whole text, only when redaction does not settle (no example)
FAIL_CLOSED = "[redacted]"


def documented_placeholders() -> list[str]:
    """The first column of the placeholder table under docs/security.md's "## Redaction"."""
    section = SECURITY_MD.read_text().split("\n## Redaction\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `[redacted")]
    return [line.split("`")[1] for line in rows]


def test_every_documented_placeholder_is_what_redact_writes_for_its_row() -> None:
    """docs/security.md's redaction table, both ways: every row has an example that ``redact``
    rewrites with that row's placeholder and no other row's, every example is a row, and the
    module's placeholders are exactly the documented ones."""
    documented = documented_placeholders()
    assert len(documented) == len(set(documented)) == 7
    assert set(documented) == set(DOCUMENTED_EXAMPLES) | {FAIL_CLOSED}
    for placeholder, (text, expected) in DOCUMENTED_EXAMPLES.items():
        out = redact(text)
        assert out == expected, placeholder
        assert [p for p in documented if p in out.replace(placeholder, "")] == [], placeholder
    constants = {v for k, v in vars(redaction).items() if k.endswith("_PLACEHOLDER") and isinstance(v, str)}
    assert constants == set(documented)


@pytest.mark.parametrize("text", ["", "\x00", "\ud800", "sk-ant-\udfff", "\ud800/home/alice\x00/x", "a\x00=b"])
def test_odd_strings(text: str) -> None:
    out = redact(text)
    assert isinstance(out, str) and redact(out) == out


# --------------------------------------------------------------------------------------------
# (c) properties
# --------------------------------------------------------------------------------------------

ANY_TEXT = st.text(alphabet=st.characters(exclude_categories=()))  # includes lone surrogates and NUL
FRAGMENTS = st.one_of(
    st.sampled_from([ex for _, ex in CASES]),
    st.sampled_from(ALL_LEGIT),
    st.sampled_from([" ", "\n", "\r\n", '"', "'", "(", ")", "[", "]", "=", ":", "/", "\\", "@", "?", "&", ";", "."]),
    st.sampled_from(["at ", "File ", "export ", "Bearer ", "~", "$HOME", "-----END X-----", "[redacted key]"]),
    ANY_TEXT.filter(lambda s: len(s) < 12),
)
MIXED_TEXT = st.lists(FRAGMENTS, max_size=8).map("".join)


@given(ANY_TEXT)
@example("\ud800\udfff\x00")
def test_never_raises_and_is_idempotent(text: str) -> None:
    out = redact(text)
    assert isinstance(out, str)
    assert redact(out) == out


@given(MIXED_TEXT)
def test_idempotent_on_mixtures_of_secrets_and_legit_text(text: str) -> None:
    out = redact(text)
    assert redact(out) == out
    assert _passes_to_settle(text) <= _MAX_PASSES  # settles: never needs the fail-closed fallback


@given(st.one_of(ANY_TEXT, MIXED_TEXT))
def test_fast_path_is_sound(text: str) -> None:
    if _SUSPICIOUS_RE.search(text) is None:
        assert _redact_once(text) == text


@given(
    st.sampled_from(ALL_LEGIT),
    st.sampled_from(SELF_DELIMITING),
    st.sampled_from(ALL_LEGIT),
    st.sampled_from([" ", "\n", " — ", " · ", "\r\n", "\t"]),
)
def test_legit_text_around_a_secret_survives(before: str, case: tuple[SecretShape, str], after: str, sep: str) -> None:
    shape, secret = case
    text = before + sep + secret + sep + after
    out = _assert_marker_gone(shape, text)
    assert out.startswith(before), out
    assert out.endswith(after), out


# --------------------------------------------------------------------------------------------
# (d) adversarial inputs (no timing assertions: these finish because every regex is linear)
# --------------------------------------------------------------------------------------------

ADVERSARIAL_UNITS = [
    "a@a@", "/", "=", "aB3+", "a", "at ", "at a.js:1:2 ", 'File "', "-----BEGIN X-----",
    "-----END X-----\n-----BEGIN X-----", "~/", "C:\\", "\\\\a\\", "sk-", "eyJ", "eyJaaaaaaaaaaaa.", "a:a:",
    "a-a-", "password=", "Authorization: ", "Cookie: a=b;", "?token=&", "https://", "x://a@", "%", "$HOME/",
    "at f (", "at f (a:1:", ":1", "secretsecret", "A=", "A_", '"a":', '"', '\\"', "\\n", "Bearer a1",
    "sk-ant-", "AKIA", "/home/", "/home/a.", ".", "aB3" * 13 + "+", '\n  File "x", line 1\n    x',
    "\n    at f (/a.js:1:2)", "Traceback (most recent call last):", "key=", "_key_", "]/home/x", "]A=",
    "x-api-key: a ", "at async ", "at a [as b] (", "\ud800", "\x00",
]  # fmt: skip


@pytest.mark.parametrize("unit", ADVERSARIAL_UNITS)
def test_adversarial_200k_completes(unit: str) -> None:
    text = (unit * (200_000 // len(unit) + 1))[:200_000]
    out = redact(text)
    assert isinstance(out, str)
    small = text[:20_000]
    assert redact(redact(small)) == redact(small)


def test_adversarial_1mb_mixture_completes() -> None:
    text = "".join(ADVERSARIAL_UNITS) * (1_000_000 // len("".join(ADVERSARIAL_UNITS)) + 1)
    assert isinstance(redact(text[:1_000_000]), str)


# The agent's own advice (lifecycle.agent.modes) names the sandbox switch: a fixed, public value.
SANDBOX_ADVICE = (
    "Mode bypassPermissions is not available: Claude Code refuses it when running as root "
    "outside a sandbox (IS_SANDBOX=1). The mode is unchanged."
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (SANDBOX_ADVICE, SANDBOX_ADVICE),
        ("IS_SANDBOX=1", "IS_SANDBOX=1"),
        ("run with IS_SANDBOX=1, then retry", "run with IS_SANDBOX=1, then retry"),
        ("ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnop0123", f"ANTHROPIC_API_KEY={ENV_PLACEHOLDER}"),
        (
            "IS_SANDBOX=1 ANTHROPIC_API_KEY=sk-live-7Hq2 claude",
            f"IS_SANDBOX=1 ANTHROPIC_API_KEY={ENV_PLACEHOLDER} claude",
        ),
        # Only the public value is kept: any other value of the variable is masked like every env value.
        ("IS_SANDBOX=s3cr3t-value", f"IS_SANDBOX={ENV_PLACEHOLDER}"),
        ("IS_SANDBOX=10", f"IS_SANDBOX={ENV_PLACEHOLDER}"),
    ],
)
def test_the_sandbox_switch_survives_and_real_env_values_do_not(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert "sk-" not in redact(text)


URL_PASSWORD_TEXT = (
    "upstream https://carol:hunter2pass@gw.internal/v1 refused; later: cookie hunter2pass, again hunter2pass."
)


#: (text, what redact() and mask_credentials() make of it): the credential wherever it recurs,
#: nothing else; an environment assignment is named as such by redact() (docs/security.md).
C = "[redacted credential]"


RECURRING = [
    (
        URL_PASSWORD_TEXT,
        f"upstream https://{C}@gw.internal/v1 refused; later: cookie {C}, again {C}.",
        f"upstream https://{C}@gw.internal/v1 refused; later: cookie {C}, again {C}.",
    ),
    (
        "Authorization: Bearer tok3nV4lue99 was sent; the gateway logged tok3nV4lue99",
        f"Authorization: Bearer {C} was sent; the gateway logged {C}",
        f"Authorization: Bearer {C} was sent; the gateway logged {C}",
    ),
    (
        '{"api_key": "s3cr3t-value"} ... retried with s3cr3t-value',
        f'{{"api_key": "{C}"}} ... retried with {C}',
        f'{{"api_key": "{C}"}} ... retried with {C}',
    ),
    (
        "ANTHROPIC_AUTH_TOKEN=abc-def-123456 and abc-def-123456 again",
        f"ANTHROPIC_AUTH_TOKEN=[redacted env] and {C} again",
        f"ANTHROPIC_AUTH_TOKEN={C} and {C} again",
    ),
    (
        "Authorization: Basic dXNlcjpwYXNz; the proxy saw dXNlcjpwYXNz",
        f"Authorization: Basic {C}; the proxy saw {C}",
        f"Authorization: Basic {C}; the proxy saw {C}",
    ),
    (
        "curl -u admin:Sw0rdfish! failed: Sw0rdfish! rejected",
        f"curl -u {C}! failed: {C}! rejected",
        f"curl -u {C}! failed: {C}! rejected",
    ),
]


@pytest.mark.parametrize(("text", "redacted", "masked"), RECURRING)
def test_a_secret_found_once_is_masked_at_every_occurrence(text: str, redacted: str, masked: str) -> None:
    from lifecycle.redaction import mask_credentials, redact

    assert (redact(text), mask_credentials(text)) == (redacted, masked)
    assert (redact(redacted), mask_credentials(masked)) == (redacted, masked)  # a second pass changes nothing


def test_recurrence_spares_placeholders_short_values_and_numbers() -> None:
    from lifecycle.redaction import redact

    assert redact("password=redacted, and redacted") == "password=[redacted credential], and [redacted credential]"
    assert redact("password=abc and abc") == "password=[redacted credential] and abc"  # too short to chase
    assert redact("otp=12345678 and 12345678 items") == "otp=[redacted credential] and 12345678 items"


def test_a_secret_recurs_across_the_texts_of_a_session() -> None:
    from lifecycle.redaction import SecretMemory

    memory = SecretMemory(limit=2)
    assert memory.mask("https://carol:hunter2pass@gw.internal/v1") == "https://[redacted credential]@gw.internal/v1"
    assert memory.redact("cookie hunter2pass") == "cookie [redacted credential]"
    assert memory.mask("plain text") == "plain text"
    memory.mask("password=first-secret1 password=second-secret2")
    assert "hunter2pass" in memory.mask("hunter2pass")  # the oldest was forgotten (limit 2)


def test_prose_keeps_everything_but_credentials() -> None:
    from lifecycle.redaction import mask_credentials

    prose = (
        "Traceback (most recent call last):\n"
        '  File "/home/bob/app.py", line 3, in f\n'
        "ValueError: bad\n"
        "token = get_token()\napi_key = os.environ['KEY']\npassword = None\nDEBUG=1 in ~/.config\n"
    )
    assert mask_credentials(prose) == prose
    assert mask_credentials('password = "hunter2"') == 'password = "[redacted credential]"'
    assert mask_credentials("x-api-key: abc123def456") == "x-api-key: [redacted credential]"
