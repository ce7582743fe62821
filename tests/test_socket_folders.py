"""A referee serves the boxes' Unix socket from a folder of its own in the temporary
directory, and removes it when it stops. A referee that is killed cannot: the next
referee that opens its boxes' socket removes such folders (of this user's, over a minute
old, with no server on their socket) and leaves a running referee's alone."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_support import REPO
from waiting import WAIT_S

from harness.referee.server import (
    SOCKET_FOLDER_PREFIX,
    STALE_AFTER_S,
    remove_stale_socket_folders,
)
from harness.sandbox import SOCKET_NAME

REFEREE = """
import asyncio, sys
from harness.referee.server import RefereeServer

async def main() -> None:
    server = RefereeServer()
    await server.start()
    print(await server.box_socket_dir(), flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""
"""A referee that opens its boxes' socket, prints its folder and runs until killed."""


@pytest.fixture
def parent() -> Iterator[Path]:
    """A folder in the temporary directory with a name short enough for the socket
    paths below it (a Unix socket's path has at most 107 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="sockets-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def aged(folder: Path) -> Path:
    """``folder``, dated more than :data:`STALE_AFTER_S` ago."""
    then = time.time() - STALE_AFTER_S - 10
    os.utime(folder, (then, then))
    return folder


def folder_with_socket(parent: Path, name: str, *, listening: bool) -> tuple[Path, socket.socket]:
    """A socket folder whose socket is bound: listening (a running referee's) or closed
    with its file left behind (a killed one's: connections are refused)."""
    folder = parent / (SOCKET_FOLDER_PREFIX + name)
    folder.mkdir()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(folder / SOCKET_NAME))
    if listening:
        sock.listen()
    else:
        sock.close()
    return folder, sock


def test_only_old_folders_of_referees_that_are_gone_are_removed(parent: Path) -> None:
    dead, _ = folder_with_socket(parent, "dead", listening=False)
    running, listener = folder_with_socket(parent, "running", listening=True)
    young, _ = folder_with_socket(parent, "young", listening=False)
    empty = parent / (SOCKET_FOLDER_PREFIX + "empty")  # killed before it bound
    empty.mkdir()
    other = parent / "someone-else"
    other.mkdir()
    for folder in (dead, running, empty, other):
        aged(folder)
    try:
        removed = remove_stale_socket_folders(parent)
    finally:
        listener.close()
    assert sorted(removed) == sorted([dead, empty])
    assert not dead.exists() and not empty.exists()
    assert running.is_dir() and young.is_dir() and other.is_dir()


def start_referee(tmpdir: Path) -> tuple[subprocess.Popen[str], Path]:
    proc = subprocess.Popen([sys.executable, "-c", REFEREE], cwd=REPO, text=True,
                            stdout=subprocess.PIPE,
                            env={**os.environ, "TMPDIR": str(tmpdir),
                                 "PYTHONPATH": str(REPO)})
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()  # waits for the folder, or for the end
    if not line:
        proc.kill()
        raise AssertionError(f"the referee exited ({proc.wait(WAIT_S)}) before "
                             f"opening its boxes' socket")
    return proc, Path(line)


def test_a_killed_referees_folder_is_removed_by_the_next_referee(parent: Path) -> None:
    first, first_folder = start_referee(parent)
    first.send_signal(signal.SIGKILL)
    first.wait(WAIT_S)
    assert (first_folder / SOCKET_NAME).exists()  # what a killed referee leaves
    aged(first_folder)
    running, running_folder = start_referee(parent)
    try:
        aged(running_folder)
        last, last_folder = start_referee(parent)
        try:
            assert not first_folder.exists()
            assert running_folder.is_dir()  # its referee still serves its socket
            assert last_folder.is_dir() and last_folder.parent == parent
        finally:
            last.terminate()
            last.wait(WAIT_S)
    finally:
        running.terminate()
        running.wait(WAIT_S)
