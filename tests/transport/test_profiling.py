"""The clients' reports of their own figures, validated and kept (pure: no relay)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from actors.core.errors import BadRequest
from transport.profiling import MAX_EXTRA_NAME_CHARS, ClientFigures, parse_report


def test_a_report_keeps_what_the_client_sent_and_ignores_other_fields() -> None:
    report = parse_report(
        {"rssMb": 81.5, "uptimeS": 30, "ts": 5, "heapUsedMb": 3, "extra": {"b": 2, "a": 1.5}}
    )
    assert msgspec.to_builtins(report.arrived(1234).shape()) == {
        "rssMb": 81.5,
        "uptimeS": 30,
        "ts": 5,
        "receivedAt": 1234,
        "extra": {"b": 2, "a": 1.5},
    }
    assert parse_report({"rssMb": 0, "uptimeS": 0, "ts": -1, "extra": None}).extra == ()


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"rssMb": float("nan"), "uptimeS": 1, "ts": 1}, "rssMb must be a number"),
        ({"rssMb": 1, "uptimeS": float("inf"), "ts": 1}, "uptimeS must be a number"),
        ({"rssMb": 1, "uptimeS": -0.5, "ts": 1}, "uptimeS must not be negative"),
        ({"rssMb": 1, "uptimeS": 1}, "ts is required"),
        ({"rssMb": 1, "uptimeS": 1, "ts": 1, "extra": {"x" * 65: 1}}, "at most 64 characters"),
        ({"rssMb": 1, "uptimeS": 1, "ts": 1, "extra": {"ok": False}}, "extra.ok must be a number"),
        ("rssMb", "body must be a JSON object"),
    ],
)
def test_a_malformed_report_says_which_field(body: Any, fragment: str) -> None:
    with pytest.raises(BadRequest, match=fragment):
        parse_report(body)
    assert MAX_EXTRA_NAME_CHARS == 64


def test_each_client_has_its_newest_report_and_none_before_its_first() -> None:
    figures = ClientFigures()
    assert msgspec.to_builtins(figures.shape()) == {"sense": None, "overlay": None}
    figures.report("overlay", parse_report({"rssMb": 1, "uptimeS": 1, "ts": 1}).arrived(10))
    figures.report("overlay", parse_report({"rssMb": 2, "uptimeS": 31, "ts": 2}).arrived(20))
    latest = figures.latest("overlay")
    assert latest is not None
    assert (latest.rss_mb, latest.received_at) == (2, 20)
    assert msgspec.to_builtins(figures.shape())["sense"] is None
