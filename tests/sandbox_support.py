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
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from harness.errors import SandboxUnavailable
from harness.referee.arena import Arena
from harness.referee.outcome import GameResult
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.rules import Form, RulesConfig
from harness.sandbox import SOCKET_NAME, BoxLimits, check_available

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


def add(arena: Arena, name: str, command: BotCommand, instances: int = 1) -> None:
    arena.add(Entrant(name, command), instances)


async def play_over_unix(log_dir: Path, command: tuple[str, ...],
                         cwd: Path = REPO_ROOT) -> tuple[GameResult, list[str]]:
    """One two-handed game between ``command`` (unboxed, given ``--address
    unix:PATH``, the referee's box socket) and the Python random bot over TCP: the
    result, and the peer of each seat's stream."""
    async with Arena(log_dir=log_dir) as arena:
        folder = await arena.server.box_socket_dir()
        address = f"unix:{folder / SOCKET_NAME}"
        add(arena, "unix", BotCommand((*command, "--address", address), cwd=str(cwd)))
        add(arena, "tcp", BotCommand((sys.executable, "-m", "sample_bots.random_bot"),
                                     cwd=str(REPO_ROOT)))
        result = await arena.play("g1", RulesConfig(form=Form.TWO_HANDED), 1, ["unix", "tcp"])
        peers = []
        for name in ("unix", "tcp"):
            session = arena.pool.instances(name)[0].slot.session
            peers.append(session.peer if session is not None else "")
        return result, peers


def every_process(name: str) -> Iterator[tuple[str, bytes]]:
    """``(pid, the bytes of /proc/PID/NAME)`` of every process on the machine whose file
    can be read (one that ends meanwhile is left out)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            yield pid, Path(f"/proc/{pid}/{name}").read_bytes()
        except OSError:
            continue
