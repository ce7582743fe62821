"""The running ladder: a referee that plays the matchmaker's deal sets, for as long as
it runs, with house bots (local commands) and registered bots that dial in with their
ladder tokens.

Tokens. The referee's token registry (:class:`harness.referee.session.SlotRegistry`) knows
only the tokens it issued. The ladder sets its ``resolver``: for any other token it
asks :meth:`harness.ladder.registry.Registry.authenticate` (hash lookup, constant-time
compare) and hands the stream one of the bot's seat instances that has no live stream,
preferring one that is not in a game. A bot with all its instances connected is refused
(``TOKEN_IN_USE``). Each registered bot is a remote entrant of the arena's pool with
one instance per seat of its concurrency; the pool's own tokens for them are random
and never leave the process.

Availability. Only instances with a live stream (house bots: always) and not in a game
count as free seats. An instance whose bot is not connected is *parked* (marked busy
in the pool) so that the pool never lends it to a game; it is unparked once its bot
connects.

Crash safety. Every game is stored the moment it ends (``ResultsStore.record_game``),
every set when it starts and ends (:class:`~harness.ladder.sets.SetLog`). On start the
ladder marks sets left in progress as cut short, rebuilds the ratings from every stored
game (as the running ladder counted each the moment it was stored) and the pairing
counts from the sets; games in flight at the crash were never
stored and are not rated.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from harness.errors import ClusterError, ConfigError
from harness.ladder.cluster import RETRY_SECONDS, HouseCluster
from harness.ladder.events import LadderEvents
from harness.ladder.hosting import BuildPolicy, Hosting
from harness.ladder.matchmaking import Candidate, DealSet, Matchmaker, Policy, SetProgress
from harness.ladder.memo import Memo
from harness.ladder.quarantine import Quarantine, QuarantinePolicy
from harness.ladder.ratings import LadderRatings
from harness.ladder.registry import Registry
from harness.ladder.service import LadderServicer, game_message, standings
from harness.ladder.sets import SetLog
from harness.ladder.uploads import DEFAULT_MAX_BYTES, Uploads
from harness.protocol import ladder as lp
from harness.protocol.tls import ServerTLS
from harness.referee.arena import Arena, forfeit_result
from harness.referee.outcome import FaultKind, FaultPolicy, GameResult, Termination, TimeControl
from harness.referee.pool import Entrant, Instance
from harness.referee.session import Session, Slot
from harness.results.rows import to_row
from harness.rules.config import RulesConfig
from harness.storage.ladder import LadderStore
from harness.storage.lock import exclusive_writer
from harness.storage.results import ResultsStore
from harness.tournament.schedule import ScheduledGame

__all__ = ["HOUSE_OWNER", "LadderRuntime", "LadderSettings"]

log = logging.getLogger("euchre.ladder")

HOUSE_OWNER = "house"
"""The owner recorded for house bots in the registry."""

_FATAL = frozenset({FaultKind.DISCONNECT, FaultKind.CRASH, FaultKind.STARTUP_FAILURE})


@dataclass(frozen=True)
class LadderSettings:
    """Everything a ladder run needs. ``house`` are local bots (pool entrants with a
    command) and the seats each may hold at once; ``concurrency`` is how many deal
    sets run at once."""

    store: Path
    log_dir: Path
    rules: RulesConfig = field(default_factory=RulesConfig)
    time_control: TimeControl = field(default_factory=TimeControl)
    fault_policy: FaultPolicy = field(default_factory=FaultPolicy)
    partnerships: str = "same"
    duplicate: bool = True
    seed: int = 1
    concurrency: int = 2
    ladder_id: str = "ladder"
    house: tuple[tuple[Entrant, int], ...] = ()
    # False: every set seats a registered (or hosted) bot; house bots never play each
    # other alone, so a ladder nobody has dialed into plays nothing.
    house_vs_house: bool = True
    matchmaking: Policy = field(default_factory=Policy)
    quarantine: QuarantinePolicy = field(default_factory=QuarantinePolicy)
    host: str = "127.0.0.1"
    port: int = 0
    tls: ServerTLS | None = None
    startup_timeout: float = 10.0
    poll_seconds: float = 1.0
    refresh_seconds: float = 1.0
    refresh_games: int = 100
    operator_token: str | None = None  # None: operator calls from this machine only
    scheduler: str | None = None  # house-only sets on this Dask scheduler's workers
    workers: int = 0  # ... or on a local cluster of this many worker processes
    cluster_retry_seconds: float = RETRY_SECONDS  # a lost scheduler is tried again this often
    upload_max_bytes: int = DEFAULT_MAX_BYTES  # the largest bundle SubmitBot accepts
    build: BuildPolicy = field(default_factory=BuildPolicy)  # hosted bots' builds and boxes

    @property
    def seats_per_bot(self) -> int:
        """Seats each bot holds in one game: 2 with same-bot partnerships, else 1."""
        return Matchmaker(self.rules.form, partnerships=self.partnerships).seats_per_bot

    def concurrency_for(self, requested: int | None) -> int:
        """The concurrency of a bot registered asking for ``requested`` (None or 0: the
        seats of one game). ConfigError if that is too few for one game: such a bot
        would connect and never play."""
        seats = self.seats_per_bot
        concurrency = requested or seats
        if concurrency < seats:
            raise ConfigError("concurrency", f"a bot holds {seats} seats in a game of this "
                                             f"ladder (it partners itself), so it needs a "
                                             f"concurrency of at least {seats}; got "
                                             f"{concurrency}")
        return concurrency


def secret_seed(deal_key: str, seed: int) -> int:
    """The matchmaker's seed: the ladder's secret deal key mixed with the file's ``seed``
    (256 bits; :func:`~harness.tournament.schedule.deal_seed` hashes it with each set's
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
        self.registry = Registry(self.store)
        self.uploads = Uploads(self.store, max_bytes=settings.upload_max_bytes)
        self.hosting = Hosting(self.uploads, self.registry, settings.rules, settings.build,
                               on_ready=self.wake)
        self.sets = SetLog(self.store)
        self.quarantine = Quarantine(self.store, settings.quarantine)
        self.ratings = LadderRatings(self.store, every_games=settings.refresh_games,
                                     every_seconds=settings.refresh_seconds)
        self.matchmaker = Matchmaker(settings.rules.form, partnerships=settings.partnerships,
                                     seed=secret_seed(self.store.deal_key(), settings.seed),
                                     duplicate=settings.duplicate,
                                     policy=settings.matchmaking)
        self.arena: Arena | None = None
        self.events = LadderEvents()
        self.memo = Memo()  # the standings and the live page, built once per change
        self._published: dict[str, tuple[float, float, float, str]] = {}
        self._house = {entrant.name for entrant, _ in settings.house}
        self._wake = asyncio.Event()
        self._running: dict[asyncio.Task[None], bool] = {}  # set -> on the cluster
        self.cluster: HouseCluster | None = None
        if settings.scheduler or settings.workers:
            self.cluster = HouseCluster(settings.ladder_id, [e for e, _ in settings.house],
                                        settings.seats_per_bot, settings.rules,
                                        settings.log_dir, scheduler=settings.scheduler,
                                        workers=settings.workers,
                                        retry_seconds=settings.cluster_retry_seconds)
        self._parked: set[Instance] = set()
        # id(slot) -> when the resolver handed it out, and the session it had then
        self._claimed: dict[int, tuple[float, Session | None]] = {}

    # ------------------------------------------------------------------ start-up

    def _restore(self) -> None:
        for entrant, _ in self.settings.house:
            try:
                self.registry.get(entrant.name)
            except ConfigError:
                self.registry.register(entrant.name, HOUSE_OWNER)  # its token is not needed
        self.results.ensure_tournament(self.settings.ladder_id, "ladder", {"kind": "ladder"})
        swept = self.uploads.sweep()
        if swept:
            log.info("removed %d unfinished uploads or builds of the last run", len(swept))
        closed = self.sets.close_unfinished("the ladder stopped while it was played")
        if closed:
            log.info("%d deal sets left unfinished by the last run are cut short", closed)
        stored = self.sets.sets()
        self.matchmaker.add_played(SetLog.pair_counts(stored))
        self.matchmaker.next_index = len(stored)
        rows = list(self.results.games(self.settings.ladder_id))
        self.ratings.add_games(rows)  # every stored game counts, as it did when it ended
        self.ratings.refresh(force=True)
        # Refill the quarantine's windows with each bot's games since its last bench.
        since = {name: max((b.started_at for b in self.quarantine.history(name)),
                           default=-math.inf)
                 for name in {bot for row in rows for bot in row.seats}}
        for row in sorted(rows, key=lambda r: (r.finished_at, r.game_key)):
            finished = datetime.fromisoformat(row.finished_at).timestamp()
            for bot in set(row.seats):
                if finished >= since[bot]:
                    self.quarantine.remember(bot, [f.kind.value for f in row.faults
                                                   if f.bot == bot])

    def _sync_entrants(self, arena: Arena, only: tuple[str, ...] | None = None) -> None:
        """Add newly registered bots to the pool; park instances without a stream. With
        ``only``, just park or unpark those bots' instances (a set's, before a table:
        on a large ladder a pass over every bot for each game would cost more)."""
        pool = arena.pool
        if only is None:
            hosted = self.uploads.states()  # seated by self.hosting once built, never remote
            for entrant in self.registry.entrants():
                if entrant.name not in pool.entrants and entrant.name not in self._house \
                        and entrant.name not in hosted:
                    placeholders = tuple("ladder-seat-" + secrets.token_hex(16)
                                         for _ in range(entrant.concurrency))
                    pool.add(Entrant(entrant.name, None, placeholders), entrant.concurrency,
                             self.settings.rules)
        for name in pool.entrants if only is None else only:
            if not pool.entrants[name].remote:
                continue
            for inst in pool.instances(name):
                if inst in self._parked and inst.slot.live:
                    self._parked.discard(inst)
                    inst.busy = False
                    self.events.publish(lp.WatchLadderResponse(
                        bot_connected=lp.BotConnected(name=name)))
                elif not inst.busy and not inst.slot.live:
                    self._parked.add(inst)
                    inst.busy = True

    def _resolve(self, token: str) -> Slot | None:
        """The referee's resolver: a seat instance of the bot this token belongs to."""
        arena = self.arena
        entrant = self.registry.authenticate(token)
        if arena is None or entrant is None or entrant.name in self._house:
            return None  # a house bot's seats are its own processes', never a stream's
        if entrant.name not in arena.pool.entrants:  # registered since the last round
            self._sync_entrants(arena)
        member = arena.pool.entrants.get(entrant.name)
        if member is None or not member.remote:
            return None  # so are a hosted bot's (its boxes')
        # A slot handed to a stream stays claimed until that stream's handshake is done
        # (it is live then) or has had its time: two streams dialing at once must not
        # get the same slot.
        now = time.monotonic()
        window = arena.server.handshake_timeout

        def claimed(slot: Slot) -> bool:
            when, session = self._claimed.get(id(slot), (-math.inf, None))
            return slot.session is session and now < when + window

        slots = [inst.slot for inst in arena.pool.instances(entrant.name)]
        free = sorted((s for s in slots if not s.live and not claimed(s)),
                      key=lambda s: bool(s.game_id))
        self._wake.set()
        if not free:  # every seat is live (TOKEN_IN_USE) or being connected (refused)
            return next((s for s in slots if s.live), None)
        self._claimed[id(free[0])] = (now, free[0].session)
        return free[0]

    # ------------------------------------------------------------------ matching

    def _candidates(self, arena: Arena, cluster_sets: int | None = None) -> list[Candidate]:
        """The connected bots with their free seats on the ladder's referee (free
        instances with a stream; any free instance of a house bot, which the pool starts
        on demand); with ``cluster_sets``, the house bots only, with seats for that many
        sets on the cluster."""
        out = []
        benched = {bench.bot for bench in self.quarantine.active()}
        estimates = self._estimates()
        members, candidate = arena.pool.entrants, self.matchmaker.candidate
        cluster_seats = 0 if cluster_sets is None else self.settings.seats_per_bot * cluster_sets
        for entrant in self.registry.entrants():
            name = entrant.name
            member = members.get(name)
            if member is None or (cluster_sets is not None and name not in self._house):
                continue  # not in the pool yet; only house bots play on the cluster
            live = ready = 0
            for inst in arena.pool.instances(name):  # a loop: this runs for every bot
                if not member.remote or inst.slot.ready:  # ready: live and welcomed
                    live += 1
                    ready += not inst.busy
                elif inst.slot.live:
                    live += 1
            if not live:
                continue  # not connected
            free = (0 if name in benched else cluster_seats if cluster_sets is not None
                    else ready)
            rating, ci95 = estimates[name]
            out.append(candidate(name, rating, ci95, free))
        return out

    def _estimates(self) -> dict[str, tuple[float, float]]:
        """Every bot's rating and interval for pairing (its own, else its newest rated
        older version's with an unknown interval, else 0), once per ratings version."""
        key = ("estimates", id(self.ratings), self.ratings.version, self.registry.changes())
        return self.memo.get(key, lambda: self.ratings.estimates(
            self.registry.entrants(include_retired=True)))

    async def _play(self, arena: Arena, game: ScheduledGame,
                    on_cluster: bool) -> GameResult | None:
        """One game of a set, on the cluster or the referee; ``None`` if it was cut
        off (the ladder stopping, or the cluster lost)."""
        s = self.settings
        if on_cluster:
            return None if self.cluster is None else await self.cluster.play(
                game, s.time_control, s.fault_policy)
        result = await arena.play(game.key, s.rules, game.seed, game.seats,
                                  time_control=s.time_control, policy=s.fault_policy)
        return None if result.termination is Termination.INTERRUPTED else result

    def _left(self, arena: Arena, deal_set: DealSet) -> list[str]:
        """The bots of ``deal_set`` that dial in without streams enough for its seats:
        they left after the set began (house and hosted bots are started on demand by
        the pool, never gone)."""
        return [b for b, seats in deal_set.seats.items() if arena.pool.entrants[b].remote
                and sum(1 for i in arena.pool.instances(b) if i.slot.live) < seats]

    def _record(self, deal_set: DealSet, game: ScheduledGame, result: GameResult,
                progress: SetProgress) -> None:
        """Store a finished game and count it at once: ratings, quarantine, events."""
        row = to_row(self.settings.ladder_id, game, result)
        self.results.record_game(row)
        self.ratings.add_games([row])
        self.events.publish(lp.WatchLadderResponse(
            game_finished=lp.GameFinished(game=game_message(row))))
        progress.finish(game.table, forfeit=result.termination is Termination.FORFEIT)
        for bot in deal_set.bots:
            bench = self.quarantine.record(
                bot, [f.kind.value for f in result.faults if f.bot == bot])
            if bench is not None:
                log.warning("%s benched until %.0f: %s", bot, bench.until, bench.reason)
                self.events.publish(lp.WatchLadderResponse(bot_benched=lp.BotBenched(
                    name=bot, reason=bench.reason, until=bench.until)))

    async def _play_set(self, arena: Arena, deal_set: DealSet, on_cluster: bool) -> None:
        """Play the set's tables in order. Every finished game counts at once; a table a
        registered bot cannot sit at because it left is recorded as its forfeit, so
        leaving never un-plays a game."""
        s = self.settings
        progress = SetProgress(deal_set)
        self.sets.start(deal_set)
        for game in deal_set.games:
            if self.stop.is_set():
                progress.cut_short("the ladder stopped")
                break
            benched = [b for b in deal_set.bots if self.quarantine.benched(b) is not None]
            if benched:
                progress.cut_short(f"{', '.join(benched)} benched")
                break
            self._sync_entrants(arena, only=deal_set.bots)
            left = [] if on_cluster else self._left(arena, deal_set)
            if left:  # never wait for it (that would hold the others up): it forfeits
                progress.cut_short(f"{', '.join(left)}: not connected")
                seat = game.seats.index(left[0])
                result = forfeit_result(
                    game.key, s.rules, game.seed, game.seats, seat, FaultKind.DISCONNECT,
                    f"left before table {game.table} of its deal set was played",
                    s.time_control, s.fault_policy)
            else:
                try:
                    played = await self._play(arena, game, on_cluster)
                except ClusterError as e:  # the game killed worker after worker
                    log.error("deal set %s: %s", deal_set.key, e)
                    progress.cut_short(str(e))
                    break
                if played is None:
                    progress.cut_short(
                        "interrupted: the ladder stopped" if self.stop.is_set()
                        or not on_cluster else
                        f"lost the Dask cluster at {self.cluster.where if self.cluster else '?'}")
                    break
                result = played
            self._record(deal_set, game, result, progress)
            fatal = [f for f in result.faults if f.kind in _FATAL]
            if fatal and progress.next_table() is not None:  # its next table: it is back,
                progress.cut_short(f"{fatal[0].bot}: {fatal[0].kind.value}")  # or forfeits
        self.sets.finish(progress)
        self.refresh_ratings()

    def _start(self, arena: Arena, deal_set: DealSet, on_cluster: bool) -> None:
        task = asyncio.ensure_future(self._play_set(arena, deal_set, on_cluster))
        self._running[task] = on_cluster

        def done(t: asyncio.Task[None]) -> None:
            self._running.pop(t, None)
            self._wake.set()
            if not t.cancelled() and t.exception() is not None:
                log.error("deal set %s failed: %r", deal_set.key, t.exception())

        task.add_done_callback(done)

    def _match(self, arena: Arena) -> None:
        """Start the sets there is room for: on the referee (with a cluster up, only
        sets that seat a registered bot), then house-only sets on the cluster."""
        s = self.settings
        cluster = self.cluster if self.cluster is not None and self.cluster.up else None
        local = s.concurrency - sum(1 for c in self._running.values() if not c)
        if local <= 0 and cluster is None:  # no room: listing every bot would be wasted
            if self.cluster is not None:
                self.cluster.maybe_retry()
            return
        candidates = self._candidates(arena)
        registered = {c.name for c in candidates if c.name not in self._house}
        focused = cluster is not None or not s.house_vs_house
        for deal_set in self.matchmaker.next_sets(
                candidates, local, focus=registered if focused else None):
            self._start(arena, deal_set, on_cluster=False)
        if cluster is not None:
            free = cluster.capacity() - sum(1 for c in self._running.values() if c)
            if free > 0:
                for deal_set in self.matchmaker.next_sets(self._candidates(arena, free), free):
                    self._start(arena, deal_set, on_cluster=True)
        elif self.cluster is not None:
            self.cluster.maybe_retry()

    # ------------------------------------------------------------------ loop

    async def run(self) -> None:
        """Play until ``stop`` is set; running sets are then interrupted (cut short).
        One ladder at a time per store: a second process is refused (StoreError)."""
        with exclusive_writer(self.settings.store, "ladder"):
            await self._run()

    async def _run(self) -> None:
        s = self.settings
        self._restore()
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
            self.arena = arena
            for entrant, seats in s.house:
                arena.add(entrant, seats, s.rules)
            await self.hosting.start(arena)
            arena.server.registry.resolver = self._resolve
            if self.on_listen is not None:
                self.on_listen(arena.server.address)
            stopper = asyncio.ensure_future(self.stop.wait())
            try:
                while not self.stop.is_set():
                    self._sync_entrants(arena)
                    self._match(arena)
                    self.refresh_ratings()  # games not fitted yet, once it is due
                    self._wake.clear()
                    waker = asyncio.ensure_future(self._wake.wait())
                    await asyncio.wait((stopper, waker), timeout=s.poll_seconds,
                                       return_when=asyncio.FIRST_COMPLETED)
                    waker.cancel()
            finally:
                self.events.close()
                stopper.cancel()
                await self.hosting.close()
                arena.stop_games.set()
                if self.cluster is not None:
                    await self.cluster.close()  # its sets in play are cut short
                if self._running:
                    await asyncio.wait(list(self._running), timeout=10.0)
                for task in list(self._running):  # none may write once the lock is gone
                    task.cancel()
                await asyncio.gather(*self._running, return_exceptions=True)
                self.arena = None

    # ------------------------------------------------------------------ operator

    def wake(self) -> None:
        """Look for games to start now (a bot was registered, restored or lifted)."""
        self._wake.set()

    def refresh_ratings(self, *, force: bool = False) -> None:
        """Refit the ratings if due (or ``force``); a refit that moves any bot's line
        is published as a rating-changed event with the lines that moved."""
        before = self.ratings.current
        if self.ratings.refresh(force=force) is before:
            return
        moved = []
        for line in standings(self):
            if not line.rated:
                continue
            key = (line.elo, line.ci95, line.games, line.sweep)
            if self._published.get(line.name) != key:
                self._published[line.name] = key
                moved.append(line)
        if moved:
            self.events.publish(lp.WatchLadderResponse(
                rating_changed=lp.RatingChanged(standings=moved)))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.results.close()
        self.store.close()
