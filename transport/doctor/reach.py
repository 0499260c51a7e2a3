"""What a started relay checks of its services without asking them anything: that the host of
``AGENT_BASE_URL`` (and of ``STT_BASE_URL``) resolves and its port accepts a TCP connection.

A connection that is opened and closed carries no request: no key, no prompt, no audio, and
nothing a provider bills. The verdict on the model itself comes with the first call the agent
makes for a tick with news (the LLM caller logs it as ``doctor.check llm``); the
``sinain-relay doctor`` command, which a user runs on purpose, sends its one tiny request.

Through an HTTP proxy (``HTTPS_PROXY`` and the like, as the relay's client honours them) the
proxy is what must accept the connection.
"""

from __future__ import annotations

import socket
import urllib.request
from urllib.parse import urlsplit

from actors.agent.core.verdicts import ChatProbe, Check, chat_verdict, unreachable_reason
from actors.core.errors import LLMConnectionError
from config.agent_settings import AgentSettings
from config.origins import DEFAULT_PORTS
from config.secrets import shown_url
from transport.features import AudioConfig, SttConnectionError, stt_remedy

CONNECT_TIMEOUT_S = 5.0
"""The longest a connection may take to be accepted (a service's own timeout if shorter)."""


def _endpoint(url: str) -> tuple[str, int] | None:
    """The host and port a request to ``url`` connects to first: the proxy's, when one is
    set for it in the environment; ``None`` for what is no ``http(s)`` URL with a host."""
    parts = urlsplit(url)
    host = parts.hostname
    if host is None or parts.scheme not in DEFAULT_PORTS:
        return None
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        return _endpoint(proxy if "://" in proxy else f"http://{proxy}")
    return host, parts.port or DEFAULT_PORTS[parts.scheme]


def unreachable(url: str, timeout_s: float) -> str | None:
    """Why no TCP connection to ``url``'s host can be opened within ``timeout_s`` (``the host
    name does not resolve``, ``connection refused`` ...); ``None`` when one was, and closed
    at once."""
    endpoint = _endpoint(url)
    if endpoint is None:
        return "not an http(s) URL with a host"
    try:
        with socket.create_connection(endpoint, timeout=timeout_s):
            return None
    except OSError as exc:
        return unreachable_reason(exc)


def llm_server_check(config: AgentSettings) -> Check:
    """``llm server``: whether ``AGENT_BASE_URL``'s host accepts a connection; a model on this
    machine (``AGENT_API=local``) has none, and is loaded at the first call."""
    if config.local:
        return Check(
            "llm server",
            "skip",
            f"{config.model} runs on this machine (AGENT_API=local): loaded at the first call",
            "sinain-relay doctor loads it and asks it one short question",
        )
    url = shown_url(config.base_url)
    why = unreachable(config.base_url, min(CONNECT_TIMEOUT_S, config.timeout_ms / 1000))
    if why is None:
        return Check(
            "llm server",
            "ok",
            f"{url} accepts connections (nothing is asked: the first call gives the llm check)",
        )
    failed = ChatProbe(config.model, 0, None, error=LLMConnectionError(why), unreachable=why)
    return chat_verdict("llm server", failed, config)


def speech_server_check(audio: AudioConfig) -> Check | None:
    """``speech server``: whether ``STT_BASE_URL``'s host accepts a connection; ``None`` when
    no speech service is used (local recognition, or no key)."""
    if audio.local or not audio.can_transcribe:
        return None
    url = shown_url(audio.stt_base_url)
    why = unreachable(audio.stt_base_url, min(CONNECT_TIMEOUT_S, audio.stt_timeout_ms / 1000))
    if why is None:
        return Check("speech server", "ok", f"{url} accepts connections (nothing is sent)")
    remedy = stt_remedy(SttConnectionError(why))
    advice = remedy.advice if remedy else ""
    return Check("speech server", "FAIL", f"{url} is unreachable ({why})", advice)
