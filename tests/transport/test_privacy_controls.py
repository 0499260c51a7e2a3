"""The privacy controls at runtime (``GET``/``POST /privacy``): the pause, the exclusions and
the retention, over a real relay on the fake clock; durable across a restart, logged without
what they name, shown in ``/health.privacy`` and the overlay's status."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from actors.audio.core.wav import wav_bytes
from actors.kernel.clock import FakeClock
from actors.tree import Relay
from config.command_line import load_settings
from config.privacy import DEFAULT_MATRIX
from config.settings import Settings
from tests.support.actor_calls import tick
from tests.support.observe import LogSink, wait_until
from tests.support.relay import client_for, relay_settings
from tests.transport.overlay_client import OverlayClient, Status
from transport.agent.fake_llm import FakeLLM
from transport.demo.fake_stt import FakeStt

SECRET = "quokka-ledger-7731"
"""Text that must reach no ring, no answer and no file while paused."""
TOKEN = "a-token-long-enough-to-be-a-token"
ENVIRONMENT = {
    "RELAY_EXCLUDE_APPS": "1Password",
    "RELAY_EXCLUDE_TITLES": "(?i)incognito",
    "RELAY_RETENTION_DAYS": "3",
}
STARTING = {
    "paused": False,
    "pausedUntil": None,
    "excludeApps": ["1Password"],
    "excludeTitles": ["(?i)incognito"],
    "retentionDays": 3.0,
    "mode": "default",
    "matrix": msgspec.to_builtins(DEFAULT_MATRIX),
}
DROPPED_PAUSED = {"ok": True, "dropped": "paused"}


def event(app: str = "Terminal", title: str = "zsh", ocr: str = "ls -la") -> dict[str, Any]:
    return {"type": "text", "ts": 1, "ocr": ocr, "meta": {"app": app, "windowTitle": title}}


def settings_of(fake_llm: FakeLLM, data_dir: Path | None = None, **env: str) -> Settings:
    """A test relay's settings with the environment's privacy controls (and ``env``)."""
    read = load_settings([], {**ENVIRONMENT, **env}, isatty=False)
    test = relay_settings(fake_llm)
    return replace(
        test,
        exclude_apps=read.exclude_apps,
        exclude_titles=read.exclude_titles,
        retention_days=read.retention_days,
        token=read.token,
        data_dir=str(data_dir) if data_dir is not None else test.data_dir,
    )


@pytest.fixture
def relay(make_relay: Callable[..., Relay], fake_llm: FakeLLM, tmp_path: Path) -> Relay:
    return make_relay(settings_of(fake_llm, tmp_path / "data"))


def test_get_answers_the_environments_controls(client: httpx.Client) -> None:
    answer = client.get("/privacy")
    assert answer.status_code == 200
    assert answer.json() == STARTING


def test_get_shows_the_privacy_matrix_its_preset_and_cells_made(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM
) -> None:
    env = {"PRIVACY_MODE": "strict", "PRIVACY_TITLES_OPENROUTER": "full"}
    read = load_settings([], env, isatty=False)
    relay = make_relay(replace(relay_settings(fake_llm), privacy=read.privacy))
    with client_for(relay) as client:
        answer = client.get("/privacy").json()
    assert answer["mode"] == "strict"
    assert answer["matrix"]["ocr"] == {
        "localBuffer": "redacted",
        "openrouter": "summary",
        "localLlm": "summary",
        "agentGateway": "none",
    }
    assert answer["matrix"]["titles"]["openrouter"] == "full"  # the cell over the preset
    assert answer["matrix"]["images"]["openrouter"] == "none"


def test_post_changes_any_field_and_answers_as_get(client: httpx.Client, clock: FakeClock) -> None:
    changed = client.post("/privacy", json={"excludeApps": [" Slack ", ""], "retentionDays": 0.5})
    assert changed.status_code == 200
    expected = {**STARTING, "excludeApps": ["Slack"], "retentionDays": 0.5}
    assert changed.json() == expected
    assert client.get("/privacy").json() == expected
    timed = client.post("/privacy", json={"pauseMinutes": 2}).json()
    assert timed == {**expected, "paused": True, "pausedUntil": clock.now_ms() + 120_000}
    again = client.post("/privacy", json={"paused": False, "pauseMinutes": 1}).json()
    assert again["pausedUntil"] == clock.now_ms() + 60_000  # the minutes win
    forever = client.post("/privacy", json={"paused": True}).json()
    assert (forever["paused"], forever["pausedUntil"]) == (True, None)
    assert client.post("/privacy", json={"paused": False}).json() == expected


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"pausd": True}, "pausd"),
        ({"paused": "yes"}, "paused"),
        ({"excludeApps": "Slack"}, "excludeApps"),
        ({"excludeTitles": ["(?i)bank", r"(?<!x)private"]}, "look-around"),
        ({"excludeTitles": [r"\bprivate\b"]}, "excludeTitles"),
        ({"excludeTitles": ["(unclosed"]}, "not a valid regular expression"),
        ({"retentionDays": 0}, "retentionDays"),
        ({"pauseMinutes": -1}, "pauseMinutes"),
        ([], "object"),
    ],
)
def test_a_bad_body_is_a_400_that_changes_nothing(
    client: httpx.Client, body: Any, fragment: str
) -> None:
    answer = client.post("/privacy", json=body)
    assert answer.status_code == 400
    assert answer.json()["ok"] is False
    assert fragment in answer.json()["error"]
    assert client.get("/privacy").json() == STARTING


def test_the_routes_need_the_token_and_a_served_host(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM
) -> None:
    relay = make_relay(settings_of(fake_llm, RELAY_TOKEN=TOKEN))
    with client_for(relay) as client:
        assert client.get("/privacy").status_code == 401
        assert client.post("/privacy", json={"paused": True}).status_code == 401
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        rebound = {**bearer, "Host": "evil.example"}
        assert client.post("/privacy", json={"paused": True}, headers=rebound).status_code == 421
        page = {**bearer, "Sec-Fetch-Site": "cross-site"}
        assert client.post("/privacy", json={"paused": True}, headers=page).status_code == 403
        assert client.get("/privacy", headers=bearer).json() == STARTING
        assert client.post("/privacy", json={"paused": True}, headers=bearer).status_code == 200


def test_while_paused_sense_and_feed_are_dropped_and_kept_nowhere(
    relay: Relay, client: httpx.Client, tmp_path: Path
) -> None:
    assert client.post("/privacy", json={"paused": True}).json()["paused"] is True
    sense = client.post("/sense", json=event(ocr=f"balance {SECRET}"))
    feed = client.post("/feed", json={"text": f"said {SECRET}"})
    assert (sense.status_code, sense.json()) == (200, DROPPED_PAUSED)
    assert (feed.status_code, feed.json()) == (200, DROPPED_PAUSED)
    assert client.post("/feed", json={"text": 3}).status_code == 400  # still checked first
    assert client.get("/sense").json()["events"] == []
    assert client.get("/feed").json()["messages"] == []
    assert SECRET not in client.get("/agent/context").text
    relay.stop(timeout_s=10)  # every commit done, every file closed
    files = [p for p in (tmp_path / "data").rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"feed.db", "sense.db", "privacy.db"}
    assert [p.name for p in files if SECRET.encode() in p.read_bytes()] == []


def test_while_paused_audio_from_another_device_is_neither_transcribed_nor_kept(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, fake_stt: FakeStt
) -> None:
    relay = make_relay(replace(settings_of(fake_llm), audio=relay_settings(None, fake_stt).audio))
    wav = {"Content-Type": "audio/wav"}
    with client_for(relay) as client:
        client.post("/privacy", json={"paused": True}).raise_for_status()
        answer = client.post("/audio", content=wav_bytes(bytes(16_000)), headers=wav)
        assert answer.json() == {"ok": True, "id": None, "text": "", "dropped": "paused"}
        assert fake_stt.calls == 0
        assert client.get("/feed").json()["messages"] == []


def test_after_a_resume_what_arrives_is_kept_again(client: httpx.Client) -> None:
    client.post("/privacy", json={"paused": True}).raise_for_status()
    assert client.post("/sense", json=event()).json() == DROPPED_PAUSED
    client.post("/privacy", json={"paused": False}).raise_for_status()
    assert client.post("/sense", json=event()).json() == {"ok": True, "id": 1}
    assert client.post("/feed", json={"text": "hello"}).json() == {"ok": True, "id": 1}


def test_no_tick_runs_while_paused(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink
) -> None:
    client.post("/sense", json=event(ocr="pytest -q")).raise_for_status()
    client.post("/privacy", json={"paused": True}).raise_for_status()
    assert tick(relay, logs) == "paused"
    assert fake_llm.calls == 0
    client.post("/privacy", json={"paused": False}).raise_for_status()
    assert tick(relay, logs) == "ok"
    assert fake_llm.calls == 1


def test_a_timed_pause_ends_by_itself_on_the_clock(
    client: httpx.Client, clock: FakeClock, logs: LogSink
) -> None:
    until = client.post("/privacy", json={"pauseMinutes": 5}).json()["pausedUntil"]
    assert until == clock.now_ms() + 300_000
    clock.advance(299)
    assert client.get("/privacy").json()["paused"] is True
    assert client.post("/sense", json=event()).json() == DROPPED_PAUSED
    clock.advance(1)
    assert client.get("/privacy").json() == STARTING
    assert client.post("/sense", json=event()).json() == {"ok": True, "id": 1}
    wait_until(lambda: logs.named("privacy.resumed"), 5, "the store to note the pause's end")
    assert client.get("/health").json()["privacy"]["paused"] is False


def test_the_controls_outlive_a_restart_and_win_over_the_environment(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    first = make_relay(settings_of(fake_llm, data))
    change = {"paused": True, "excludeApps": ["Slack"], "excludeTitles": ["bank", "(?i)vault"]}
    with client_for(first) as client:
        set_at_runtime = client.post("/privacy", json=change).json()
    assert first.stop(timeout_s=10)
    # the environment changed meanwhile: what was set at runtime wins, the rest follows it
    again = make_relay(settings_of(fake_llm, data, RELAY_RETENTION_DAYS="9"))
    with client_for(again) as client:
        assert client.get("/privacy").json() == {**set_at_runtime, "retentionDays": 9.0}
        assert client.post("/sense", json=event()).json() == DROPPED_PAUSED


def test_an_exclusion_posted_drops_the_next_sense_event(client: httpx.Client) -> None:
    assert client.post("/sense", json=event("Slack")).json() == {"ok": True, "id": 1}
    client.post("/privacy", json={"excludeApps": ["slack"]}).raise_for_status()
    assert client.post("/sense", json=event("Slack")).json() == {"ok": True, "dropped": "excluded"}
    assert client.post("/sense", json=event("1Password")).json() == {"ok": True, "id": 2}
    titles = {"excludeTitles": ["(?i)bank", " payroll ", ""]}  # an empty one would take all
    assert client.post("/privacy", json=titles).json()["excludeTitles"] == ["(?i)bank", "payroll"]
    assert client.post("/sense", json=event(title="My Bank")).json()["dropped"] == "excluded"
    assert client.post("/sense", json=event(title="payroll.xlsx")).json()["dropped"] == "excluded"
    assert client.post("/sense", json=event(title="incognito")).json() == {"ok": True, "id": 3}


def test_a_change_is_logged_at_info_with_counts_not_names(
    client: httpx.Client, logs: LogSink
) -> None:
    client.post("/privacy", json={"excludeApps": ["Signal"], "excludeTitles": ["(?i)diary"]})
    [line] = logs.named("privacy.changed")
    assert line["level"] == "info"
    assert (line["exclude_apps"], line["exclude_titles"]) == (1, 1)
    assert not [e for e in logs.events if "Signal" in str(e) or "diary" in str(e)]


def test_health_shows_the_controls_and_hides_the_names_without_the_token(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM
) -> None:
    relay = make_relay(settings_of(fake_llm, RELAY_TOKEN=TOKEN))
    with client_for(relay) as client:
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        client.post("/privacy", json={"paused": True}, headers=bearer).raise_for_status()
        private = client.get("/health", headers=bearer).json()["privacy"]
        controls = {k: v for k, v in STARTING.items() if k not in ("mode", "matrix")}
        assert private == {**controls, "paused": True}
        public = client.get("/health").json()["privacy"]
        assert public == {**private, "excludeApps": None, "excludeTitles": None}


def test_the_overlays_status_says_paused(relay: Relay, client: httpx.Client) -> None:
    host, port = relay.address()
    with OverlayClient(host, port) as overlay:
        assert overlay.next_of(Status).message["paused"] is False
        client.post("/privacy", json={"paused": True}).raise_for_status()
        assert overlay.next_of(Status).message["paused"] is True
        client.post("/privacy", json={"paused": False}).raise_for_status()
        assert overlay.next_of(Status).message["paused"] is False


def test_the_controls_hold_while_their_store_crashes_or_hangs(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, tmp_path: Path, logs: LogSink
) -> None:
    relay = make_relay(replace(settings_of(fake_llm, tmp_path / "data"), faults=True))
    with client_for(relay) as client:
        client.post("/privacy", json={"paused": True}).raise_for_status()
        crash = {"actor": "privacy", "kind": "crash"}
        assert client.post("/debug/fault", json=crash).json() == {"ok": True}
        wait_until(
            lambda: client.get("/health").json()["actors"]["privacy"]["restarts"] == 1,
            what="the privacy store's restart",
        )
        assert client.get("/privacy").json()["paused"] is True  # read back from its database
        assert client.post("/sense", json=event(ocr=SECRET)).json() == DROPPED_PAUSED

        hang = {"actor": "privacy", "kind": "hang", "seconds": 600}
        assert client.post("/debug/fault", json=hang).json() == {"ok": True}
        wait_until(lambda: logs.named("actor.fault_injected"), what="the hang to begin")
        # ingestion reads the controls in force, never the store that keeps them
        assert client.post("/sense", json=event(ocr=SECRET)).json() == DROPPED_PAUSED
        assert client.post("/feed", json={"text": SECRET}).json() == DROPPED_PAUSED
        assert client.get("/feed").json()["messages"] == []
