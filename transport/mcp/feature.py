"""The MCP feature, as the HTTP shell takes it: nothing to serve, a process of its own
(``sinain-relay mcp``) that is a client of the relay's HTTP API; its check, whether the
``mcp`` extra is installed."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

from actors.common.check import Check
from config.settings import Settings
from transport.host.feature import Parts


def mcp_check() -> Check:
    """Whether the ``mcp`` extra is installed (``sinain-relay mcp`` needs it; the relay not).

    An optional extra: without it the check is skipped, an info line at start, never a
    warning; ``sinain-relay mcp`` itself fails naming the install command."""
    if importlib.util.find_spec("mcp") is None:
        return Check(
            "mcp",
            "skip",
            "the mcp extra is not installed (optional): only sinain-relay mcp needs it",
            "pip install 'sinain-relay[mcp]'",
        )
    return Check("mcp", "ok", "the mcp extra is installed: sinain-relay mcp can run")


def mcp_checks(settings: Settings, *, started: bool) -> Iterator[Check]:  # noqa: ARG001
    """The extra's check, the same for the command and a started relay."""
    yield mcp_check()


MCP = Parts("mcp", checks=mcp_checks)
