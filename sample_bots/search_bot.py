"""``search``: determinized search (PIMC) on the project's engine, the heuristic bot as
the model of every player.

* Card play: it draws hidden worlds consistent with what it has seen
  (``harness.search.worlds``: uniform, voids respected), plays every legal card out in
  each world with the heuristic bot's card play for all players
  (``harness.search.rollout``), and plays the card with the best mean points.
* Bids, the dealer's pickup and discard, going alone, dummy discards
  (``harness.search.bidding``): the same, but each world is replayed on the engine, the
  rest of the bidding is the heuristic bot's, and worlds in which the heuristic bot
  would not have made the other seats' bids are dropped. ``--bids heuristic`` leaves
  these decisions to the heuristic bot. Naming trump blind on a turned-up Joker is
  always the heuristic bot's.
* ``--play-worlds bids`` filters the card-play worlds by the bidding in the same way
  (default ``uniform``: in a first measurement it did not play stronger, see
  ``bench/README.md``).

Flags (besides the SDK's ``--address``, ``--token``, ``--name``):

* ``--ms M`` (default 50): the time budget per decision. It is turned into a number of
  rollouts (``--rollouts-per-ms``, default 30, less than half of what one core does
  here; a play-out before play counts as five), so a decision depends only on the seed
  and what the bot has seen; a wall-clock deadline of M ms stops a search early on a
  slower or busier machine.
* ``--seed S`` (default 0, or ``EUCHRE_BOT_SEED``): with the same seed the bot makes the
  same decisions in the same situations.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Mapping, Sequence

from harness.rules import Action, Observation, Phase
from harness.sdk import run
from harness.search.bidding import search_bid
from harness.search.pimc import Budget, search_play
from sample_bots.heuristic_bot import HeuristicBot

DEFAULT_MS = 50.0
DEFAULT_ROLLOUTS_PER_MS = 30.0
# A play-out from a decision before play replays the bidding on the engine first: about
# five times the cost of a play-phase rollout.
BID_COST = 5.0


class SearchBot(HeuristicBot):
    name = "search"
    version = "1.0"

    def __init__(self, ms: float = DEFAULT_MS, seed: int = 0,
                 rollouts_per_ms: float = DEFAULT_ROLLOUTS_PER_MS,
                 search_bids: bool = True, infer_play: bool = False) -> None:
        super().__init__()
        self.ms = ms
        self.seed = seed
        self.rollouts_per_ms = rollouts_per_ms
        self.search_bids = search_bids
        self.infer_play = infer_play

    def heuristic(self, obs: Observation) -> Action:
        return self.decide_action(obs, obs.legal_actions)

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        phase = obs.phase
        rules = self.rules  # set by the SDK when the game starts
        if rules is None or len(legal) < 2 or phase is Phase.NAME_TRUMP or (
                phase is not Phase.PLAY and not self.search_bids):
            return self.decide_action(obs, legal)
        start = time.perf_counter()
        rng = random.Random(f"{self.seed}/{obs.hand_number}/{obs.seat}/"
                            f"{len(obs.public_actions)}/{len(obs.discards)}/{obs.scores}")
        rollouts = self.ms * self.rollouts_per_ms
        deadline = start + self.ms / 1000
        if phase is Phase.PLAY:
            return search_play(obs, rules, rng, Budget(max(1, int(rollouts)), deadline),
                               self.heuristic if self.infer_play else None).action
        budget = Budget(max(1, int(rollouts / BID_COST)), deadline)
        return search_bid(obs, rules, rng, budget, self.heuristic).action


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--ms", type=float, default=DEFAULT_MS)
    ap.add_argument("--seed", type=int, default=int(os.environ.get("EUCHRE_BOT_SEED") or 0))
    ap.add_argument("--rollouts-per-ms", type=float, default=DEFAULT_ROLLOUTS_PER_MS)
    ap.add_argument("--bids", choices=("search", "heuristic"), default="search")
    ap.add_argument("--play-worlds", choices=("uniform", "bids"), default="uniform")
    return ap


def _bot(args: argparse.Namespace) -> SearchBot:
    return SearchBot(args.ms, args.seed, args.rollouts_per_ms, args.bids == "search",
                     args.play_worlds == "bids")


def in_process_bot(argv: Sequence[str], env: Mapping[str, str]) -> SearchBot:
    """The bot for in-process play (harness.referee.inprocess)."""
    args, _ = _parser().parse_known_args(list(argv))
    if "--seed" not in argv and env.get("EUCHRE_BOT_SEED"):
        args.seed = int(env["EUCHRE_BOT_SEED"])
    return _bot(args)


def main(argv: Sequence[str] | None = None) -> None:
    args, rest = _parser().parse_known_args(argv)
    run(_bot(args), rest)


if __name__ == "__main__":
    main()
