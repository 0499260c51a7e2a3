"""The answers' structs: the document says every answer object is closed, and the figures
their descriptions give are the relay's."""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

from actors.core.records import FeedRecord
from actors.core.shapes import encode
from actors.ingest.feed_buffer import FEED_RING
from actors.ingest.sense_buffer import SENSE_RING
from transport.openapi import EXTENDS, REQUEST_TYPES, openapi_document
from transport.overlay.messages import INBOUND_TYPES
from transport.overlay.socket import REPLAY_ITEMS
from transport.shell.answers import FeedList, OverlayFeed, SenseList, encoded

OPEN_ANSWERS = {*EXTENDS, "OpenAPIDocument"}
"""Answers that carry more than they name: a sense event as its client sent it, and the
document itself."""


def _objects(schema: Any) -> list[dict[str, Any]]:
    """Every object schema in ``schema`` with properties of its own, at any depth."""
    if isinstance(schema, list):
        return [found for item in schema for found in _objects(item)]
    if not isinstance(schema, dict):
        return []
    own = [schema] if "properties" in schema else []
    return own + [found for value in schema.values() for found in _objects(value)]


def test_every_answer_object_in_the_document_is_closed() -> None:
    schemas = openapi_document()["components"]["schemas"]
    _, bodies = msgspec.json.schema_components(
        (*REQUEST_TYPES, *INBOUND_TYPES)
    )  # what clients send
    answers = {n: s for n, s in schemas.items() if n not in bodies}
    assert {"Health", "AgentHealth", "FeedItem", "Digest", "ContextWindow"} <= set(answers)
    for name, schema in answers.items():
        if name in OPEN_ANSWERS:
            continue
        for found in _objects(schema):
            assert found.get("additionalProperties") is False, (name, found)


def test_the_ring_sizes_the_descriptions_give_are_the_rings() -> None:
    assert f"newest {FEED_RING}." in (FeedList.__doc__ or "")
    assert f"newest {SENSE_RING}." in (SenseList.__doc__ or "")
    assert f"newest {REPLAY_ITEMS}," in (OverlayFeed.__doc__ or "")


def test_a_list_body_is_built_from_the_items_bytes_as_they_are() -> None:
    items = [FeedRecord(id=n, text=f"t{n}", priority="normal", ts=n) for n in (1, 2)]
    body = encode(FeedList(messages=encoded(i.json for i in items), epoch='ep"och'))
    assert body == b'{"messages":[' + b",".join(i.json for i in items) + b'],"epoch":"ep\\"och"}'
    assert orjson.loads(body) == {"messages": [i.to_json() for i in items], "epoch": 'ep"och'}
    empty = encode(SenseList(events=encoded([]), epoch="e"))
    assert orjson.loads(empty) == {"events": [], "epoch": "e"}
