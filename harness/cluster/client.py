"""The client side of a cluster run: hand games to Dask workers and wait for their results.

:class:`ClusterPlayer` connects to a scheduler (``tcp://HOST:8786``) or starts a
cluster of worker processes on this machine (:class:`~harness.cluster.local.
LocalWorkers`: out of the terminal's process group, so that Ctrl-C reaches only this
process), registers :class:`ArenaPlugin` on the
workers, and turns each game into one Dask task (:func:`~harness.cluster.worker.
play_game`). It never touches the results store: the caller stores what it returns, so
the store keeps one writer.

Faults of the cluster:

* a worker that dies mid-game: the scheduler gives its tasks to another worker (the
  game is played again from the start; the caller sees one result);
* a task that kills workers again and again (Dask gives up after
  ``distributed.scheduler.allowed-failures``): :class:`ClusterError`;
* the scheduler lost: :class:`ClusterLost` (a :class:`ClusterError`); the caller stops,
  and the run resumes later.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from pathlib import Path
from types import TracebackType
from typing import Any

from harness.cluster.local import LocalWorkers
from harness.cluster.worker import (
    ArenaSpec,
    GameOrder,
    close_arena,
    play_game,
    result_from_data,
)
from harness.errors import ClusterError, ClusterLost
from harness.referee.outcome import GameResult

__all__ = ["ClusterPlayer", "Placed", "where"]

log = logging.getLogger("euchre.cluster")

CONNECT_TIMEOUT = 30.0
"""Seconds to wait for the scheduler, and for its first worker."""

WORKERS_LOG = "dask-workers.log"
"""Where, in the run's log folder, the workers of a local cluster write their output."""

Placed = tuple[GameResult, str]
"""A result and the worker that played it (a start-up failure's detail quotes the end
of the failing bot's log on that worker)."""


def _distributed() -> Any:
    import distributed  # imported on first use: it takes a while

    return distributed


def _quiet_dask() -> None:
    """Only Dask's critical messages from now on, for the rest of the process: a closed
    client's connections still log as they wind down (a lost scheduler's comm, with its
    traceback) after ``close()`` has returned, so levels put back then would let those
    through."""
    names = ["distributed", *(n for n in logging.root.manager.loggerDict
                              if n.startswith("distributed."))]
    for name in names:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def where(scheduler: str | None, workers: int) -> str:
    """The cluster, as messages name it: its scheduler's address, or the local one."""
    if scheduler:
        return scheduler
    return f"a local cluster of {workers} worker{'' if workers == 1 else 's'}"


class ClusterPlayer:
    """Plays games on a Dask cluster. Use as ``async with``; ``scheduler`` is the address
    of a running scheduler, or ``workers`` the number of local worker processes to start
    (one game at a time each)."""

    def __init__(self, spec: ArenaSpec, *, scheduler: str | None = None,
                 workers: int = 0) -> None:
        if bool(scheduler) == bool(workers):
            raise ClusterError("give either a scheduler address or a number of local workers")
        self.spec = spec
        self.scheduler = scheduler
        self.workers = workers
        self.client: Any = None
        self.cluster: Any = None
        self._pending: set[Any] = set()
        self._cancelled = False
        self._cancelling: asyncio.Future[Any] | None = None
        self._run_id = secrets.token_hex(4)

    @property
    def where(self) -> str:
        return where(self.scheduler, self.workers)

    async def __aenter__(self) -> ClusterPlayer:
        distributed = _distributed()
        # Dask logs a traceback for each failed reconnection to a lost scheduler; the
        # run reports the loss itself, in one line.
        _quiet_dask()
        try:
            if self.scheduler:
                self.client = await distributed.Client(self.scheduler, asynchronous=True,
                                                       timeout=CONNECT_TIMEOUT)
            else:
                self.cluster = LocalWorkers(self.workers,
                                            Path(self.spec.log_dir) / WORKERS_LOG)
                address = await self.cluster.start()
                self.client = await distributed.Client(address, asynchronous=True,
                                                       security=self.cluster.security,
                                                       timeout=CONNECT_TIMEOUT)
            from harness.cluster.plugin import ArenaPlugin
            await self.client.register_plugin(ArenaPlugin(), name=ArenaPlugin.name)
            # A local cluster is whole before the first game (its size is the run's
            # number of games at once); of a remote one, one worker is enough to begin.
            if self.cluster is not None:
                await self.cluster.until_up(self.client)
            else:
                await self.client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as e:
            await self._close_client()
            raise ClusterError(f"cannot use the Dask cluster at {self.where}: {e}") from None
        except BaseException:  # cancelled while connecting, or anything else: no leak
            await asyncio.shield(self._close_client())
            raise
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.close()

    def slots(self) -> int:
        """Games the workers can play at once now (their threads). An asynchronous
        client's cached scheduler information keeps the cluster's totals current, but
        drops the per-worker table after its first periodic refresh, so the total
        comes first."""
        info = self.client.scheduler_info()
        threads = info.get("total_threads") or sum(
            int(w.get("nthreads", 1)) for w in info.get("workers", {}).values())
        return max(1, int(threads))

    async def play(self, order: GameOrder) -> Placed | None:
        """Play one game on some worker; ``None`` if :meth:`cancel` dropped it. Raises
        :class:`ClusterLost` if the scheduler is lost, and :class:`ClusterError` if the
        game keeps killing workers or the task failed on the worker (a bot's faults never
        fail it: they are results)."""
        distributed = _distributed()
        if self._cancelled:
            return None
        future = self.client.submit(play_game, self.spec, order, pure=False,
                                    key=f"euchre-{self.spec.key}-{order.key}-{self._run_id}")
        self._pending.add(future)
        try:
            data = await future
        except distributed.client.FutureCancelledError as e:
            if self._cancelled:
                return None
            raise self._lost(e) from None
        except distributed.KilledWorker as e:
            raise ClusterError(f"game {order.key!r} was running on a worker that died, "
                               f"again and again ({e}); stopped: is one of its bots "
                               f"exhausting the machine?") from None
        except asyncio.CancelledError:
            if self._cancelled:
                return None
            raise  # this coroutine was cancelled (the run is being torn down)
        except Exception as e:
            if future.status == "error":  # the task itself raised, on the worker
                raise ClusterError(f"game {order.key!r} failed on a worker: "
                                   f"{type(e).__name__}: {e}") from e
            if self._cancelled:
                # Dropped: the games of a run that stops for a lost scheduler (its
                # first game to see the loss said so) end with the broken connection.
                return None
            if isinstance(e, OSError):
                raise self._lost(e) from None  # the connection to the scheduler broke
            raise
        finally:
            self._pending.discard(future)
        return result_from_data(data), str(data["worker"])

    def _lost(self, e: BaseException) -> ClusterLost:
        why = getattr(e, "reason", "") or f"{type(e).__name__}: {e}".splitlines()[0]
        return ClusterLost(f"lost the Dask scheduler at {self.where} ({why})")

    def cancel(self) -> None:
        """Drop every game not finished yet (an SPRT that decided, a run that stops)."""
        self._cancelled = True
        if self._pending and self.client is not None and self._cancelling is None:
            self._cancelling = asyncio.ensure_future(self.client.cancel(list(self._pending)))

    async def close(self) -> None:
        self.cancel()
        if self._cancelling is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._cancelling, 10)
        log.debug("closing the arenas on the workers of %s", self.where)
        if self.client is not None and self.client.status == "running":
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.client.run(close_arena, self.spec.key), 30)
        log.debug("closing the client (and the workers of a local cluster)")
        await self._close_client()
        log.debug("closed")

    async def _close_client(self) -> None:
        with contextlib.suppress(Exception):
            if self.client is not None:
                await self.client.close()
        with contextlib.suppress(Exception):
            if self.cluster is not None:
                await self.cluster.close()
        self.client = self.cluster = None

