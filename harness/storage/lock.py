"""One writing process per results store.

Two tournament runs on the same store at once would play and store the same games twice.
A run therefore holds an advisory lock (``flock``) on a lock file beside the store,
``<store>.lock``, for as long as it plays; a second process that tries the same store
is refused with an error that names the lock file and the process holding it. Within one
process any number of runs may share the store (``serve`` runs several tournaments at
once in one process). The kernel drops the lock when its process exits, however it
exits, so a killed run never leaves a stale lock behind; the file itself stays. A bot
process that the run was starting at the moment it was killed, forked but not yet
running its program, shares the lock until it runs it, a moment later (up to half a
second on a loaded machine): a process that finds the lock held while the process named
in the lock file has ended waits for it, up to :data:`RELEASE_WAIT_S`.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from harness.errors import StoreError

RELEASE_WAIT_S = 5.0
"""How long to wait for a lock whose holder has ended (see above) before refusing."""
_POLL_S = 0.02

_guard = threading.Lock()
_held: dict[Path, tuple[int, int]] = {}  # lock file -> (descriptor, users in this process)


def lock_path(store: Path) -> Path:
    return store.with_name(store.name + ".lock")


@contextlib.contextmanager
def exclusive_writer(store: Path, what: str = "run") -> Iterator[None]:
    """Hold the store's writer lock for the duration of the block. Raises StoreError at
    once when another process holds it (the error calls the holder ``what``: a run, a
    ladder); waits only while the holder named in the lock file has ended and a process
    it was starting still shares the lock, at most :data:`RELEASE_WAIT_S`."""
    path = lock_path(store).resolve()
    _acquire(path, what)
    try:
        yield
    finally:
        _release(path)


def _acquire(path: Path, what: str) -> None:
    with _guard:
        if path in _held:
            fd, users = _held[path]
            _held[path] = (fd, users + 1)
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise StoreError(f"cannot open the lock file {path}: {e.strerror or e}") from e
        if not _lock(fd):
            holder = _read_holder(fd)
            os.close(fd)
            raise StoreError(
                f"another {what} is using the results store {path.with_suffix('')} "
                f"(its lock {path} is held{holder}): wait for that {what} to end, or give "
                f"this one another output folder")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _held[path] = (fd, 1)


def _release(path: Path) -> None:
    with _guard:
        fd, users = _held[path]
        if users > 1:
            _held[path] = (fd, users - 1)
            return
        del _held[path]
        os.close(fd)  # drops the lock


def _lock(fd: int) -> bool:
    """Take the lock on ``fd``: at once, or once the processes that share an ended
    holder's lock let go of it (False: held)."""
    deadline = time.monotonic() + RELEASE_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            pid = _holder_pid(fd)
            if pid is None or _alive(pid) or time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_S)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        return True
    return True


def _holder_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


def _read_holder(fd: int) -> str:
    pid = _holder_pid(fd)
    if pid is None:
        return ""
    if not _alive(pid):
        return (f" by process {pid}, which has ended; a process it started still shares "
                f"it")
    return f" by process {pid}"
