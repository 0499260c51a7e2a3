"""``python3 run.py --demo``: each feature's stand-in (the agent's stand-in LLM) and a recorded
capture session, replayed.

The stand-in LLM (:mod:`transport.agent.fake_llm`, started by the agent's
:func:`~transport.agent.demo.agent_demo`) is also the tests' fake LLM and the LLM outage
rehearsal tool; the replay (:mod:`transport.demo.replay`) is also a capture stand-in
for a real model (``python3 -m transport.demo.replay``).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import structlog

from config.command_line import build_parser
from config.settings import Settings

if TYPE_CHECKING:
    from transport.demo.replay import Replayer
    from transport.host.feature import Feature

log = structlog.get_logger("relay")


def _data_dir_given(argv: Sequence[str], environ: Mapping[str, str]) -> bool:
    """Whether ``--data-dir`` or ``RELAY_DATA_DIR`` was given (argparse's abbreviations too)."""
    given = build_parser().parse_args(list(argv)).data_dir is not None
    return given or bool(environ.get("RELAY_DATA_DIR", "").strip())


def _local_url(host: str, port: int) -> str:
    """A URL that reaches a server bound to ``host`` from this machine."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)  # noqa: S104
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def prepare_demo(
    settings: Settings,
    features: Iterable[Feature],
    argv: Sequence[str],
    environ: Mapping[str, str],
    cleanup: contextlib.ExitStack,
) -> Settings:
    """Start each of ``features``' demo stand-in (its :class:`~transport.host.feature.Feature`'s
    ``demo``: the agent's stand-in LLM, the agent pointed at it), in their order; state in a
    temporary directory. The entry point hands the registry's features
    (:data:`transport.registry.FEATURES`): the demo imports no feature, so that a feature's
    stand-in may use the demo's.

    What it starts and creates is undone by ``cleanup`` (the LLM stopped, the directory
    removed), after the relay has stopped. A data directory given explicitly is kept.
    """
    data_dir = settings.data_dir
    kept = _data_dir_given(argv, environ)
    if not kept:
        data_dir = tempfile.mkdtemp(prefix="sinain-relay-demo-")
        cleanup.callback(shutil.rmtree, data_dir, ignore_errors=True)
    for feature in features:
        settings = feature.demo(settings, cleanup)
    log.info(
        "demo.data_dir",
        actor="root",
        data_dir=data_dir,
        removed_at_exit=not kept,
    )
    return replace(settings, data_dir=data_dir)


def start_demo_replay(host: str, port: int, token: str = "") -> Replayer:
    """Replay the shipped capture session against the relay, in a loop, at real speed."""
    # imported here: ``python3 -m transport.demo.replay`` runs that module as __main__
    from transport.demo.replay import Replayer, load_session  # noqa: PLC0415

    url = _local_url(host, port)
    log.info(
        "demo.tour",
        actor="root",
        session="transport/demo/session.jsonl",
        watch=f"curl -s {url}/agent/digest",
        feed=f"curl -s '{url}/feed?after=0'",
        history=f"curl -s '{url}/agent/history?limit=5'",
    )
    return Replayer(url, load_session(), loop=True, token=token).start()
