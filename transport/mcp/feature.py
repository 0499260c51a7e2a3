"""The MCP feature, as the HTTP shell takes it: nothing to serve, a process of its own
(``sinain-relay mcp``) that is a client of the relay's HTTP API."""

from __future__ import annotations

from transport.host.feature import Parts

MCP = Parts("mcp")
