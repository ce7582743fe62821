"""``euchre.v1.LadderService`` on the ladder's referee: the operator's calls (register,
versions, tokens, retire and restore, lift a bench, standings, games, watch).

Who may call: the same rule as ``OperatorService`` (the operator token when the referee
has one, else callers on this machine only). A bot's token leaves the process only in
the answer of RegisterBot, NewVersion or RotateToken, and is never logged.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import grpc

from harness.errors import AlreadyExistsError, ConfigError, NotFoundError
from harness.ladder.events import game_message
from harness.ladder.quarantine import Bench, Quarantine
from harness.ladder.ratings import LadderRatings
from harness.ladder.registry import RegisteredBot, Registry
from harness.ladder.state import RunningLadder
from harness.ladder.submit import Submissions
from harness.protocol import ladder as lp
from harness.storage.results import GameRow

if TYPE_CHECKING:
    from harness.referee.server import RefereeServer

__all__ = ["DEFAULT_GAMES", "MAX_GAMES", "LadderServicer", "ladder_standings",
           "recent_games", "standings", "standings_key"]

Context = grpc.aio.ServicerContext[Any, Any]
T = TypeVar("T")

DEFAULT_GAMES = 20
"""Games ListGames returns when the request sets no limit."""
MAX_GAMES = 1000
"""The most games ListGames returns: a larger limit is clamped to it."""


def bot_message(entrant: RegisteredBot, build_state: str | None = None) -> lp.LadderBot:
    """The LadderBot of ``entrant``; ``build_state`` for a hosted bot."""
    return lp.bot(name=entrant.name, base=entrant.base, version=entrant.version,
                  owner=entrant.owner, description=entrant.description,
                  concurrency=entrant.concurrency, created_at=entrant.created_at,
                  retired=entrant.retired, build_state=build_state)


def _standings(ratings: LadderRatings, registry: Registry, active: Sequence[Bench],
               builds: Mapping[str, str], latest_only: bool) -> list[lp.LadderStanding]:
    rows = ratings.standings(registry.entrants(include_retired=True), latest_only=latest_only)
    benches = {bench.bot: bench for bench in active}  # the newest per bot, as benched()
    return [lp.standing(row, benches[row["name"]].reason if row["name"] in benches else "",
                        builds.get(row["name"], ""))
            for row in rows]


def ladder_standings(ratings: LadderRatings, registry: Registry, quarantine: Quarantine,
                     builds: Mapping[str, str], *,
                     latest_only: bool = False) -> list[lp.LadderStanding]:
    """The standings with ``ratings`` as they stand, benched bots with their reason and
    hosted bots with their build state: what the running ladder answers and what
    ``ladder CONFIG standings`` reads from its store. ``builds``: hosted version ->
    build state (:meth:`harness.ladder.uploads.Uploads.states`)."""
    # One read of every bench in force, not one per bot.
    return _standings(ratings, registry, quarantine.active(), builds, latest_only)


def _inputs(runtime: RunningLadder) -> tuple[tuple[Hashable, ...], list[Bench],
                                              dict[str, str]]:
    active, builds = runtime.quarantine.active(), runtime.uploads.states()
    key = (id(runtime.ratings), runtime.ratings.version, runtime.registry.changes(),
           tuple(active), tuple(sorted(builds.items())))
    return key, active, builds


def standings_key(runtime: RunningLadder) -> tuple[Hashable, ...]:
    """What the running ladder's standings are drawn from, in a few indexed reads: the
    ratings' version, the bots table's change count, the benches in force and the
    hosted bots' build states."""
    return _inputs(runtime)[0]


def standings(runtime: RunningLadder, *, latest_only: bool = False) -> list[lp.LadderStanding]:
    """The running ladder's standings with its current ratings, built once per change of
    what they show (:mod:`harness.ladder.memo`)."""
    key, active, builds = _inputs(runtime)
    return list(runtime.memo.get(("standings", latest_only, key), lambda: _standings(
        runtime.ratings, runtime.registry, active, builds, latest_only)))


def recent_games(runtime: RunningLadder, limit: int, bot: str = "") -> list[GameRow]:
    """The newest ``limit`` stored games (of ``bot``, by its exact name), newest first.
    It reads only those games, but it reads the store: call it in a thread."""
    return runtime.results.latest_games(runtime.settings.ladder_id, limit, bot=bot or None)


def status_of(error: ConfigError) -> grpc.StatusCode:
    """The status a registry's ConfigError answers with."""
    return (grpc.StatusCode.NOT_FOUND if isinstance(error, NotFoundError)
            else grpc.StatusCode.ALREADY_EXISTS if isinstance(error, AlreadyExistsError)
            else grpc.StatusCode.INVALID_ARGUMENT)


class LadderServicer(lp.LadderServiceServicer):
    """The operator's calls on one running ladder."""

    def __init__(self, runtime: RunningLadder, server: RefereeServer) -> None:
        self.runtime = runtime
        self.server = server
        self.submissions = Submissions(runtime, server)

    async def _call(self, context: Context, action: Callable[[], T]) -> T:
        """Run a registry action, turning its ConfigError into a status."""
        await self.server.require_operator(context)
        try:
            return action()
        except ConfigError as e:
            await context.abort(status_of(e), str(e))
            raise  # not reached: abort raises

    async def RegisterBot(self, request: lp.RegisterBotRequest,
                          context: Context) -> lp.RegisterBotResponse:
        settings = self.runtime.settings
        entrant, token = await self._call(context, lambda: self.runtime.registry.register(
            request.name, request.owner, description=request.description,
            concurrency=settings.concurrency_for(request.concurrency)))
        self.runtime.wake()
        return lp.RegisterBotResponse(bot=bot_message(entrant), token=token.reveal())

    async def NewVersion(self, request: lp.NewVersionRequest,
                         context: Context) -> lp.NewVersionResponse:
        entrant, token = await self._call(
            context, lambda: self.runtime.registry.new_version(request.name))
        self.runtime.wake()
        return lp.NewVersionResponse(bot=bot_message(entrant), token=token.reveal())

    async def RotateToken(self, request: lp.RotateTokenRequest,
                          context: Context) -> lp.RotateTokenResponse:
        registry = self.runtime.registry
        token = await self._call(context, lambda: registry.rotate(request.name))
        return lp.RotateTokenResponse(bot=bot_message(registry.get(request.name)),
                                      token=token.reveal())

    async def RetireBot(self, request: lp.RetireBotRequest,
                        context: Context) -> lp.RetireBotResponse:
        entrant = await self._call(context, lambda: self.runtime.registry.retire(request.name))
        return lp.RetireBotResponse(bot=bot_message(entrant))

    async def RestoreBot(self, request: lp.RestoreBotRequest,
                         context: Context) -> lp.RestoreBotResponse:
        entrant = await self._call(context,
                                   lambda: self.runtime.registry.restore(request.name))
        self.runtime.wake()
        return lp.RestoreBotResponse(bot=bot_message(entrant))

    async def LiftBench(self, request: lp.LiftBenchRequest,
                        context: Context) -> lp.LiftBenchResponse:
        await self._call(context, lambda: self.runtime.registry.get(request.name))
        lifted = self.runtime.quarantine.lift(request.name) is not None
        self.runtime.wake()
        return lp.LiftBenchResponse(lifted=lifted)

    async def GetStandings(self, request: lp.GetStandingsRequest,
                           context: Context) -> lp.GetStandingsResponse:
        await self.server.require_operator(context)
        await self.runtime.refresh_ratings()  # games not fitted yet, if a refit is due
        return lp.GetStandingsResponse(
            standings=standings(self.runtime, latest_only=request.latest_only))

    async def ListGames(self, request: lp.ListGamesRequest,
                        context: Context) -> lp.ListGamesResponse:
        if request.bot:
            await self._call(context, lambda: self.runtime.registry.get(request.bot))
        else:
            await self.server.require_operator(context)
        recent = await asyncio.to_thread(recent_games, self.runtime,
                                         min(request.limit or DEFAULT_GAMES, MAX_GAMES),
                                         request.bot)
        return lp.ListGamesResponse(games=[game_message(r) for r in recent])

    async def WatchLadder(self, request: lp.WatchLadderRequest,
                          context: Context) -> AsyncIterator[lp.WatchLadderResponse]:
        await self.server.require_operator(context)
        async for event in self.runtime.events.watch():
            yield event

    async def SubmitBot(self, request_iterator: AsyncIterator[lp.SubmitBotRequest],
                        context: Context) -> lp.SubmitBotResponse:
        try:
            entrant, token, sha256, state = await self.submissions.submit(request_iterator,
                                                                          context)
        except ConfigError as e:
            await context.abort(status_of(e), str(e))
            raise  # not reached: abort raises
        return lp.SubmitBotResponse(bot=bot_message(entrant, state), token=token.reveal(),
                                    sha256=sha256)

    async def GetBuildLog(self, request: lp.GetBuildLogRequest,
                          context: Context) -> lp.GetBuildLogResponse:
        return await self.submissions.build_log(request, context)
