"""In-process games against the same games through the referee.

    python bench/inprocess.py [--games 40] [--runs 3] [--json PATH]

Heuristic against random, four-handed, seats rotated one place per game, the same seeds
both ways:

* **referee**: an :class:`~harness.referee.arena.Arena` (gRPC server on loopback) with
  two ``python -m sample_bots.heuristic_bot`` and two ``python -m sample_bots.random_bot``
  processes, one game after another (the processes stay up across games; their start
  is not timed);
* **in-process**: :func:`harness.referee.inprocess.play_many` with the same two bots'
  ``in_process_bot`` factories, in this process.

Per run, games/s both ways, wall-clock and CPU microseconds per decision (CPU: this
process, plus the bot processes' for the referee way, read with psutil) and the ratios;
on a busy machine the CPU ratio is the steadier figure. The medians over ``--runs`` are
printed (runs alternate, so drift on a shared machine hits both alike). It also
checks that both ways give the same places in every game (same seeds, same bots: the
in-process path must not change a single decision).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import psutil  # noqa: E402

from harness.referee.arena import Arena  # noqa: E402
from harness.referee.inprocess import command_factory, play_many  # noqa: E402
from harness.referee.outcome import GameResult, TimeControl  # noqa: E402
from harness.referee.pool import Entrant  # noqa: E402
from harness.referee.process import BotCommand  # noqa: E402
from harness.rules import RulesConfig  # noqa: E402

BOTS = {"heuristic": "sample_bots.heuristic_bot", "random": "sample_bots.random_bot"}
SEATS = ["heuristic", "random", "heuristic", "random"]
# The random bot restarts its choices from this seed at every game, so that a game's
# moves depend on its deal alone and both ways must give the same places.
BOT_ENV = {"EUCHRE_BOT_SEED": "7"}


def rotated(i: int) -> list[str]:
    k = i % len(SEATS)
    return [*SEATS[k:], *SEATS[:k]]


def bots_cpu(arena: Arena) -> float:
    """CPU seconds used so far by the arena's bot processes."""
    total = 0.0
    for name in BOTS:
        for inst in arena.pool.instances(name):
            pid = inst.process.pid if inst.process is not None else None
            if pid is not None:
                t = psutil.Process(pid).cpu_times()
                total += t.user + t.system
    return total


async def referee_games(seeds: list[int], log_dir: Path
                        ) -> tuple[list[GameResult], float, float]:
    """The results, the wall seconds and the CPU seconds (referee and bots)."""
    config = RulesConfig()
    async with Arena(log_dir=log_dir) as arena:
        for name, module in BOTS.items():
            arena.add(Entrant(name, BotCommand((sys.executable, "-m", module), cwd=str(ROOT),
                                               env=BOT_ENV)), 2)
        await arena.play("warm", config, 10**9, SEATS, time_control=TimeControl(5.0, 30.0))
        start, cpu0, bots0 = time.perf_counter(), time.process_time(), bots_cpu(arena)
        results = [await arena.play(f"g{i}", config, seed, rotated(i),
                                    time_control=TimeControl(5.0, 30.0))
                   for i, seed in enumerate(seeds)]
        cpu = time.process_time() - cpu0 + bots_cpu(arena) - bots0
        return results, time.perf_counter() - start, cpu


def inprocess_games(seeds: list[int]) -> tuple[list[GameResult], float, float]:
    factories = {name: command_factory([sys.executable, "-m", module], BOT_ENV)
                 for name, module in BOTS.items()}
    start, cpu0 = time.perf_counter(), time.process_time()
    results = play_many(factories, SEATS, RulesConfig(), seeds)
    return results, time.perf_counter() - start, time.process_time() - cpu0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    seeds = list(range(1, args.games + 1))
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            ref, ref_s, ref_cpu = asyncio.run(referee_games(seeds, Path(tmp) / f"logs{run}"))
            inp, inp_s, inp_cpu = inprocess_games(seeds)
            same = [a.places for a in ref] == [b.places for b in inp]
            for i, (a, b) in enumerate(zip(ref, inp, strict=True)):
                if a.places != b.places:
                    print(f"  game {i}: referee {a.places} ({a.termination.value}; "
                          f"{[f.detail for f in a.faults]}), in process {b.places} "
                          f"({b.termination.value})", flush=True)
            decisions = sum(len(r.record["decision_ms"]) for r in inp)
            row = {"referee_games_s": len(ref) / ref_s, "inprocess_games_s": len(inp) / inp_s,
                   "referee_us_decision": 1e6 * ref_s / decisions,
                   "inprocess_us_decision": 1e6 * inp_s / decisions,
                   "referee_cpu_us_decision": 1e6 * ref_cpu / decisions,
                   "inprocess_cpu_us_decision": 1e6 * inp_cpu / decisions,
                   "ratio": ref_s / inp_s, "cpu_ratio": ref_cpu / inp_cpu,
                   "same_places": same}
            rows.append(row)
            print(f"run {run + 1}: referee {row['referee_games_s']:.1f} games/s "
                  f"({row['referee_us_decision']:.0f} us, CPU "
                  f"{row['referee_cpu_us_decision']:.0f} us a decision), in-process "
                  f"{row['inprocess_games_s']:.1f} games/s "
                  f"({row['inprocess_us_decision']:.0f} us, CPU "
                  f"{row['inprocess_cpu_us_decision']:.0f} us), wall x{row['ratio']:.1f}, "
                  f"CPU x{row['cpu_ratio']:.1f}, same places: {same}", flush=True)
    median = {k: statistics.median(float(r[k]) for r in rows) for k in rows[0]
              if k != "same_places"}
    print(f"median of {len(rows)}: referee {median['referee_games_s']:.1f} games/s, "
          f"in-process {median['inprocess_games_s']:.1f} games/s, "
          f"in-process/referee wall x{median['ratio']:.1f}, CPU x{median['cpu_ratio']:.1f}; "
          f"machine {platform.machine()} "
          f"{os.cpu_count()} cpus, Python {platform.python_version()}")
    if args.json:
        args.json.write_text(json.dumps({"runs": rows, "median": median}, indent=2))


if __name__ == "__main__":
    main()
