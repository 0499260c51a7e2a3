"""Where the command stands among the relay's flags (:func:`config.command_line.split_command`)."""

from __future__ import annotations

import pytest

from config.command_line import split_command


@pytest.mark.parametrize(
    ("args", "command", "rest"),
    [
        (["doctor", "--port", "5"], "doctor", ["--port", "5"]),
        (["--env-file", "F", "doctor"], "doctor", ["--env-file", "F"]),
        (["--env-file=F", "data-dir", "--port", "5"], "data-dir", ["--env-file=F", "--port", "5"]),
        (["--env-f", "F", "doctor"], "doctor", ["--env-f", "F"]),  # a prefix, as argparse takes
        (["--faults", "doctor"], "doctor", ["--faults"]),  # a boolean flag alone
        (["--faults", "true", "doctor"], "doctor", ["--faults", "true"]),
        (["--demo", "service", "status"], "service", ["--demo", "status"]),
        (["--data-dir", "doctor"], "", ["--data-dir", "doctor"]),  # a value, not a command
        (["--port", "5"], "", ["--port", "5"]),
        (["serve"], "", ["serve"]),  # no command: the relay's parser refuses it
        ([], "", []),
    ],
)
def test_the_command_may_follow_the_relays_flags(
    args: list[str], command: str, rest: list[str]
) -> None:
    assert split_command(args) == (command, rest)
