"""What the streams send and count: the gap event, and the clients open per stream.

The OpenAPI document's components are generated from these as from the shell's answers
(:mod:`transport.shell.answers`).
"""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from actors.core.shapes import Shape


class StreamCounts(Shape, frozen=True):
    """Clients open per stream (`overlay`: overlay sockets), and clients dropped for falling
    behind since the transport started."""

    feed: int
    agent: int
    overlay: int
    health: Annotated[int, Meta(description="Health streams (the console's).")] = 0
    long_polls: Annotated[
        int,
        Meta(
            description="Long-polls waiting (`GET /agent/digest` and `/escalation/pending` "
            "with `wait`): they hold slots as streams do."
        ),
    ] = 0
    dropped: int = 0


class StreamGap(Shape, frozen=True):
    """Items after `after` and before `oldest` are gone."""

    after: int
    oldest: int
