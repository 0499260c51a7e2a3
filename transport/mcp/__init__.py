"""The MCP feature: a server for any agent, a client of the relay's HTTP API, over stdio or
Streamable HTTP."""
