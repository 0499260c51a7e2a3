"""Capture: one source's audio, from the process that makes it to the utterances in it.

One actor per source (``system``, ``mic``), owning one process at a time:

* the process is the plan of the source value (:mod:`actors.audio.core.sources`): the user's
  ``command:``, ffmpeg reading a device or a file, started by
  :func:`actors.kernel.processes.spawn` so it never outlives the relay; a ``file:`` that is a
  16 kHz mono 16-bit WAV is read here instead, paced at its own speed (real time, not the
  injected clock: the pace is the recording's);
* a reader thread per run reads its stdout in chunks of about 100 ms and feeds them to the
  run's :class:`~actors.audio.core.utterance.Detector`; every utterance goes to ``on_utterance``
  from that thread (it must only hand it on: a ``tell``). The actor's mailbox gets a few
  messages per run (first audio, the end, the stall watch), never the audio, so it cannot
  fill and reading never waits for the actor. A second thread keeps the last stderr line;
* a process that exits, crashes or stalls (no audio for ``stall_s``) is restarted after a
  backoff that doubles up to a bound and starts again from the first step after a healthy
  run. A source that gives no audio at all for ``attempts`` runs in a row (a program or a
  device that is not there, a permission refused) is ``failed``, said in one log line; the
  overlay's ``toggle_audio`` (:meth:`Capture.resume`) tries again;
* :meth:`Capture.pause`, :meth:`Capture.resume` and :meth:`Capture.switch` are the overlay's
  ``toggle_audio`` and ``switch_device``; :meth:`Capture.snapshot` is what ``/health`` shows;
* while the privacy controls pause capture (``POST /privacy``) the source is ``paused`` and
  no process runs; when the pause ends, capture starts again unless the overlay paused it.

Audio is never written to disk or logged: it lives in the reader and the detector until it
is handed on as an utterance.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

import pykka

from actors.audio.capture_runs import (
    Ended,
    FirstAudio,
    Launch,
    PrivacyChanged,
    Refresh,
    Run,
    Watch,
    close_run,
    open_run,
)
from actors.audio.core.capture_records import (
    SETTING_NAMES,
    CaptureSettings,
    CaptureState,
    CaptureStatus,
    DetectorFactory,
    UtteranceSink,
)
from actors.audio.core.sources import SourcePlan, parse_source
from actors.audio.core.utterance import BYTES_PER_MS
from actors.audio.reader import Meter, PcmReader, keep_last_line
from actors.common.backoff import backoff
from actors.core.error_text import safe_error_text
from actors.core.exclusion import PrivacyState
from actors.core.shapes import AudioSource
from actors.kernel import processes
from actors.kernel.base import RelayActor, Reporter
from actors.kernel.clock import Cancel, Clock
from actors.kernel.published import Published, tell_on_publish

REFRESH_S = 1.0
"""How often the published status's counters are brought up to date while nothing changes."""


class Capture(RelayActor):
    """Captures one source, restarting its process as needed."""

    name = "capture"

    def __init__(
        self,
        *,
        source: AudioSource,
        value: str,
        detector: DetectorFactory,
        on_utterance: UtteranceSink,
        clock: Clock,
        settings: CaptureSettings | None = None,
        alt: str = "",
        published: Published[CaptureStatus] | None = None,
        privacy: Published[PrivacyState] | None = None,
        report: Reporter | None = None,
    ) -> None:
        """``alt``: the value :meth:`swap` turns to and back from; ``published``: where
        :meth:`snapshot` is published after each change, and every :data:`REFRESH_S` while it
        captures (``/health`` reads it there, never waiting for this actor); a new
        incarnation counts on from what it holds.

        Raises :class:`~actors.audio.core.sources.SourceError` for a bad ``value`` or ``alt``.
        """
        super().__init__(report=report)
        self._source: AudioSource = source
        self._plan = parse_source(value, SETTING_NAMES[source])
        self._values = (self._plan, parse_source(alt, "AUDIO_ALT_SOURCE") if alt else None)
        self._on_alt = False
        self._published = published
        self._detector = detector
        self._on_utterance = on_utterance
        self._clock = clock
        self._settings = settings or CaptureSettings()
        self._meter = Meter(clock.monotonic())
        self._state: CaptureState = "starting"
        self._run: Run | None = None
        self._runs = 0
        self._generation = 0
        """Raised by pause, resume and switch: a restart scheduled before is void."""
        self._cancel: Cancel | None = None
        self._step = 0
        """Restarts in a row since the last healthy run (the backoff's exponent)."""
        self._quiet = 0
        """Runs in a row that gave no audio."""
        self._restarts = 0
        self._last_exit: int | None = None
        self._privacy = privacy
        self._held = False
        """Paused by the privacy controls; :attr:`_wanted`: capture again when they end."""
        self._wanted = True
        self._unsubscribe: Callable[[], None] = lambda: None
        if published is not None:
            self._count_on(published.value)

    def _count_on(self, last: CaptureStatus) -> None:
        """Start the counters from what this source's previous incarnation published, so that
        within a process they only grow (``/metrics`` shows them as counters)."""
        captured_ms = round(last.captured_s * 1000)
        self._meter.captured_bytes = captured_ms * BYTES_PER_MS
        self._meter.speech_ms = round(last.speech_share * captured_ms)
        self._meter.utterances = last.utterances
        self._restarts = last.restarts

    # -- lifecycle ---------------------------------------------------------------------------

    def started(self) -> None:
        """Bind the source to the log lines and start the first run."""
        self._log = self._log.bind(source=self._source)
        if self._privacy is not None:
            self._unsubscribe = tell_on_publish(self._privacy, self.actor_ref, PrivacyChanged())
            self._held = self._privacy_paused()
        if self._held:
            self._state = "paused"
        else:
            self._launch()
        self._refresh()

    def stopped(self) -> None:
        """End the process and the readers."""
        self._unsubscribe()
        self._void_restart()
        self._halt()
        self._state = "stopped"
        self._publish()

    def abandoned(self) -> None:
        """Hung, and given up on by the supervisor: end the run's process now (from the
        supervisor's thread), so that the next incarnation's is the only one capturing the
        source. The run's reader sees the end and stops handing on."""
        run = self._run
        if run is None:
            return
        run.halt.set()
        if run.process is not None:
            processes.end(run.process, self._settings.stop_grace_s)

    def on_receive(self, message: Any) -> Any:
        """The readers' and the timers' messages; the status is published after each."""
        try:
            return self._receive(message)
        finally:
            self._publish()

    def _receive(self, message: Any) -> Any:
        if isinstance(message, Refresh):
            self._refresh()
            return None
        if isinstance(message, FirstAudio):
            if self._run is not None and self._run.id == message.run:
                self._run.heard = True
                self._state = "running"
                self._log.info("capture.running", kind=self._plan.kind, runs=self._runs)
            return None
        if isinstance(message, Ended):
            self._ended(message)
            return None
        if isinstance(message, Launch):
            if message.generation == self._generation and self._state == "backoff":
                self._restarts += 1
                self._launch()
            return None
        if isinstance(message, Watch):
            self._watch(message.run)
            return None
        if isinstance(message, PrivacyChanged):
            self._hold(self._privacy_paused())
            return None
        return super().on_receive(message)

    # -- the overlay's commands and /health ----------------------------------------------------

    def snapshot(self) -> CaptureStatus:
        """The capture's state and counters."""
        run = self._run
        with self._meter.lock:
            captured_ms = self._meter.captured_bytes // BYTES_PER_MS
            return CaptureStatus(
                source=self._source,
                kind=self._plan.kind,
                state=self._state,
                pid=run.process.pid if run is not None and run.process is not None else None,
                restarts=self._restarts,
                last_exit=self._last_exit,
                last_stderr=self._meter.last_stderr,
                captured_s=captured_ms / 1000,
                speech_share=min(self._meter.speech_ms / captured_ms, 1.0) if captured_ms else 0.0,
                utterances=self._meter.utterances,
                alt=self._on_alt,
            )

    def pause(self) -> CaptureStatus:
        """Stop capturing until :meth:`resume` (the overlay's ``toggle_audio``)."""
        self._wanted = False
        if self._state != "paused":
            self._void_restart()
            self._halt()
            self._state = "paused"
            self._log.info("capture.paused")
        return self.snapshot()

    def resume(self) -> CaptureStatus:
        """Capture again after :meth:`pause`, a failure or a file's end; running, no change.
        While the privacy controls pause capture, it starts when they end."""
        if self._held:
            self._wanted = True
            return self.snapshot()
        if self._state in ("paused", "failed", "stopped"):
            self._void_restart()
            self._step = self._quiet = 0
            self._launch()
        return self.snapshot()

    def _privacy_paused(self) -> bool:
        privacy = self._privacy
        return privacy is not None and privacy.value.paused_at(self._clock.now_ms())

    def _hold(self, held: bool) -> None:
        """Stop capturing while the privacy controls pause it; capture again after, unless
        the overlay paused it before or meanwhile."""
        if held == self._held:
            return
        if held:
            wanted = self._state != "paused"
            self.pause()
            self._held, self._wanted = True, wanted
        else:
            self._held = False
            if self._wanted:
                self.resume()

    def switch(self, value: str) -> CaptureStatus:
        """Capture ``value`` instead (the overlay's ``switch_device``); paused stays paused.

        Raises:
            SourceError: ``value`` is not a source (nothing changes).
        """
        return self._switch_to(parse_source(value, SETTING_NAMES[self._source]))

    def _switch_to(self, plan: SourcePlan) -> CaptureStatus:
        self._void_restart()
        self._halt()
        self._plan = plan
        self._step = self._quiet = 0
        self._log.info("capture.switched", kind=plan.kind)
        if self._state != "paused":
            self._launch()
        return self.snapshot()

    def swap(self) -> CaptureStatus:
        """Capture the alternative value (``AUDIO_ALT_SOURCE``), or back from it: the
        overlay's ``switch_device``. Without one, nothing changes."""
        plan = self._values[0 if self._on_alt else 1]
        if plan is None:
            return self.snapshot()
        self._on_alt = not self._on_alt
        return self._switch_to(plan)

    def _refresh(self) -> None:
        """Publish the counters now and again in :data:`REFRESH_S`."""
        self._publish()
        self._clock.call_later(REFRESH_S, lambda: self._tell(Refresh()))

    def _publish(self) -> None:
        if self._published is not None:
            self._published.publish(self.snapshot())

    # -- runs ----------------------------------------------------------------------------------

    def _launch(self) -> None:
        """Start a run of the current plan; a start that fails is a run that ended at once."""
        self._runs += 1
        plan, now = self._plan, self._clock.monotonic()
        run = Run(id=self._runs, plan=plan, detector=self._detector(), started=now)
        self._run, self._state = run, "starting"
        with self._meter.lock:
            self._meter.last_audio = now
        try:
            reader = open_run(run, self._settings.file_speed)
        except OSError as exc:
            self._meter.note_stderr(safe_error_text(exc))
            self._ended(Ended(run.id, None))
            return
        threads = [threading.Thread(target=self._pump, args=(run, reader), daemon=True)]
        if run.process is not None:
            assert run.process.stderr is not None  # spawn pipes it
            threads.append(
                threading.Thread(
                    target=keep_last_line, args=(run.process.stderr, self._meter), daemon=True
                )
            )
            self._clock.call_later(self._settings.stall_s, lambda: self._tell(Watch(run.id)))
        run.threads = tuple(threads)
        for thread in reversed(threads):  # the reader last: at the end it joins the others
            thread.name = f"capture-{self._source}-{thread.name}"
            thread.start()
        self._log.debug("capture.launched", kind=plan.kind, run=run.id, pid=self.snapshot().pid)

    def _halt(self) -> None:
        """End the current run on purpose: its end is not a failure, nothing restarts."""
        run, self._run = self._run, None
        if run is None:
            return
        run.halt.set()
        if run.process is not None:
            self._last_exit = processes.end(run.process, self._settings.stop_grace_s)
        for thread in run.threads:
            thread.join(timeout=self._settings.stop_grace_s + 1)

    def _ended(self, message: Ended) -> None:
        """A run ended by itself: finished (a file), to be restarted, or failed."""
        run = self._run
        if run is None or run.id != message.run:
            return  # a run halted on purpose
        self._run = None
        for thread in run.threads:
            thread.join(timeout=1.0)
        self._last_exit = message.code
        ran_s = self._clock.monotonic() - run.started
        if run.plan.kind == "file" and message.code == 0 and message.error is None:
            self._state = "stopped"
            self._log.info("capture.file_ended", runs=self._runs)
            return
        if run.heard and ran_s >= self._settings.healthy_s:
            self._step = 0
        self._quiet = 0 if run.heard else self._quiet + 1
        if self._quiet >= self._settings.attempts:
            self._fail()
            return
        delay = backoff(self._step, base=self._settings.backoff_s, cap=self._settings.max_backoff_s)
        self._step += 1
        self._state = "backoff"
        generation = self._generation
        self._cancel = self._clock.call_later(delay, lambda: self._tell(Launch(generation)))
        # a warning per run that gave audio (at most one a backoff); quiet tries: debug only
        (self._log.warning if run.heard else self._log.debug)(
            "capture.exited",
            kind=run.plan.kind,
            exit=message.code,
            error=message.error,
            stderr=self._meter.last_stderr,
            ran_s=round(ran_s, 3),
            restart_in_s=delay,
        )

    def _fail(self) -> None:
        self._state = "failed"
        program = self._plan.argv[0] if self._plan.kind != "file" else self._plan.target
        self._log.error(
            "capture.failed",
            kind=self._plan.kind,
            program=program,
            attempts=self._quiet,
            exit=self._last_exit,
            stderr=self._meter.last_stderr,
            why="no audio from the source in any of the attempts",
            fix="check that the program (ffmpeg for the device and file forms) is installed, "
            "the device exists and the relay may record; the overlay's toggle_audio retries",
        )

    def _watch(self, run_id: int) -> None:
        """A running process that has given no audio for ``stall_s`` is ended (and restarted)."""
        run = self._run
        if run is None or run.id != run_id or run.process is None:
            return
        with self._meter.lock:
            idle = self._clock.monotonic() - self._meter.last_audio
        left = self._settings.stall_s - idle
        if left > 0:
            self._clock.call_later(left, lambda: self._tell(Watch(run_id)))
            return
        self._log.debug("capture.stalled", kind=run.plan.kind, idle_s=round(idle, 3))
        processes.end(run.process, self._settings.stop_grace_s)  # its reader reports the end

    def _void_restart(self) -> None:
        self._generation += 1
        if self._cancel is not None:
            self._cancel()
            self._cancel = None

    def _tell(self, message: object) -> None:
        """Tell this actor ``message`` from a reader or a timer; nobody to tell once it stopped."""
        with contextlib.suppress(pykka.ActorDeadError):
            self.actor_ref.tell(message)

    # -- the reader thread ----------------------------------------------------------------------

    def _pump(self, run: Run, read: Callable[[int], bytes]) -> None:
        """The run's reader thread: read to the end, then report the end and the exit code."""
        reader = PcmReader(
            detector=run.detector,
            meter=self._meter,
            clock=self._clock,
            chunk_ms=self._settings.chunk_ms,
            hand_on=self._on_utterance,
            log=self._log.bind(run=run.id),
        )
        error = reader.run(read, run.halt, lambda: self._tell(FirstAudio(run.id)))
        code = close_run(run, broken=error is not None, grace_s=self._settings.stop_grace_s)
        self._tell(Ended(run.id, code, error))
