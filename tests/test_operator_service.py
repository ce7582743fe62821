"""The operator side of the referee over real gRPC: health, reflection, listing bots,
and starting, watching, querying and cancelling tournaments."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from configs import paced, toml_config
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from harness._generated.euchre.v1 import referee_pb2 as rpb
from harness._generated.euchre.v1 import referee_pb2_grpc as rpc
from harness.referee.arena import Arena
from harness.results.summary import standings
from harness.storage.results import ResultsStore
from harness.tournament.service import WATCH_INTERVAL_S, TournamentService, _Entry


def toml(name: str, games: int, form: str = "two-handed") -> str:
    return toml_config(name, games=games, concurrency=1, rules={"form": form, "target": 3})


@contextlib.asynccontextmanager
async def operator_stub(tmp_path: Path) -> AsyncIterator[rpc.OperatorServiceAsyncStub]:
    """A referee with serve's tournament service (tournaments go under ``tmp_path/out``)
    and an operator's stub connected to it."""
    async with Arena(log_dir=tmp_path / "logs") as arena:
        arena.server.tournaments = TournamentService(arena, tmp_path / "out")
        async with grpc.aio.insecure_channel(arena.server.address) as channel:
            yield rpc.OperatorServiceStub(channel)


async def watched_to_the_end(op: rpc.OperatorServiceAsyncStub,
                             tournament_id: str) -> rpb.TournamentProgress:
    """Watch a tournament until its stream ends; its last update, which must say it
    finished."""
    final = None
    async for update in op.WatchTournament(
            rpb.WatchTournamentRequest(tournament_id=tournament_id)):
        final = update.tournament
    assert final is not None
    assert final.status == rpb.TOURNAMENT_STATUS_FINISHED, final
    return final


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
                    config_toml=toml("ladder", 2)))
                assert started.tournament_id == "ladder"
                updates = []
                async for update in op.WatchTournament(
                        rpb.WatchTournamentRequest(tournament_id="ladder")):
                    updates.append(update.tournament)
                final = updates[-1]
                assert final.status == rpb.TOURNAMENT_STATUS_FINISHED
                assert final.games_done == final.games_total == 4
                assert {r.name for r in final.standings} == {"heuristic", "random"}
                assert sum(r.games for r in final.standings) == 2 * final.games_done
                got = await op.GetTournament(rpb.GetTournamentRequest(tournament_id="ladder"))
                assert got.tournament.games_done == 4
                listed = await op.ListTournaments(rpb.ListTournamentsRequest())
                assert [t.tournament_id for t in listed.tournaments] == ["ladder"]

                # A finished tournament's bots are stopped and leave the list.
                bots = await op.ListBots(rpb.ListBotsRequest())
                assert list(bots.bots) == []

                second = await op.StartTournament(rpb.StartTournamentRequest(
                    config_toml=toml("long", 200)))
                # Wait for events, not for time: a first game stored, then a bot seen
                # playing (the machine may be loaded).
                async for update in op.WatchTournament(
                        rpb.WatchTournamentRequest(tournament_id=second.tournament_id)):
                    if update.tournament.games_done:
                        break
                deadline = time.monotonic() + 120
                while True:
                    bots = await op.ListBots(rpb.ListBotsRequest())
                    if any(b.state == rpb.BOT_STATE_PLAYING for b in bots.bots):
                        break
                    assert time.monotonic() < deadline, "no bot was ever seen playing"
                    await asyncio.sleep(0.02)
                assert {b.name for b in bots.bots} == {"heuristic", "random"}
                assert all(b.session_id for b in bots.bots)
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

    asyncio.run(asyncio.wait_for(scenario(), 300))


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


def test_operator_calls_need_the_operator_token_when_one_is_set(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Arena(log_dir=tmp_path / "logs") as arena:
            arena.server.operator_token = "s3cret"
            async with grpc.aio.insecure_channel(arena.server.address) as channel:
                op = rpc.OperatorServiceStub(channel)
                for metadata in [None, (("authorization", "Bearer wrong"),)]:
                    with pytest.raises(grpc.aio.AioRpcError) as denied:
                        await op.ListBots(rpb.ListBotsRequest(), metadata=metadata)
                    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
                    with pytest.raises(grpc.aio.AioRpcError) as denied:
                        await op.StartTournament(rpb.StartTournamentRequest(
                            config_toml=toml("x", 1)), metadata=metadata)
                    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
                ok = await op.ListBots(rpb.ListBotsRequest(),
                                       metadata=(("authorization", "Bearer s3cret"),))
                assert list(ok.bots) == []

    asyncio.run(scenario())


def test_operator_calls_without_a_token_are_for_this_machine_only() -> None:
    from harness.referee.peer import is_loopback

    assert is_loopback("ipv4:127.0.0.1:5000") and is_loopback("ipv6:[::1]:5000")
    assert not is_loopback("ipv4:10.1.2.3:5000")
    assert not is_loopback("ipv6:[2001:db8::1]:443")


def test_tournaments_on_one_referee_keep_their_own_bots(tmp_path: Path) -> None:
    """Same bot names, different forms, one after the other and at once: each tournament
    gets its own seat instances (a four-handed one needs two per bot) and its own rules."""
    four = toml("four", 1, "four-handed")
    two = toml("two", 1)

    async def scenario() -> None:
        async with operator_stub(tmp_path) as op:
            await op.StartTournament(rpb.StartTournamentRequest(config_toml=two))
            await op.StartTournament(rpb.StartTournamentRequest(config_toml=four))
            for tid in ("two", "four"):
                final = await watched_to_the_end(op, tid)
                assert final.games_done == final.games_total == 2

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_start_overrides_are_toml_text_like_set(tmp_path: Path) -> None:
    """``rules.form='"two-handed"'`` is the TOML text of a string; a bare word is taken as
    a string, as ``--set`` does; a quoted name is stored without its quotes."""
    four = toml("ignored", 1, "four-handed")

    async def scenario() -> None:
        async with operator_stub(tmp_path) as op:
            started = await op.StartTournament(rpb.StartTournamentRequest(
                config_toml=four, overrides={"rules.form": '"two-handed"',
                                             "name": '"Quoted Cup"', "rules.target": "3",
                                             "duplicate": "false"}))
            assert started.tournament_id == "quoted-cup"
            bare = await op.StartTournament(rpb.StartTournamentRequest(
                config_toml=four, overrides={"rules.form": "two-handed",
                                             "name": "bare", "rules.target": "3"}))
            for tid in (started.tournament_id, bare.tournament_id):
                final = await watched_to_the_end(op, tid)
            assert final.name == "bare"
            got = await op.GetTournament(rpb.GetTournamentRequest(
                tournament_id="quoted-cup"))
            assert got.tournament.name == "Quoted Cup"
            with pytest.raises(grpc.aio.AioRpcError) as bad:
                await op.StartTournament(rpb.StartTournamentRequest(
                    config_toml=four, overrides={"rules.form": '"nine-handed"'}))
            assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "rules.form" in (bad.value.details() or "")
        with ResultsStore(tmp_path / "out" / "quoted-cup" / "results.sqlite") as store:
            stored = store.tournament_config("quoted-cup")
        assert stored["name"] == "Quoted Cup"
        assert stored["rules"]["form"] == "two-handed"
        assert stored["duplicate"] is False

    asyncio.run(asyncio.wait_for(scenario(), 300))


def test_operator_calls_fit_the_standings_off_the_event_loop_and_a_watch_merges_bursts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the store and fitting the ratings takes longer as a tournament grows; on
    the event loop it would hold up every game and clock of the referee. Every call that
    reports progress does it in a worker thread, and a watch's updates but the last are
    at least WATCH_INTERVAL_S apart however fast the games finish."""
    fits: list[tuple[int, float]] = []  # (thread, when) of every standings fit

    def recorded(*args: Any, **kwargs: Any) -> Any:
        fits.append((threading.get_ident(), time.monotonic()))
        return standings(*args, **kwargs)

    monkeypatch.setattr("harness.tournament.service.standings", recorded)

    async def scenario() -> None:
        loop_thread = threading.get_ident()
        async with operator_stub(tmp_path) as op:
            # Bots that take 5 ms a decision: 30 games of at least 13 decisions last
            # about 2 s or more however fast the machine, so the watch has updates to
            # space out.
            await op.StartTournament(rpb.StartTournamentRequest(config_toml=toml_config(
                "bursts", games=15, concurrency=1, rules={"form": "two-handed", "target": 3},
                bots=(paced("random", 5), paced("heuristic", 5)))))
            assert (await watched_to_the_end(op, "bursts")).games_done == 30
            watched = [when for _, when in fits]
            # The first fit is the one after the store's first game; the last is the
            # final update's, which is sent at once.
            gaps = [b - a for a, b in itertools.pairwise(watched[:-1])]
            assert gaps and min(gaps) >= WATCH_INTERVAL_S, gaps

            await op.GetTournament(rpb.GetTournamentRequest(tournament_id="bursts"))
            await op.ListTournaments(rpb.ListTournamentsRequest())
            await op.CancelTournament(rpb.CancelTournamentRequest(tournament_id="bursts"))
            assert len(fits) == len(watched) + 3, fits  # each call above fitted once
            # A check of the status alone (may it be resumed? what is it, for the
            # message?) reads the store but fits no ratings.
            with pytest.raises(grpc.aio.AioRpcError) as finished:
                await op.ResumeTournament(rpb.ResumeTournamentRequest(
                    tournament_id="bursts"))
            assert finished.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert "is finished" in (finished.value.details() or "")
            with pytest.raises(grpc.aio.AioRpcError) as exists:
                await op.StartTournament(rpb.StartTournamentRequest(
                    config_toml=toml("bursts", 1)))
            assert exists.value.code() == grpc.StatusCode.ALREADY_EXISTS
            assert "status finished" in (exists.value.details() or "")
            assert len(fits) == len(watched) + 3, fits
        assert all(thread != loop_thread for thread, _ in fits), "a fit ran on the loop"

    asyncio.run(asyncio.wait_for(scenario(), 120))


def test_watchers_of_one_tournament_share_each_fit(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """N operators watching one tournament cost one standings fit per change, not N: the
    watchers that ask at the same version of the tournament get the answer of one fit;
    one that leaves does not take it from the others; a new version fits again."""
    fits: list[str] = []

    def counted(service: TournamentService, tournament_id: str, *,
                fit: bool = True) -> rpb.TournamentProgress:
        fits.append(tournament_id)
        if tournament_id == "t":  # the second part: no tournament behind it
            time.sleep(0.2)  # long enough that the other watchers ask while it runs
            return rpb.TournamentProgress(tournament_id="t", games_done=len(fits))
        return real(service, tournament_id, fit=fit)

    real = TournamentService._progress
    monkeypatch.setattr(TournamentService, "_progress", counted)

    async def scenario() -> None:
        async with operator_stub(tmp_path) as op:
            await op.StartTournament(rpb.StartTournamentRequest(config_toml=toml_config(
                "shared", games=15, concurrency=1, rules={"form": "two-handed", "target": 3},
                bots=(paced("random", 5), paced("heuristic", 5)))))
            ends = await asyncio.gather(*(watched_to_the_end(op, "shared") for _ in range(3)))
            assert [end.games_done for end in ends] == [30, 30, 30]
        # The mechanism itself, on a service and an entry with nothing else in them.
        service = TournamentService.__new__(TournamentService)
        entry = _Entry.__new__(_Entry)
        entry.watched = None
        fits.clear()
        leaving = asyncio.ensure_future(service._watched_progress(entry, "t", 7))
        await asyncio.sleep(0)
        staying = [service._watched_progress(entry, "t", 7) for _ in range(3)]
        leaving.cancel()
        answers = await asyncio.gather(*staying)
        assert fits == ["t"] and len({id(a) for a in answers}) == 1
        await service._watched_progress(entry, "t", 8)
        assert fits == ["t", "t"]

    asyncio.run(asyncio.wait_for(scenario(), 120))


def test_two_resumes_at_once_start_one_run(tmp_path: Path) -> None:
    """A resume reads the store in a worker thread before it starts the run: two sent at
    once must still start it once (two runs in one process would share the store's lock
    and play the same games); the other is refused as already running."""

    async def scenario() -> None:
        async with operator_stub(tmp_path) as op:
            await op.StartTournament(rpb.StartTournamentRequest(
                config_toml=toml("twice", 200)))
            await op.CancelTournament(rpb.CancelTournamentRequest(tournament_id="twice"))
            request = rpb.ResumeTournamentRequest(tournament_id="twice")
            answers = await asyncio.gather(op.ResumeTournament(request),
                                           op.ResumeTournament(request),
                                           return_exceptions=True)
            refused = [a for a in answers if isinstance(a, grpc.aio.AioRpcError)]
            assert len(refused) == 1, answers
            assert refused[0].code() == grpc.StatusCode.FAILED_PRECONDITION
            assert "already running" in (refused[0].details() or "")
            await op.CancelTournament(rpb.CancelTournamentRequest(tournament_id="twice"))

    asyncio.run(asyncio.wait_for(scenario(), 120))
