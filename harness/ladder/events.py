"""The ladder's event feed: what ``LadderService.WatchLadder`` streams. The runtime
publishes (game finished, rating changed, bot connected, bot benched); each watcher has
its own bounded queue, so a slow watcher loses its oldest events and never holds the
ladder up."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable

from harness.protocol import ladder as lp
from harness.storage.results import GameRow

__all__ = ["QUEUE_SIZE", "LadderEvents", "StandingsChanges", "game_message"]

QUEUE_SIZE = 1000
"""Events kept for one watcher that has not read them yet."""


class LadderEvents:
    """Fan-out of ``WatchLadderResponse`` messages to every current watcher."""

    def __init__(self) -> None:
        self._queues: set[asyncio.Queue[lp.WatchLadderResponse | None]] = set()

    @property
    def watchers(self) -> int:
        return len(self._queues)

    def publish(self, event: lp.WatchLadderResponse) -> None:
        self._put(event)

    def close(self) -> None:
        """End every watch (the ladder is stopping)."""
        self._put(None)

    def _put(self, item: lp.WatchLadderResponse | None) -> None:
        for queue in self._queues:
            if queue.full():  # drop the oldest
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
            queue.put_nowait(item)

    async def watch(self) -> AsyncIterator[lp.WatchLadderResponse]:
        """Events from now on, until :meth:`close`."""
        queue: asyncio.Queue[lp.WatchLadderResponse | None] = asyncio.Queue(QUEUE_SIZE)
        self._queues.add(queue)
        try:
            while (event := await queue.get()) is not None:
                yield event
        finally:
            self._queues.discard(queue)


class StandingsChanges:
    """Publishes the standings lines a refit moved, as one rating-changed event: a rated
    line is published when its rating, interval, games or sweep differ from the last
    published for that bot."""

    def __init__(self, events: LadderEvents) -> None:
        self.events = events
        self._published: dict[str, tuple[float, float, float, str]] = {}

    def publish(self, lines: Iterable[lp.LadderStanding]) -> None:
        moved = []
        for line in lines:
            if not line.rated:
                continue
            key = (line.elo, line.ci95, line.games, line.sweep)
            if self._published.get(line.name) != key:
                self._published[line.name] = key
                moved.append(line)
        if moved:
            self.events.publish(lp.WatchLadderResponse(
                rating_changed=lp.RatingChanged(standings=moved)))


def game_message(row: GameRow) -> lp.LadderGame:
    """A stored game as the ladder's API and event feed show it."""
    return lp.game(game_key=row.game_key, seats=row.seats, scores=row.scores,
                   termination=row.termination.value, finished_at=row.finished_at,
                   hands=row.hands)
