"""What redaction (``actors/core/redaction/redactor.py``) costs per call, in-process, on OCR,
transcripts and ``/sense`` bodies with and without secrets; ``--before`` measures another
checkout's code in turns with this one's. docs/benchmarks.md lists the inputs and how each
figure is taken.
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, cast

from bench.figures import Table
from bench.runner import arg
from bench.stats import best_us, median
from tests.support.harness import ROOT

try:
    from actors.core.redaction.redactor import Redactor
    from actors.core.redaction.text import redact
except ImportError:  # --before a checkout from when redaction was modules of actors/core
    from actors.core.redactor import Redactor  # type: ignore[import-not-found, no-redef]

    from actors.core.redaction import redact  # type: ignore[attr-defined, no-redef]

# Read beside this file and no bench module imported: ``--before`` runs it in older checkouts.
TEXTS = json.loads(Path(__file__).with_name("data").joinpath("privacy.json").read_text("utf-8"))
SECRETS = {name: "".join(parts) for name, parts in TEXTS["secrets"].items()}
"""Each secret's prefix kept apart from its body, so that no secret scanner takes it for a leak."""
HEADER = ("no secret", *SECRETS)
ROI = base64.b64encode(bytes(48 * 1024)).decode()


def _sized(name: str, size: int = 4096) -> str:
    lines = "".join(TEXTS[name])
    return (lines * (size // len(lines) + 1))[:size]


def _with_secrets(text: str, secrets: str = SECRETS["with secrets"]) -> str:
    middle = len(text) // 2
    return text[:middle] + secrets + text[middle + len(secrets) :]


def _sense_payload(ocr: str) -> dict[str, Any]:
    """A ``/sense`` body as the capture client sends it, with ``ocr`` and a 64 KiB image."""
    return {**TEXTS["sense"], "ocr": ocr, "roi": {"data": ROI, "bbox": [0, 0, 860, 96]}}


def measure(quick: bool) -> dict[str, list[float]]:
    """Each row's figures, microseconds a call, in :data:`HEADER`'s order."""
    number = 2_000 if quick else 20_000
    code, log, mixed, speech = _sized("code"), _sized("log"), _sized("mixed"), TEXTS["transcript"]
    redactor = Redactor()
    capture = json.loads((ROOT / "tests/fixtures/capture_client_sense.json").read_text())[1]
    payload, texts = redactor.payload, redactor.texts

    def on_text(text: str) -> tuple[Callable[[], Any], Callable[[str], Any]]:
        return (lambda: redact(text)), (lambda s: redact(_with_secrets(text, s)))

    rows = {
        "code OCR 4 KiB": on_text(code),
        "log OCR 4 KiB": on_text(log),
        "transcript 300": on_text(speech),
        "capture payload": (
            lambda: payload(capture),
            lambda s: payload({**capture, "ocr": capture["ocr"] + s}),
        ),
        "sense payload 4 KiB": (
            lambda: payload(_sense_payload(code)),
            lambda s: payload(_sense_payload(_with_secrets(code, s))),
        ),
        "feed message": (
            lambda: texts((speech, "normal")),
            lambda s: texts((_with_secrets(speech, s), "normal")),
        ),
        "mixed OCR 4 KiB": on_text(mixed),
    }
    build_code = best_us(lambda: _with_secrets(code), number)
    build_sense = best_us(lambda: _sense_payload(code), number)
    figures: dict[str, list[float]] = {}
    for name, (clean, dirty) in rows.items():
        row = [best_us(clean, number)]
        row += [best_us(partial(dirty, s), max(number // 4, 100)) for s in SECRETS.values()]
        if name == "sense payload 4 KiB":  # less building the test input itself
            row = [row[0] - build_sense, *(v - build_sense - build_code for v in row[1:])]
        elif "4 KiB" in name:
            row = [row[0], *(v - build_code for v in row[1:])]
        figures[name] = row
    return figures


OPTIONS = [
    arg("--quick", action="store_true", help="fewer repetitions"),
    arg("--json", action="store_true", help="print the figures as JSON"),
    arg("--before", type=Path, help="a checkout to compare with, in turns"),
    arg("--rounds", type=int, default=5, help="turns of each with --before"),
]


def run(args: argparse.Namespace) -> None:
    if args.before is not None:
        compare(args.before, args.rounds, quick=args.quick)
    elif args.json:
        print(json.dumps(measure(args.quick)))
    else:
        table = Table("|".join(["input <22", *(f"{h} (us) >18.2f" for h in HEADER)]))
        table.head()
        for name, row in measure(args.quick).items():
            table.row(name, *row)


def _run(checkout: Path, quick: bool) -> dict[str, list[float]]:
    """This case's figures with ``checkout``'s code: the child imports the product's packages
    from ``checkout`` first, then this case from here."""
    argv = ["privacy", "--json", *(["--quick"] if quick else [])]
    code = (
        f"import sys; sys.path.insert(0, {str(checkout.resolve())!r}); import actors, config; "
        f"sys.path.insert(0, {str(ROOT)!r}); from bench.runner import main; main({argv!r})"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=checkout, capture_output=True, text=True, check=True
    )
    return cast(dict[str, list[float]], json.loads(out.stdout))


def compare(before: Path, rounds: int, *, quick: bool) -> None:
    """Medians of ``rounds`` turns of ``before``'s code and this checkout's, and the ratios."""
    checkouts = {"before": before, "after": ROOT}
    runs: dict[str, list[dict[str, list[float]]]] = {"before": [], "after": []}
    for n in range(rounds):
        for label in list(runs)[:: 1 if n % 2 == 0 else -1]:
            runs[label].append(_run(checkouts[label], quick))
    print(f"medians of {rounds} turns each, us a call; after/before")
    table = Table("input <22|column <14|before >10.2f|after >10.2f|ratio >8.2f")
    table.head()
    for name in runs["after"][0]:
        for column, title in enumerate(HEADER):
            old = median(run[name][column] for run in runs["before"] if name in run)
            new = median(run[name][column] for run in runs["after"])
            table.row(name, title, old, new, new / old)
