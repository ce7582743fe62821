"""The operator side of the referee over real gRPC: health, reflection, listing bots,
and starting, watching, querying and cancelling tournaments."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from harness._generated.euchre.v1 import referee_pb2 as rpb
from harness._generated.euchre.v1 import referee_pb2_grpc as rpc
from harness.referee.arena import Arena
from harness.tournament.service import TournamentService

TOML = """
name = "{name}"
games = {games}
concurrency = 1
[rules]
form = "two-handed"
target = 3
[[bot]]
name = "random"
command = "{{python}} -m sample_bots.random_bot"
[[bot]]
name = "heuristic"
command = "{{python}} -m sample_bots.heuristic_bot"
"""


def test_operator_service_runs_and_reports_tournaments(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Arena(log_dir=tmp_path / "logs") as arena:
            arena.server.tournaments = TournamentService(arena, tmp_path / "out")
            async with grpc.aio.insecure_channel(arena.server.address) as channel:
                # The health and reflection stubs ship without usable type hints.
                health: Any = health_pb2_grpc.HealthStub(channel)
                status = await health.Check(health_pb2.HealthCheckRequest(service=""))
                assert status.status == health_pb2.HealthCheckResponse.SERVING

                refl: Any = reflection_pb2_grpc.ServerReflectionStub(channel)  # type: ignore[arg-type]
                call = refl.ServerReflectionInfo()
                await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
                answer = await call.read()
                await call.done_writing()
                names = {s.name for s in answer.list_services_response.service}
                assert {"euchre.v1.RefereeService", "euchre.v1.OperatorService"} <= names

                op = rpc.OperatorServiceStub(channel)
                started = await op.StartTournament(rpb.StartTournamentRequest(
                    config_toml=TOML.format(name="ladder", games=2)))
                assert started.tournament_id == "ladder"
                updates = []
                async for update in op.WatchTournament(
                        rpb.WatchTournamentRequest(tournament_id="ladder")):
                    updates.append(update.tournament)
                final = updates[-1]
                assert final.status == rpb.TOURNAMENT_STATUS_FINISHED
                assert final.games_done == final.games_total == 4
                assert [r.name for r in final.standings] == ["heuristic", "random"] or \
                    {r.name for r in final.standings} == {"heuristic", "random"}
                got = await op.GetTournament(rpb.GetTournamentRequest(tournament_id="ladder"))
                assert got.tournament.games_done == 4
                listed = await op.ListTournaments(rpb.ListTournamentsRequest())
                assert [t.tournament_id for t in listed.tournaments] == ["ladder"]

                bots = await op.ListBots(rpb.ListBotsRequest())
                assert {b.name for b in bots.bots} == {"heuristic", "random"}
                assert all(b.games_played >= 1 for b in bots.bots)

                second = await op.StartTournament(rpb.StartTournamentRequest(
                    config_toml=TOML.format(name="long", games=200)))
                await asyncio.sleep(0.5)
                cancelled = await op.CancelTournament(rpb.CancelTournamentRequest(
                    tournament_id=second.tournament_id, reason="test"))
                assert cancelled.tournament.status == rpb.TOURNAMENT_STATUS_CANCELLED
                assert cancelled.tournament.games_done < 400

                with pytest.raises(grpc.aio.AioRpcError) as missing:
                    await op.GetTournament(rpb.GetTournamentRequest(tournament_id="nope"))
                assert missing.value.code() == grpc.StatusCode.NOT_FOUND
                with pytest.raises(grpc.aio.AioRpcError) as bad:
                    await op.StartTournament(rpb.StartTournamentRequest(
                        config_toml="name = 'x'\nbogus = 1\n"))
                assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert "bogus" in (bad.value.details() or "")

    asyncio.run(scenario())


def test_graceful_shutdown_turns_health_to_not_serving(tmp_path: Path) -> None:
    async def scenario() -> None:
        arena = Arena(log_dir=tmp_path / "logs")
        await arena.server.start()
        address = arena.server.address
        async with grpc.aio.insecure_channel(address) as channel:
            health: Any = health_pb2_grpc.HealthStub(channel)
            watch = health.Watch(health_pb2.HealthCheckRequest(service=""))
            first = await watch.read()
            assert first.status == health_pb2.HealthCheckResponse.SERVING
            stopping = asyncio.ensure_future(arena.close())
            second = await watch.read()
            assert second.status == health_pb2.HealthCheckResponse.NOT_SERVING
            await stopping

    asyncio.run(scenario())
