"""``GET /health``'s answer as one typed struct, made from the features it serves: the
relay's own fields around every feature's sections (``messages``, ``agent``, ``audio``...),
each of its feature's type, in the registry's order."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, cast

import msgspec
from msgspec import UNSET, Meta, UnsetType

from actors.core.shapes import Epoch, Shape
from transport.host.feature import Feature
from transport.shell.answers import ActorState, CheckState, Profiling, Storage
from transport.streams.answers import StreamCounts

_HEAD: tuple[tuple[str, Any] | tuple[str, Any, Any], ...] = (
    ("ok", bool),
    (
        "error",
        Annotated[str, Meta(description="On a 503: which actors did not answer.")] | UnsetType,
        UNSET,
    ),
    ("epoch", Epoch),
)
"""Before the features' sections: whether every actor answered, and the store's epoch."""
_TAIL: tuple[tuple[str, Any], ...] = (
    ("actors", dict[str, ActorState]),
    (
        "checks",
        Annotated[
            list[CheckState],
            Meta(
                description="The started relay's checks as they last ran: after the start, "
                "and every minute while one fails; empty before the first round."
            ),
        ],
    ),
    ("storage", Storage),
    ("streams", StreamCounts),
    ("profiling", Profiling),
)
"""After them: every actor's state, the started relay's checks, the storage, the streams and
the clients' reports."""


def health_shape(features: Iterable[Feature]) -> type[Shape]:
    """The struct ``GET /health`` answers with, for ``features``: the relay's fields and each
    feature's sections, in the features' order, as the API document describes them."""
    sections = tuple((s.name, s.shape) for feature in features for s in feature.health)
    return cast(
        "type[Shape]",
        msgspec.defstruct(
            "Health",
            (*_HEAD, *sections, *_TAIL),
            bases=(Shape,),
            module=__name__,
            namespace={
                "__doc__": "Made for each request: it shows every write answered before it "
                "was asked."
            },
            frozen=True,
            kw_only=True,
        ),
    )
