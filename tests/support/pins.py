"""The versions of a dependency that ``pyproject.toml`` allows: what a contract test over a
library's private parts checks the installed release against."""

from __future__ import annotations

import tomllib

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from tests.support.harness import ROOT


def pinned(package: str) -> SpecifierSet:
    """The versions of ``package`` that ``pyproject.toml``'s dependencies allow."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pins = [Requirement(line) for line in project["project"]["dependencies"]]
    return next(pin.specifier for pin in pins if pin.name == package)
