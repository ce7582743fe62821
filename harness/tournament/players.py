"""Who plays a tournament's games: the runner's local arena, or a Dask cluster.

The runner asks a :class:`GamePlayer` for one game at a time and stores what comes back;
both players give a result and where it was played (a worker's address, or ``""``
here); a start-up failure's detail quotes the end of the failing bot's log.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Protocol

from harness.cluster.client import ClusterPlayer, Placed
from harness.cluster.worker import ArenaSpec, GameOrder
from harness.competition.seatings import ScheduledGame
from harness.errors import ConfigError
from harness.referee.arena import Arena
from harness.referee.inprocess import BotFactory, InProcessArena, command_factory
from harness.tournament.config import TournamentConfig

__all__ = ["GamePlayer", "LocalPlayer", "Placed", "cluster_player", "in_process_arena"]


class GamePlayer(Protocol):
    async def play(self, game: ScheduledGame, cfg: TournamentConfig) -> Placed | None:
        """Play ``game``; ``None`` if it was dropped by :meth:`cancel`."""

    def cancel(self) -> None:
        """Drop the games not started yet (running local games finish)."""

    def stop(self) -> None:
        """Stop: running games end interrupted (or are dropped on a cluster)."""


class LocalPlayer:
    """The games played in this process's arena (over gRPC, or in process)."""

    def __init__(self, arena: Arena | InProcessArena) -> None:
        self.arena = arena

    async def play(self, game: ScheduledGame, cfg: TournamentConfig) -> Placed | None:
        result = await self.arena.play(game.key, cfg.rules, game.seed, game.seats,
                                       time_control=cfg.time_control, policy=cfg.fault_policy)
        return result, ""

    def cancel(self) -> None:
        pass  # the runner schedules no more; the games in progress are stored as usual

    def stop(self) -> None:
        self.arena.stop_games.set()


class _ClusterGames:
    """The games played on a Dask cluster (:class:`ClusterPlayer`)."""

    def __init__(self, player: ClusterPlayer) -> None:
        self.player = player

    def slots(self) -> int:
        """Games in flight: two per worker thread, so no worker waits for the next."""
        return 2 * self.player.slots()

    async def play(self, game: ScheduledGame, cfg: TournamentConfig) -> Placed | None:
        return await self.player.play(GameOrder(game.key, game.seed, tuple(game.seats),
                                                cfg.time_control, cfg.fault_policy))

    def cancel(self) -> None:
        self.player.cancel()

    def stop(self) -> None:
        self.player.cancel()


def in_process_arena(cfg: TournamentConfig,
                     factories: Mapping[str, BotFactory]) -> InProcessArena:
    """The in-process arena for ``cfg``: each bot from ``factories`` or, failing that,
    from its command's ``in_process_bot`` (a remote bot cannot play in process)."""
    arena = InProcessArena(factories)
    for i, bot in enumerate(cfg.bots):
        if bot.name in factories:
            continue
        if bot.command is None:
            raise ConfigError(f"bot[{i}]", f"{bot.name} is a remote bot: it cannot play "
                                           f"in process")
        arena.add(bot.name, command_factory(bot.command, bot.env, name=f"bot[{i}]"))
    return arena


def arena_spec(cfg: TournamentConfig, log_dir: Path) -> ArenaSpec:
    """The workers' arena for ``cfg``: its local bots with the seats each fills in one
    game."""
    per_game = cfg.make_format().seats_per_entrant()
    bots = [b for b in cfg.bots if per_game.get(b.name, 0)]
    return ArenaSpec.make(cfg.id, [b.entrant() for b in bots],
                          {b.name: per_game[b.name] for b in bots}, cfg.rules, log_dir)


@asynccontextmanager
async def cluster_player(cfg: TournamentConfig, log_dir: Path) -> AsyncIterator[_ClusterGames]:
    """The cluster of ``cfg`` (its scheduler, or a local one of ``cfg.workers``)."""
    async with ClusterPlayer(arena_spec(cfg, log_dir), scheduler=cfg.scheduler,
                             workers=cfg.workers) as player:
        yield _ClusterGames(player)
