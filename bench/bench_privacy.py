"""Cost of redaction on the ingest path (``actors/core/redaction.py``), in microseconds per call.

Run from the repository root::

    python -m bench.bench_privacy            # about 10 s
    python -m bench.bench_privacy --quick    # fewer repetitions

It prints figures and asserts nothing. Each figure is the best of 5 timeit repeats (the
least disturbed), divided by the calls per repeat; in-process, one thread.

Texts (each also "with secrets": an ``sk-`` key, a ``password=`` value and a card number put
in the middle; and "new kinds": a URL's password, a Stripe key and a Google API key):

``code OCR 4 KiB``        editor text: Python with numbers, a date, a URL, ``-``, ``_``, ``<``
``log OCR 4 KiB``         terminal text: JSON log lines with epoch-millisecond timestamps (13
                          digits: they pass the cheap card test and need the Luhn look)
``transcript 300``        a spoken sentence or two, as ``/feed`` gets them
``capture payload``       the capture client's recorded ``/sense`` body
                          (``tests/fixtures/capture_client_sense.json``, its second event),
                          through ``Redactor.payload`` (every string, not ``roi.data``)
``sense payload 4 KiB``   the code OCR in a ``/sense`` body with meta, observation and a 64 KiB
                          ``roi.data``
``feed message``          the transcript and its priority, through ``Redactor.texts``
"""

from __future__ import annotations

import argparse
import base64
import json
from collections.abc import Callable
from functools import partial
from typing import Any

from actors.core.redaction import Redactor, redact
from bench.harness import ROOT, best_us

CODE_LINES = (
    "def _due(self) -> float | None:\n"
    "    config = self._config  # see https://example.com/docs/ticker?id=42\n"
    "    if not config.active or len(self._items) < 2:\n"
    "        return None\n"
    "    deadline = self._last + config.interval_ms / 1000  # 2026-02-03 12:34:56\n"
    "    for n, item in enumerate(self._items[-30:]):\n"
    '        log.info("tick", id=item.id, port=18791, app="VS Code", ratio=0.913)\n'
)
LOG_LINES = (
    '{"ts": 1769901185123, "level": "info", "event": "tick", "actor": "ticker", '
    '"latencyMs": 812, "model": "google/gemini-2.5-flash-lite", "outcome": "ok"}\n'
    '{"ts": 1769901186410, "level": "debug", "event": "http.request", "method": "POST", '
    '"path": "/sense", "status": 200, "ms": 0.41, "request_id": "1f3a"}\n'
)
TRANSCRIPT = (
    "So what we need to fix is the idle detection, because once the ring is full the length "
    "stays the same and the agent idles forever. Let's call Bob at 415-555-0100 tomorrow "
    "about the release on 2026-02-03; build 4821 passed and the dashboard looks fine now."
)[:300]
SECRETS = " sk-proj-Ab12Cd34Ef56Gh78Ij90KlMnOpQrSt password=hunter2 card 4111 1111 1111 1111 "
NEW_SECRETS = (  # each prefix apart from its body, so that no secret scanner takes it for a leak
    " https://alice:"
    + "s3cr3t@db.example.com/app"
    + " sk_"
    + "live_"
    + "aB3dE5gH7jK9mN1pQ3sT5vW7"
    + " AIza"
    + "SyB7xq-3kLmN0pQrS4tUvW5xYz_6AbCf8g9 "
)


def _sized(lines: str, size: int) -> str:
    return (lines * (size // len(lines) + 1))[:size]


def _with_secrets(text: str, secrets: str = SECRETS) -> str:
    middle = len(text) // 2
    return text[:middle] + secrets + text[middle + len(secrets) :]


def _capture_payload() -> dict[str, Any]:
    events = json.loads((ROOT / "tests/fixtures/capture_client_sense.json").read_text())
    event: dict[str, Any] = events[1]
    return event


def _sense_payload(ocr: str) -> dict[str, Any]:
    return {
        "type": "text",
        "ts": 1769901189874.102,
        "ocr": ocr,
        "meta": {"app": "Code", "windowTitle": "ticker.py — sinain-relay", "ssim": 0.913},
        "roi": {"data": base64.b64encode(bytes(48 * 1024)).decode(), "bbox": [0, 0, 860, 96]},
        "observation": {
            "title": "text in Code",
            "subtitle": "ticker.py — sinain-relay",
            "facts": ["app: Code", "window: ticker.py — sinain-relay", "ssim: 0.913"],
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    number = 2_000 if args.quick else 20_000
    code, log = _sized(CODE_LINES, 4096), _sized(LOG_LINES, 4096)
    redactor = Redactor()
    capture = _capture_payload()
    rows: list[tuple[str, Callable[[], Any], Callable[[str], Any]]] = [
        ("code OCR 4 KiB", lambda: redact(code), lambda s: redact(_with_secrets(code, s))),
        ("log OCR 4 KiB", lambda: redact(log), lambda s: redact(_with_secrets(log, s))),
        (
            "transcript 300",
            lambda: redact(TRANSCRIPT),
            lambda s: redact(_with_secrets(TRANSCRIPT, s)),
        ),
        (
            "capture payload",
            lambda: redactor.payload(capture),
            lambda s: redactor.payload({**capture, "ocr": capture["ocr"] + s}),
        ),
        (
            "sense payload 4 KiB",
            lambda: redactor.payload(_sense_payload(code)),
            lambda s: redactor.payload(_sense_payload(_with_secrets(code, s))),
        ),
        (
            "feed message",
            lambda: redactor.texts((TRANSCRIPT, "normal")),
            lambda s: redactor.texts((_with_secrets(TRANSCRIPT, s), "normal")),
        ),
    ]
    build_code = best_us(lambda: _with_secrets(code), number)
    build_sense = best_us(lambda: _sense_payload(code), number)
    print(f"{'input':<22}{'no secret (us)':>16}{'with secrets (us)':>20}{'new kinds (us)':>17}")
    for name, clean, dirty in rows:
        clean_us = best_us(clean, number)
        dirty_us = best_us(partial(dirty, SECRETS), max(number // 4, 100))
        new_us = best_us(partial(dirty, NEW_SECRETS), max(number // 4, 100))
        if name == "sense payload 4 KiB":  # less building the test input itself
            clean_us -= build_sense
            dirty_us -= build_sense + build_code
            new_us -= build_sense + build_code
        elif "4 KiB" in name:
            dirty_us -= build_code
            new_us -= build_code
        print(f"{name:<22}{clean_us:>16.2f}{dirty_us:>20.2f}{new_us:>17.2f}")
    print(f"\nredactions counted meanwhile: {redactor.counts()}")


if __name__ == "__main__":
    main()
