"""Ladder scale: many registered bots, simulated by one process holding many streams.

    python bench/ladder.py [--bots 50] [--games 10000] [--stored 0] [--concurrency 4]
                           [--target 10] [--slow-steps MS]
    python bench/ladder.py --offline [--bots 1000] [--stored 20000] [--games 2000]

The script registers ``--bots`` bots (concurrency 2 each, as same-bot partnerships need)
in a fresh store, starts one *farm* process that opens two streams per bot with its
ladder token and plays uniformly random legal moves, and runs the ladder runtime in this
process until ``--games`` games are stored. It reports:

* how long the farm's streams took to be all up, and games per second (wall clock)
  from then on (the clock starts at the first game stored once every stream is up, so
  that the connections of a large ladder's start are not counted as play);
* the time of each ratings refresh that fitted (the runtime refits once a second, or
  after 100 new games): median, 95th percentile and
  the last one, i.e. with all the games in;
* before the run, the time of one refresh with ``--games`` games already stored (random
  results, every pairing of the bots played), without the referee;
* the share of the referee process's CPU (all its threads) spent choosing sets
  (the runtime's ``_match``: listing the candidates, the matchmaker, starting the
  sets) and refreshing ratings, measured as the thread CPU time of those calls over the
  process CPU time of the run; above 100 bots the ladder fits its ratings in a process
  of its own, and the CPU each fit took there is counted in the ratings' share too;
* the standings answer (``ctl standings``) and the live page's JSON (``/api/ladder``),
  timed 40 times each while the ladder runs, as a request finds them (built once per
  change of what they show, so mostly kept) and rebuilt as after a change: median and
  95th percentile;
* the event loop's lag while the ladder plays: a task asks to wake every 10 ms and
  records how late it woke; the median, 99th percentile and largest lag. The loop is the
  one that times the bots' decisions, so its lag is time a bot could be charged for a
  reply that had arrived (the store's writes and the ratings' refits run on threads of
  their own to keep it small);
* the peak resident memory of the ladder process, and of its ratings' process if it
  has one;
* with ``--slow-steps MS``, the loop's steps (what runs between two awaits) longer than
  ``MS`` milliseconds, counted by the place in the code where each stopped next, most
  time first, with the CPU time the loop's thread had in them (the rest it waited for a
  core): where to look when the lag is high.

``--stored N`` first writes ``N`` finished games (complete deal sets chosen by the
matchmaker, results drawn from hidden strengths) into the store, so the ladder starts
as one that has played them: ratings, pairing counts and the full refit are at that
size from the first set.

``--offline`` runs no referee: it repeats what the ladder does between sets (choose one
set among every bot with two free seats, count its two games, refresh the ratings after
every 100 games) on top of ``--stored`` games, and prints the CPU per set of choosing
and of the ratings. Run it with ``PYTHONPATH`` at another checkout to compare versions.

NumPy's BLAS may start a thread per core for the rating fit's small matrices; on a busy
2-core machine that costs more than it saves. Set ``OPENBLAS_NUM_THREADS=1`` (or the
variable of your BLAS) before comparing figures.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.competition.seatings import ScheduledGame
from harness.ladder.matchmaking import Candidate, DealSet, Matchmaker, SetProgress
from harness.ladder.playing import SetPlayer
from harness.ladder.ratings import LadderRatings
from harness.ladder.registry import Registry
from harness.ladder.runtime import LadderRuntime
from harness.ladder.sets import SetLog
from harness.ladder.settings import LadderSettings
from harness.referee.outcome import Termination, TimeControl
from harness.results.elo import Ratings, expected_score, fit
from harness.rules.config import RulesConfig
from harness.storage.ladder import LadderStore
from harness.storage.results import GameRow, ResultsStore


class Meter:
    """CPU seconds of the calls it wraps, and the wall time of each refresh."""

    def __init__(self) -> None:
        self.cpu = 0.0
        self.rating_cpu = 0.0
        self.refresh_s: list[float] = []


class TimedRatings(LadderRatings):
    meter: Meter

    def refresh(self, *, force: bool = False, history: bool = True) -> Ratings | None:
        start, wall, before = time.thread_time(), time.perf_counter(), self.current
        elsewhere = self.fit_pid
        try:
            return super().refresh(force=force, history=history)
        finally:
            self.meter.rating_cpu += time.thread_time() - start
            if self.current is not before:  # a fit happened
                self.meter.refresh_s.append(time.perf_counter() - wall)
                if elsewhere is not None or self.fit_pid is not None:  # its own process
                    self.meter.rating_cpu += self.last_fit_cpu

    def save_history(self) -> None:
        start = time.thread_time()
        try:
            super().save_history()
        finally:
            self.meter.rating_cpu += time.thread_time() - start


class TimedRuntime(LadderRuntime):
    meter: Meter

    def _match(self, player: SetPlayer) -> None:
        start = time.thread_time()
        try:
            super()._match(player)
        finally:
            self.meter.cpu += time.thread_time() - start


async def farm(address: str, tokens: list[str]) -> None:
    """Two streams per token, random legal play, until the referee goes away."""
    from harness.sdk import run_async
    from sample_bots.random_bot import RandomBot

    await asyncio.gather(*(run_async(RandomBot(i), address, token, give_up_after=5.0)
                           for i, token in enumerate(t for t in tokens for _ in range(2))))


def _names(bots: int) -> list[str]:
    return [f"sim{i:04d}" for i in range(bots)]


def _game(ladder_id: str, game: ScheduledGame, won: bool) -> GameRow:
    a, b = game.seats[0], game.seats[1]
    record = {"tournament": {"id": ladder_id, "key": game.key, "group": game.group,
                             "table": game.table, "sides": [[a], [b]]}}
    return GameRow(ladder_id, game.key, "four-handed", game.seed, game.seats,
                   Termination.NORMAL, (10, 5), (1, 2, 1, 2) if won else (2, 1, 2, 1), 5,
                   "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:01+00:00", 1.0, record)


def played_sets(bots: int, games: int, rng: random.Random, mm: Matchmaker | None = None,
                ) -> Iterator[tuple[DealSet, list[GameRow]]]:
    """Deal sets the matchmaker chooses among ``bots`` bots with two free seats each,
    their games won as hidden strengths (Elo, 200 apart per standard deviation) say,
    until ``games`` games."""
    names = _names(bots)
    strength = {n: rng.gauss(0.0, 200.0) for n in names}
    mm = mm or Matchmaker("four-handed")
    sets: Counter[str] = Counter()
    made = 0
    while made < games:
        connected = [Candidate(n, strength[n], 100.0, sets[n], 2) for n in names]
        for deal_set in mm.next_sets(connected, 1):
            rows = [_game("ladder", g, rng.random() < expected_score(
                strength[g.seats[0]] - strength[g.seats[1]])) for g in deal_set.games]
            sets.update(deal_set.bots)
            made += len(rows)
            yield deal_set, rows


def store_games(path: Path, bots: int, games: int) -> None:
    """``games`` finished games in complete deal sets, as the ladder would have stored
    them (the ladder's restore then counts them)."""
    results = ResultsStore(path)
    results.ensure_tournament("ladder", "ladder", {"kind": "ladder"})
    with LadderStore(path) as store:
        log = SetLog(store)
        for deal_set, rows in played_sets(bots, games, random.Random(7)):
            log.start(deal_set)
            progress = SetProgress(deal_set)
            for row in rows:
                results.record_game(row)
                progress.finish(row.record["tournament"]["table"])
            log.finish(progress)
    results.close()


def _peak_memory(pid: int | None) -> str:
    """``", N MB (its ratings' process)"`` from the process's peak resident size."""
    if pid is None:
        return ""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return f", {int(line.split()[1]) / 1024:.0f} MB (its ratings' process)"
    return ""


def _p95(values: list[float]) -> float:
    return _quantile(values, 0.95)


def _quantile(values: list[float], q: float) -> float:
    return sorted(values)[int(q * (len(values) - 1))]


LAG_PERIOD = 0.01
CONNECT_S = 300.0  # the clock starts after this long even if some streams are not up


def streams(runtime: LadderRuntime) -> int:
    """Streams up (live) on the running ladder's seats."""
    if runtime.arena is None:
        return 0
    pool = runtime.arena.pool
    return sum(i.slot.live for name in pool.entrants for i in pool.instances(name))


class SlowSteps:
    """While installed, every callback of this thread's event loop that runs longer than
    ``limit`` seconds, counted by where its task stopped next (the last frames of its
    chain of awaits): what ran on the loop, without an await, for that long; and how
    much of that time the thread had a CPU (the rest it waited for one)."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.count: Counter[str] = Counter()
        self.seconds: dict[str, float] = {}
        self.cpu: dict[str, float] = {}  # of which the loop's thread was on a CPU
        self._run = asyncio.events.Handle._run
        self.on = False

    def install(self) -> None:
        steps, run = self, self._run
        self.on = True

        def timed(handle: asyncio.events.Handle) -> None:
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                run(handle)
            finally:
                took = time.perf_counter() - start
                if took > steps.limit and steps.on:  # not the step that uninstalls
                    where = steps.where(handle)
                    steps.count[where] += 1
                    steps.seconds[where] = steps.seconds.get(where, 0.0) + took
                    steps.cpu[where] = (steps.cpu.get(where, 0.0)
                                        + time.thread_time() - cpu)

        handle_class: Any = asyncio.events.Handle
        handle_class._run = timed

    def uninstall(self) -> None:
        self.on = False
        handle_class: Any = asyncio.events.Handle
        handle_class._run = self._run

    @staticmethod
    def where(handle: asyncio.events.Handle) -> str:
        callback: Any = getattr(handle, "_callback", None)
        task = getattr(callback, "__self__", None)  # a task's step
        if not isinstance(task, asyncio.Task):
            return str(getattr(callback, "__qualname__", repr(callback)))[:80]
        frames: list[str] = []
        awaited: Any = task.get_coro()
        while awaited is not None:
            frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
            if frame is None:
                break
            frames.append(f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno}")
            awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
        return " > ".join(frames[-3:]) or "a task"

    def lines(self, top: int = 8) -> list[str]:
        return [f"  {self.count[where]:6d} x, {self.seconds[where]:6.2f} s "
                f"({self.cpu[where]:6.2f} s CPU)  {where}"
                for where in sorted(self.seconds, key=self.seconds.__getitem__,
                                    reverse=True)[:top]]


async def sample_lag(lags: list[float]) -> None:
    """Append to ``lags``, every :data:`LAG_PERIOD`, how late the loop woke this task."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + LAG_PERIOD
        await asyncio.sleep(LAG_PERIOD)
        lags.append(max(0.0, loop.time() - due))


def time_standings(runtime: LadderRuntime, runs: int = 40
                   ) -> tuple[list[float], list[float], list[float], list[float]]:
    """Seconds of the standings answer and of the live page's JSON, ``runs`` each: as a
    request finds them (built once per change, so mostly kept) and rebuilt as after a
    change (the kept answers dropped first)."""
    from harness.ladder.live_site import ladder_json
    from harness.ladder.memo import Memo
    from harness.ladder.service import standings

    answer: list[float] = []
    page: list[float] = []
    answer_cold: list[float] = []
    page_cold: list[float] = []
    for _ in range(runs):
        for cold in (False, True):
            if cold:
                runtime.memo = Memo()
            start = time.perf_counter()
            standings(runtime)
            (answer_cold if cold else answer).append(time.perf_counter() - start)
            if cold:
                runtime.memo = Memo()
            start = time.perf_counter()
            ladder_json(runtime)
            (page_cold if cold else page).append(time.perf_counter() - start)
    return answer, page, answer_cold, page_cold


async def run_ladder(args: argparse.Namespace, folder: Path) -> None:
    store_path = folder / "ladder.sqlite"
    with LadderStore(store_path) as store:
        registry = Registry(store)
        tokens = [registry.register(name, "bench", concurrency=2)[1].reveal()
                  for name in _names(args.bots)]
    if args.stored:
        start = time.perf_counter()
        store_games(store_path, args.bots, args.stored)
        print(f"stored {args.stored} games in {time.perf_counter() - start:.0f} s")
    settings = LadderSettings(store=store_path, log_dir=folder / "logs",
                              rules=RulesConfig(target=args.target),
                              time_control=TimeControl.parse("10+60"),
                              concurrency=args.concurrency)
    stop = asyncio.Event()
    address: list[str] = []
    meter = Meter()
    runtime = TimedRuntime(settings, stop=stop, on_listen=address.append)
    runtime.meter = meter
    ratings = TimedRatings(runtime.store, every_games=settings.refresh_games,
                           every_seconds=settings.refresh_seconds, separate_process=True)
    ratings.meter = meter
    runtime.ratings = ratings
    ladder = asyncio.ensure_future(runtime.run())
    while not address:
        await asyncio.sleep(0.05)
    bots = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--farm", address[0], stdin=subprocess.PIPE,
        stderr=subprocess.DEVNULL)
    assert bots.stdin is not None
    bots.stdin.write("\n".join(tokens).encode())
    bots.stdin.close()
    stored = ratings.games  # restored from the store by now (the referee is listening)
    cpu0, wall0, games0 = time.process_time(), time.perf_counter(), 0
    listening, up, live = wall0, math.nan, 0
    lags: list[float] = []
    lagging = asyncio.ensure_future(sample_lag(lags))
    slow = SlowSteps(args.slow_steps / 1000) if args.slow_steps else None
    while (not games0 or ratings.games < games0 + args.games) and not ladder.done():
        await asyncio.sleep(0.5)
        if math.isnan(up):
            live = streams(runtime)
            if live == 2 * args.bots or time.perf_counter() - listening > CONNECT_S:
                up = time.perf_counter() - listening
        if not games0 and not math.isnan(up) and ratings.games > stored:
            # the clock starts once every stream is up and a game has been stored
            cpu0, wall0, games0 = time.process_time(), time.perf_counter(), ratings.games
            meter.cpu, meter.rating_cpu, meter.refresh_s = 0.0, 0.0, []
            lags.clear()
            if slow is not None:
                slow.install()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    lagging.cancel()
    if slow is not None:
        slow.uninstall()
    lags = lags or [0.0]
    answer, page, answer_cold, page_cold = time_standings(runtime)
    listed = len(runtime.registry.entrants())
    fit_memory = _peak_memory(ratings.fit_pid)
    stop.set()
    await ladder
    await bots.wait()
    runtime.close()
    refresh = meter.refresh_s or [0.0]
    print(f"{args.bots} bots (2 streams each, one farm process), {args.concurrency} sets at "
          f"a time, target {args.target}, {args.stored} games stored before")
    print(f"streams           {live} of {2 * args.bots} up {up:.1f} s after the referee "
          f"listened; {games0 - stored} games played by then")
    print(f"games             {ratings.games - games0} in {wall:.1f} s: "
          f"{(ratings.games - games0) / wall:.1f} games/s (from then on)")
    print(f"ratings refresh   median {statistics.median(refresh) * 1000:.1f} ms, "
          f"p95 {_p95(refresh) * 1000:.1f} ms, "
          f"last {refresh[-1] * 1000:.1f} ms (at {ratings.games} games)")
    print(f"referee CPU       {cpu:.1f} s; choosing sets {meter.cpu:.2f} s "
          f"({100 * meter.cpu / cpu:.1f}%), ratings {meter.rating_cpu:.2f} s "
          f"({100 * meter.rating_cpu / cpu:.1f}%), together "
          f"{100 * (meter.cpu + meter.rating_cpu) / cpu:.1f}%")
    for label, (a, p) in (("standings answer", (answer, page)),
                          ("after a change", (answer_cold, page_cold))):
        print(f"{label:<17} median {statistics.median(a) * 1000:.1f} ms, "
              f"p95 {_p95(a) * 1000:.1f} ms; live page JSON median "
              f"{statistics.median(p) * 1000:.1f} ms, p95 {_p95(p) * 1000:.1f} ms "
              f"({listed} bots)")
    print(f"loop lag          median {statistics.median(lags) * 1000:.1f} ms, "
          f"p99 {_quantile(lags, 0.99) * 1000:.1f} ms, max {max(lags) * 1000:.1f} ms "
          f"({len(lags)} samples every {LAG_PERIOD * 1000:.0f} ms)")
    if slow is not None:
        print(f"loop steps over {args.slow_steps:g} ms, by where they stopped (most time first):")
        print("\n".join(slow.lines()))
    print(f"peak memory       {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB "
          f"(the ladder process){fit_memory}")


def synthetic_refresh(bots: int, games: int) -> tuple[float, float, int]:
    """Seconds of one full refit with ``games`` results among ``bots`` bots (every
    pairing chosen by the matchmaker), of one refresh after 100 more, and the number of
    distinct pairings."""
    played = [row for _, rows in played_sets(bots, games + 100, random.Random(1))
              for row in rows]
    ratings = LadderRatings()
    ratings.add_games(played[:games])
    start = time.perf_counter()
    fit(ratings.results())
    full = time.perf_counter() - start
    ratings.refresh(force=True)
    ratings.add_games(played[games:])
    start = time.perf_counter()
    ratings.refresh(force=True)
    return full, time.perf_counter() - start, len(ratings.results())


def offline(args: argparse.Namespace) -> None:
    """Choosing sets and refreshing ratings as the ladder does between sets, no referee."""
    rng = random.Random(3)
    mm = Matchmaker("four-handed")
    ratings = LadderRatings()
    stored = played_sets(args.bots, args.stored, rng, mm)
    for _, rows in stored:
        ratings.add_games(rows)
    ratings.refresh(force=True)
    names = _names(args.bots)
    truth = {n: rng.gauss(0.0, 200.0) for n in names}
    choose = rate = 0.0
    sets = refreshes = 0
    while ratings.games < args.stored + args.games:
        current = ratings.current
        assert current is not None
        start = time.process_time()
        connected = [Candidate(n, current.elo.get(n, 0.0), current.ci95.get(n, math.inf),
                               mm.sets_played(n), 2) for n in names]
        chosen = mm.next_sets(connected, 1)
        choose += time.process_time() - start
        for deal_set in chosen:
            ratings.add_games(_game("ladder", g, rng.random() < expected_score(
                truth[g.seats[0]] - truth[g.seats[1]])) for g in deal_set.games)
            sets += 1
        start = time.process_time()
        if chosen and sets % 50 == 0:
            ratings.refresh(force=True)
            refreshes += 1
        rate += time.process_time() - start
    print(f"offline: {args.bots} bots, {args.stored} games stored, {sets} sets more "
          f"(refresh every 100 games)")
    print(f"choosing sets     {1e3 * choose / sets:.2f} ms CPU per set")
    print(f"ratings           {1e3 * rate / sets:.2f} ms CPU per set "
          f"({1e3 * rate / max(refreshes, 1):.1f} ms per refresh, {refreshes} refreshes)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=50)
    parser.add_argument("--games", type=int, default=10000,
                        help="games to play (after the --stored ones)")
    parser.add_argument("--concurrency", type=int, default=4, help="deal sets at once")
    parser.add_argument("--target", type=int, default=10, help="points to win a game")
    parser.add_argument("--stored", type=int, default=0,
                        help="finished games written to the store before the ladder starts")
    parser.add_argument("--offline", action="store_true",
                        help="no referee: time choosing sets and ratings alone")
    parser.add_argument("--slow-steps", type=float, default=0.0, metavar="MS",
                        help="also list the event loop's steps longer than MS milliseconds")
    parser.add_argument("--farm", metavar="ADDRESS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.farm:
        asyncio.run(farm(args.farm, sys.stdin.read().split()))
        return 0
    if args.offline:
        offline(args)
        return 0
    size = max(args.games, args.stored)
    full, refresh, pairings = synthetic_refresh(args.bots, size)
    print(f"ratings with {size} stored games among {args.bots} bots ({pairings} pairings), "
          f"no referee: full refit {full * 1000:.1f} ms, refresh after 100 more games "
          f"{refresh * 1000:.1f} ms")
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(run_ladder(args, Path(folder)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
