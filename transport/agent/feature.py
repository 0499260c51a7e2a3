"""The agent feature, as the HTTP shell takes it: the digest, the entries, the context and the
configuration, ``/health.agent``, its metric families and its checks, and its part of
``--demo``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from msgspec import Meta

from actors.agent.core.config_update import AgentConfigUpdate
from actors.core.bodies import CONFIG_BODY_LIMIT
from actors.core.shapes import AgentEntry
from actors.kernel.search_index import MAX_QUERY_CHARS, MAX_TERMS
from transport.agent.answers import ConfigAnswer
from transport.agent.demo import agent_demo
from transport.agent.doctor import agent_checks
from transport.agent.handler import (
    HISTORY_DEFAULT,
    HISTORY_MAX,
    RANGE_DEFAULT,
    RANGE_MAX,
    get_agent_stream,
    get_config,
    get_context,
    get_digest,
    get_history,
    get_last,
    post_config,
)
from transport.agent.health import AgentHealth, read_agent
from transport.host.feature import HealthSection, Parts
from transport.host.route import INGEST_ERRORS, Param, Route, ok
from transport.shell.answers import ContextAnswer, DigestAnswer, HistoryAnswer, LastAnswer
from transport.streams.fanout import LONG_POLL_MAX_S

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from transport.shell.bridge import Asker
    from transport.shell.state import Peers


async def agent_metrics(peers: Peers, ask: Asker) -> tuple[Metric, ...]:
    """The agent's families, asked of the digest store and the ticker
    (:mod:`transport.agent.exposition`, imported at the first scrape with prometheus-client)."""
    from transport.agent.exposition import agent_families  # noqa: PLC0415

    return await agent_families(peers, ask)


AGENT = Parts(
    "agent",
    (
        Route(
            "GET",
            "/agent/digest",
            get_digest,
            "The latest digest; with `wait`, a long-poll for a newer one",
            ok(DigestAnswer, "The digest, `null` before the first tick."),
            ("BadRequest", "PollUnavailable"),
            "Without `wait` it answers at once. With `wait` it answers as soon as the latest "
            "digest's `id` is above `after`, at once if it already is, or after `wait` seconds "
            "with the current digest (maybe `null`, or not newer). To follow the digest, pass the "
            "last `digest.id` you got as `after`.",
            params=(
                Param(
                    "wait",
                    Annotated[float, Meta(gt=0, le=LONG_POLL_MAX_S)],
                    "Seconds to wait for a newer digest (long-poll).",
                ),
                Param("after", int, "With `wait`: the id to wait past (0 by default)."),
            ),
        ),
        Route(
            "GET",
            "/agent/stream",
            get_agent_stream,
            "Agent entries as ticks record them (SSE)",
            stream=("agent", AgentEntry),
        ),
        Route(
            "GET",
            "/agent/last",
            get_last,
            "The newest agent entry",
            ok(LastAnswer, "The entry, `null` before the first tick."),
            ("Unavailable",),
        ),
        Route(
            "GET",
            "/agent/history",
            get_history,
            "Agent entries, newest first; or a time range or a search, page by page",
            ok(HistoryAnswer, "The entries."),
            ("BadRequest", "Unavailable"),
            "Without `since`, `until`, `before` and `q`: the newest entries (`limit` "
            f"{HISTORY_DEFAULT} by default, {HISTORY_MAX} at most). With any of them: entries "
            "with `since <= ts < until` and `id < before` from the whole retention (`limit` "
            f"{RANGE_DEFAULT} by default, {RANGE_MAX} at most), matching `q` if given, and "
            "`next`, the `before` of the next page.",
            params=(
                Param("limit", Annotated[int, Meta(ge=1)], "Larger is capped."),
                Param("since", int, "Epoch ms, inclusive."),
                Param("until", int, "Epoch ms, exclusive; not before `since`."),
                Param("before", int, "Entries with an id below this one (a `next`)."),
                Param(
                    "q",
                    Annotated[str, Meta(max_length=MAX_QUERY_CHARS)],
                    "Search: only entries whose digest or hud has every word of `q`, each matched "
                    "as a word's beginning (`deploy` finds deployment), accents and case ignored; "
                    f"at most {MAX_TERMS} words. Words are plain text, never query syntax. 503 "
                    "when this relay's SQLite has no full-text search (FTS5).",
                ),
            ),
        ),
        Route(
            "GET",
            "/agent/context",
            get_context,
            "The context window the next tick would see",
            ok(ContextAnswer, "The window."),
            ("Unavailable",),
        ),
        Route(
            "GET",
            "/agent/config",
            get_config,
            "The agent's runtime configuration",
            ok(ConfigAnswer, "The configuration."),
            ("Unavailable",),
        ),
        Route(
            "POST",
            "/agent/config",
            post_config,
            "Change the agent's configuration at runtime",
            ok(ConfigAnswer, "The configuration applied."),
            INGEST_ERRORS,
            body=AgentConfigUpdate,
            body_limit=CONFIG_BODY_LIMIT,
        ),
    ),
    health=(HealthSection("agent", AgentHealth, read_agent),),
    families=agent_metrics,
    checks=agent_checks,
    set_by=(("situation", "RELAY_SITUATION_FILE"),),
    demo=agent_demo,
)
