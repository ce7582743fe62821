"""Tournaments on a Dask cluster of separate worker processes: the same games and results
as a local run, nothing lost or stored twice when a worker dies, a clean stop when the
scheduler dies (and a resume after it), remote bots refused, start-up failures reported.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from cluster_support import start_cluster, stop
from configs import RANDOM, bot, toml_config
from distributed import Client, LocalCluster
from distributed.comm.core import CommClosedError
from distributed.security import Security
from ports import unused_port
from waiting import wait_for, wait_until

from harness.cli import build_parser
from harness.cli._tournament import overrides
from harness.cluster import client as cluster_client
from harness.cluster.client import ClusterPlayer
from harness.cluster.local import LOOPBACK, LocalWorkers
from harness.cluster.worker import GameOrder
from harness.errors import ClusterError, ClusterLost, ConfigError, StartupFailuresError
from harness.results.sprt import SprtDecision
from harness.storage.results import ResultsStore
from harness.tournament.config import TournamentConfig, load_config
from harness.tournament.players import arena_spec
from harness.tournament.runner import RunState, TournamentRunner, store_path
from harness.tournament.schedule import SprtMatch

ROOT = Path(__file__).resolve().parent.parent


def config_file(tmp_path: Path, *, games: int = 2, extra: str = "",
                bot_extra: str = "") -> Path:
    """Two seeded random bots (deterministic per game), four-handed, short games."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "t.toml"
    path.write_text(toml_config(
        "cluster", output=tmp_path / "out", games=games, concurrency=2, tc="5+30",
        extra=extra, rules={"target": 5},
        bots=(bot("r1", RANDOM, seed=1, extra=bot_extra), bot("r2", RANDOM, seed=2))))
    return path


def stored(output: Path, tournament: str = "cluster") -> list[tuple[Any, ...]]:
    with ResultsStore(store_path(output)) as store:
        return sorted((g.game_key, g.seed, tuple(g.seats), g.termination.value,
                       tuple(g.scores), tuple(g.ranking)) for g in store.games(tournament))


def run(cfg: TournamentConfig, **kw: Any) -> RunState:
    return asyncio.run(TournamentRunner(cfg, **kw).run())


def local_cluster() -> Iterator[tuple[LocalCluster, Client]]:
    """Two worker processes, one game at a time each."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address="127.0.0.1:0") as lc, Client(lc) as client:
        yield lc, client


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[LocalCluster, Client]]:
    """One cluster for the tests that leave it as they found it."""
    yield from local_cluster()


@pytest.fixture
def cluster_to_kill() -> Iterator[tuple[LocalCluster, Client]]:
    """A cluster of the test's own: the test kills one of its workers."""
    yield from local_cluster()


def test_two_workers_store_the_same_deals_and_results_as_a_local_run(tmp_path: Path) -> None:
    # locally one set of bot processes plays every game in turn; on the cluster each
    # worker's bots play some of them
    local = load_config(config_file(tmp_path / "a", games=3), {"concurrency": "1"})
    on_cluster = load_config(config_file(tmp_path / "b", games=3), {"cluster.workers": "2"})
    assert run(local).finished
    state = run(on_cluster)
    assert state.finished and state.done == state.total == 6
    assert stored(on_cluster.output) == stored(local.output)
    # the games were played by the workers' arenas: their bot logs are per worker
    assert len([p for p in (on_cluster.output / "logs" / "cluster").iterdir() if p.is_dir()]) == 2


def test_a_worker_killed_mid_run_loses_nothing_and_stores_nothing_twice(
        tmp_path: Path, cluster_to_kill: tuple[LocalCluster, Client]) -> None:
    lc, client = cluster_to_kill
    pids: dict[str, int] = client.run(os.getpid)
    victim = psutil.Process(pids[sorted(pids)[0]])
    cfg = load_config(config_file(tmp_path, games=6),
                      {"cluster.scheduler": lc.scheduler_address})
    bots = victim.children(recursive=True)
    killed: list[int] = []

    def progress(state: RunState) -> None:
        if state.done >= 2 and not killed:  # some games stored, more running
            bots.extend(victim.children(recursive=True))
            victim.send_signal(signal.SIGKILL)
            killed.append(state.done)

    try:
        state = run(cfg, on_progress=progress)
    finally:
        for p in bots:  # the dead worker's bots give up on their own; do not wait
            with contextlib.suppress(psutil.NoSuchProcess):
                p.kill()
    assert killed and killed[0] < 12
    assert state.finished and state.done == 12
    games = stored(cfg.output)
    assert len(games) == 12 and len({g[0] for g in games}) == 12
    expected = {g.key for g in cfg.make_format().games()}
    assert {g[0] for g in games} == expected


def test_an_sprt_on_the_cluster_stops_scheduling_once_it_decides(
        tmp_path: Path, cluster: tuple[LocalCluster, Client]) -> None:
    lc, _ = cluster
    cfg = load_config(config_file(tmp_path), {
        "cluster.scheduler": lc.scheduler_address, "format": "sprt", "sprt.candidate": "r1",
        "sprt.baseline": "r2", "sprt.elo0": "0", "sprt.elo1": "800",
        "sprt.alpha": "0.4", "sprt.beta": "0.4", "sprt.max_pairs": "200"})
    runner = TournamentRunner(cfg)
    state = asyncio.run(runner.run())
    assert state.finished
    fmt = runner.format
    assert isinstance(fmt, SprtMatch)
    assert fmt.decision is not SprtDecision.CONTINUE, fmt.status()
    # decided long before max_pairs: the games still queued then were dropped
    assert len(stored(cfg.output)) == state.done < 100


def test_two_tournaments_share_a_cluster_without_stopping_each_others_bots(
        tmp_path: Path, cluster: tuple[LocalCluster, Client]) -> None:
    lc, _ = cluster
    configs = [load_config(config_file(tmp_path / name, games=8),
                           {"cluster.scheduler": lc.scheduler_address, "id": name})
               for name in ("first", "second")]

    async def both() -> tuple[RunState, RunState]:
        started = asyncio.Event()
        first = asyncio.ensure_future(TournamentRunner(
            configs[0], on_progress=lambda state: started.set()).run())
        await asyncio.wait_for(started.wait(), 60)  # its bots are up on the workers
        return await asyncio.gather(first, TournamentRunner(configs[1]).run())

    for cfg, state in zip(configs, asyncio.run(both()), strict=True):
        assert state.finished and state.interrupted == 0 and not state.faults
        assert len(stored(cfg.output, cfg.id)) == 16


def test_a_tournament_with_a_remote_bot_refuses_a_cluster(tmp_path: Path) -> None:
    path = config_file(tmp_path, bot_extra="")
    text = path.read_text().replace(
        'name = "r2"\ncommand = "{python} -m sample_bots.random_bot"',
        'name = "r2"\ntokens = ["t1", "t2"]').replace(
        'env = { EUCHRE_BOT_SEED = "2" }', "")
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"bot\[1\]\.tokens: r2 is a remote bot"):
        load_config(path, {"cluster.workers": "2"})


def test_scheduler_and_workers_are_run_settings_not_part_of_the_tournament(
        tmp_path: Path) -> None:
    path = config_file(tmp_path, extra='[cluster]\nscheduler = "tcp://example:8786"\n')
    cfg = load_config(path)
    assert cfg.scheduler == "tcp://example:8786" and cfg.on_cluster
    assert cfg.to_dict() == load_config(config_file(tmp_path / "plain")).to_dict()
    with pytest.raises(ConfigError, match=r"cluster\.workers: give either a scheduler"):
        load_config(path, {"cluster.workers": "2"})
    args = build_parser().parse_args(["sprt", str(path), "--scheduler", "tcp://h:1",
                                      "--workers", "3"])
    assert overrides(args) == {"cluster.scheduler": "tcp://h:1", "cluster.workers": "3"}


def test_a_bot_that_cannot_start_on_a_worker_stops_the_run_naming_the_worker(
        tmp_path: Path, cluster: tuple[LocalCluster, Client]) -> None:
    lc, _ = cluster
    path = config_file(tmp_path)
    path.write_text(path.read_text().replace(
        '{python} -m sample_bots.random_bot"\nenv = { EUCHRE_BOT_SEED = "1" }',
        '/nonexistent/bot"'))
    cfg = load_config(path, {"cluster.scheduler": lc.scheduler_address,
                             "max_startup_failures": "2"})
    with pytest.raises(StartupFailuresError, match=r"'r1' failed to start 2 times in a "
                                                   r"row on worker tcp://"):
        run(cfg)
    assert stored(cfg.output) == []


def test_an_unreachable_scheduler_is_a_cluster_error_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster_client, "CONNECT_TIMEOUT", 1.0)
    address = f"tcp://127.0.0.1:{unused_port()}"  # nothing listens there
    cfg = load_config(config_file(tmp_path), {"cluster.scheduler": address})
    with pytest.raises(ClusterError, match=f"cannot use the Dask cluster at {address}"):
        run(cfg)
    assert stored(cfg.output) == []


# ----------------------------------------------------------------- a scheduler that dies


class _BrokenFuture:
    """A game's Dask future whose connection to the scheduler breaks when ``broken`` is
    set: awaiting it then raises what Dask raises."""

    status = "pending"

    def __init__(self) -> None:
        self.broken = asyncio.Event()

    def __await__(self) -> Generator[Any, None, Any]:
        return self._wait().__await__()

    async def _wait(self) -> Any:
        await self.broken.wait()
        raise CommClosedError("in <TCP (closed) Client->Scheduler local=tcp://127.0.0.1:1 "
                              "remote=tcp://127.0.0.1:2>: ConnectionResetError: [Errno 104] "
                              "Connection reset by peer")


class _ClientOfALostScheduler:
    """The parts of a Dask client a game uses, for a scheduler about to be lost."""

    def __init__(self) -> None:
        self.futures: list[_BrokenFuture] = []

    def submit(self, *args: object, **kwargs: object) -> _BrokenFuture:
        self.futures.append(_BrokenFuture())
        return self.futures[-1]

    async def cancel(self, futures: list[_BrokenFuture]) -> None:
        pass


def test_games_out_when_the_scheduler_is_lost_are_dropped_after_the_first_says_so(
        tmp_path: Path) -> None:
    """The first game to see the broken connection raises ClusterLost, and the run stops
    (``cancel``); a game whose connection breaks after that is dropped (played again on
    resume). Its error once escaped as the connection's own (the run then printed
    Dask's "connection reset by peer" instead of the lost scheduler and the resume)."""
    cfg = load_config(config_file(tmp_path))
    player = ClusterPlayer(arena_spec(cfg, tmp_path / "logs"), scheduler="tcp://127.0.0.1:2")
    client = _ClientOfALostScheduler()
    player.client = client
    order = GameOrder("g", 1, ("r1", "r2", "r1", "r2"), cfg.time_control, cfg.fault_policy)

    async def scenario() -> object:
        first = asyncio.ensure_future(player.play(order))
        second = asyncio.ensure_future(player.play(order))
        await wait_until(lambda: len(client.futures) == 2, "both games submitted")
        client.futures[0].broken.set()
        with pytest.raises(ClusterLost, match="lost the Dask scheduler at"):
            await first
        player.cancel()  # what the run does when a game says the scheduler is lost
        client.futures[1].broken.set()
        return await second

    assert asyncio.run(scenario()) is None


@pytest.mark.long
def test_dask_stays_quiet_after_the_cluster_is_closed(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A closed client's connections still log as they wind down, after ``close()`` has
    returned: a lost scheduler's comm logs "Batched Comm Closed" with its traceback. The
    levels Dask had were once put back at close, and such a message then reached the
    run's one-line report of a lost scheduler (the test below failed so, once)."""
    cfg = load_config(config_file(tmp_path), {"cluster.workers": "1"})

    async def main() -> None:
        async with ClusterPlayer(arena_spec(cfg, tmp_path / "logs"), workers=1):
            pass

    asyncio.run(main())
    try:
        raise CommClosedError("in <TCP (closed) Client->Scheduler>: Stream is closed")
    except CommClosedError:  # logged as distributed.batched does, as the comm winds down
        logging.getLogger("distributed.batched").info("Batched Comm Closed", exc_info=True)
    assert not [r for r in caplog.records if r.name.startswith("distributed")], caplog.text


def test_a_lost_scheduler_stops_the_run_cleanly_and_it_resumes_later(tmp_path: Path) -> None:
    port = unused_port()
    address = f"tcp://127.0.0.1:{port}"
    path = config_file(tmp_path, games=10)
    procs = start_cluster(port, tmp_path / "cluster.log")
    command = [sys.executable, "-m", "harness", "run", str(path), "--scheduler", address,
               "--quiet"]
    try:
        run_ = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        wait_for(lambda: store_path(tmp_path / "out").exists()
                 and len(stored(tmp_path / "out")) >= 2, "2 stored games", proc=run_)
        procs[0].send_signal(signal.SIGKILL)  # the scheduler dies
        _, err = run_.communicate(timeout=120)
    finally:
        stop(procs)
    assert run_.returncode != 0, err
    assert "lost the Dask scheduler at " + address in err, err
    assert "run the same command again to resume" in err, err
    assert "Traceback" not in err, err  # one line, not Dask's reconnection tracebacks
    first = stored(tmp_path / "out")
    assert 2 <= len(first) < 20
    with ResultsStore(store_path(tmp_path / "out")) as store:
        assert store.tournament_status("cluster") == "interrupted"

    procs = start_cluster(port, tmp_path / "cluster.log")
    try:
        again = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    finally:
        stop(procs)
    assert again.returncode == 0, again.stderr
    games = stored(tmp_path / "out")
    assert len(games) == 20 and set(first) <= set(games)


def test_the_cluster_counts_every_workers_threads_after_its_information_is_refreshed(
        tmp_path: Path) -> None:
    # an asynchronous Dask client refreshes its cached scheduler information every few
    # seconds, without the per-worker table; the ladder asks for the slots all along
    cfg = load_config(config_file(tmp_path), {"cluster.workers": "2"})

    async def slots() -> tuple[int, int]:
        async with ClusterPlayer(arena_spec(cfg, tmp_path / "logs"), workers=2) as player:
            first = player.slots()
            await player.client._update_scheduler_info()  # what the client does by itself
            return first, player.slots()

    assert asyncio.run(slots()) == (2, 2)


def test_a_local_cluster_listens_on_loopback_only(tmp_path: Path) -> None:
    # Dask checks no one who connects, and whoever reaches a worker can run code in it:
    # a local cluster's scheduler, workers, nannies and their HTTP routes listen on
    # 127.0.0.1, never on every interface (Dask's default for a worker).
    async def main() -> set[str]:
        workers = LocalWorkers(1, tmp_path / "dask-workers.log")
        address = await workers.start()
        try:
            async with Client(address, asynchronous=True, security=workers.security) as client:
                await workers.until_up(client)
            assert workers.process is not None
            top = psutil.Process(workers.process.pid)
            listening = {conn.laddr.ip for p in [top, *top.children(recursive=True)]
                         for conn in p.net_connections("inet")
                         if conn.status == psutil.CONN_LISTEN}
            return listening | {address.split("://", 1)[1].rsplit(":", 1)[0]}
        finally:
            await workers.close()

    hosts = asyncio.run(asyncio.wait_for(main(), 240))
    assert len(hosts) >= 1 and hosts <= {LOOPBACK}, hosts


def test_a_local_cluster_takes_no_connection_without_its_certificate(tmp_path: Path) -> None:
    # Loopback is reached by every user of the machine: the scheduler and the workers
    # also speak TLS with a certificate made for this cluster, in files only root reads,
    # so that another user cannot send them code to run.
    async def main() -> tuple[str, list[str]]:
        workers = LocalWorkers(1, tmp_path / "dask-workers.log")
        address = await workers.start()
        refused = []
        try:
            async with Client(address, asynchronous=True, security=workers.security) as ok:
                await workers.until_up(ok)  # the harness's own client gets in
                worker = next(iter(ok.scheduler_info()["workers"]))
            # Another certificate (a user who made their own), or none (plain TCP).
            other = Security.temporary()
            for target, security in ((address, other), (worker, other),
                                     (address.replace("tls://", "tcp://"), None)):
                try:
                    async with Client(target, asynchronous=True, timeout=5,
                                      security=security):
                        pass
                except (OSError, TimeoutError) as e:
                    refused.append(type(e).__name__)
            assert workers._keys is not None
            modes = {p.stat().st_mode & 0o777 for p in workers._keys.iterdir()}
            assert workers._keys.stat().st_mode & 0o777 == 0o700 and modes == {0o600}
            return address, refused
        finally:
            await workers.close()

    address, refused = asyncio.run(asyncio.wait_for(main(), 240))
    assert address.startswith("tls://127.0.0.1:")
    assert len(refused) == 3, refused
