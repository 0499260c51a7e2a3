"""The model's hud and digest made safe to keep: the configured secrets always, the redactor's
patterns as ``RELAY_REDACT`` says, and a count by kind of what was replaced."""

from __future__ import annotations

from actors.agent.core.answer_redaction import redacted_answer
from actors.agent.core.completion import Analysis
from actors.core.shapes import NO_OUTPUT
from config.common.secrets import remember_secret
from tests.support.redaction_samples import AWS, SK, A, T, W

PLACEHOLDER = "answer-placeholder-key-42"
"""A configured key shaped like no vendor's."""
TOKEN = "answer-relay-token-9"


def answer(hud: str, digest: str = "User is in VS Code.") -> Analysis:
    return Analysis(hud=hud, digest=digest, parsed_ok=True)


def test_a_key_read_off_the_screen_and_the_relays_own_are_replaced_and_counted() -> None:
    remember_secret(PLACEHOLDER)
    remember_secret(TOKEN, "token")
    safe, counts = redacted_answer(
        answer(f"OPENAI_API_KEY={SK} in .env", f"Keys {PLACEHOLDER}, {AWS} and token {TOKEN}.")
    )
    assert safe == answer(f"OPENAI_API_KEY={A} in .env", f"Keys {A}, {W} and token {T}.")
    assert counts == {"api-key": 2, "aws-key": 1, "token": 1}


def test_with_redaction_off_only_the_relays_own_secrets_are_taken_out() -> None:
    remember_secret(PLACEHOLDER)
    safe, counts = redacted_answer(answer(f"{SK} beside {PLACEHOLDER}"), patterns=False)
    assert safe.hud == f"{SK} beside {A}"
    assert counts == {"api-key": 1}


def test_markers_the_model_repeated_from_the_prompt_are_not_counted_again() -> None:
    remember_secret(PLACEHOLDER)
    safe, counts = redacted_answer(answer(f"Key {A} pasted", f"{A} then {PLACEHOLDER}"))
    assert safe.digest == f"{A} then {A}"
    assert counts == {"api-key": 1}


def test_an_answer_without_secrets_is_kept_as_it_is() -> None:
    original = answer("Editing ticker.py in VS Code", NO_OUTPUT)
    safe, counts = redacted_answer(original)
    assert safe is original
    assert counts == {}
