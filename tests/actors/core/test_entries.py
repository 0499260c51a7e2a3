"""Agent entries: what ``/agent/digest`` and the other agent answers make of a stored row."""

from __future__ import annotations

import msgspec
import orjson

from actors.agent.core.entries import AgentRecord

OLDER_ROW = orjson.dumps(
    {
        "id": 7,
        "ts": 1_769_901_200_000,
        "hud": "Editing idle.py in VS Code",
        "digest": "The user edits idle.py.",
        "context": {
            "currentApp": "VS Code",
            "appHistory": ["Terminal", "VS Code"],
            "audioCount": 1,
            "screenCount": 3,
        },
        "pushed": True,
        "model": "google/gemini-2.5-flash-lite",
        "latencyMs": 812,
        "tokensIn": 310,
        "tokensOut": 85,
        "parsedOk": True,
        "appHistory": [["Terminal", 1_769_901_100_000], ["VS Code", 1_769_901_150_000]],
    }
)
"""A row as a relay stored it before entries recorded their freshness: the digest's new
fields come from what every row holds, so no schema change is needed to serve them."""


def test_a_stored_row_of_an_older_relay_gives_the_digest_with_hud_context_and_model() -> None:
    entry = AgentRecord.from_record(OLDER_ROW)

    assert msgspec.to_builtins(entry.digest_shape()) == {
        "id": 7,
        "ts": 1_769_901_200_000,
        "digest": "The user edits idle.py.",
        "currentApp": "VS Code",
        "appHistory": [
            {"app": "Terminal", "ts": 1_769_901_100_000},
            {"app": "VS Code", "ts": 1_769_901_150_000},
        ],
        "latencyMs": 812,
        "hud": "Editing idle.py in VS Code",
        "context": {
            "currentApp": "VS Code",
            "appHistory": ["Terminal", "VS Code"],
            "audioCount": 1,
            "screenCount": 3,
        },
        "model": "google/gemini-2.5-flash-lite",
    }
    assert entry.to_json()["context"] == msgspec.to_builtins(entry.digest_shape())["context"]
    assert entry.to_json()["contextFreshnessMs"] is None


def test_a_stored_row_whose_switch_times_have_a_fraction_gives_whole_milliseconds() -> None:
    row = orjson.loads(OLDER_ROW)
    row["appHistory"] = [["Terminal", 1_769_901_100_000.4], ["VS Code", 1e300]]
    entry = AgentRecord.from_record(orjson.dumps(row))

    times = [switch.ts for switch in entry.digest_shape().app_history]

    assert times == [1_769_901_100_000, 2**53 - 1]
    assert all(type(ts) is int for ts in times)
