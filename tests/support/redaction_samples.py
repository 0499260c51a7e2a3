"""Secrets the redaction tests post, the markers that replace them, and the check that no
piece of a secret got through."""

from __future__ import annotations

from typing import Any

from actors.core.redaction.rules import marker
from tests.support.posts import recorded

SK = "sk-proj-Ab12Cd34Ef56Gh78Ij90KlMnOpQrSt"
GHP = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
AWS = "AKIAIOSFODNN7EXAMPLE"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
VISA = "4111 1111 1111 1111"
"""The classic test number: it passes Luhn."""
P = marker("private")
A = marker("api-key")
W = marker("aws-key")
T = marker("token")
PW = marker("password")
C = marker("card")


def capture_with_secrets() -> dict[str, Any]:
    """The capture client's recorded shape with secrets in every kind of field."""
    body = recorded()[1]
    return {
        **body,
        "ocr": body["ocr"] + f"\nOPENAI_API_KEY={SK}",
        "meta": {**body["meta"], "windowTitle": f"password=hunter2 — {body['meta']['app']}"},
        "roi": {**body["roi"], "data": AWS + "/9j/4AAQ", "label": AWS},
        "observation": {
            **body["observation"],
            "facts": [*body["observation"]["facts"], f"card: {VISA}"],
            "narrative": f"The user pastes {JWT} into a form",
            "concepts": ["auth", f"<private>{GHP}</private>"],
        },
        "extra": {"nested": [{"note": f"Bearer {GHP}"}], "n": 4111111111111111},
    }


def assert_nowhere(secret: str, *texts: str, run: int = 8) -> None:
    """No ``run`` characters in a row of ``secret`` appear in any of ``texts``: neither the
    secret nor a piece of it long enough to matter."""
    for text in texts:
        for start in range(max(len(secret) - run + 1, 1)):
            piece = secret[start : start + run]
            assert piece not in text, f"{piece!r} of the secret in: {text[:2000]}"
