"""``euchre.v1.OperatorService`` on the referee: who may call it, the bot list, and the
tournament calls, which go to the tournament service attached to the server (the
referee layer does not know tournaments; ``harness.tournament.service`` implements
:class:`TournamentCalls`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

import grpc

from harness.protocol import operator as op
from harness.referee.session import SlotRegistry, SlotState

Context = grpc.aio.ServicerContext[Any, Any]

# A seat nobody has connected to yet shows as disconnected: it has no live stream.
_STATE = {SlotState.WAITING: "disconnected", SlotState.DISCONNECTED: "disconnected",
          SlotState.IDLE: "idle", SlotState.PLAYING: "playing"}


class TournamentCalls(Protocol):
    """The tournament half of the operator service."""

    async def StartTournament(self, request: op.StartTournamentRequest,
                              context: Context) -> op.StartTournamentResponse: ...

    async def GetTournament(self, request: op.GetTournamentRequest,
                            context: Context) -> op.GetTournamentResponse: ...

    async def ListTournaments(self, request: op.ListTournamentsRequest,
                              context: Context) -> op.ListTournamentsResponse: ...

    async def CancelTournament(self, request: op.CancelTournamentRequest,
                               context: Context) -> op.CancelTournamentResponse: ...

    async def ResumeTournament(self, request: op.ResumeTournamentRequest,
                               context: Context) -> op.ResumeTournamentResponse: ...

    def WatchTournament(self, request: op.WatchTournamentRequest,
                        context: Context) -> AsyncIterator[op.WatchTournamentResponse]: ...

    async def SubmitHostedBot(self, requests: AsyncIterator[op.SubmitHostedBotRequest],
                              context: Context) -> op.SubmitHostedBotResponse: ...

    async def GetHostedBuildLog(self, request: op.GetHostedBuildLogRequest,
                                context: Context) -> op.GetHostedBuildLogResponse: ...


class OperatorHost(Protocol):
    """What the operator service needs of the referee's server
    (:class:`~harness.referee.server.RefereeServer` is one, and installs the service)."""

    registry: SlotRegistry
    tournaments: TournamentCalls | None

    async def require_operator(self, context: Context) -> None: ...


class OperatorServicer(op.OperatorServiceServicer):
    """Lists connected bots. Tournament calls are delegated to ``server.tournaments``
    when a tournament service is attached; otherwise they answer UNIMPLEMENTED."""

    def __init__(self, server: OperatorHost) -> None:
        self.server = server

    async def ListBots(self, request: op.ListBotsRequest,
                       context: Context) -> op.ListBotsResponse:
        await self.server.require_operator(context)
        bots = []
        for slot in self.server.registry:
            s = slot.session
            bots.append(op.bot_info(
                session_id=s.id if s else "", name=slot.name,
                version=s.bot_version if s else "", state=_STATE[slot.state],
                game_id=slot.game_id, games_played=slot.games_played, faults=slot.faults,
                peer=s.peer if s else ""))
        return op.ListBotsResponse(bots=bots)

    async def StartTournament(self, request: op.StartTournamentRequest,
                              context: Context) -> op.StartTournamentResponse:
        return await (await self._tournaments(context)).StartTournament(request, context)

    async def GetTournament(self, request: op.GetTournamentRequest,
                            context: Context) -> op.GetTournamentResponse:
        return await (await self._tournaments(context)).GetTournament(request, context)

    async def ListTournaments(self, request: op.ListTournamentsRequest,
                              context: Context) -> op.ListTournamentsResponse:
        return await (await self._tournaments(context)).ListTournaments(request, context)

    async def CancelTournament(self, request: op.CancelTournamentRequest,
                               context: Context) -> op.CancelTournamentResponse:
        return await (await self._tournaments(context)).CancelTournament(request, context)

    async def ResumeTournament(self, request: op.ResumeTournamentRequest,
                               context: Context) -> op.ResumeTournamentResponse:
        return await (await self._tournaments(context)).ResumeTournament(request, context)

    async def WatchTournament(self, request: op.WatchTournamentRequest,
                              context: Context) -> AsyncIterator[op.WatchTournamentResponse]:
        handler = await self._tournaments(context)
        async for update in handler.WatchTournament(request, context):
            yield update

    async def SubmitHostedBot(self, request_iterator: AsyncIterator[op.SubmitHostedBotRequest],
                              context: Context) -> op.SubmitHostedBotResponse:
        handler = await self._tournaments(context)
        return await handler.SubmitHostedBot(request_iterator, context)

    async def GetHostedBuildLog(self, request: op.GetHostedBuildLogRequest,
                                context: Context) -> op.GetHostedBuildLogResponse:
        return await (await self._tournaments(context)).GetHostedBuildLog(request, context)

    async def _tournaments(self, context: Context) -> TournamentCalls:
        await self.server.require_operator(context)
        handler: TournamentCalls | None = self.server.tournaments
        if handler is None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED,
                                "this referee runs no tournament service")
        assert handler is not None
        return handler
