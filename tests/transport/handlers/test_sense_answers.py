"""``GET /sense`` serves every event of the ring with its image data, as it did when the event
was new, byte for byte: the image bytes the ring no longer holds in memory are read back from
the ``sense`` table, without asking the sense buffer."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import httpx
import orjson
import pytest

from actors.ingest.sense_buffer import SENSE_RING
from actors.kernel.base import RelayActor
from actors.tree import Relay
from tests.support.posts import screen_with_images
from tests.support.relay import assert_error, client_for, relay_settings

POSTS = SENSE_RING + 7
"""Enough for the ring to have dropped a few events, with many more images than it keeps."""

_HEAD, _TAIL = b'{"events":[', b'],"epoch":'


def one_event(answer: httpx.Response) -> bytes:
    """The bytes of the single event of a ``GET /sense`` answer."""
    assert answer.status_code == 200
    body = answer.content
    assert body.startswith(_HEAD) and body.count(_TAIL) == 1
    return body[len(_HEAD) : body.index(_TAIL)]


def answer_of(events: list[bytes], epoch: str) -> bytes:
    """A ``GET /sense`` answer holding ``events`` as they were served."""
    return _HEAD + b",".join(events) + _TAIL + orjson.dumps(epoch) + b"}"


def post_screens(client: httpx.Client) -> tuple[dict[int, bytes], dict[int, bytes]]:
    """Post :data:`POSTS` screen events; each one's bytes as ``GET /sense`` served it when it
    was the newest (in full, and ``meta_only``)."""
    full: dict[int, bytes] = {}
    meta: dict[int, bytes] = {}
    for n in range(1, POSTS + 1):
        posted = client.post("/sense", json=screen_with_images(n)).json()["id"]
        assert posted == n
        full[n] = one_event(client.get("/sense", params={"after": n - 1}))
        meta[n] = one_event(client.get("/sense", params={"after": n - 1, "meta_only": "true"}))
        assert orjson.loads(full[n])["ocr"] == f"screen {n}"
    return full, meta


def reads(client: httpx.Client) -> dict[str, bytes]:
    """``GET /sense`` answers (full and ``meta_only``, from the start and from later)."""
    out = {}
    for after in (0, 10, POSTS - 2):
        for meta_only in ("false", "true"):
            answer = client.get("/sense", params={"after": after, "meta_only": meta_only})
            assert answer.status_code == 200
            out[f"{after} {meta_only}"] = answer.content
    return out


def expected_reads(full: dict[int, bytes], meta: dict[int, bytes], epoch: str) -> dict[str, bytes]:
    ring = range(POSTS - SENSE_RING + 1, POSTS + 1)
    out = {}
    for after in (0, 10, POSTS - 2):
        ids = [n for n in ring if n > after]
        out[f"{after} false"] = answer_of([full[n] for n in ids], epoch)
        out[f"{after} true"] = answer_of([meta[n] for n in ids], epoch)
    return out


def test_get_sense_answers_every_event_as_it_was_served_when_new(
    relay: Relay, client: httpx.Client
) -> None:
    full, meta = post_screens(client)
    expected = expected_reads(full, meta, relay.storage.epoch)
    assert reads(client) == expected
    assert reads(client) == expected  # asked again (the answers of this ring may be reused)


def test_get_sense_answers_the_same_after_a_restart(
    make_relay: Callable[..., Relay], tmp_path: Path
) -> None:
    settings = replace(relay_settings(), data_dir=str(tmp_path / "data"))
    relay = make_relay(settings)
    with client_for(relay) as client:
        full, meta = post_screens(client)
        before = reads(client)
    assert before == expected_reads(full, meta, relay.storage.epoch)
    assert relay.stop()

    again = make_relay(settings)
    with client_for(again) as client:
        assert reads(client) == before


def test_get_sense_serves_the_images_while_the_sense_buffer_hangs(
    relay: Relay, client: httpx.Client
) -> None:
    full, meta = post_screens(client)
    relay.handles["sense"].tell(RelayActor.inject_fault, "hang", 3.0)
    # the actor timeout is 1 s: an answer that asked the buffer would be a 503
    assert reads(client) == expected_reads(full, meta, relay.storage.epoch)


def test_an_answer_leaves_out_the_oldest_events_whose_rows_a_prune_deleted(
    relay: Relay, client: httpx.Client
) -> None:
    """Rows are pruned only once a newer ring no longer holds them; an answer built from the
    ring before that is then the ring less its oldest events, those no longer on disk."""
    full, meta = post_screens(client)
    first = POSTS - SENSE_RING + 1
    db = sqlite3.connect(relay.storage.stores["sense"].path)
    with db:  # as a prune committed after the snapshot the answer reads was published
        db.execute("DELETE FROM sense WHERE id < ?", (first + 3,))
    db.close()
    epoch = relay.storage.epoch
    ring = range(first, POSTS + 1)
    for _ in range(2):
        answer = client.get("/sense")
        assert answer.content == answer_of([full[n] for n in ring if n >= first + 3], epoch)
        meta_only = client.get("/sense", params={"meta_only": "true"})
        assert meta_only.content == answer_of([meta[n] for n in ring], epoch)


@pytest.mark.slow
def test_an_unreadable_sense_file_is_a_503_and_reads_resume_once_it_is_back(
    relay: Relay, client: httpx.Client
) -> None:
    full, meta = post_screens(client)
    path = Path(relay.storage.stores["sense"].path)
    moved = path.with_name("moved-away.db")
    path.rename(moved)  # the buffer keeps its open file; a new connection finds none
    try:
        assert_error(client.get("/sense"), 503, "could not be read")
        assert client.get("/sense", params={"meta_only": "true"}).status_code == 200
        assert client.get("/sense", params={"after": POSTS - 1}).status_code == 200
    finally:
        moved.rename(path)
    assert reads(client) == expected_reads(full, meta, relay.storage.epoch)
