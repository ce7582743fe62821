"""``ismcts``: OpenSpiel's ISMCTS on the project's rules engine, as a bot and as a loop
that trains nothing but proves every piece works (needs the ``research`` extra).

    python -m sample_bots.ismcts_bot --demo [--hands 4] [--simulations 50]
    python -m sample_bots.ismcts_bot [--simulations 50] [--seed 0]    # a bot: SDK flags

1. Through the registered OpenSpiel game (``python_euchre``): ISMCTS
   (``open_spiel.python.algorithms.ismcts``) plays single hands of cutthroat and of
   two-handed Euchre against uniformly random players; its worlds are resampled with
   the project's sampler (``EuchreState.resample_from_infostate``). The mean return per
   hand of each is printed.
2. As a harness bot (:class:`harness.envs.adapter.SpielBot`): the same ISMCTS plays a
   short cutthroat game in process against the random sample bot, recorded like any
   game. Without ``--demo`` the module is that bot, over gRPC (it takes the SDK's
   ``--address`` and ``--token``); ``run --in-process`` finds :func:`in_process_bot`.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from open_spiel.python.algorithms import ismcts, mcts

from harness.envs.adapter import SpielBot
from harness.envs.openspiel import load
from harness.referee.inprocess import command_factory, play_many
from harness.rules import RulesConfig
from harness.sdk import run


def ismcts_bot(game: Any, simulations: int, seed: int = 0) -> Any:
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1,
                                            random_state=np.random.RandomState(seed))
    return ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=simulations,
                            random_state=np.random.RandomState(seed + 1))


def play_hands(form: str, hands: int, simulations: int, seed: int = 0) -> list[float]:
    """Single hands with ISMCTS in seat 0 and random players elsewhere; seat 0's return
    in each hand."""
    game = load(form=form, deck=24, target=0)
    bot = ismcts_bot(game, simulations, seed)
    rng = random.Random(seed)
    returns = []
    for _ in range(hands):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
            elif state.current_player() == 0:
                state.apply_action(bot.step(state))
            else:
                state.apply_action(rng.choice(state.legal_actions()))
        returns.append(state.returns()[0])
    return returns


def in_process_bot(argv: Sequence[str], env: Mapping[str, str]) -> SpielBot:
    args, _ = _parser().parse_known_args(list(argv))
    return SpielBot(lambda game: ismcts_bot(game, args.simulations, args.seed),
                    seed=args.seed, name="ismcts")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hands", type=int, default=4)
    ap.add_argument("--simulations", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--demo", action="store_true",
                    help="play the demonstration instead of serving as a bot")
    return ap


def main() -> None:
    args, rest = _parser().parse_known_args()
    if not args.demo:
        run(in_process_bot(sys.argv[1:], {}), rest)
        return
    for form in ("cutthroat", "two-handed"):
        got = play_hands(form, args.hands, args.simulations, args.seed)
        print(f"{form}: ISMCTS ({args.simulations} simulations) against random players, "
              f"{len(got)} hands: mean return {sum(got) / len(got):+.2f} per hand")
    factories = {"ismcts": lambda: in_process_bot(sys.argv[1:], {}),
                 "random": command_factory([sys.executable, "-m", "sample_bots.random_bot"])}
    result = play_many(factories, ["ismcts", "random", "random"],
                       RulesConfig.from_dict({"form": "cutthroat", "target": 3}), [args.seed])[0]
    print(f"a cutthroat game as a harness bot: {result.termination.value}, places "
          f"{list(result.places)} (ISMCTS in seat 0), scores {list(result.scores)}")


if __name__ == "__main__":
    main()
