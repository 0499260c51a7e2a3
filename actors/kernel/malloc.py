"""The C allocator's settings for a long-running relay (glibc only; elsewhere nothing happens)."""

from __future__ import annotations

import ctypes
import ctypes.util

TRIM_INTERVAL_S = 10.0
"""How often the main thread hands the allocator's free pages back to the system."""


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.malloc_trim  # noqa: B018 (glibc only: musl and macOS have none)
        libc.mallopt  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()
_M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter for the number of malloc arenas."""
ARENAS = 2
"""glibc makes up to 8 arenas per core for a process's threads; the relay's dozen threads
allocate little, and two arenas keep the resident size lower."""


def limit_malloc_arenas() -> None:
    """Cap glibc's malloc arenas at :data:`ARENAS`; call before any thread starts."""
    if _LIBC is not None:
        _LIBC.mallopt(_M_ARENA_MAX, ARENAS)


def release_free_memory() -> None:
    """Give the C allocator's free pages back to the system (glibc's ``malloc_trim``).

    A burst of requests leaves freed memory in glibc's arenas, counted in the resident size
    for as long as the process lives. The main thread, idle otherwise, calls it every
    :data:`TRIM_INTERVAL_S`; a call is short and releases the GIL.
    """
    if _LIBC is not None:
        _LIBC.malloc_trim(0)
