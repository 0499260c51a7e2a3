"""httpx, imported without its command-line client. The actors that talk HTTP (the LLM
caller, the transcriber and its speech client) take httpx from here
(``from actors.common.http_library import httpx``), so the relay's process never loads the client.

httpx imports its optional command-line client at import time, which imports click and
pygments whenever they are installed (pytest brings pygments, Flask brings click): megabytes
resident that the relay never uses. A ``None`` in ``sys.modules`` makes that one import fail
at once, and httpx then behaves as it does without them. It must be there before httpx is
first imported, hence before the import below.
"""

import sys

sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None blocks an import

import httpx

__all__ = ["httpx"]
