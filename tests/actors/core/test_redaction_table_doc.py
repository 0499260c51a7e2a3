"""docs/privacy.md's table of markers is the rules' table (:data:`RULES`), as it reads: one
row per kind, in the order the rules apply, what each rule finds said in it. A rule added,
removed or reworded changes the page, or fails here with the row the page should have."""

from __future__ import annotations

from pathlib import Path

from actors.core.redaction.rules import KINDS, RULES, marker

DOC = Path(__file__).resolve().parents[3] / "docs" / "privacy.md"
HEADER = ("| marker | what |", "| --- | --- |")


def expected_table() -> list[str]:
    """The table as the rules say it: each kind's findings, in order, joined by ``; ``."""
    rows = []
    for kind in KINDS:
        found = "; ".join(rule.found for rule in RULES if rule.kind == kind and rule.found)
        rows.append(f"| `{marker(kind)}` | {found} |")
    return [*HEADER, *rows]


def documented_table() -> list[str]:
    """The lines of the first table after the ``## Redaction`` heading."""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    start = lines.index(HEADER[0], lines.index("## Redaction"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return lines[start:end]


def test_the_privacy_page_lists_what_the_rules_find() -> None:
    expected = expected_table()
    assert documented_table() == expected, "docs/privacy.md's table should be:\n" + "\n".join(
        expected
    )


def test_every_rule_is_said_in_the_table() -> None:
    silent = [rule.pattern.pattern for rule in RULES if not rule.found]
    # a rule said with the row before it (GitHub's two forms, Stripe's two kinds of key) only
    assert len(silent) == 2
    assert KINDS == ("private", "private-key", "api-key", "aws-key", "token", "password", "card")
