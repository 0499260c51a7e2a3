"""The day-like capture session of the freshness bench, and the moments labelled in a session.

Both are data in ``tests/data/sessions/``, whose ``README.md`` describes the day session, states the
labelling rule and says how to add a session. A session's labels are beside it,
``<name>.labels.json`` (:func:`labels_path`): the requests after which a user glancing at the
hud would expect it to say something new. This module reads and checks them, says when a
hud answered each (:func:`moment_to_hud_s`, from the agent's history), and puts real screen
thumbnails in a session (:func:`with_screens`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from transport.demo.replay import Posted, SessionEvent

DATA = Path(__file__).resolve().parents[1] / "data"
SESSIONS = DATA / "sessions"
DAY_SESSION = SESSIONS / "day.jsonl"
"""The shipped day session."""
MIN_MOMENT_GAP_S = 5.0
"""The least time between two moments (see the labelling rule)."""
FILLERS = ("mm-hm", "yeah", "okay", "right", "uh-huh", "sure", "yep", "hmm", "got it")
"""Transcript chunks that say nothing: never a moment."""
MEMO = "[📝] "
"""The mark that starts one of Sinain's own transcript lines."""


class LabelError(ValueError):
    """A labels file is not as this module expects; the message says where."""


@dataclass(frozen=True, slots=True)
class Moment:
    """A labelled moment: the session second of the request that makes it, and why."""

    at: float
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at, "reason": self.reason}


def labels_path(session: Path) -> Path:
    """Where a session's labels are: ``day.jsonl`` -> ``day.labels.json`` beside it."""
    return session.with_name(f"{session.stem}.labels.json")


def labels_json(session_name: str, moments: Sequence[Moment]) -> str:
    """The text of a labels file."""
    body = {"session": session_name, "moments": [m.to_json() for m in moments]}
    return json.dumps(body, ensure_ascii=False, indent=1) + "\n"


def parse_moments(text: str, events: Sequence[SessionEvent], source: str) -> tuple[Moment, ...]:
    """The moments of a labels file, checked against its session.

    Raises:
        LabelError: not ``{"moments": [{"at", "reason"}, ...]}``, an ``at`` that is no
            request's, or moments not in increasing order.
    """
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LabelError(f"{source}: not JSON ({exc})") from exc
    items = raw.get("moments") if isinstance(raw, dict) else None
    if not isinstance(items, list):
        raise LabelError(f'{source}: needs {{"moments": [{{"at", "reason"}}, ...]}}')
    ats = {event.at for event in events}
    moments: list[Moment] = []
    for n, item in enumerate(items):
        where = f"{source}: moment {n}"
        at = item.get("at") if isinstance(item, dict) else None
        reason = item.get("reason") if isinstance(item, dict) else None
        if isinstance(at, bool) or not isinstance(at, int | float):
            raise LabelError(f"{where}: at must be a number of seconds")
        if not isinstance(reason, str) or not reason.strip():
            raise LabelError(f"{where}: reason must be a non-empty string")
        if float(at) not in ats:
            raise LabelError(f"{where}: no request at {at} s")
        if moments and at <= moments[-1].at:
            raise LabelError(f"{where}: at {at} is not after the moment before it")
        moments.append(Moment(float(at), reason))
    return tuple(moments)


def load_moments(session: Path, events: Sequence[SessionEvent]) -> tuple[Moment, ...] | None:
    """The moments labelled for ``session`` (read from :func:`labels_path`), or ``None``
    when it has no labels file; see :func:`parse_moments`."""
    path = labels_path(session)
    if not path.exists():
        return None
    return parse_moments(path.read_text(encoding="utf-8"), events, path.name)


def screens() -> dict[str, bytes]:
    """The JPEG thumbnail of each app (``tests/data/screens.json`` names them)."""
    apps: dict[str, str] = json.loads((DATA / "screens.json").read_text(encoding="utf-8"))["apps"]
    return {app: (DATA / "screens" / name).read_bytes() for app, name in apps.items()}


def with_screens(
    events: Sequence[SessionEvent], *, every: bool = False
) -> tuple[SessionEvent, ...]:
    """``events`` with each screen event's image (``roi.data``) the thumbnail of its app
    (:func:`screens`; an app without one keeps its image); with ``every``, each screen
    event of an app with a thumbnail gets an image, one that had none too.

    The same screen (type, window title and OCR) gets the same bytes and any other screen
    other bytes (the thumbnail with a JPEG comment naming the screen): the relay's
    de-duplication of images sees what a capture client's frames would give it.
    """
    pictures = screens()
    out: list[SessionEvent] = []
    for event in events:
        body, roi = event.body, event.body.get("roi")
        picture = pictures.get(str(body.get("meta", {}).get("app")))
        if every and event.path == "/sense" and roi is None:
            roi = {"bbox": [0, 0, 384, 240], "thumb": True}
        if not isinstance(roi, dict) or picture is None:
            out.append(event)
            continue
        screen = f"{body.get('type')}|{body['meta'].get('windowTitle')}|{body.get('ocr')}"
        name = hashlib.blake2b(screen.encode(), digest_size=16).hexdigest().encode()
        comment = b"\xff\xfe" + (len(name) + 2).to_bytes(2, "big") + name
        jpeg = picture[:2] + comment + picture[2:]  # after the start-of-image marker
        roi = {**roi, "data": base64.b64encode(jpeg).decode("ascii")}
        out.append(replace(event, body={**body, "roi": roi}))
    return tuple(out)


def answer(entries: Sequence[dict[str, Any]], acked_ms: int) -> tuple[int, int] | None:
    """When the first LLM call that started at or after ``acked_ms`` (epoch ms) started and
    when its hud was shown: its ``hudMs`` (:func:`with_hud_times`), else when its entry was
    stored; None when no entry followed."""
    started = ((e["ts"] - e["latencyMs"], e.get("hudMs", e["ts"])) for e in entries)
    return next((pair for pair in started if pair[0] >= acked_ms), None)


def with_hud_times(
    entries: Sequence[dict[str, Any]], feed: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``entries`` (oldest first), each whose hud reached the feed with ``hudMs``: when the
    feed took it (a model on this machine has it pushed before its entry is stored). A hud is
    the first agent line of the same text taken while its call ran; one the feed no longer
    holds keeps the entry's time."""
    lines = [item for item in feed if item.get("source") == "agent"]
    out = []
    for entry in entries:
        started, text = entry["ts"] - entry["latencyMs"], f"[🧠] {entry['hud']}"
        shown = next(
            (i["ts"] for i in lines if i["text"] == text and started <= i["ts"] <= entry["ts"]),
            None,
        )
        out.append(entry if shown is None or not entry.get("pushed") else {**entry, "hudMs": shown})
    return out


def event_to_hud_s(
    posted: Sequence[Posted], entries: Sequence[dict[str, Any]], speed: float
) -> list[float | None]:
    """For each request: session seconds from its acknowledgement to the first entry whose
    LLM call started at or after it, or None when no entry followed."""
    answers = ((answer(entries, p.acked_ms), p.acked_ms) for p in posted)
    return [None if a is None else (a[1] - acked) * speed / 1000 for a, acked in answers]


def moment_acks(
    moments: Sequence[Moment], events: Sequence[SessionEvent], posted: Sequence[Posted]
) -> list[int | None]:
    """When each moment's request was acknowledged (epoch ms): the first request at the
    moment's second; None when it was not posted or not accepted."""
    acks: list[int | None] = []
    for moment in moments:
        index = next(n for n, event in enumerate(events) if event.at == moment.at)
        post = posted[index] if index < len(posted) else None
        acks.append(post.acked_ms if post is not None and post.status == 200 else None)
    return acks


def moment_to_hud_s(
    acks: Sequence[int | None], entries: Sequence[dict[str, Any]], speed: float
) -> list[float | None]:
    """For each moment (its acknowledgement, in order): session seconds to the first entry
    whose call started at or after it, if that call started before the next moment's
    acknowledgement (the last moment: any time); None when it is unanswered."""
    out: list[float | None] = []
    for n, ack in enumerate(acks):
        until = next((a for a in acks[n + 1 :] if a is not None), math.inf)
        found = None if ack is None else answer(entries, ack)
        if ack is None or found is None or found[0] >= until:
            out.append(None)
        else:
            out.append((found[1] - ack) * speed / 1000)
    return out


PASS_GAP_S = 130.0
"""Quiet seconds between two passes of a repeated session: longer than the relay's window
(120 s), so that each pass begins with an empty one."""


def repeated(
    events: Sequence[SessionEvent], moments: Sequence[Moment] | None, *, until_s: float
) -> tuple[tuple[SessionEvent, ...], tuple[Moment, ...] | None, float]:
    """A session played again and again for ``until_s`` seconds (one pass at least), each pass
    :data:`PASS_GAP_S` after the last request of the one before; its moments in every pass;
    and the seconds from one pass's start to the next's."""
    period = events[-1].at + PASS_GAP_S
    passes = range(max(1, int(until_s // period)))
    again = tuple(replace(e, at=e.at + n * period) for n in passes for e in events)
    if moments is None:
        return again, None, period
    return (
        again,
        tuple(Moment(m.at + n * period, m.reason) for n in passes for m in moments),
        period,
    )
