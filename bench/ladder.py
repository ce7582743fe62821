"""Ladder scale: many registered bots, simulated by one process holding many streams.

    python bench/ladder.py [--bots 50] [--games 10000] [--concurrency 4] [--target 10]

The script registers ``--bots`` bots (concurrency 2 each, as same-bot partnerships need)
in a fresh store, starts one *farm* process that opens two streams per bot with its
ladder token and plays uniformly random legal moves, and runs the ladder runtime in this
process until ``--games`` games are stored. It reports:

* games per second (wall clock) over the run;
* the time of each ratings refresh that fitted (the runtime refits once a second, or
  after 100 new games): median, 95th percentile and
  the last one, i.e. with all the games in;
* before the run, the time of one refresh with ``--games`` games already stored (random
  results, every pairing of the bots played), without the referee;
* the share of the referee process's CPU (all its threads) spent choosing sets
  (listing candidates and the matchmaker) and refreshing ratings, measured as the
  thread CPU time of those calls over the process CPU time of the run.

NumPy's BLAS may start a thread per core for the rating fit's small matrices; on a busy
2-core machine that costs more than it saves. Set ``OPENBLAS_NUM_THREADS=1`` (or the
variable of your BLAS) before comparing figures.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Container, Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.ladder.matchmaking import Candidate, DealSet, Matchmaker
from harness.ladder.ratings import LadderRatings
from harness.ladder.registry import Registry
from harness.ladder.runtime import LadderRuntime, LadderSettings
from harness.ladder.store import LadderStore
from harness.ratings import Ratings
from harness.referee.arena import Arena
from harness.referee.outcome import Termination, TimeControl
from harness.rules.config import RulesConfig
from harness.store import GameRow


class Meter:
    """CPU seconds of the calls it wraps, and the wall time of each refresh."""

    def __init__(self) -> None:
        self.cpu = 0.0
        self.rating_cpu = 0.0
        self.refresh_s: list[float] = []


class TimedMatchmaker(Matchmaker):
    meter: Meter

    def next_sets(self, connected: Iterable[Candidate], slots: int, *,
                  focus: Container[str] | None = None) -> list[DealSet]:
        start = time.thread_time()
        try:
            return super().next_sets(connected, slots, focus=focus)
        finally:
            self.meter.cpu += time.thread_time() - start


class TimedRatings(LadderRatings):
    meter: Meter

    def refresh(self, *, force: bool = False) -> Ratings | None:
        start, wall, before = time.thread_time(), time.perf_counter(), self.current
        try:
            return super().refresh(force=force)
        finally:
            self.meter.rating_cpu += time.thread_time() - start
            if self.current is not before:  # a fit happened
                self.meter.refresh_s.append(time.perf_counter() - wall)


class TimedRuntime(LadderRuntime):
    meter: Meter

    def _candidates(self, arena: Arena, cluster_sets: int | None = None) -> list[Candidate]:
        start = time.thread_time()
        try:
            return super()._candidates(arena, cluster_sets)
        finally:
            self.meter.cpu += time.thread_time() - start


async def farm(address: str, tokens: list[str]) -> None:
    """Two streams per token, random legal play, until the referee goes away."""
    from harness.sdk import run_async
    from sample_bots.random_bot import RandomBot

    await asyncio.gather(*(run_async(RandomBot(i), address, token, give_up_after=5.0)
                           for i, token in enumerate(t for t in tokens for _ in range(2))))


async def run_ladder(args: argparse.Namespace, folder: Path) -> None:
    store_path = folder / "ladder.sqlite"
    with LadderStore(store_path) as store:
        registry = Registry(store)
        tokens = [registry.register(f"sim{i:03d}", "bench", concurrency=2)[1].reveal()
                  for i in range(args.bots)]
    settings = LadderSettings(store=store_path, log_dir=folder / "logs",
                              rules=RulesConfig(target=args.target),
                              time_control=TimeControl.parse("10+60"),
                              concurrency=args.concurrency)
    stop = asyncio.Event()
    address: list[str] = []
    meter = Meter()
    runtime = TimedRuntime(settings, stop=stop, on_listen=address.append)
    runtime.meter = meter
    mm = TimedMatchmaker(settings.rules.form, seed=settings.seed)
    mm.meter = meter
    ratings = TimedRatings(runtime.store, every_games=settings.refresh_games,
                           every_seconds=settings.refresh_seconds)
    ratings.meter = meter
    runtime.matchmaker, runtime.ratings = mm, ratings
    ladder = asyncio.ensure_future(runtime.run())
    while not address:
        await asyncio.sleep(0.05)
    bots = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--farm", address[0], stdin=subprocess.PIPE,
        stderr=subprocess.DEVNULL)
    assert bots.stdin is not None
    bots.stdin.write("\n".join(tokens).encode())
    bots.stdin.close()
    cpu0, wall0, games0 = time.process_time(), time.perf_counter(), 0
    while ratings.games < args.games and not ladder.done():
        await asyncio.sleep(0.5)
        if not games0 and ratings.games:  # start the clock at the first game
            cpu0, wall0, games0 = time.process_time(), time.perf_counter(), ratings.games
            meter.cpu, meter.rating_cpu, meter.refresh_s = 0.0, 0.0, []
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    stop.set()
    await ladder
    await bots.wait()
    runtime.close()
    refresh = meter.refresh_s or [0.0]
    print(f"{args.bots} bots (2 streams each, one farm process), {args.concurrency} sets at "
          f"a time, target {args.target}")
    print(f"games             {ratings.games - games0} in {wall:.1f} s: "
          f"{(ratings.games - games0) / wall:.1f} games/s")
    print(f"ratings refresh   median {statistics.median(refresh) * 1000:.1f} ms, "
          f"p95 {sorted(refresh)[int(0.95 * (len(refresh) - 1))] * 1000:.1f} ms, "
          f"last {refresh[-1] * 1000:.1f} ms (at {ratings.games} games)")
    print(f"referee CPU       {cpu:.1f} s; choosing sets {meter.cpu:.2f} s "
          f"({100 * meter.cpu / cpu:.1f}%), ratings {meter.rating_cpu:.2f} s "
          f"({100 * meter.rating_cpu / cpu:.1f}%), together "
          f"{100 * (meter.cpu + meter.rating_cpu) / cpu:.1f}%")


def synthetic_refresh(bots: int, games: int, runs: int = 7) -> tuple[float, int]:
    """Median seconds of one refresh with ``games`` random results among ``bots`` bots
    (every pairing played), and the number of distinct pairings."""
    rng = random.Random(1)
    names = [f"b{i:03d}" for i in range(bots)]
    rows = []
    for i in range(games):
        a, b = rng.sample(names, 2)
        won = rng.random() < 0.5
        rows.append(GameRow("bench", f"g{i}", "four-handed", i, (a, b, a, b),
                            Termination.NORMAL, (10, 5), (1, 2, 1, 2) if won else (2, 1, 2, 1),
                            5, "", "", 1.0, {"tournament": {"sides": [[a], [b]]}}))
    ratings = LadderRatings()
    ratings.add_games(rows)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        ratings.refresh(force=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times), len(ratings.results())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=50)
    parser.add_argument("--games", type=int, default=10000)
    parser.add_argument("--concurrency", type=int, default=4, help="deal sets at once")
    parser.add_argument("--target", type=int, default=10, help="points to win a game")
    parser.add_argument("--farm", metavar="ADDRESS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.farm:
        asyncio.run(farm(args.farm, sys.stdin.read().split()))
        return 0
    seconds, pairings = synthetic_refresh(args.bots, args.games)
    print(f"ratings refresh with {args.games} stored games among {args.bots} bots "
          f"({pairings} pairings), no referee: {seconds * 1000:.1f} ms")
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(run_ladder(args, Path(folder)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
