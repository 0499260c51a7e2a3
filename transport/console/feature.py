"""The console, as the HTTP shell takes it: its page at ``/`` and the files the page loads."""

from __future__ import annotations

from transport.console.page import TYPES, get_file, get_root
from transport.host.feature import Parts
from transport.host.route import Answer, Route
from transport.shell.auth import CONSOLE_FILES
from transport.shell.openapi_schemas import HTML

_KINDS = {".js": "script", ".css": "style sheet"}
"""What a file of the page is, by its name's ending."""


def _console_file(name: str) -> Route:
    """One of the console's files: no token needed, it holds no data."""
    suffix = name[name.rindex(".") :]
    summary = f"A {_KINDS[suffix]} of the console page ({name})"
    media = TYPES[suffix].partition(";")[0]
    return Route(
        "GET",
        f"/{name}",
        get_file,
        summary,
        {"200": Answer(str, summary + ".", media)},
        public=True,
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
        *(_console_file(name) for name in CONSOLE_FILES),
    ),
)
