"""The HTTP transport: its actor, the aiohttp app, its routes, streams, auth and metrics.

Import what you need from the module that defines it (``transport.frontend.HttpFrontend``,
``transport.exposure``, ...): this package imports nothing, so that a module of it (the MCP
server's, a pure one) loads no more than it needs.
"""
