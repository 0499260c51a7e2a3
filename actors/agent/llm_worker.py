"""The local model's worker: a process of its own that loads a GGUF chat model once and answers
chat-completions requests, one at a time.

It runs apart from the relay so that the model's memory and its CPU-bound generation (llama.cpp's
threads) never stall ingestion, and so that a crash or a hang of the model costs a new process,
not the relay. It speaks with its owner (:class:`~actors.agent.local_llm.LocalChat`) over one
pipe:

- it sends ``("ready", name)`` once the model is loaded (``name``: the model's own, from its
  file), or ``("failed", why)`` and ends;
- for each ``(job_id, body)`` it is sent (an OpenAI chat-completions request body, as the
  relay would post it), it may first send ``("hud", (job_id, text))``, once, as soon as the
  answer's ``hud`` string is written whole (:func:`written_hud`: the answer's schema puts it
  first, and a hud is worth showing while the digest is still being written); then it answers
  ``("answer", (job_id, completion, seconds))``, the
  completion an OpenAI chat-completion object as JSON bytes naming the model asked, or
  ``("error", (job_id, why, seconds))`` when the model raised on that request (the worker goes
  on with the next);
- an end of the pipe ends it.

A JSON ``response_format`` is enforced by llama.cpp's grammar, from the answer's schema: the
answer is JSON of that shape, within its lengths, whatever the model would rather say.
"""

from __future__ import annotations

import re
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import orjson

CONTEXT_TOKENS = 4096
"""The model's context: room for the relay's prompt, whose screen text is budgeted, and an
answer of ``max_tokens``."""


_HUD_WRITTEN = re.compile(r'\A\s*\{\s*"hud"\s*:\s*"((?:[^"\\]|\\.)*)"')


def written_hud(text: str) -> str | None:
    """The ``hud`` of an answer being written, once its string is closed: the answer must
    open with it (``{"hud": "…"``, as the schema orders the fields); ``None`` before that,
    or for an answer of another shape."""
    found = _HUD_WRITTEN.match(text)
    if found is None:
        return None
    try:
        hud = orjson.loads(f'"{found.group(1)}"')
    except orjson.JSONDecodeError:
        return None
    return hud if isinstance(hud, str) else None


def grammar_format(asked: Any, max_tokens: int) -> dict[str, Any] | None:
    """The ``response_format`` llama-cpp-python takes for what the request ``asked``: for a
    JSON level (``json_schema`` or ``json_object``), ``json_object`` with the answer's schema
    bounded to what ``max_tokens`` holds
    (:func:`~actors.agent.core.response_format.bounded_schema`): the grammar holds a string's
    ``maxLength`` too, so an answer is never cut short halfway through its JSON. ``None`` when
    no format was asked."""
    if not isinstance(asked, dict) or asked.get("type") not in ("json_schema", "json_object"):
        return None
    from actors.agent.core.response_format import bounded_schema  # noqa: PLC0415

    return {"type": "json_object", "schema": bounded_schema(max_tokens)}


def _without_amx() -> None:
    """Load weights without llama.cpp's extra buffer types on a CPU with AMX: its AMX matrix
    code faults under some hypervisors (on the first batch of more than one token), and the
    plain CPU path is as fast for the small models the relay runs."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    except OSError:
        return
    if " amx_int8" not in flags and " amx_tile" not in flags:
        return
    import llama_cpp.llama_cpp as native  # noqa: PLC0415 - the worker's own import

    defaults = native.llama_model_default_params

    def plain() -> Any:
        params = defaults()
        params.use_extra_bufts = False
        return params

    native.llama_model_default_params = plain


def serve(conn: Connection, model: str, threads: int) -> None:
    """Load ``model`` (the absolute path of a ``.gguf`` file, or a known model's name: its file
    put together or fetched first, :func:`~actors.agent.local_models.model_file`) and answer
    requests until the pipe ends."""
    try:
        from llama_cpp import Llama  # noqa: PLC0415

        from actors.agent.local_models import model_file  # noqa: PLC0415

        _without_amx()
        path = model_file(model)
        llm = Llama(
            model_path=str(path),
            n_ctx=CONTEXT_TOKENS,
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,
        )
        name = str(llm.metadata.get("general.name") or path.stem)
    except Exception as exc:  # keeps the answer: the owner says why the model did not load
        conn.send(("failed", f"{type(exc).__name__}: {exc}"[:500]))
        return
    conn.send(("ready", name))
    while True:
        try:
            job_id, body = conn.recv()
        except (EOFError, OSError):
            return
        started = time.perf_counter()
        try:
            completion = _answer(llm, conn, job_id, body, name)
        except Exception as exc:  # keeps the worker: one request fails, not the model
            why = f"{type(exc).__name__}: {exc}"[:300]
            conn.send(("error", (job_id, why, time.perf_counter() - started)))
            continue
        conn.send(("answer", (job_id, completion, time.perf_counter() - started)))


def _answer(llm: Any, conn: Connection, job_id: object, body: dict[str, Any], name: str) -> bytes:
    """The chat completion for ``body``, as JSON bytes, written token by token: the hud is sent
    ahead as soon as it is whole. The tokens are counted as they come (a streamed answer
    carries no usage): those written, and the model's context less those for the prompt."""
    max_tokens = int(body.get("max_tokens", 200))
    chunks = llm.create_chat_completion(
        messages=body["messages"],
        max_tokens=max_tokens,
        temperature=float(body.get("temperature", 0.3)),
        response_format=grammar_format(body.get("response_format"), max_tokens),
        stream=True,
    )
    text = ""
    written = 0
    finish: str | None = None
    hud: str | None = None
    for chunk in chunks:
        choice = chunk["choices"][0]
        finish = choice.get("finish_reason") or finish
        piece = choice["delta"].get("content")
        if not piece:
            continue
        text += piece
        written += 1
        if hud is None and '"' in piece and (hud := written_hud(text)) is not None:
            conn.send(("hud", (job_id, hud)))
    return orjson.dumps(
        {
            "object": "chat.completion",
            "model": body.get("model") or name,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": max(0, llm.n_tokens - written),
                "completion_tokens": written,
            },
        }
    )


if __name__ == "__main__":  # run as python -I (processes.python_command) FD MODEL THREADS
    fd, model_file, thread_count = sys.argv[1:]
    serve(Connection(int(fd)), model_file, int(thread_count))
