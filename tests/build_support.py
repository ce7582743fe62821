"""A lock for builds that several pytest-xdist workers share (one C++ or Go build per run)."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def build_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` (created if missing) while building into it:
    the first worker builds, the others wait and then find the build up to date."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(folder.name + ".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
