"""Every picture of the actor tree in the docs and docstrings is the tree that runs.

A picture is a block that starts with the line ``root (Supervisor)`` and goes on with
``├── name  Class  what it does`` lines, nested by ``│   `` or four spaces. It is compared
with :meth:`actors.tree.Relay.tree` of a relay started with every optional actor (a
SITUATION.md file, both audio sources): each supervisor's children by name, class and start
order. A name may be a pattern (``capture_*``: one per configured source). An actor missing
from a picture, or one a picture shows that does not run, fails here with its name.
"""

from __future__ import annotations

import re
import wave
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from actors.tree import Relay, TreeNode
from config.audio.settings import AudioConfig
from tests.support.relay import relay_settings

ROOT = Path(__file__).resolve().parent.parent
WHERE = ("README.md", "docs/*.md", "run.py", "actors/**/*.py", "transport/**/*.py", "config/*.py")
"""Where a picture of the tree may be drawn."""

_TOP = "root (Supervisor)"
_LINE = re.compile(r"^(?P<nesting>(?:│   |    )*)[├└]── (?P<name>\S+)\s+(?P<kind>\S+)")


@dataclass(frozen=True, slots=True)
class Picture:
    """One drawing of the tree, where it was found."""

    where: str
    tree: TreeNode


def parse(lines: list[str]) -> TreeNode:
    """The picture whose first line (``root (Supervisor)``, its indent removed) is
    ``lines[0]``, to its last ``├──``/``└──`` line."""
    drawn: list[tuple[int, str, str]] = []  # (depth, name, class) of each line
    for line in lines[1:]:
        match = _LINE.match(line)
        if match is None:
            break
        drawn.append((len(match["nesting"]) // 4 + 1, match["name"], match["kind"]))

    def build(at: int, depth: int) -> tuple[tuple[TreeNode, ...], int]:
        nodes: list[TreeNode] = []
        while at < len(drawn) and drawn[at][0] == depth:
            _, name, kind = drawn[at]
            children, at = build(at + 1, depth + 1)
            nodes.append(TreeNode(name, kind, children))
        return tuple(nodes), at

    return TreeNode("root", "Supervisor", build(0, 1)[0])


def pictures() -> Iterator[Picture]:
    """Every picture of the tree in the files of :data:`WHERE`."""
    for pattern in WHERE:
        for path in sorted(ROOT.glob(pattern)):
            lines = path.read_text(encoding="utf-8").splitlines()
            for number, line in enumerate(lines):
                if line.strip() != _TOP:
                    continue
                indent = line[: len(line) - len(line.lstrip())]
                body = [text.removeprefix(indent) for text in lines[number:]]
                yield Picture(f"{path.relative_to(ROOT)}:{number + 1}", parse(body))


def differences(drawn: TreeNode, running: TreeNode, path: str = "") -> list[str]:
    """What the picture ``drawn`` gets wrong about ``running``, one line each."""
    here = f"{path}{running.name}"
    if drawn.kind != running.kind:
        return [f"{here} is drawn as {drawn.kind}, runs as {running.kind}"]
    found: list[str] = []
    used: list[int] = []
    for child in running.children:
        index = next(
            (i for i, d in enumerate(drawn.children) if fnmatchcase(child.name, d.name)), None
        )
        if index is None:
            found.append(f"{here}/{child.name} ({child.kind}) runs but is not drawn")
            continue
        if used and index < used[-1]:
            found.append(f"{here}/{child.name} is drawn before an actor that starts before it")
        used.append(index)
        found += differences(drawn.children[index], child, f"{here}/")
    found += [
        f"{here}/{d.name} ({d.kind}) is drawn but does not run"
        for i, d in enumerate(drawn.children)
        if i not in used
    ]
    return found


@pytest.fixture
def everything(make_relay: Callable[..., Relay], tmp_path: Path) -> Relay:
    """A relay running every actor there is: the SITUATION.md writer and both captures."""
    recording = tmp_path / "quiet.wav"
    with wave.open(str(recording), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(16_000)
        wav.writeframes(bytes(3_200))
    audio = AudioConfig(source=f"file:{recording}", mic_source=f"file:{recording}")
    settings = relay_settings()
    return make_relay(replace(settings, situation_file=str(tmp_path / "SITUATION.md"), audio=audio))


def test_the_architecture_doc_draws_the_tree() -> None:
    assert any(p.where.startswith("docs/architecture.md:") for p in pictures())


def test_every_picture_of_the_tree_is_the_tree_that_runs(everything: Relay) -> None:
    running = everything.tree()
    assert {c.name for c in running.children if c.kind == "Supervisor"} == {"agent", "audio"}
    wrong = {p.where: differences(p.tree, running) for p in pictures()}
    wrong = {where: found for where, found in wrong.items() if found}
    assert not wrong, f"pictures that are not the running tree:\n{running.picture()}\n{wrong}"


def test_a_missing_or_extra_actor_is_named() -> None:
    running = TreeNode(
        "root",
        "Supervisor",
        (
            TreeNode("feed", "FeedBuffer"),
            TreeNode("audio", "Supervisor", (TreeNode("capture_mic", "Capture"),)),
        ),
    )
    drawn = parse(
        [
            _TOP,
            "├── feed      FeedBuffer      the feed ring",
            "├── audio     Supervisor      the audio path",
            "│   └── capture_*   Capture   one per source",
            "└── gone      Gone            an actor that left",
        ]
    )
    assert differences(drawn, running) == ["root/gone (Gone) is drawn but does not run"]
    assert differences(replace(drawn, children=drawn.children[:1]), running) == [
        "root/audio (Supervisor) runs but is not drawn"
    ]
