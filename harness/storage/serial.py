"""Blocking work kept off the event loop that times the bots.

The referee measures each decision on the asyncio loop: a reply that arrives in time but
is read late, because the loop was busy committing a game to SQLite or refitting the
ratings, would be charged to the bot. :class:`SerialThread` runs such calls on one thread
of its own, one at a time and in the order they were given (so writes stay ordered), and
lets the loop await their results.

A call, once given, always runs: cancelling the task that awaits it does not withdraw it
(a finished game handed to the writer is stored even if its set is being cancelled), and
:meth:`SerialThread.close` waits for every call given so far. A process killed before a
call's commit loses only what was not yet stored, as it would have without the thread:
a game counts as stored when the awaited call returns.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

__all__ = ["SerialThread"]

log = logging.getLogger("euchre.storage")

P = ParamSpec("P")
R = TypeVar("R")


class SerialThread:
    """One thread that runs the calls given to it in order (see the module docstring)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self.closed = False

    def submit(self, fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> None:
        """Give ``fn(*args, **kwargs)`` to the thread now and do not wait for it (it runs
        after every call given before it); an exception it raises is logged."""
        self._give(fn, *args, **kwargs).add_done_callback(_log_failure)

    async def run(self, fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
        """Give ``fn(*args, **kwargs)`` to the thread and wait for its result (or
        exception). Cancelling the awaiting task leaves the call to run."""
        return await asyncio.shield(self._give(fn, *args, **kwargs))

    def _give(self, fn: Callable[P, R], /, *args: P.args,
              **kwargs: P.kwargs) -> asyncio.Future[R]:
        return asyncio.wrap_future(self._pool.submit(functools.partial(fn, *args, **kwargs)))

    def close(self) -> None:
        """Wait for every call given so far, then stop the thread. Idempotent."""
        self.closed = True
        self._pool.shutdown(wait=True)

    async def aclose(self) -> None:
        """:meth:`close` without holding up the loop; if the waiting task is cancelled,
        it still waits (here, blocking) before the cancellation goes on, so that a store
        is never closed under a write it was given."""
        try:
            await asyncio.shield(asyncio.to_thread(self.close))
        except asyncio.CancelledError:
            self.close()
            raise


def _log_failure(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and (error := future.exception()) is not None:
        log.error("a call on a background thread failed: %r", error, exc_info=error)
