"""A fake OpenAI-compatible chat-completions server, with fault modes: for tests, drills and
the first-run tour.

Run it beside the relay to rehearse LLM outages without a key or a network::

    python3 -m transport.agent.fake_llm --port 18900
    AGENT_BASE_URL=http://127.0.0.1:18900/v1 OPENROUTER_API_KEY=unused python3 run.py
    curl -X POST localhost:18900/_mode -d '{"mode": "hang"}'

It is a real HTTP server (aiohttp on its own thread), so the relay's LLM path runs exactly
as in production: sockets, timeouts, status codes, bodies. Its answers are canned (a fixed
hud and digest) in every mode but ``summarise``, which is a stand-in, not a model: it reads
the relay's prompt and fills a hud and a digest from its lines by rules of thumb, labelled
as such (the completion's ``model`` is ``stand-in/heuristic`` and the digest begins with
``(stand-in, no LLM)``). ``python3 run.py --demo`` runs it. Modes:

``ok``        a chat completion whose content is ``{"hud": ..., "digest": ...}``
``summarise`` the same shape, hud and digest made from the prompt by
              :func:`transport.agent.stand_in.summarise`
``fenced``    the same JSON inside a Markdown code fence
``plain``     plain text content, not JSON
``nonjson``   HTTP 200 with a body that is not JSON at all
``empty``     a chat completion with empty content
``http401``   HTTP 401, as for a wrong key
``http500``   HTTP 500 with an error body
``http429``   HTTP 429 with ``Retry-After`` (``retry_after``, 1 s by default)
``slow``      waits ``delay_s`` seconds, then answers like ``ok``
``hang``      never answers (until the server stops)
``refuse_schema_400``  HTTP 400 to a ``json_schema`` ``response_format``; otherwise ``ok``
``refuse_schema_500``  HTTP 500 naming ``response_format`` to a ``json_schema`` one, as
              llama-cpp-python's server answers; otherwise ``ok``
``json_object_only``   HTTP 400 to ``json_schema``; JSON to ``json_object``; prose (like
              ``plain``) to a request without ``response_format``
``ignore_format``      prose (like ``plain``) whatever ``response_format`` asks
``echo``      prose that repeats the prompt's first lines (our instructions), as a small
              model does
``fragments`` pieces of JSON that do not make an object
``no_vision`` HTTP 400 to a request carrying images, as a server without vision answers;
              otherwise ``ok``
``bad_image`` HTTP 400 to a request carrying images, its error quoting the first image's
              URL back (bytes and all); otherwise ``ok``
``no_parts_500``  HTTP 500 ``can only concatenate str (not "list") to str`` to a request whose
              message is a list of content parts (one with images), and HTTP 500 naming
              ``response_format`` to a ``json_schema`` one, as llama-cpp-python's server
              answers; otherwise ``ok``
``bad_model_400`` HTTP 400 ``<model> is not a valid model ID``, as OpenRouter answers a model
              name it does not know
``no_model_404``  HTTP 404 ``no such model: <model>``
``too_long_400``  HTTP 400 ``prompt is too long``, as for a prompt over the model's context

A request's user message may be a string or a list of content parts (``text``, then
``image_url`` parts: a call with screen images); :attr:`SeenRequest.images` lists the image
URLs a request carried, and each image counts :attr:`FakeLLM.image_tokens` prompt tokens.

``latency_s`` (``--latency-s``; 0 by default) delays every answer but ``hang``'s by that
long, to stand in for a real model's latency (``slow`` waits ``delay_s`` on top).

Switch modes from a test with ``fake.mode = "hang"`` or over HTTP with
``POST /_mode {"mode": "hang", "delay_s": 2}`` (add ``"model": "x/y"`` to set the mode of
one model only, and ``"times": N`` to have it last N requests naming that model, after which
the model answers as the server's mode again); ``GET /_mode`` shows the modes and the number
of requests so far.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass, field
from typing import Any, ClassVar

import orjson
from aiohttp import web

from config.logs import configure_logging
from transport.agent.stand_in import STAND_IN_MARKER, STAND_IN_MODEL, summarise
from transport.demo.background import ModeServer

__all__ = ["MODES", "STAND_IN_MARKER", "STAND_IN_MODEL", "FakeLLM", "SeenRequest", "main"]


MODES = (
    "ok",
    "summarise",
    "fenced",
    "plain",
    "nonjson",
    "empty",
    "http401",
    "http500",
    "http429",
    "slow",
    "hang",
    "refuse_schema_400",
    "refuse_schema_500",
    "json_object_only",
    "ignore_format",
    "echo",
    "fragments",
    "no_vision",
    "bad_image",
    "no_parts_500",
    "bad_model_400",
    "no_model_404",
    "too_long_400",
)
_FORMAT_MODES = {
    "refuse_schema_400": 400,
    "refuse_schema_500": 500,
    "json_object_only": 400,
    "no_parts_500": 500,
}
"""The modes that refuse a ``json_schema`` ``response_format``, with the status."""
_FAILING_MODES = {
    "bad_model_400": (400, "{model} is not a valid model ID"),
    "no_model_404": (404, "no such model: {model}"),
    "too_long_400": (400, "prompt is too long: 9000 tokens > 8192 maximum"),
}
"""The modes that fail every request, with the status and the error's message."""


@dataclass
class SeenRequest:
    """One request the fake received."""

    body: dict[str, Any]
    authorization: str

    @property
    def prompt(self) -> str:
        """The text of its user message (its text parts joined)."""
        return _prompt_of(self.body)

    @property
    def images(self) -> list[str]:
        """The ``image_url`` URLs of its user message, in order."""
        return _images_of(self.body)


def _user_content(body: dict[str, Any]) -> Any:
    """The content of the last user message of a chat-completions body, or ``None``."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return message.get("content")
    return None


def _parts(body: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    content = _user_content(body)
    if not isinstance(content, list):
        return []
    return [p for p in content if isinstance(p, dict) and p.get("type") == kind]


def _prompt_of(body: dict[str, Any]) -> str:
    """The text of the last user message (its text parts joined), or empty."""
    content = _user_content(body)
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) for p in _parts(body, "text"))


def _images_of(body: dict[str, Any]) -> list[str]:
    urls = (p.get("image_url") for p in _parts(body, "image_url"))
    return [str(u.get("url")) for u in urls if isinstance(u, dict)]


def _format_of(body: dict[str, Any]) -> str | None:
    """The ``type`` of the request's ``response_format``, if it asked for one."""
    asked = body.get("response_format")
    kind = asked.get("type") if isinstance(asked, dict) else None
    return kind if isinstance(kind, str) else None


@dataclass
class FakeLLM(ModeServer):
    """Start with ``with FakeLLM() as llm:``; point the relay at ``llm.base_url``."""

    hud: str = "Editing ticker.py in VS Code"
    digest: str = "User is in VS Code editing actors/agent/ticker.py."
    tokens_in: int = 310
    tokens_out: int = 85
    image_tokens: int = 258
    """Prompt tokens each image of a request counts (what a provider bills a small one)."""
    retry_after: str = "1"
    latency_s: float = 0.0
    """Every answer but ``hang``'s waits this long first (a real model's latency)."""
    cost: float | None = None
    """When set, answers carry it as ``usage.cost`` (USD), as OpenRouter's do."""
    model_modes: dict[str, str] = field(default_factory=dict)
    """A mode per model name, overriding ``mode`` for requests naming that model."""
    model_times: dict[str, int] = field(default_factory=dict)
    """How many more requests naming a model its mode lasts; at 0 it answers as ``mode``
    again. A model not here keeps its mode."""
    requests: list[SeenRequest] = field(default_factory=list)
    served: list[str] = field(default_factory=list)
    """The models ``GET /v1/models`` lists (a local server's listing)."""
    name: ClassVar[str] = "fake-llm"
    modes: ClassVar[tuple[str, ...]] = MODES

    @property
    def calls(self) -> int:
        """Chat-completion requests received so far."""
        return len(self.requests)

    def _content(self, mode: str, body: dict[str, Any]) -> str:
        if mode == "summarise":
            hud, digest = summarise(_prompt_of(body))
            return orjson.dumps({"hud": hud, "digest": digest}).decode()
        answer = orjson.dumps({"hud": self.hud, "digest": self.digest}).decode()
        if mode == "fenced":
            return f"```json\n{answer}\n```"
        asked = _format_of(body)
        if mode in ("plain", "ignore_format") or (mode == "json_object_only" and asked is None):
            return f"The user is busy. {self.hud}. {self.digest}"
        if mode == "echo":
            intro = _prompt_of(body).split("\n\n", 1)[0].replace("\n", " ")
            return f"{intro} I will watch the screen and the audio and answer as JSON."
        if mode == "fragments":
            return '", "digest": "}, {"hud": [":", "'

        if mode == "empty":
            return ""
        return answer

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            body = {"unparseable": raw.decode("utf-8", "replace")}
        self.requests.append(SeenRequest(body, request.headers.get("Authorization", "")))
        mode = self._mode_of(str(body.get("model")))
        if mode == "hang":
            assert self._stopping is not None
            await self._stopping.wait()
            return web.Response(status=503)
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        if mode == "slow":
            await asyncio.sleep(self.delay_s)
        refused = self._refusal(mode, body)
        if refused is not None:
            return refused
        images = _images_of(body)
        if mode == "http500":
            return web.json_response({"error": {"message": "upstream exploded"}}, status=500)
        if mode == "http401":
            return web.json_response({"error": {"message": "no auth credentials"}}, status=401)
        if mode == "http429":
            return web.json_response(
                {"error": {"message": "rate limited"}},
                status=429,
                headers={"Retry-After": self.retry_after},
            )
        if mode == "nonjson":
            return web.Response(text="<html>Bad gateway</html>", content_type="text/html")
        content = self._content(mode, body)
        pictures = len(images) * self.image_tokens
        usage: dict[str, float] = {
            "prompt_tokens": self.tokens_in + pictures,
            "completion_tokens": self.tokens_out,
        }
        model = body.get("model", "fake")
        if mode == "summarise":
            # about four characters a token, the usual rule of thumb
            usage = {
                "prompt_tokens": len(_prompt_of(body)) // 4 + pictures,
                "completion_tokens": len(content) // 4,
            }
            model = STAND_IN_MODEL
        if self.cost is not None:
            usage["cost"] = self.cost
        return web.json_response(
            {
                "id": f"fake-{len(self.requests)}",
                "object": "chat.completion",
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": usage,
            }
        )

    def _mode_of(self, model: str) -> str:
        """The mode that answers this request naming ``model`` (one request of its count)."""
        mode = self.model_modes.get(model)
        if mode is None:
            return self.mode
        left = self.model_times.get(model)
        if left is not None:
            if left <= 1:
                del self.model_modes[model], self.model_times[model]
            else:
                self.model_times[model] = left - 1
        return mode

    def _refusal(self, mode: str, body: dict[str, Any]) -> web.Response | None:
        """The error answer of a mode that refuses what ``body`` asks (its format, its images,
        its content parts, its model or its length), or ``None``."""
        status, message = 0, ""
        images = _images_of(body)
        if mode in _FORMAT_MODES and _format_of(body) == "json_schema":
            status = _FORMAT_MODES[mode]
            message = "response_format: json_schema is not supported; use json_object"
        elif mode in _FAILING_MODES:
            status, message = _FAILING_MODES[mode]
            message = message.format(model=body.get("model"))
        elif mode == "no_vision" and images:
            status, message = 400, "this model does not support image input"
        elif mode == "bad_image" and images:
            status, message = 400, f"could not read the image at {images[0]}"
        elif mode == "no_parts_500" and isinstance(_user_content(body), list):
            status, message = 500, 'can only concatenate str (not "list") to str'
        if not status:
            return None
        return web.json_response({"error": {"message": message}}, status=status)

    def _state(self) -> dict[str, Any]:
        return {
            **super()._state(),
            "modelModes": self.model_modes,
            "modelTimes": self.model_times,
            "latencyS": self.latency_s,
        }

    def _switch(self, body: dict[str, Any]) -> dict[str, Any]:
        """A ``model`` in the body sets the mode of that model only."""
        model = body.get("model")
        if not (isinstance(model, str) and model):
            return super()._switch(body)
        self.model_modes[model] = body["mode"]
        times = body.get("times")
        if isinstance(times, int) and not isinstance(times, bool) and times > 0:
            self.model_times[model] = times
            return {"mode": body["mode"], "model": model, "times": times}
        self.model_times.pop(model, None)
        return {"mode": body["mode"], "model": model}

    async def _models(self, _request: web.Request) -> web.Response:
        data = [{"id": model, "object": "model"} for model in self.served]
        return web.json_response({"object": "list", "data": data})

    def routes(self, app: web.Application) -> None:
        """Chat completions, the model listing, and the mode switch."""
        app.router.add_post("/v1/chat/completions", self._completions)
        app.router.add_get("/v1/models", self._models)
        self.mode_routes(app)


def main(argv: list[str] | None = None) -> int:
    """Serve until SIGINT or SIGTERM."""
    parser = argparse.ArgumentParser(
        prog="python3 -m transport.agent.fake_llm",
        description="A fake OpenAI-compatible LLM with fault modes, to rehearse outages. "
        "Point the relay at it with AGENT_BASE_URL=http://HOST:PORT/v1.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=18900)
    parser.add_argument("--mode", choices=MODES, default="ok")
    parser.add_argument("--delay-s", type=float, default=1.0, help="the delay of mode slow")
    parser.add_argument(
        "--latency-s", type=float, default=0.0, help="a delay before every answer (default 0)"
    )
    args = parser.parse_args(argv)
    configure_logging("console" if sys.stderr.isatty() else "json", "info")
    fake = FakeLLM(
        mode=args.mode,
        delay_s=args.delay_s,
        latency_s=args.latency_s,
        port=args.port,
        host=args.host,
    )
    return fake.serve_until_signalled("fake_llm.listening", mode=fake.mode, modes=list(MODES))


if __name__ == "__main__":
    sys.exit(main())
