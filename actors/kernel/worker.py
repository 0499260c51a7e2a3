"""A model's worker process: one of our modules, run isolated in a process of its own, that
loads a model once and answers one request at a time over a socket pair.

The local speech recogniser and the local chat model each own one. A worker starts at the
first request (or when its owner asks, to load the model early), tells once whether its model
loaded, and then answers each message it is sent. One that dies (a crash, the out-of-memory
killer), during a request or between two, or does not answer within the owner's deadline is
ended and counted as a restart; the next request starts another. Either way the relay's other
work goes on: a worker shares nothing with it but a socket.

The protocol's first message is the worker's: ``("ready", detail)`` once its model is loaded,
or ``("failed", why)`` before it ends. Every later message is the owner's to read.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Collection, Mapping
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Literal

from actors.kernel.processes import PYTHON_CWD, child_environment, python_command

WorkerState = Literal["idle", "loading", "ready", "busy", "failed"]
"""``idle``: no worker runs (none yet, the last was replaced, or it died since its last
answer); ``loading``: its model is loading; ``ready``: waiting for a request; ``busy``: working
on one; ``failed``: its model did not load (the next request tries again)."""


class WorkerError(Exception):
    """The worker gave no answer; the message says why, in the user's terms, to follow the
    worker's name (``did not answer in 2 s; ...``)."""


class WorkerNotLoaded(WorkerError):
    """The model did not load: the worker said why, or did not say in time."""

    def __init__(self, why: str, *, missing_module: bool = False, late: bool = False) -> None:
        super().__init__(why)
        self.missing_module = missing_module
        """The worker could not import what it needs (an extra is not installed)."""
        self.late = late
        """It did not say whether the model loaded within the load timeout."""


class WorkerHung(WorkerError):
    """No answer within the deadline: the worker was ended."""


class WorkerDied(WorkerError):
    """The worker ended while a request waited for it."""


class ModelWorker:
    """One worker process of ``module`` and the socket to it; used from one thread at a time
    (its owner's), while :meth:`stats`-like reads and :meth:`drill` may come from any."""

    def __init__(
        self, module: str, args: tuple[str, ...], *, hidden: Collection[str], load_timeout_s: float
    ) -> None:
        self._module = module
        self._args = args
        self._hidden = hidden
        self._load_timeout_s = load_timeout_s
        self._process: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._state: WorkerState = "idle"
        self._restarts = 0
        self.detail: Any = None
        """What the worker said when its model loaded."""

    @property
    def state(self) -> WorkerState:
        """What the worker is doing now; one that died since its last answer (killed, out of
        memory) is ``idle`` at once, before the next request finds out."""
        return "idle" if self._died() else self._state

    @property
    def restarts(self) -> int:
        """Workers ended for dying or hanging, one that died since its last answer included."""
        return self._restarts + self._died()

    @property
    def pid(self) -> int | None:
        """The running worker's process id, if one runs."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def rss_mb(self) -> float | None:
        """The running worker's resident memory in MB, where ``/proc`` says it (Linux)."""
        return rss_mb(self.pid)

    def start(self) -> Any:
        """Start the worker and wait for its model, unless one runs: what it said when ready.

        Raises:
            WorkerNotLoaded: the model did not load, or not within the load timeout.
        """
        if self.pid is not None and self._conn is not None:
            return self.detail
        died = self._died()  # between two requests (killed, out of memory)
        self.stop()
        self._restarts += died
        self._state = "loading"
        mine, theirs = socket.socketpair()
        argv = python_command(self._module, str(theirs.fileno()), *self._args)
        with theirs:
            self._process = subprocess.Popen(  # noqa: S603 - this interpreter, our module
                argv,
                cwd=PYTHON_CWD,
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=child_environment(self._hidden),  # the model needs none of the keys
            )
        self._conn = conn = Connection(mine.detach())
        if not conn.poll(self._load_timeout_s):
            self._failed()
            msg = f"it did not load in {self._load_timeout_s:g} s"
            raise WorkerNotLoaded(msg, late=True)
        try:
            kind, said = conn.recv()
        except (EOFError, OSError):
            kind, said = "failed", f"the worker ended (exit code {self._exit_code()})"
        if kind != "ready":
            self._failed()
            why = str(said)
            raise WorkerNotLoaded(why, missing_module=why.startswith("ModuleNotFoundError"))
        self._state, self.detail = "ready", said
        return said

    def ask(
        self,
        message: object,
        hang_s: float,
        ahead: Mapping[str, Callable[[Any], None]] | None = None,
    ) -> tuple[str, Any]:
        """Send ``message`` and return the worker's answer, ``(kind, payload)``, starting the
        worker first if none runs. A message of a kind that ``ahead`` names (a part of the
        answer sent ahead of it) is handed to its function, and the wait goes on within the
        same ``hang_s``.

        Raises:
            WorkerNotLoaded: a worker had to start, and its model did not load.
            WorkerHung: no answer within ``hang_s`` (the worker is ended).
            WorkerDied: the worker ended meanwhile (it is replaced at the next request).
        """
        self.start()
        conn = self._conn
        assert conn is not None, "start() opened it"
        self._state = "busy"
        # Written on a thread of its own: a hung worker reads nothing, and a write bigger than
        # the socket's buffer would wait for it; ending the worker ends that write.
        threading.Thread(target=_write, args=(conn, message), daemon=True).start()
        deadline = time.monotonic() + hang_s
        try:
            while True:
                if not conn.poll(max(0.0, deadline - time.monotonic())):
                    self.replace()
                    raise WorkerHung(f"did not answer in {hang_s:g} s; it was restarted")
                answer: tuple[str, Any] = conn.recv()
                handle = ahead.get(answer[0]) if ahead else None
                if handle is None:
                    break
                handle(answer[1])
        except (EOFError, OSError):
            code = self._exit_code()
            self.replace()
            raise WorkerDied(f"stopped (exit code {code}); it is started again") from None
        self._state = "ready"
        return answer

    def drill(self, kind: str, seconds: float) -> None:
        """A fault drill, if a worker runs: ``crash`` kills it; ``hang`` stops it for
        ``seconds`` (a request that waits past its deadline replaces it meanwhile)."""
        process = self._process
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            if kind == "crash":
                process.kill()
            elif kind == "hang":
                process.send_signal(signal.SIGSTOP)
                resume = threading.Timer(seconds, _resume, args=(process,))
                resume.daemon = True
                resume.start()

    def replace(self) -> None:
        """The worker died or hung: end it, counted; the next request starts another."""
        self.stop()
        self._restarts += 1

    def stop(self) -> None:
        """End the worker, if one runs (a request it works on is dropped)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        process, self._process = self._process, None
        if process is not None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
        if self._state != "failed":
            self._state = "idle"

    def _failed(self) -> None:
        self.stop()
        self._state = "failed"

    def _died(self) -> bool:
        """Whether the worker that answered last has ended by itself, not yet replaced."""
        process = self._process
        return (
            self._state in ("ready", "busy") and process is not None and process.poll() is not None
        )

    def _exit_code(self) -> int | None:
        return self._process.poll() if self._process is not None else None


def _resume(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGCONT)


def _write(conn: Connection, message: object) -> None:
    with contextlib.suppress(OSError, ValueError, TypeError):  # the worker died, or closed
        conn.send(message)


def rss_mb(pid: int | None) -> float | None:
    """A process's resident memory in MB, where ``/proc`` says it (Linux)."""
    if pid is None:
        return None
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return None
