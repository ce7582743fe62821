"""Waiting in tests: poll a condition until a deadline, never sleep a fixed time.

``wait_for`` polls from plain code, ``wait_until`` from a coroutine (it sleeps on the
loop, so the code under test keeps running). Both fail with ``what`` in the message, and
``detail()`` (what the test knows of the state) when given."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

WAIT_S = 120.0  # for anything a test waits on: the machine may be shared and slow
PROCESS_POLL_S = 1.0
"""How often to poll a check that starts a process (``ctl``): each start of a command
costs about a third of a CPU-second, so polling one ten times a second takes a core
from the rest of the suite."""


def wait_for(check: Callable[[], object], what: str, timeout: float = WAIT_S, *,
             proc: subprocess.Popen[Any] | None = None, log: Path | None = None,
             interval: float = 0.1) -> None:
    """Poll ``check()`` until it is true. With ``proc``, fail as soon as that process
    has exited; a failure shows ``log`` (where the process writes) if given."""
    deadline = time.monotonic() + timeout
    while not check():
        status = None if proc is None else proc.poll()
        if status is not None and check():
            return
        if status is not None or time.monotonic() > deadline:
            why = (f"timed out after {timeout:.0f} s" if status is None
                   else f"the process exited with status {status}")
            shown = log.read_text() if log is not None and log.exists() else ""
            raise AssertionError(f"{why} waiting for {what}"
                                 + (f"; its output:\n{shown}" if shown else ""))
        time.sleep(interval)


async def wait_until(check: Callable[[], object], what: str = "the condition to hold",
                     timeout: float = WAIT_S, *,
                     detail: Callable[[], object] = lambda: "",
                     interval: float = 0.02) -> None:
    """Await ``check()`` being true, polling every ``interval`` seconds on the loop."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            shown = detail()
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}"
                                 + (f"; {shown}" if shown else ""))
        await asyncio.sleep(interval)
