"""The console, as the HTTP shell takes it: its page at ``/`` and the files the page loads."""

from __future__ import annotations

from transport.console.page import get_root, get_script, get_styles
from transport.host.feature import Parts
from transport.host.route import Answer, Handler, Route
from transport.shell.openapi_schemas import HTML


def _console_file(path: str, handler: Handler, summary: str, media: str) -> Route:
    """One of the console's files: no token needed, it holds no data."""
    return Route(
        "GET", path, handler, summary, {"200": Answer(str, summary + ".", media)}, public=True
    )


CONSOLE = Parts(
    "console",
    (
        Route(
            "GET",
            "/",
            get_root,
            "The console page; upgraded, the overlay's WebSocket",
            {
                "200": Answer(
                    str, "Not an upgrade request: the console page (no token needed).", HTML
                )
            },
            description="The page holds no data: it asks the API for everything, with the token "
            "when one is set. It and its files answer with a Content-Security-Policy that allows "
            "only this origin and no framing.",
            socket=True,
        ),
        _console_file("/console.js", get_script, "The console's script", "text/javascript"),
        _console_file("/console.css", get_styles, "The console's style sheet", "text/css"),
    ),
)
