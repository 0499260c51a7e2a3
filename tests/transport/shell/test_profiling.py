"""The clients' reports of their own figures, validated and kept (pure: no relay)."""

from __future__ import annotations

from typing import Any

import msgspec
import orjson
import pytest

from actors.core.bodies import MAX_EXTRA_NAME_CHARS, ProcessReport, convert, decode
from actors.core.errors import BadRequest
from transport.shell.profiling import ClientReports, report_of


def parse_report(body: Any) -> Any:
    return report_of(convert(body, ProcessReport))


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
        (b'{"rssMb": 1e400, "uptimeS": 1, "ts": 1}', "rssMb is out of range"),
        (b'{"rssMb": "1", "uptimeS": 1, "ts": 1}', "rssMb must be a number, not a string"),
        (b'{"rssMb": 1, "uptimeS": true, "ts": 1}', "uptimeS must be a number, not true or false"),
        (b'{"rssMb": 1, "uptimeS": -0.5, "ts": 1}', "uptimeS must be a number at least 0"),
        (b'{"rssMb": 1, "uptimeS": 1}', "ts is required"),
        (
            orjson.dumps({"rssMb": 1, "uptimeS": 1, "ts": 1, "extra": {"x" * 65: 1}}),
            "the field names of extra must be a string of at most 64 characters",
        ),
        (
            orjson.dumps(
                {"rssMb": 1, "uptimeS": 1, "ts": 1, "extra": {str(n): n for n in range(65)}}
            ),
            "extra must be an object of at most 64 fields",
        ),
        (
            b'{"rssMb": 1, "uptimeS": 1, "ts": 1, "extra": {"ok": false}}',
            "each field of extra must be a number, not true or false",
        ),
        (b'"rssMb"', "body must be a JSON object, not a string"),
    ],
)
def test_a_malformed_report_says_which_field(body: bytes, fragment: str) -> None:
    with pytest.raises(BadRequest, match=fragment):
        decode(body, ProcessReport)
    assert MAX_EXTRA_NAME_CHARS == 64


def test_a_report_keeps_whole_numbers_whole() -> None:
    report = report_of(decode(b'{"rssMb": 60, "uptimeS": 30.5, "ts": 7}', ProcessReport))
    assert msgspec.json.encode(report.shape()) == (
        b'{"rssMb":60,"uptimeS":30.5,"ts":7,"receivedAt":0,"extra":{}}'
    )


def test_each_client_has_its_newest_report_and_none_before_its_first() -> None:
    figures = ClientReports()
    assert msgspec.to_builtins(figures.shape()) == {"sense": None, "overlay": None}
    figures.report("overlay", parse_report({"rssMb": 1, "uptimeS": 1, "ts": 1}).arrived(10))
    figures.report("overlay", parse_report({"rssMb": 2, "uptimeS": 31, "ts": 2}).arrived(20))
    latest = figures.latest("overlay")
    assert latest is not None
    assert (latest.rss_mb, latest.received_at) == (2, 20)
    assert msgspec.to_builtins(figures.shape())["sense"] is None
