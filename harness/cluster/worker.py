"""The worker side of a cluster run: one arena per worker process, and the task that plays
one game in it.

A Dask worker runs tasks in threads; an :class:`~harness.referee.arena.Arena` is asyncio.
So each worker process keeps, per tournament, one :class:`_WorkerArena`: a thread running
its own event loop, with the arena (its referee server and its local bots) inside. Tasks
hand their game to that loop and wait for the result; the bots stay up between games.
The arenas are closed when the worker stops (:mod:`harness.cluster.plugin`) or when the
client that started them is done (:func:`close_arena`).

Everything a task needs arrives as arguments (an :class:`ArenaSpec` and the game), and
the result goes back as plain data (:func:`result_to_data`), so the client and the
workers share no state but the code: every worker machine needs the same checkout of
the harness and of the bots, at the same paths (see ``docs/cluster.md``).
"""

from __future__ import annotations

import asyncio
import atexit
import dataclasses
import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.referee.arena import Arena
from harness.referee.outcome import (
    Fault,
    FaultPolicy,
    GameResult,
    Termination,
    TimeControl,
)
from harness.referee.pool import Entrant
from harness.rules.config import RulesConfig

__all__ = ["ArenaSpec", "GameOrder", "close_arena", "play_game", "result_from_data",
           "result_to_data"]


@dataclasses.dataclass(frozen=True)
class ArenaSpec:
    """What a worker's arena holds: the local bots (each with the seats it fills in one
    game), the rules, and where the bots' logs go. ``key`` names the arena on the worker
    (one per tournament)."""

    key: str
    entrants: tuple[Entrant, ...]
    seats: Mapping[str, int]
    rules: RulesConfig
    log_dir: str

    @classmethod
    def make(cls, name: str, entrants: Sequence[Entrant], seats: Mapping[str, int],
             rules: RulesConfig, log_dir: Path) -> ArenaSpec:
        """The arena of ``entrants`` for the tournament or ladder ``name``. Its key
        changes with the bots, the rules and the log folder, so a changed configuration
        gets fresh bots on the workers."""
        digest = hashlib.sha256(json.dumps(
            [repr(tuple(entrants)), rules.to_dict(), str(log_dir)], sort_keys=True,
            default=str).encode()).hexdigest()[:12]
        return cls(f"{name}-{digest}", tuple(entrants), dict(seats), rules,
                   str(log_dir.resolve()))


@dataclasses.dataclass(frozen=True)
class GameOrder:
    """One game to play."""

    key: str
    seed: int
    seats: tuple[str, ...]
    time_control: TimeControl
    policy: FaultPolicy


# --------------------------------------------------------------------------- results


def result_to_data(result: GameResult) -> dict[str, Any]:
    """A game result as plain data (what a task returns)."""
    return {"game_id": result.game_id, "seats": list(result.seats),
            "termination": result.termination.value, "scores": list(result.scores),
            "places": list(result.places), "winner": result.winner, "hands": result.hands,
            "faults": [f.to_dict() for f in result.faults], "record": result.record,
            "duration_s": result.duration_s, "detail": result.detail}


def result_from_data(data: Mapping[str, Any]) -> GameResult:
    faults = tuple(Fault.from_dict(f) for f in data["faults"])
    return GameResult(data["game_id"], tuple(data["seats"]), Termination(data["termination"]),
                      tuple(data["scores"]), tuple(data["places"]), data["winner"],
                      data["hands"], faults, dict(data["record"]), data["duration_s"],
                      data["detail"])


# --------------------------------------------------------------------------- arenas


class _WorkerArena:
    """An arena on its own event loop thread, shared by the worker's task threads."""

    def __init__(self, spec: ArenaSpec, games_at_once: int, worker_name: str) -> None:
        self.spec = spec
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever,
                                       name=f"euchre-arena-{spec.key}", daemon=True)
        self.thread.start()
        log_dir = Path(spec.log_dir) / _safe(worker_name)
        self.arena: Arena = self._call(self._open(log_dir, games_at_once))

    async def _open(self, log_dir: Path, games_at_once: int) -> Arena:
        arena = Arena(log_dir=log_dir)
        await arena.__aenter__()
        for entrant in self.spec.entrants:
            arena.add(entrant, self.spec.seats[entrant.name] * games_at_once, self.spec.rules)
        return arena

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def play(self, order: GameOrder) -> GameResult:
        result: GameResult = self._call(self.arena.play(
            order.key, self.spec.rules, order.seed, order.seats,
            time_control=order.time_control, policy=order.policy))
        return result

    def close(self) -> None:
        """Close the arena at once: a game still running here has nobody left to report
        to (the client is done with it, or the worker stops), so it is dropped rather
        than given the arena's grace period."""
        try:
            self._call(self._close())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)


    async def _close(self) -> None:
        self.arena.drop_games()
        await self.arena.close()


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name) or "worker"


_ARENAS: dict[str, _WorkerArena] = {}
_LOCK = threading.Lock()


def _arena(spec: ArenaSpec) -> _WorkerArena:
    with _LOCK:
        arena = _ARENAS.get(spec.key)
        if arena is None:
            name, threads = _worker_identity()
            arena = _ARENAS[spec.key] = _WorkerArena(spec, threads, name)
        return arena


def _worker_identity() -> tuple[str, int]:
    """This worker's address and how many tasks it runs at once (outside a worker, as
    in a test calling the task directly: ``("local", 1)``)."""
    try:
        from distributed import get_worker
        worker = get_worker()
    except ValueError:
        return "local", 1
    return worker.address, max(1, worker.state.nthreads)


def close_arena(key: str | None = None) -> int:
    """Close this process's arena of tournament ``key`` (``None``: every arena), stopping
    its bots. Returns how many were closed."""
    with _LOCK:
        keys = list(_ARENAS) if key is None else [k for k in (key,) if k in _ARENAS]
        closing = [_ARENAS.pop(k) for k in keys]
    for arena in closing:
        arena.close()
    return len(closing)


atexit.register(close_arena)


def play_game(spec: ArenaSpec, order: GameOrder) -> dict[str, Any]:
    """The task: play one game in this worker's arena. Returns the result as plain data,
    with ``worker`` (this worker's address, also added to the game's record)."""
    arena = _arena(spec)
    result = arena.play(order)
    data = result_to_data(result)
    data["worker"] = _worker_identity()[0]
    data["record"]["worker"] = data["worker"]  # stored with the game
    return data
