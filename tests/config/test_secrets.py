"""The configured secrets, taken out of any text whatever they look like."""

from __future__ import annotations

import json

import pytest

from actors.core.redaction.rules import KINDS, marker
from config.common.secrets import (
    MIN_PIECE,
    _marker,
    remember_secret,
    scrub,
    scrub_value,
    shown_url,
    url_secrets,
)

PLACEHOLDER = "key-of-a-local-server-for-tests"
"""A local server's key (no vendor's shape), unlike any other test's: the list of secrets is the
process's, and a start of this key that another test remembered whole would be taken out."""
A = marker("api-key")
T = marker("token")


@pytest.fixture(autouse=True)
def _remembered() -> None:
    remember_secret(PLACEHOLDER)


def test_a_remembered_key_is_replaced_wherever_it_stands() -> None:
    text = f"Authorization: Bearer {PLACEHOLDER}; again:{PLACEHOLDER}."
    assert scrub(text) == f"Authorization: Bearer {A}; again:{A}."


def test_a_text_without_a_secret_is_returned_as_it_is() -> None:
    text = "HTTP 500: upstream exploded"
    assert scrub(text) is text


def test_the_forms_repr_and_json_give_it_are_found() -> None:
    odd = "key\\with\"quotes'and-more-characters"
    remember_secret(odd)
    assert A in scrub(repr(("Bearer", odd)))
    assert odd not in scrub(repr(odd)) and repr(odd)[1:-1] not in scrub(repr(odd))
    assert json.dumps(odd)[1:-1] not in scrub(json.dumps({"key": odd}))


@pytest.mark.parametrize("kept", [MIN_PIECE, MIN_PIECE + 5, len(PLACEHOLDER) - 1])
def test_the_start_of_a_key_that_ends_a_cut_text_is_replaced(kept: int) -> None:
    text = "HTTP 401: " + "x" * 40 + PLACEHOLDER[:kept]
    assert scrub(text) == "HTTP 401: " + "x" * 40 + A


def test_a_start_shorter_than_the_piece_or_inside_the_text_is_kept() -> None:
    short = "ends with " + PLACEHOLDER[: MIN_PIECE - 1]
    assert scrub(short) == short
    inside = f"{PLACEHOLDER[:12]} and then more"
    assert scrub(inside) == inside


def test_a_secret_too_short_to_look_for_changes_nothing() -> None:
    remember_secret("xyz")
    assert scrub("xyz is a name") == "xyz is a name"


def test_the_token_gets_the_token_marker() -> None:
    remember_secret("relay-token-for-secrets-test", "token")
    assert scrub("Bearer relay-token-for-secrets-test") == f"Bearer {marker('token')}"


def test_strings_in_nested_values_are_scrubbed_and_types_kept() -> None:
    value = {"errors": [f"m: {PLACEHOLDER}"], "pair": (PLACEHOLDER, 3), "n": 1}
    assert scrub_value(value) == {"errors": [f"m: {A}"], "pair": (A, 3), "n": 1}


def test_the_markers_are_the_redactors() -> None:
    assert all(_marker(kind) == marker(kind) for kind in KINDS)


# -- credentials in a URL ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1"),
        ("http://u:p@h:1/v1#x", f"http://{marker('password')}@h:1/v1"),
        ("https://sk-in-the-name@h/v1", f"https://{marker('password')}@h/v1"),
        ("http://[::1]:8080/v1", "http://[::1]:8080/v1"),
        (
            "http://h/v1?api-version=2024-06-01&token=t0ken&Api_Key=k&X-Amz-Signature=s&flag",
            f"http://h/v1?api-version=2024-06-01&token={T}&Api_Key={T}&X-Amz-Signature={T}&flag",
        ),
        (
            "http://h/v1?access%5Ftoken=t&password=&q=kept",
            f"http://h/v1?access%5Ftoken={T}&password={T}&q=kept",
        ),
        ("http://[::1/v1", "(an unreadable URL)"),
    ],
)
def test_a_shown_url_keeps_where_it_points_and_hides_its_credentials(url: str, shown: str) -> None:
    assert shown_url(url) == shown


def test_the_credentials_of_a_url_are_its_password_and_secret_parameters() -> None:
    url = "http://admin:pa%20ss@h/v1?token=t0ken-value&model=gpt&key="
    assert url_secrets(url) == [
        ("t0ken-value", "token"),
        ("pa%20ss", "password"),
        ("pa ss", "password"),
    ]
    assert url_secrets("https://openrouter.ai/api/v1") == []
