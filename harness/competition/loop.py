"""The play loop the tournament runner and the ladder share: units of play (a
tournament's game, a ladder's deal set) run as tasks, as many as there is room for, and
whenever one ends (or the loop is woken, or a poll period passes) the competition's
format is asked for more.

The competition supplies ``fill``, which starts what may start now (the tournament: the
format's next games up to its concurrency; the ladder: the matchmaker's next sets
where bots have free seats), and each unit's body, which plays its game(s), stores them
in order (:class:`~harness.competition.storing.GameWriter`) and tells the format the
result. The loop owns the rest, written once:

* a unit that ends wakes the loop, which asks ``fill`` again;
* a finite competition ends when ``fill`` starts nothing and nothing is running; an
  open-ended one (the ladder) waits for a wake-up or the poll period;
* ``stop`` ends the loop at once; :meth:`PlayLoop.drain` then waits for the units still
  running (up to a time limit) and cancels the rest, so none outlives its store;
* a unit that fails either stops the whole competition (the tournament: a store that
  fails; its siblings are cancelled and the error raised) or is logged and the others
  go on (the ladder: one deal set).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Generic, TypeVar

__all__ = ["PlayLoop"]

log = logging.getLogger("euchre.competition")

T = TypeVar("T")


class PlayLoop(Generic[T]):
    """Runs units of play as tasks, each with a tag (e.g. where it plays). With
    ``fail_fast``, a unit's error cancels the others and :meth:`run` or :meth:`drain`
    raises it; without, it is logged with the unit's name and the loop goes on."""

    def __init__(self, *, fail_fast: bool) -> None:
        self.fail_fast = fail_fast
        self.running: dict[asyncio.Task[None], T] = {}
        self._wake = asyncio.Event()
        self._error: BaseException | None = None

    def start(self, name: str, unit: Coroutine[Any, Any, None], tag: T) -> None:
        """Run ``unit`` (called ``name`` in the log) as a task."""
        task = asyncio.ensure_future(unit)
        self.running[task] = tag

        def done(t: asyncio.Task[None]) -> None:
            self.running.pop(t, None)
            self._wake.set()
            if t.cancelled() or t.exception() is None:
                return
            error = t.exception()
            if not self.fail_fast:
                log.error("%s failed: %r", name, error)
            elif self._error is None:
                self._error = error
                self.cancel()

        task.add_done_callback(done)

    def wake(self) -> None:
        """Ask ``fill`` again now."""
        self._wake.set()

    @property
    def failed(self) -> bool:
        """A unit failed and the loop stops (``fail_fast`` only)."""
        return self._error is not None

    def count(self, tag: T) -> int:
        """Units running with ``tag``."""
        return sum(1 for t in self.running.values() if t == tag)

    async def run(self, fill: Callable[[], object], stop: asyncio.Event, *,
                  poll_seconds: float | None = None,
                  between: Callable[[], Awaitable[None]] | None = None) -> None:
        """Until ``stop`` is set (or a unit failed): ``fill()`` to start what may start,
        ``between()`` if given, then wait for a unit to end, :meth:`wake`, ``stop`` or
        ``poll_seconds``. Without ``poll_seconds`` the competition is finite: the loop
        also ends once ``fill`` started nothing and nothing runs."""
        stopper = asyncio.ensure_future(stop.wait())
        try:
            while not stop.is_set() and self._error is None:
                fill()
                if between is not None:
                    await between()
                self._wake.clear()  # what woke it is answered: fill() saw it
                if poll_seconds is None and not self.running:
                    return
                waker = asyncio.ensure_future(self._wake.wait())
                try:
                    await asyncio.wait((stopper, waker), timeout=poll_seconds,
                                       return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waker.cancel()
        except asyncio.CancelledError:
            self.cancel()  # the competition itself is cancelled: so is every unit
            raise
        finally:
            stopper.cancel()
        self._raise()

    def cancel(self) -> None:
        """Cancel every unit running."""
        for task in self.running:
            task.cancel()

    async def drain(self, timeout: float | None = None) -> None:
        """Wait for the units still running (at most ``timeout`` seconds, None: for as
        long as they take), cancel any left, and raise a unit's error (``fail_fast``)."""
        if self.running:
            await asyncio.wait(list(self.running), timeout=timeout)
        self.cancel()
        await asyncio.gather(*self.running, return_exceptions=True)
        self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error
