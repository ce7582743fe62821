"""``search``: determinized search (PIMC) on the project's engine, the heuristic bot as
the model of every player.

* Card play: it draws hidden worlds consistent with what it has seen
  (``harness.sdk.search.worlds``: uniform, voids respected), plays every legal card out in
  each world with the heuristic bot's card play for all players
  (``harness.sdk.search.rollout``), and plays the card with the best mean points.
* Bids, the dealer's pickup and discard, going alone, dummy discards
  (``harness.sdk.search.bidding``): the same, but each world is replayed on the engine, the
  rest of the bidding is the heuristic bot's, and worlds in which the heuristic bot
  would not have made the other seats' bids are dropped. ``--bids heuristic`` leaves
  these decisions to the heuristic bot. Naming trump blind on a turned-up Joker is
  always the heuristic bot's.
* ``--play-worlds bids`` filters the card-play worlds by the bidding in the same way
  (default ``uniform``: in a first measurement it did not play stronger, see
  ``bench/README.md``).

Flags (besides the SDK's ``--address``, ``--token``, ``--name``):

* ``--ms M`` (default 50): the budget per decision, as a count of work rather than a
  clock: M x ``--rollouts-per-ms`` (default 30, less than half of what one core does
  here) units of one play-phase rollout each. Every world tried counts, including the
  ones the bidding filter refuses; a play-out from a decision before play counts as
  five, and checking a world against the bidding as three (as ten during card play).
  So a decision depends only on the seed and what the bot has seen, never on how busy
  the machine is; on an idle core a decision takes well under M ms.
* ``--deadline-ms D`` (default 10 x ``--ms``, at least 500; 0: none): a wall-clock
  safety net only. A search still running after D ms stops with what it has, and the
  bot writes a line on stderr saying so: that decision may differ from one run to the
  next. The floor is there because a busy machine keeps a process waiting for the CPU
  in slices of tens of milliseconds, whatever the work.
* ``--seed S`` (default 0, or ``EUCHRE_BOT_SEED``): with the same seed the bot makes the
  same decisions in the same situations.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Mapping, Sequence

from harness.rules import Action, Observation, Phase
from harness.sdk import run
from harness.sdk.search.bidding import search_bid
from harness.sdk.search.pimc import Budget, SearchResult, search_play
from sample_bots.heuristic_bot import HeuristicBot

DEFAULT_MS = 50.0
DEFAULT_ROLLOUTS_PER_MS = 30.0
# The default --deadline-ms: 10 x --ms, but never under half a second, because on a
# loaded machine a process waits for the CPU in slices of tens of ms (150 units, about
# 3 ms of work, took 56 ms with both cores busy).
DEADLINE_FACTOR = 10
DEADLINE_FLOOR_MS = 500.0


class SearchBot(HeuristicBot):
    name = "search"
    version = "1.0"

    def __init__(self, ms: float = DEFAULT_MS, seed: int = 0,
                 rollouts_per_ms: float = DEFAULT_ROLLOUTS_PER_MS,
                 search_bids: bool = True, infer_play: bool = False,
                 deadline_ms: float | None = None) -> None:
        super().__init__()
        self.ms = ms
        self.deadline_ms = (max(DEADLINE_FACTOR * ms, DEADLINE_FLOOR_MS) if deadline_ms is None
                            else deadline_ms)
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
        deadline = start + self.deadline_ms / 1000 if self.deadline_ms > 0 else None
        budget = Budget(max(1, int(self.ms * self.rollouts_per_ms)), deadline)
        if phase is Phase.PLAY:
            result = search_play(obs, rules, rng, budget,
                                 self.heuristic if self.infer_play else None)
        else:
            result = search_bid(obs, rules, rng, budget, self.heuristic)
        if result.cut:
            self.report_cut(obs, result, time.perf_counter() - start)
        return result.action

    def report_cut(self, obs: Observation, result: SearchResult, seconds: float) -> None:
        print(f"search: hand {obs.hand_number}, {obs.phase.value}: the {self.deadline_ms:g} "
              f"ms deadline stopped the search after {result.spent} of "
              f"{int(self.ms * self.rollouts_per_ms)} units ({result.worlds} worlds, "
              f"{seconds * 1000:.0f} ms); this decision depends on the machine's speed",
              file=sys.stderr, flush=True)


def _parser(*, add_help: bool = False) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m sample_bots.search_bot", add_help=add_help,
        description="A Euchre bot searching determinized worlds with the heuristic bot's "
                    "play as the model of every player.",
        epilog="The SDK's --address, --token, --name and --tls-ca are taken as well.")
    ap.add_argument("--ms", type=float, default=DEFAULT_MS,
                    help="budget per decision, a count of work rather than a clock: MS x "
                         "--rollouts-per-ms play-phase rollouts, every world tried counted "
                         "(refused ones too), so the same seed makes the same decisions "
                         f"on any machine (default {DEFAULT_MS:g})")
    ap.add_argument("--deadline-ms", type=float, default=None,
                    help="wall-clock safety net: a search still running after this long "
                         "stops with what it has and says so on stderr (default "
                         f"{DEADLINE_FACTOR} x --ms, at least {DEADLINE_FLOOR_MS:g}; 0: none)")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("EUCHRE_BOT_SEED") or 0),
                    help="the same seed makes the same decisions (default $EUCHRE_BOT_SEED "
                         "or 0)")
    ap.add_argument("--rollouts-per-ms", type=float, default=DEFAULT_ROLLOUTS_PER_MS,
                    help=f"work units per ms of --ms (default {DEFAULT_ROLLOUTS_PER_MS:g})")
    ap.add_argument("--bids", choices=("search", "heuristic"), default="search",
                    help="search the decisions before play, or leave them to the heuristic "
                         "bot (default search)")
    ap.add_argument("--play-worlds", choices=("uniform", "bids"), default="uniform",
                    help="card-play worlds uniform, or filtered by the bidding (default "
                         "uniform)")
    return ap


def _bot(args: argparse.Namespace) -> SearchBot:
    return SearchBot(args.ms, args.seed, args.rollouts_per_ms, args.bids == "search",
                     args.play_worlds == "bids", args.deadline_ms)


def in_process_bot(argv: Sequence[str], env: Mapping[str, str]) -> SearchBot:
    """The bot for in-process play (harness.referee.inprocess)."""
    args, _ = _parser().parse_known_args(list(argv))
    if "--seed" not in argv and env.get("EUCHRE_BOT_SEED"):
        args.seed = int(env["EUCHRE_BOT_SEED"])
    return _bot(args)


def main(argv: Sequence[str] | None = None) -> None:
    args, rest = _parser(add_help=True).parse_known_args(argv)
    run(_bot(args), rest)


if __name__ == "__main__":
    main()
