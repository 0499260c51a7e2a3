"""What clients post, as tests post it: screen events (with pictures, or as sinain's capture
client recorded them), a heard transcript, and the check that a session file holds only
requests the relay accepts."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path
from typing import Any

from actors.core.bodies import FeedInput, convert, sense_input
from actors.core.records import FeedRecord, SensePost
from actors.core.window import extract_audio
from tests.support.harness import ROOT
from transport.demo.replay import SessionEvent, load_session

TRANSCRIPT = (
    "[PERIODIC] (normal)\nContext (1 entries):\n"
    "[2s ago, openrouter] So what we need to fix is the idle detection"
)
"""A feed message the context builder reads as heard audio."""


def sense(ocr: str = "def build_context_window():", app: str = "idea", ts: int = 1) -> SensePost:
    """A validated screen event, as the transport hands it to the sense buffer."""
    return sense_input({"type": "text", "ts": ts, "ocr": ocr, "meta": {"app": app, "ssim": 0.85}})


def picture(n: int) -> str:
    """A small base64 JPEG-looking image, different for each ``n``."""
    return base64.b64encode(b"\xff\xd8\xff\xe0" + n.to_bytes(2, "big") * 300).decode()


def screen_with_images(n: int) -> dict[str, Any]:
    """Screen event ``n`` as a capture client posts it: every third has no image, every fourth
    a diff image besides its ROI image (``roi.data``, ``diff.data``)."""
    body: dict[str, Any] = {"type": "screen", "ts": n, "ocr": f"screen {n}", "meta": {"app": "x"}}
    if n % 3 != 0:
        body["roi"] = {"x": n, "data": picture(n)}
    if n % 4 == 0:
        body["diff"] = {"w": 2, "data": picture(1000 + n)}
    return body


FIXTURES = ROOT / "tests" / "fixtures"
RECORDED = FIXTURES / "capture_client_sense.json"
"""``POST /sense`` bodies as sinain's capture client really sent them."""


def jpeg(seed: int, size: int = 600) -> bytes:
    """``size`` bytes that read as a JPEG (its start and end markers), distinct per ``seed``:
    the relay checks an image's signature, never decodes its pixels."""
    body = random.Random(seed).randbytes(max(size - 6, 0))
    return (b"\xff\xd8\xff\xe0" + body + b"\xff\xd9")[:size]


def png(seed: int, size: int = 600) -> bytes:
    """Like :func:`jpeg`, with a PNG's signature."""
    return (b"\x89PNG\r\n\x1a\n" + random.Random(seed).randbytes(size))[:size]


def screen_event(ocr: str, picture: bytes | str | None = None, **fields: Any) -> dict[str, Any]:
    """A ``POST /sense`` body as the capture client sends one, with ``picture`` (bytes:
    base64-encoded; a string: as it is) as its ``roi.data``."""
    body: dict[str, Any] = {"type": "text", "ts": 1, "ocr": ocr, "meta": {"app": "Code"}}
    if picture is not None:
        data = picture if isinstance(picture, str) else base64.b64encode(picture).decode()
        body["roi"] = {"data": data, "bbox": [0, 0, 384, 216], "thumb": True}
    return {**body, **fields}


def recorded() -> list[dict[str, Any]]:
    """The capture client's recorded ``POST /sense`` bodies (a new list each call)."""
    events: list[dict[str, Any]] = json.loads(RECORDED.read_text(encoding="utf-8"))
    return events


def assert_session_accepted(path: Path) -> tuple[SessionEvent, ...]:
    """Check that every line of a session file is a request the relay accepts, in the shape
    Sinain's clients send: a feed post the agent hears, or the capture client's screen event
    field for field. Returns the session."""
    lines = path.read_text(encoding="utf-8").splitlines()
    events = load_session(path)
    assert len(lines) == len(events)
    for number, line in enumerate(lines, start=1):
        raw = json.loads(line)
        assert set(raw) == {"at", "path", "body"}, number
        body = raw["body"]
        if raw["path"] == "/feed":
            message = convert(body, FeedInput).record()
            assert message.priority == "normal"
            assert extract_audio(FeedRecord.stored(1, 0, message)), number
            continue
        assert raw["path"] == "/sense", number
        sense_input(body)
        assert body["type"] in ("text", "visual", "context"), number
        assert isinstance(body["ts"], float), number
        assert isinstance(body["ocr"], str), number
        assert set(body["meta"]) == {"ssim", "app", "windowTitle", "screen"}, number
        assert set(body["observation"]) <= {"title", "subtitle", "facts", "narrative", "concepts"}
        assert {"title", "subtitle", "facts"} <= set(body["observation"]), number
        if "roi" in body:
            assert set(body["roi"]) == {"data", "bbox", "thumb"}, number
            assert len(body["roi"]["data"]) < 1024, number
        if body["type"] != "context":
            assert body["ocr"], number
    return events
