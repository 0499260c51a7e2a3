"""The HTTP transport: its actor, the aiohttp app, its routes, streams, auth and metrics.

The modules directly here are the composition root (the server, the app, the route table,
the document); nothing below imports them (the doctor, above, runs the registry's checks).
Below them: each feature over HTTP and the shell's own routes (``handlers/``), the host a
feature plugs into (``host/``), the shell's shared parts (``shell/``) and the streams
(``streams/``).

Import what you need from the module that defines it (``transport.frontend.HttpFrontend``,
``transport.exposure``, ...): this package imports nothing, so that a module of it (the MCP
server's, a pure one) loads no more than it needs.
"""
