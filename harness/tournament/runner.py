"""Run a tournament: schedule games, play them concurrently in an arena, store each the
moment it ends, and resume a stopped run where it left off."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.errors import ConfigError
from harness.referee.arena import Arena
from harness.referee.outcome import Termination
from harness.referee.server import RefereeServer
from harness.results.rows import to_row
from harness.store import GameRow, ResultsStore
from harness.tournament.config import TournamentConfig
from harness.tournament.schedule import ScheduledGame, TournamentFormat

log = logging.getLogger("euchre.tournament")

STORE_NAME = "results.sqlite"


def store_path(output: Path) -> Path:
    return output / STORE_NAME


@dataclass
class RunState:
    done: int = 0
    total: int | None = None
    interrupted: int = 0
    status: str = ""
    finished: bool = False


class TournamentRunner:
    """Plays one tournament to completion (or until ``stop`` is set)."""

    def __init__(self, config: TournamentConfig, *, server: RefereeServer | None = None,
                 host: str = "127.0.0.1", port: int = 0,
                 on_progress: Callable[[RunState], None] | None = None,
                 on_listen: Callable[[str], None] | None = None,
                 stop: asyncio.Event | None = None) -> None:
        """``server``: a running referee to play on (its own bots, sessions and logs are
        still this tournament's); by default the tournament starts its own on
        ``host:port`` (remote bots dial that; ``on_listen`` is told the address)."""
        self.config = config
        self.server = server
        self.host = host
        self.port = port
        self.on_listen = on_listen
        self.on_progress = on_progress
        self.stop = stop or asyncio.Event()
        self.state = RunState()
        self.format: TournamentFormat = config.make_format()

    @property
    def output(self) -> Path:
        return Path(self.config.output)

    async def run(self) -> RunState:
        cfg = self.config
        self.output.mkdir(parents=True, exist_ok=True)
        with ResultsStore(store_path(self.output)) as store:
            self._extend_if_only_games_grew(store)
            store.ensure_tournament(cfg.id, cfg.name, cfg.to_dict())
            store.set_status(cfg.id, "running")
            try:
                await self._run(store)
            finally:
                status = ("finished" if self.state.finished else "interrupted")
                store.set_status(cfg.id, status)
        return self.state

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

    async def _run(self, store: ResultsStore) -> None:
        cfg = self.config
        fmt = self.format
        finished = {row.game_key: row for row in store.games(cfg.id)}
        self.state.total = fmt.total()
        async with Arena(log_dir=self.output / "logs" / cfg.id, server=self.server,
                         host=self.host, port=self.port) as arena:
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
            await self._play_all(arena, store, fmt, finished)

    async def _play_all(self, arena: Arena, store: ResultsStore, fmt: TournamentFormat,
                        finished: dict[str, GameRow]) -> None:
        cfg = self.config
        state = self.state
        changed = asyncio.Condition()
        outstanding = 0
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
                if fmt.done():
                    return None
                iterator = fmt.games()
                peek = next(iterator, None)
                if peek is None:
                    return None
                iterator = _chain(peek, iterator)

        async def worker() -> None:
            nonlocal outstanding
            while not self.stop.is_set():
                async with changed:
                    game = None if fmt.done() else next_game()
                    while game is None and outstanding and not fmt.done():
                        await changed.wait()  # an open-ended format may need results first
                        game = None if fmt.done() else next_game()
                    if game is None:
                        return
                    outstanding += 1
                try:
                    result = await arena.play(game.key, cfg.rules, game.seed, game.seats,
                                              time_control=cfg.time_control,
                                              policy=cfg.fault_policy)
                finally:
                    async with changed:
                        outstanding -= 1
                        changed.notify_all()
                if result.termination is Termination.INTERRUPTED:
                    state.interrupted += 1
                    continue  # not stored: played again on resume
                store.record_game(to_row(cfg.id, game, result))
                async with changed:
                    fmt.record(game, result.places)
                    state.done += 1
                    state.status = fmt.status()
                    changed.notify_all()
                if self.on_progress:
                    self.on_progress(state)

        await asyncio.gather(*(worker() for _ in range(max(1, cfg.concurrency))))
        state.status = fmt.status()
        state.finished = not self.stop.is_set() and state.interrupted == 0
        if self.on_progress:
            self.on_progress(state)


def _chain(first: ScheduledGame, rest: Iterator[ScheduledGame]) -> Iterator[ScheduledGame]:
    yield first
    yield from rest

