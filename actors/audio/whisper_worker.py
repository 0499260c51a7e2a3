"""The local recogniser's worker: a process of its own that loads a Whisper model once and
turns utterances into text, one at a time.

It runs apart from the relay so that the model's memory and its CPU-bound decoding (held by
CTranslate2's threads, not the relay's interpreter) never stall ingestion or the agent, and so
that a crash or a hang of the model costs a new process, not the relay. It speaks with its
owner (:class:`~actors.audio.local_stt.LocalRecogniser`) over one pipe:

- it sends ``("ready", None)`` once the model is loaded, or ``("failed", why)`` and ends;
- for each ``(job_id, pcm)`` it is sent (16 kHz mono 16-bit samples), it answers
  ``("text", (job_id, text, decode_s))``, or ``("error", (job_id, why, decode_s))`` when
  the model raised on that utterance (the worker goes on with the next);
- an end of the pipe ends it.
"""

from __future__ import annotations

import os
import sys
import time
from multiprocessing.connection import Connection
from typing import Any

SAMPLE_RATE = 16_000
FULL_SCALE = 32_768.0


def serve(conn: Connection, model: str, language: str, threads: int) -> None:
    """Load ``model`` (a name faster-whisper knows, or the absolute path of a directory
    holding a converted model) and answer utterances until the pipe ends."""
    try:
        import numpy as np  # noqa: PLC0415 - the worker's own imports, never the relay's
        from faster_whisper import WhisperModel  # noqa: PLC0415
        from faster_whisper.utils import download_model  # noqa: PLC0415

        # A name is fetched (or found in the cache) as a name: given it, faster-whisper would
        # first load a folder of that name in the working directory, if there were one.
        directory = model if os.path.isabs(model) else download_model(model)
        whisper = WhisperModel(directory, device="cpu", compute_type="int8", cpu_threads=threads)
    except Exception as exc:  # keeps the answer: the owner says why the model did not load
        conn.send(("failed", f"{type(exc).__name__}: {exc}"[:500]))
        return
    conn.send(("ready", None))
    while True:
        try:
            job_id, pcm = conn.recv()
        except (EOFError, OSError):
            return
        started = time.perf_counter()
        try:
            audio = np.frombuffer(pcm, dtype=np.int16).astype(np.float32) / FULL_SCALE
            segments: Any
            segments, _info = whisper.transcribe(
                audio,
                language=language or None,
                beam_size=1,
                vad_filter=False,
                condition_on_previous_text=False,
            )
            text = " ".join(segment.text.strip() for segment in segments).strip()
        except Exception as exc:  # keeps the worker: one utterance fails, not the model
            why = f"{type(exc).__name__}: {exc}"[:300]
            conn.send(("error", (job_id, why, time.perf_counter() - started)))
            continue
        conn.send(("text", (job_id, text, time.perf_counter() - started)))


if __name__ == "__main__":  # as python -m actors.audio.whisper_worker FD MODEL LANGUAGE THREADS
    fd, model_name, spoken, threads = sys.argv[1:]
    serve(Connection(int(fd)), model_name, spoken, int(threads))
