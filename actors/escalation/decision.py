"""Escalation: whether a committed tick's moment deserves Sinain's agent, and why.

After each successful tick the digest store asks :func:`decide`. An escalation puts a message
into the slot the agent polls (``GET /escalation/pending``); the agent's answer goes to the
feed (:func:`reply_text`). Plain functions over plain data; ``now`` is an argument.

The score (:func:`score`), in ``selective`` mode, escalates at :data:`THRESHOLD`:

- ``error`` +3: the digest names an error (``failed``, ``exception``, ``traceback``, ...), or
  the window's screen holds an error line (:func:`actors.core.screen_budget.is_error`);
- ``question`` +2: a transcript asks something (it ends in ``?``, or asks for help: "how do
  I", "not working", "stuck", ...), else a screen line does;
- ``code_issue`` +1: ``TODO``, ``FIXME``, ``HACK`` or ``XXX`` on screen or in the digest, or a
  failing test (``FAILED``, ``3 failed``);
- ``app_churn`` +1: :data:`CHURN_APPS` apps or more in the window's app history.

The checks of :func:`decide`, in order: mode ``off`` never; inside the cooldown never; stale
(``stale_ms`` above 0 and nothing escalated for that long) always, idle or not; a hud of
``Idle`` or ``—`` never; the digest last escalated never again; ``focus`` and ``rich``
always; ``selective`` at a score of :data:`THRESHOLD` or more.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

from actors.core.screen_budget import is_error, is_question, may_hold_errors
from actors.core.shapes import NO_OUTPUT
from actors.core.window import TickWindow
from config.agent.settings import EscalationPolicy
from config.app_names import normalize_app_name

THRESHOLD = 3
"""The score at which ``selective`` escalates (an error alone; a question and a code issue)."""
POINTS = {"error": 3, "question": 2, "code_issue": 1, "app_churn": 1}
"""What each signal adds to the score."""
CHURN_APPS = 4
"""Apps in the window's history that count as switching back and forth."""
SESSION_KEY = "agent:main:sinain"
"""Hashed with the entry's id and time into the escalation's id (Sinain's session key)."""
ID_CHARS = 16
REPLY_CHARS = 3000
"""An agent's answer shown on the feed is cut here ..."""
CODING_REPLY_CHARS = 4000
"""... or here when the escalated moment was coding."""
REPLY_MARK = "[🤖] "
IDLE_HUDS = ("Idle", NO_OUTPUT)

SkipReason = Literal["off", "cooldown", "idle", "duplicate", "below_threshold"]
"""Why a tick did not escalate."""
Trigger = Literal["score", "changed", "stale"]
"""Why a tick escalated: its score (``selective``), a changed digest (``focus``, ``rich``),
or a long time without one (``stale_ms``)."""

_DIGEST_ERROR = re.compile(
    r"\b(?:error|errors|failed|failure|failing|exception|crash(?:ed|es)?|traceback|segfault"
    r"|panic(?:ked)?|fatal|enoent|cannot read|undefined is not|exit code [1-9]\d*)\b",
    re.IGNORECASE,
)
_HELP = re.compile(
    r"\b(?:how do i|how to|how can i|what if|why is|why does|help me|not working|stuck"
    r"|confused|any ideas|what's wrong|what is wrong)\b",
    re.IGNORECASE,
)
_CODE_MARK = re.compile(r"\b(TODO|FIXME|HACK|XXX)\b")
_FAILING_TEST = re.compile(r"\bFAILED\b|\bFAIL:|\b[1-9]\d* (?:failed|failing)\b|✗|✘")
_EDITORS = frozenset(
    (
        "VS Code",
        "Cursor",
        "Zed",
        "Xcode",
        "IntelliJ IDEA",
        "PyCharm",
        "WebStorm",
        "GoLand",
        "CLion",
        "Rider",
        "Android Studio",
        "Sublime Text",
        "Vim",
        "Neovim",
        "Emacs",
        "Windsurf",
    )
)
_CODE_SIGNS = re.compile(
    r"\bdef \w+\(|\bclass \w+|\bfunction \w*\(|\b(?:const|let|var) \w+ =|\bimport \w+"
    r"|\breturn\b|=>|\bTraceback\b|\bassert\b|\bexpect\(|[{};]\s*$"
    r'|\bFile "[^"]+", line \d+|^\s+at [\w$.<>]+\(',
    re.MULTILINE,
)
_CODE_SIGNS_NEEDED = 3


@dataclass(frozen=True, slots=True)
class Score:
    """A window's score and the signals that made it, e.g. ``("error", "question:audio")``."""

    total: int
    reasons: tuple[str, ...]

    @property
    def question(self) -> bool:
        """Whether a question counted (its message shows the audio first)."""
        return any(r.startswith("question") for r in self.reasons)


@dataclass(frozen=True, slots=True)
class Decision:
    """Escalate (``trigger``) or not (``skip``), with the score either way."""

    score: Score
    trigger: Trigger | None = None
    skip: SkipReason | None = None

    @property
    def escalate(self) -> bool:
        """Whether the tick escalates."""
        return self.trigger is not None


def _lines(window: TickWindow) -> list[str]:
    """The window's screen text, line by line, newest event first."""
    out: list[str] = []
    for event in reversed(window.screen):
        out += event.ocr.splitlines()
    return out


def _question(window: TickWindow, lines: list[str]) -> str | None:
    """Where a question is: ``audio`` first, then ``screen``; ``None`` if nowhere."""
    for chunk in reversed(window.audio):
        if is_question(chunk.text.strip()) or _HELP.search(chunk.text):
            return "audio"
    for line in lines:
        if is_question(line.strip()) or _HELP.search(line):
            return "screen"
    return None


def _code_issue(digest: str, lines: list[str]) -> str | None:
    """``todo``, ``fixme``, ... or ``failing_test``; ``None`` if there is none."""
    for line in lines:
        if _FAILING_TEST.search(line):
            return "failing_test"
    for text in (digest, *lines):
        if found := _CODE_MARK.search(text):
            return found.group(1).lower()
    return None


def score(digest: str, window: TickWindow) -> Score:
    """The score of a tick's digest and the window it was made from."""
    lines = _lines(window)
    reasons: list[str] = []
    if _DIGEST_ERROR.search(digest) or any(
        is_error(line) for line in lines if may_hold_errors(line)
    ):
        reasons.append("error")
    if (where := _question(window, lines)) is not None:
        reasons.append(f"question:{where}")
    if (issue := _code_issue(digest, lines)) is not None:
        reasons.append(f"code_issue:{issue}")
    if len(window.app_history) >= CHURN_APPS:
        reasons.append("app_churn")
    total = sum(POINTS[reason.split(":")[0]] for reason in reasons)
    return Score(total, tuple(reasons))


def decide(
    policy: EscalationPolicy,
    *,
    hud: str,
    digest: str,
    scored: Score,
    now_ms: int,
    last_ms: int | None,
    last_digest: str | None,
) -> Decision:
    """Whether this tick escalates, given the last escalation's time and digest (``None``:
    there was none)."""
    if policy.mode == "off":
        return Decision(scored, skip="off")
    since = None if last_ms is None else now_ms - last_ms
    if since is not None and since < policy.cooldown_ms:
        return Decision(scored, skip="cooldown")
    if policy.stale_ms > 0 and (since is None or since > policy.stale_ms):
        return Decision(scored, trigger="stale")
    if hud.strip() in IDLE_HUDS:
        return Decision(scored, skip="idle")
    if digest == last_digest:
        return Decision(scored, skip="duplicate")
    if policy.mode in ("focus", "rich"):
        return Decision(scored, trigger="changed")
    if scored.total >= THRESHOLD:
        return Decision(scored, trigger="score")
    return Decision(scored, skip="below_threshold")


def coding_context(window: TickWindow) -> bool:
    """Whether the user is coding: an editor in front, or code on the newest screens."""
    if normalize_app_name(window.current_app) in _EDITORS:
        return True
    newest = "\n".join(event.ocr for event in window.screen[-3:])
    return len(_CODE_SIGNS.findall(newest)) >= _CODE_SIGNS_NEEDED


def escalation_id(entry_id: int, ts: int) -> str:
    """The escalation's id: :data:`ID_CHARS` hex characters of a hash of the session key,
    the entry's id and its time; the same entry always gets the same id."""
    digest = hashlib.sha256(f"{SESSION_KEY}#{entry_id}@{ts}".encode()).hexdigest()
    return digest[:ID_CHARS]


def reply_text(response: str, *, coding: bool) -> str:
    """What an agent's answer puts on the feed: ``[🤖] <answer>``, cut at
    :data:`REPLY_CHARS` (:data:`CODING_REPLY_CHARS` when the moment was coding)."""
    limit = CODING_REPLY_CHARS if coding else REPLY_CHARS
    return REPLY_MARK + response.strip()[:limit]
