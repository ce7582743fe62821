"""Rules-engine speed: random legal play, hands and 10-point games per CPU-second.

    python bench/engine.py [--runs 5] [--seconds 1.0]

Each figure is the median of ``--runs`` runs measured with ``time.process_time``. A hand
includes its seeded deal (the shuffle). When the ``open_spiel`` package is importable the
same loop is timed on OpenSpiel's C++ four-handed Euchre (one hand per game, chance
outcomes drawn with the same ``random.choice``) in the same run, and the ratio printed;
the "with observation" column also builds the acting seat's observation at every
decision, as the referee does. ``rollouts/s`` are play-phase rollouts as the search bot
runs them (``harness.sdk.search.rollout``, the heuristic's card play for every player; see
``bench/rollout.py``), to compare with ``hands/s``, the engine's random play.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.rules import DeckKind, Form, Game, Hand, RulesConfig
from harness.rules.dealing import seeded_deck
from harness.rules.observation import observe as build_observation


def hands_loop(config: RulesConfig, observe: bool) -> Callable[[int], int]:
    def run(n: int) -> int:
        rng = random.Random(n)
        choice = rng.choice
        players = config.players
        for i in range(n):
            hand = Hand(config, i % players, seeded_deck(config, 7, i))
            while hand.result is None:
                if observe:
                    build_observation(hand, hand.current, (0, 0), i)  # type: ignore[arg-type]
                hand.apply(choice(hand.legal_actions()))
        return n
    return run


def games_loop(config: RulesConfig) -> Callable[[int], int]:
    def run(n: int) -> int:
        rng = random.Random(n)
        choice = rng.choice
        for i in range(n):
            game = Game(config, i)
            while game.outcome is None:
                game.apply(choice(game.legal_actions()))
        return n
    return run


def openspiel_loop() -> Callable[[int], int] | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("euchre")

    def run(n: int) -> int:
        rng = random.Random(n)
        choice = rng.choice
        for _ in range(n):
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(choice(state.chance_outcomes())[0])
                else:
                    state.apply_action(choice(state.legal_actions()))
        return n
    return run


def rate(fn: Callable[[int], int], seconds: float, runs: int) -> float:
    """Median units per CPU-second over ``runs`` runs of about ``seconds`` each."""
    n = 50
    while True:  # calibrate
        t0 = time.process_time()
        fn(n)
        dt = time.process_time() - t0
        if dt > 0.1:
            break
        n *= 2
    per_run = max(1, int(n * seconds / dt))
    rates = []
    for _ in range(runs):
        t0 = time.process_time()
        fn(per_run)
        rates.append(per_run / (time.process_time() - t0))
    return statistics.median(rates)


def paired_ratio(ours: Callable[[int], int], theirs: Callable[[int], int], seconds: float,
                 runs: int) -> tuple[float, float, float]:
    """Alternate runs of both loops (so machine load hits both alike); returns the median
    rate of each and the median of the per-pair ratios."""
    a, b, ratios = [], [], []
    for _ in range(runs):
        ra = rate(ours, seconds / 2, 1)
        rb = rate(theirs, seconds / 2, 1)
        a.append(ra)
        b.append(rb)
        ratios.append(ra / rb)
    return statistics.median(a), statistics.median(b), statistics.median(ratios)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=1.0)
    args = ap.parse_args()
    osp = openspiel_loop()
    base = rate(osp, args.seconds, args.runs) if osp else None
    # Play-phase rollouts as the search bot runs them (bench/rollout.py has the details).
    from rollout import lean_rollouts

    print(f"{'form':<12} {'deck':>4} {'hands/s':>10} {'w/ obs':>10} {'games/s':>9} "
          f"{'rollouts/s':>11}" + ("  vs OpenSpiel" if base else ""))
    for form in Form:
        for deck in DeckKind:
            cfg = RulesConfig(form=form, deck=deck)
            h = rate(hands_loop(cfg, False), args.seconds, args.runs)
            ho = rate(hands_loop(cfg, True), args.seconds, args.runs)
            g = rate(games_loop(cfg), args.seconds, args.runs)
            r = rate(lean_rollouts(cfg, heuristic=True), args.seconds, args.runs)
            extra = f"  {h / base:5.2f}x" if base else ""
            print(f"{form.value:<12} {deck.value:>4} {h:>10,.0f} {ho:>10,.0f} {g:>9,.0f} "
                  f"{r:>11,.0f}{extra}")
    if base and osp:
        ours, theirs, ratio = paired_ratio(hands_loop(RulesConfig(), False), osp,
                                           args.seconds, max(5, args.runs))
        print(f"OpenSpiel euchre (C++, four-handed 24 cards): {base:,.0f} hands/s")
        print(f"paired runs, four-handed 24 cards: ours {ours:,.0f} vs OpenSpiel "
              f"{theirs:,.0f} hands/s; median ratio {ratio:.2f}x")
    else:
        print("(open_spiel not installed: pip install open_spiel to compare in the same run)")


if __name__ == "__main__":
    main()
