"""Playing the ladder's deal sets: :class:`GameRecorder` stores a finished game and counts
it (ratings, quarantine, events); :class:`SetPlayer` plays a set's tables in order, on the
ladder's referee or on the house cluster, and cuts the set short when it cannot go on.

Crash safety. Every game is stored the moment it ends, every set when it starts and
ends (:class:`~harness.ladder.sets.SetLog`), on the writer's thread and in order
(:class:`~harness.competition.storing.GameWriter`), so a slow disk never delays the loop
that times the bots; a game counts once its write has returned. A table a registered
bot cannot sit at because it left is recorded as its forfeit, so leaving never un-plays
a game.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from harness.competition.seatings import ScheduledGame
from harness.competition.storing import GameWriter
from harness.errors import ClusterError
from harness.ladder.cluster import HouseCluster
from harness.ladder.events import LadderEvents, game_message
from harness.ladder.matchmaking import DealSet, SetProgress
from harness.ladder.quarantine import Quarantine
from harness.ladder.ratings import LadderRatings
from harness.ladder.seats import Seats
from harness.ladder.sets import SetLog
from harness.protocol import ladder as lp
from harness.referee.arena import Arena, forfeit_result
from harness.referee.outcome import (
    FATAL,
    Fault,
    FaultKind,
    FaultPolicy,
    GameResult,
    Termination,
    TimeControl,
)
from harness.rules.config import RulesConfig
from harness.storage.serial import SerialThread

__all__ = ["GameRecorder", "SetPlayer"]

log = logging.getLogger("euchre.ladder")


@dataclass
class GameRecorder:
    """Stores a finished game (with ``writer``, as a tournament stores its games) and
    counts it once stored: the ratings (on ``fitter``'s thread), the quarantine and the
    events."""

    writer: GameWriter
    ratings: LadderRatings
    fitter: SerialThread
    quarantine: Quarantine
    events: LadderEvents

    async def record(self, deal_set: DealSet, game: ScheduledGame,
                     result: GameResult) -> None:
        (row,) = await self.writer.store_games([(game, result)])
        self.fitter.submit(self.ratings.add_games, [row])
        self.events.publish(lp.WatchLadderResponse(
            game_finished=lp.GameFinished(game=game_message(row))))
        for bot in deal_set.bots:
            reason = self.quarantine.count(
                bot, [f.kind.value for f in result.faults if f.bot == bot])
            if reason is None:
                continue
            # Written on the writer's thread, after the game: a bot that faults on
            # purpose must not make the loop that times every game wait for the store.
            bench = await self.writer.run(self.quarantine.bench, bot, reason)
            if bench is not None:
                log.warning("%s benched until %.0f: %s", bot, bench.until, bench.reason)
                self.events.publish(lp.WatchLadderResponse(bot_benched=lp.BotBenched(
                    name=bot, reason=bench.reason, until=bench.until)))


@dataclass
class SetPlayer:
    """Plays deal sets to their end (see the module docstring). ``stop``: the ladder is
    stopping; ``after_set`` is awaited when a set has ended (the ratings' refresh)."""

    arena: Arena
    rules: RulesConfig
    time_control: TimeControl
    fault_policy: FaultPolicy
    stop: asyncio.Event
    seats: Seats
    sets: SetLog
    writer: GameWriter
    recorder: GameRecorder
    after_set: Callable[[], Awaitable[None]]
    cluster: HouseCluster | None = None

    async def play_set(self, deal_set: DealSet, on_cluster: bool) -> None:
        """Play the set's tables in order; every finished game counts at once."""
        progress = SetProgress(deal_set)
        await self.writer.run(self.sets.start, deal_set)
        for game in deal_set.games:
            result = await self._table(deal_set, game, progress, on_cluster)
            if result is None:
                break
            await self.recorder.record(deal_set, game, result)
            progress.finish(game.table, forfeit=result.termination is Termination.FORFEIT)
            fatal = [f for f in result.faults if f.kind in FATAL]
            if fatal and progress.next_table() is not None:  # its next table: it is back,
                progress.cut_short(f"{fatal[0].bot}: {fatal[0].kind.value}")  # or forfeits
        await self.writer.run(self.sets.finish, progress)
        await self.after_set()

    async def _table(self, deal_set: DealSet, game: ScheduledGame, progress: SetProgress,
                     on_cluster: bool) -> GameResult | None:
        """The result of one table of the set, or None (the set is cut short) when the
        ladder stops or the game was cut off. A bot benched meanwhile plays on: a bench
        keeps it out of new sets only (cut short, a set would let a bot that faults on
        purpose elsewhere skip the mirror table of one it leads)."""
        if self.stop.is_set():
            progress.cut_short("the ladder stopped")
            return None
        self.seats.sync(self.arena, only=deal_set.bots)
        left = [] if on_cluster else self.seats.left(self.arena, deal_set)
        if left:  # never wait for it (that would hold the others up): it forfeits
            progress.cut_short(f"{', '.join(left)}: not connected")
            seat = game.seats.index(left[0])
            return forfeit_result(
                game.key, self.rules, game.seed, game.seats, Fault(
                    seat, left[0], FaultKind.DISCONNECT,
                    f"left before table {game.table} of its deal set was played"),
                self.time_control, self.fault_policy)
        try:
            played = await self._play(game, on_cluster)
        except ClusterError as e:  # the game killed worker after worker
            log.error("deal set %s: %s", deal_set.key, e)
            progress.cut_short(str(e))
            return None
        if played is None:
            progress.cut_short(
                "interrupted: the ladder stopped" if self.stop.is_set() or not on_cluster
                else f"lost the Dask cluster at {self.cluster.where if self.cluster else '?'}")
        return played

    async def _play(self, game: ScheduledGame, on_cluster: bool) -> GameResult | None:
        """One game of a set, on the cluster or the referee; ``None`` if it was cut
        off (the ladder stopping, or the cluster lost)."""
        if on_cluster:
            return None if self.cluster is None else await self.cluster.play(
                game, self.time_control, self.fault_policy)
        result = await self.arena.play(game.key, self.rules, game.seed, game.seats,
                                       time_control=self.time_control,
                                       policy=self.fault_policy)
        return None if result.termination is Termination.INTERRUPTED else result
