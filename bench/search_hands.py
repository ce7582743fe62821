"""The search bot against the heuristic bot on single hands, in one process (no referee).

    python bench/search_hands.py [--pairs 100] [--ms 50] [--bids search|heuristic]
                                 [--play-worlds uniform|bids] [--first 1000]

Four-handed, default rules. Each deal (``seeded_deck(config, 99, i)``, dealer ``i % 4``)
is played twice, the search bot holding seats 0 and 2 and then 1 and 3, the heuristic
bot the others; a pair's value is the search side's points minus the other side's,
summed over both tables. Prints the running mean per pair and its 95% interval every 20
pairs. The search bot runs on its rollout budget only (no wall-clock deadline), so the
figures do not depend on machine load. A quick way to compare search variants on the
same deals before a full match over the referee.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.rules import Hand, RulesConfig
from harness.rules.game import seeded_deck
from harness.rules.observation import observe
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.search_bot import DEFAULT_ROLLOUTS_PER_MS, SearchBot


def pair_value(config: RulesConfig, deal: int, search: SearchBot,
               heuristic: HeuristicBot) -> int:
    deck = seeded_deck(config, 99, deal)
    total = 0
    for seats in ((0, 2), (1, 3)):
        hand = Hand(config, deal % 4, deck)
        while hand.result is None:
            seat = hand.current
            assert seat is not None
            obs = observe(hand, seat, (0, 0), deal)
            bot = search if seat in seats else heuristic
            hand.apply(bot.choose(obs, obs.legal_actions))
        points = hand.result.points
        total += points[seats[0] % 2] - points[1 - seats[0] % 2]
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=100)
    ap.add_argument("--ms", type=float, default=50.0)
    ap.add_argument("--bids", choices=("search", "heuristic"), default="search")
    ap.add_argument("--play-worlds", choices=("uniform", "bids"), default="uniform")
    ap.add_argument("--first", type=int, default=1000, help="index of the first deal")
    args = ap.parse_args()
    config = RulesConfig()
    # The budget of --ms, without the wall-clock safety net.
    search = SearchBot(args.ms, 1, DEFAULT_ROLLOUTS_PER_MS, args.bids == "search",
                       args.play_worlds == "bids", deadline_ms=0)
    heuristic = HeuristicBot()
    for bot in (search, heuristic):
        bot.on_game_start(config, 0, [])
    values: list[int] = []
    start = time.perf_counter()
    for deal in range(args.first, args.first + args.pairs):
        values.append(pair_value(config, deal, search, heuristic))
        if len(values) % 20 == 0 or len(values) == args.pairs:
            half = 1.96 * statistics.stdev(values) / len(values) ** 0.5
            print(f"{len(values):>5} pairs  {statistics.mean(values):+.3f} +- {half:.3f} "
                  f"points per pair  ({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
