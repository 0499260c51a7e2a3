"""Whether a hud is a line a user can read: the last gate before the feed.

Parsing an answer is one question, pushing its hud another. A small model may answer
prose that paraphrases our own instructions, a JSON object cut off by ``max_tokens``, the
prompt's placeholder, or markup; the spec's fallback (the first 80 characters of a prose
answer) would put any of those on the overlay. :func:`checked_hud` first salvages the
``hud`` of an answer that is JSON-like but not JSON (a cut-off object), then judges the
candidate (:func:`judge`) and withholds it with a reason:

``empty``       no letter or digit;
``placeholder`` the prompt's own placeholder (``<max 15 words …>``) or one like it, or a
                template's slot (``[insert …]``, ``[your …]``);
``markup``      tags (``<div>``, ``<|im_end|>``), code fences, Markdown headings;
``fragment``    a piece of JSON: a ``"hud":``/``"digest":`` key, braces, or mostly quotes,
                brackets and colons; or a line that stops at a colon after a little word
                ("The latest event is:"), where its content should begin;
``echo``        most of its words (at least :data:`ECHO_MIN_WORDS`) are the words of the
                prompt's instruction lines and section labels
                (:data:`actors.agent.core.prompt.INSTRUCTIONS`,
                :data:`~actors.agent.core.prompt.LABELS`),
                once the little words every sentence has are left out; or it holds
                :data:`ECHO_RUN` of those words in a row as an instruction line has them
                ("what user is doing NOW. Terse" inside a longer line); or a sentence in
                which the model speaks of itself ("I'm a chatbot") or to itself as the prompt
                does ("You are a helpful AI"), playing back its role; or chat talk about
                its own reply ("Here's a summary", "The above text"); or the prompt's data
                played back (an age label ``[12s ago]``, a section label ``App history:``).

Every test is a regular expression or a set lookup over one short line: microseconds, and
each verdict names the rule that made it. The instruction words are gathered once
(:data:`INSTRUCTION_VOCABULARY`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

import orjson

from actors.agent.core.completion import Analysis
from actors.agent.core.prompt import AGE, INSTRUCTIONS, LABELS
from actors.core.shapes import NO_OUTPUT

Reason = Literal["long", "empty", "placeholder", "markup", "fragment", "echo"]
WITHHELD_REASONS: tuple[Reason, ...] = (
    "long",
    "empty",
    "placeholder",
    "markup",
    "fragment",
    "echo",
)
"""Why a hud is withheld, in the order :func:`judge` tries them."""
LONG_CHARS = 500
"""A hud longer than this (five times the length the answer's schema asks for) is no line an
overlay shows: it is withheld without being read further (a model may write a whole answer
of a megabyte into it)."""

ECHO_SHARE = 0.6
"""A hud whose words come from the instruction lines at this share or more is an echo..."""
ECHO_MIN_WORDS = 4
"""...if at least this many of them do: a short hud naming the user, the screen or an error
("User asked about the error on screen") is not."""
ECHO_RUN = 3
"""Words in a row (little words left out) that a hud may share with an instruction line: three
in the order the prompt has them are its text, not the user's ("minimal overlay display",
"doing now terse")."""
SHAPE_SHARE = 0.15
"""A hud of which this share of the visible characters is ``{}[]":`` is a fragment."""

_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "who",
        "not",
        "no",
        "do",
        "does",
        "did",
        "so",
        "than",
        "then",
        "there",
        "their",
        "they",
        "them",
        "he",
        "she",
        "his",
        "her",
        "we",
        "our",
        "re",
        "s",
        "t",
        "ll",
        "ve",
        "d",
        "m",
    ]
)
"""Words every sentence has: they say nothing about where a hud's words come from."""
_WORD = re.compile(r"[^\W\d_]+|\d+")
_ANY_HUD = frozenset(
    ["user", "now", "currently", "editing", "reading", "app", "file", "page", "screen", "idea"]
)
"""Words of the instructions that a hud about the user's moment has as well ("User is now
editing IntelliJ IDEA's OrderService.java file"): they do not count toward the echo share."""
_PLACEHOLDER = re.compile(r"(?<!\w)<([^<>|\s]*\s[^<>|]*)>")
"""``<…>`` of words, not right after a word (``Map<String, Integer>`` is code). The part before
the first space cannot hold one, so a ``<`` with no ``>`` after it costs one scan, not one
for each of its spaces."""
_SLOT = re.compile(
    r"\[\s*(?:insert|enter|add|your|describe|fill in|placeholder|name of)\b[^\]\n]*\]?",
    re.IGNORECASE,
)
"""A template's slot, ``[insert …]`` or ``[your …]`` (a ``[draft]`` label is no slot)."""
_TAG = re.compile(
    r"""(?<!\w)</?[a-z][a-z0-9-]*(?:\s+[a-z-]+=(?:"[^"]*"|'[^']*'|[^\s>]+))*\s*/?>"""
    r"|<\|[^|<>]*\|>|<!--"
)
"""An HTML-like tag (``<div>``, ``</s>``, ``<p class="x">``), a chat template's special token
(``<|im_end|>``) or a comment."""
_MARKDOWN = re.compile(r"```|^\s*#{1,6}\s|^\s*\*\*")
_KEY = re.compile(r"""["']?\b(?:hud|digest)\b["']?\s*[:=]""", re.IGNORECASE)
_DANGLING = re.compile(r"\b(?:" + "|".join(sorted(_STOPWORDS)) + r")\s*:$", re.IGNORECASE)
"""A line that stops at a colon after a little word ("The latest event is:"): its content was
to come (an error name before a colon, as a traceback shows it, is content)."""
_SHAPE_CHARS = frozenset('{}[]":')
_SELF = re.compile(
    r"(?:^\W*|[.!?,]\s+)(?:I|I'm|I've|I'll|I'd|As an AI)\b"
    r"|(?:^\W*|[.!?]\s+)(?:you are|you're) an?\b(?:\s+[\w-]+){0,3}?\s+"
    r"(?:AI|assistant|chatbot|bot|model)\b"
    r"|\byour (?:responses?|role|task|job|instructions)\b",
    re.IGNORECASE,
)
"""A sentence in which the model speaks of itself ("I'm a chatbot", "I will produce") or to
itself as the prompt does ("You are a helpful AI", "Your responses should"): the role the
prompt gives it, not what the user does (a quoted "I" is the user's)."""
_CHAT = re.compile(
    r"(?:^\W*|[.!?]\s+)(?:sure|certainly|of course|absolutely)\s*[,!.]"
    r"|\bhere(?:'s| is| are) (?:a|an|the|how|your|my|some)\b"
    r"|\byou(?:'ve| have) already\b"
    r"|\bthe above (?:text|code|summary|response|information)\b"
    r"|\byou can use the following\b",
    re.IGNORECASE,
)
"""The model answering the prompt as a chat ("Sure!", "Here's a summary", "You've already
covered", "The above text"): it speaks of its own reply, not of what the user does."""
_AGE_MARK = re.compile(
    re.escape(AGE.strip()).replace(r"\{seconds\}", r"\d+")
    + "|^"
    + re.escape(AGE.strip()[1:-1]).replace(r"\{seconds\}", r"\d+")
    + r"\b"
)
"""The prompt's age label of an event (``[12s ago]``), or a hud that begins with one without
its brackets (``12s ago``): it plays back the prompt's own events."""
_SALVAGE = (
    re.compile(r'"hud"\s*:\s*("(?:[^"\\\n]|\\.)*")'),
    re.compile(r"'hud'\s*:\s*'([^'\n]*)'"),
)
"""A ``hud`` value in text that is not JSON: a cut-off object, or a Python-style dict."""


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS]


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """What the instruction lines are made of: their words and their placeholders' openings."""

    words: frozenset[str]
    placeholder_openings: tuple[tuple[str, ...], ...]
    """The first three words of each ``<…>`` placeholder: a hud holding one is a placeholder."""
    runs: frozenset[tuple[str, ...]]
    """Every :data:`ECHO_RUN` words in a row of an instruction line (little words left out)."""
    sections: tuple[str, ...] = ()
    """The heads of the prompt's section labels (``Active app:``, ``Screen (OCR``): a hud
    holding one plays back the prompt's data."""


def _section_head(label: str) -> str:
    """``label`` up to the first word inside its parenthesis (``Screen (OCR``), all of it when it
    has none (``App history:``)."""
    before, paren, inside = label.partition("(")
    return f"{before}{paren}{inside.split()[0]}" if paren and inside.split() else label


def vocabulary(lines: Iterable[str], labels: Iterable[str] = ()) -> Vocabulary:
    """Gather the words and placeholders of the instruction lines and the heads of the section
    ``labels`` (once per prompt template)."""
    text = "\n".join(lines)
    openings = tuple(
        tuple(_WORD.findall(match.lower())[:3]) for match in _PLACEHOLDER.findall(text)
    )
    runs = {
        tuple(words[i : i + ECHO_RUN])
        for line in text.splitlines()
        for words in [_words(line)]
        for i in range(len(words) - ECHO_RUN + 1)
    }
    sections = tuple(_section_head(label) for label in labels if not label.startswith("("))
    return Vocabulary(
        frozenset(_words(text)),
        tuple(o for o in openings if len(o) == 3),
        frozenset(runs),
        sections,
    )


INSTRUCTION_VOCABULARY = vocabulary((*INSTRUCTIONS, *LABELS), LABELS)
"""The relay's prompt's instruction lines and section labels, gathered once."""


def _holds(sequence: list[str], run: tuple[str, ...]) -> bool:
    size = len(run)
    return any(tuple(sequence[i : i + size]) == run for i in range(len(sequence) - size + 1))


def judge(hud: str, vocab: Vocabulary = INSTRUCTION_VOCABULARY) -> Reason | None:
    """Why ``hud`` must not reach the feed, or ``None`` when it is a line a user can read."""
    text = hud.strip()
    if len(text) > LONG_CHARS:
        return "long"
    if not any(c.isalnum() for c in text):
        return "empty"
    every_word = _WORD.findall(text.lower())
    if any(_holds(every_word, opening) for opening in vocab.placeholder_openings):
        return "placeholder"
    if _TAG.search(text) or _MARKDOWN.search(text):
        return "markup"
    if _PLACEHOLDER.search(text) or _SLOT.search(text):
        return "placeholder"
    visible = [c for c in text if not c.isspace()]
    shape = sum(c in _SHAPE_CHARS for c in visible)
    if _KEY.search(text) or "{" in text or "}" in text or shape >= SHAPE_SHARE * len(visible):
        return "fragment"
    if _DANGLING.search(text):
        return "fragment"
    words = _words(text)
    ours = sum(w in vocab.words and w not in _ANY_HUD for w in words)
    if (ours >= ECHO_MIN_WORDS and ours >= ECHO_SHARE * len(words)) or _SELF.search(text):
        return "echo"
    if _CHAT.search(text):
        return "echo"
    if any(tuple(words[i : i + ECHO_RUN]) in vocab.runs for i in range(len(words) - ECHO_RUN + 1)):
        return "echo"
    if _AGE_MARK.search(text) or any(head in text for head in vocab.sections):
        return "echo"
    return None


NOT_PUSHED = (NO_OUTPUT, "Idle")
"""Huds that are never put on the feed: none, and the prompt's word for a moment without news."""


def pushes(hud: str, last_pushed: str | None) -> bool:
    """Whether a hud the gate let through goes to the feed after ``last_pushed``: not one of
    :data:`NOT_PUSHED`, and not the line the feed already shows last."""
    return hud not in NOT_PUSHED and hud != last_pushed


def salvage(content: str) -> str | None:
    """The ``hud`` value of an answer that is JSON-like but not JSON, if one can be read."""
    for pattern in _SALVAGE:
        match = pattern.search(content)
        if match is None:
            continue
        quoted = match.group(1)
        if not quoted.startswith('"'):
            return quoted.strip() or None
        try:
            value = orjson.loads(quoted)
        except orjson.JSONDecodeError:
            continue
        return value.strip() or None if isinstance(value, str) else None
    return None


@dataclass(frozen=True, slots=True)
class Checked:
    """An answer with the hud that may be pushed, and why the model's hud was withheld."""

    analysis: Analysis
    """``hud`` is :data:`~actors.core.shapes.NO_OUTPUT` when it was withheld."""
    withheld: Reason | None


def checked_hud(
    analysis: Analysis, content: str, vocab: Vocabulary = INSTRUCTION_VOCABULARY
) -> Checked:
    """The answer with a hud a user can read, salvaged from a JSON-like answer if need be,
    or with none and the reason.

    A prose answer keeps the spec's fallback (its first 80 characters) when they pass
    :func:`judge`; the digest is never changed.
    """
    if not analysis.parsed_ok:
        found = salvage(content)
        if found is not None and judge(found, vocab) is None:
            return Checked(replace(analysis, hud=found), None)
    reason = judge(analysis.hud, vocab)
    if reason is None:
        return Checked(analysis, None)
    return Checked(replace(analysis, hud=NO_OUTPUT), reason)
