"""Tournaments over gRPC: the tournament half of ``euchre.v1.OperatorService``.

``StartTournament`` takes a TOML configuration (the same format as ``euchre-harness run``)
and runs it in the background on the referee's own arena; ``GetTournament``,
``ListTournaments`` and ``WatchTournament`` report progress and standings;
``CancelTournament`` stops it (finished games stay stored; a later start of the same
configuration resumes).
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from harness._generated.euchre.v1 import referee_pb2 as rpb
from harness.errors import HarnessError
from harness.referee.arena import Arena
from harness.results.summary import standings
from harness.store import ResultsStore
from harness.tournament.config import TournamentConfig, load_config
from harness.tournament.runner import RunState, TournamentRunner, store_path

_STATUS = {
    "pending": rpb.TOURNAMENT_STATUS_PENDING,
    "running": rpb.TOURNAMENT_STATUS_RUNNING,
    "finished": rpb.TOURNAMENT_STATUS_FINISHED,
    "cancelled": rpb.TOURNAMENT_STATUS_CANCELLED,
    "interrupted": rpb.TOURNAMENT_STATUS_INTERRUPTED,
    "failed": rpb.TOURNAMENT_STATUS_FAILED,
}


@dataclass
class _Entry:
    config: TournamentConfig
    runner: TournamentRunner
    task: asyncio.Task[RunState] | None = None
    status: str = "pending"
    detail: str = ""
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    version: int = 0


class TournamentService:
    def __init__(self, arena: Arena, output_root: Path) -> None:
        self.arena = arena
        self.output_root = output_root
        self._entries: dict[str, _Entry] = {}
        self._background: set[asyncio.Task[None]] = set()

    async def _bump(self, entry: _Entry) -> None:
        async with entry.changed:
            entry.version += 1
            entry.changed.notify_all()

    def _progress(self, entry: _Entry) -> rpb.TournamentProgress:
        cfg = entry.config
        rows = []
        path = store_path(Path(cfg.output))
        if path.exists():
            with ResultsStore(path) as store:
                for r in standings(store, cfg.id):
                    rows.append(rpb.StandingsRow(name=r["name"], elo=r["elo"], ci95=r["ci95"],
                                                 games=int(r["games"]), score=r["score"]))
        state = entry.runner.state
        return rpb.TournamentProgress(
            tournament_id=cfg.id, name=cfg.name, status=_STATUS[entry.status],
            games_done=state.done, games_total=state.total or 0, standings=rows,
            detail=entry.detail or state.status)

    async def _entry(self, tournament_id: str,
                     context: grpc.aio.ServicerContext[Any, Any]) -> _Entry:
        entry = self._entries.get(tournament_id)
        if entry is None:
            await context.abort(grpc.StatusCode.NOT_FOUND,
                                f"no tournament {tournament_id!r} on this referee")
        assert entry is not None
        return entry

    async def StartTournament(self, request: rpb.StartTournamentRequest,
                              context: grpc.aio.ServicerContext[Any, Any]
                              ) -> rpb.StartTournamentResponse:
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write(request.config_toml)
            path = Path(f.name)
        try:
            overrides = dict(request.overrides)
            overrides.setdefault("output", str(self.output_root))
            config = load_config(path, overrides)
        except HarnessError as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
            raise
        finally:
            path.unlink(missing_ok=True)
        running = self._entries.get(config.id)
        if running is not None and running.status in ("pending", "running"):
            await context.abort(grpc.StatusCode.ALREADY_EXISTS,
                                f"tournament {config.id!r} is already running")
        entry = _Entry(config, TournamentRunner(config, server=self.arena.server))

        def on_progress(state: RunState) -> None:
            task = asyncio.ensure_future(self._bump(entry))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

        entry.runner.on_progress = on_progress
        self._entries[config.id] = entry
        entry.task = asyncio.ensure_future(self._run(entry))
        return rpb.StartTournamentResponse(tournament_id=config.id)

    async def _run(self, entry: _Entry) -> RunState:
        entry.status = "running"
        await self._bump(entry)
        try:
            state = await entry.runner.run()
            if entry.status == "running":
                entry.status = "finished" if state.finished else "interrupted"
            return state
        except Exception as e:  # a bad bot command, an unusable store...
            entry.status, entry.detail = "failed", f"{type(e).__name__}: {e}"
            raise
        finally:
            await self._bump(entry)

    async def GetTournament(self, request: rpb.GetTournamentRequest,
                            context: grpc.aio.ServicerContext[Any, Any]
                            ) -> rpb.GetTournamentResponse:
        entry = await self._entry(request.tournament_id, context)
        return rpb.GetTournamentResponse(tournament=self._progress(entry))

    async def ListTournaments(self, request: rpb.ListTournamentsRequest,
                              context: grpc.aio.ServicerContext[Any, Any]
                              ) -> rpb.ListTournamentsResponse:
        return rpb.ListTournamentsResponse(
            tournaments=[self._progress(e) for e in self._entries.values()])

    async def CancelTournament(self, request: rpb.CancelTournamentRequest,
                               context: grpc.aio.ServicerContext[Any, Any]
                               ) -> rpb.CancelTournamentResponse:
        entry = await self._entry(request.tournament_id, context)
        if entry.status in ("pending", "running"):
            entry.status = "cancelled"
            entry.detail = request.reason or "cancelled by the operator"
            entry.runner.stop.set()
            if entry.task is not None:
                with contextlib.suppress(Exception):
                    await entry.task
        return rpb.CancelTournamentResponse(tournament=self._progress(entry))

    async def WatchTournament(self, request: rpb.WatchTournamentRequest,
                              context: grpc.aio.ServicerContext[Any, Any]
                              ) -> AsyncIterator[rpb.WatchTournamentResponse]:
        entry = await self._entry(request.tournament_id, context)
        seen = -1
        while True:
            async with entry.changed:
                if entry.version == seen:
                    await entry.changed.wait()
                seen = entry.version
            final = entry.status not in ("pending", "running")
            yield rpb.WatchTournamentResponse(tournament=self._progress(entry))
            if final:
                return
