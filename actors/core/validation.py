"""Validation of what clients post: ``POST /feed`` and ``POST /sense`` bodies.

Pure functions over parsed JSON: each returns the validated input or raises
:class:`~actors.core.errors.BadRequest` saying which field is wrong. The transport calls them
before anything reaches an actor.
"""

from __future__ import annotations

import math
from typing import Any

from actors.core.errors import BadRequest
from actors.core.records import FeedInput, SenseInput
from actors.core.shapes import CHANNELS

_SERVER_FIELDS = ("id", "receivedAt")
"""Fields the server sets on a stored event; dropped from what a client sends."""
MAX_PRIORITY_CHARS = 32
MAX_SOURCE_CHARS = 32
SENSE_BODY_LIMIT = 2 * 1024 * 1024
"""Largest ``POST /sense`` body, in bytes."""
MAX_NESTING = 100
"""Levels of objects and arrays a sense event may nest (the capture client's nest 3). The
relay writes each event back out as JSON, which orjson does to 255 levels at most: a deeper
event is refused here rather than fail its batch's write."""


def validate_feed(body: Any) -> FeedInput:
    """Check a ``POST /feed`` body: ``text``, and optional ``priority``, ``source``, ``channel``.

    Raises:
        BadRequest: the body is not an object, ``text`` is missing (or ``null``) or is not
            a non-empty string, ``priority`` or ``source`` is given and is not a short string,
            or ``channel`` is given and is neither ``stream`` nor ``agent``.
    """
    if not isinstance(body, dict):
        raise BadRequest("body must be a JSON object")
    text = body.get("text")
    if text is None:
        raise BadRequest("text is required")
    if not isinstance(text, str):
        raise BadRequest("text must be a string")
    if not text.strip():
        raise BadRequest("text must not be empty")
    priority = body.get("priority")
    if priority is None:
        priority = "normal"
    elif not isinstance(priority, str) or not priority or len(priority) > MAX_PRIORITY_CHARS:
        raise BadRequest(f"priority must be a string of 1 to {MAX_PRIORITY_CHARS} characters")
    source = body.get("source")
    if source is not None and (
        not isinstance(source, str) or not source or len(source) > MAX_SOURCE_CHARS
    ):
        raise BadRequest(f"source must be a string of 1 to {MAX_SOURCE_CHARS} characters")
    channel = body.get("channel")
    if channel is None:
        return FeedInput(text, priority, source)
    if channel not in CHANNELS:
        raise BadRequest(f"channel must be one of {', '.join(CHANNELS)}")
    return FeedInput(text, priority, source, channel)


def _nests_deeper(body: dict[str, Any], limit: int) -> bool:
    """Whether ``body`` nests objects and arrays more than ``limit`` levels (itself: 1).

    Level by level, looking only at containers, so a capture client's event costs little.
    ``type() is`` rather than ``isinstance``: parsed JSON has exact dicts and lists.
    """
    level: list[Any] = [body]
    for _ in range(limit):
        deeper = []
        for node in level:
            for child in node.values() if type(node) is dict else node:
                if type(child) is dict or type(child) is list:
                    deeper.append(child)
        if not deeper:
            return False
        level = deeper
    return True


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_observation(observation: Any) -> None:
    if observation is None:
        return
    if not isinstance(observation, dict):
        raise BadRequest("observation must be an object")
    for key in ("title", "subtitle", "narrative"):
        value = observation.get(key)
        if value is not None and not isinstance(value, str):
            raise BadRequest(f"observation.{key} must be a string")
    for key in ("facts", "concepts"):
        value = observation.get(key)
        if value is not None and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            raise BadRequest(f"observation.{key} must be a list of strings")


def validate_sense(body: Any) -> SenseInput:
    """Check a ``POST /sense`` body; return what the buffer stores.

    ``type`` (a non-empty string) and ``ts`` (a number) are required. When present (``null``
    counts as absent): ``ocr`` is a string; ``meta`` an object with ``app`` and ``windowTitle``
    strings, ``ssim`` a number and ``screen`` a number or a string; ``roi`` and ``diff``
    objects; ``observation`` an object whose ``title``, ``subtitle`` and ``narrative`` are
    strings and ``facts`` and ``concepts`` lists of strings (Sinain's capture client sends all
    of these). Other fields are kept as sent. ``id`` and ``receivedAt`` are the server's and
    are dropped from the client's object.

    Raises:
        BadRequest: what is wrong, by field name.
    """
    if not isinstance(body, dict):
        raise BadRequest("body must be a JSON object")
    if _nests_deeper(body, MAX_NESTING):
        raise BadRequest(f"body nests objects and arrays deeper than {MAX_NESTING} levels")
    kind = body.get("type")
    if kind is None or "ts" not in body:
        raise BadRequest("missing type or ts")
    if not isinstance(kind, str) or not kind:
        raise BadRequest("type must be a non-empty string")
    ts = body["ts"]
    if not _is_number(ts):
        raise BadRequest("ts must be a number")
    ocr = body.get("ocr")
    if ocr is not None and not isinstance(ocr, str):
        raise BadRequest("ocr must be a string")
    meta = body.get("meta")
    if meta is not None and not isinstance(meta, dict):
        raise BadRequest("meta must be an object")
    meta = meta or {}
    app = meta.get("app")
    if app is not None and not isinstance(app, str):
        raise BadRequest("meta.app must be a string")
    ssim = meta.get("ssim")
    if ssim is not None and not _is_number(ssim):
        raise BadRequest("meta.ssim must be a number")
    title = meta.get("windowTitle")
    if title is not None and not isinstance(title, str):
        raise BadRequest("meta.windowTitle must be a string")
    screen = meta.get("screen")
    if screen is not None and not (_is_number(screen) or isinstance(screen, str)):
        raise BadRequest("meta.screen must be a number or a string")
    _check_observation(body.get("observation"))
    for key in ("roi", "diff"):
        value = body.get(key)
        if value is not None and not isinstance(value, dict):
            raise BadRequest(f"{key} must be an object")
    payload = body
    if any(key in body for key in _SERVER_FIELDS):
        payload = {k: v for k, v in body.items() if k not in _SERVER_FIELDS}
    return SenseInput(
        type=kind,
        ts=ts,
        ocr=ocr or "",
        app=app or "",
        ssim=float(ssim) if ssim is not None else None,
        payload=payload,
    )
