"""Cost of redaction on the ingest path (``actors/core/redactor.py``), in microseconds per call.

Run from the repository root::

    python -m bench.bench_privacy            # about 15 s
    python -m bench.bench_privacy --quick    # fewer repetitions
    git worktree add /tmp/redact-before <commit>
    python -m bench.bench_privacy --before /tmp/redact-before --rounds 5

It prints figures and asserts nothing. Each figure is the best of 5 timeit repeats (the
least disturbed), divided by the calls per repeat; in-process, one thread. With
``--before``, this script runs in turns in that checkout (its redaction code, these inputs)
and in this one, ``--rounds`` times each, in subprocesses of one session; it prints the
median of each figure for both and the ratio after/before.

Texts (each also "with secrets": an ``sk-`` key, a ``password=`` value and a card number put
in the middle; "new kinds": a URL's password, a Stripe key and a Google API key; and
"hidden": an ``sk-`` key split at a line end, a ``ghp_`` token with a zero-width space in it,
an AWS key id with a Cyrillic A and a card number written with dots):

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
``mixed OCR 4 KiB``       Russian, Japanese (full-width brackets and colons, which the
                          normalised view rewrites) and German beside code
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from actors.core.redaction import redact
from actors.core.redactor import Redactor
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


HIDDEN = (  # each prefix apart from its body, so that no secret scanner takes it for a leak
    " sk-"
    + "proj-Ab12Cd34\nEf56Gh78Ij90KlMnOpQrSt gh"
    + "\u200bp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5 \u0410KIA"
    + "IOSFODNN7EXAMPLE 4111.1111.1111.1111 "
)
MIXED_LINES = (
    "# Проверка ключа API перед запуском сервера\n"
    "def проверить(ключ: str) -> bool:  # 鍵を確認する（テスト用）：OK\n"
    "    return ключ.startswith('Schlüssel')  # Größe: 4,2 MB — Zeile 48\n"
    "Готово: 12 файлов за 3,1 с; ошибок нет. 完了しました。\n"
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


def measure(quick: bool) -> dict[str, list[float]]:
    """Each row's figures, microseconds a call: no secret, with secrets, new kinds, hidden."""
    number = 2_000 if quick else 20_000
    code, log = _sized(CODE_LINES, 4096), _sized(LOG_LINES, 4096)
    mixed = _sized(MIXED_LINES, 4096)
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
        ("mixed OCR 4 KiB", lambda: redact(mixed), lambda s: redact(_with_secrets(mixed, s))),
    ]
    build_code = best_us(lambda: _with_secrets(code), number)
    build_sense = best_us(lambda: _sense_payload(code), number)
    figures: dict[str, list[float]] = {}
    for name, clean, dirty in rows:
        row = [best_us(clean, number)]
        row += [
            best_us(partial(dirty, secrets), max(number // 4, 100))
            for secrets in (SECRETS, NEW_SECRETS, HIDDEN)
        ]
        if name == "sense payload 4 KiB":  # less building the test input itself
            row = [row[0] - build_sense, *(v - build_sense - build_code for v in row[1:])]
        elif "4 KiB" in name:
            row = [row[0], *(v - build_code for v in row[1:])]
        figures[name] = row
    return figures


HEADER = ("no secret", "with secrets", "new kinds", "hidden")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--before", type=Path, help="a checkout to compare with, in turns")
    parser.add_argument("--rounds", type=int, default=5, help="turns of each with --before")
    args = parser.parse_args()
    if args.before is not None:
        compare(args.before, args.rounds, quick=args.quick)
        return
    figures = measure(args.quick)
    if args.json:
        print(json.dumps(figures))
        return
    print(f"{'input':<22}" + "".join(f"{h + ' (us)':>18}" for h in HEADER))
    for name, row in figures.items():
        print(f"{name:<22}" + "".join(f"{v:>18.2f}" for v in row))


def _run(checkout: Path, quick: bool) -> dict[str, list[float]]:
    """This script's figures with ``checkout``'s code (run there, from this file)."""
    argv = [__file__, "--json", *(["--quick"] if quick else [])]
    code = (
        f"import runpy, sys; sys.argv = {argv!r}; runpy.run_path({__file__!r}, run_name='__main__')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=checkout, capture_output=True, text=True, check=True
    )
    figures: dict[str, list[float]] = json.loads(out.stdout)
    return figures


def compare(before: Path, rounds: int, *, quick: bool) -> None:
    """Medians of ``rounds`` turns of ``before``'s code and this checkout's, and the ratios."""
    here = Path(__file__).resolve().parent.parent
    runs: dict[str, list[dict[str, list[float]]]] = {"before": [], "after": []}
    for n in range(rounds):
        order = (("before", before), ("after", here))
        for label, checkout in order if n % 2 == 0 else order[::-1]:
            runs[label].append(_run(checkout, quick))
    print(f"medians of {rounds} turns each, us a call; after/before")
    print(f"{'input':<22}{'column':<14}{'before':>10}{'after':>10}{'ratio':>8}")
    for name in runs["after"][0]:
        for column, title in enumerate(HEADER):
            old = statistics.median(run[name][column] for run in runs["before"] if name in run)
            new = statistics.median(run[name][column] for run in runs["after"])
            print(f"{name:<22}{title:<14}{old:>10.2f}{new:>10.2f}{new / old:>8.2f}")


if __name__ == "__main__":
    main()
