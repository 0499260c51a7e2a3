"""A day-like capture session for the freshness bench, and the moments labelled in it.

Run from the repository root to rewrite ``bench/sessions/day.jsonl`` and its labels
``bench/sessions/day.labels.json``::

    python -m bench.day_session

The output depends on :data:`SEED` only: running it again writes the same bytes.

The session
-----------

About 35 minutes of one developer's morning on a checkout service, one request a line in the
shape :mod:`transport.demo.replay` reads (``{"at", "path", "body"}``). Screen events are
``POST /sense`` bodies as Sinain's capture client sends them: a ``context`` event (no OCR,
a full-frame image) when the app or window changes, at most one every 10 s; otherwise a
``text`` event (the OCR of the changed region, here the pane and its status line) when the
frame changed and at least 1.5 s passed since the last event (0.8 s for a few seconds after a
switch), or a ``visual`` event for a large change with little text. An image (``roi``) is a
tiny placeholder, on context events and a few others. Transcripts are ``POST /feed`` bodies
in both plain forms: the call's audio as ``{"text", "source": "audio"}``, a chunk every few
seconds while someone speaks, and the user's own remarks as text starting with ``[📝] ``.

It holds, in order: long focused stretches in the editor (``limiter.py``, then its tests)
full of flicker (the cursor bar blinking, the line and column in the status bar, the
language server's spinner, the view scrolled a line or three, identical frames) and some
typing; the tests failing in the terminal (a tmux status line whose clock ticks); a burst of
app switching that settles in the browser, a search and a Stack Overflow answer read while
scrolling; the fix, a type error from mypy, its fix, the tests passing; a chat (a request for
a review, a reply typed and sent); a five-minute call with many transcript chunks (fillers such
as "mm-hm", "yeah", "okay"; an agenda, questions, decisions; a shared dashboard; a call
timer ticking); a pull request whose checks run and pass, a quick peek at another app and
back; about five idle minutes with nothing, amid identical frames of the same page; a
review of a colleague's branch that dies with a traceback, a chat about it, her fix, the
tests passing, an approval; a last focused stretch on the README, and two minutes of
identical frames to the end.

The labelling rule
------------------

A *moment* is a request after which a user glancing at the hud would expect it to say
something new. It is labelled at the request that makes the change visible (the one whose
acknowledgement starts the clock), with a short reason. Moments are:

- settling in another app, or another window of one (a file, a page, a channel), at the
  first request there; after a burst of switching, only the app the user stays in (the
  apps passed through are not moments), and none when the burst ends where it began;
- something new on screen that changes what the user faces: a command's outcome (tests
  failing or passing, a type error, a traceback), a message from someone else, a message
  the user sends, checks turning from running to passed, a screen shared in a call;
- speech with content: a question asked or put to the user, a decision or an action
  item, a new topic, a finding ("the refill floors the elapsed time").

Not moments: OCR flicker (cursor, clock, spinner, call timer, who is speaking), scrolling
and reading on in the same document, typing and editing in the same file, identical frames,
fillers ("mm-hm", "yeah", "okay"; :data:`FILLERS`), remarks that restate what is on screen or
add detail to the current topic, idle spells, apps passed through in a burst. Changes less
than :data:`MIN_MOMENT_GAP_S` apart (an app switch and its first text, a command and its
output), and a remark and the switch it announces, are one moment, labelled at the last of
them: a hud a user could see for less than that is not one they expect. So moments are at
least that far apart.

The generator emits the labels with the session, since it knows what it wrote; the demo
session's labels (``transport/demo/session.labels.json``) were written by hand by the same
rule. A session's labels live beside it, ``<name>.labels.json`` (:func:`labels_path`).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transport.demo.replay import SessionEvent

SEED = 20_260_201
"""The random seed of the shipped day session."""
SESSIONS = Path(__file__).resolve().with_name("sessions")
DAY_SESSION = SESSIONS / "day.jsonl"
"""The shipped day session."""
START_TS_MS = 1_769_940_120_000
"""The capture clock (ms) at second 0 of the session (a replay rewrites ``ts``)."""
START_CLOCK_S = 10 * 3600 + 2 * 60
"""The time of day at second 0, 10:02, as clocks on screen show it."""
MIN_MOMENT_GAP_S = 5.0
"""The least time between two moments (see the labelling rule)."""
FILLERS = ("mm-hm", "yeah", "okay", "right", "uh-huh", "sure", "yep", "hmm", "got it")
"""Transcript chunks that say nothing: never a moment."""
MEMO = "[📝] "
"""The mark that starts one of Sinain's own transcript lines."""
ROI_PLACEHOLDER = (
    "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////"
    "////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgB"
    "AQABPxA="
)
"""A one-pixel JPEG, base64: where the capture client sends a frame or a region."""
ROI_SHARE = 0.2
"""The share of text and visual events that carry an image (every context event does)."""


# -- labels ------------------------------------------------------------------------------------


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


# -- the timeline ------------------------------------------------------------------------------


@dataclass
class Timeline:
    """The session being written: a time cursor, the requests and the moments."""

    rng: random.Random
    t: float = 0.0
    lines: list[dict[str, Any]] = field(default_factory=list)
    moments: list[Moment] = field(default_factory=list)
    since_switch: float = 0.0
    """The session second of the last app or window switch (the client's shorter cooldown)."""

    def wait(self, low: float, high: float | None = None) -> None:
        """Move the cursor on by ``low`` seconds, or a random time in ``[low, high]``."""
        self.t += low if high is None else self.rng.uniform(low, high)

    def _add(self, path: str, body: dict[str, Any], moment: str) -> None:
        if moment and self.moments:
            self.t = max(self.t, self.moments[-1].at + MIN_MOMENT_GAP_S)
        at = round(self.t, 1)
        if self.lines and at <= self.lines[-1]["at"]:
            at = round(self.lines[-1]["at"] + 0.1, 1)
        self.t = at
        self.lines.append({"at": at, "path": path, "body": body})
        if moment:
            self.moments.append(Moment(at, moment))

    def screen(
        self,
        kind: str,
        app: str,
        title: str,
        ocr: str = "",
        *,
        ssim: float,
        moment: str = "",
    ) -> None:
        """A ``POST /sense`` body as the capture client sends it."""
        at_ms = START_TS_MS + round(self.t * 1000)
        facts = [f"app: {app}", f"window: {title}", f"ssim: {ssim:.3f}"]
        if ocr:
            facts.append(f"ocr: {ocr.partition(NL)[0][:120]}")
        body: dict[str, Any] = {
            "type": kind,
            "ts": float(at_ms),
            "ocr": ocr,
            "meta": {"ssim": round(ssim, 3), "app": app, "windowTitle": title, "screen": 0},
        }
        if kind == "context" or self.rng.random() < ROI_SHARE:
            full = kind == "context"
            box = [0, 0, 1280, 800] if full else [self.rng.randrange(0, 400, 4), 80, 860, 520]
            body["roi"] = {"data": ROI_PLACEHOLDER, "bbox": box, "thumb": False}
        body["observation"] = {"title": f"{kind} in {app}", "subtitle": title[:80], "facts": facts}
        self._add("/sense", body, moment)

    def switch(self, app: str, title: str, ocr: str, *, moment: str = "") -> None:
        """An app or window switch: a context event, then the first text a moment later
        (a context event only if the last switch was 10 s ago or more)."""
        if self.t - self.since_switch >= 10 or not self.lines:
            self.screen("context", app, title, ssim=self.rng.uniform(0.3, 0.6))
            self.wait(0.6, 1.2)
        self.since_switch = self.t
        self.screen("text", app, title, ocr, ssim=self.rng.uniform(0.55, 0.8), moment=moment)

    def say(self, text: str, *, memo: bool = False, moment: str = "") -> None:
        """A transcript chunk: the call's audio, or (``memo``) one of the user's remarks."""
        body = {"text": MEMO + text} if memo else {"text": text, "source": "audio"}
        self._add("/feed", body, moment)

    def filler(self, *, memo: bool = False) -> None:
        self.say(self.rng.choice(FILLERS), memo=memo)


def clock(t: float) -> str:
    """The time of day at session second ``t``, as a status line shows it: ``10:07``."""
    now = START_CLOCK_S + int(t)
    return f"{now // 3600:02d}:{now // 60 % 60:02d}"


# -- what is on screen -------------------------------------------------------------------------


@dataclass
class View:
    """A scrolling text pane (an editor, a page, a terminal) and what flickers on it."""

    app: str
    title: str
    lines: list[str]
    height: int
    top: int = 0
    cursor: int | None = None
    """The line the cursor bar is on (blinking), or no cursor."""
    cursor_on: bool = True
    col: int = 1
    spinner: int = -1
    status: str = "editor"
    """``editor`` (VS Code's status bar), ``tmux`` (a status line with a clock) or ``none``."""
    tail: bool = False
    """A terminal: the view follows the last line."""

    def ocr(self, t: float) -> str:
        top = max(0, len(self.lines) - self.height) if self.tail else self.top
        shown = []
        for n, line in enumerate(self.lines[top : top + self.height], start=top):
            bar = "█" if self.status == "tmux" else "|"
            shown.append(line + bar if n == self.cursor and self.cursor_on else line)
        if self.status == "editor":
            ln = (self.cursor or 0) + 1
            spin = f"   {'⠋⠙⠹⠸⠼⠴'[self.spinner]} Pylance" if self.spinner >= 0 else ""
            shown.append(f"Ln {ln}, Col {self.col}   Spaces: 4   UTF-8   LF   Python 3.11.9{spin}")
        elif self.status == "tmux":
            shown.append(f'[checkout] 0:zsh*  1:logs-                        "mbp" {clock(t)}')
        return "\n".join(shown)

    def flicker(self, rng: random.Random) -> float:
        """Change something that does not matter; return the frame's SSIM."""
        kind = rng.choices(
            ("cursor", "scroll", "status", "same"),
            (4, 3 if not self.tail else 0, 3 if self.status == "editor" else 1, 2),
        )[0]
        if kind == "cursor" and self.cursor is not None:
            self.cursor_on = not self.cursor_on
            return rng.uniform(0.985, 0.997)
        if kind == "scroll" and len(self.lines) > self.height:
            step = rng.choice((-3, -2, -1, 1, 1, 2, 3))
            self.top = min(max(0, self.top + step), len(self.lines) - self.height)
            return rng.uniform(0.88, 0.95)
        if kind == "status" and self.status == "editor":
            if rng.random() < 0.5:
                self.spinner = (self.spinner + 1) % 6 if self.spinner < 5 else -1
            else:
                self.col = rng.randint(1, 40)
            return rng.uniform(0.975, 0.995)
        return rng.uniform(0.993, 0.999)

    def show(self, tl: Timeline, *, ssim: float, moment: str = "", kind: str = "text") -> None:
        tl.screen(kind, self.app, self.title, self.ocr(tl.t), ssim=ssim, moment=moment)

    def switch_to(self, tl: Timeline, moment: str = "") -> None:
        tl.switch(self.app, self.title, self.ocr(tl.t), moment=moment)


def focus(
    tl: Timeline,
    view: View,
    seconds: float,
    edits: Sequence[tuple[int, str]] = (),
    remarks: int = 0,
) -> None:
    """A focused stretch on ``view``: flicker every few seconds, now and then a longer look,
    ``edits`` typed in (``(line, text)`` inserted, a line in two or three frames), and
    ``remarks`` fillers muttered. Nothing here is a moment."""
    end = tl.t + seconds
    pending = list(edits)
    every = seconds / (len(pending) + 1)
    next_edit = tl.t + every
    mutters = sorted(tl.rng.uniform(tl.t, end) for _ in range(remarks))
    while True:
        if tl.rng.random() < 0.8:
            tl.wait(1.5, 4.5)
        else:
            tl.wait(8, 20)  # a longer look
        if tl.t >= end:
            break
        if mutters and tl.t >= mutters[0]:
            mutters.pop(0)
            tl.filler(memo=True)
            continue
        if pending and tl.t >= next_edit:
            line, text = pending.pop(0)
            view.lines.insert(line, "")
            view.cursor = line
            if not view.tail:
                view.top = min(max(0, line - view.height // 2), max(0, len(view.lines) - 1))
            for cut in sorted({len(text) // 3, 2 * len(text) // 3, len(text)}):
                view.lines[line] = text[:cut]
                view.col = cut + 1
                view.show(tl, ssim=tl.rng.uniform(0.93, 0.97))
                tl.wait(1.5, 2.5)
            next_edit = tl.t + every
            continue
        view.show(tl, ssim=view.flicker(tl.rng))


def idle(tl: Timeline, seconds: float, view: View | None = None, every: float = 30) -> None:
    """An idle spell: nothing at all, or (``view``) only identical frames of it."""
    end = tl.t + seconds
    if view is None:
        tl.t = end
        return
    view.cursor_on = True
    while True:
        tl.wait(every * 0.8, every * 1.2)
        if tl.t >= end:
            break
        tl.screen("text", view.app, view.title, view.ocr(tl.t), ssim=0.998)


# -- the content -------------------------------------------------------------------------------

CODE = "Code"
TERMINAL = "Terminal"
CHROME = "Google Chrome"
SLACK = "Slack"
ZOOM = "zoom.us"
MAIL = "Mail"
REPO = "checkout-api"
GH_REPO = f"acme/{REPO}"
PAGER = "PagerDuty  Resolved: payments-api latency"
NL = "\n"
TERM_TITLE = f"zsh — {REPO} — 132×40"

LIMITER = """\
\"\"\"Token-bucket rate limiting for the checkout API.\"\"\"

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class TokenBucket:
    \"\"\"`capacity` tokens, refilled at `rate` tokens a second.\"\"\"

    capacity: int
    rate: float
    tokens: int = 0
    updated: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.tokens = self.capacity

    def _refill(self, now: float) -> None:
        elapsed = now - self.updated
        added = int(elapsed // (1 / self.rate))
        if added:
            self.tokens = min(self.capacity, self.tokens + added)
            self.updated = now

    def take(self, now: float | None = None) -> bool:
        \"\"\"Take a token if there is one.\"\"\"
        now = time.monotonic() if now is None else now
        self._refill(now)
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def retry_after(self, now: float) -> float:
        \"\"\"Seconds until the next token.\"\"\"
        self._refill(now)
        if self.tokens >= 1:
            return 0.0
        return (1 - self.tokens) / self.rate


class Limiter:
    \"\"\"One bucket per API key.\"\"\"

    def __init__(self, capacity: int, rate: float) -> None:
        self.capacity = capacity
        self.rate = rate
        self._buckets: dict[str, TokenBucket] = {}

    def allow(self, key: str, now: float | None = None) -> bool:
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(self.capacity, self.rate)
        return bucket.take(now)
"""

TESTS = """\
from checkout.limiter import Limiter, TokenBucket


def test_a_full_bucket_allows_a_burst():
    bucket = TokenBucket(capacity=3, rate=1.0, updated=0.0)
    assert [bucket.take(now=0.0) for _ in range(4)] == [True, True, True, False]


def test_tokens_come_back_at_the_rate():
    bucket = TokenBucket(capacity=2, rate=2.0, updated=0.0)
    assert bucket.take(now=0.0) and bucket.take(now=0.0)
    assert not bucket.take(now=0.1)
    assert bucket.take(now=0.6)


def test_keys_have_their_own_buckets():
    limiter = Limiter(capacity=1, rate=1.0)
    assert limiter.allow("a", now=0.0)
    assert limiter.allow("b", now=0.0)
    assert not limiter.allow("a", now=0.0)
"""

NEW_TEST = (
    (20, ""),
    (21, ""),
    (22, "def test_slow_rate_refills_between_calls():"),
    (23, "    bucket = TokenBucket(capacity=1, rate=0.4, updated=0.0)"),
    (24, "    assert bucket.take(now=0.0)"),
    (25, "    assert not bucket.take(now=1.0)"),
    (26, "    assert bucket.take(now=3.0)"),
)

PYTEST_FAIL = """\
$ pytest -q tests/test_limiter.py
...F                                                                     [100%]
=================================== FAILURES ===================================
____________________ test_slow_rate_refills_between_calls _____________________

    def test_slow_rate_refills_between_calls():
        bucket = TokenBucket(capacity=1, rate=0.4, updated=0.0)
        assert bucket.take(now=0.0)
        assert not bucket.take(now=1.0)
>       assert bucket.take(now=3.0)
E       assert False
E        +  where False = take(now=3.0)

tests/test_limiter.py:27: AssertionError
=========================== short test summary info ============================
FAILED tests/test_limiter.py::test_slow_rate_refills_between_calls - assert False
1 failed, 3 passed in 0.08s"""

SEARCH = """\
token bucket refill integer division slow rate python
All   Images   Videos   News   Shopping   More   Tools
About 41,200 results (0.31 seconds)
Stack Overflow
https://stackoverflow.com › questions › token-bucket-loses-tokens
Token bucket rate limiter never refills at low rates - Stack Overflow
3 answers · The problem is the floor division: elapsed // (1 / rate) drops the fraction ...
Real Python
https://realpython.com › python-rate-limiting
Rate Limiting in Python: Token Bucket and Leaky Bucket
Feb 12, 2025 — A token bucket adds tokens continuously; keep the count as a float and ...
GitHub
https://github.com › pallets › ... › issues
Limiter drops partial tokens between requests · Issue #2207
People also ask
Why does my token bucket not refill?
What is the difference between token bucket and leaky bucket?
How do you implement a rate limiter in Python?
Wikipedia
https://en.wikipedia.org › wiki › Token_bucket
Token bucket - Wikipedia
The token bucket is an algorithm used in packet-switched and telecommunications networks ...
Related searches
token bucket python asyncio
rate limiter python redis
leaky bucket vs token bucket"""

STACK_OVERFLOW = """\
Token bucket rate limiter never refills at low rates
Asked 3 years, 2 months ago   Modified 1 year ago   Viewed 18k times
My limiter allows 0.4 requests a second. After the first request it never allows another,
even after waiting several seconds. The refill looks like this:
    added = int(elapsed // (1 / self.rate))
    if added:
        self.tokens = min(self.capacity, self.tokens + added)
        self.updated = now
What am I missing?
python   rate-limiting   token-bucket
3 Answers   Sorted by: Highest score (default)
412
The floor division throws away the fraction of a token every time _refill runs, and
you only move `updated` when a whole token was added. Calls that come more often than
1 / rate seconds never add anything, so the elapsed time keeps being measured from the
same point... but your code also resets nothing when it adds zero. The real problem is
that with rate 0.4 a whole token needs 2.5 s, and int() of the quotient floors it.
Keep the tokens as a float instead:
    elapsed = now - self.updated
    self.tokens = min(self.capacity, self.tokens + elapsed * self.rate)
    self.updated = now
and compare with `self.tokens >= 1` when taking one. This is what most
implementations do (see the Wikipedia article on the token bucket).
answered Mar 3, 2023 at 9:14
Dana K.
22.1k 4 51 80
Comments
  This fixed it, thanks. Note that mypy will complain if tokens is annotated as int.
– op   Mar 3, 2023 at 10:02
58
Alternatively keep integer tokens and carry the remainder in a separate field, which
avoids floating point drift in long-running processes.
answered Mar 4, 2023 at 17:40
Related
Token bucket vs sliding window rate limiting
How to rate limit an asyncio client
Hot Network Questions"""

MYPY_ERROR = (
    "$ mypy checkout\n"
    "checkout/limiter.py:23: error: Incompatible types in assignment (expression has type "
    '"float", variable has type "int")  [assignment]\n'
    "Found 1 error in 1 file (checked 14 source files)"
)

ALL_PASS = """\
$ mypy checkout
Success: no issues found in 14 source files
$ pytest -q
.....................                                                    [100%]
21 passed in 0.42s"""

SLACK_CHANNEL = [
    "# checkout-team",
    "Sam Ortiz  9:41",
    "staging deploy is done, migration 0042 ran fine",
    "Alex Kim  9:58",
    "sync at 10:30 as usual, I'll bring the incident graphs",
]

ZOOM_PEOPLE = ("Alex Kim", "Priya Shah", "Sam Ortiz")


def zoom_frame(t: float, started: float, speaker: str, shared: str = "") -> str:
    elapsed = int(t - started)
    timer = f"{elapsed // 3600:02d}:{elapsed // 60 % 60:02d}:{elapsed % 60:02d}"
    if shared:
        head = f"You are viewing Alex Kim's screen   View Options\n{shared}"
    else:
        head = "Weekly sync — checkout team\n" + "   ".join((*ZOOM_PEOPLE, "You"))
    return (
        f"{head}\n{speaker} is speaking\nMute   Stop Video   Participants 4   Chat   "
        f"Share Screen   Record   Reactions   Leave\n{timer}"
    )


DASHBOARD = """\
checkout-api / Incidents — Grafana
Tue 14:00 – 14:50   Refresh 30s
Requests/s by status   200   429   503
retry_total (per second)   peak 4.1k at 14:05
payments-api p99 latency   2.3 s
circuit breaker: open 14:07 – 14:31"""

CALL: tuple[tuple[str, str], ...] = (
    ("okay, I think everyone's here", ""),
    ("~", ""),
    (
        "so two things today, where the release stands and then Tuesday's incident",
        "the sync's agenda: the release, then Tuesday's incident",
    ),
    ("~", ""),
    ("release first. the branch is cut, everything is merged except the rate limiter fix", ""),
    ("~", ""),
    ("that one's mine, the fix is done and the tests pass since this morning", ""),
    ("~", ""),
    (
        "can you open the PR before noon so Sam can review it today?",
        "asked to open the limiter PR before noon for Sam's review",
    ),
    ("~", ""),
    ("~", ""),
    (
        "Sam, is anything else blocking the release?",
        "asks Sam whether anything else blocks the release",
    ),
    ("no, the migration ran fine on staging last night", ""),
    ("~", ""),
    ("~", ""),
    (
        "so, the incident. Alex, do you want to walk us through it?",
        "the call turns to Tuesday's incident",
    ),
    ("yeah, let me share my screen", ""),
    ("<share>", "Alex shares the incident dashboard"),
    ("so this is Tuesday afternoon, you can see the retry rate climbing at five past two", ""),
    ("~", ""),
    ("at the peak we had about four thousand retries a second against payments", ""),
    ("~", ""),
    (
        "and the root cause was our client retrying every 503 at once, without any backoff",
        "the root cause: retries without backoff",
    ),
    ("~", ""),
    ("which is what Priya's retry PR fixes, right?", "asks whether Priya's retry PR fixes it"),
    ("right, exponential backoff, and it honours retry-after", ""),
    ("~", ""),
    ("~", ""),
    ("do we have an alert on the retry rate?", "asks whether there is an alert on the retry rate"),
    ("not yet, that's the gap", ""),
    (
        "okay, let's add one this sprint. Priya, can you own it?",
        "decided: a retry-rate alert this sprint, Priya owns it",
    ),
    ("~", ""),
    ("~", ""),
    ("I'll stop sharing", "<unshare>"),
    ("~", ""),
    ("one more thing, staging is out of disk again", "new topic: staging is out of disk"),
    ("again?", ""),
    ("yeah, the log volume filled up overnight", ""),
    ("~", ""),
    (
        "Sam, could you look at the staging disk today?",
        "Sam is asked to look at the staging disk today",
    ),
    ("yep, after lunch", ""),
    ("~", ""),
    ("anything else?", ""),
    ("~", ""),
    ("okay, thanks everyone", ""),
)
"""The call: a chunk and its moment (``~`` a filler; ``<share>`` the shared screen)."""


# -- the day -----------------------------------------------------------------------------------


def morning(tl: Timeline) -> tuple[View, View, View]:
    """Editing the limiter and its tests, the tests failing."""
    rng = tl.rng
    code = View(CODE, f"limiter.py — {REPO}", LIMITER.splitlines(), 24, top=6, cursor=22)
    code.switch_to(tl, "opens limiter.py in VS Code")
    end = len(code.lines)
    reset = (
        (end, ""),
        (end + 1, "    def reset(self, key: str) -> None:"),
        (end + 2, '        """Forget the bucket of a key: an operator lifting a block."""'),
        (end + 3, "        self._buckets.pop(key, None)"),
    )
    focus(tl, code, 150, edits=reset)
    tests = View(CODE, f"test_limiter.py — {REPO}", TESTS.splitlines(), 24, cursor=3)
    tests.switch_to(tl, "opens the limiter's tests, test_limiter.py")
    focus(tl, tests, 110, edits=NEW_TEST, remarks=1)
    tl.wait(3, 5)
    term = View(TERMINAL, TERM_TITLE, ["~/checkout-api (limiter) $ "], 30, status="tmux", tail=True)
    term.cursor = 0
    term.switch_to(tl)
    term.lines[-1] += "pytest -q tests/test_limiter.py"
    tl.wait(1.0)
    term.show(tl, ssim=rng.uniform(0.95, 0.98))
    tl.wait(1.6)
    term.lines[-1:] = PYTEST_FAIL.splitlines()[:2]
    term.show(tl, ssim=rng.uniform(0.9, 0.95))
    tl.wait(1.8)
    term.lines[:] = [*PYTEST_FAIL.splitlines(), "~/checkout-api (limiter) $ "]
    term.cursor = len(term.lines) - 1
    term.show(
        tl,
        ssim=rng.uniform(0.6, 0.75),
        moment="the tests fail: test_slow_rate_refills_between_calls",
    )
    focus(tl, term, 35)
    return code, tests, term


def search(tl: Timeline, code: View, term: View) -> None:
    """A burst of switching that settles in the browser, a search, an answer read."""
    rng = tl.rng
    tl.wait(1.5, 2.5)
    tl.switch(SLACK, "checkout-team (Channel) - Acme - Slack", "\n".join(SLACK_CHANNEL))
    tl.wait(0.8, 1.2)
    tl.screen(
        "text",
        MAIL,
        "Inbox (3 messages, 2 unread)",
        "Inbox\nGitHub  [acme/checkout-api] CI failed on main\n" + PAGER,
        ssim=rng.uniform(0.5, 0.7),
    )
    tl.wait(0.8, 1.2)
    tl.screen("text", CODE, code.title, code.ocr(tl.t), ssim=rng.uniform(0.5, 0.7))
    tl.wait(0.9, 1.3)
    page = View(
        CHROME,
        "token bucket refill integer division slow rate python - Google Search",
        SEARCH.splitlines(),
        20,
        status="none",
    )
    page.show(
        tl, ssim=rng.uniform(0.4, 0.6), moment="settles in the browser: searches the failing refill"
    )
    tl.since_switch = tl.t
    focus(tl, page, 25)
    answer = View(
        CHROME,
        "python - Token bucket rate limiter never refills at low rates - Stack Overflow",
        STACK_OVERFLOW.splitlines(),
        22,
        status="none",
    )
    tl.wait(1.0, 2.0)
    answer.show(
        tl,
        ssim=rng.uniform(0.35, 0.5),
        kind="visual",
        moment="opens a Stack Overflow answer on token buckets that never refill",
    )
    focus(tl, answer, 50)
    tl.say(
        "ah, the refill floors the elapsed time, so a slow rate never gets a whole token",
        memo=True,
        moment="a finding: the refill floors the elapsed time",
    )
    focus(tl, answer, 12)
    del term


def fix(tl: Timeline, code: View, term: View) -> None:
    """The fix, a type error from mypy, its fix, the tests passing."""
    rng = tl.rng
    tl.wait(2, 3)
    code.top, code.cursor = 10, 22
    code.switch_to(tl, "back in limiter.py to fix the refill")
    focus(tl, code, 12)
    for line, text in (
        (21, "        elapsed = now - self.updated"),
        (22, "        self.tokens = min(self.capacity, self.tokens + elapsed * self.rate)"),
        (23, "        self.updated = now"),
    ):
        code.lines[line] = text
        code.cursor, code.col = line, len(text) + 1
        code.show(tl, ssim=rng.uniform(0.93, 0.97))
        tl.wait(2.0, 3.5)
    del code.lines[24:26]
    code.show(tl, ssim=rng.uniform(0.92, 0.96))
    focus(tl, code, 20)
    tl.wait(2, 3)
    term.lines = ["~/checkout-api (limiter) $ mypy checkout"]
    term.cursor = None
    term.switch_to(tl)
    tl.wait(2.4, 3.0)
    term.lines = [*MYPY_ERROR.splitlines(), "~/checkout-api (limiter) $ "]
    term.cursor = len(term.lines) - 1
    term.show(
        tl,
        ssim=rng.uniform(0.8, 0.9),
        moment="mypy: tokens is an int but gets a float (limiter.py:23)",
    )
    focus(tl, term, 14)
    tl.wait(2, 3)
    code.top, code.cursor = 8, 14
    code.lines[14] = "    tokens: float = 0"
    code.switch_to(tl, "back in limiter.py to make tokens a float")
    focus(tl, code, 15)
    tl.wait(2, 3)
    term.lines = [*ALL_PASS.splitlines()[:2], "~/checkout-api (limiter) $ pytest -q"]
    term.cursor = None
    term.switch_to(tl)
    tl.wait(2.6, 3.4)
    term.lines = [*ALL_PASS.splitlines(), "~/checkout-api (limiter) $ "]
    term.cursor = len(term.lines) - 1
    term.show(
        tl, ssim=rng.uniform(0.85, 0.92), moment="mypy is clean and the tests pass: 21 passed"
    )
    focus(tl, term, 15)


def chat(tl: Timeline) -> View:
    """A request for a review in Slack, a reply typed and sent."""
    rng = tl.rng
    tl.wait(3, 5)
    lines = [
        *SLACK_CHANNEL,
        "Priya Shah  10:27",
        "can you review my retry PR before the sync? #412, it's small",
        "Message #checkout-team",
    ]
    slack = View(SLACK, "checkout-team (Channel) - Acme - Slack", lines, 12, status="none")
    slack.switch_to(tl, "switches to Slack: Priya asks for a review of her retry PR (#412)")
    focus(tl, slack, 10)
    reply = "sure, right after the sync"
    for cut in (6, 15, len(reply)):
        slack.lines[-1] = reply[:cut]
        slack.show(tl, ssim=rng.uniform(0.96, 0.99))
        tl.wait(1.5, 2.2)
    tl.wait(1.0)
    slack.lines[-1:] = ["You  10:28", reply, "Message #checkout-team"]
    slack.show(
        tl, ssim=rng.uniform(0.9, 0.95), moment="replies to Priya: the review comes after the sync"
    )
    focus(tl, slack, 20)
    return slack


def call(tl: Timeline) -> None:
    """The weekly sync: a chunk every few seconds, the screen now and then."""
    rng = tl.rng
    tl.wait(4, 6)
    started = tl.t
    speaker, shared = "Alex Kim", ""
    tl.switch(
        ZOOM,
        "Zoom Meeting",
        zoom_frame(tl.t, started, speaker),
        moment="joins the weekly sync on Zoom",
    )
    last_frame = tl.t
    for text, moment in CALL:
        tl.wait(3.5, 8.0)
        if tl.t - last_frame > rng.uniform(10, 18):
            speaker = rng.choice((*ZOOM_PEOPLE, "You"))
            tl.screen(
                "text",
                ZOOM,
                "Zoom Meeting",
                zoom_frame(tl.t, started, speaker, shared),
                ssim=rng.uniform(0.96, 0.99),
            )
            last_frame = tl.t
            tl.wait(1.5, 3.0)
        if text == "<share>":
            shared = DASHBOARD
            tl.screen(
                "text",
                ZOOM,
                "Zoom Meeting",
                zoom_frame(tl.t, started, "Alex Kim", shared),
                ssim=rng.uniform(0.3, 0.5),
                moment=moment,
            )
            last_frame = tl.t
        elif text == "~":
            tl.filler()
        else:
            tl.say(text, moment="" if moment == "<unshare>" else moment)
            if moment == "<unshare>":
                tl.wait(2.0, 3.0)
                shared = ""
                tl.screen(
                    "text",
                    ZOOM,
                    "Zoom Meeting",
                    zoom_frame(tl.t, started, "Alex Kim"),
                    ssim=rng.uniform(0.4, 0.6),
                )
                last_frame = tl.t
    tl.wait(3, 5)


def pull_request(tl: Timeline, slack: View) -> View:
    """The burst after the call, the pull request, its checks, a peek away and back."""
    rng = tl.rng
    tl.switch(SLACK, slack.title, slack.ocr(tl.t))
    tl.wait(0.8, 1.2)
    tl.screen(
        "text",
        CODE,
        f"limiter.py — {REPO}",
        LIMITER.splitlines()[0] + "\n\n" + "\n".join(LIMITER.splitlines()[8:20]),
        ssim=rng.uniform(0.5, 0.7),
    )
    tl.wait(0.9, 1.4)
    compare = View(
        CHROME,
        "Comparing main...limiter · acme/checkout-api",
        [
            "Open a pull request",
            "Create a new pull request by comparing changes across two branches.",
            "base: main  ←  compare: limiter   ✓ Able to merge.",
            "Add a title",
            "Keep fractional tokens so slow rates refill",
            "Add a description",
            "The refill floored the elapsed time; a rate under one token a second never refilled.",
            "Reviewers  Sam Ortiz",
            "Create pull request",
            "2 files changed   +14 −6",
        ],
        12,
        status="none",
    )
    compare.show(
        tl,
        ssim=rng.uniform(0.4, 0.6),
        moment="settles in the browser: opens a pull request for the limiter fix",
    )
    tl.since_switch = tl.t
    focus(tl, compare, 30)
    checks = [
        "Keep fractional tokens so slow rates refill #418",
        "Open  dev wants to merge 1 commit into main from limiter",
        "Conversation 0   Commits 1   Checks 2   Files changed 2",
        "Review requested: Sam Ortiz",
        "Some checks haven't completed yet",
        "1 in progress, 1 successful check",
        "⠋ CI / test (3.11)  In progress",
        "✓ CI / lint  Successful in 21s",
        "This branch has no conflicts with the base branch",
    ]
    pr = View(
        CHROME,
        f"Keep fractional tokens so slow rates refill by dev · Pull Request #418 · {GH_REPO}",
        checks,
        12,
        status="none",
    )
    tl.wait(2, 3)
    pr.show(
        tl,
        ssim=rng.uniform(0.4, 0.6),
        kind="visual",
        moment="the pull request is open (#418), its checks are running",
    )
    spin = "⠋⠙⠹⠸⠼⠴⠦⠧"
    for n in range(1, 9):
        tl.wait(3, 6)
        if n == 4:
            tl.screen("text", SLACK, slack.title, slack.ocr(tl.t), ssim=rng.uniform(0.5, 0.7))
            tl.wait(1.2, 1.8)
        pr.lines[6] = f"{spin[n % len(spin)]} CI / test (3.11)  In progress — {n * 9}s"
        pr.show(tl, ssim=rng.uniform(0.97, 0.995))
    tl.wait(3, 5)
    pr.lines[4:8] = [
        "All checks have passed",
        "2 successful checks",
        "✓ CI / test (3.11)  Successful in 1m 14s",
        "✓ CI / lint  Successful in 21s",
    ]
    pr.show(tl, ssim=rng.uniform(0.88, 0.93), moment="the pull request's checks pass")
    focus(tl, pr, 20)
    return pr


def review(tl: Timeline, slack: View, term: View) -> None:
    """A colleague's branch reviewed: a traceback, a chat, her fix, the tests, an approval."""
    rng = tl.rng
    tl.say("okay, Priya's PR", memo=True)
    tl.wait(4, 6)
    diff = View(
        CHROME,
        "Retry with exponential backoff by priya · Pull Request #412 · acme/checkout-api",
        [
            "Retry with exponential backoff #412",
            "Files changed 2   +61 −9",
            "checkout/retry.py",
            "@@ -30,12 +30,29 @@ def backoff(headers: Mapping[str, str], attempt: int) -> float:",
            '+    """Seconds before attempt `attempt`: retry-after if given, else 2**attempt."""',
            '+    return float(headers["retry-after"])',
            "-    return 0.0",
            "+def retry(call, attempts: int = 5):",
            "+    for attempt in range(attempts):",
            "+        response = call()",
            "+        if response.status != 503:",
            "+            return response",
            "+        time.sleep(backoff(response.headers, attempt))",
            "+    return response",
            "tests/test_retry.py",
            "@@ -1,4 +1,31 @@",
            "+def test_backoff_uses_retry_after():",
            '+    assert backoff({"retry-after": "2"}, 0) == 2.0',
            "+def test_retry_gives_up_after_five_attempts():",
            "+    calls = []",
            "+    retry(lambda: calls.append(1) or Unavailable(), attempts=5)",
            "+    assert len(calls) == 5",
            "Review changes",
            "Viewed 0 / 2 files",
        ],
        14,
        status="none",
    )
    diff.switch_to(tl, "opens Priya's retry PR (#412) to review its diff")
    focus(tl, diff, 70)
    tl.wait(2, 3)
    term.lines = [
        "~/checkout-api (limiter) $ git switch retry-backoff && python -m checkout.retry --dry-run"
    ]
    term.cursor = None
    term.switch_to(tl)
    tl.wait(2.5, 3.5)
    term.lines += [
        "Switched to branch 'retry-backoff'",
        "Traceback (most recent call last):",
        '  File "<frozen runpy>", line 198, in _run_module_as_main',
        '  File "/Users/dev/checkout-api/checkout/retry.py", line 88, in <module>',
        "    main()",
        '  File "/Users/dev/checkout-api/checkout/retry.py", line 81, in main',
        "    delay = backoff(response.headers, attempt)",
        '  File "/Users/dev/checkout-api/checkout/retry.py", line 42, in backoff',
        '    return float(headers["retry-after"])',
        "KeyError: 'retry-after'",
        "~/checkout-api (retry-backoff) $ ",
    ]
    term.cursor = len(term.lines) - 1
    term.show(
        tl, ssim=rng.uniform(0.6, 0.75), moment="Priya's branch dies with KeyError: 'retry-after'"
    )
    focus(tl, term, 25)
    tl.wait(2, 3)
    slack.title = "Priya Shah (DM) - Acme - Slack"
    slack.lines = [
        "Priya Shah",
        "can you review my retry PR before the sync? #412, it's small",
        "Message Priya Shah",
    ]
    slack.switch_to(tl, "opens a direct message to Priya")
    message = "your branch throws KeyError: 'retry-after' when a 503 comes without the header"
    for cut in (10, 30, 55, len(message)):
        tl.wait(1.5, 2.5)
        slack.lines[-1] = message[:cut]
        slack.show(tl, ssim=rng.uniform(0.96, 0.99))
    tl.wait(1.0, 1.5)
    slack.lines[-1:] = ["You  11:47", message, "Message Priya Shah"]
    slack.show(
        tl,
        ssim=rng.uniform(0.9, 0.95),
        moment="tells Priya her branch throws KeyError without retry-after",
    )
    for _ in range(6):
        tl.wait(4, 8)
        slack.lines[-1] = (
            "Message Priya Shah" if slack.lines[-1].endswith("typing…") else "Priya Shah is typing…"
        )
        slack.show(tl, ssim=rng.uniform(0.98, 0.995))
    tl.wait(3, 6)
    slack.lines[-1:] = [
        "Priya Shah  11:48",
        "ah, good catch, it falls back to 2**attempt now, pushed",
        "Message Priya Shah",
    ]
    slack.show(tl, ssim=rng.uniform(0.9, 0.95), moment="Priya answers: fixed and pushed")
    focus(tl, slack, 12)
    tl.wait(2, 3)
    term.lines = ["~/checkout-api (retry-backoff) $ git pull -q && pytest -q tests/test_retry.py"]
    term.cursor = None
    term.switch_to(tl)
    tl.wait(2.5, 3.5)
    term.lines += [
        "........                                                                 [100%]",
        "8 passed in 0.12s",
        "~/checkout-api (retry-backoff) $ ",
    ]
    term.cursor = len(term.lines) - 1
    term.show(tl, ssim=rng.uniform(0.85, 0.92), moment="Priya's fix works: the retry tests pass")
    focus(tl, term, 12)
    tl.wait(2, 3)
    diff.lines[-2:] = ["Review submitted", "✓ dev approved these changes", "Viewed 2 / 2 files"]
    diff.switch_to(tl, "approves Priya's retry PR")
    focus(tl, diff, 15)


README = """\
# checkout-api

The checkout service: carts, prices, payment intents.

## Rate limits

Each API key gets a token bucket: `RATE_LIMIT_BURST` requests at once, refilled at
`RATE_LIMIT_PER_S` a second. A request over the limit gets 429 with `Retry-After`.

## Retries

Calls to payments retry a 503 up to five times with exponential backoff, or after the
`Retry-After` the payments API asks for.

## Running it

    make dev      # the API on :8080 with a local Postgres
    make test     # pytest and mypy
"""

README_EDITS = (
    (9, "Rates under one request a second work too: the bucket keeps fractions of a token."),
    (10, ""),
    (15, "The retry rate is on the incidents dashboard; an alert follows this sprint."),
)


def afternoon(tl: Timeline) -> None:
    """The README, a peek away and back, identical frames to the end."""
    rng = tl.rng
    tl.wait(3, 5)
    readme = View(CODE, f"README.md — {REPO}", README.splitlines(), 22, cursor=8)
    readme.spinner = -1
    readme.switch_to(tl, "opens README.md in VS Code")
    focus(tl, readme, 140, edits=README_EDITS, remarks=2)
    tl.screen(
        "text",
        SLACK,
        "checkout-team (Channel) - Acme - Slack",
        "\n".join(SLACK_CHANNEL),
        ssim=rng.uniform(0.5, 0.7),
    )
    tl.wait(0.9, 1.3)
    tl.screen(
        "text",
        MAIL,
        "Inbox (4 messages, 1 unread)",
        "Inbox\nGitHub  [acme/checkout-api] Sam Ortiz approved #418\n" + PAGER,
        ssim=rng.uniform(0.5, 0.7),
    )
    tl.wait(0.9, 1.3)
    readme.show(tl, ssim=rng.uniform(0.5, 0.7))
    focus(tl, readme, 120, remarks=1)
    idle(tl, 150, readme, every=25)


def generate(seed: int = SEED) -> tuple[list[dict[str, Any]], list[Moment]]:
    """The day session's requests and its moments."""
    tl = Timeline(random.Random(seed))
    code, _tests, term = morning(tl)
    search(tl, code, term)
    fix(tl, code, term)
    slack = chat(tl)
    call(tl)
    pr = pull_request(tl, slack)
    idle(tl, 240)
    tl.wait(20)
    idle(tl, 120, pr, every=30)
    review(tl, slack, term)
    afternoon(tl)
    return tl.lines, tl.moments


def session_jsonl(lines: Sequence[dict[str, Any]]) -> str:
    """The text of a session file: one request a line."""
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.day_session",
        description="Write the day session and its labelled moments (deterministic).",
    )
    parser.add_argument("--out", type=Path, default=DAY_SESSION, help="the session file")
    args = parser.parse_args(argv)
    lines, moments = generate()
    out: Path = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(session_jsonl(lines), encoding="utf-8")
    labels_path(out).write_text(labels_json(out.name, moments), encoding="utf-8")
    print(
        f"{out}: {len(lines)} requests over {lines[-1]['at']:g} s, "
        f"{out.stat().st_size / 1e6:.2f} MB; {labels_path(out).name}: {len(moments)} moments"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
