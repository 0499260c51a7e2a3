"""Who else may read the data directory or replace SITUATION.md: the checks, on modes as data."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from actors.kernel.file_modes import (
    PathMode,
    inspect,
    open_to_others,
    readable_by_others,
    replace_risks,
    risks_on_disk,
)

ME, ROOT, SOMEONE = 1000, 0, 1001


def directory(path: str, mode: int, *, uid: int = ME, private_group: bool = True) -> PathMode:
    return PathMode(path, stat.S_IFDIR | mode, uid, private_group)


def test_the_mode_is_written_as_chmod_takes_it() -> None:
    assert directory("/d", 0o755).octal == "0755"
    assert directory("/tmp", 0o1777).octal == "1777"


@pytest.mark.parametrize(
    ("mode", "private_group", "open_"),
    [
        (0o700, False, False),
        (0o755, True, True),
        (0o711, True, True),  # enter without listing: enough to open feed.db by its name
        (0o701, True, True),
        (0o750, True, False),  # the group is the user's own
        (0o750, False, True),  # a group with other members
        (0o710, False, True),
    ],
)
def test_a_directory_is_open_to_anyone_but_its_owner_who_may_enter_or_list_it(
    mode: int, private_group: bool, open_: bool
) -> None:
    assert open_to_others(directory("/d", mode, private_group=private_group)) is open_


@pytest.mark.parametrize(
    ("mode", "private_group", "readable"),
    [(0o600, False, False), (0o644, True, True), (0o640, True, False), (0o640, False, True)],
)
def test_a_file_is_readable_by_others_by_its_read_bits(
    mode: int, private_group: bool, readable: bool
) -> None:
    entry = PathMode("/d/feed.db", stat.S_IFREG | mode, ME, private_group)
    assert readable_by_others(entry) is readable


ROOTS = (directory("/home", 0o755, uid=ROOT), directory("/", 0o755, uid=ROOT))


def risks(*directories: PathMode, file: str = "/home/me/ws/SITUATION.md") -> list[str]:
    return [risk.directory for risk in replace_risks(file, directories, None, ME)]


def test_a_workspace_only_its_user_may_change_has_no_risk() -> None:
    assert risks(directory("/home/me/ws", 0o755), directory("/home/me", 0o750), *ROOTS) == []


def test_a_world_writable_directory_without_the_sticky_bit_lets_others_replace_the_file() -> None:
    (risk,) = replace_risks(
        "/home/me/ws/SITUATION.md",
        (directory("/home/me/ws", 0o777), directory("/home/me", 0o755), *ROOTS),
        None,
        ME,
    )
    assert (risk.directory, risk.mode, risk.fix) == (
        "/home/me/ws",
        "0777",
        "chmod go-w /home/me/ws",
    )


def test_a_writable_directory_further_up_lets_others_rename_the_workspace_away() -> None:
    assert risks(directory("/home/me/ws", 0o700), directory("/home/me", 0o757), *ROOTS) == [
        "/home/me"
    ]


def test_the_sticky_bit_keeps_each_entry_to_its_owner() -> None:
    assert risks(directory("/home/me/ws", 0o1777), directory("/home/me", 0o755), *ROOTS) == []


def test_a_group_writable_directory_counts_only_when_others_are_in_the_group() -> None:
    own = directory("/home/me/ws", 0o775, private_group=True)
    shared = directory("/home/me/ws", 0o775, private_group=False)
    assert risks(own, *ROOTS) == []
    assert risks(shared, *ROOTS) == ["/home/me/ws"]


def test_a_directory_owned_by_another_user_is_theirs_to_change() -> None:
    (risk,) = replace_risks(
        "/srv/ws/SITUATION.md", (directory("/srv/ws", 0o755, uid=SOMEONE), *ROOTS), None, ME
    )
    assert "1001" in risk.why


def test_a_missing_directory_may_be_created_first_where_others_may_write() -> None:
    (risk,) = replace_risks(
        "/tmp/ws/SITUATION.md", (directory("/tmp", 0o1777, uid=ROOT), ROOTS[1]), None, ME
    )
    assert risk.directory == "/tmp"
    assert risk.fix == "mkdir -p -m 700 /tmp/ws"


def test_a_file_another_user_put_there_first_is_a_risk() -> None:
    theirs = PathMode("/tmp/SITUATION.md", stat.S_IFREG | 0o644, SOMEONE, True)
    (risk,) = replace_risks(
        "/tmp/SITUATION.md", (directory("/tmp", 0o1777, uid=ROOT), ROOTS[1]), theirs, ME
    )
    assert risk.fix == "rm /tmp/SITUATION.md"


def test_the_disk_is_read_up_to_the_root(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.chmod(workspace, 0o777)

    (risk,) = risks_on_disk(str(workspace / "missing" / "SITUATION.md"), "RELAY_SITUATION_FILE")

    assert risk.directory == str(workspace)
    assert risk.mode == "0777"
    os.chmod(workspace, 0o700)
    assert risks_on_disk(str(workspace / "missing" / "SITUATION.md"), "RELAY_SITUATION_FILE") == ()
    assert inspect(workspace).octal == "0700"
