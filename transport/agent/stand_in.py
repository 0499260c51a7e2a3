"""The demo's stand-in for a model: a hud and a digest made from the relay's prompt by rules
of thumb, labelled as such.

It reads the prompt with the labels of :mod:`actors.agent.core.prompt` (:func:`read_prompt`), and
:func:`summarise` names the app, the window, the error or command on screen and what was
said. The completion's ``model`` is :data:`STAND_IN_MODEL` and each digest begins with
:data:`STAND_IN_MARKER`, so nobody takes it for a model's judgement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from actors.agent.core import prompt as labels

STAND_IN_MODEL = "stand-in/heuristic"
"""The ``model`` of every ``summarise`` completion: no model wrote it."""
STAND_IN_MARKER = "(stand-in, no LLM)"
"""How every ``summarise`` digest begins."""
HUD_WORDS = 15
"""The prompt asks for a hud of at most this many words."""
QUOTE_CHARS = 110
"""Characters of one screen text or transcript quoted in a ``summarise`` digest."""
RECENT_SCREEN_LINES = 3
"""The newest screen lines in which a ``summarise`` digest looks for an error."""

_AGE = re.compile("^" + re.escape(labels.AGE).replace(re.escape("{seconds}"), r"(\d+)"))
_WHERE = re.compile(r"^\[([^\]]*)\]\s*")
_SEEN = re.compile(r"\s*" + re.escape(labels.SEEN).replace(re.escape("{narrative}"), ".*") + "$")
_ATTACHED = labels.SCREENSHOTS.partition("{count}")[0]
_SECTIONS = {
    labels.SCREEN_NOW: "screen",
    labels.SCREEN_HEADER: "screen",
    labels.AUDIO_NOW: "audio",
    labels.AUDIO_HEADER: "audio",
    labels.NOW_HEADER: "",
    labels.EARLIER_HEADER: "",
}
"""The section each heading of the prompt begins."""
_CUT = re.compile(
    "|".join(
        (
            re.escape(labels.CUT_ONE),
            re.escape(labels.CUT_MANY).replace(re.escape("{count}"), r"\d+"),
        )
    )
)
"""Where the prompt left lines of an OCR text out."""
_ERROR = (
    re.compile(r"\bFAILED\b"),
    re.compile(r"\b\w*(?:Error|Exception)\b"),
    re.compile(r"\bTraceback\b"),
    re.compile(r"\b(?:failed|error)\b", re.IGNORECASE),
)
"""What an error on screen looks like, the most telling first."""
_TITLE_SEPARATORS = re.compile(r" [—|·] | - ")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_APP_KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("editor", ("code", "idea", "pycharm", "webstorm", "xcode", "vim", "cursor", "sublime")),
    ("terminal", ("terminal", "iterm", "warp", "kitty", "alacritty", "ghostty")),
    ("browser", ("chrome", "safari", "firefox", "arc", "edge", "brave")),
    ("chat", ("slack", "telegram", "discord", "teams", "messages", "whatsapp", "zoom")),
)


@dataclass(frozen=True, slots=True)
class SeenLine:
    """One line of the prompt's screen section."""

    age_s: int | None
    app: str
    window: str
    """The window title, when the line shows one."""
    text: str
    """The rest of the line: observation title, OCR (``…`` where lines were cut), narrative."""


@dataclass(frozen=True, slots=True)
class HeardLine:
    """One line of the prompt's transcript section."""

    age_s: int | None
    text: str


@dataclass(frozen=True, slots=True)
class PromptView:
    """What :func:`read_prompt` finds in the relay's prompt (``actors/agent/core/prompt.py``)."""

    active_app: str = "unknown"
    app_history: tuple[str, ...] = ()
    screen: tuple[SeenLine, ...] = ()
    """Newest first, as the prompt lists them."""
    heard: tuple[HeardLine, ...] = ()
    """Newest first."""


def _aged(line: str) -> tuple[int | None, str]:
    match = _AGE.match(line)
    if match is None:
        return None, line
    return int(match.group(1)), line[match.end() :]


def _unlabelled(text: str) -> str:
    """A transcript line's text without the label saying whose words they are."""
    for label in labels.SPEAKERS.values():
        if text.startswith(label):
            return text.removeprefix(label)
    return text


def _screen_line(line: str) -> SeenLine:
    age, rest = _aged(line)
    match = _WHERE.match(rest)
    where, text = (match.group(1), rest[match.end() :]) if match else ("", rest)
    app, _, window = where.partition(labels.TITLE_SEPARATOR)
    text = _CUT.sub("…", _SEEN.sub("", text)).replace(labels.AS_ABOVE, "").strip()
    return SeenLine(age, app.strip(), window.strip(), "" if text == labels.NO_TEXT else text)


def read_prompt(prompt: str) -> PromptView:
    """Read the sections of the relay's prompt; whatever is missing stays empty."""
    active = "unknown"
    history: tuple[str, ...] = ()
    screen: list[SeenLine] = []
    heard: list[HeardLine] = []
    section = ""
    window = prompt[prompt.find(labels.NOW_HEADER) :] if labels.NOW_HEADER in prompt else prompt
    for raw in window.split("\n"):
        line = raw.strip()
        if line == labels.ANSWER_HEADER or line.startswith(_ATTACHED):
            break
        if not line:
            section = ""
        elif line.startswith(labels.ACTIVE_APP):
            active = line.removeprefix(labels.ACTIVE_APP).strip() or "unknown"
        elif line.startswith(labels.APP_HISTORY):
            apps = line.removeprefix(labels.APP_HISTORY).strip()
            history = (
                () if apps in ("", labels.NO_APPS) else tuple(apps.split(labels.APP_SEPARATOR))
            )
        elif line in _SECTIONS:
            section = _SECTIONS[line]
        elif section == "screen" and line != labels.NO_SCREEN:
            screen.append(_screen_line(line))
        elif section == "audio" and line != labels.NO_AUDIO:
            age, text = _aged(line)
            heard.append(HeardLine(age, _unlabelled(text)))
    if active == "unknown" and screen:  # the newest screen line names the active app
        active = screen[0].app or active
    return PromptView(active, history, tuple(screen), tuple(heard))


def _words(text: str, count: int, *, more: str = " …") -> str:
    """The first ``count`` words of ``text``, then ``more`` if there were more."""
    words = text.split()
    return " ".join(words[:count]) + (more if len(words) > count else "")


def _quote(text: str, chars: int = QUOTE_CHARS) -> str:
    text = " ".join(text.split())
    return f'"{text if len(text) <= chars else text[: chars - 1].rstrip() + "…"}"'


def _kind(app: str) -> str:
    lowered = app.lower()
    for kind, names in _APP_KINDS:
        if any(name in lowered for name in names):
            return kind
    return ""


def _error(text: str, words: int = 8) -> str:
    """The words from the most telling error in ``text``, or empty."""
    for pattern in _ERROR:
        match = pattern.search(text)
        if match is not None:
            return _words(text[match.start() :], words, more="")
    return ""


def _command(text: str) -> str:
    """The last shell command in a terminal's text (after ``$ ``), or empty."""
    _, prompt, command = text.rpartition("$ ")
    return _words(command, 5, more="") if prompt else ""


def _subject(line: SeenLine) -> str:
    """What the screen line is about: the window title's first part, else its first words."""
    if line.window:
        return _TITLE_SEPARATORS.split(line.window, maxsplit=1)[0].strip()
    return _words(line.text, 6)


def _hud(view: PromptView) -> str:
    if not view.screen:
        if view.heard:
            return f"Talking: {_words(view.heard[0].text, 8)}"
        return "Idle"
    newest = view.screen[0]
    app = newest.app or view.active_app
    error = _error(newest.text, 4)
    if error:
        return f"{app}: {error}"
    subject = _subject(newest)
    kind = _kind(app)
    if kind == "terminal":
        command = _command(newest.text)
        if command:
            return f"Running {command} in {app}"
        subject = _words(newest.text, 8, more="")
    if not subject:
        return f"Switched to {app}"
    if kind == "editor":
        return f"Editing {subject} in {app}"
    if kind == "browser":
        return f"Reading {subject} in {app}"
    if kind == "chat":
        return f"Chatting in {app}: {subject}"
    return f"{app}: {subject}"


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def _place(line: SeenLine | None) -> tuple[str, str] | None:
    """Where a screen line was seen: its app and window."""
    return None if line is None else (line.app, line.window)


def _now_sentence(view: PromptView) -> str:
    if view.screen and view.screen[0].window:
        return f"The user is in {view.active_app}, on {_quote(view.screen[0].window, 80)}."
    return f"The user is in {view.active_app}."


def summarise(prompt: str) -> tuple[str, str]:
    """Return a ``(hud, digest)`` made from the prompt's lines by rules of thumb, not a model.

    The hud names the newest screen line's app and what it shows (an error first, else the
    window title or the first words); the digest names the active app and the app history,
    quotes the newest screen texts and the newest transcript, and says where the user was
    before (the newest older screen line of another app or window). The digest begins with
    :data:`STAND_IN_MARKER`.
    """
    view = read_prompt(prompt)
    seen = view.screen[0] if view.screen else None
    hud = _words(_hud(view), HUD_WORDS, more="")
    now = _now_sentence(view)
    parts = [STAND_IN_MARKER, now]
    if len(view.app_history) > 1:
        parts.append(f"App history: {' → '.join(view.app_history)}.")
    texts = [f"in {line.app} {_quote(line.text)}" for line in view.screen if line.text][:2]
    if texts:
        parts.append(f"On screen, newest first: {'; '.join(texts)}.")
    recent = view.screen[:RECENT_SCREEN_LINES]
    errors = [(line.app, e) for line in recent if (e := _error(line.text))]
    if errors:
        app, error = errors[0]
        parts.append(f"An error on screen in {app}: {_quote(error, 80)}.")
    if not view.screen:
        parts.append("Nothing on screen in the window.")
    if view.heard:
        newest = view.heard[0]
        when = f" ({newest.age_s}s ago)" if newest.age_s is not None else ""
        parts.append(f"Last heard{when}: {_quote(newest.text)}.")
    before = next((line for line in view.screen[1:] if _place(line) != _place(seen)), None)
    if before is not None:
        window = f", on {_quote(before.window, 80)}" if before.window else ""
        parts.append(f"Before that, the user was in {before.app}{window}.")
    return hud, " ".join(parts)
