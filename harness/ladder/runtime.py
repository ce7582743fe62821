"""The running ladder: a referee that plays the matchmaker's deal sets, for as long as
it runs, with house bots (local commands) and registered bots that dial in with their
ladder tokens.

:class:`LadderRuntime` wires the pieces, each with one job, and runs the main loop on
the loop a tournament plays on (:class:`~harness.competition.loop.PlayLoop`: bring the
pool up to date, start the sets there is room for, refresh the ratings when due, wait
for a wake-up):

* :mod:`harness.ladder.restore`: what the last run counted, rebuilt from the store;
* :mod:`harness.ladder.seats`: token resolution and the registered bots' seats in the
  pool (parking the seats of bots that are not connected);
* matching (here): the sets started where there is room (the ladder's referee, or
  house-only sets on a cluster), among the connected bots as the matchmaker's
  candidates, kept by :mod:`harness.ladder.listing` from the pool's changes;
* :mod:`harness.ladder.playing`: playing a set's tables, storing and counting each game;
* :class:`~harness.ladder.events.StandingsChanges`: publishing the lines a refit moved.

Nothing blocks the loop that times the bots. The games and the sets are written on one
thread of their own, in order (:class:`~harness.storage.serial.SerialThread`), through
connections of their own (a slow commit never holds the lock the loop's reads take);
the ratings count each stored game and refit on another thread, so a refit of a large
ladder never delays the reading of a bot's reply. A game counts as stored once its write
has returned; a write handed to the thread always runs, even if its set is cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Callable
from dataclasses import replace

from harness.competition.loop import PlayLoop
from harness.competition.storing import GameWriter
from harness.ladder.cluster import HouseCluster
from harness.ladder.events import LadderEvents, StandingsChanges
from harness.ladder.hosting import Hosting
from harness.ladder.listing import Listing, Registered
from harness.ladder.matchmaking import Candidate, DealSet, Matchmaker
from harness.ladder.memo import Memo
from harness.ladder.playing import GameRecorder, SetPlayer
from harness.ladder.quarantine import Quarantine
from harness.ladder.ratings import LadderRatings
from harness.ladder.registry import Registry
from harness.ladder.restore import HOUSE_OWNER, rebuild
from harness.ladder.seats import Seats
from harness.ladder.service import LadderServicer, standings
from harness.ladder.sets import SetLog
from harness.ladder.settings import LadderSettings
from harness.ladder.uploads import Uploads
from harness.protocol import ladder as lp
from harness.referee.arena import Arena
from harness.storage.ladder import LadderStore
from harness.storage.lock import exclusive_writer
from harness.storage.results import ResultsStore
from harness.storage.serial import SerialThread

__all__ = ["HOUSE_OWNER", "LadderRuntime"]

log = logging.getLogger("euchre.ladder")


def secret_seed(deal_key: str, seed: int) -> int:
    """The matchmaker's seed: the ladder's secret deal key mixed with the file's ``seed``
    (256 bits; :func:`~harness.competition.deals.deal_seed` hashes it with each set's
    number)."""
    return int.from_bytes(hashlib.sha256(f"{deal_key}/{seed}".encode()).digest(), "big")


class LadderRuntime:
    """Runs one ladder until ``stop`` is set. ``on_listen`` is told the address."""

    def __init__(self, settings: LadderSettings, *, stop: asyncio.Event | None = None,
                 on_listen: Callable[[str], None] | None = None) -> None:
        self.settings = settings
        self.stop = stop or asyncio.Event()
        self.on_listen = on_listen
        self.store = LadderStore(settings.store)
        self.results = ResultsStore(settings.store)
        # The writer's own connections, used on its thread only (and by reads that run
        # on threads), so that a slow commit never holds a lock the loop waits for.
        self._results_out = ResultsStore(settings.store)
        self._store_out = LadderStore(settings.store)
        self._writer = GameWriter(self._results_out, settings.ladder_id)
        self._fitter = SerialThread("ladder-ratings")
        self.registry = Registry(self.store)
        self.uploads = Uploads(self.store, max_bytes=settings.upload_max_bytes,
                               disk_reserve=settings.upload_reserve_bytes)
        self.hosting = Hosting(self.uploads, self.registry, settings.rules, settings.build,
                               on_ready=self.wake)
        self.sets = SetLog(self._store_out)
        self.quarantine = Quarantine(self.store, settings.quarantine,
                                     bench_store=self._store_out)
        self.ratings = LadderRatings(self._store_out, every_games=settings.refresh_games,
                                     every_seconds=settings.refresh_seconds,
                                     separate_process=True)
        self.matchmaker = Matchmaker(settings.rules.form, partnerships=settings.partnerships,
                                     seed=secret_seed(self.store.deal_key(), settings.seed),
                                     duplicate=settings.duplicate,
                                     policy=settings.matchmaking)
        self.arena: Arena | None = None
        self.events = LadderEvents()
        self._changes = StandingsChanges(self.events)
        self.memo = Memo()  # the standings and the live page, built once per change
        self._house = {entrant.name for entrant, _ in settings.house}
        self.seats = Seats(self.registry, self.uploads, settings.rules, self._house,
                           self.events, self.wake)
        self.listing = Listing(self.registry, self.seats)
        # The sets in play (tag: on the cluster), on the loop the tournament plays on too.
        self._plays: PlayLoop[bool] = PlayLoop(fail_fast=False)
        self.cluster: HouseCluster | None = None
        if settings.scheduler or settings.workers:
            self.cluster = HouseCluster(settings.ladder_id, [e for e, _ in settings.house],
                                        settings.seats_per_bot, settings.rules,
                                        settings.log_dir, scheduler=settings.scheduler,
                                        workers=settings.workers,
                                        retry_seconds=settings.cluster_retry_seconds)

    def restore(self) -> None:
        """Rebuild what the last run counted from the store (:mod:`harness.ladder.restore`)."""
        rebuild(self.settings.ladder_id, self._house, registry=self.registry,
                results=self.results, uploads=self.uploads, sets=self.sets,
                matchmaker=self.matchmaker, ratings=self.ratings, quarantine=self.quarantine)

    # ------------------------------------------------------------------ matching

    def _candidates(self, arena: Arena, cluster_sets: int | None = None) -> list[Candidate]:
        """The connected bots with their free seats on the ladder's referee (free
        instances with a stream; any free instance of a house bot, which the pool starts
        on demand), kept between calls (:class:`~harness.ladder.listing.Listing`); with
        ``cluster_sets``, the house bots only, with seats for that many sets on the
        cluster."""
        benched = self._benched()
        estimates = self._estimates()
        if cluster_sets is None:
            return self.listing.candidates(arena, self.matchmaker, estimates, benched)
        seats = self.settings.seats_per_bot * cluster_sets
        return [c if c.name in benched else replace(c, free_seats=seats) for c in
                self.listing.full(arena, self.matchmaker, estimates, benched, self._house)]

    def _benched(self) -> set[str]:
        return {bench.bot for bench in self.quarantine.active()}

    def _estimates(self) -> dict[str, tuple[float, float]]:
        """Every bot's rating and interval for pairing (its own, else its newest rated
        older version's with an unknown interval, else 0), once per ratings version."""
        key = ("estimates", id(self.ratings), self.ratings.version, self.registry.changes())
        return self.memo.get(key, lambda: self.ratings.estimates(
            self.registry.entrants(include_retired=True)))

    def _start(self, player: SetPlayer, deal_set: DealSet, on_cluster: bool) -> None:
        self._plays.start(f"deal set {deal_set.key}", player.play_set(deal_set, on_cluster),
                          on_cluster)

    @property
    def _running(self) -> dict[asyncio.Task[None], bool]:
        """The sets being played: set -> on the cluster."""
        return self._plays.running

    def _match(self, player: SetPlayer) -> None:
        """Start the sets there is room for: on the referee (with a cluster up, only
        sets that seat a registered bot), then house-only sets on the cluster."""
        s = self.settings
        arena = player.arena
        cluster = self.cluster if self.cluster is not None and self.cluster.up else None
        local = s.concurrency - sum(1 for c in self._running.values() if not c)
        if local <= 0 and cluster is None:  # no room: listing every bot would be wasted
            if self.cluster is not None:
                self.cluster.maybe_retry()
            return
        focused = cluster is not None or not s.house_vs_house
        for deal_set in self.listing.next_sets(  # candidates kept, the moved ones told
                arena, self.matchmaker, self._estimates(), self._benched(), local,
                focus=Registered(self._house) if focused else None):
            self._start(player, deal_set, on_cluster=False)
        if cluster is not None:
            free = cluster.capacity() - sum(1 for c in self._running.values() if c)
            if free > 0:
                for deal_set in self.matchmaker.next_sets(self._candidates(arena, free), free):
                    self.listing.touch(deal_set.bots)
                    self._start(player, deal_set, on_cluster=True)
        elif self.cluster is not None:
            self.cluster.maybe_retry()

    # ------------------------------------------------------------------ loop

    async def run(self) -> None:
        """Play until ``stop`` is set; running sets are then interrupted (cut short).
        One ladder at a time per store: a second process is refused (StoreError)."""
        with exclusive_writer(self.settings.store, "ladder"):
            try:
                await self._run()
            finally:  # every write handed over is done before the lock is released
                await self._writer.aclose()
                await self._fitter.aclose()

    async def _run(self) -> None:
        s = self.settings
        self.restore()
        arena = Arena(log_dir=s.log_dir, host=s.host, port=s.port, tls=s.tls,
                      startup_timeout=s.startup_timeout)
        arena.server.operator_token = s.operator_token
        arena.server.restarts = True  # a standing ladder: its bots come back when it does
        servicer = LadderServicer(self, arena.server)
        arena.server.add_service(lp.SERVICE_NAME,
                                 lambda server: lp.add_to_server(servicer, server))
        if self.cluster is not None and not await self._open_cluster(self.cluster):
            return  # stopped while the cluster was starting
        try:
            await self._serve(arena)
        finally:
            if self.cluster is not None:
                await self.cluster.close()  # also when the referee could not start

    async def _open_cluster(self, cluster: HouseCluster) -> bool:
        """Open the cluster (ClusterError: the ladder does not start), unless ``stop`` is
        set first (a local cluster can take seconds to start): then False."""
        opening = asyncio.ensure_future(cluster.open())
        stopper = asyncio.ensure_future(self.stop.wait())
        try:
            await asyncio.wait((opening, stopper), return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopper.cancel()
            if not opening.done():
                opening.cancel()  # the cluster closes what it started
                await asyncio.gather(opening, return_exceptions=True)
        if opening.cancelled():
            return False
        opening.result()  # ClusterError: the ladder does not start
        return True

    async def _serve(self, arena: Arena) -> None:
        s = self.settings
        async with arena:
            self.arena = self.seats.arena = arena
            for entrant, seats in s.house:
                arena.add(entrant, seats, s.rules)
            await self.hosting.start(arena)
            arena.server.registry.resolver = self.seats.resolve
            player = self._player(arena)
            if self.on_listen is not None:
                self.on_listen(arena.server.address)
            def fill() -> None:
                self.seats.sync(arena)
                self._match(player)

            try:  # games not fitted yet are fitted between, once it is due
                await self._plays.run(fill, self.stop, poll_seconds=s.poll_seconds,
                                      between=self.refresh_ratings)
            finally:
                self.events.close()
                await self.hosting.close()
                arena.stop_games.set()
                if self.cluster is not None:
                    await self.cluster.close()  # its sets in play are cut short
                await self._plays.drain(10.0)  # none may write once the lock is gone
                self.arena = self.seats.arena = None

    def _player(self, arena: Arena) -> SetPlayer:
        """The set player of this run, with the ladder's pieces as they are now."""
        s = self.settings
        recorder = GameRecorder(self._writer, self.ratings, self._fitter, self.quarantine,
                                self.events)
        return SetPlayer(arena, s.rules, s.time_control, s.fault_policy, self.stop,
                         self.seats, self.sets, self._writer, recorder, self.refresh_ratings,
                         self.cluster)

    # ------------------------------------------------------------------ operator

    def wake(self) -> None:
        """Look for games to start now (a bot was registered, restored or lifted)."""
        self._plays.wake()

    async def refresh_ratings(self, *, force: bool = False) -> None:
        """Refit the ratings if due (or ``force``), on the ratings' thread; a refit that
        moves any bot's line is published as a rating-changed event with the lines that
        moved, and then the history's snapshot, if one is due, is written on that thread.
        Once the ladder has stopped (no bot is timed any more), it refits here."""
        before = self.ratings.current
        if self._fitter.closed:
            refit = self.ratings.refresh(force=force)
        else:
            refit = await self._fitter.run(self.ratings.refresh, force=force, history=False)
            if refit is not before:
                self._fitter.submit(self.ratings.save_history)
        if refit is not before:
            self._changes.publish(standings(self))

    def close(self) -> None:
        self._writer.close()
        self._fitter.close()
        self.ratings.close()
        for store in (self.results, self._results_out, self._store_out):
            with contextlib.suppress(Exception):
                store.close()
        self.store.close()
