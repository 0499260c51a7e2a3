"""Who else on this machine may read the relay's files, or replace the one it writes for others.

The data directory holds what the user heard and saw, so the relay creates it ``0700`` and
every file in it ``0600`` (:mod:`actors.kernel.storage`); SITUATION.md and the log file
(``RELAY_LOG_FILE``) are written ``0600``. A directory the user chose is never changed, only
checked: these checks say what another local user could do, and what command would stop it.

Another user means anyone but the owner: "others", and the members of the file's group
unless that group is the owner's own (a group named after the owner with no other members,
as most systems give each user). The checks are pure functions of :class:`PathMode`;
:func:`inspect` and :func:`risks_on_disk` read them from the disk.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import shlex
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PRIVATE_DIR = 0o700
"""The mode of a directory the relay creates for the user's data."""
PRIVATE_FILE = 0o600
"""The mode of every file the relay writes."""


@dataclass(frozen=True, slots=True)
class PathMode:
    """What the checks read of one path."""

    path: str
    mode: int
    """``st_mode``: the type, the permission bits and the sticky bit."""
    uid: int
    """The owner."""
    private_group: bool
    """Whether the group holds no one but the owner, so that its bits give no one else access."""

    @property
    def octal(self) -> str:
        """The permission bits as ``ls`` and ``chmod`` write them: ``0755``, ``1777``."""
        return f"{stat.S_IMODE(self.mode):04o}"


@dataclass(frozen=True, slots=True)
class Risk:
    """A directory through which another user could replace a file, and how to stop it."""

    directory: str
    mode: str
    why: str
    fix: str


def _others(bits: int, private_group: bool) -> int:
    """The mask of ``bits`` (``0o4`` read, ``0o2`` write, ``0o7`` any) for anyone but the owner."""
    return bits if private_group else bits | bits << 3


def open_to_others(entry: PathMode) -> bool:
    """Whether anyone but the owner may list or enter a directory (entering is enough to open
    a file whose name is known, and the relay's file names are)."""
    return bool(entry.mode & _others(0o7, entry.private_group))


def readable_by_others(entry: PathMode) -> bool:
    """Whether anyone but the owner may read a file."""
    return bool(entry.mode & _others(0o4, entry.private_group))


def writable_by_others(entry: PathMode) -> bool:
    """Whether anyone but the owner may create, rename and remove entries of a directory."""
    return bool(entry.mode & _others(0o2, entry.private_group))


def replace_risks(
    file: str,
    directories: Sequence[PathMode],
    existing: PathMode | None,
    me: int,
    *,
    setting: str = "RELAY_SITUATION_FILE",
) -> tuple[Risk, ...]:
    """How another user could put a file of their own at ``file``, which the relay writes
    (a link to a file of theirs, a file another program then reads).

    ``directories``: the existing directories above ``file``, nearest first, up to ``/``;
    ``existing``: ``file`` itself if it exists; ``me``: the relay's user id; ``setting``: the
    setting that names ``file``, for the remedy.

    A directory that others may write lets them rename any entry (the file, or a directory on
    its way) and put their own in its place, unless it has the sticky bit, which keeps each
    entry to its owner. A directory owned by someone else (root aside) is theirs to change.
    A missing directory can be created first by anyone who may write where it would go,
    sticky bit or not; so can the file, and the relay cannot then replace it.
    """
    risks: list[Risk] = []
    parent = str(Path(file).parent)
    for entry in directories:
        quoted = shlex.quote(entry.path)
        if entry.uid not in (me, 0):
            risks.append(
                Risk(
                    entry.path,
                    entry.octal,
                    f"owned by user id {entry.uid}, who may replace what is in it",
                    f"choose a path in directories you own for {setting}",
                )
            )
        elif writable_by_others(entry) and not entry.mode & stat.S_ISVTX:
            risks.append(
                Risk(
                    entry.path,
                    entry.octal,
                    "others may write in it and it has no sticky bit, so they may replace "
                    "what is in it",
                    f"chmod go-w {quoted}",
                )
            )
        elif entry.path != parent and entry is directories[0] and writable_by_others(entry):
            risks.append(
                Risk(
                    entry.path,
                    entry.octal,
                    f"{parent} does not exist yet, and others may create it here first",
                    f"mkdir -p -m 700 {shlex.quote(parent)}",
                )
            )
    if existing is not None and existing.uid != me:
        risks.append(
            Risk(
                parent,
                directories[0].octal if directories else "",
                f"{file} belongs to user id {existing.uid}, not to the relay's user",
                f"rm {shlex.quote(file)}",
            )
        )
    return tuple(risks)


# -- reading the disk ----------------------------------------------------------------------------


def _group_is_private(gid: int, uid: int) -> bool:
    """Whether group ``gid`` is user ``uid``'s own: named after them, their primary group,
    and listing no other member. A group that cannot be looked up is not."""
    try:
        group = grp.getgrgid(gid)
        owner = pwd.getpwuid(uid)
    except KeyError:
        return False
    return (
        owner.pw_gid == gid
        and group.gr_name == owner.pw_name
        and set(group.gr_mem) <= {owner.pw_name}
    )


def inspect(path: Path | str, *, follow: bool = True) -> PathMode:
    """The :class:`PathMode` of ``path`` (of a link itself with ``follow=False``).

    Raises:
        OSError: ``path`` cannot be read (it does not exist, or a directory above it is shut).
    """
    info = os.stat(path, follow_symlinks=follow)
    return PathMode(
        path=str(path),
        mode=info.st_mode,
        uid=info.st_uid,
        private_group=_group_is_private(info.st_gid, info.st_uid),
    )


def risks_on_disk(file: str, setting: str) -> tuple[Risk, ...]:
    """:func:`replace_risks` of ``file`` as the disk is now, for the relay's user.

    The directory is resolved first, so the directories checked are the ones the writes go
    to; the file itself is not (a link there is what is written over, or refused).
    """
    path = Path(file).parent.resolve() / Path(file).name
    directories: list[PathMode] = []
    for directory in path.parents:
        try:
            directories.append(inspect(directory))
        except OSError:
            if directories:  # a directory we cannot read above one we can: nothing to say
                break
    existing = None
    with contextlib.suppress(OSError):  # no file yet
        existing = inspect(path, follow=False)
    return replace_risks(str(path), directories, existing, os.geteuid(), setting=setting)


def refusal(file: str, setting: str) -> str | None:
    """Why the relay will not write ``file``, named by ``setting``, in one line with the
    remedy: the first of its :func:`risks_on_disk`. ``None``: no other user can redirect it."""
    for risk in risks_on_disk(file, setting):
        return (
            f"{setting}={file} is refused: {risk.directory} (mode {risk.mode}): {risk.why}; "
            f"fix: {risk.fix}"
        )
    return None
