"""The ladder on a Dask cluster of separate worker processes: house-only deal sets are
played on the workers and registered bots' sets on the ladder's own referee; a worker
killed mid-set loses nothing and stores nothing twice; a lost scheduler leaves the
ladder playing on its referee until the scheduler is back."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import re
import signal
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from cluster_support import start_cluster, stop
from configs import Bot, paced, toml_config
from distributed import Client, LocalCluster
from ports import unused_port
from serve_support import Started

from harness.cli import build_parser
from harness.cli._tournament import overrides
from harness.cli.ladder import settings_from
from harness.competition.seatings import ScheduledGame
from harness.errors import ClusterError, ConfigError
from harness.ladder.cluster import FAILURES_IN_A_ROW, HouseCluster
from harness.ladder.matchmaking import SetStatus
from harness.ladder.quarantine import QuarantinePolicy
from harness.ladder.registry import Registry
from harness.ladder.runtime import LadderRuntime
from harness.ladder.sets import SetLog, StoredSet
from harness.ladder.settings import LadderSettings
from harness.referee.outcome import FaultPolicy, TimeControl
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.rules.config import RulesConfig
from harness.sdk import play_session
from harness.storage.ladder import LadderStore
from harness.storage.results import GameRow, ResultsStore
from harness.tournament.config import load_config
from sample_bots.random_bot import RandomBot

ROOT = Path(__file__).resolve().parent.parent
WAIT_S = 180.0


def house_bot(name: str, seed: int) -> Entrant:
    return Entrant(name, BotCommand((sys.executable, "-m", "sample_bots.random_bot"),
                                    cwd=str(ROOT), env={"EUCHRE_BOT_SEED": str(seed)}))


def settings(tmp_path: Path, *, scheduler: str | None = None,
             workers: int = 0) -> LadderSettings:
    return LadderSettings(store=tmp_path / "ladder.sqlite", log_dir=tmp_path / "logs",
                          rules=RulesConfig(target=3), time_control=TimeControl.parse("5+30"),
                          concurrency=1, house=((house_bot("r1", 1), 2), (house_bot("r2", 2), 2)),
                          poll_seconds=0.2, scheduler=scheduler, workers=workers)


async def until(check: Callable[[], object], what: str) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + WAIT_S
    while not check():
        if loop.time() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def games(runtime: LadderRuntime) -> list[GameRow]:
    return list(runtime.results.games(runtime.settings.ladder_id))


def on_worker(row: GameRow) -> bool:
    # tls:// on a local cluster (its own certificate), tcp:// on a plain scheduler.
    return str(row.record.get("worker", "")).startswith(("tcp://", "tls://"))


def check_every_set_whole(sets: list[StoredSet], rows: list[GameRow],
                          tables: int = 2) -> None:
    """Each complete set has all its tables stored once; nothing is stored twice."""
    keys = Counter(row.game_key for row in rows)
    assert all(n == 1 for n in keys.values()), keys
    per_set = Counter(key.rsplit("/t", 1)[0] for key in keys)
    for s in sets:
        if s.status is SetStatus.COMPLETE:
            assert per_set[s.key] == tables, s


def test_house_sets_are_played_on_the_workers_and_registered_bots_on_the_referee(
        tmp_path: Path) -> None:
    ladder = settings(tmp_path, workers=2)
    with LadderStore(ladder.store) as store:
        _, token = Registry(store).register("visitor", "ann", concurrency=2)

    async def scenario() -> tuple[list[StoredSet], list[GameRow], set[str]]:
        stop_ = asyncio.Event()
        address: list[str] = []
        runtime = LadderRuntime(ladder, stop=stop_, on_listen=address.append)
        running = asyncio.ensure_future(runtime.run())
        await until(lambda: address or running.done(), "the ladder to listen")
        if running.done():
            running.result()  # its own error
        bots = [asyncio.ensure_future(play_session(RandomBot(i), address[0], token.reveal()))
                for i in range(2)]

        def complete(with_visitor: bool) -> int:
            return sum(1 for s in runtime.sets.sets() if s.status is SetStatus.COMPLETE
                       and ("visitor" in s.base) == with_visitor)

        await until(lambda: complete(True) >= 1 and complete(False) >= 2,
                    "complete sets on the referee and on the workers")
        stop_.set()
        await asyncio.wait_for(running, 60.0)
        for bot in bots:
            bot.cancel()
        await asyncio.gather(*bots, return_exceptions=True)
        try:
            await runtime.refresh_ratings(force=True)
            rated = set(runtime.ratings.current.elo) if runtime.ratings.current else set()
            return runtime.sets.sets(), games(runtime), rated
        finally:
            runtime.close()

    sets, rows, rated = asyncio.run(scenario())
    check_every_set_whole(sets, rows)
    with_visitor = [row for row in rows if "visitor" in row.seats]
    house_only = [row for row in rows if "visitor" not in row.seats]
    assert with_visitor and house_only
    assert not any(on_worker(row) for row in with_visitor)  # registered: the referee
    assert all(on_worker(row) for row in house_only)  # house only: a worker
    assert {"visitor", "r1", "r2"} <= rated
    # the workers' bot logs are kept per worker under the ladder's log folder
    assert [p.name for p in (tmp_path / "logs").iterdir() if p.name.startswith("tls_")]


@pytest.fixture
def cluster() -> Iterator[tuple[LocalCluster, Client]]:
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address="127.0.0.1:0") as lc, Client(lc) as client:
        yield lc, client


def test_a_worker_killed_mid_set_loses_nothing_and_stores_nothing_twice(
        tmp_path: Path, cluster: tuple[LocalCluster, Client]) -> None:
    lc, client = cluster
    pids: dict[str, int] = client.run(os.getpid)
    victim_address = sorted(pids)[0]
    victim = psutil.Process(pids[victim_address])
    in_flight: list[str] = []
    ladder = settings(tmp_path, scheduler=lc.scheduler_address)
    doomed: list[psutil.Process] = []

    async def scenario() -> tuple[list[StoredSet], list[GameRow], int]:
        stop_ = asyncio.Event()
        runtime = LadderRuntime(ladder, stop=stop_)
        running = asyncio.ensure_future(runtime.run())
        await until(lambda: len(games(runtime)) >= 3 or running.done(), "games stored")

        def on_victim() -> list[str]:  # the games the victim is playing now
            busy = client.processing(workers=[victim_address]).get(victim_address, ())
            return re.findall(r"ladder/\d+/t\d+", " ".join(str(k) for k in busy))

        def seen_on_victim() -> bool:  # keeps what it saw: asked again, a game that
            in_flight[:] = on_victim()  # just ended would not be there
            return bool(in_flight) or running.done()

        await until(seen_on_victim, "a game on the doomed worker")
        doomed.extend(victim.children(recursive=True))
        victim.send_signal(signal.SIGKILL)  # mid-game
        at_kill = len(games(runtime))

        def played_on() -> bool:  # 8 more games, and every game the worker held is stored
            keys = {row.game_key for row in games(runtime)}
            return (len(keys) >= at_kill + 8 and keys.issuperset(in_flight)) or running.done()

        await until(played_on, "games after the kill")
        stop_.set()
        await asyncio.wait_for(running, 60.0)
        try:
            return runtime.sets.sets(), games(runtime), at_kill
        finally:
            runtime.close()

    try:
        sets, rows, at_kill = asyncio.run(scenario())
    finally:
        for p in doomed:  # the dead worker's bots give up on their own; do not wait
            with contextlib.suppress(psutil.NoSuchProcess):
                p.kill()
    assert len(rows) >= at_kill + 8 and all(on_worker(row) for row in rows)
    # the games the doomed worker held (the one it was playing, cut off by the kill unless
    # it finished in the instant before, and any queued behind it) are stored, each once
    keys = [r.game_key for r in rows]
    assert in_flight and all(keys.count(key) == 1 for key in in_flight), (in_flight, keys)
    check_every_set_whole(sets, rows)
    # no set was cut short by the kill: only the stop at the end cuts sets short
    assert {s.reason for s in sets if s.status is SetStatus.CUT_SHORT} <= {
        "interrupted: the ladder stopped", "the ladder stopped"}


@pytest.mark.long
def test_a_lost_scheduler_leaves_the_ladder_playing_on_its_referee_until_it_is_back(
        tmp_path: Path) -> None:
    port = unused_port()
    address = f"tcp://127.0.0.1:{port}"
    config = tmp_path / "ladder.toml"
    config.write_text(toml_config("lost", output=tmp_path / "out", concurrency=1, tc="5+30",
                                  extra="[ladder]\ncluster_retry_seconds = 1.0",
                                  rules={"target": 3},
                                  bots=(paced("r1", kind="random"),
                                        paced("r2", kind="random"))))
    store = tmp_path / "out" / "ladder.sqlite"

    def rows() -> list[GameRow]:
        if not store.exists():
            return []
        with ResultsStore(store) as results:
            return list(results.games("lost"))

    procs = start_cluster(port, tmp_path / "cluster.log")
    ladder = Started([sys.executable, "-m", "harness", "ladder", str(config), "--port", "0",
                      "--scheduler", address], tmp_path, "ladder")
    try:
        ladder.wait_for(lambda: sum(on_worker(r) for r in rows()) >= 2, "games on the worker")
        procs[0].send_signal(signal.SIGKILL)  # the scheduler dies
        before = {r.game_key for r in rows()}
        ladder.wait_for(lambda: any(not on_worker(r) for r in rows()
                                    if r.game_key not in before),
                        "a game on the ladder's referee")
        procs += start_cluster(port, tmp_path / "cluster.log")  # the scheduler is back
        after = {r.game_key for r in rows()}
        ladder.wait_for(lambda: any(on_worker(r) for r in rows() if r.game_key not in after),
                        "a game on the worker again")
        status = ladder.stop()
    finally:
        ladder.kill()
        stop(procs)
    err = ladder.stderr
    assert status == 0, err
    assert f"lost the Dask scheduler at {address}" in err
    assert f"the Dask cluster at {address} is back" in err
    assert "Traceback" not in err, err
    with LadderStore(store) as ladder_store:
        sets = SetLog(ladder_store).sets()
    check_every_set_whole(sets, rows())
    assert {s.reason for s in sets if s.status is SetStatus.CUT_SHORT} <= {
        "interrupted: the ladder stopped", "the ladder stopped",
        f"lost the Dask cluster at {address}"}


def test_the_ladder_takes_its_cluster_and_policies_from_the_file_and_flags(
        tmp_path: Path) -> None:
    config = tmp_path / "ladder.toml"
    config.write_text(toml_config(
        "l", extra=('[ladder]\nprovisional_sets = 2\nbench_faults = 2\nbench_window = 5\n'
                    '[cluster]\nscheduler = "tcp://example:8786"'),
        bots=(Bot("a", "x"), Bot("b", "y"))))
    ladder = settings_from(load_config(config), host="127.0.0.1", port=0)
    assert ladder.scheduler == "tcp://example:8786" and ladder.workers == 0
    assert ladder.matchmaking.provisional_sets == 2
    assert (ladder.quarantine.bench_faults, ladder.quarantine.bench_window) == (2, 5)
    assert ladder.cluster_retry_seconds == 60.0
    local = tmp_path / "local.toml"
    local.write_text(config.read_text().replace('scheduler = "tcp://example:8786"', ""))
    args = build_parser().parse_args(["ladder", str(local), "--workers", "3"])
    flagged = settings_from(load_config(local, overrides(args)), host="127.0.0.1", port=0)
    assert (flagged.scheduler, flagged.workers) == (None, 3)
    args = build_parser().parse_args(["ladder", str(config), "--workers", "3"])
    with pytest.raises(ConfigError, match="either a scheduler"):
        load_config(config, overrides(args))
    with pytest.raises(ConfigError) as err:
        settings_from(load_config(config, {"ladder.bench_faults": "9"}), host="h", port=0)
    assert err.value.option == "ladder.bench_faults"  # one name from the file to the code
    assert "from 1 to bench_window (5); got 9" in err.value.message
    with pytest.raises(ConfigError) as err:
        settings_from(load_config(config, {"ladder.cluster_retry_seconds": "0"}),
                      host="h", port=0)
    assert err.value.option == "ladder.cluster_retry_seconds"


def test_a_house_bot_that_cannot_start_on_a_worker_is_benched_naming_the_worker(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    broken = Entrant("broken", BotCommand((sys.executable, "-c", "raise SystemExit(3)"),
                                          cwd=str(ROOT)))
    ladder = dataclasses.replace(
        settings(tmp_path, workers=1), house=((house_bot("r1", 1), 2), (broken, 2)),
        quarantine=QuarantinePolicy(bench_faults=2, bench_window=2))

    async def scenario() -> tuple[list[StoredSet], list[GameRow], str]:
        stop_ = asyncio.Event()
        runtime = LadderRuntime(ladder, stop=stop_)
        running = asyncio.ensure_future(runtime.run())
        await until(lambda: runtime.quarantine.benched("broken") is not None
                    or running.done(), "the broken bot's bench")
        bench = runtime.quarantine.benched("broken")
        stop_.set()
        await asyncio.wait_for(running, 60.0)
        try:
            return runtime.sets.sets(), games(runtime), bench.reason if bench else ""
        finally:
            runtime.close()

    with caplog.at_level(logging.WARNING, logger="euchre.ladder"):
        sets, rows, reason = asyncio.run(scenario())
    assert "startup_failure" in reason
    assert rows and all(on_worker(row) for row in rows)
    assert all(row.termination.value == "forfeit" for row in rows)
    assert {s.reason for s in sets if s.status is SetStatus.CUT_SHORT} <= {
        "broken: startup_failure", "broken benched", "interrupted: the ladder stopped"}
    assert any("house bot broken could not start on worker tls://" in r.getMessage()
               for r in caplog.records)


def test_games_failing_on_the_cluster_again_and_again_take_it_out_of_use(
        tmp_path: Path) -> None:
    """The policy on the ladder's side (no Dask needed): a game that fails on the cluster
    cuts its set short; three in a row and the ladder plays on its referee until the
    retry period is over, rather than starting set after doomed set."""
    class Failing:  # a ClusterPlayer whose every game fails on the workers
        async def play(self, order: object) -> None:
            raise ClusterError("game failed on a worker: ImportError: no module")

        async def close(self) -> None:
            pass

    house = [house_bot("r1", 1), house_bot("r2", 2)]
    cluster = HouseCluster("l", house, 2, RulesConfig(), tmp_path, workers=1,
                           retry_seconds=3600.0)
    game = ScheduledGame(key="ladder/000000000/t0", seats=("r1", "r2", "r1", "r2"), seed=1,
                         group="ladder/000000000", table=0, sides=(("r1",), ("r2",)))

    async def scenario() -> list[bool]:
        cluster._player = Failing()  # type: ignore[assignment]
        up = []
        for _ in range(FAILURES_IN_A_ROW):
            with pytest.raises(ClusterError, match="failed on a worker"):
                await cluster.play(game, TimeControl(), FaultPolicy())
            up.append(cluster.up)
        assert await cluster.play(game, TimeControl(), FaultPolicy()) is None  # taken out
        await cluster.close()
        return up

    assert asyncio.run(scenario()) == [True] * (FAILURES_IN_A_ROW - 1) + [False]
