"""Error texts fit to leave the process: redacted, and without the configured secrets."""

from __future__ import annotations

from actors.core.error_text import safe_error_text, safe_text
from config.common.secrets import remember_secret
from tests.support.redaction_samples import SK, A, T, assert_nowhere

PLACEHOLDER = "error-text-placeholder-7"


def test_an_error_is_its_type_and_message_with_secrets_redacted() -> None:
    remember_secret(PLACEHOLDER)
    exc = RuntimeError(f"refused {PLACEHOLDER}: Authorization: Bearer abc.def-123, key {SK}")
    text = safe_error_text(exc)
    assert text == f"RuntimeError: refused {A}: Authorization: Bearer {T}, key {A}"


def test_a_unicode_error_shows_where_not_the_text_it_could_not_encode() -> None:
    header = "Bearer sk-or-v1-" + "5e1f" * 16 + "\u201d"
    try:
        header.encode("ascii")
    except UnicodeEncodeError as exc:
        text = safe_error_text(exc)
    assert text.startswith("UnicodeEncodeError: 'ascii' codec can't encode character")
    assert_nowhere(header, text)


def test_an_error_without_a_message_is_its_type() -> None:
    assert safe_error_text(TimeoutError()) == "TimeoutError"


def test_an_error_whose_str_fails_is_still_named() -> None:
    class Broken(Exception):
        def __str__(self) -> str:
            raise ValueError

    assert safe_error_text(Broken()) == "Broken"


def test_safe_text_is_idempotent() -> None:
    once = safe_text(f"HTTP 401: bad key {SK}")
    assert safe_text(once) == once
