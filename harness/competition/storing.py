"""Storing finished games, the one way the tournament runner and the ladder do it: in a
results store, under the competition's id (a tournament's or the ladder's), on a thread
of its own and in the order they ended (:class:`~harness.storage.serial.SerialThread`), so
that a slow disk never holds up the event loop that times the bots.

A game counts as stored once :meth:`GameWriter.store` has returned; a write handed over
always runs, even if the task that awaits it is cancelled, and :meth:`GameWriter.aclose`
waits for every one. With ``stop_after_failure`` (a tournament run, which stops on a
store error), nothing more is stored once a write failed: each later write raises
:class:`~harness.errors.StoreError`, and its games are played again on resume.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ParamSpec, TypeVar

from harness.errors import StoreError
from harness.referee.outcome import GameResult
from harness.results.counting import SidedGame
from harness.results.rows import to_row
from harness.storage.results import GameRow, ResultsStore
from harness.storage.serial import SerialThread

__all__ = ["GameWriter"]

P = ParamSpec("P")
R = TypeVar("R")


class GameWriter:
    """Stores the games of competition ``competition_id`` in ``store`` (see the module
    docstring)."""

    def __init__(self, store: ResultsStore, competition_id: str, *,
                 stop_after_failure: bool = False) -> None:
        self.store = store
        self.competition_id = competition_id
        self.stop_after_failure = stop_after_failure
        self.thread = SerialThread(f"store-{competition_id}")
        self._failed: BaseException | None = None  # set on the thread

    async def store_games(self, played: Sequence[tuple[SidedGame, GameResult]]) -> list[GameRow]:
        """Store these games, after every write given before; their rows, once stored."""
        rows = [to_row(self.competition_id, game, result) for game, result in played]
        await self.thread.run(self._write, rows)
        return rows

    async def run(self, fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
        """Another write (e.g. the ladder's record of a deal set), in the same order."""
        return await self.thread.run(fn, *args, **kwargs)

    def _write(self, rows: list[GameRow]) -> None:
        if self._failed is not None:
            raise StoreError(f"not stored after an earlier failure: {self._failed}")
        try:
            for row in rows:
                self.store.record_game(row)
        except BaseException as e:
            if self.stop_after_failure:
                self._failed = e
            raise

    async def aclose(self) -> None:
        """Wait for every write handed over (:meth:`SerialThread.aclose`)."""
        await self.thread.aclose()

    def close(self) -> None:
        self.thread.close()
