"""Stack traces in OCR text: Python tracebacks, JavaScript errors, Java (and other JVM)
exceptions and Go panics, as a terminal, an IDE or a browser console shows them.

OCR keeps the lines of a screen but often loses their indentation, so a trace is recognised
by the shape of its lines, not by their leading spaces: a heading line (``Traceback (most
recent call last):``, ``TypeError: ...``, ``java.lang.IllegalStateException: ...``,
``panic: ...``) followed by at least one frame line in that language's form. A heading
without a frame is not a trace: prose that names an error, or an error line alone, is
left out, and so is a frame-like line with no heading before it.

The scan goes line by line with anchored patterns, and each language is looked for only
when its telltale text occurs at all, so a screen without traces costs a few substring
searches.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import re2

from actors.core.screen_budget import READ_CHARS

Language = Literal["python", "javascript", "java", "go"]

MAX_TRACES = 3
"""Traces :func:`find_stack_traces` returns at most, by default."""
MAX_TRACE_LINES = 12
"""Lines of one trace kept at most: the heading, an ellipsis, and the last lines (where the
exception and the innermost frames are)."""
MAX_LINE_CHARS = 300
"""Characters of one line of a trace kept at most."""
ELLIPSIS = "…"
SCAN_LINE_CHARS = 1024
"""Characters of one line looked at, at most: no heading or frame is longer, and a longer
line (a minified bundle's source line) is read no further."""

_CLASSES = {"s": r"\s\v\pZ", "w": r"\pL\pN_"}
r"""Python's ``\s`` and ``\w`` as they read text (Unicode white space and word characters),
for RE2, whose own are ASCII only."""


def _compiled(pattern: str) -> re2._Regexp[str]:
    r"""``pattern`` for RE2, which matches in time linear in the line whatever the line: one
    line of OCR may be megabytes (a minified bundle), and a backtracking engine takes minutes
    on some (``   at `` and a long run of dots). ``\s``, ``\S`` and ``\w`` read as Python's."""
    out, in_class, i = [], False, 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escaped = pattern[i + 1]
            same = _CLASSES.get(escaped.lower())
            if same is None:
                out.append(pattern[i : i + 2])
            elif in_class:
                out.append(same)  # only \s and \w stand inside this module's classes
            else:
                out.append(f"[^{same}]" if escaped.isupper() else f"[{same}]")
            i += 2
            continue
        if char == "[" and not in_class:
            in_class = True
        elif char == "]" and in_class and pattern[i - 1] not in "[^":
            in_class = False
        out.append(char)
        i += 1
    return re2.compile("".join(out))


_PY_HEADING = _compiled(r"\s*Traceback \(most recent call last\):\s*$")
_PY_FRAME = _compiled(r'\s*File "[^"]+", line \d+(?:, in \S.*)?\s*$')
_PY_EXCEPTION = _compiled(
    r"\s*(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*"
    r"(?:(?:Error|Exception|Interrupt|Exit|Warning|Iteration|Fault|Failure)(?::.*)?|: .*)$"
)
"""The line that ends a traceback: ``ValueError: bad``, ``KeyboardInterrupt``,
``django.core.exceptions.ImproperlyConfigured: ...``, ``myapp.Boom: message``."""
_PY_CODE_LINES = 3
"""Lines after a frame that are not frames (its source line, Python 3.11's ``~~^^`` marks)
before the traceback counts as ended."""

_JS_HEADING = _compiled(
    r"\s*(?:Uncaught\s+(?:\(in promise\)\s+)?)?(?:[A-Z][\w$]*)?(?:Error|Exception)"
    r"(?:\s*\[[\w-]+\])?(?::.*)?$"
)
_JS_LOCATION = r"(?:<anonymous>|native|[^\s()]*[/\\.][^\s()]*:\d+:\d+)"
_JS_FRAME = _compiled(
    rf"\s*at\s+(?:(?:async\s+)?(?:new\s+)?[^\s()][^()]*?\s+\({_JS_LOCATION}\)"
    rf"|(?:async\s+)?{_JS_LOCATION})\s*$"
)

_JAVA_HEADING = _compiled(
    r'\s*(?:Exception in thread "[^"]*"\s+)?(?:Caused by:\s+)?'
    r"(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?::.*)?$"
)
_JAVA_FRAME = _compiled(
    r"\s*at\s+[\w$.<>/\-]+\("
    r"(?:[\w$.\-]+\.(?:java|kt|kts|scala|groovy|clj):\d+|Native Method|Unknown Source)\)\s*$"
)
_JAVA_MORE = _compiled(r"\s*(?:\.\.\. \d+ more|(?:Caused by|Suppressed): \S.*)\s*$")

_GO_HEADING = _compiled(r"\s*(?:panic|fatal error): \S.*$")
_GO_GOROUTINE = _compiled(r"\s*goroutine \d+ \[[^\]]*\]:\s*$")
_GO_FILE = _compiled(r"\s*\S+\.go:\d+(?:\s+\+0x[0-9a-fA-F]+)?\s*$")
_GO_FUNCTION = _compiled(r"\s*(?:created by \S.*|[^\s(][^\s]*\(.*\)(?: \S.*)?)\s*$")
_GO_LEAD_LINES = 3
"""Lines between a panic's heading and its ``goroutine N [...]:`` line at most (blank lines,
a ``[recovered]`` panic)."""

_AT_LINE = re.compile(r"^[ \t]*at\s", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class StackTrace:
    """One trace found in a text: its language and its lines (bounded)."""

    language: Language
    text: str


Matcher = Callable[[Sequence[str], int], int | None]
"""``(lines, i)``: the end (exclusive) of the trace whose heading is line ``i``, or ``None``."""


def _python(lines: Sequence[str], i: int) -> int | None:
    if not _PY_HEADING.match(lines[i]):
        return None
    last_frame = None
    stop = len(lines)
    for j in range(i + 1, len(lines)):
        line = lines[j]
        if _PY_FRAME.match(line):
            last_frame = j
            continue
        if last_frame is None:
            return None  # a heading must be followed by a frame at once
        if j - last_frame > _PY_CODE_LINES or not line.strip():
            stop = j
            break
        if _PY_EXCEPTION.match(line):
            return j + 1
    if last_frame is None:
        return None
    # No exception line (the OCR was cut off): the last frame and its source line, if any.
    return last_frame + 1 + min(1, stop - last_frame - 1)


def _frames(
    lines: Sequence[str], i: int, frame: re2._Regexp[str], more: re2._Regexp[str] | None
) -> int | None:
    """The end of the run of ``frame`` lines (and ``more`` lines between them) after line
    ``i``; ``None`` unless the first line after it is a frame."""
    end = None
    for j in range(i + 1, len(lines)):
        line = lines[j]
        if frame.match(line) or (end is not None and more is not None and more.match(line)):
            end = j + 1
            continue
        break
    return end


def _javascript(lines: Sequence[str], i: int) -> int | None:
    if not _JS_HEADING.match(lines[i]):
        return None
    return _frames(lines, i, _JS_FRAME, None)


def _java(lines: Sequence[str], i: int) -> int | None:
    if not _JAVA_HEADING.match(lines[i]):
        return None
    return _frames(lines, i, _JAVA_FRAME, _JAVA_MORE)


def _go(lines: Sequence[str], i: int) -> int | None:
    if not _GO_HEADING.match(lines[i]):
        return None
    start = None
    for j in range(i + 1, min(i + 2 + _GO_LEAD_LINES, len(lines))):
        if _GO_GOROUTINE.match(lines[j]):
            start = j
            break
    if start is None:
        return None
    end = None
    for j in range(start + 1, len(lines)):
        line = lines[j]
        if _GO_FILE.match(line):
            end = j + 1
        elif not _GO_FUNCTION.match(line):
            break
    return end


def _matchers(text: str) -> list[tuple[Language, Matcher]]:
    """The languages whose telltale text occurs in ``text``, Java before JavaScript (a
    JVM heading names a package, which a JavaScript one never does)."""
    found: list[tuple[Language, Matcher]] = []
    if "Traceback (most recent call last)" in text:
        found.append(("python", _python))
    if _AT_LINE.search(text):
        found.append(("java", _java))
        found.append(("javascript", _javascript))
    if "goroutine " in text:
        found.append(("go", _go))
    return found


def _bounded(lines: Sequence[str]) -> str:
    """The lines of a trace, each at most :data:`MAX_LINE_CHARS`, at most
    :data:`MAX_TRACE_LINES` of them: the heading, an ellipsis and the last ones."""
    kept = [line.rstrip() for line in lines]
    if len(kept) > MAX_TRACE_LINES:
        kept = [kept[0], "  " + ELLIPSIS, *kept[len(kept) - (MAX_TRACE_LINES - 2) :]]
    return "\n".join(
        line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + ELLIPSIS
        for line in kept
    )


def scanned_lines(text: str) -> list[str]:
    """The lines of ``text`` that are looked at for errors: each cut at
    :data:`SCAN_LINE_CHARS`, as many as make :data:`~actors.core.screen_budget.READ_CHARS`
    characters so cut (what the prompt reads of a text). A minified bundle's one-megabyte
    source line, which a console prints above the trace, costs one scan to its end and leaves
    the trace after it in reach."""
    lines: list[str] = []
    left, start = READ_CHARS, 0
    while left > 0 and start <= len(text):
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        lines.append(text[start : min(end, start + SCAN_LINE_CHARS)])
        left -= len(lines[-1]) + 1
        start = end + 1
    return lines


def find_stack_traces(text: str, limit: int = MAX_TRACES) -> tuple[StackTrace, ...]:
    """The stack traces in :func:`scanned_lines` of ``text``, in the order they appear, each
    once, at most ``limit``."""
    lines = scanned_lines(text)
    matchers = _matchers("\n".join(lines))
    if not matchers or limit <= 0:
        return ()
    found: list[StackTrace] = []
    seen: set[str] = set()
    i = 0
    while i < len(lines) and len(found) < limit:
        for language, matcher in matchers:
            end = matcher(lines, i)
            if end is not None:
                trace = StackTrace(language, _bounded(lines[i:end]))
                if trace.text not in seen:
                    seen.add(trace.text)
                    found.append(trace)
                i = end
                break
        else:
            i += 1
    return tuple(found)
