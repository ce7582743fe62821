"""How fast the ladder's pairing recovers a known ranking, against random pairing.

    python bench/ladder_sim.py [--bots 20] [--spread 30] [--games 3000] [--trials 10]

Simulated bots of known strength (``--spread`` Elo between neighbours) play two-team
deal sets (two games each, as with duplicate deals). Each game is won with the
probability the Elo model gives for the true difference. ``--slots`` sets start at a
time, chosen either by :class:`harness.ladder.matchmaking.Matchmaker` (fed the current
fit, refitted after every batch) or uniformly at random among pairs of bots. At each
checkpoint the script fits Bradley-Terry Elo (:func:`harness.results.elo.fit`) to the games
so far and reports, averaged over ``--trials`` runs: Kendall's tau between the fitted
and the true ranking, how many neighbouring bots are ordered correctly, and the mean
half-width of the 95% intervals.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.ladder.matchmaking import Candidate, Matchmaker
from harness.results.elo import Ratings, Result, expected_score, fit

Chooser = Callable[[Ratings | None, Counter[str], int], list[tuple[str, str]]]


def kendall_tau(true: dict[str, float], fitted: dict[str, float]) -> float:
    names = sorted(true)
    score = pairs = 0
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            pairs += 1
            agree = (true[a] - true[b]) * (fitted[a] - fitted[b])
            score += 1 if agree > 0 else -1 if agree < 0 else 0
    return score / pairs


def neighbours_right(true: dict[str, float], fitted: dict[str, float]) -> float:
    order = sorted(true, key=true.__getitem__)
    right = sum(fitted[b] > fitted[a] for a, b in itertools.pairwise(order))
    return right / (len(order) - 1)


def ladder_chooser(names: list[str], slots: int) -> Chooser:
    mm = Matchmaker("four-handed")

    def choose(ratings: Ratings | None, sets: Counter[str], _: int) -> list[tuple[str, str]]:
        elo = ratings.elo if ratings else {}
        ci95 = ratings.ci95 if ratings else {}
        connected = [Candidate(n, elo.get(n, 0.0), ci95.get(n, float("inf")), sets[n],
                               free_seats=2) for n in names]
        return [(s.base[0], s.base[1]) for s in mm.next_sets(connected, slots)]

    return choose


def random_chooser(names: list[str], slots: int, rng: random.Random) -> Chooser:
    def choose(_r: Ratings | None, _s: Counter[str], __: int) -> list[tuple[str, str]]:
        free = names[:]
        rng.shuffle(free)
        return [(free[2 * i], free[2 * i + 1]) for i in range(min(slots, len(free) // 2))]

    return choose


def trial(choose: Chooser, true: dict[str, float], games: int, checkpoints: list[int],
          rng: random.Random) -> list[tuple[float, float, float]]:
    results: list[Result] = []
    sets: Counter[str] = Counter()
    ratings: Ratings | None = None
    out: list[tuple[float, float, float]] = []
    pending = list(checkpoints)
    while pending:
        for a, b in choose(ratings, sets, len(results)):
            sets.update((a, b))
            for _ in range(2):  # the two tables of a duplicate set
                won = rng.random() < expected_score(true[a] - true[b])
                results.append(Result((a,), (b,), 1.0 if won else 0.0))
        ratings = fit(results)
        while pending and len(results) >= pending[0]:
            pending.pop(0)
            out.append((kendall_tau(true, ratings.elo), neighbours_right(true, ratings.elo),
                        statistics.fmean(ratings.ci95.values())))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=20)
    parser.add_argument("--spread", type=float, default=30.0,
                        help="true Elo between neighbouring bots")
    parser.add_argument("--games", type=int, default=3000)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--slots", type=int, default=5, help="sets started at a time")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    names = [f"bot{i:02d}" for i in range(args.bots)]
    true = {n: args.spread * (i - (args.bots - 1) / 2) for i, n in enumerate(names)}
    checkpoints = sorted({args.games * k // 8 for k in range(1, 9)})
    table: dict[str, list[list[tuple[float, float, float]]]] = {"ladder": [], "random": []}
    for t in range(args.trials):
        rng = random.Random(args.seed * 1000 + t)
        table["ladder"].append(trial(ladder_chooser(names, args.slots), true, args.games,
                                     checkpoints, random.Random(rng.random())))
        table["random"].append(trial(random_chooser(names, args.slots, rng), true,
                                     args.games, checkpoints, random.Random(rng.random())))
    print(f"{args.bots} bots, {args.spread:g} Elo apart, {args.trials} trials, "
          f"{args.slots} sets at a time (2 games per set)\n")
    print("| games | tau ladder | tau random | neighbours ladder | neighbours random "
          "| ci95 ladder | ci95 random |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for i, n in enumerate(checkpoints):
        row = [n]
        cells = {k: [statistics.fmean(run[i][m] for run in v) for m in range(3)]
                 for k, v in table.items()}
        print(f"| {row[0]} | {cells['ladder'][0]:.3f} | {cells['random'][0]:.3f} | "
              f"{cells['ladder'][1]:.2f} | {cells['random'][1]:.2f} | "
              f"{cells['ladder'][2]:.0f} | {cells['random'][2]:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
