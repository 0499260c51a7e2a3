"""Child processes an actor owns: started so they never outlive the relay, ended for sure.

* :func:`spawn` starts a program without a shell, in a session (and process group) of its
  own, stdin from ``/dev/null``, stdout and stderr piped to the owner, in the relay's
  environment less the variables its owner names as secret (the kernel knows no settings).
  On Linux it is started through a tiny wrapper that asks the kernel for ``SIGKILL`` when its
  parent dies (``prctl(PR_SET_PDEATHSIG)``) and then ``exec``\\ s the program, so the program
  dies with the relay even after ``kill -9``. The wrapper, not ``preexec_fn``, because code
  run between ``fork`` and ``exec`` in a threaded process may deadlock. Linux sends the
  signal when the *thread* that started the child ends: an actor's thread lives as long as
  the actor, so the child dies with its owner. Elsewhere, a program writing to a pipe nobody
  reads ends with the broken pipe.
* :func:`end` sends ``SIGTERM`` to the child's process group, waits a grace, then ``SIGKILL``.
* :func:`alive` tells a running process from one that is gone or a zombie.
* :func:`python_command` is how a child Python of ours starts: isolated, so it runs our code
  only (see there); started in :data:`PYTHON_CWD`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Collection, Sequence
from typing import Final

NOT_FOUND: Final = 127
"""The wrapper's exit code when the program cannot be run (a shell's)."""

_WRAPPER: Final = (
    "import ctypes,os,signal,sys\n"
    "ctypes.CDLL(None).prctl(1, signal.SIGKILL)\n"  # PR_SET_PDEATHSIG
    "if os.getppid() != int(sys.argv[1]): os._exit(1)\n"  # the parent died before prctl
    "try: os.execv(sys.argv[2], sys.argv[2:])\n"
    "except OSError as e: sys.stderr.write(f'{sys.argv[2]}: {e.strerror}\\n'); os._exit(127)\n"
)

_RUN_MODULE: Final = (
    "import runpy,sys\n"
    "sys.path.insert(0, sys.argv.pop(1))\n"  # where our top-level package is, and only that
    "runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)\n"
)
PYTHON_CWD: Final = "/"
"""The directory a child Python of ours starts in: a relative name it opens (a model's, a
module's) resolves in no directory a user or another program may have written to."""


def python_command(module: str, *args: str) -> list[str]:
    """The command that runs our ``module`` with ``args``, as ``python -m`` would, in this
    interpreter and isolated (``-I``): neither the working directory nor ``PYTHONPATH`` is on
    its path, no ``PYTHON*`` variable and no user site-packages apply, so a ``numpy.py`` or a
    ``sitecustomize.py`` where the relay was started is never run. The one directory added
    to its path is the one our top-level package was imported from (the checkout in an
    editable install, ``site-packages`` otherwise), so the child runs the code the relay
    runs, however it was installed."""
    package = importlib.import_module(module.partition(".")[0])
    root = os.path.dirname(os.path.abspath(next(iter(package.__path__))))
    return [sys.executable, "-I", "-c", _RUN_MODULE, root, module, *args]


def child_environment(hidden: Collection[str]) -> dict[str, str]:
    """The relay's environment less the variables named in ``hidden`` (the secrets it was
    given: a capture program has no use for them)."""
    return {name: value for name, value in os.environ.items() if name not in hidden}


def spawn(argv: Sequence[str], *, hidden: Collection[str]) -> subprocess.Popen[bytes]:
    """Start ``argv`` (the program found on ``PATH``) with its stdout and stderr piped, in
    :func:`child_environment` less ``hidden``.

    Raises:
        FileNotFoundError: the program is not on ``PATH`` (or not executable there).
        OSError: the process could not be started.
    """
    program = shutil.which(argv[0])
    if program is None:
        raise FileNotFoundError(f"{argv[0]}: not found on PATH or not executable")
    command = [program, *argv[1:]]
    if sys.platform == "linux":
        command = [sys.executable, "-I", "-S", "-c", _WRAPPER, str(os.getpid()), *command]
    return subprocess.Popen(  # noqa: S603 - a program the user configured, without a shell
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
        bufsize=0,
        env=child_environment(hidden),
    )


def end(process: subprocess.Popen[bytes], grace_s: float) -> int | None:
    """End ``process`` and whatever it started in its group: ``SIGTERM``, then ``SIGKILL``
    after ``grace_s``; its exit code (negative: the signal), ``None`` if even that did not
    reap it within a second. A process that already exited has its group killed at once: a
    program it started may still hold the pipes.

    While any process of the group lives, its id names no other group; once none does, the
    signal finds nobody.
    """
    if process.poll() is not None:  # the leader is gone; what it left in its group is not
        _signal_group(process, signal.SIGKILL)
        return process.returncode
    _signal_group(process, signal.SIGTERM)
    try:
        return process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        pass
    _signal_group(process, signal.SIGKILL)
    try:
        return process.wait(timeout=1.0)
    except subprocess.TimeoutExpired:
        return None


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    if os.path.isdir("/proc/self"):
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
                return stat.read().rpartition(")")[2].split()[0] not in ("Z", "X")
        except FileNotFoundError:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
