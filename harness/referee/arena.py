"""An arena: a referee server plus a pool of bots, playing games on request.

This is what ``euchre-harness match`` and the tournament runner use::

    async with Arena(log_dir=Path("results/logs")) as arena:
        arena.add(Entrant("random", BotCommand(("python", "-m", "sample_bots.random_bot"))), 2)
        result = await arena.play("g1", RulesConfig(), seed=1, seats=["random"] * 4)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from harness.errors import BotStartupError
from harness.protocol.tls import ServerTLS
from harness.referee.match import GameRunner, forfeit_places, game_result
from harness.referee.outcome import (
    Fault,
    FaultKind,
    FaultPolicy,
    GameResult,
    Termination,
    TimeControl,
)
from harness.referee.pool import BotPool, Entrant, Instance
from harness.referee.server import RefereeServer
from harness.rules.config import RulesConfig
from harness.rules.game import Game


class Arena:
    """A pool of bots playing on a referee server. It starts and stops its own server,
    or, given ``server=``, shares a running one (each tournament on ``serve`` has its
    own arena, so entrants of different tournaments never mix)."""

    def __init__(self, *, log_dir: Path, host: str = "127.0.0.1", port: int = 0,
                 startup_timeout: float = 20.0, shutdown_grace: float = 5.0,
                 server: RefereeServer | None = None, tls: ServerTLS | None = None) -> None:
        self.owns_server = server is None
        self.server = server or RefereeServer(host, port, tls=tls)
        self.pool = BotPool(self.server, log_dir, startup_timeout=startup_timeout)
        self.shutdown_grace = shutdown_grace
        self.stop_games = asyncio.Event()
        self._running: set[asyncio.Task[GameResult]] = set()
        self.server.on_shutdown(self._interrupt_running)

    async def __aenter__(self) -> Arena:
        if self.owns_server:
            await self.server.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.close()

    async def close(self) -> None:
        try:
            if self.owns_server:
                await self.server.stop(grace=1.0)
            else:
                self.server.remove_shutdown_callback(self._interrupt_running)
        finally:
            await self.pool.close()

    def drop_games(self) -> None:
        """End every game in progress at once, without a result, even one still waiting
        for its bots to start: for an arena whose results nobody waits for any more."""
        self.stop_games.set()
        for task in self._running:
            task.cancel()

    async def _interrupt_running(self) -> None:
        """Shutdown: let running games finish within the grace period, then interrupt
        them (they end with an INTERRUPTED result at their next decision)."""
        if self._running:
            await asyncio.wait(self._running, timeout=self.shutdown_grace)
        self.stop_games.set()
        if self._running:
            await asyncio.wait(self._running, timeout=5.0)

    def add(self, entrant: Entrant, instances: int, rules: RulesConfig | None = None) -> None:
        self.pool.add(entrant, instances, rules)

    async def play(self, game_id: str, config: RulesConfig, seed: int, seats: Sequence[str],
                   *, time_control: TimeControl | None = None,
                   policy: FaultPolicy | None = None) -> GameResult:
        """Play one game with the named entrants in seat order. Never raises for a bot's
        fault: a bot that cannot be started forfeits."""
        task = asyncio.ensure_future(self._play(game_id, config, seed, seats, time_control,
                                                policy))
        self._running.add(task)
        try:
            return await task
        finally:
            self._running.discard(task)

    async def _play(self, game_id: str, config: RulesConfig, seed: int, seats: Sequence[str],
                    tc: TimeControl | None, policy: FaultPolicy | None) -> GameResult:
        instances: list[Instance] = []
        try:
            if self._stopping:
                return _interrupted(game_id, seats, "the referee is shutting down")
            instances = await self.pool.acquire(seats)
            for seat, inst in enumerate(instances):
                try:
                    await self.pool.ready(inst)
                except BotStartupError as e:
                    if self._stopping:  # refused or stopped by the shutdown, not its fault
                        return _interrupted(game_id, seats, f"the referee shut down: {e}")
                    inst.slot.faults += 1
                    return forfeit_result(game_id, config, seed, seats, Fault(
                        seat, seats[seat], FaultKind.STARTUP_FAILURE, e.reason,
                        log_tail=e.log_tail), tc or TimeControl(), policy or FaultPolicy())
            for inst in instances:
                inst.slot.game_id = game_id

            async def crashed(seat: int) -> str | None:
                proc = instances[seat].process
                if proc is None:
                    return None
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), 0.5)
                return None if proc.alive else proc.crash_detail()

            def cpu_ns(seat: int) -> int | None:
                proc = instances[seat].process
                return proc.cpu_ns() if proc is not None else None

            sessions = []
            for inst in instances:
                assert inst.slot.session is not None
                sessions.append(inst.slot.session)
            def turn(seat: int, on: bool) -> None:
                proc = instances[seat].process
                if proc is not None:
                    proc.turn(on)

            boxed = any(i.entrant.boxed for i in instances)
            runner = GameRunner(game_id, config, seed, sessions, seats, time_control=tc,
                                policy=policy, stop=self.stop_games, crashed=crashed,
                                cpu_ns=cpu_ns, turn=turn if boxed else None)
            result = await runner.play()
            for inst in instances:
                inst.slot.games_played += 1
            for f in result.faults:
                instances[f.seat].slot.faults += 1
            return result
        finally:
            for inst in instances:
                await self.pool.release(inst)

    @property
    def _stopping(self) -> bool:
        return self.server.shutting_down or self.stop_games.is_set()


def forfeit_result(game_id: str, config: RulesConfig, seed: int, seats: Sequence[str],
                   fault: Fault, tc: TimeControl, policy: FaultPolicy) -> GameResult:
    """A game that could not begin because of ``fault.seat``'s bot (it never started,
    or left before its table): a forfeit charged to that seat with ``fault``, at the
    deal's starting scores, in the shape of a played game's result."""
    game = Game(config, seed)
    places, winner = forfeit_places(config, tuple(game.scores), fault.seat)
    return game_result(game_id, seats, Termination.FORFEIT, fault.forfeit_detail(), game=game,
                       places=places, winner=winner, tc=tc, policy=policy, faults=(fault,),
                       hands=0)


def _interrupted(game_id: str, seats: Sequence[str], detail: str) -> GameResult:
    """A game the shutdown cut before it began: not rated, played again on resume."""
    return game_result(game_id, seats, Termination.INTERRUPTED, detail, game=None)
