"""Tournaments on a Dask cluster: scaling, the overhead of Dask, the store writer's rate.

    python bench/cluster.py [--delay-ms 10] [--games-per-worker 6] [--workers 1,2,4,8]
                            [--overhead-games 24] [--runs 3] [--store-rows 2000]
                            [--ladder-seconds 30] [--only scaling|overhead|store|ladder]

1. Bot-bound scaling: bots that sleep ``--delay-ms`` per decision (``bench/sleepy_bot.py``:
   time, no CPU), four-handed with ``target = 5``, on a LocalCluster of 1, 2, 4 and 8
   worker processes (one game at a time each), ``--games-per-worker`` games per worker.
   The rate in the steady state: from the moment every worker has finished its first
   game (bot start-up is behind it) until the last round of games, in which workers run
   out of games. Games differ in length (and each run plays other deals), so the
   scaling is measured in decisions per second, relative to 1 worker; games per second
   are shown beside it.
2. Overhead: the trivial random bots, ``--overhead-games`` games played by the local
   runner (concurrency 1) and by a LocalCluster of 1 worker, after a first game each (bot
   start-up), ``--runs`` times each: the difference of the medians, in milliseconds per
   game, is what going through Dask costs.
3. The store writer: ``--store-rows`` rows of a real game written one by one (as the
   runner does) into a fresh store: the games per second the single writer can take.
4. The ladder: the same sleeping bots as a ladder's two house bots, whose deal sets the
   matchmaker hands to a LocalCluster of each ``--workers`` count, for
   ``--ladder-seconds`` each; decisions per second from the moment every worker has
   finished a game to the last game stored, relative to 1 worker.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from distributed import LocalCluster

from harness.ladder.runtime import LadderRuntime
from harness.ladder.settings import LadderSettings
from harness.referee.outcome import TimeControl
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.rules.config import RulesConfig
from harness.storage.results import GameRow, ResultsStore
from harness.tournament.config import load_config
from harness.tournament.runner import TournamentRunner, store_path

BENCH = Path(__file__).resolve().parent

BOTS = """
name = "bench"
[rules]
form = "four-handed"
target = 5
[[bot]]
name = "a"
command = {command}
env = {{ SLEEPY_BOT_MS = "{delay}" }}
[[bot]]
name = "b"
command = {command}
env = {{ SLEEPY_BOT_MS = "{delay}" }}
"""

SLEEPY = f'["{{python}}", "{BENCH / "sleepy_bot.py"}"]'
RANDOM = '["{python}", "-m", "sample_bots.random_bot"]'


def steady_rate(out: Path, command: str, delay_ms: float, games: int, warm: int,
                overrides: Mapping[str, str]) -> tuple[float, float, int]:
    """Decisions and games per second between the ``warm``-th game to finish and the
    ``warm``-th from the end (bot start-up before, idle workers after, are left out);
    (decisions/s, games/s, games played)."""
    path = out / "t.toml"
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(BOTS.format(command=command, delay=delay_ms))
    # two tables per deal set (duplicate): ``games`` games in all
    cfg = load_config(path, {"games": str(max(1, games // 2)), "output": str(out),
                             "tc": "5+60", **overrides})
    state = asyncio.run(TournamentRunner(cfg).run())
    assert state.finished, state
    with ResultsStore(store_path(out)) as store:
        rows = sorted((float(g.record["started_at"]) + g.duration_s,
                       len(g.record["decision_ms"])) for g in store.games(cfg.id))
    last = len(rows) - warm if warm > 1 else len(rows) - 1
    if last <= warm - 1:
        raise SystemExit("too few games to measure: raise --games-per-worker")
    return _rates(rows, warm, last)


def _rates(rows: list[tuple[float, int]], warm: int, last: int) -> tuple[float, float, int]:
    """(decisions/s, games/s, games) of ``rows`` (finish time, decisions), sorted, from
    the ``warm``-th game to finish to the ``last`` (an index)."""
    elapsed = rows[last][0] - rows[warm - 1][0]
    decisions = sum(d for _, d in rows[warm:last + 1])
    return decisions / elapsed, (last - warm + 1) / elapsed, len(rows)


def _per_worker_count(args: argparse.Namespace,
                      measure: Callable[[int, str], tuple[float, float, int]],
                      target: bool) -> None:
    """Run ``measure(workers, scheduler)`` on a LocalCluster of each ``--workers`` count
    and print its rates relative to the first."""
    base = None
    for n in args.workers:
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                          dashboard_address="127.0.0.1:0") as lc:
            rate, games, played = measure(n, lc.scheduler_address)
        base = base or rate
        goal = f" (target x{0.85 * n:.2f})" if target else ""
        print(f"   {n} workers: {played:3d} games, {rate:6.0f} decisions/s "
              f"({games:5.2f} games/s), x{rate / base:.2f} of 1 worker{goal}", flush=True)


def scaling(args: argparse.Namespace, tmp: Path) -> None:
    print(f"1. bot-bound scaling: bots sleep {args.delay_ms:g} ms per decision, "
          f"{args.games_per_worker} games per worker")
    _per_worker_count(args, lambda n, scheduler: steady_rate(
        tmp / f"scale{n}", SLEEPY, args.delay_ms, args.games_per_worker * n, n,
        {"cluster.scheduler": scheduler}), target=True)


def overhead(args: argparse.Namespace, tmp: Path) -> None:
    games = args.overhead_games
    print(f"2. overhead of Dask per game: random bots, {games} games one at a time, "
          f"{args.runs} runs of each, alternating")
    local: list[float] = []
    dask: list[float] = []
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address="127.0.0.1:0") as lc:
        for run in range(args.runs):
            local.append(steady_rate(tmp / f"local{run}", RANDOM, 0, games, 1,
                                     {"concurrency": "1"})[1])
            dask.append(steady_rate(tmp / f"dask{run}", RANDOM, 0, games, 1,
                                    {"cluster.scheduler": lc.scheduler_address})[1])
    ms_local = [1000 / r for r in local]
    ms_dask = [1000 / r for r in dask]
    print(f"   local runner:  {', '.join(f'{m:.1f}' for m in ms_local)} ms/game")
    print(f"   1 Dask worker: {', '.join(f'{m:.1f}' for m in ms_dask)} ms/game")
    print(f"   overhead (medians): {statistics.median(ms_dask) - statistics.median(ms_local):+.1f}"
          f" ms per game")


def store_rate(args: argparse.Namespace, tmp: Path) -> None:
    print(f"3. the store writer: {args.store_rows} rows of a real game, one at a time")
    out = tmp / "store"
    out.mkdir()
    (out / "t.toml").write_text(BOTS.format(command=RANDOM, delay=0))
    cfg = load_config(out / "t.toml", {"games": "1", "output": str(out / "src"),
                                       "rules.target": "10"})
    asyncio.run(TournamentRunner(cfg).run())
    with ResultsStore(out / "src" / "results.sqlite") as store:
        row = next(iter(store.games(cfg.id)))
    rates = []
    for run in range(3):
        with ResultsStore(out / f"w{run}.sqlite") as store:
            store.ensure_tournament(cfg.id, cfg.name, cfg.to_dict())
            t0 = time.perf_counter()
            for i in range(args.store_rows):
                store.record_game(dataclasses.replace(row, game_key=f"k{i}"))
            rates.append(args.store_rows / (time.perf_counter() - t0))
    hands = row.hands
    print(f"   {statistics.median(rates):,.0f} games/s (median of 3; a game of {hands} "
          f"hands, {len(str(row.record))} bytes of record)")


def ladder_rate(out: Path, delay_ms: float, seconds: float, warm: int,
                scheduler: str) -> tuple[float, float, int]:
    """A ladder of two sleeping house bots on ``scheduler`` for ``seconds``: (decisions/s,
    games/s, games stored) after the ``warm``-th game to finish."""
    command = (sys.executable, str(BENCH / "sleepy_bot.py"))
    env = {"SLEEPY_BOT_MS": str(delay_ms)}
    house = tuple((Entrant(name, BotCommand(command, env=env)), 2) for name in ("a", "b"))
    settings = LadderSettings(store=out / "ladder.sqlite", log_dir=out / "logs",
                              rules=RulesConfig(target=5),
                              time_control=TimeControl.parse("5+60"), concurrency=1,
                              house=house, scheduler=scheduler, poll_seconds=0.1)

    async def play() -> list[GameRow]:
        stop = asyncio.Event()
        runtime = LadderRuntime(settings, stop=stop)
        asyncio.get_running_loop().call_later(seconds, stop.set)
        try:
            await runtime.run()
            return list(runtime.results.games(settings.ladder_id))
        finally:
            runtime.close()

    out.mkdir(parents=True, exist_ok=True)
    rows = sorted((float(g.record["started_at"]) + g.duration_s,
                   len(g.record["decision_ms"])) for g in asyncio.run(play()))
    if len(rows) <= warm + 1:
        raise SystemExit("too few ladder games to measure: raise --ladder-seconds")
    return _rates(rows, warm, len(rows) - 1)


def ladder(args: argparse.Namespace, tmp: Path) -> None:
    print(f"4. the ladder: two house bots that sleep {args.delay_ms:g} ms per decision, "
          f"{args.ladder_seconds:g} s on each cluster")
    _per_worker_count(args, lambda n, scheduler: ladder_rate(
        tmp / f"ladder{n}", args.delay_ms, args.ladder_seconds, n, scheduler), target=False)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--delay-ms", type=float, default=10)
    p.add_argument("--games-per-worker", type=int, default=6)
    p.add_argument("--workers", default="1,2,4,8")
    p.add_argument("--overhead-games", type=int, default=24)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--store-rows", type=int, default=2000)
    p.add_argument("--ladder-seconds", type=float, default=30)
    p.add_argument("--only", choices=("scaling", "overhead", "store", "ladder"))
    args = p.parse_args()
    args.workers = [int(n) for n in args.workers.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for name, part in (("scaling", scaling), ("overhead", overhead), ("store", store_rate),
                           ("ladder", ladder)):
            if args.only in (None, name):
                part(args, Path(tmp))


if __name__ == "__main__":
    main()
