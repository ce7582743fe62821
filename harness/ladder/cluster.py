"""The ladder's house-bot games on a Dask cluster.

A ladder given a cluster (``cluster.scheduler`` or ``cluster.workers`` in its file, or
``--scheduler``/``--workers``) hands the deal sets that seat only house bots to the
cluster's workers: each worker runs the house bots in its own arena
(:mod:`harness.cluster.worker`), as in a tournament on a cluster. Sets with a registered
bot stay with the ladder's own referee, the one registered bots dial. The ladder stays
the only writer of its store: a game's result comes back here and is stored by the
runtime, once per game key.

Faults of the cluster:

* a worker that dies mid-game: Dask plays the game again on another worker (the runtime
  sees one result);
* a house bot that cannot start on a worker: its games are forfeits, which the
  quarantine counts, so the bot is benched (and the worker named in the log), not
  retried forever;
* the scheduler lost: the set in play is cut short, the ladder goes on with every set on
  its own referee, and tries the scheduler again every ``retry_seconds``
  (``ladder.cluster_retry_seconds``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from pathlib import Path

from harness.cluster.client import ClusterPlayer, where
from harness.cluster.worker import ArenaSpec, GameOrder
from harness.competition.policies import RETRY_SECONDS
from harness.competition.seatings import ScheduledGame
from harness.errors import ClusterError, ClusterLost
from harness.referee.outcome import FaultKind, FaultPolicy, GameResult, TimeControl
from harness.referee.pool import Entrant
from harness.rules.config import RulesConfig

__all__ = ["FAILURES_IN_A_ROW", "RETRY_SECONDS", "HouseCluster"]

log = logging.getLogger("euchre.ladder")

FAILURES_IN_A_ROW = 3
"""Games failing on the cluster one after another (each killed worker after worker, or
failed on it) that take the cluster out of use for a retry period, as if it were lost."""

class HouseCluster:
    """The cluster that plays a ladder's house-only deal sets. :meth:`open` connects (a
    failure is a :class:`ClusterError`); while :attr:`up`, :meth:`capacity` says how many
    sets it may play at once (two per worker thread, so no worker waits for its next
    game) and :meth:`play` plays one game."""

    def __init__(self, ladder_id: str, house: Sequence[Entrant], seats_per_bot: int,
                 rules: RulesConfig, log_dir: Path, *, scheduler: str | None = None,
                 workers: int = 0, retry_seconds: float = RETRY_SECONDS) -> None:
        self.spec = ArenaSpec.make(ladder_id, house, {e.name: seats_per_bot for e in house},
                                   rules, log_dir)
        self.scheduler = scheduler
        self.workers = workers
        self.retry_seconds = retry_seconds
        self._player: ClusterPlayer | None = None
        self._lost_at: float | None = None
        self._retrying: asyncio.Task[None] | None = None
        self._closing: asyncio.Future[None] | None = None
        self._failures = 0  # games in a row that failed on the cluster

    @property
    def where(self) -> str:
        return where(self.scheduler, self.workers)

    @property
    def up(self) -> bool:
        return self._player is not None

    async def open(self) -> None:
        player = ClusterPlayer(self.spec, scheduler=self.scheduler, workers=self.workers)
        await player.__aenter__()
        self._player = player
        self._lost_at = None

    def capacity(self) -> int:
        """Deal sets the cluster may play at once now (0 while it is down)."""
        return 0 if self._player is None else 2 * self._player.slots()

    async def play(self, game: ScheduledGame, time_control: TimeControl,
                   policy: FaultPolicy) -> GameResult | None:
        """Play ``game`` on some worker; ``None`` if the cluster was closed or lost (the
        caller cuts its set short). A game that failed on the cluster (it killed worker
        after worker) raises :class:`ClusterError`."""
        player = self._player
        if player is None:
            return None
        order = GameOrder(game.key, game.seed, tuple(game.seats), time_control, policy)
        try:
            placed = await player.play(order)
        except ClusterLost as e:
            self._lose(player, e)
            return None
        except ClusterError as e:
            self._failures += 1
            if self._failures >= FAILURES_IN_A_ROW:
                self._lose(player, ClusterError(f"{self._failures} games in a row failed "
                                                f"on the Dask cluster at {self.where}: {e}"))
            raise
        self._failures = 0
        if placed is None:
            return None
        result, worker = placed
        for f in result.faults:
            if f.kind is FaultKind.STARTUP_FAILURE:
                log.warning("house bot %s could not start on worker %s: %s", f.bot, worker,
                            f.explained())
        return result

    def _lose(self, player: ClusterPlayer, e: ClusterError) -> None:
        if self._player is not player:
            return  # already lost (several sets were in play)
        self._player = None
        self._failures = 0
        self._lost_at = time.monotonic()
        log.error("%s; house sets are played on the ladder's referee until it is back "
                  "(tried again every %.0f s)", e, self.retry_seconds)
        self._closing = asyncio.ensure_future(self._close(player))

    def maybe_retry(self) -> None:
        """Try the scheduler again in the background if it was lost long enough ago."""
        if (self._lost_at is None or self._retrying is not None
                or time.monotonic() - self._lost_at < self.retry_seconds):
            return

        async def retry() -> None:
            try:
                await self.open()
                log.warning("the Dask cluster at %s is back: house sets go to its workers "
                            "again", self.where)
            except Exception as e:  # ClusterError, or anything Dask raises on the way
                log.debug("the Dask cluster at %s is still away: %s", self.where, e)
                self._lost_at = time.monotonic()
            finally:
                self._retrying = None

        self._retrying = asyncio.ensure_future(retry())

    async def close(self) -> None:
        if self._retrying is not None:
            self._retrying.cancel()
            with contextlib.suppress(BaseException):
                await self._retrying
        player, self._player = self._player, None
        if player is not None:
            await self._close(player)
        if self._closing is not None:
            await self._closing

    @staticmethod
    async def _close(player: ClusterPlayer) -> None:
        with contextlib.suppress(Exception):
            await player.close()
