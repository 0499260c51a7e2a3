"""The MCP server's way to the relay: an HTTP client of its API, whose every failure is one
line a user can act on (:class:`RelayCallFailed`), and the relay's address from its settings.

Nothing here imports ``mcp``: the tools (:mod:`transport.mcp.server`) turn a failure into a
tool error.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from config.common.setting_types import decode
from config.options import OPTIONS
from config.settings import Settings

CALL_TIMEOUT_S = 10.0
"""How long one call to the relay may take before the tool reports it as not answering."""
_WILDCARDS = ("0.0.0.0", "::")  # noqa: S104  (addresses to connect to instead, not to bind)


class RelayCallFailed(Exception):
    """A call the relay did not serve: unreachable, not answering, an error status, an answer
    that is not JSON, or a refusal (``"ok": false``). The message is one line."""


@dataclass(frozen=True)
class RelayAddress:
    """Where the relay is, the token it needs (``""`` for none), and the names it serves
    besides loopback (``RELAY_ALLOWED_HOSTS``), which ``--http`` serves too."""

    url: str
    token: str = ""
    allowed_hosts: tuple[str, ...] = ()


def default_address(environ: Mapping[str, str]) -> RelayAddress:
    """The relay's own settings (``RELAY_HOST``, ``RELAY_PORT``, ``RELAY_TOKEN``,
    ``RELAY_ALLOWED_HOSTS``) or their defaults; a relay listening on every address is reached
    on loopback.

    Raises:
        config.common.errors.ConfigError: one of the four is invalid, named as the user wrote it.
    """
    defaults = Settings()
    values: dict[str, Any] = {
        "host": defaults.host,
        "port": defaults.port,
        "token": "",
        "allowed_hosts": defaults.allowed_hosts,
    }
    for option in OPTIONS:
        raw = environ.get(option.env, "")
        if option.attr in values and raw.strip():
            values[option.attr] = decode(option.annotation, option.env, raw)
    return RelayAddress(
        url=url_for(values["host"], values["port"]),
        token=values["token"],
        allowed_hosts=tuple(values["allowed_hosts"]),
    )


def url_for(host: str, port: int) -> str:
    """``http://host:port`` for a listening address (an IPv6 one in brackets)."""
    if host in _WILDCARDS:
        host = "127.0.0.1"
    try:
        if ipaddress.ip_address(host).version == 6:
            host = f"[{host}]"
    except ValueError:
        pass  # a name, used as it is
    return f"http://{host}:{port}"


class RelayClient:
    """Calls to the relay's HTTP API, each answered by its JSON body or :class:`RelayCallFailed`.

    Sends ``Authorization: Bearer <token>`` when it has a token (the relay's ``RELAY_TOKEN``).
    """

    def __init__(
        self, address: RelayAddress, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.url = address.url.rstrip("/")
        headers = {"Authorization": f"Bearer {address.token}"} if address.token else {}
        self._http = httpx.AsyncClient(
            base_url=self.url,
            headers=headers,
            timeout=CALL_TIMEOUT_S,
            transport=transport,
            trust_env=False,  # the relay is named by its URL, never reached through a proxy
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def get(self, path: str, params: Mapping[str, str | int] | None = None) -> Any:
        """``GET path`` with ``params``: the answer's JSON."""
        return await self._call("GET", path, params=dict(params or {}))

    async def post(self, path: str, body: Mapping[str, Any]) -> Any:
        """``POST path`` with a JSON body: the answer's JSON, refused if it says ``"ok": false``."""
        answer = await self._call("POST", path, content=orjson.dumps(body))
        if isinstance(answer, dict) and answer.get("ok") is False:
            raise RelayCallFailed(f"the relay refused POST {path}: {_reason(answer)}")
        return answer

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        what = f"{method} {path}"
        try:
            response = await self._http.request(method, path, **kwargs)
        except httpx.TimeoutException:
            raise RelayCallFailed(
                f"the relay at {self.url} did not answer {what} within {CALL_TIMEOUT_S:g} s"
            ) from None
        except httpx.HTTPError as exc:
            raise RelayCallFailed(
                f"the relay at {self.url} cannot be reached ({type(exc).__name__}): start it, "
                "or name it with --url"
            ) from None
        try:
            answer = orjson.loads(response.content)
        except orjson.JSONDecodeError:
            answer = None
        if response.status_code >= 400:
            reason = _reason(answer) if isinstance(answer, dict) else response.reason_phrase
            hint = _HINTS.get(response.status_code, "")
            raise RelayCallFailed(
                f"the relay answered {response.status_code} to {what}: {reason}{hint}"
            )
        if answer is None and response.content.strip() != b"null":
            raise RelayCallFailed(f"the relay's answer to {what} is not JSON")
        return answer


_HINTS = {
    401: " (set RELAY_TOKEN to the relay's token in this server's environment)",
    404: " (this relay does not serve it: an older version?)",
}


def _reason(answer: dict[str, Any]) -> str:
    """The relay's own error text, on one line."""
    return " ".join(str(answer.get("error") or "no reason given").split())
