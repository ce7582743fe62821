"""Run a tournament: schedule games, play them concurrently in an arena (or on the
workers of a Dask cluster, :mod:`harness.tournament.players`), store each the moment it
ends, and resume a stopped run where it left off. This process is the store's only
writer either way.

One process at a time may run tournaments on a store (:mod:`harness.storage.lock`). A bot
that fails to start ``max_startup_failures`` times in a row (a typo in its command, a
remote bot nobody started) stops the run with :class:`StartupFailuresError`; the games
it forfeited in that streak are not stored, so they are played again on resume. A bot
that started in this run and then fails to show up left: those forfeits are stored at
once (leaving never un-plays a game). Every count the run reports is of stored games.

The games are played on the loop the ladder plays its deal sets on
(:class:`~harness.competition.loop.PlayLoop`), and stored on a thread of their own, in
the order they ended
(:class:`~harness.competition.storing.GameWriter`, as the ladder stores its games), so
that a slow disk never holds up the loop that times the bots' decisions; a game is
counted once its write has returned, and once a write failed nothing more is stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.competition.loop import PlayLoop
from harness.competition.seatings import ScheduledGame
from harness.competition.storing import GameWriter
from harness.errors import ClusterError, ConfigError, StartupFailuresError
from harness.referee.arena import Arena
from harness.referee.inprocess import BotFactory
from harness.referee.outcome import FaultKind, GameResult, Termination
from harness.referee.server import RefereeServer
from harness.storage.lock import exclusive_writer
from harness.storage.results import GameRow, ResultsStore
from harness.tournament.config import TournamentConfig
from harness.tournament.players import (
    GamePlayer,
    LocalPlayer,
    cluster_player,
    in_process_arena,
)
from harness.tournament.schedule import TournamentFormat

log = logging.getLogger("euchre.tournament")

STORE_NAME = "results.sqlite"


def store_path(output: Path) -> Path:
    return output / STORE_NAME


@dataclass
class RunState:
    """Where a run stands. ``done`` counts the games stored (a forfeit held back while
    its bot's start-up streak lasts is not, until it is stored), ``resumed`` those of
    them that were stored before this run started; ``faults`` counts the faults of the
    ``done`` games by kind."""

    done: int = 0
    total: int | None = None
    interrupted: int = 0
    status: str = ""
    finished: bool = False
    resumed: int = 0
    faults: Counter[str] = field(default_factory=Counter)


Played = tuple[ScheduledGame, GameResult]


class _StartupStreaks:
    """Consecutive start-up failures per bot. A streak's forfeits are held back from the
    store until the bot starts again (then they are ordinary forfeits) or the run ends,
    so that a bot nobody could start (a typo, a remote bot nobody launched) does not
    fill the store with forfeits. A bot that did start in this run and then fails to
    show up *left*: its forfeits are stored at once, whatever becomes of the run."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held: dict[str, list[Played]] = {}
        self.streak: Counter[str] = Counter()
        self.started: set[str] = set()

    def add(self, played: Played, where: str = "") -> tuple[list[Played], str | None]:
        """What to store now, and the bot whose streak reached the limit (if one did).
        ``where`` names the cluster worker that played the game: streaks are counted
        per bot and worker, so one worker that cannot start a bot stops the run even
        while the others start it."""
        _, result = played
        failed = [f.bot for f in result.faults if f.kind is FaultKind.STARTUP_FAILURE]
        if failed:
            key = f"{failed[0]}@{where}"
            self.streak[key] += 1
            failing = failed[0] if self.streak[key] >= self.limit else None
            if failed[0] in self.started:
                return [played], failing  # it left after playing: charged now
            self.held.setdefault(key, []).append(played)
            return [], failing
        # Everyone seated started: their earlier failures were not a lasting fault.
        self.started.update(result.seats)
        released = []
        for bot in dict.fromkeys(result.seats):
            self.streak.pop(f"{bot}@{where}", None)
            released += self.held.pop(f"{bot}@{where}", [])
        return [*released, played], None

    def first_failures(self, result: GameResult, where: str = "") -> list[str]:
        """The bots whose start-up failure in ``result`` (just added) began a streak."""
        return [f.bot for f in result.faults if f.kind is FaultKind.STARTUP_FAILURE
                and len(self.held.get(f"{f.bot}@{where}", ())) == 1]

    def release_all(self) -> list[Played]:
        out = [p for streak in self.held.values() for p in streak]
        self.held.clear()
        return out


class TournamentRunner:
    """Plays one tournament to completion (or until ``stop`` is set)."""

    def __init__(self, config: TournamentConfig, *, server: RefereeServer | None = None,
                 host: str = "127.0.0.1", port: int = 0,
                 on_progress: Callable[[RunState], None] | None = None,
                 on_listen: Callable[[str], None] | None = None,
                 stop: asyncio.Event | None = None,
                 max_startup_failures: int | None = None,
                 startup_timeout: float = 20.0,
                 in_process: bool = False,
                 factories: Mapping[str, BotFactory] | None = None,
                 on_notice: Callable[[str], None] | None = None) -> None:
        """``server``: a running referee to play on (its own bots, sessions and logs are
        still this tournament's); by default the tournament starts its own on
        ``host:port`` (remote bots dial that; ``on_listen`` is told the address).
        ``max_startup_failures``: consecutive start-up failures of one bot that stop
        the run (0: never stop; default: the configuration's). ``startup_timeout``:
        how long a game waits for a bot's Hello before that bot forfeits it.
        ``in_process``: play the games in this process (:mod:`harness.referee.inprocess`:
        no referee, no clock, trusted bots) with ``factories`` by bot name, or else each
        bot's command's ``in_process_bot``. ``on_notice`` is told, in one line, why a bot
        did not start the first time it fails in a row."""
        self.config = config
        self.in_process = in_process
        self.factories = dict(factories or {})
        self.server = server
        self.host = host
        self.port = port
        self.on_listen = on_listen
        self.on_progress = on_progress
        self.on_notice = on_notice
        self.stop = stop or asyncio.Event()
        self.state = RunState()
        self.format: TournamentFormat = config.make_format()
        self.max_startup_failures = (config.max_startup_failures if max_startup_failures is None
                                     else max_startup_failures)
        self.startup_timeout = startup_timeout
        self._failure: str | None = None  # why the run stopped itself
        self._lost: ClusterError | None = None  # the cluster was lost
        self._player: GamePlayer | None = None  # while the games are being played
        self._writer: GameWriter | None = None  # stores the games, while it runs

    @property
    def playing(self) -> bool:
        """Whether the run has its arena or cluster and is playing games."""
        return self._player is not None

    def interrupt(self) -> None:
        """Stop now (Ctrl-C): no game starts, and the games in progress end without a
        result (not stored: played again on resume). ``stop`` alone lets them finish."""
        self.stop.set()
        if self._player is not None:
            self._player.stop()

    @property
    def output(self) -> Path:
        return Path(self.config.output)

    async def run(self) -> RunState:
        cfg = self.config
        opening = asyncio.ensure_future(asyncio.to_thread(self._open_store))
        try:
            stack, store, finished = await asyncio.shield(opening)
        except asyncio.CancelledError:
            # The thread goes on: let it end before this run does, so that nothing it
            # writes lands after what the caller stores next (serve stores "cancelled").
            await _undo_opening(opening, cfg.id)
            raise
        with stack:
            self._writer = GameWriter(store, cfg.id, stop_after_failure=True)
            try:
                await self._run(store, finished)
            finally:
                await self._writer.aclose()  # every game handed over is stored
                status = ("finished" if self.state.finished else "interrupted")
                store.set_status(cfg.id, status)
        if self._failure is not None:
            raise StartupFailuresError(self._failure)
        return self.state

    def _open_store(self) -> tuple[contextlib.ExitStack, ResultsStore, dict[str, GameRow]]:
        """Take the store's lock, open it, mark the tournament running and read the games
        it holds; the stack closes the store and releases the lock. Run in a worker
        thread: waiting for a killed run's lock, or reading thousands of stored games
        (114 ms for 800 on a slow 2-core machine), must not hold up the event loop,
        which in ``serve`` plays other tournaments' games and times their bots."""
        cfg = self.config
        stack = contextlib.ExitStack()
        try:
            self.output.mkdir(parents=True, exist_ok=True)
            path = store_path(self.output)
            stack.enter_context(exclusive_writer(path))
            store = stack.enter_context(ResultsStore(path))
            self._extend_if_only_games_grew(store)
            store.ensure_tournament(cfg.id, cfg.name, cfg.to_dict())
            store.set_status(cfg.id, "running")
            finished = {row.game_key: row for row in store.games(cfg.id)}
        except BaseException:
            stack.close()
            raise
        return stack, store, finished

    def _extend_if_only_games_grew(self, store: ResultsStore) -> None:
        """A stored tournament run again with more deal sets per pairing (and nothing
        else changed) is extended: the schedule's first rounds are the same games, so
        only the new rounds are played."""
        cfg = self.config
        if cfg.id not in store.tournament_ids():
            return
        stored = store.tournament_config(cfg.id)
        new = json.loads(json.dumps(cfg.to_dict()))
        if stored == new or "games" not in stored or "games" not in new:
            return
        rest_same = ({k: v for k, v in stored.items() if k != "games"}
                     == {k: v for k, v in new.items() if k != "games"})
        if rest_same and new["games"] > stored["games"]:
            store.replace_tournament_config(cfg.id, new)
            log.info("extending %s from %s to %s deal sets per pairing", cfg.id,
                     stored["games"], new["games"])

    async def _run(self, store: ResultsStore, finished: dict[str, GameRow]) -> None:
        cfg = self.config
        fmt = self.format
        if cfg.public_deals:
            log.warning("%s: remote bots play with the default seed (%d), so anyone can "
                        "work out every deal from a game's id; set seed to a number of your "
                        "own and keep it private", cfg.id, cfg.seed)
        self.state.total = fmt.total()
        if self.in_process:
            local = in_process_arena(cfg, self.factories)
            await self._play_all(LocalPlayer(local), store, fmt, finished, 1)
            return
        if cfg.on_cluster:
            async with cluster_player(cfg, self.output / "logs" / cfg.id) as player:
                await self._play_all(player, store, fmt, finished, player.slots())
            return
        async with Arena(log_dir=self.output / "logs" / cfg.id, server=self.server,
                         host=self.host, port=self.port,
                         startup_timeout=self.startup_timeout) as arena:
            if self.on_listen is not None:
                self.on_listen(arena.server.address)
            per_game = self.format.seats_per_entrant()
            for i, bot in enumerate(cfg.bots):
                seats = per_game.get(bot.name, 0)
                if not seats:
                    continue
                instances = seats * max(1, cfg.concurrency)
                if bot.remote:
                    # A remote bot fills as many seats at once as it has tokens: fewer
                    # tokens only means fewer of its games at a time.
                    if len(bot.tokens) < seats:
                        raise ConfigError(f"bot[{i}].tokens",
                                          f"{bot.name} sits in {seats} seats of one game, so "
                                          f"it needs at least {seats} tokens; got "
                                          f"{len(bot.tokens)}")
                    instances = min(instances, len(bot.tokens))
                arena.add(bot.entrant(), instances, cfg.rules)
            await self._play_all(LocalPlayer(arena), store, fmt, finished,
                                 max(1, cfg.concurrency))

    async def _play_all(self, player: GamePlayer, store: ResultsStore, fmt: TournamentFormat,
                        finished: dict[str, GameRow], at_once: int) -> None:
        """Play the games still to play, ``at_once`` at a time, storing each result."""
        self._player = player
        try:
            await self._play_with(player, store, fmt, finished, at_once)
        finally:
            self._player = None

    async def _play_with(self, player: GamePlayer, store: ResultsStore,
                         fmt: TournamentFormat, finished: dict[str, GameRow],
                         at_once: int) -> None:
        """The format's games on the shared play loop (:class:`PlayLoop`), ``at_once`` at
        a time: each game played, stored in order and recorded in the format."""
        cfg = self.config
        state = self.state
        iterator: Iterator[ScheduledGame] = fmt.games()

        def next_game() -> ScheduledGame | None:
            """The next game still to play; replays stored results into the format."""
            nonlocal iterator
            while True:
                for game in iterator:
                    row = finished.get(game.key)
                    if row is None:
                        return game
                    fmt.record(game, row.ranking)
                    state.done += 1
                    state.resumed += 1
                    state.faults.update(f.kind.value for f in row.faults)
                if fmt.done():
                    return None
                iterator = fmt.games()
                peek = next(iterator, None)
                if peek is None:
                    return None
                iterator = _chain(peek, iterator)

        streaks = _StartupStreaks(self.max_startup_failures or 1 << 62)
        writer = self._writer
        assert writer is not None
        # One game's error (a store that fails) cancels the others at once, so that none
        # plays on while the store and the arena close; the error itself is raised.
        plays: PlayLoop[None] = PlayLoop(fail_fast=True)

        def stopping() -> bool:
            return (self.stop.is_set() or self._failure is not None or self._lost is not None
                    or plays.failed)

        async def store_games(played: Sequence[Played]) -> None:
            """Store games (on the writer's thread, in order) and count them once they
            are stored: ``state.done`` is what the store holds. A write that fails stops
            the run (its error is raised)."""
            if not played:
                return
            try:
                await writer.store_games(played)
            except Exception:
                player.stop()
                raise
            for _, result in played:
                state.done += 1
                state.faults.update(f.kind.value for f in result.faults)

        async def play_one(game: ScheduledGame) -> None:
            try:
                placed = await player.play(game, cfg)
            except ClusterError as e:
                if self._lost is None:
                    self._lost = e
                player.cancel()
                return
            if placed is None:
                return  # dropped: the format decided, or the run stops
            result, where = placed
            if result.termination is Termination.INTERRUPTED:
                state.interrupted += 1
                return  # not stored: played again on resume
            if self._failure is not None or plays.failed:
                return  # the run is stopping: not stored, played again on resume
            to_store, failing = streaks.add((game, result), where)
            await store_games(to_store)
            if failing is not None:
                self._stop_for(player, failing, result, where, left=failing in streaks.started)
                if self.on_progress:
                    self.on_progress(state)
                return
            self._tell_first_failure(streaks, result, where)
            fmt.record(game, result.places)
            if fmt.done():
                player.cancel()  # an SPRT that decided schedules no more
            state.status = fmt.status()
            if self.on_progress:
                self.on_progress(state)

        def fill() -> None:
            while len(plays.running) < at_once and not stopping() and not fmt.done():
                game = next_game()
                if game is None:
                    return  # an open-ended format may need results first
                plays.start(f"game {game.key}", play_one(game), None)

        try:
            await plays.run(fill, self.stop)
        finally:
            await plays.drain()  # the games in flight end (interrupted if stopping)
        if self._lost is not None:
            raise ClusterError(f"{self._lost}; the {state.done} finished games are stored: "
                               f"run the same command again to resume")
        if self._failure is not None:
            return  # the held-back forfeits are dropped: played again on resume
        await store_games(streaks.release_all())
        state.status = fmt.status()
        state.finished = not self.stop.is_set() and state.interrupted == 0
        if self.on_progress:
            self.on_progress(state)

    def _tell_first_failure(self, streaks: _StartupStreaks, result: GameResult,
                            where: str) -> None:
        """Explain at once a bot's first start-up failure in a row (``on_notice``)."""
        if self.on_notice is None or self._failure is not None:
            return
        on = f" on worker {where}" if where else ""
        limit = self.max_startup_failures
        then = f"; the run stops if it fails {limit} times in a row" if limit > 1 else ""
        for bot in streaks.first_failures(result, where):
            self.on_notice(f"bot {bot!r} did not start{on} (it forfeits the game{then}): "
                           f"{startup_failure_reason(bot, result)}")

    def _stop_for(self, player: GamePlayer, bot: str, result: GameResult, where: str, *,
                  left: bool) -> None:
        """Stop the run: ``bot`` failed to start too many times in a row (on the cluster
        worker ``where``); ``left``: it had played in this run, so its forfeits are
        stored. Running games are interrupted (played again on resume)."""
        on = f" on worker {where}" if where else ""
        self._failure = startup_failures_message(
            bot, self.max_startup_failures, result, on=on,
            stops=("the run stops; it had played, so its forfeits are stored" if left
                   else "the run stops (its forfeits are not stored)"))
        player.stop()


def startup_failure_reason(bot: str, result: GameResult) -> str:
    """Why ``bot`` did not start in ``result`` (a game it forfeited by a start-up
    failure), on one line: e.g. "exited with code 1 before the handshake; its log PATH
    ends: ModuleNotFoundError: No module named 'grpc'"."""
    return next(f.explained() for f in result.faults
                if f.kind is FaultKind.STARTUP_FAILURE and f.bot == bot)


def startup_failures_message(bot: str, times: int, result: GameResult, *, on: str = "",
                             stops: str) -> str:
    """The one line that says ``bot`` failed to start ``times`` times in a row (``on``:
    where, e.g. " on worker W"), what ``stops``, and why (from the last ``result``'s
    start-up fault, which quotes the end of its log)."""
    times_text = "to start" if times == 1 else f"to start {times} times in a row"
    return f"bot {bot!r} failed {times_text}{on}, so {stops}: " \
           f"{startup_failure_reason(bot, result)}"


async def _undo_opening(
        opening: asyncio.Future[tuple[contextlib.ExitStack, ResultsStore, dict[str, GameRow]]],
        tournament_id: str) -> None:
    """A run cancelled while its store was being opened (:meth:`TournamentRunner.run`):
    wait for the thread (seconds at most: the lock's and the store's waits are bounded),
    then store the run as interrupted, as a run cancelled later does, and close."""
    while not opening.done():
        with contextlib.suppress(asyncio.CancelledError):  # the caller re-raises its own
            await asyncio.wait([opening])
    if opening.cancelled() or opening.exception() is not None:
        return
    stack, store, _ = opening.result()
    with stack:
        store.set_status(tournament_id, "interrupted")


def _chain(first: ScheduledGame, rest: Iterator[ScheduledGame]) -> Iterator[ScheduledGame]:
    yield first
    yield from rest

