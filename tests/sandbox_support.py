"""Shared by the tests of boxes (harness.sandbox): the skip-or-fail rule, bot folders, and
one game with boxed bots.

Boxes need bubblewrap, setpriv and writable cgroup controllers (root, or a delegated
cgroup). Without them these tests skip, except in CI (``CI`` set), where they fail, so
that CI cannot pass without running real boxes.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from harness.errors import SandboxUnavailable
from harness.referee.arena import Arena
from harness.referee.outcome import GameResult, TimeControl
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.rules import RulesConfig
from harness.sandbox import BoxLimits, check_available

REPO_ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent


def require_boxes() -> None:
    """Skip outside CI, fail in CI, when boxes cannot run on this machine."""
    try:
        check_available()
    except SandboxUnavailable as e:
        message = f"{e} (install bubblewrap and run as root: apt-get install -y bubblewrap)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def bot_folder(folder: Path, *scripts: Path) -> Path:
    """A folder every user may read (a box runs as nobody) holding copies of ``scripts``."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    for script in scripts:
        shutil.copy(script, folder / script.name)
        (folder / script.name).chmod(0o644)
    return folder


def random_bot_folder(folder: Path) -> Path:
    return bot_folder(folder, REPO_ROOT / "sample_bots" / "random_bot.py")


def boxed(folder: Path, script: str, limits: BoxLimits | None = None,
          env: Mapping[str, str] | None = None) -> BotCommand:
    """A local bot run by this Python from ``folder`` in a box."""
    return BotCommand((sys.executable, script), cwd=str(folder), env=dict(env or {}),
                      sandbox=limits or BoxLimits())


async def play(arena: Arena, seats: Sequence[str], *, game_id: str = "g1", seed: int = 1,
               tc: TimeControl | None = None) -> GameResult:
    return await arena.play(game_id, RulesConfig(), seed, list(seats), time_control=tc)


def add(arena: Arena, name: str, command: BotCommand, instances: int = 1) -> None:
    arena.add(Entrant(name, command), instances)
