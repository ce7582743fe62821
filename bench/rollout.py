"""Rollout speed for search bots: play-phase rollouts per CPU-second.

    python bench/rollout.py [--runs 5] [--seconds 1.0] [--all]

Positions: the first decision of the play phase of seeded random hands (four-handed,
24 cards by default; ``--all``: every form and deck), observed by the seat to lead.
Every figure is the median of ``--runs`` runs of about ``--seconds`` CPU-seconds
(``time.process_time``), measured with the same calibrated loop as ``bench/engine.py``:

* ``engine hands/s``: the engine's random play of whole hands, deal included (the
  ``hands/s`` column of ``bench/engine.py``), the reference;
* ``engine rollouts/s``: random play of the play phase on the engine, from a Hand rebuilt
  from a sampled world (``World.to_hand``), as a search on the engine would do;
* ``lean heuristic``: ``PlayRollout.run`` from a sampled world, the heuristic bot's card
  play for every player (what the search bot uses); ``lean random``: ``random_run``;
* ``search``: rollouts per second inside ``search_play`` (world sampling, copying and
  rollouts), which sets the search bot's rollouts per millisecond.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # for bench/engine.py

from engine import hands_loop, rate

from harness.rules import DeckKind, Form, Game, Observation, Phase, RulesConfig
from harness.sdk.search.pimc import Budget, search_play
from harness.sdk.search.rollout import PlayRollout
from harness.sdk.search.worlds import World, WorldSampler

POSITIONS = 40
WORLDS = 5


def positions(config: RulesConfig) -> list[tuple[Observation, list[World]]]:
    """Play-phase starts of seeded random hands, each with a few sampled worlds."""
    out: list[tuple[Observation, list[World]]] = []
    seed = 0
    while len(out) < POSITIONS:
        rng = random.Random(seed)
        game = Game(config, seed)
        seed += 1
        while game.outcome is None and game.phase is not Phase.PLAY:
            game.apply(rng.choice(game.legal_actions()))
        if game.phase is not Phase.PLAY:
            continue
        obs = game.observation(game.current)  # type: ignore[arg-type]
        sampler = WorldSampler(obs, config)
        out.append((obs, [sampler.sample(rng) for _ in range(WORLDS)]))
    return out


def engine_rollouts(config: RulesConfig) -> Callable[[int], int]:
    cases = positions(config)

    def run(n: int) -> int:
        rng = random.Random(n)
        choice = rng.choice
        for i in range(n):
            _, worlds = cases[i % len(cases)]
            hand = worlds[i % WORLDS].to_hand()
            while hand.result is None:
                hand.apply(choice(hand.legal_actions()))
        return n
    return run


def lean_rollouts(config: RulesConfig, heuristic: bool) -> Callable[[int], int]:
    cases = [(PlayRollout(obs, config), [[[c.id for c in h] for h in w.hands] for w in ws])
             for obs, ws in positions(config)]

    def run(n: int) -> int:
        rng = random.Random(n)
        for i in range(n):
            rollout, worlds = cases[i % len(cases)]
            hands = [h[:] for h in worlds[i % WORLDS]]
            if heuristic:
                rollout.run(hands)
            else:
                rollout.random_run(hands, rng)
        return n
    return run


def search_rollouts(config: RulesConfig) -> Callable[[int], int]:
    cases = [obs for obs, _ in positions(config)]

    def run(n: int) -> int:
        rng = random.Random(n)
        done = 0
        i = 0
        while done < n:
            obs = cases[i % len(cases)]
            i += 1
            result = search_play(obs, config, rng, Budget(rollouts=200))
            done += result.worlds * len(obs.legal_actions)
        return done
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--all", action="store_true", help="every form and deck")
    args = ap.parse_args()
    configs = ([RulesConfig(form=f, deck=d) for f in Form for d in DeckKind] if args.all
               else [RulesConfig()])
    print(f"{'form':<12} {'deck':>4} {'engine hands/s':>15} {'engine rollouts/s':>18} "
          f"{'lean heuristic':>15} {'lean random':>12} {'search':>9}")
    for cfg in configs:
        figures = [rate(fn, args.seconds, args.runs) for fn in (
            hands_loop(cfg, False), engine_rollouts(cfg), lean_rollouts(cfg, True),
            lean_rollouts(cfg, False), search_rollouts(cfg))]
        print(f"{cfg.form.value:<12} {cfg.deck.value:>4} {figures[0]:>15,.0f} "
              f"{figures[1]:>18,.0f} {figures[2]:>15,.0f} {figures[3]:>12,.0f} "
              f"{figures[4]:>9,.0f}")


if __name__ == "__main__":
    main()
