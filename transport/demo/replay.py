"""A capture-client stand-in: replays a recorded session of ``/sense`` and ``/feed`` posts.

A session file (``session.jsonl`` beside this module is the shipped one: about five
minutes of editing code, a failing test, a web search, a chat message and spoken remarks)
holds one request a line::

    {"at": 12.5, "path": "/sense", "body": {"type": "text", "ts": ..., "ocr": "...", ...}}

``at`` is seconds from the start of the session. :class:`Replayer` posts each body to a
relay over real HTTP at its time (divided by ``speed``), with a ``ts`` rewritten to the
current time, on a thread of its own that :meth:`Replayer.stop` ends at once. ``python3 run.py
--demo`` runs it against its own relay; to replay against a relay already running::

    python3 -m transport.demo.replay --url http://127.0.0.1:18791 --speed 2 --loop
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import structlog

from config.logs import configure_logging
from transport.demo.background import Background

log = structlog.get_logger("demo", actor="demo")

DEMO_SESSION = Path(__file__).with_name("session.jsonl")
"""The shipped session: a synthetic capture session of about five minutes."""
PATHS = ("/sense", "/feed")
LOOP_GAP_S = 10.0
"""Session seconds between the last request of a pass and the first of the next."""
POST_TIMEOUT_S = 5.0
POSTED_KEPT = 10_000
"""The newest requests :attr:`Replayer.posted` keeps (a looping replay runs for days)."""


class SessionError(ValueError):
    """A session file is not as this module expects; the message names the line."""


@dataclass(frozen=True, slots=True)
class SessionEvent:
    """One recorded request."""

    at: float
    """Seconds from the start of the session."""
    path: str
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Posted:
    """One request the replayer sent."""

    at: float
    """Its time in the session, seconds."""
    path: str
    sent_ms: int
    """Wall-clock time (epoch ms) just before it was sent."""
    acked_ms: int
    """Wall-clock time (epoch ms) it was answered."""
    status: int
    """The HTTP status, or 0 when no answer came."""


def parse_session(text: str, source: str = "session") -> tuple[SessionEvent, ...]:
    """Read a session, one JSON object a line (blank lines skipped), ``at`` never decreasing.

    Only the envelope is checked here; the bodies are the relay's to judge.

    Raises:
        SessionError: a line that is not an object with a finite ``at``, a ``path`` of
            :data:`PATHS` and an object ``body``, or an ``at`` before the line above.
    """
    events: list[SessionEvent] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            raw = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise SessionError(f"{where}: not JSON ({exc})") from exc
        if not isinstance(raw, dict):
            raise SessionError(f"{where}: not a JSON object")
        at, path, body = raw.get("at"), raw.get("path"), raw.get("body")
        if isinstance(at, bool) or not isinstance(at, int | float) or not math.isfinite(at):
            raise SessionError(f"{where}: at must be a number of seconds")
        if path not in PATHS:
            raise SessionError(f"{where}: path must be one of {', '.join(PATHS)}")
        if not isinstance(body, dict):
            raise SessionError(f"{where}: body must be an object")
        if events and at < events[-1].at:
            raise SessionError(f"{where}: at {at} is before the line above ({events[-1].at})")
        events.append(SessionEvent(float(at), path, body))
    if not events:
        raise SessionError(f"{source}: no requests")
    return tuple(events)


def load_session(path: Path = DEMO_SESSION) -> tuple[SessionEvent, ...]:
    """Read a session file (the shipped one by default); see :func:`parse_session`."""
    return parse_session(path.read_text(encoding="utf-8"), path.name)


def with_current_ts(body: dict[str, Any], now_ms: float) -> dict[str, Any]:
    """``body`` with its ``ts`` (if it has one) set to ``now_ms``, as a capture client sends it."""
    return {**body, "ts": now_ms} if "ts" in body else body


class Replayer(Background):
    """Replays a session against a relay on a daemon thread.

    ``speed`` divides the session's times (2.0 plays it twice as fast); with ``loop`` it
    starts again :data:`LOOP_GAP_S` session seconds after each pass. A request that fails is
    logged and counted, never retried. :attr:`posted` (the newest :data:`POSTED_KEPT`
    requests) is appended on the replay thread; read it after :meth:`wait` or :meth:`stop`.
    ``token``: the relay's ``RELAY_TOKEN``, sent as ``Authorization: Bearer`` (``python -m
    transport.demo.replay`` takes it from the environment).
    """

    def __init__(
        self,
        base_url: str,
        events: Sequence[SessionEvent],
        *,
        speed: float = 1.0,
        loop: bool = False,
        transport: httpx.BaseTransport | None = None,
        token: str = "",
    ) -> None:
        if not math.isfinite(speed) or speed <= 0:
            msg = f"speed must be a positive number, got {speed}"
            raise ValueError(msg)
        if not events:
            msg = "a session needs at least one request"
            raise ValueError(msg)
        self.base_url = base_url.rstrip("/")
        self.events = tuple(events)
        self.speed = speed
        self.loop = loop
        self.posted: deque[Posted] = deque(maxlen=POSTED_KEPT)
        self.failures = 0
        self.passes = 0
        """Passes over the session finished."""
        self._transport = transport
        self._headers = {**_JSON, "Authorization": f"Bearer {token}"} if token else _JSON
        """What each post sends: the relay's ``RELAY_TOKEN`` when it has one."""
        self._stop = threading.Event()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def duration_s(self) -> float:
        """One pass, in wall-clock seconds at this speed."""
        return self.events[-1].at / self.speed

    def start(self) -> Replayer:
        """Start replaying on a daemon thread; returns at once."""
        if self._thread is not None:
            msg = "a Replayer starts once"
            raise RuntimeError(msg)
        self._thread = threading.Thread(target=self._run, name="demo-replay", daemon=True)
        self._thread.start()
        return self

    def wait(self, timeout_s: float) -> bool:
        """Wait for the end of the replay (one pass without ``loop``); True if it ended."""
        return self._done.wait(timeout_s)

    def stop(self, timeout_s: float = POST_TIMEOUT_S + 1) -> None:
        """Stop replaying (a request in flight finishes first) and wait for the thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def _run(self) -> None:
        log.info(
            "demo.replay_started",
            url=self.base_url,
            requests=len(self.events),
            session_s=self.events[-1].at,
            speed=self.speed,
            loop=self.loop,
        )
        try:
            with httpx.Client(
                base_url=self.base_url, timeout=POST_TIMEOUT_S, transport=self._transport
            ) as client:
                start = time.monotonic()
                while self._pass(client, start):
                    self.passes += 1
                    if not self.loop:
                        break
                    start += (self.events[-1].at + LOOP_GAP_S) / self.speed
                    log.info("demo.session_looped", passes=self.passes)
        finally:
            log.info(
                "demo.replay_stopped",
                passes=self.passes,
                posted=len(self.posted),
                failures=self.failures,
            )
            self._done.set()

    def _pass(self, client: httpx.Client, start: float) -> bool:
        """Post every event of one pass at its time; False if stopped on the way."""
        for event in self.events:
            delay = start + event.at / self.speed - time.monotonic()
            if self._stop.wait(max(0.0, delay)):
                return False
            self._post(client, event)
        return not self._stop.is_set()

    def _post(self, client: httpx.Client, event: SessionEvent) -> None:
        sent = time.time() * 1000
        body = with_current_ts(event.body, sent)
        status = 0
        try:
            answer = client.post(event.path, content=orjson.dumps(body), headers=self._headers)
            status = answer.status_code
        except httpx.HTTPError as exc:
            self.failures += 1
            log.warning("demo.post_failed", path=event.path, at=event.at, error=repr(exc))
        else:
            if status != 200:
                self.failures += 1
                log.warning(
                    "demo.post_refused",
                    path=event.path,
                    at=event.at,
                    status=status,
                    error=answer.text[:200],
                )
            else:
                log.debug("demo.posted", path=event.path, at=event.at)
        self.posted.append(Posted(event.at, event.path, int(sent), int(time.time() * 1000), status))


_JSON = {"Content-Type": "application/json"}


def main(argv: Sequence[str] | None = None) -> int:
    """Replay a session against a running relay until it ends (or SIGINT/SIGTERM)."""
    parser = argparse.ArgumentParser(
        prog="python3 -m transport.demo.replay",
        description="Replay a recorded capture session (POST /sense and /feed) against a relay.",
    )
    parser.add_argument("--url", default="http://127.0.0.1:18791", help="the relay's base URL")
    parser.add_argument("--session", type=Path, default=DEMO_SESSION, help="a session file")
    parser.add_argument("--speed", type=float, default=1.0, help="2 plays twice as fast")
    parser.add_argument("--loop", action="store_true", help="start again at the end")
    args = parser.parse_args(argv)
    configure_logging("console" if sys.stderr.isatty() else "json", "info")
    try:
        replayer = Replayer(
            args.url,
            load_session(args.session),
            speed=args.speed,
            loop=args.loop,
            token=os.environ.get("RELAY_TOKEN", "").strip(),
        )
    except (OSError, SessionError, ValueError) as exc:
        parser.exit(2, f"python3 -m transport.demo.replay: error: {exc}\n")
    stopping = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopping.set())
    replayer.start()
    while not stopping.is_set() and not replayer.wait(0.5):
        pass
    replayer.stop()
    return 0 if replayer.failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
