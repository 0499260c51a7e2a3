"""The screen's own pictures: reading a screen event's image, and picking the ones a call sends.

Sinain's capture client sends a picture with many screen events: ``roi.data``, a base64 JPEG
of the region that changed (a thumbnail, or the whole screen on an app switch). OCR misses
what a chart, a video, a design or a screenshot of a stack trace shows; a vision model sees
it. An image is read once (:func:`read_image`): it must be strict base64 of a JPEG or a PNG
of at most :data:`MAX_IMAGE_BYTES`, or it is refused and never sent. Each call sends the
newest distinct images of its window (:func:`pick_images`), leaving out any sent by a recent
call (:class:`SentImages`, by a hash of their bytes): a picture the model has seen tells it
nothing new, and each costs tokens.

Pixels cannot be redacted: what a picture shows leaves the machine as it is (the privacy
document says how to keep images at home).
"""

from __future__ import annotations

import binascii
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

MAX_IMAGE_BYTES = 1024 * 1024
"""The largest image (decoded) a call sends; Sinain's thumbnails are at most 60 KB, its whole
screens under 800 KB."""
RECENT_SENT = 20
"""How many sent images a call remembers, so that none of them is sent again."""

ImageType = Literal["image/jpeg", "image/png"]
RefusalReason = Literal["not_base64", "not_image", "too_large"]
"""Why an image is never sent: ``roi.data`` is not (strict) base64, its bytes are neither a
JPEG nor a PNG, or it is larger than :data:`MAX_IMAGE_BYTES`."""

BASE64_RUN = 120
"""A run of base64 this long in an error text is taken for image data."""
IMAGE_DATA = "[image data]"
_IMAGE_TEXT = re.compile(
    rf"data:[\w.+-]+/[\w.+-]+;base64,[A-Za-z0-9+/=]*|[A-Za-z0-9+/]{{{BASE64_RUN},}}={{0,2}}"
)

_SIGNATURES: tuple[tuple[bytes, ImageType], ...] = (
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
)


@dataclass(frozen=True, slots=True)
class ScreenImage:
    """One screen event's image, fit to be sent."""

    event_id: int
    """The sense event it came with."""
    digest: str
    """A hash of its bytes: the same picture posted twice has the same one."""
    type: ImageType
    size: int
    """Its bytes, decoded."""
    data: str
    """The base64 text as the client sent it (checked: strict base64)."""

    def data_url(self) -> str:
        """``data:image/jpeg;base64,...``: how a chat-completions request carries it."""
        return f"data:{self.type};base64,{self.data}"


@dataclass(frozen=True, slots=True)
class ImageRefusal:
    """A screen event's image that is never sent, and why."""

    event_id: int
    reason: RefusalReason
    size: int
    """Characters of its base64 text (its bytes are not known when it is not base64)."""


def without_image_data(text: str) -> str:
    """``text`` with every ``data:`` URL and every run of base64 of :data:`BASE64_RUN`
    characters or more replaced by :data:`IMAGE_DATA`: what a server that could not read an
    image says may quote it back, and no error text or log line carries the user's pixels."""
    return _IMAGE_TEXT.sub(IMAGE_DATA, text)


def image_data(payload: dict[str, Any]) -> str | None:
    """``roi.data`` of a screen event's payload, when it is a non-empty string."""
    roi = payload.get("roi")
    data = roi.get("data") if isinstance(roi, dict) else None
    return data if isinstance(data, str) and data else None


def read_image(event_id: int, data: str) -> ScreenImage | ImageRefusal:
    """Check one image's base64 text; return it fit to send, or why it never will be.

    A text too long to hold :data:`MAX_IMAGE_BYTES` is refused before it is decoded.
    """
    if len(data) > (MAX_IMAGE_BYTES + 2) // 3 * 4:
        return ImageRefusal(event_id, "too_large", len(data))
    try:
        raw = binascii.a2b_base64(data, strict_mode=True)
    except (binascii.Error, ValueError):
        return ImageRefusal(event_id, "not_base64", len(data))
    kind = next((t for magic, t in _SIGNATURES if raw.startswith(magic)), None)
    if kind is None:
        return ImageRefusal(event_id, "not_image", len(data))
    if len(raw) > MAX_IMAGE_BYTES:
        return ImageRefusal(event_id, "too_large", len(data))
    digest = hashlib.blake2b(raw, digest_size=16).hexdigest()
    return ScreenImage(event_id, digest, kind, len(raw), data)


@dataclass(frozen=True, slots=True)
class SentImages:
    """The hashes of the images recent calls sent, newest first (at most :data:`RECENT_SENT`)."""

    digests: tuple[str, ...] = ()

    def __contains__(self, digest: object) -> bool:
        return digest in self.digests

    def with_sent(self, images: Iterable[ScreenImage]) -> SentImages:
        """This memory with ``images`` remembered as the newest sent."""
        new = [i.digest for i in images]
        if not new:
            return self
        kept = tuple(dict.fromkeys((*new, *self.digests)))
        return SentImages(kept[:RECENT_SENT])


NOTHING_SENT = SentImages()


def pick_images(
    newest_first: Iterable[ScreenImage], max_images: int, sent: SentImages
) -> tuple[ScreenImage, ...]:
    """The images a call sends: of the newest ``max_images`` distinct pictures (by hash), those
    no recent call sent; newest first.

    A picture already sent is not replaced by an older one: what the model saw last is still
    the newest the screen showed.
    """
    newest: dict[str, ScreenImage] = {}
    for image in newest_first:
        if len(newest) >= max_images:
            break
        newest.setdefault(image.digest, image)
    return tuple(i for i in newest.values() if i.digest not in sent)
