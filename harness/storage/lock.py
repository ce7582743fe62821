"""One writing process per results store.

Two tournament runs on the same store at once would play and store the same games twice.
A run therefore holds an advisory lock (``flock``) on a lock file beside the store,
``<store>.lock``, for as long as it plays; a second process that tries the same store
is refused with an error that names the lock file and the process holding it. Within one
process any number of runs may share the store (``serve`` runs several tournaments at
once in one process). The kernel drops the lock when its process exits, however it
exits, so a killed run never leaves a stale lock behind; the file itself stays. (A bot
process that the run was starting at the moment it was killed, forked but not yet
running its program, shares the lock until it runs it, a moment later.)
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from harness.errors import StoreError

_guard = threading.Lock()
_held: dict[Path, tuple[int, int]] = {}  # lock file -> (descriptor, users in this process)


def lock_path(store: Path) -> Path:
    return store.with_name(store.name + ".lock")


@contextlib.contextmanager
def exclusive_writer(store: Path, what: str = "run") -> Iterator[None]:
    """Hold the store's writer lock for the duration of the block. Raises StoreError at
    once (it never waits) when another process holds it; the error calls the holder
    ``what`` (a run, a ladder)."""
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
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read_holder(fd)
            os.close(fd)
            raise StoreError(
                f"another {what} is using the results store {path.with_suffix('')} "
                f"(its lock {path} is held{holder}): wait for that {what} to end, or give "
                f"this one another output folder") from None
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


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" by process {text}" if text.isdigit() else ""
