"""Reading a screen event's image and picking the ones a call sends (pure)."""

from __future__ import annotations

import base64

import pytest

from actors.core.records import SenseRecord
from actors.core.screen_image import (
    MAX_IMAGE_BYTES,
    NOTHING_SENT,
    RECENT_SENT,
    ImageRefusal,
    ScreenImage,
    pick_images,
    read_image,
    without_image_data,
)
from tests.support.posts import jpeg, png


def image(event_id: int, picture: bytes) -> ScreenImage:
    read = read_image(event_id, base64.b64encode(picture).decode())
    assert isinstance(read, ScreenImage), read
    return read


def test_a_jpeg_and_a_png_are_fit_to_send() -> None:
    first = image(1, jpeg(1))
    assert (first.type, first.size) == ("image/jpeg", len(jpeg(1)))
    assert first.data_url() == "data:image/jpeg;base64," + base64.b64encode(jpeg(1)).decode()
    assert image(2, png(1)).type == "image/png"
    assert image(3, jpeg(1)).digest == first.digest != image(4, jpeg(2)).digest


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ("not base64 at all!", "not_base64"),
        (base64.b64encode(jpeg(1)).decode()[:-3], "not_base64"),  # cut short
        (base64.b64encode(jpeg(1)).decode().replace("A", "\n"), "not_base64"),
        (base64.b64encode(b"GIF89a" + bytes(40)).decode(), "not_image"),
        (base64.b64encode(b"<svg xmlns='http://www.w3.org/2000/svg'/>").decode(), "not_image"),
        (base64.b64encode(jpeg(1, size=MAX_IMAGE_BYTES + 1)).decode(), "too_large"),
        ("A" * (MAX_IMAGE_BYTES * 2), "too_large"),
    ],
)
def test_an_image_that_is_not_a_jpeg_or_png_or_too_large_is_refused(data: str, reason: str) -> None:
    refused = read_image(7, data)
    assert refused == ImageRefusal(7, reason, len(data))  # type: ignore[arg-type]


def test_the_largest_image_is_still_sent() -> None:
    assert image(1, jpeg(1, size=MAX_IMAGE_BYTES)).size == MAX_IMAGE_BYTES


def test_an_event_reads_its_image_once_and_says_when_it_did() -> None:
    data = base64.b64encode(jpeg(3)).decode()
    event = SenseRecord(5, 0, "text", 1.0, "", "", None, {"roi": {"data": data, "bbox": [0, 0]}})
    first, was_first = event.image()
    again, was_again = event.image()
    assert isinstance(first, ScreenImage)
    assert (first.event_id, was_first, was_again) == (5, True, False)
    assert again is first
    bare = SenseRecord(6, 0, "text", 1.0, "", "", None, {"roi": {"bbox": [0, 0]}})
    assert bare.image() == (None, True)


def test_the_newest_distinct_images_are_picked_newest_first() -> None:
    a, b, c = image(3, jpeg(1)), image(2, jpeg(2)), image(1, jpeg(3))
    repeat = image(4, jpeg(1))
    assert pick_images([repeat, a, b, c], 1, NOTHING_SENT) == (repeat,)
    assert pick_images([repeat, a, b, c], 2, NOTHING_SENT) == (repeat, b)
    assert pick_images([a, b, c], 0, NOTHING_SENT) == ()


def test_an_image_a_recent_call_sent_is_not_sent_again_nor_replaced_by_an_older_one() -> None:
    a, b = image(2, jpeg(1)), image(1, jpeg(2))
    sent = NOTHING_SENT.with_sent([a])
    assert pick_images([a, b], 1, sent) == ()
    assert pick_images([a, b], 2, sent) == (b,)
    newer = image(3, jpeg(9))
    assert pick_images([newer, a, b], 1, sent) == (newer,)


def test_the_memory_of_sent_images_keeps_the_newest() -> None:
    sent = NOTHING_SENT
    for n in range(RECENT_SENT + 5):
        sent = sent.with_sent([image(n, jpeg(n))])
    assert len(sent.digests) == RECENT_SENT
    assert image(0, jpeg(0)).digest not in sent
    assert image(99, jpeg(RECENT_SENT + 4)).digest in sent
    assert sent.with_sent([]) is sent


def test_image_data_is_taken_out_of_a_text() -> None:
    data = base64.b64encode(jpeg(4, size=400)).decode()
    said = f"HTTP 400: could not read data:image/jpeg;base64,{data} (and {data[:200]})"
    assert without_image_data(said) == "HTTP 400: could not read [image data] (and [image data])"
    kept = "sha 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef at line 12"
    assert without_image_data(kept) == kept
