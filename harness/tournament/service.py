"""Tournaments over gRPC: the tournament half of ``euchre.v1.OperatorService``.

Each tournament lives in its own folder, ``<output>/<id>/``, laid out as ``run --output``
lays out a results folder: ``results.sqlite``, ``report.md``, ``summary.json``,
``games.jsonl`` and ``logs/``, plus the configuration as it was sent (``config.toml``,
``overrides.json``) so that a later run of the referee can list and resume it.

``StartTournament`` takes a TOML configuration (the format of ``euchre-harness run``) and
runs it in the background on the referee's own server; ``GetTournament``,
``ListTournaments`` and ``WatchTournament`` report progress and standings (stored
tournaments of earlier runs included); ``CancelTournament`` stops one at once (finished
games stay stored) and ``ResumeTournament`` continues one that is not running. A
referee shutdown interrupts running tournaments; watchers get that last update.
These calls read the store and fit the ratings, which takes longer as a tournament
grows: they do it in a worker thread, never on the event loop that runs the games and
their clocks, and a watch merges bursts (at most one update per
:data:`WATCH_INTERVAL_S`, and the last one at once); the watchers of a tournament share
each fit.
``SubmitHostedBot`` and ``GetHostedBuildLog`` keep and build uploaded bots
(:mod:`harness.tournament.hosted`) that a configuration names with ``hosted``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import tempfile
import tomllib
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from harness.errors import ConfigError, HarnessError
from harness.protocol import operator as op
from harness.referee.arena import Arena
from harness.results.summary import standings
from harness.storage.results import ResultsStore
from harness.tournament.config import TournamentConfig, hash_tokens, load_config
from harness.tournament.hosted import ServeHosting
from harness.tournament.outputs import tournament_report
from harness.tournament.runner import RunState, TournamentRunner, store_path

log = logging.getLogger("euchre.tournament")

Context = grpc.aio.ServicerContext[Any, Any]
CONFIG_FILE = "config.toml"
OVERRIDES_FILE = "overrides.json"
_ACTIVE = ("pending", "running")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_WATCHERS_DRAIN_S = 2.0
WATCH_INTERVAL_S = 0.5  # a watch's updates, but the last, are at least this far apart


def override_text(key: str, text: str) -> str:
    """An override's TOML text as the plain text ``--set`` takes: ``'"two-handed"'`` ->
    ``two-handed``, ``true`` -> ``true``, ``["a", "b"]`` -> ``a,b``. Text that is not one
    TOML value (a bare word such as ``cutthroat``, or ``1.0+10``) is kept as it is."""
    if "\n" in text:
        raise ConfigError(key, "an override value is one line of TOML")
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text.strip()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, dict):
        raise ConfigError(key, "an override value cannot be a table")
    return str(value)


def _parse(config_toml: str, overrides: Mapping[str, str]) -> TournamentConfig:
    """Validate a configuration sent over the wire (relative paths are resolved again
    once it is saved in the tournament's folder)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / CONFIG_FILE
        path.write_text(config_toml, encoding="utf-8")
        return load_config(path, overrides)


@dataclass
class _Entry:
    """A tournament run by this process."""

    config: TournamentConfig
    runner: TournamentRunner
    task: asyncio.Task[None] | None = None  # _run: the run, then its results
    play: asyncio.Task[RunState] | None = None  # the runner itself
    status: str = "pending"
    detail: str = ""
    version: int = 0
    ended: bool = False  # its last update is out
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    stamp: int = 0  # the service's count of changes at this tournament's last change
    on_change: Callable[[_Entry], None] | None = None
    # The progress its watchers were last sent, as of which version: one fit for them all.
    watched: tuple[int, asyncio.Future[op.TournamentProgress]] | None = None

    def notify(self) -> None:
        self.version += 1
        event, self.changed = self.changed, asyncio.Event()
        event.set()
        if self.on_change is not None:
            self.on_change(self)


async def _merge_changes(entry: _Entry) -> None:
    """Let a tournament's changes gather for :data:`WATCH_INTERVAL_S`, or until it ends."""
    loop = asyncio.get_running_loop()
    until = loop.time() + WATCH_INTERVAL_S
    while not entry.ended and (left := until - loop.time()) > 0:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(left):
                await entry.changed.wait()


class TournamentService:
    """Implements :class:`harness.referee.operator.TournamentCalls` for a referee."""

    def __init__(self, arena: Arena, output_root: Path, *,
                 hosting: ServeHosting | None = None) -> None:
        self.arena = arena
        self.output_root = output_root
        self.hosting = hosting or ServeHosting(output_root)
        self._entries: dict[str, _Entry] = {}
        self._watchers = 0
        self._no_watchers = asyncio.Event()
        self._no_watchers.set()
        self.changes = 0  # bumped whenever any tournament of this process changes
        self._changed = asyncio.Event()
        arena.server.on_shutdown(self.shutdown)

    # ------------------------------------------------------------------ folders

    def folder(self, tournament_id: str) -> Path:
        return self.output_root / tournament_id

    def _known(self, tournament_id: str) -> bool:
        return (tournament_id in self._entries
                or (bool(_ID.fullmatch(tournament_id))
                    and (self.folder(tournament_id) / CONFIG_FILE).is_file()))

    def _load(self, tournament_id: str) -> TournamentConfig:
        """The saved configuration, with its output set to the tournament's folder."""
        folder = self.folder(tournament_id)
        extra = folder / OVERRIDES_FILE
        overrides: dict[str, str] = (json.loads(extra.read_text(encoding="utf-8"))
                                     if extra.is_file() else {})
        overrides["output"] = str(folder)
        return load_config(folder / CONFIG_FILE, overrides)

    def _stored_ids(self) -> list[str]:
        if not self.output_root.is_dir():
            return []
        configs = [p / CONFIG_FILE for p in self.output_root.iterdir()
                   if _ID.fullmatch(p.name) and (p / CONFIG_FILE).is_file()]
        return [c.parent.name for c in sorted(configs, key=lambda c: c.stat().st_mtime_ns)]

    # ------------------------------------------------------------------ progress

    async def _progress_soon(self, tournament_id: str, *,
                             fit: bool = True) -> op.TournamentProgress:
        """:meth:`_progress` in a worker thread: it reads the store and fits the
        ratings (150 ms at 800 games on a slow 2-core machine, growing with the games),
        which on the event loop would hold up every game and clock of the referee."""
        return await asyncio.to_thread(self._progress, tournament_id, fit=fit)

    async def _watched_progress(self, entry: _Entry, tournament_id: str,
                                version: int) -> op.TournamentProgress:
        """The progress of a tournament run here as of its change ``version`` or later,
        for its watchers: the first watcher to ask at a version starts the fit, and every
        other one that asks at the same version gets the same answer (the live page's
        feed does the same for its clients), so N watchers cost one fit, not N."""
        shared = entry.watched
        if shared is None or shared[0] != version:
            shared = (version, asyncio.ensure_future(self._progress_soon(tournament_id)))
            entry.watched = shared
        # Shielded: a watcher that leaves does not cancel the others' answer.
        return await asyncio.shield(shared[1])

    def _progress(self, tournament_id: str, *, fit: bool = True) -> op.TournamentProgress:
        """The tournament's progress as stored; its standings only with ``fit`` (the
        status and counts alone, as a check of the status needs, fit no ratings)."""
        entry = self._entries.get(tournament_id)
        config: TournamentConfig | None = entry.config if entry else None
        detail = ""
        if config is None:
            try:
                config = self._load(tournament_id)
            except (HarnessError, OSError, ValueError) as e:
                detail = f"its saved configuration cannot be read: {e}"
        rows: list[dict[str, Any]] = []
        status, done = "interrupted", 0
        path = store_path(self.folder(tournament_id))
        if path.exists():
            with ResultsStore(path) as store:
                for tid, _, stored, count in store.tournament_summaries():
                    if tid == tournament_id:
                        status, done = stored, count
                        if fit:
                            rows = standings(
                                store, tid, anchor=config.anchor if config else None,
                                anchor_rating=config.anchor_rating if config else 0.0)
        total = 0
        if config is not None:
            total = config.make_format().total() or 0
        name = config.name if config else tournament_id
        if entry is not None:
            state = entry.runner.state
            # A final status is shown once its files (report.html, summary.json) are
            # written: until then the tournament is still finishing.
            shown = entry.status if entry.ended or entry.status == "pending" else "running"
            return op.progress(tournament_id, name, shown, done,  # what is stored
                               state.total or total, rows, entry.detail or state.status)
        if status in _ACTIVE:  # stored as running: the referee stopped while it ran
            status, detail = "interrupted", detail or "the referee stopped while it ran"
        return op.progress(tournament_id, name, status, done, total, rows, detail)

    async def _require(self, tournament_id: str, context: Context) -> None:
        if not self._known(tournament_id):
            await context.abort(grpc.StatusCode.NOT_FOUND,
                                f"no tournament {tournament_id!r} on this referee")

    # ------------------------------------------------------------------ read-only views

    def tournament_ids(self) -> list[str]:
        """Every tournament: the stored ones, oldest first, then those started since."""
        ids = self._stored_ids()
        return ids + [tid for tid in self._entries if tid not in ids]

    def known(self, tournament_id: str) -> bool:
        return self._known(tournament_id)

    def running(self) -> list[str]:
        """The tournaments running (or about to) in this process."""
        return [tid for tid, e in self._entries.items() if e.status in _ACTIVE]

    def stored_games(self, tournament_id: str) -> int:
        """How many of a tournament's games are stored."""
        path = store_path(self.folder(tournament_id))
        if not path.exists():
            return 0
        with ResultsStore(path) as store:
            return store.count_games(tournament_id)

    def public_progress(self, tournament_id: str) -> dict[str, Any]:
        """Progress and standings as plain data, for pages anyone may read: ``detail`` is
        only the format's own progress line (error texts, which can quote a bot's command
        line or log, are for operators: GetTournament). Only reads, so it may be called
        from a worker thread."""
        data = op.progress_to_dict(self._progress(tournament_id))
        entry = self._entries.get(tournament_id)
        data["detail"] = entry.runner.state.status if entry is not None else ""
        return data

    def config_of(self, tournament_id: str) -> TournamentConfig | None:
        """A tournament's configuration; None if its saved one cannot be read."""
        entry = self._entries.get(tournament_id)
        if entry is not None:
            return entry.config
        try:
            return self._load(tournament_id)
        except (HarnessError, OSError, ValueError):
            return None

    def version_of(self, tournament_id: str) -> int:
        """A tournament's version: a view built at one version stays true until the
        version moves (-1: stored by an earlier run, and not run since)."""
        entry = self._entries.get(tournament_id)
        return -1 if entry is None else entry.stamp

    async def wait_change(self, seen: int) -> int:
        """Wait until :attr:`changes` differs from ``seen``; return it."""
        while self.changes == seen:
            await self._changed.wait()
        return self.changes

    def _bump(self, entry: _Entry) -> None:
        self.changes += 1
        entry.stamp = self.changes
        event, self._changed = self._changed, asyncio.Event()
        event.set()

    # ------------------------------------------------------------------ running

    def _launch(self, config: TournamentConfig) -> _Entry:
        entry = _Entry(config, TournamentRunner(config, server=self.arena.server),
                       on_change=self._bump)
        entry.runner.on_progress = lambda state: entry.notify()
        self._entries[config.id] = entry
        self._bump(entry)
        entry.task = asyncio.ensure_future(self._run(entry))
        return entry

    async def _run(self, entry: _Entry) -> None:
        if entry.status == "pending":  # not cancelled before it began
            entry.status = "running"
            entry.notify()
            entry.play = asyncio.ensure_future(entry.runner.run())
            try:
                state: RunState = await entry.play
                if entry.status == "running":
                    entry.status = "finished" if state.finished else "interrupted"
            except asyncio.CancelledError:  # CancelTournament, or a shutdown's last resort
                if entry.status == "running":
                    entry.status = "interrupted"
            except Exception as e:  # a bad bot command, an unusable store...
                log.warning("tournament %s failed: %r", entry.config.id, e)
                entry.status, entry.detail = "failed", f"{type(e).__name__}: {e}"
        try:
            await asyncio.to_thread(self._finish, entry.config, entry.status)
        except Exception as e:
            log.error("tournament %s: cannot write its results: %r", entry.config.id, e)
            entry.detail = entry.detail or f"cannot write its results: {e}"
        entry.ended = True
        entry.notify()

    @staticmethod
    def _finish(config: TournamentConfig, status: str) -> None:
        """Store the final status (the runner stores finished or interrupted; a
        tournament cancelled before it began is stored too, so that it is known after a
        restart) and write report.md, summary.json and games.jsonl as ``run`` does."""
        with ResultsStore(store_path(Path(config.output))) as store:
            store.ensure_tournament(config.id, config.name, config.to_dict())
            if status in ("cancelled", "failed") or store.tournament_status(config.id) in _ACTIVE:
                store.set_status(config.id, status)
        tournament_report(config)

    async def shutdown(self) -> None:
        """The referee is stopping: no new game starts, games in progress are interrupted
        by their arenas, and each watcher gets the INTERRUPTED update before its stream
        ends."""
        active = [e for e in self._entries.values() if e.status in _ACTIVE]
        for entry in active:
            entry.runner.stop.set()
        tasks = [e.task for e in active if e.task is not None]
        if tasks:
            # The arenas' own shutdown lets games finish within the grace period, then
            # interrupts them; only a task stuck beyond that is cancelled.
            _, pending = await asyncio.wait(tasks, timeout=self.arena.shutdown_grace + 6.0)
            for entry in active:
                if entry.task in pending and entry.play is not None:
                    entry.play.cancel()
            if pending:
                await asyncio.wait(pending, timeout=5.0)
        if self._watchers:
            await asyncio.wait([asyncio.ensure_future(self._no_watchers.wait())],
                               timeout=_WATCHERS_DRAIN_S)

    # ------------------------------------------------------------------ the calls

    async def StartTournament(self, request: op.StartTournamentRequest,
                              context: Context) -> op.StartTournamentResponse:
        try:
            overrides = {k.strip(): override_text(k.strip(), v)
                         for k, v in request.overrides.items()}
            if "output" in overrides:
                raise ConfigError("output", "a referee keeps each tournament in its own "
                                            "folder under serve --output; it cannot be set")
            config = _parse(request.config_toml, overrides)
        except HarnessError as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
            raise
        try:
            self.hosting.resolve(config)
        except HarnessError as e:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(e))
        tid = config.id
        if self._known(tid) or self.folder(tid).exists():
            await context.abort(
                grpc.StatusCode.ALREADY_EXISTS,
                f"tournament {tid!r} already exists on this referee (status "
                f"{await self._status(tid)}); resume it with ResumeTournament (euchre-harness ctl "
                f"resume {tid}), or give the configuration another name or id")
        folder = self.folder(tid)
        try:
            folder.mkdir(parents=True)
            (folder / CONFIG_FILE).write_text(hash_tokens(request.config_toml),
                                              encoding="utf-8")
            (folder / OVERRIDES_FILE).write_text(json.dumps(overrides, indent=2) + "\n",
                                                 encoding="utf-8")
            config = self.hosting.resolve(self._load(tid))
        except (HarnessError, OSError) as e:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                f"cannot set up tournament {tid!r} in {folder}: {e}")
        self._launch(config)
        return op.StartTournamentResponse(tournament_id=tid)

    async def _status(self, tournament_id: str) -> str:
        try:
            return op.status_name(
                (await self._progress_soon(tournament_id, fit=False)).status)
        except HarnessError:
            return "unknown"

    async def ResumeTournament(self, request: op.ResumeTournamentRequest,
                               context: Context) -> op.ResumeTournamentResponse:
        tid = request.tournament_id
        await self._require(tid, context)
        if await self._status(tid) == "finished":
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                f"tournament {tid!r} is finished: every game is played")
        # From this check to the launch nothing awaits: two resumes at once launch one run.
        entry = self._entries.get(tid)
        if entry is not None and entry.status in _ACTIVE:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                f"tournament {tid!r} is already running")
        try:
            config = self.hosting.resolve(self._load(tid))
        except (HarnessError, OSError, ValueError) as e:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                f"tournament {tid!r} cannot be resumed: {e}")
        self._launch(config)
        return op.ResumeTournamentResponse(tournament=await self._progress_soon(tid))

    async def GetTournament(self, request: op.GetTournamentRequest,
                            context: Context) -> op.GetTournamentResponse:
        await self._require(request.tournament_id, context)
        return op.GetTournamentResponse(
            tournament=await self._progress_soon(request.tournament_id))

    async def ListTournaments(self, request: op.ListTournamentsRequest,
                              context: Context) -> op.ListTournamentsResponse:
        ids = self.tournament_ids()
        progress = await asyncio.to_thread(lambda: [self._progress(t) for t in ids])
        return op.ListTournamentsResponse(tournaments=progress)

    async def CancelTournament(self, request: op.CancelTournamentRequest,
                               context: Context) -> op.CancelTournamentResponse:
        tid = request.tournament_id
        await self._require(tid, context)
        entry = self._entries.get(tid)
        if entry is not None and entry.status in _ACTIVE and entry.task is not None:
            entry.status = "cancelled"
            entry.detail = request.reason or "cancelled by the operator"
            entry.runner.stop.set()
            # Cancelling the run ends its games and any wait for a bot's Hello at once;
            # leaving its arena stops the bot processes.
            if entry.play is not None:
                entry.play.cancel()
            await asyncio.wait([entry.task])
        return op.CancelTournamentResponse(tournament=await self._progress_soon(tid))

    async def WatchTournament(self, request: op.WatchTournamentRequest,
                              context: Context) -> AsyncIterator[op.WatchTournamentResponse]:
        tid = request.tournament_id
        await self._require(tid, context)
        entry = self._entries.get(tid)
        if entry is None:  # stored by an earlier run: nothing will change
            yield op.WatchTournamentResponse(tournament=await self._progress_soon(tid))
            return
        self._watchers += 1
        self._no_watchers.clear()
        try:
            seen = -1
            while True:
                event = entry.changed
                if entry.version == seen:
                    await event.wait()
                seen = entry.version
                final = entry.ended
                yield op.WatchTournamentResponse(
                    tournament=await self._watched_progress(entry, tid, seen))
                if final:
                    return
                await _merge_changes(entry)
        finally:
            self._watchers -= 1
            if not self._watchers:
                self._no_watchers.set()

    async def SubmitHostedBot(self, requests: AsyncIterator[op.SubmitHostedBotRequest],
                              context: Context) -> op.SubmitHostedBotResponse:
        return await self.hosting.submit(requests, context)

    async def GetHostedBuildLog(self, request: op.GetHostedBuildLogRequest,
                                context: Context) -> op.GetHostedBuildLogResponse:
        return await self.hosting.build_log(request, context)
