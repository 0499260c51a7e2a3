"""The first-run tour: the shipped capture session, its replayer and ``python run.py --demo``."""

from __future__ import annotations

import contextlib
import itertools
import signal
import subprocess
import threading
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from actors.tree import Relay
from config.command_line import load_settings
from config.settings import Settings
from tests.support import harness
from tests.support.harness import ROOT, free_port
from tests.support.observe import LogSink, wait_until
from tests.support.posts import assert_session_accepted
from tests.support.relay import base_url
from tests.support.run_relay import spawn_relay
from transport.agent.fake_llm import STAND_IN_MARKER, STAND_IN_MODEL
from transport.demo import prepare_demo
from transport.demo.replay import (
    DEMO_SESSION,
    Replayer,
    SessionError,
    load_session,
    parse_session,
)
from transport.registry import FEATURES

# -- the session file --------------------------------------------------------------------------


def test_every_line_of_the_shipped_session_is_a_request_the_relay_accepts() -> None:
    assert_session_accepted(DEMO_SESSION)


def test_the_shipped_session_tells_five_minutes_with_repeats_and_quiet_spells() -> None:
    events = load_session()
    assert 240 <= events[-1].at <= 360
    gaps = [b.at - a.at for a, b in itertools.pairwise(events)]
    assert sum(gap >= 30 for gap in gaps) >= 2, "quiet spells"
    senses = [e.body for e in events if e.path == "/sense"]
    feeds = [e.body["text"] for e in events if e.path == "/feed"]
    apps = {s["meta"]["app"] for s in senses}
    assert {"Code", "Terminal", "Google Chrome", "Slack"} <= apps
    ocr_repeats = sum(
        a["ocr"] == b["ocr"] and a["ocr"] != "" for a, b in itertools.pairwise(senses)
    )
    assert ocr_repeats >= 3
    assert len(feeds) > len(set(feeds)), "the same transcript twice"
    assert any(s["type"] == "context" and s["ocr"] == "" for s in senses)
    assert events[0].at == 0 and events[2].at <= 1.5, "something to show within seconds"


def test_the_session_ships_with_the_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "transport*" in config["tool"]["setuptools"]["packages"]["find"]["include"]
    assert DEMO_SESSION.name in config["tool"]["setuptools"]["package-data"]["transport.demo"]
    assert DEMO_SESSION.parent == ROOT / "transport" / "demo"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            '{"at": 0, "path": "/feed", "body": {}}\n{"at": 1, "path": "/x", "body": {}}',
            "s:2: path",
        ),
        (
            '{"at": 2, "path": "/feed", "body": {}}\n\n{"at": 1, "path": "/feed", "body": {}}',
            "s:3: at 1",
        ),
        ('{"at": "soon", "path": "/feed", "body": {}}', "s:1: at must"),
        ('{"at": 0, "path": "/feed", "body": []}', "s:1: body"),
        ("[1]", "s:1: not a JSON object"),
        ("{nope", "s:1: not JSON"),
        ("\n", "s: no requests"),
    ],
)
def test_a_bad_session_line_is_named(text: str, error: str) -> None:
    with pytest.raises(SessionError, match=error):
        parse_session(text, "s")


# -- the replayer ------------------------------------------------------------------------------


@pytest.fixture
def relay(make_relay: Callable[..., Relay]) -> Relay:
    """A relay with the agent off (no key): ingestion only."""
    return make_relay()


def test_the_replayer_posts_the_session_in_order_with_current_timestamps(
    relay: Relay, logs: LogSink
) -> None:
    events = load_session()[:12]
    started_ms = time.time() * 1000
    with Replayer(base_url(relay), events, speed=200.0) as replayer:
        assert replayer.wait(10), "the replay did not end"
    assert replayer.failures == 0 and replayer.passes == 1
    assert [(p.at, p.path, p.status) for p in replayer.posted] == [
        (e.at, e.path, 200) for e in events
    ]
    sense = httpx.get(f"{base_url(relay)}/sense?after=0", timeout=5).json()["events"]
    sent = [e.body for e in events if e.path == "/sense"]
    assert [s["ocr"] for s in sense] == [b["ocr"] for b in sent]
    assert [s["observation"] for s in sense] == [b["observation"] for b in sent]
    assert all(started_ms <= s["ts"] <= time.time() * 1000 for s in sense)
    feed = httpx.get(f"{base_url(relay)}/feed?after=0", timeout=5).json()["messages"]
    assert [m["text"] for m in feed] == [e.body["text"] for e in events if e.path == "/feed"]
    assert logs.named("demo.replay_stopped")[0]["posted"] == len(events)
    assert all(e.get("actor") == "demo" for e in logs.events if e["event"].startswith("demo."))


def test_stop_ends_a_looping_replay_at_once(relay: Relay) -> None:
    replayer = Replayer(base_url(relay), load_session(), loop=True).start()
    wait_until(lambda: replayer.posted, what="the first post")
    started = time.monotonic()
    replayer.stop(timeout_s=5)
    assert replayer.wait(0), "the replay thread is still running"
    assert time.monotonic() - started < 5
    assert replayer.passes == 0 and len(replayer.posted) < len(load_session())


def test_the_replayer_counts_a_relay_that_is_not_there() -> None:
    events = load_session()[:2]
    replayer = Replayer(f"http://127.0.0.1:{free_port()}", events, speed=100.0).start()
    assert replayer.wait(15)
    assert replayer.failures == 2 and [p.status for p in replayer.posted] == [0, 0]


# -- python run.py --demo ----------------------------------------------------------------------


def test_prepare_demo_points_the_agent_at_a_live_stand_in_and_cleans_up(
    logs: LogSink, tmp_path: Path
) -> None:
    settings = Settings(port=0)
    with contextlib.ExitStack() as cleanup:
        demo = prepare_demo(settings, FEATURES, ["--demo"], {}, cleanup)
        agent = demo.agent
        assert (agent.model, agent.fallback_models) == (STAND_IN_MODEL, ())
        assert agent.api_key and agent.active
        data_dir = Path(demo.data_dir)
        assert data_dir.is_dir() and data_dir != Path(settings.data_dir)
        body = {"model": agent.model, "messages": [{"role": "user", "content": "Active app: X"}]}
        answer = httpx.post(f"{agent.base_url}/chat/completions", json=body, timeout=5).json()
        assert answer["model"] == STAND_IN_MODEL
    assert not data_dir.exists(), "the temporary data directory outlived the demo"
    with pytest.raises(httpx.ConnectError):
        httpx.post(f"{agent.base_url}/chat/completions", json=body, timeout=5)
    warning = logs.named("demo.stand_in_llm")[0]
    assert warning["level"] == "warning" and "stand-in" in warning["note"]

    for argv, environ in (
        (["--demo", "--data-dir", str(tmp_path / "a")], {}),
        (["--demo", "--data", str(tmp_path / "b")], {}),
        (["--demo"], {"RELAY_DATA_DIR": str(tmp_path / "c")}),
    ):
        with contextlib.ExitStack() as cleanup:
            given = load_settings(argv, environ, isatty=False)
            kept = Path(prepare_demo(given, FEATURES, argv, environ, cleanup).data_dir)
            kept.mkdir()
        assert kept.is_dir() and kept.parent == tmp_path, f"{argv} {environ}: not kept"


class LogLines:
    """The JSON log lines of a subprocess, read on a thread as they come."""

    def __init__(self, stream: Any) -> None:
        self.lines: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.raw.append(line)
            with contextlib.suppress(orjson.JSONDecodeError):
                self.lines.append(orjson.loads(line))

    def named(self, name: str) -> list[dict[str, Any]]:
        return [line for line in list(self.lines) if line.get("event") == name]

    def join(self, timeout_s: float) -> None:
        self._thread.join(timeout_s)


@pytest.mark.slow
def test_run_py_demo_shows_huds_and_digests_within_seconds_and_stops_clean() -> None:
    # a shorter debounce than the default 3 s keeps the test short; the session does the rest
    env = harness.relay_env(LOG_FORMAT="json", AGENT_DEBOUNCE_MS="300")
    port = free_port()
    proc = spawn_relay(port, env, "--demo", stderr=subprocess.STDOUT)
    logs = LogLines(proc.stdout)
    try:
        started = wait_until(lambda: logs.named("relay.started"), 15, "relay.started")[0]
        url = started["url"]
        assert url == f"http://127.0.0.1:{port}"
        digest = wait_until(
            lambda: httpx.get(f"{url}/agent/digest", timeout=2).json()["digest"],
            15,
            "a digest",
        )
        assert digest["digest"].startswith(STAND_IN_MARKER)
        assert digest["currentApp"] == "VS Code"
        last = httpx.get(f"{url}/agent/last", timeout=2).json()["result"]
        assert last["model"] == STAND_IN_MODEL and last["parsedOk"]
        feed = wait_until(
            lambda: [
                m["text"] for m in httpx.get(f"{url}/feed?after=0", timeout=2).json()["messages"]
            ],
            5,
            "the feed",
        )
        assert f"[🧠] {last['hud']}" in feed
        wait_until(
            lambda: any(
                "openrouter]" in m["text"]
                for m in httpx.get(f"{url}/feed?after=0", timeout=2).json()["messages"]
            ),
            5,
            "the session's first transcript",
        )
        wait_until(
            lambda: any(t.get("hud") == last["hud"] for t in logs.named("tick")),
            5,
            "the tick log line with the hud",
        )
        warning = logs.named("demo.stand_in_llm")[0]
        assert warning["level"] == "warning" and "stand-in" in warning["note"]
        data_dir = Path(logs.named("demo.data_dir")[0]["data_dir"])
        assert logs.named("demo.data_dir")[0]["removed_at_exit"] is True
        assert data_dir.is_dir()
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        logs.join(5)
    assert proc.returncode == 0, b"".join(logs.raw[-20:]).decode()
    assert logs.named("demo.replay_stopped") and logs.named("relay.stopped")
    assert not data_dir.exists(), "the demo's temporary data directory was left behind"
