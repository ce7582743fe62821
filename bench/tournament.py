"""Tournament speed and the statistical power of duplicate deals.

    python bench/tournament.py [--speed-games 40] [--pairs 150] [--epsilon 0.1]

1. Speed: the default tournament (four-handed, duplicate, the four sample bots) with
   ``--speed-games`` deal sets per pairing, at concurrency 1 and 2: games per second
   (wall clock).
2. Power: heuristic against random, and against a weaker variant of itself (random action
   with probability ``--epsilon``), over ``--pairs`` duplicate pairs each. From the same
   games it estimates how many games are needed for the 95% interval of the score to
   exclude 50%: without duplicate (games as independent deals, per-game variance) and
   with duplicate (pairs as the unit, per-pair variance), and prints the ratio. Every
   game on its own is a uniformly random deal, so its variance is what an unpaired match
   would see; pairing removes the variance the two tables share (the cards).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.storage.results import ResultsStore
from harness.tournament.config import load_config
from harness.tournament.runner import TournamentRunner, store_path

Z95 = 1.959964


def run(overrides: dict[str, str], out: Path, bots: str | None = None) -> tuple[float, Path]:
    path: Path | None = None
    if bots is not None:
        path = out / "config.toml"
        path.write_text(bots)
    config = load_config(path, {**overrides, "output": str(out)})
    t0 = time.monotonic()
    state = asyncio.run(TournamentRunner(config).run())
    elapsed = time.monotonic() - t0
    return state.done / elapsed, store_path(out)


def power(db: Path, candidate: str) -> tuple[int, float, float, float]:
    """(pairs, mean score, games needed unpaired, games needed with duplicate)."""
    groups: dict[str, list[float]] = defaultdict(list)
    with ResultsStore(db) as store:
        for row in store.games():
            t = row.record["tournament"]
            mine = [s for s, name in enumerate(row.seats) if name == candidate]
            won = any(row.ranking[s] == 1 for s in mine)
            groups[t["group"]].append(1.0 if won else 0.0)
    # One pseudo-draw in each list (as BayesElo's prior does) keeps the variance from
    # being zero when one side wins every game.
    games = [x for g in groups.values() for x in g] + [0.5]
    pairs = [sum(g) / len(g) for g in groups.values() if len(g) == 2] + [0.5]
    mean = statistics.fmean(games)
    delta = abs(mean - 0.5)
    var_game = statistics.pvariance(games)
    var_pair = statistics.pvariance(pairs)
    if delta == 0:
        return len(pairs), mean, float("inf"), float("inf")
    unpaired = var_game * (Z95 / delta) ** 2
    paired = 2 * var_pair * (Z95 / delta) ** 2
    return len(pairs), mean, unpaired, paired


BOTS = """
name = "power"
[rules]
form = "four-handed"
[[bot]]
name = "heuristic"
command = "{{python}} -m sample_bots.heuristic_bot"
[[bot]]
name = "{name}"
command = "{command}"
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--speed-games", type=int, default=40, help="deal sets for the speed runs")
    ap.add_argument("--pairs", type=int, default=150, help="duplicate pairs per power run")
    ap.add_argument("--epsilon", type=float, default=0.1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print("default tournament (four-handed, duplicate, heuristic vs random):")
        for conc in (1, 2):
            rate, _ = run({"games": str(args.speed_games), "concurrency": str(conc)},
                          root / f"speed{conc}")
            print(f"  concurrency {conc}: {rate:6.2f} games/s")
        print(f"\npower, {args.pairs} duplicate pairs each (95% interval excludes 50%):")
        print(f"  {'opponent':<22} {'score':>6} {'games unpaired':>15} {'games duplicate':>16} "
              f"{'ratio':>6}")
        opponents = [("random", "{python} -m sample_bots.random_bot"),
                     (f"heuristic-e{args.epsilon:g}",
                      f"{{python}} -m sample_bots.heuristic_bot --epsilon {args.epsilon}")]
        for name, command in opponents:
            out = root / name
            out.mkdir()
            _, db = run({"games": str(args.pairs), "concurrency": "2"}, out,
                        BOTS.format(name=name, command=command))
            _, mean, unpaired, paired = power(db, "heuristic")
            ratio = f"{unpaired / paired:6.2f}" if paired > 0 else "     -"
            print(f"  {name:<22} {mean:6.1%} {unpaired:15.1f} {paired:16.1f} {ratio}")
        print("  (one pseudo-draw is added to each sample so that a clean sweep still has a "
              "variance)")


if __name__ == "__main__":
    main()
